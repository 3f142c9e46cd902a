"""``python -m ccsim sweep SWEEP.toml --out DIR`` (what ``ccsim sweep`` runs)."""

import sys

from .sweep import main

if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or args[0] != "sweep":
        print("usage: python -m ccsim sweep SWEEP.toml --out DIR [--scheduler ADDRESS] [--workers N]",
              file=sys.stderr)
        sys.exit(2)
    sys.exit(main(args[1:]))
