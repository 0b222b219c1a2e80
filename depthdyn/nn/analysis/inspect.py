"""Depth dynamics of any torch model: :func:`inspect`.

One call takes a user's module, its inputs and its residual layers, records the residual
stream with hooks during the model's own forward (:mod:`.record`), and returns

* the depth profile: state norms per recorded depth, cosine of successive updates, the
  perturbation ratio ``||x_{l+1} - x_l|| / ||x_l||`` and per-depth gradient norms;
* per layer and input, the top singular values and the spectral radius of the Jacobian
  ``d x_{l+1} / d x_l`` (:mod:`.operators`: dense where small, Lanczos / Arnoldi to a tolerance otherwise;
  for causal sequence layers per sampled token block), a Hutchinson trace, and the accuracy
  of each figure;
* :meth:`Inspection.placement`: each layer as a depthdyn :class:`~depthdyn.Recurrence`
  with its ``lam`` values placed on the family's stability region.
"""

from __future__ import annotations

import copy
import sys
import time
from collections.abc import Callable, Mapping

import numpy as np
import torch
from torch import nn

from ...errors import ParameterError, ShapeError
from ..blocks.base import DepthBlock
from .checks import (
    analysis_dtype,
    check_inputs,
    check_model,
    check_states,
    grad_on,
    grouping,
    row_coupling,
)
from .inspection import Inspection
from .linearize import _frozen
from .operators import (
    LayerOperator,
    _check_tol,
    _quiet,
    hutchinson_trace,
    spectral_radius,
    top_singular_values,
)
from .placement import LayerPlacement  # noqa: F401 (public here since the first release)
from .record import _first_tensor, find_layers, record
from .steps import SPLITS, capture_mids, layer_steps, momentum_layout, split_steps

__all__ = ["Inspection", "LayerPlacement", "inspect"]


def _to(inputs, device, dtype):
    """Tensors of ``inputs`` on ``device``; floating ones also cast to ``dtype`` (if given)."""
    if isinstance(inputs, torch.Tensor):
        cast = dtype if dtype is not None and inputs.is_floating_point() else inputs.dtype
        return inputs.to(device=device, dtype=cast)
    if isinstance(inputs, Mapping):
        return type(inputs)({k: _to(v, device, dtype) for k, v in inputs.items()})
    if isinstance(inputs, tuple):
        return tuple(_to(v, device, dtype) for v in inputs)
    return inputs


def _where(model: nn.Module) -> tuple[torch.device, torch.dtype]:
    for t in (*model.parameters(), *model.buffers()):
        if t.is_floating_point():
            return t.device, t.dtype
    return torch.device("cpu"), torch.get_default_dtype()


def _token_sample(T: int, tokens) -> tuple[int, ...]:
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


def _is_causal(fn, x: torch.Tensor) -> bool:
    """No earlier output token moves with the last input token (exactly): the layer is causal.

    Reverse mode (a cotangent on every output token but the last must leave no gradient on
    the last input token): fused attention kernels have no forward mode."""
    y, vjp = _quiet(torch.func.vjp)(fn, x)
    v = torch.zeros_like(y)
    v[:, :-1] = torch.randn(v[:, :-1].shape, generator=torch.Generator().manual_seed(1)).to(v)
    return bool((vjp(v)[0][:, -1] == 0).all())


def _position(module: nn.Module, state: torch.Tensor) -> torch.Tensor:
    """``x_l`` of a state: a depthdyn block reads it from its state slots; else the state."""
    return module.position(state) if isinstance(module, DepthBlock) else state


def _flat(t: torch.Tensor) -> torch.Tensor:
    return t.detach().reshape(t.shape[0], -1).to(torch.float64)


def _splits(split) -> Mapping | None:
    if split is False or split is None:
        return None
    if split is True:
        return SPLITS
    if isinstance(split, Mapping):
        return {**SPLITS, **split}
    raise ParameterError(
        f"split must be True, False or a mapping of layer class names to Split, got {split!r}"
    )


