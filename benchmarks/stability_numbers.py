"""Time of ``stability_numbers`` and of ``depthdyn stability`` per method, with same-run baselines.

Usage::

    python benchmarks/stability_numbers.py [--no-cli] [--no-baseline]

For Adams-Bashforth, Adams-Moulton and BDF 1..6 (and BDF 7) the script prints

* ``numbers``: the wall time of :func:`depthdyn.stability_numbers` in this process (both
  intervals, A(alpha), zero-stability, order and the marginal sets);
* ``baseline`` and ``ratio``: the route that gave a real interval before,
  ``stability_conditions(rec)`` (Lienard-Chipart in ``lam``) reduced by ``solve_for``,
  timed in the same run, and numbers / baseline (skipped, ``-``, for BDF 5..7, where it
  takes tens of seconds);
* ``cli``: the wall time of the command a user runs, ``python -m depthdyn stability
  FAMILY -p k=K``, in a fresh interpreter (start-up and imports included), and ``start``:
  ``python -c "import depthdyn.cli"`` timed right before it, so that ``cli - start`` is
  the work itself on a machine whose load changes.

The load average is printed before and after. Speed is never asserted in the test suite.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from depthdyn import solve_for, stability_conditions, stability_numbers
from depthdyn.families import adams_bashforth, adams_moulton, bdf


def _time(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def _run(*argv: str) -> float:
    return _time(lambda: subprocess.run([sys.executable, *argv], check=True, capture_output=True))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-cli", action="store_true", help="skip the command-line timings")
    ap.add_argument("--no-baseline", action="store_true", help="skip the Lienard-Chipart baseline")
    args = ap.parse_args()
    cases = [(f, k) for f in (adams_bashforth, adams_moulton, bdf) for k in range(1, 7)] + [(bdf, 7)]
    print("load average (1, 5, 15 min): {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    print(f"{'method':<18} {'numbers [s]':>11} {'baseline [s]':>12} {'ratio':>6} {'cli [s]':>8} {'start [s]':>9}")
    worst = 0.0
    for fam, k in cases:
        rec = fam(k=k)
        t_num = _time(lambda rec=rec: stability_numbers(rec))
        base = ratio = "-"
        if not args.no_baseline and not (fam is bdf and k >= 5):
            t_base = _time(lambda rec=rec: solve_for(stability_conditions(rec), "lam"))
            base, ratio = f"{t_base:.2f}", f"{t_num / t_base:.2f}"
        cli = start = "-"
        if not args.no_cli:
            t_start = _run("-c", "import depthdyn.cli")
            t_cli = _run("-m", "depthdyn", "stability", fam.__name__, "-p", f"k={k}")
            worst = max(worst, t_cli)
            cli, start = f"{t_cli:.2f}", f"{t_start:.2f}"
        print(f"{fam.__name__ + ' ' + str(k):<18} {t_num:11.2f} {base:>12} {ratio:>6} {cli:>8} {start:>9}",
              flush=True)
    if not args.no_cli:
        print(f"slowest command: {worst:.2f} s")
    print("load average (1, 5, 15 min): {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
