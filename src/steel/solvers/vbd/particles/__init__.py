"""VBD particle stages: adjacency, predict, contacts, solve, finish (and the element laws in elastic.py)."""