def _progress(enabled: bool, total: int):
    """A tqdm bar on stderr (a plain counter where tqdm is not installed), or nothing."""
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is in the progress extra
        return None
    return tqdm(total=total, desc="inspect", unit="step", leave=False)


def inspect(
    model: nn.Module,
    inputs,
    layers=None,
    *,
    k: int = 5,
    tokens=8,
    causal: bool | None = None,
    steps: int = 200,
    tol: float = 1e-3,
    dense_max: int = 64,
    probes: int = 16,
    loss_fn: Callable | None = None,
    dtype: torch.dtype | None = None,
    streams=None,
    split=False,
    progress: bool = False,
    seed: int = 0,
) -> Inspection:
    """Depth profile and per-step Jacobian spectra of ``model`` at ``inputs``.

    Parameters
    ----------
    model : torch.nn.Module
        Any model, in ``eval()`` mode if it has BatchNorm or dropout; it is run once, as it is.
    inputs : torch.Tensor, tuple or mapping
        ``model(inputs)``, ``model(*inputs)`` or ``model(**inputs)``; the first axis of the
        residual stream is the batch of inputs. Tensors are moved to the model's device.
    layers : None, str, list of str, ModuleList or list of modules
        The residual layers (see :func:`~depthdyn.nn.analysis.record.find_layers`).
    k : int
        Number of top singular values per step and problem.
    tokens : int or list of int
        For causal sequence layers (state ``(B, T, d)``): how many token blocks to sample
        (evenly spaced, last token included) or which.
    causal : bool, optional
        ``None`` decides by a reverse-mode check on the first step; ``True`` on a step that
        is not causal is an error; ``False`` analyses whole-sequence Jacobians.
    steps : int
        At most this many Lanczos / Arnoldi steps where the problem is larger than ``dense_max``
        (each Lanczos step is one ``J w`` and one ``J^T v`` per problem, each Arnoldi step one
        ``J^T v``); ``steps >= n`` gives the exact values.
    tol : float
        Stop the Lanczos (Arnoldi) iteration of a step once the residual bound of each of the
        top ``k`` singular values (of the dominant Ritz value) of every problem is at most
        ``tol`` times the value; ``0`` always takes ``steps`` steps. The bound reached is in
        ``accuracy``; the values themselves are usually far closer (see docs/inspect.md).
    dense_max : int
        Dense Jacobians (one ``vjp`` per row, chunked) for problems up to this size.
    probes : int
        Hutchinson probes for the trace of large Jacobians.
    loss_fn : callable, optional
        ``loss_fn(output) -> scalar`` for the gradient norms; default ``<g, out>`` with a
        fixed standard-normal ``g`` (seed ``seed``), a probe of gradient transport.
    dtype : torch.dtype, optional
        Analyse a copy of the model in this dtype (float32 for speed, float64 for accuracy);
        by default the model's own dtype, float32 for a float16/bfloat16 model (in ``notes``).
    streams : None, int or "batch"
        Batch rows that form one state. ``None``: probe every step for rows that move each
        other (one reverse pass per row) and take each coupled group as one state (said in
        ``notes``); an int ``n``: consecutive groups of ``n`` rows (hyper-connection streams
        folded into the batch as ``(b s)``), checked by the probe; ``"batch"``: all rows.
    split : bool or mapping
        ``True``: attention and MLP of each layer as two depth steps (layer classes in
        :data:`~depthdyn.nn.analysis.steps.SPLITS`; a mapping adds others).
    progress : bool
        A cost estimate (from one timed product) and a progress bar (tqdm) on stderr.
    seed : int

    Returns
    -------
    Inspection

    Raises
    ------
    ParameterError
        No residual layers found, a layer not called, a KV cache in the call, bad options;
        :class:`~depthdyn.nn.analysis.checks.ModelSetupError` (meta device, BatchNorm or
        dropout in training mode, a step that does not reproduce the recording),
        :class:`~depthdyn.nn.analysis.checks.NonFiniteError` (NaN/inf inputs or states),
        :class:`~depthdyn.nn.analysis.checks.BatchCouplingError` (rows coupled unevenly).
    ShapeError
        An empty batch; a layer's state is not a floating tensor with the batch first.
    """
    for name, v, lo in (("k", k, 1), ("steps", steps, 1), ("dense_max", dense_max, 0), ("probes", probes, 2)):
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise ParameterError(f"{name} must be an integer >= {lo}, got {v!r}")
    _check_tol(tol)
    if not isinstance(model, nn.Module):
        raise ParameterError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    check_model(model)
    check_inputs(inputs)
    opts = dict(k=k, tokens=tokens, causal=causal, steps=steps, tol=tol, dense_max=dense_max, probes=probes,
                loss_fn=loss_fn, streams=streams, split=_splits(split), progress=progress, seed=seed)
    with grad_on():  # also under a caller's no_grad / inference_mode
        return _inspect(model, inputs, layers, dtype, **opts)


