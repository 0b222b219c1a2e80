"""Speed of the numeric engine, as ratios against baselines measured in the same run.

Usage::

    python benchmarks/run.py [--json FILE] [--quick] [--repeats N] [--only PREFIX]

For every task the script prints the median wall time, the ratio to a *streaming floor*
(``np.abs`` over the same complex grid for grid tasks; ``L`` elementwise passes over the
batch for ``final/``; writing the ``(L + 1, N)`` output once for ``trajectory/``), timed
interleaved with the task so both see the same machine load, and the ratio to the *naive*
baseline: a per-point ``numpy.roots`` loop (a per-system loop for simulation) on a random
sub-grid, extrapolated per point. ``peak`` is the largest extra memory the task
allocated (``tracemalloc``), in units of one grid-sized complex array.

Tasks: ``mask/momentum``, ``mask/bdf-k2`` ... ``mask/bdf-k6`` (strict stability mask of
:func:`depthdyn.numeric.stability_region` over a 2048 x 2048 complex ``lam`` grid),
``radius/momentum`` (:func:`depthdyn.numeric.spectral_radius` over the same grid,
``m = 1/2, eta = 1``), ``mask-sc/...`` (the Schur–Cohn recursion on the materialised grid,
for comparison) and, when :mod:`depthdyn.numeric.simulate` exists, ``final/momentum``
(``N = 1,000,000``, ``L = 1024``) and ``trajectory/momentum`` (``N = 100,000``).
Speed is never asserted; the test suite checks correctness only.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

import depthdyn  # noqa: E402
from depthdyn.numeric import batch_coefficients, spectral_radius, stability_mask, stability_region  # noqa: E402

WINDOWS = {"momentum": (-4.0, 1.0, -3.0, 3.0), "bdf": (-10.0, 30.0, -20.0, 20.0)}
MOMENTUM = {"m": 0.5, "eta": 1.0}


def bdf(k: int):
    """BDF-k: rho(r) = sum_{j=1..k} r^(k-j) (r-1)^j / j, sigma(r) = r^k."""
    rho = " + ".join(f"r**{k - j}*(r - 1)**{j}/{j}" for j in range(1, k + 1))
    return depthdyn.general(rho=rho, sigma=f"r**{k}")


def grid(window, n):
    x0, x1, y0, y1 = window
    return np.linspace(x0, x1, n)[None, :] + 1j * np.linspace(y0, y1, n)[:, None]


def interleaved(task, floor, repeats: int) -> tuple[float, float]:
    """Median times of ``task`` and ``floor``, alternating so both see the same load."""
    task(), floor()  # warm caches, compile, fault pages in
    ts, fs = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        floor()
        fs.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        task()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts)), float(np.median(fs))


def peak_bytes(task) -> int:
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    task()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak


def naive_per_point(coeffs: np.ndarray, count: int, what: str, seed: int = 0) -> float:
    """Seconds per point of a per-point numpy.roots loop on a random sub-grid."""
    flat = coeffs.reshape(-1, coeffs.shape[-1])
    pick = flat[np.random.default_rng(seed).choice(len(flat), size=min(count, len(flat)), replace=False)]
    t0 = time.perf_counter()
    for row in pick:
        rad = np.abs(np.roots(row)).max()
        _ = rad < 1 if what == "mask" else rad
    return (time.perf_counter() - t0) / len(pick)


def grid_task(name, rec, kw, window, n, repeats, naive_count, fn):
    lam = grid(window, n)
    ts, fs = interleaved(lambda: fn(rec, lam, kw, window, n), lambda: np.abs(lam), repeats)
    sub = batch_coefficients(rec, lam=lam[:: max(1, n // 64), :: max(1, n // 64)], **kw)
    naive = naive_per_point(sub, naive_count, name.split("/")[0])
    peak = peak_bytes(lambda: fn(rec, lam, kw, window, n)) / lam.nbytes
    return {
        "task": name,
        "median_s": ts,
        "floor_s": fs,
        "naive_s_per_point": naive,
        "points": lam.size,
        "peak_grids": peak,
    }


def region(rec, lam, kw, window, n):
    x0, x1, y0, y1 = window
    return stability_region(
        rec, ("re(lam)", x0, x1, n), ("im(lam)", y0, y1, n), conditions=False, **kw
    ).strict


def schur_cohn_mask(rec, lam, kw, window, n):
    return stability_mask(rec, lam=lam, **kw)[0]


def radius(rec, lam, kw, window, n):
    return spectral_radius(rec, lam=lam, **kw)


def simulation_tasks(quick: bool, repeats: int) -> list[dict]:
    from depthdyn.numeric.simulate import final_state, trajectory

    out, L, rng = [], 1024, np.random.default_rng(1)
    for name, N in (
        ("final/momentum", 100_000 if quick else 1_000_000),
        ("trajectory/momentum", 10_000 if quick else 100_000),
    ):
        lam = rng.uniform(-2.5, -0.5, N)  # inside the stable interval -2(1 + m) < lam < 0
        coeffs = batch_coefficients(depthdyn.momentum(), lam=lam, **MOMENTUM)
        init = np.stack([np.ones(N), rng.uniform(0.5, 1.5, N)], axis=-1)
        if name.startswith("final"):
            x, y = np.ones(N), np.empty(N)

            def floor(x=x, y=y):
                for _ in range(L):
                    np.multiply(x, 1.0000001, out=y)

            def task(coeffs=coeffs, init=init):
                return final_state(coeffs, init, L)
        else:

            def floor(N=N):
                return np.full((L + 1, N), 1.0)

            def task(coeffs=coeffs, init=init):
                return trajectory(coeffs, init, L)

        ts, fs = interleaved(task, floor, max(3, repeats // 2))
        pick = rng.choice(N, size=20, replace=False)
        t0 = time.perf_counter()
        for i in pick:  # per-system loop: the companion recurrence layer by layer
            a1, a2 = coeffs[i, 1], coeffs[i, 2]
            x0, x1 = init[i]
            for _ in range(L - 1):
                x0, x1 = x1, -a1 * x1 - a2 * x0
        naive = (time.perf_counter() - t0) / len(pick)
        out.append({"task": name, "median_s": ts, "floor_s": fs, "naive_s_per_point": naive, "points": N})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", metavar="FILE", help="write the table as a JSON list")
    ap.add_argument("--quick", action="store_true", help="small sizes (512 x 512 grid), for a smoke test")
    ap.add_argument(
        "--repeats", type=int, default=None, help="timed repetitions per task (default 9, quick 3)"
    )
    ap.add_argument("--only", default="", help="run only tasks whose name starts with this")
    args = ap.parse_args(argv)
    n = 512 if args.quick else 2048
    repeats = args.repeats or (3 if args.quick else 9)
    naive_count = 200 if args.quick else 1000
    specs = [("mask/momentum", depthdyn.momentum(), MOMENTUM, WINDOWS["momentum"], region)]
    specs += [(f"mask/bdf-k{k}", bdf(k), {}, WINDOWS["bdf"], region) for k in range(2, 7)]
    specs += [("radius/momentum", depthdyn.momentum(), MOMENTUM, WINDOWS["momentum"], radius)]
    specs += [("mask-sc/momentum", depthdyn.momentum(), MOMENTUM, WINDOWS["momentum"], schur_cohn_mask)]
    specs += [(f"mask-sc/bdf-k{k}", bdf(k), {}, WINDOWS["bdf"], schur_cohn_mask) for k in (2, 6)]
    rows = []
    print(f"load average at start: {_load()} ({os.cpu_count()} CPUs); ratios are against floors timed "
          "interleaved with each task, so both see the same load")
    print(f"{'task':<22}{'median':>11}{'floor':>11}{'x floor':>9}{'naive/pt':>11}{'x faster':>10}{'peak':>7}")
    for name, rec, kw, window, fn in specs:
        if not name.startswith(args.only):
            continue
        rows.append(grid_task(name, rec, kw, window, n, repeats, naive_count, fn))
        _print(rows[-1])
    if importlib.util.find_spec("depthdyn.numeric.simulate") is not None:
        for row in simulation_tasks(args.quick, repeats):
            if row["task"].startswith(args.only):
                rows.append(row)
                _print(row)
    print(f"load average at end: {_load()}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


def _load() -> str:
    try:
        return ", ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:  # not available on this platform
        return "unknown"


def _print(row: dict) -> None:
    per_point = row["median_s"] / row["points"]
    peak = f"{row['peak_grids']:.2f}" if "peak_grids" in row else "-"
    print(
        f"{row['task']:<22}{row['median_s'] * 1e3:>9.2f}ms{row['floor_s'] * 1e3:>9.2f}ms"
        f"{row['median_s'] / row['floor_s']:>9.2f}{row['naive_s_per_point'] * 1e6:>9.2f}us"
        f"{row['naive_s_per_point'] / per_point:>10.0f}{peak:>7}",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
