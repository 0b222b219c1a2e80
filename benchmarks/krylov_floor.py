"""The fewest forward passes a single-vector Krylov analysis of a layer could take.

``inspect``'s default figures of a layer (the top ``k = 5`` singular values and the spectral
radius to ``tol = 1e-3``, ``tr J`` from 16 probes) cost Jacobian products. Where the layer has
no token-local form (bidirectional encoders, convolutional stages: BERT, ViT, ResNet), every
product is a pass over the whole input, and ``K`` vectors in one pass cost ``K`` passes on a
CPU, so the analysis costs at least (products) x (one product's cost). This script measures
both factors on sampled layers of a real-size model (random weights, one torch thread, CPU
time):

* what one ``J^T v`` and one ``J w`` cost, in forwards of the same layer;
* the **oracle step** of each iteration: the first step after which its values are within
  ``tol`` of the converged ones (Golub-Kahan-Lanczos's top ``k``, tested every 8 steps as the
  iteration does, against a run of ``--ref`` steps; Arnoldi's dominant ``|theta|``, every 4
  steps, within ``tol`` from then on) -- no stopping rule can stop before it without
  reporting a value off by more than ``tol``; beside it, the step at which the iteration's own
  bound stopped (``inspect``'s rule);
* the **floor**: ``2 x`` Lanczos's oracle steps (less the test spacing: 7) plus Arnoldi's (less
  3) plus the probes, each product at its measured cost, as forwards of the layer; and the
  same over the model, ``L`` layers at the sampled layers' mean, as forward passes of the whole
  model (the multiple that ``benchmarks/model_scale.py`` reports).

Usage: ``taskset -c 0 python benchmarks/krylov_floor.py --case bert-128 --layers 0 6 11``.
A few minutes a case on one core (each sampled layer runs both iterations to their reference
length and once more with their stopping rules).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _median_cpu(call, repeats: int = 3) -> float:
    call()  # the first call builds graphs and caches: not typical
    times = []
    for _ in range(repeats):
        c = _cpu()
        call()
        times.append(_cpu() - c)
    return sorted(times)[len(times) // 2]


def _lanczos_checkpoints(op, k: int, steps: int, seed: int):
    """Golub-Kahan-Lanczos run to ``steps`` with no stopping rule: its top-``k`` Ritz values at
    each of its tests (every 8 steps), observed where it computes them (the eigenproblem of
    ``B B^T``), and the final estimate."""
    import torch

    from depthdyn.nn.analysis import krylov

    seen, plain = [], krylov.per_matrix

    def observed(fn, M):
        out = plain(fn, M)
        if fn is torch.linalg.eigh:
            seen.append((M.shape[-1], out[0].flip(-1)[:, :k].clamp(min=0).sqrt().numpy()))
        return out

    krylov.per_matrix = observed
    try:
        final = krylov.top_singular_values(op, k, steps=steps, tol=0.0, seed=seed)
    finally:
        krylov.per_matrix = plain
    return seen, final


def _oracle(steps, errors, tol: float, stay: bool) -> int | None:
    """The first step whose error (the worst problem's) is within ``tol`` (and, with ``stay``,
    stays there at every later step listed)."""
    import numpy as np

    ok = np.asarray(errors) <= tol
    for i, s in enumerate(steps):
        if ok[i] and (not stay or ok[i:].all()):
            return int(s)
    return None


def _whole(x) -> str:
    return "none (not within tol in the reference run)" if x is None else f"{x:.0f}"


def _layer(op, forward_cpu: float, args) -> dict:
    import numpy as np
    import torch

    from depthdyn.nn.analysis import krylov

    P = op.problems
    V = torch.randn(1, P, op.n_out, dtype=op.y.dtype)
    W = torch.randn(1, P, op.n_in, dtype=op.x.dtype)
    cost_t = _median_cpu(lambda: op.rmatvec(V)) / forward_cpu
    cost = _median_cpu(lambda: op.matvec(W)) / forward_cpu

    seen, ref = _lanczos_checkpoints(op, args.k, args.ref, args.seed)
    steps = [m for m, _ in seen]
    errors = [np.max(np.abs(sig - ref.values) / ref.values, axis=0) for _, sig in seen]  # (k,) each
    lanczos = _oracle(steps, [e.max() for e in errors], args.tol, stay=False)
    top_only = _oracle(steps, [e[0] for e in errors], args.tol, stay=False)  # k = 1
    ruled = krylov.top_singular_values(op, args.k, steps=args.steps, tol=args.tol, seed=args.seed)

    arnoldi = radius = moved = None
    if op.square:  # a step that changes the shape has no eigenvalues: its singular values only
        H, s = krylov.arnoldi_hessenberg(op, steps=args.ref_arnoldi, seed=args.seed)

        def ritz(t):
            return torch.linalg.eigvals(torch.from_numpy(H[:, :t, :t].copy())).abs().amax(dim=1).numpy()

        top = ritz(s)
        grid = list(range(4, s + 1, 4))
        errs = [float(np.max(np.abs(ritz(t) - top) / top)) for t in grid]
        arnoldi = _oracle(grid, errs, args.tol, stay=True)
        radius = krylov.spectral_radius_estimate(op, steps=args.steps, tol=args.tol, seed=args.seed).method
        moved = float(np.max(np.abs(ritz(max(s - 20, 1)) - top) / top))

    def floor(lanczos_steps):
        if lanczos_steps is None or (op.square and arnoldi is None):
            return None
        lanczos_products = max(lanczos_steps - 7, 1) * (cost + cost_t)
        return lanczos_products + ((max(arnoldi - 3, 1) + args.probes) * cost_t if op.square else 0.0)

    return {
        "n": op.n_in, "jt_cost": cost_t, "j_cost": cost,
        "lanczos_oracle": lanczos, "lanczos_rule": ruled.method,
        "lanczos_ref_bound": float(np.max(ref.accuracy / ref.values)),
        "arnoldi_oracle": arnoldi, "arnoldi_rule": radius, "arnoldi_ref_change": moved,
        "lanczos_oracle_top": top_only,
        "floor_layer_forwards": floor(lanczos), "floor_top_layer_forwards": floor(top_only),
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--case", default="bert-128", help="a shipped case of benchmarks/model_scale.py")
    p.add_argument("--layers", type=int, nargs="+", default=[0], help="indices of the layers to sample")
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--tol", type=float, default=1e-3)
    p.add_argument("--steps", type=int, default=200, help="the step cap of the stopping rules (inspect's)")
    p.add_argument("--ref", type=int, default=160, help="Lanczos steps of the reference run")
    p.add_argument("--ref-arnoldi", type=int, default=300, help="Arnoldi steps of the reference run")
    p.add_argument("--probes", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)

    import torch
    from model_scale import _shipped

    from depthdyn.nn.analysis.operators import LayerOperator
    from depthdyn.nn.analysis.record import find_layers, record
    from depthdyn.nn.analysis.steps import layer_steps

    torch.set_num_threads(1)
    model, inputs, layers = _shipped(args.case)
    found = find_layers(model, layers)
    with torch.no_grad():
        model_forward = _median_cpu(lambda: model(**inputs))
    steps = layer_steps(record(model, inputs, found=found).calls)
    rows = []
    for i in args.layers:
        st = steps[i]
        with torch.no_grad():
            forward = _median_cpu(lambda st=st: st.function(st.state))
        op = LayerOperator(st.function, st.state)
        row = {"layer": st.name, "layer_forward_cpu": forward, **_layer(op, forward, args)}
        rows.append(row)
        print(
            f"{st.name}: n {row['n']}, J^T v {row['jt_cost']:.2f} and J w {row['j_cost']:.2f} "
            "layer forwards; "
            f"Lanczos within tol at step {row['lanczos_oracle']} (its rule: {row['lanczos_rule']}); "
            f"Arnoldi at step {row['arnoldi_oracle']} (its rule: {row['arnoldi_rule']}); "
            f"floor {_whole(row['floor_layer_forwards'])} layer forwards (the top value alone: "
            f"Lanczos at step "
            f"{row['lanczos_oracle_top']}, floor {_whole(row['floor_top_layer_forwards'])}) "
            f"[reference: Lanczos bound {row['lanczos_ref_bound']:.1e}, Arnoldi's last 20 steps moved "
            f"|theta| by {row['arnoldi_ref_change']}]",
            flush=True,
        )
    summary = {"case": args.case, "model_forward_cpu": model_forward, "layers": len(steps), "rows": rows}
    for key, what in (("floor", f"top {args.k}"), ("floor_top", "top 1")):
        floors = [r[f"{key}_layer_forwards"] * r["layer_forward_cpu"]
                  for r in rows if r[f"{key}_layer_forwards"]]
        if len(floors) == len(rows):
            summary[f"{key}_forward_passes"] = len(steps) * sum(floors) / len(floors) / model_forward
            print(f"{args.case}: {len(steps)} layers; floor ({what} singular values) about "
                  f"{summary[f'{key}_forward_passes']:.0f} forward passes of the whole model (CPU time, the "
                  "sampled layers' mean for every layer)")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
