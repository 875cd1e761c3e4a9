"""`pypto-toolkit`: the command-line entry of the offline toolkit."""
from __future__ import annotations

import argparse
import sys

import pypto


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="pypto-toolkit",
        description="OpenPTO toolkit: swimlane viewer, analysis, diff and tuning for kernels "
                    "written against the PyPTO API.")
    parser.add_argument("--version", action="version", version=f"openpto {pypto.__version__}")
    parser.parse_args(argv)
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
