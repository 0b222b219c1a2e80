"""``python -m depthdyn``: the same as the ``depthdyn`` command.

Ctrl-C while the command line loads ends quietly with status 130, as it does while a
command runs (the ``depthdyn`` script guards the package import too, see
``_depthdyn_launch.py``).
"""

import sys


def entry() -> int:
    """Import the CLI under a KeyboardInterrupt guard and run it."""
    try:
        from .cli import main
    except KeyboardInterrupt:
        sys.stderr.write("depthdyn: interrupted\n")
        return 130
    return main()


if __name__ == "__main__":
    raise SystemExit(entry())
