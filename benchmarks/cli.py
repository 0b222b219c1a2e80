"""Start-up of the ``depthdyn`` command and ``derive`` at real sizes, against a same-run floor.

Usage::

    python benchmarks/cli.py [--repeat N] [--no-derive]

Each command runs in a fresh interpreter, ``N`` times (default 5), alternating with the
floor ``python -c pass`` so that machine load falls on both alike. For each the script
prints the median wall time, the median CPU time of the child (user + system, from
``resource.getrusage``; the figure that does not grow with other people's load), the
extra over the floor, and the size of what it printed:

* ``--help``: ``python -m depthdyn --help`` (target: at most 0.3 s over the floor);
* ``derive --help``: a verb's help, which builds only that verb's arguments;
* ``version``: ``python -m depthdyn --version``;
* ``derive hyper_connection -p n=4`` and ``-p n=8`` (target: at most 10 s, output under
  20 kB), and ``derive mhc -p n=3``.

The load average is printed before and after. Speed is never asserted in the test suite.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

CASES = {
    "--help": ["-m", "depthdyn", "--help"],
    "derive --help": ["-m", "depthdyn", "derive", "--help"],
    "version": ["-m", "depthdyn", "--version"],
}
DERIVE = {
    "derive hyper_connection n=4": ["-m", "depthdyn", "derive", "hyper_connection", "-p", "n=4"],
    "derive hyper_connection n=8": ["-m", "depthdyn", "derive", "hyper_connection", "-p", "n=8"],
    "derive mhc n=3": ["-m", "depthdyn", "derive", "mhc", "-p", "n=3"],
}


def _run(argv: list[str]) -> tuple[float, float, int]:
    """Wall time, child CPU time and bytes written to stdout of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, *argv], capture_output=True, check=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, len(proc.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="runs of each command (default 5)")
    ap.add_argument("--no-derive", action="store_true", help="only the start-up timings")
    args = ap.parse_args()
    cases = dict(CASES) if args.no_derive else {**CASES, **DERIVE}
    print("load average (1, 5, 15 min): {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    print(f"{'command':<30} {'wall [s]':>9} {'cpu [s]':>8} {'floor wall':>10} {'floor cpu':>9} "
          f"{'extra wall':>10} {'extra cpu':>9} {'stdout [B]':>10}")
    for name, argv in cases.items():
        runs, floors = [], []
        for _ in range(args.repeat if name in CASES else max(1, args.repeat // 2)):
            floors.append(_run(["-c", "pass"]))
            runs.append(_run(argv))
        wall, cpu = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
        fwall, fcpu = statistics.median(f[0] for f in floors), statistics.median(f[1] for f in floors)
        print(f"{name:<30} {wall:9.3f} {cpu:8.3f} {fwall:10.3f} {fcpu:9.3f} {wall - fwall:10.3f} "
              f"{cpu - fcpu:9.3f} {runs[-1][2]:10d}", flush=True)
    print("load average (1, 5, 15 min): {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
