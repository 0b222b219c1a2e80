"""Time of ``stability_numbers`` on one-step (Runge-Kutta) blocks, with a same-run baseline.

Usage::

    python benchmarks/onestep_numbers.py

Per tableau the script prints ``numbers``: the CPU time of :func:`depthdyn.stability_numbers`
(both axis sets by Cayley resultants, exact A-/L-stability and A(alpha), the order of
``R(z)``); ``baseline``: the route that gave the axis intervals of such blocks before,
:func:`depthdyn.compare.axis_intervals` (Schur-Cohn conditions on each axis solved by
``solve_for``; no A(alpha), no marginal sets), timed in the same run, ``-`` where it
fails (tableaux with radicals); and ``ratio`` = numbers / baseline. CPU time of this
process, so a loaded machine changes the figures little. Speed is never asserted in the
test suite.
"""

from __future__ import annotations

import os
import time

import sympy as sp

from depthdyn import stability_numbers
from depthdyn.compare import axis_intervals
from depthdyn.errors import DepthdynError
from depthdyn.families import runge_kutta

R, S3, H = sp.Rational, sp.sqrt(3), sp.Rational(1, 2)
G = (3 + S3) / 6
CASES = {
    "rk2 (midpoint)": {"tableau": "midpoint"},
    "rk3": {"tableau": "rk3"},
    "rk4": {"tableau": "rk4"},
    "gauss2": {"A": [[R(1, 4), R(1, 4) - S3 / 6], [R(1, 4) + S3 / 6, R(1, 4)]], "b": [H, H]},
    "radau_iia2": {"A": [[R(5, 12), -R(1, 12)], [R(3, 4), R(1, 4)]], "b": [R(3, 4), R(1, 4)]},
    "sdirk2 (sqrt 3)": {"A": [[G, 0], [1 - 2 * G, G]], "b": [H, H]},
}


def _cpu(fn) -> float | None:
    t = time.process_time()
    try:
        fn()
    except DepthdynError:
        return None
    return time.process_time() - t


def main() -> None:
    print("load average (1, 5, 15 min): {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    print(f"{'tableau':18s} {'numbers':>9s} {'baseline':>9s} {'ratio':>7s}")
    for name, kw in CASES.items():
        rec = runge_kutta(h=1, **kw)
        t_num = _cpu(lambda rec=rec: stability_numbers(rec))
        t_base = _cpu(lambda rec=rec: axis_intervals(rec))
        ratio = "-" if not t_base or t_num is None else f"{t_num / t_base:.2f}"
        base = "-" if t_base is None else f"{t_base:.2f}"
        print(f"{name:18s} {t_num:9.2f} {base:>9s} {ratio:>7s}")
    print("load average (1, 5, 15 min): {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
