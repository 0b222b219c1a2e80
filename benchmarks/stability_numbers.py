"""Time of ``stability_numbers`` per method, as a ratio to the older route to a real interval.

Usage::

    python benchmarks/stability_numbers.py

For Adams-Bashforth, Adams-Moulton and BDF 1..6 (and BDF 7) the script prints the wall
time of :func:`depthdyn.stability_numbers` (both intervals, A(alpha), zero-stability,
order and the marginal sets) and, measured in the same run, of the baseline that gave a
real interval before: ``stability_conditions(rec)`` (Lienard-Chipart in ``lam``) reduced
by ``solve_for``. The ratio is numbers / baseline; the baseline is skipped (``-``) for
BDF 5..7, where it takes tens of seconds. Speed is never asserted in the test suite.
"""

from __future__ import annotations

import time

from depthdyn import adams_bashforth, adams_moulton, bdf, solve_for, stability_conditions, stability_numbers


def _time(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    cases = [(f, k) for f in (adams_bashforth, adams_moulton, bdf) for k in range(1, 7)] + [(bdf, 7)]
    print(f"{'method':<20} {'numbers [s]':>12} {'baseline [s]':>13} {'ratio':>7}")
    for fam, k in cases:
        rec = fam(k=k)
        t_num = _time(lambda rec=rec: stability_numbers(rec))
        if fam is bdf and k >= 5:
            print(f"{fam.__name__ + ' ' + str(k):<20} {t_num:12.2f} {'-':>13} {'-':>7}")
            continue
        t_base = _time(lambda rec=rec: solve_for(stability_conditions(rec), "lam"))
        print(f"{fam.__name__ + ' ' + str(k):<20} {t_num:12.2f} {t_base:13.2f} {t_num / t_base:7.2f}")


if __name__ == "__main__":
    main()
