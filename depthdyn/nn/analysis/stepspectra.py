"""The Jacobian spectra of a model's depth steps: what :func:`~.inspection.inspect` computes per step.

Each step becomes a matrix-free :class:`~.operators.LayerOperator` at its recorded state;
small ones are made dense, larger ones go to Lanczos / Arnoldi and Hutchinson
(:mod:`.krylov`), with a cost estimate from one timed product and the causality check that
decides whether causal sequence steps are analysed per sampled token block.
"""

from __future__ import annotations

import contextlib
import sys
import time

import numpy as np
import torch

from ...errors import ParameterError
from .checks import ModelSetupError
from .krylov import hutchinson_trace, singular_values_and_radius, top_singular_values
from .operators import LayerOperator, quiet
from .readonly import frozen
from .stacked import StackedOperator, stack_groups

__all__ = ["estimate_cost", "is_causal", "step_spectra", "token_sample"]


def token_sample(T: int, tokens) -> tuple[int, ...]:
    """The sampled tokens: a count (evenly spaced, the last included) or the given positions."""
    if isinstance(tokens, int) and not isinstance(tokens, bool):
        if tokens < 1:
            raise ParameterError(f"tokens must be a positive count or a list of positions, got {tokens!r}")
        return tuple(sorted({int(round(v)) for v in np.linspace(0, T - 1, min(tokens, T))}))
    try:
        picked = tuple(int(t) for t in tokens)
    except (TypeError, ValueError):
        raise ParameterError(f"tokens must be a count or a list of positions, got {tokens!r}") from None
    if not picked or any(not 0 <= t < T for t in picked):
        raise ParameterError(f"tokens must lie in 0..{T - 1}, got {tokens!r}")
    return picked


def is_causal(fn, x: torch.Tensor) -> bool:
    """No earlier output token moves with the last input token (exactly): the layer is causal.

    Reverse mode (a cotangent on every output token but the last must leave no gradient on
    the last input token): fused attention kernels have no forward mode."""
    y, vjp = quiet(torch.func.vjp)(fn, x)
    v = torch.zeros_like(y)
    v[:, :-1] = torch.randn(v[:, :-1].shape, generator=torch.Generator().manual_seed(1)).to(v)
    return bool((vjp(v)[0][:, -1] == 0).all())


def _progress(enabled: bool, total: int):
    """A tqdm bar on stderr (a plain counter where tqdm is not installed), or nothing."""
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is in the progress extra
        return None
    return tqdm(total=total, desc="inspect", unit="step", leave=False)


