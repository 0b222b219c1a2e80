"""The ``depthdyn`` console script: the command line, with Ctrl-C covered from the first import.

A console script imports its target before calling it, so an interrupt during that
import would end in a ``KeyboardInterrupt`` traceback. This module imports nothing
itself, so the guard below is in place before any of the package loads.
"""

import sys


def main() -> int:
    """Import the CLI and run it; Ctrl-C at any point ends quietly with status 130."""
    try:
        from depthdyn.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("depthdyn: interrupted\n")
        return 130
    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
