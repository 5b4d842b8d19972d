"""`ppy`: the command line. `ppy check` is `ppy-check`; the compiler adds `build`, `show` and `cache`."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="ppy", description="Straight-line PyTorch regions, checked and compiled.")
    parser.add_argument("command", choices=["check"], help="check: the region rules (same as ppy-check)")
    if not args or args[0] in ("-h", "--help"):
        parser.print_help()
        return 0 if args else 2
    if args[0] == "check":
        from ppy_check.cli import main as check

        return check(args[1:])
    parser.parse_args(args[:1])
    return 2


if __name__ == "__main__":
    sys.exit(main())