def step_spectra(gsteps, blocks, picked, notes: list, opt: dict) -> dict:
    """Singular values, spectral radius and ``tr J`` of every step's Jacobian, per problem.

    ``gsteps`` are the depth steps (:class:`~.steps.Step`, batch rows grouped into states),
    ``blocks`` the ``(N, 2)`` (state, token) problems, ``picked`` the sampled tokens of causal
    steps (``None``: whole-state Jacobians); ``opt`` holds ``k``, ``steps``, ``tol``,
    ``dense_max``, ``probes``, ``seed``, ``progress``, ``release`` (free each step's graphs once
    its figures are computed), ``around`` (``around(module)``: the context a step's work runs
    in) and ``stack`` (at most this many same-shaped token-local steps analysed together,
    :mod:`.stacked`; 1: one by one). Appends to ``notes``; returns the
    :class:`~.inspection.Inspection` fields it computed and the step operators.
    """
    L, N, k = len(gsteps), blocks.shape[0], opt["k"]
    sv, rho, tr = np.full((L, N, k), np.nan), np.full((L, N), np.nan), np.full((L, N), np.nan)
    names = ("singular_values", "spectral_radius", "jacobian_trace", "recording")
    acc = {name: np.zeros(L) for name in names}
    ops, methods, estimate = [], [""] * L, float("nan")
    bar = _progress(opt["progress"], L)
    around = opt.get("around") or (lambda module: contextlib.nullcontext())
    most, deferred = opt.get("stack", 1), set()
    per_step = {"rho": rho, "tr": tr}

    def store(idx: list, op, dense: bool, label: str = "") -> None:
        """The figures of ``op`` (one step's, or a stack's: problems layer-major) into rows ``idx``."""
        figs, G = _figures(op, dense, opt), len(idx)
        method = figs.pop("method")
        for name, value in figs.items():
            value = value.reshape(G, -1, *value.shape[1:])  # problems are layer-major
            for g, i in enumerate(idx):
                if name == "sv":
                    sv[i, :, : value.shape[-1]] = value[g]
                elif name in per_step:
                    per_step[name][i] = value[g]
                else:  # an accuracy: the step's largest bound
                    acc[name][i] = value[g].max()
        for i in idx:
            methods[i] = method + label
        if bar is not None:
            bar.update(G)

    for i, st in enumerate(gsteps):
        with around(st.module):  # a layer with offloaded weights: loaded once for all its products
            op = LayerOperator(st.function, st.state, tokens=picked, local=st.local,
                               around=lambda module=st.module: around(module))
            ops.append(op)
            err = float((op.y - st.output).abs().max())
            acc["recording"][i] = err
            eps = torch.finfo(op.y.dtype).eps
            if err > eps**0.5 * (1.0 + float(st.output.abs().max())):
                raise ModelSetupError(
                    f"step {st.name} does not reproduce the model's own output (max difference {err:.3g}): "
                    "the layer is not a deterministic function of its state (random ops, training mode), or "
                    "its split into attention and MLP does not fit this layer class (pass split=False)"
                )
            dense = max(op.n_in, op.n_out) <= opt["dense_max"]
            if i == 0:
                estimate = estimate_cost(op, L, dense, opt)
                if bar is not None:
                    bar.write(
                        f"inspect: {L} steps x {N} problems of size {op.n_in}: at most about "
                        f"{estimate:.0f} s (the iterations usually stop earlier)",
                        file=sys.stderr,
                    )
            if most <= 1 or dense:
                store([i], op, dense)
                if opt.get("release"):  # weights loaded on demand: keep one layer's in memory at a time
                    op.release()
            else:
                deferred.add(i)
    if deferred:
        stacked, widest = 0, 0
        for idx in stack_groups(ops, [st.module for st in gsteps], most):
            if idx[0] not in deferred:  # a group is of one shape: dense (done above) or not
                continue
            sop = StackedOperator.of([ops[i] for i in idx]) if len(idx) > 1 else None
            if sop is None:
                for i in idx:
                    store([i], ops[i], False)
                continue
            store(idx, sop, False, f" (with {len(idx) - 1} other layers in one pass)")
            sop.release()
            stacked, widest = stacked + len(idx), max(widest, len(idx))
        if stacked:
            notes.append(
                f"{stacked} same-shaped token-local steps analysed together, up to {widest} in one pass "
                "(vmap over their stacked weights; each checked against its own products)"
            )
    if bar is not None:
        bar.close()
    if any(op.token_local or "math" in (op.forward_mode or "") for op in ops):
        notes.append(
            "scaled_dot_product_attention (where a step has it) ran on its math backend in the analysis: "
            "the fused CPU kernel has neither forward-mode AD nor a differentiable backward, nor a batched "
            "one (the recorded forward is the model's own)"
        )
    return dict(
        top_singular_values=frozen(sv),
        spectral_radius=frozen(rho),
        jacobian_trace=frozen(tr),
        accuracy={kk: frozen(v) for kk, v in acc.items()},
        methods=tuple(methods),
        estimate_seconds=estimate,
        _operators=tuple(ops),
    )


def _figures(op, dense: bool, opt: dict) -> dict:
    """Top singular values, spectral radius and ``tr J`` of one operator, per problem, with
    their error bounds (``singular_values``, ``spectral_radius``, ``jacobian_trace``: per
    problem) and how they were found (``method``)."""
    k, P = opt["k"], op.problems
    out = {"rho": np.full(P, np.nan), "tr": np.full(P, np.nan), "spectral_radius": np.zeros(P),
           "jacobian_trace": np.zeros(P)}
    if dense:
        J = op.dense()
        s = torch.linalg.svdvals(J.double()).cpu().numpy()
        out["sv"], out["singular_values"] = s[:, : min(k, s.shape[1])], np.zeros(P)
        if op.square:
            out["rho"] = torch.linalg.eigvals(J.double()).abs().amax(dim=1).cpu().numpy()
            out["tr"] = torch.diagonal(J, dim1=1, dim2=2).sum(-1).double().cpu().numpy()
        out["method"] = "dense"
        return out
    krylov = dict(steps=opt["steps"], tol=opt["tol"], seed=opt["seed"])
    if op.square:  # Arnoldi's J^T products ride along with those of block Lanczos
        top, r = singular_values_and_radius(op, k, **krylov)
    else:
        top = top_singular_values(op, k, **krylov)
    out["sv"], out["singular_values"] = top.values, top.accuracy.max(axis=1)
    method = top.method
    if op.square:
        out["rho"], out["spectral_radius"] = r.values[:, 0], r.accuracy[:, 0]
        out["tr"], out["jacobian_trace"] = hutchinson_trace(op, probes=opt["probes"], seed=opt["seed"])
        method += f", {r.method}, hutchinson ({opt['probes']} probes)"
    out["method"] = method
    return out


def estimate_cost(op: LayerOperator, L: int, dense: bool, opt: dict) -> float:
    """Seconds for the whole analysis from one timed ``J^T v``: ``n`` products per dense step;
    at most ``3 * steps`` (Lanczos: 2 per step, Arnoldi: 1) plus the probes per Krylov step."""
    V = torch.zeros(1, op.problems, op.n_out, dtype=op.y.dtype, device=op.y.device)
    op.rmatvec(V)  # the first product records the layer's graph: not typical
    t = time.perf_counter()
    op.rmatvec(V)
    per = time.perf_counter() - t
    n = min(op.n_in, op.n_out)
    products = n if dense else 3 * min(opt["steps"], n) + opt["probes"]
    return per * products * L
