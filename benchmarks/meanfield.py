"""Speed of depthdyn.meanfield: the critical line, single fixed points, the phase diagram.

Run ``python benchmarks/meanfield.py [--repeats N] [--json FILE]``. Each task reports its
median wall and CPU time and the ratio to a baseline timed in the same run:

* ``critical_line/tanh`` (200 points, vectorised over q) against the same 200 points done one
  at a time (a Python loop over the scalar moments): the speed-up of vectorising;
* ``critical_point/tanh`` (one bracketed root find) against one ``critical_line`` call;
* ``fixed_point/tanh chaotic`` (c* by bracketing on the certified 2-D quadrature) and
  ``phase_diagram/tanh`` (36 x 21 grid) against ``np.tanh`` over 10^7 numbers (a streaming
  floor: the ratio says how many such passes the task costs).

The target of the issue: the tanh critical line at 200 points in at most 2 s on an idle
2-core machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from depthdyn.meanfield import critical_line, critical_point, fixed_point, get_activation, phase_diagram  # noqa: E402


def _time(fn, repeats: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus)


def _line_loop():
    act = get_activation("tanh")
    for q in np.concatenate([[0.0], np.geomspace(1e-4, 1e3, 199)]):
        d2 = float(act.derivative_second_moment(q))
        _ = (1 / d2, q - float(act.second_moment(q)) / d2)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    floor_input = np.linspace(-5, 5, 10_000_000)
    tasks = {
        "critical_line/tanh (200 points)": (lambda: critical_line("tanh", points=200), _line_loop,
                                            "per-point loop"),
        "critical_point/tanh (sb2 = 0.3)": (lambda: critical_point("tanh", sb2=0.3),
                                            lambda: critical_line("tanh", points=200), "critical_line"),
        "fixed_point/tanh chaotic (2.5, 0.1)": (lambda: fixed_point("tanh", 2.5, 0.1),
                                                lambda: np.tanh(floor_input), "np.tanh 1e7"),
        "phase_diagram/tanh (36 x 21)": (lambda: phase_diagram("tanh"), lambda: np.tanh(floor_input),
                                         "np.tanh 1e7"),
    }
    rows = []
    for name, (task, baseline, base_name) in tasks.items():
        repeats = args.repeats if "phase" not in name else max(1, args.repeats // 2)
        wall, cpu = _time(task, repeats)
        base_wall, base_cpu = _time(baseline, repeats)
        rows.append({"task": name, "wall_s": wall, "cpu_s": cpu, "baseline": base_name,
                     "baseline_wall_s": base_wall, "ratio": wall / base_wall})
        print(f"{name:40s} {wall:8.4f} s (cpu {cpu:7.4f} s)   x {wall / base_wall:8.3g} of {base_name} "
              f"({base_wall:.4f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
