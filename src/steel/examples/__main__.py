"""``python -m steel.examples NAME``: run one example with its defaults."""

import importlib
import inspect
import sys

from . import EXAMPLES


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in EXAMPLES:
        print(f"usage: python -m steel.examples {{{','.join(EXAMPLES)}}}", file=sys.stderr)
        return 2
    module, func = EXAMPLES[argv[0]].split(":")
    run = getattr(importlib.import_module(module), func)
    if "argv" in inspect.signature(run).parameters:
        run(argv[1:])  # the example parses its own options
    elif len(argv) > 1:
        print(f"python -m steel.examples {argv[0]} takes no options, got {argv[1:]}", file=sys.stderr)
        return 2
    else:
        run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
