"""``python -m steel.examples NAME``: run one example with its defaults."""

import importlib
import sys

from . import EXAMPLES


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in EXAMPLES:
        print(f"usage: python -m steel.examples {{{','.join(EXAMPLES)}}}", file=sys.stderr)
        return 2
    module, func = EXAMPLES[argv[0]].split(":")
    getattr(importlib.import_module(module), func)()
    return 0


if __name__ == "__main__":
    sys.exit(main())