def _inspect(model, inputs, layers, dtype, *, k, tokens, causal, steps, tol, dense_max, probes, loss_fn,
             streams, split, progress, seed) -> Inspection:
    notes = []
    adtype, note = analysis_dtype(_where(model)[1], dtype)
    if note:
        notes.append(note)
    if adtype is not None and _where(model)[1] != adtype:
        model = copy.deepcopy(model).to(adtype)
    device, mdtype = _where(model)
    mom = momentum_layout(model) if layers is None else None
    found = find_layers(model, mom[1] if mom else layers)
    if mom:
        notes.append(
            f"momentumnet MomentumNet (gamma {mom[0]:g}): the steps are its branch functions f of "
            "v' = gamma v + (1 - gamma) f(x), x' = x + v'; their Jacobians are the lam of the momentum "
            "family with m = gamma, eta = 1 - gamma (the default of placement())"
        )
        if split:
            raise ParameterError("split=True has no attention/MLP steps to split in a MomentumNet")
    mids, handles = capture_mids(found, split) if split else ({}, [])
    try:
        rec = record(model, _to(inputs, device, adtype), found=found)
    finally:
        for h in handles:
            h.remove()
    calls = rec.calls
    B = calls[0].state.shape[0]
    if any(c.state.shape[0] != B or c.output.shape[0] != B for c in calls):
        raise ShapeError("every layer's state must keep the batch of inputs on its first axis")
    raw = split_steps(calls, mids, split) if split else layer_steps(calls, "branch" if mom else "layer")
    raw_states = [raw[0].state] + [s.output for s in raw]
    check_states([s.name for s in raw], raw_states)

    # rows that move each other are one state (hyper-connection streams folded into the batch)
    mask, where = np.eye(B, dtype=bool), None
    for st in raw:
        m = row_coupling(st.function, st.state.detach(), seed=seed)
        if where is None and (m & ~np.eye(B, dtype=bool)).any():
            where = f"step {st.name}"
        mask |= m
    x0 = raw[0].state
    seq = x0.dim() == 3 and x0.shape[1] > 1 and all(s.output.shape == x0.shape for s in raw)
    grp = grouping(mask, streams, sequence=seq, where=where or "the model")
    if not grp.trivial:
        notes.append(
            f"batch rows move each other ({where or 'streams given'}): each group of {grp.streams} rows "
            f"(the first: rows {grp.rows[0].tolist()}) analysed as one state"
        )
    gsteps = [
        type(s)(s.name, s.module, grp.group(s.state.detach()), grp.group(s.output.detach()),
                grp.wrap(s.function, tuple(s.state.shape[1:]), tuple(s.output.shape[1:])), s.kind, s.layer,
                s.local if grp.trivial else None)
        for s in raw
    ]
    G = gsteps[0].state.shape[0]
    if grp.trivial:
        pos = [_position(raw[0].module, raw[0].state)] + [_position(s.module, s.output) for s in raw]
    else:
        pos = [gsteps[0].state] + [s.output for s in gsteps]
    shapes = tuple(tuple(p.shape[1:]) for p in pos)
    stages = np.cumsum([0] + [int(shapes[i + 1] != shapes[i]) for i in range(1, len(raw))])
    norms = np.stack([_flat(p).norm(dim=1).cpu().numpy() for p in pos])
    upd = [
        (_flat(pos[i + 1]) - _flat(pos[i])) if shapes[i] == shapes[i + 1] else None for i in range(len(raw))
    ]
    perturbation = np.stack(
        [
            (u.norm(dim=1) / _flat(pos[i]).norm(dim=1)).cpu().numpy() if u is not None else np.full(G, np.nan)
            for i, u in enumerate(upd)
        ]
    )
    cos = [
        torch.nn.functional.cosine_similarity(a, b, dim=1, eps=1e-300).cpu().numpy()
        if a is not None and b is not None and a.shape == b.shape
        else np.full(G, np.nan)
        for a, b in zip(upd[:-1], upd[1:], strict=True)
    ]
    update_cosine = np.stack(cos) if cos else np.zeros((0, G))
    grad_norms = _grad_norms(rec.output, raw_states, loss_fn, seed, notes)

    first = gsteps[0]
    fn0, xg = first.function, first.state
    seq_g = xg.dim() == 3 and xg.shape[1] > 1 and all(s.output.shape == xg.shape for s in gsteps)
    if causal is None:
        causal = seq_g and _is_causal(fn0, xg)
    elif causal and (not seq_g or not _is_causal(fn0, xg)):
        raise ParameterError(
            f"causal=True, but step {first.name} is not causal over axis 1 of its (B, T, d) state "
            f"{tuple(xg.shape)}: a later token moves earlier outputs"
        )
    picked = _token_sample(xg.shape[1], tokens) if causal else None
    pairs = [(b, t) for t in picked for b in range(G)] if causal else [(b, -1) for b in range(G)]
    blocks = np.array(pairs)
    fields = {"momentum": mom[0] if mom else None}
    return _spectra(gsteps, rec, blocks, picked, notes, dict(
        k=k, steps=steps, tol=tol, dense_max=dense_max, probes=probes, seed=seed, progress=progress),
        names=tuple(s.name for s in gsteps), shapes=shapes, stages=stages, streams=grp.streams, norms=norms,
        update_cosine=update_cosine, perturbation=perturbation, grad_norms=grad_norms,
        causal=bool(causal), dtype=str(mdtype).replace("torch.", ""), device=str(device), **fields)


