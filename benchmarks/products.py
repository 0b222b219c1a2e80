"""Products over depth: exact period-2 conditions, Lyapunov exponents at width 768, batched
growth rates, each against a floor timed in the same run.

Usage::

    python benchmarks/products.py [--quick] [--only exact|lyapunov|growth]

* ``exact``: for every registry family of order <= 2 that has a block eigenvalue ``lam``
  (other parameters at the registry's example values), ``stability_conditions`` of the period-2
  pattern ``family(lam=a), family(lam=b)``; floor: ``stability_conditions`` of the family
  itself (one layer, ``lam`` free), timed right before. Target: <= 5 s per family.
* ``lyapunov``: the top 16 Lyapunov exponents of a 12-layer width-768 stack of residual-MLP
  Jacobians ``I + W2 diag(d) W1`` (dense); floor: the 12 products ``A_l Q`` alone (no QR).
  Target: <= 10 s on 2 cores. The top 16 end-to-end singular values of the same stack,
  matrix-free with their error bounds, are timed too.
* ``growth``: ``growth_rate`` over 10^5 parameter points x 100 layers of 2 x 2 momentum
  layer matrices (``lam`` drawn per point and layer); floor: the plain batched matmul loop
  ``P = A[:, l] @ P`` over the same arrays. Target: <= 5x the floor.

``--threads N`` sets the BLAS thread count (before numpy loads). On a loaded 2-core machine
OpenBLAS's threaded QR of tall-skinny blocks can be two orders of magnitude slower than one
thread (threads wait on each other); compare ``--threads 1`` with the default.

The load average is printed before and after; on a shared machine compare the ratios.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

if "--threads" in sys.argv:  # must precede the first import of numpy
    _n = sys.argv[sys.argv.index("--threads") + 1]
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = _n

import numpy as np  # noqa: E402
import sympy as sp  # noqa: E402

import depthdyn as dd  # noqa: E402
from depthdyn.products import growth_rate  # noqa: E402


def _time(fn, repeat: int = 1) -> float:
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def exact() -> None:
    from depthdyn.compare import resolve_spec
    from depthdyn.families import FAMILIES

    a, b = sp.symbols("a b")
    print(f"{'family':<18} {'one layer [s]':>13} {'period 2 [s]':>12} {'ratio':>7}  target <= 5 s")
    for name in FAMILIES:
        try:
            rec = resolve_spec(name)[1]
        except dd.errors.DepthdynError as exc:
            print(f"{name:<18} skipped: {exc}")
            continue
        if rec.lam is None or rec.order > 2:
            continue
        try:
            t1 = _time(lambda rec=rec: dd.stability_conditions(rec))
            pattern = dd.periodic(rec.subs(lam=a), rec.subs(lam=b))
            t2 = _time(lambda pattern=pattern: dd.stability_conditions(pattern))
        except dd.errors.DepthdynError as exc:
            print(f"{name:<18} error: {exc}")
            continue
        flag = "" if t2 <= 5 else "  (over target)"
        print(f"{name:<18} {t1:13.3f} {t2:12.3f} {t2 / max(t1, 1e-9):7.1f}{flag}")


def _mlp_stack(n: int, layers: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = np.empty((layers, n, n))
    for i in range(layers):
        W1, W2 = rng.standard_normal((2, n, n)) / np.sqrt(n)
        d = 1 - np.tanh(W1 @ rng.standard_normal(n)) ** 2
        out[i] = np.eye(n) + W2 @ (d[:, None] * W1)
    return out


def lyapunov(width: int) -> None:
    A = _mlp_stack(width, 12)
    Q = np.linalg.qr(np.random.default_rng(0).standard_normal((width, 16)))[0]

    def floor():
        for M in A:
            M @ Q

    t_floor = _time(floor, 3)
    t_lyap = _time(lambda: dd.lyapunov(A, k=16), 3)
    spec = dd.lyapunov(A, k=16)
    print(f"top-16 Lyapunov, 12 layers, width {width}: {t_lyap:.3f} s (target <= 10 s); floor (12 products "
          f"A_l Q) {t_floor:.4f} s, ratio {t_lyap / t_floor:.1f}; lambda_1 = {spec.exponents[0]:.6f}")
    t = time.perf_counter()
    e2e = dd.end_to_end_singular_values(list(A), 16)
    t_e2e = time.perf_counter() - t
    print(f"top-16 end-to-end singular values, matrix-free: {t_e2e:.2f} s, {e2e.products} products, "
          f"sigma_1 = {e2e.values[0]:.8g}, largest bound {e2e.bounds.max():.2g}")


def growth(points: int, layers: int) -> None:
    rng = np.random.default_rng(0)
    lam = rng.uniform(-2.5, 0.0, (points, layers))
    A = np.zeros((points, layers, 2, 2))
    A[..., 0, 0], A[..., 0, 1], A[..., 1, 0] = 1.5 + lam, -0.5, 1.0  # momentum, m = 1/2, eta = 1

    def floor():
        P = A[:, 0].copy()
        for layer in range(1, layers):
            P = np.matmul(A[:, layer], P)

    t_floor = _time(floor, 3)
    t_rate = _time(lambda: growth_rate(A), 3)
    print(f"growth rates, {points} points x {layers} layers: {t_rate:.3f} s; floor (plain batched matmul) "
          f"{t_floor:.3f} s; ratio {t_rate / t_floor:.2f} (target <= 5)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test)")
    ap.add_argument("--only", choices=("exact", "lyapunov", "growth"))
    ap.add_argument("--threads", type=int, help="BLAS threads (set before numpy loads)")
    args = ap.parse_args()
    print("load average (1, 5, 15 min): {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()),
          f"BLAS threads: {os.environ.get('OPENBLAS_NUM_THREADS', 'default')}")
    if args.only in (None, "exact"):
        exact()
    if args.only in (None, "lyapunov"):
        lyapunov(128 if args.quick else 768)
    if args.only in (None, "growth"):
        growth(10_000 if args.quick else 100_000, 100)
    print("load average (1, 5, 15 min): {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
