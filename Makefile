# Two commands from a fresh clone: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-dev

.PHONY: demo test bench clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip

$(STAMP): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m steel.app.cli demo
	$(PY) -m steel.examples towers_sleeping --quiet --throw-time 1.5 --num-frames 360

test: $(STAMP)
	$(PY) -m pytest -n 2 tests

bench: $(STAMP)
	$(PY) -m benchmarks.run --out results/bench
	$(PY) -m benchmarks.growth --quick --out results/bench

clean:
	rm -rf $(VENV) results build src/*.egg-info