def _grad_norms(output, states, loss_fn, seed, notes) -> np.ndarray:
    out = _first_tensor(output) if not isinstance(output, torch.Tensor) else output
    if loss_fn is None:
        gen = torch.Generator().manual_seed(seed)
        g = torch.randn(out.shape, generator=gen, dtype=out.dtype).to(out.device)
        loss = (out * g).sum()
    else:
        if not callable(loss_fn):
            raise ParameterError(f"loss_fn must be callable, got {type(loss_fn).__name__}")
        loss = loss_fn(output)
        if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
            raise ShapeError("loss_fn must return a scalar tensor")
    need = [s for s in states if s.requires_grad]
    try:
        grads = iter(torch.autograd.grad(loss.reshape(()), need, allow_unused=True) if need else ())
    except RuntimeError as exc:
        if "inplace operation" not in str(exc):
            raise
        # the model overwrote a tensor its backward needs (x += f(x) after f saved x): its own
        # training would fail the same way; the Jacobians (recomputed per layer) are unaffected
        notes.append(
            "gradient norms unavailable (NaN): the model updates a tensor in place that its backward "
            "needs (x += f(x)); write x = x + f(x) to get them"
        )
        return np.full(len(states), np.nan)
    out = [next(grads) if s.requires_grad else None for s in states]
    # NaN where no gradient reaches a state (a layer run without a graph, e.g. inside a custom
    # autograd.Function): 0 would claim the gradient vanishes there
    return np.array([np.nan if gr is None else float(gr.detach().double().norm()) for gr in out])


