"""Kernel recurrences of every family to depth 10^4, and the Monte-Carlo harness at width 1024.

Usage::

    python benchmarks/meanfield_families.py [--quick] [--only kernels|harness] [--act NAME]

* ``kernels``: ``iterate_family`` of every family to depth 10^4 (CPU seconds); floor: the
  same number of calls of the activation's ``cross_moment`` on two-element arrays, the
  least any kernel recurrence must do per layer. Target: <= 1 s per family.
* ``harness``: ``simulate_kernel`` at width 1024, depth 100, 16 seeds, with weight matrices
  through depthdyn's torch blocks (``method="weights"``) and by Gaussian conditioning
  (``method="gaussian"``); floor: drawing the 100 x 16 weight matrices alone. Target: <= 60 s
  of CPU time for the weights method. ``--device cuda`` runs the harness on a GPU (seconds there
  are wall time between synchronisations).

Times are CPU seconds of this process (``time.process_time``), so a loaded machine changes
them less than wall-clock times; the load average is printed before and after. BLAS runs on
one thread (unless the environment says otherwise): the kernels' matrix-vector products are a
few MB, and spare BLAS threads only spin on a shared machine.

``--act`` takes a comma-separated list (``erf,tanh``): erf has closed-form moments, tanh's come
from the Hermite series (quadrature where it does not converge).

Kernels to depth 10^4, CPU seconds, before (commit f246411) and after the layer loop kept
NumPy's per-call cost off the layer (floats for a one-input branch, erf's moments by its scalar
formulas, tanh's Hermite coefficients on half the nodes): each the minimum of two runs, the two
versions alternating in fresh processes on the shared 2-core machine at a load average of 1.1-2.1
(other work on the second core; on an idle core both columns are lower, the ratio about the same):

==================================  ======  ======  ======  ======
family                              erf     erf     tanh    tanh
                                    before  after   before  after
==================================  ======  ======  ======  ======
plain                               0.76    0.08    0.52    0.11
residual                            0.70    0.09    2.34    0.86
residual norm=pre                   0.75    0.10    2.13    0.87
residual norm=post                  0.69    0.08    0.60    0.13
full_residual                       0.71    0.07    1.96    0.94
weighted a=0.9                      0.86    0.11    0.82    0.19
rezero a=0.1                        1.04    0.09    1.58    0.98
scaled_residual                     0.96    0.07    2.08    0.72
highway g=0.3                       0.79    0.08    0.63    0.12
momentum m=0.5 h=0.01               0.77    0.17    1.72    0.80
smooth k=2 h=0.01                   0.92    0.09    1.88    0.75
dense k=3 h=0.01                    1.07    0.69    4.34    2.62
hyper_connection n=4 h=0.01         0.82    0.16    2.06    0.79
==================================  ======  ======  ======  ======

tanh's dense kernel misses the target: its consecutive lags are correlated to about 1 - 1e-4,
where the series needs 192-384 terms at q = 1.5-2.2, so every layer pays a 384-term series at
six points besides the new lag's coefficients.
"""

from __future__ import annotations

import argparse
import os
import time
from functools import partial

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

FAMILIES = [
    ("plain", {}),
    ("residual", {}),
    ("residual", {"norm": "pre"}),
    ("residual", {"norm": "post"}),
    ("full_residual", {}),
    ("weighted", {"a": 0.9}),
    ("rezero", {"a": 0.1}),
    ("scaled_residual", {}),
    ("highway", {"g": 0.3}),
    ("momentum", {"m": 0.5, "h": 0.01}),
    ("smooth", {"k": 2, "h": 0.01}),
    ("dense", {"k": 3, "h": 0.01}),
    ("hyper_connection", {"n": 4, "h": 0.01}),
]


def _cpu(fn):
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out


def kernels(act: str, depth: int) -> None:
    from depthdyn.meanfield.kernels import iterate_family, resolve_activation

    a = resolve_activation(act)
    two = np.array([1.0, 1.0])
    floor, _ = _cpu(lambda: [a.cross_moment(two, two, eps=two * 0.5) for _ in range(depth)])
    print(f"floor: {depth} cross_moment calls ({act}): {floor:.3f} s")
    print(f"{'family':<34} {'CPU [s]':>8} {'ratio':>7}  target <= 1 s")
    for family, params in FAMILIES:
        sw2 = 0.5 if family in ("residual", "full_residual", "rezero") else 1.0
        seconds, traj = _cpu(partial(iterate_family, a, sw2, 0.05, depth=depth, q0=1.0, c0=0.3,
                                     family=family, **params))
        label = family + "".join(f" {k}={v}" for k, v in params.items())
        note = f"  ({traj.reason} at {traj.stopped_at})" if traj.stopped_at is not None else ""
        print(f"{label:<34} {seconds:8.3f} {seconds / floor:7.2f}{note}")


def harness(act: str, depth: int, families, device: str = "cpu") -> None:
    import torch

    from depthdyn.meanfield.montecarlo import simulate_kernel

    gpu = device != "cpu"

    def timed(fn):
        """CPU seconds on the CPU; on a GPU wall seconds between synchronisations (the GPU's time)."""
        if not gpu:
            return _cpu(fn)
        torch.cuda.synchronize()
        t = time.perf_counter()
        out = fn()
        torch.cuda.synchronize()
        return time.perf_counter() - t, out

    gen = torch.Generator(device=device).manual_seed(0)
    if gpu:
        timed(lambda: torch.randn(16, 1024, 1024, generator=gen, device=device))  # warm-up
    draw = lambda: torch.randn(16, 1024, 1024, generator=gen, device=device)  # noqa: E731
    floor, _ = timed(lambda: [draw() for _ in range(depth)])
    unit = "wall [s]" if gpu else "[s]"
    print(f"floor on {device}: {depth} x 16 random 1024 x 1024 float32 matrices: {floor:.2f} s")
    print(f"{'family':<34} {'weights ' + unit:>11} {'ratio':>6} {'gaussian ' + unit:>12}  target <= 60 s")
    for family, params in families:
        kw = dict(depth=depth, width=1024, seeds=16, q0=1.0, c0=0.3, family=family, every=10, device=device,
                  **params)
        sw2 = 0.5 if family in ("residual", "full_residual", "rezero") else 1.0
        w, _ = timed(partial(simulate_kernel, act, sw2, 0.05, method="weights", **kw))
        g, _ = timed(partial(simulate_kernel, act, sw2, 0.05, method="gaussian", **kw))
        label = family + "".join(f" {k}={v}" for k, v in params.items())
        print(f"{label:<34} {w:11.2f} {w / floor:6.2f} {g:12.3f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="depth 10^3 and three harness families")
    parser.add_argument("--only", choices=("kernels", "harness"))
    parser.add_argument("--act", default="erf", help="activations, comma-separated (default erf)")
    parser.add_argument("--device", default="cpu", help="the harness's device: cpu, cuda (wall time there)")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    for act in args.act.split(","):
        if args.only in (None, "kernels"):
            kernels(act, 1000 if args.quick else 10_000)
        if args.only in (None, "harness"):
            chosen = FAMILIES[1:4] if args.quick else FAMILIES
            harness(act, 100, chosen, args.device)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
