"""``python -m steel.examples NAME [options]``: run one example; without a name, list them.

``python -m steel.examples`` (or ``--list``) prints every example with its one-line description and
exits 0; ``python -m steel.examples NAME --help`` shows that example's options.
"""

import ast
import importlib
import importlib.util
import sys

from . import EXAMPLES


def describe(name: str) -> str:
    """First line of the example's module docstring, read without importing it."""
    spec = importlib.util.find_spec(EXAMPLES[name])
    with open(spec.origin, encoding="utf-8") as f:
        doc = ast.get_docstring(ast.parse(f.read())) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def list_examples(out=None) -> None:
    out = sys.stdout if out is None else out
    print("usage: python -m steel.examples NAME [--viewer null|usd|gl] [--num-frames F] [--test] [--device D] "
          "[--quiet] [--benchmark]\n\nexamples:", file=out)
    width = max(map(len, EXAMPLES))
    for name in EXAMPLES:
        print(f"  {name:<{width}}  {describe(name)}", file=out)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("--list", "-h", "--help"):
        list_examples()
        return 0
    if argv[0] not in EXAMPLES:
        print(f"python -m steel.examples: unknown example {argv[0]!r}", file=sys.stderr)
        list_examples(sys.stderr)
        return 2
    module = importlib.import_module(EXAMPLES[argv[0]])
    try:
        return module.main(argv[1:])
    except SystemExit as exc:  # argparse: --help is 0, bad arguments 2
        return exc.code if isinstance(exc.code, int) else 2


if __name__ == "__main__":
    sys.exit(main())