def _spectra(gsteps, rec, blocks, picked, notes, opt, **fields) -> Inspection:
    L, N, k = len(gsteps), blocks.shape[0], opt["k"]
    sv, rho, tr = np.full((L, N, k), np.nan), np.full((L, N), np.nan), np.full((L, N), np.nan)
    acc = {name: np.zeros(L) for name in ("singular_values", "spectral_radius", "trace", "recording")}
    ops, methods, estimate = [], [], float("nan")
    bar = _progress(opt["progress"], L)
    for i, st in enumerate(gsteps):
        op = LayerOperator(st.function, st.state, tokens=picked, local=st.local)
        ops.append(op)
        err = float((op.y - st.output).abs().max())
        acc["recording"][i] = err
        eps = torch.finfo(op.y.dtype).eps
        if err > eps**0.5 * (1.0 + float(st.output.abs().max())):
            from .checks import ModelSetupError

            raise ModelSetupError(
                f"step {st.name} does not reproduce the model's own output (max difference {err:.3g}): the "
                "layer is not a deterministic function of its state (random ops, training mode), or its "
                "split into attention and MLP does not fit this layer class (pass split=False)"
            )
        dense = max(op.n_in, op.n_out) <= opt["dense_max"]
        if i == 0:
            estimate = _estimate(op, L, dense, opt)
            if bar is not None:
                bar.write(
                    f"inspect: {L} steps x {N} problems of size {op.n_in}: at most about {estimate:.0f} s "
                    "(the iterations usually stop earlier)",
                    file=sys.stderr,
                )
        if dense:
            J = op.dense()
            s = torch.linalg.svdvals(J.double()).cpu().numpy()
            kk = min(k, s.shape[1])
            sv[i, :, :kk] = s[:, :kk]
            if op.square:
                rho[i] = torch.linalg.eigvals(J.double()).abs().amax(dim=1).cpu().numpy()
                tr[i] = torch.diagonal(J, dim1=1, dim2=2).sum(-1).double().cpu().numpy()
            methods.append("dense")
        else:
            top = top_singular_values(op, k, steps=opt["steps"], tol=opt["tol"], seed=opt["seed"])
            sv[i, :, : top.values.shape[1]] = top.values
            acc["singular_values"][i] = top.accuracy.max()
            method = top.method
            if op.square:
                r = spectral_radius(op, steps=opt["steps"], tol=opt["tol"], seed=opt["seed"])
                rho[i] = r.values[:, 0]
                acc["spectral_radius"][i] = r.accuracy.max()
                tr[i], terr = hutchinson_trace(op, probes=opt["probes"], seed=opt["seed"])
                acc["trace"][i] = terr.max()
                method += f", {r.method}, hutchinson ({opt['probes']} probes)"
            methods.append(method)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    if any(op.token_local or "math" in (op.forward_mode or "") for op in ops):
        notes.append(
            "scaled_dot_product_attention (where a step has it) ran on its math backend in the analysis: "
            "the fused CPU kernel has neither forward-mode AD nor a differentiable backward, nor a batched "
            "one (the recorded forward is the model's own)"
        )
    return Inspection(
        kinds=tuple(s.kind for s in gsteps),
        layers=_frozen([s.layer for s in gsteps]),
        blocks=_frozen(blocks),
        top_singular_values=_frozen(sv),
        spectral_radius=_frozen(rho),
        trace=_frozen(tr),
        accuracy={kk: _frozen(v) for kk, v in acc.items()},
        methods=tuple(methods),
        notes=tuple(notes),
        estimate_seconds=estimate,
        output=rec.output,
        _operators=tuple(ops),
        _modules=tuple(s.module for s in gsteps),
        _states=tuple(s.state for s in gsteps),
        **{kk: (_frozen(v) if isinstance(v, np.ndarray) else v) for kk, v in fields.items()},
    )


def _estimate(op: LayerOperator, L: int, dense: bool, opt: dict) -> float:
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
