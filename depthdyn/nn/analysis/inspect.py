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
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ...errors import ParameterError, ShapeError
from ...families import build
from ...numeric.masks import stability_mask
from ..blocks.base import DepthBlock
from .linearize import _frozen, _layer_recurrences
from .operators import (
    LayerOperator,
    _check_tol,
    _quiet,
    hutchinson_trace,
    ritz_values,
    spectral_radius,
    top_singular_values,
)
from .record import _first_tensor, record

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
    """A tangent on the last token moves no earlier output token (exactly): the layer is causal."""
    w = torch.zeros_like(x)
    w[:, -1] = torch.randn(w[:, -1].shape, generator=torch.Generator().manual_seed(1)).to(w)
    _, out = _quiet(torch.func.jvp)(fn, (x,), (w,))
    return bool((out[:, :-1] == 0).all())


def _position(module: nn.Module, state: torch.Tensor) -> torch.Tensor:
    """``x_l`` of a state: a depthdyn block reads it from its state slots; else the state."""
    return module.position(state) if isinstance(module, DepthBlock) else state


def _flat(t: torch.Tensor) -> torch.Tensor:
    return t.detach().reshape(t.shape[0], -1).to(torch.float64)


@dataclass(frozen=True, eq=False)
class LayerPlacement:
    """Per layer: the family, the ``lam`` values and the fraction strictly/marginally stable.

    ``lam`` (per layer, ``(N, r)`` complex) are the eigenvalues of the branch Jacobian (dense)
    or Ritz values of it (a sampled spectrum); ``inside[l]`` and ``marginal[l]`` are the
    fractions of those points strictly / at least marginally inside the family's region.
    """

    families: tuple[str, ...]
    lam: tuple[np.ndarray, ...]
    inside: np.ndarray
    marginal: np.ndarray

    def to_json(self) -> dict:
        return {
            "families": list(self.families),
            "inside": self.inside.tolist(),
            "marginal": self.marginal.tolist(),
        }


@dataclass(frozen=True, eq=False)
class Inspection:
    """The depth dynamics of one model at one batch of inputs (see :func:`inspect`).

    Attributes
    ----------
    names : tuple of str
        The residual layers, in forward order (``L`` of them).
    shapes : tuple of tuple
        Per-sample state shape at every recorded depth (``L + 1``).
    stages : ndarray
        ``(L,)`` stage index of each layer: a new stage starts where a layer changes the
        state's shape (resnet downsampling); within a stage the profile is comparable.
    norms : ndarray
        ``(L + 1, B)``: ``||x_l||`` per sample (the whole state of a sample, flattened).
    update_cosine : ndarray
        ``(L - 1, B)``: cosine of ``x_{l+1} - x_l`` and ``x_{l+2} - x_{l+1}`` (NaN across a
        change of shape).
    perturbation : ndarray
        ``(L, B)``: ``||x_{l+1} - x_l|| / ||x_l||`` (NaN where the shape changes).
    grad_norms : ndarray
        ``(L + 1,)``: ``||d loss / d x_l||`` over the batch.
    blocks : ndarray
        ``(N, 2)``: (input, token) of each analysed problem; token ``-1`` for a whole-state
        Jacobian. ``N = B`` unless causal sequence layers are analysed per token block.
    top_singular_values : ndarray
        ``(L, N, k)``, descending.
    spectral_radius : ndarray
        ``(L, N)`` (NaN for a layer that changes the state's shape).
    trace : ndarray
        ``(L, N)``: ``tr J`` (exact when dense, Hutchinson otherwise; NaN if not square).
    accuracy : dict
        ``"singular_values"``, ``"spectral_radius"``: ``(L,)`` the largest error bound of the
        layer's values (0: dense, rounding only); ``"trace"``: ``(L,)`` the largest standard
        error of the Hutchinson estimate; ``"recording"``: ``(L,)`` ``max |layer(x_l) - x_{l+1}|``
        of the layer function against the recorded output (0 for a deterministic layer).
    methods : tuple of str
        How each layer's values were found.
    causal : bool
    output : object
        What the model returned in the recorded forward.
    """

    names: tuple
    shapes: tuple
    stages: np.ndarray
    norms: np.ndarray
    update_cosine: np.ndarray
    perturbation: np.ndarray
    grad_norms: np.ndarray
    blocks: np.ndarray
    top_singular_values: np.ndarray
    spectral_radius: np.ndarray
    trace: np.ndarray
    accuracy: dict
    methods: tuple
    causal: bool
    dtype: str
    device: str
    output: object
    _operators: tuple = ()
    _modules: tuple = ()
    _states: tuple = ()

    @property
    def depth(self) -> int:
        return len(self.names)

    def operator(self, layer: int) -> LayerOperator:
        """The matrix-free Jacobian of layer ``layer`` (for further Krylov work)."""
        return self._operators[layer]

    def to_json(self) -> dict:
        def plain(v):
            if isinstance(v, np.ndarray):
                return np.where(np.isfinite(v), v, np.nan).astype(float).tolist()
            if isinstance(v, dict):
                return {k: plain(x) for k, x in v.items()}
            if isinstance(v, tuple):
                return [plain(x) for x in v]
            return v

        skip = {"output", "_operators", "_modules", "_states"}
        return {k: plain(getattr(self, k)) for k in self.__dataclass_fields__ if k not in skip}

    def __str__(self) -> str:
        lines = [
            f"Inspection: {self.depth} layers, {self.blocks.shape[0]} problems"
            f"{' (causal, per token block)' if self.causal else ''}, {self.dtype} on {self.device}",
            f"  {'layer':<24} {'shape':<16} {'||x||':>9} {'sigma_1':>9} {'rho':>9} {'ratio':>9}",
        ]
        for i, name in enumerate(self.names):
            lines.append(
                f"  {name:<24} {str(self.shapes[i + 1]):<16} {self.norms[i + 1].mean():9.4g} "
                f"{self.top_singular_values[i, :, 0].mean():9.4g} {np.nanmean(self.spectral_radius[i]):9.4g} "
                f"{np.nanmean(self.perturbation[i]):9.4g}"
            )
        return "\n".join(lines)

    def placement(self, *, steps: int = 40) -> LayerPlacement:
        """Each layer as a recurrence of its family, its ``lam`` values on the stability region.

        A depthdyn block gives its own recurrence (:meth:`~depthdyn.nn.DepthBlock.recurrence`)
        with ``lam`` the eigenvalues of its branch Jacobian at the branch input
        (:meth:`~depthdyn.nn.DepthBlock.branch_input`: ``H_pre X`` for hyper-connections);
        any other layer is taken as an identity-skip residual layer, ``x_{l+1} = (1 + lam) x_l``,
        with ``lam`` the eigenvalues of ``J - I`` (dense) or its Ritz values (``steps``).

        Raises
        ------
        ShapeError
            A layer changes the state's shape (no recurrence over depth there).
        """
        fams, lams, inside, marginal = [], [], [], []
        for i, (op, module, state) in enumerate(
            zip(self._operators, self._modules, self._states, strict=True)
        ):
            if not op.square:
                raise ShapeError(f"layer {self.names[i]} changes the state's shape: no recurrence to place")
            if isinstance(module, DepthBlock):
                recs, lam = _block_lam(module, state)
                fams.append(module.family)
            else:
                lam = _eigenvalues(op, steps) - 1.0
                recs = (build("residual"),)
                fams.append("residual")
            masks = [stability_mask(rec, lam=lam) for rec in recs]  # every channel, every lam
            ins = np.stack([m[0] for m in masks])
            bnd = np.stack([m[1] for m in masks])
            lams.append(_frozen(lam))
            inside.append(float(np.mean(ins)))
            marginal.append(float(np.mean(bnd)))
        return LayerPlacement(tuple(fams), tuple(lams), _frozen(inside), _frozen(marginal))


def _eigenvalues(op: LayerOperator, steps: int) -> np.ndarray:
    n = op.n_in
    if n <= steps:
        return torch.linalg.eigvals(op.dense().double()).cpu().numpy()
    return ritz_values(op, steps=steps)


def _block_lam(block: DepthBlock, state: torch.Tensor):
    """The block's recurrence(s) (one, or one per channel) and the eigenvalues of its branch
    Jacobian at the branch input (divided by the step where the family carries it as ``h``)."""
    recs = _layer_recurrences(block)
    if not recs:
        raise ParameterError(f"{type(block).__name__} gives no recurrence with a free lam")
    u = block.branch_input(state.detach())
    scale = block.step if "h" in block.coefficients() else 1.0
    J = torch.func.vmap(torch.func.jacrev(lambda t: block.branch(t[None])[0]))(u)
    J = J.detach().reshape(u.shape[0], u[0].numel(), -1) / scale
    return recs, torch.linalg.eigvals(J.double()).cpu().numpy()


def inspect(
    model: nn.Module,
    inputs,
    layers=None,
    *,
    k: int = 5,
    tokens=8,
    causal: bool | None = None,
    steps: int = 100,
    tol: float = 1e-3,
    dense_max: int = 64,
    probes: int = 16,
    loss_fn: Callable | None = None,
    dtype: torch.dtype | None = None,
    seed: int = 0,
) -> Inspection:
    """Depth profile and per-layer Jacobian spectra of ``model`` at ``inputs``.

    Parameters
    ----------
    model : torch.nn.Module
        Any model; it is run once, as it is (``eval()`` it first if it has dropout).
    inputs : torch.Tensor, tuple or mapping
        ``model(inputs)``, ``model(*inputs)`` or ``model(**inputs)``; the first axis of the
        residual stream is the batch of inputs. Tensors are moved to the model's device.
    layers : None, str, list of str, ModuleList or list of modules
        The residual layers (see :func:`~depthdyn.nn.analysis.record.find_layers`).
    k : int
        Number of top singular values per layer and problem.
    tokens : int or list of int
        For causal sequence layers (state ``(B, T, d)``): how many token blocks to sample
        (evenly spaced, last token included) or which.
    causal : bool, optional
        ``None`` decides by a forward-mode check on the first layer; ``True`` on a layer
        that is not causal is an error; ``False`` analyses whole-sequence Jacobians.
    steps : int
        At most this many Lanczos / Arnoldi steps where the problem is larger than ``dense_max``
        (each Lanczos step is one ``jvp`` and one ``vjp`` per problem, each Arnoldi step one
        ``vjp``); ``steps >= n`` gives the exact values.
    tol : float
        Stop the Lanczos (Arnoldi) iteration of a layer once the residual bound of each of the
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
        by default the model's own dtype. The accuracy of every figure is in ``accuracy``.
    seed : int

    Returns
    -------
    Inspection

    Raises
    ------
    ParameterError
        No residual layers found, a layer not called, a KV cache in the call, bad options.
    ShapeError
        A layer's state is not a floating tensor with the batch first.
    """
    for name, v, lo in (("k", k, 1), ("steps", steps, 1), ("dense_max", dense_max, 0), ("probes", probes, 2)):
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise ParameterError(f"{name} must be an integer >= {lo}, got {v!r}")
    _check_tol(tol)
    if not isinstance(model, nn.Module):
        raise ParameterError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if dtype is not None:
        if dtype not in (torch.float32, torch.float64):
            raise ParameterError(f"dtype must be torch.float32 or torch.float64, got {dtype!r}")
        if _where(model)[1] != dtype:
            model = copy.deepcopy(model).to(dtype)
    device, mdtype = _where(model)
    rec = record(model, _to(inputs, device, dtype), layers)
    calls = rec.calls
    states = rec.states
    B = states[0].shape[0]
    if any(s.shape[0] != B for s in states):
        raise ShapeError("every layer's state must keep the batch of inputs on its first axis")
    pos = [_position(calls[0].module, states[0])] + [_position(c.module, c.output) for c in calls]
    shapes = tuple(tuple(p.shape[1:]) for p in pos)
    stages = np.cumsum([0] + [int(shapes[i + 1] != shapes[i]) for i in range(1, len(calls))])

    norms = np.stack([_flat(p).norm(dim=1).cpu().numpy() for p in pos])
    upd = [
        (_flat(pos[i + 1]) - _flat(pos[i])) if shapes[i] == shapes[i + 1] else None for i in range(len(calls))
    ]
    perturbation = np.stack(
        [
            (u.norm(dim=1) / _flat(pos[i]).norm(dim=1)).cpu().numpy() if u is not None else np.full(B, np.nan)
            for i, u in enumerate(upd)
        ]
    )
    cos = [
        torch.nn.functional.cosine_similarity(a, b, dim=1, eps=1e-300).cpu().numpy()
        if a is not None and b is not None and a.shape == b.shape
        else np.full(B, np.nan)
        for a, b in zip(upd[:-1], upd[1:], strict=True)
    ]
    update_cosine = np.stack(cos) if cos else np.zeros((0, B))

    out = _first_tensor(rec.output) if not isinstance(rec.output, torch.Tensor) else rec.output
    if loss_fn is None:
        g = torch.randn(out.shape, generator=torch.Generator().manual_seed(seed), dtype=out.dtype).to(
            out.device
        )
        loss = (out * g).sum()
    else:
        if not callable(loss_fn):
            raise ParameterError(f"loss_fn must be callable, got {type(loss_fn).__name__}")
        loss = loss_fn(rec.output)
        if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
            raise ShapeError("loss_fn must return a scalar tensor")
    grads = torch.autograd.grad(loss.reshape(()), list(states), allow_unused=True)
    grad_norms = np.array([0.0 if gr is None else float(gr.detach().double().norm()) for gr in grads])

    first = calls[0]
    x0 = first.state.detach()
    seq = x0.dim() == 3 and x0.shape[1] > 1 and all(c.output.shape == x0.shape for c in calls)
    fn0 = first.function()
    if causal is None:
        causal = seq and _is_causal(fn0, x0)
    elif causal:
        if not seq or not _is_causal(fn0, x0):
            raise ParameterError(
                f"causal=True, but layer {first.name} is not causal over axis 1 of its (B, T, d) state "
                f"{tuple(x0.shape)}: a later token moves earlier outputs"
            )
    picked = _token_sample(x0.shape[1], tokens) if causal else None
    if causal:
        blocks = np.array([(b, t) for t in picked for b in range(B)])
    else:
        blocks = np.array([(b, -1) for b in range(B)])
    N = blocks.shape[0]

    sv, rho, tr = (
        np.full((len(calls), N, k), np.nan),
        np.full((len(calls), N), np.nan),
        np.full((len(calls), N), np.nan),
    )
    acc = {
        name: np.zeros(len(calls)) for name in ("singular_values", "spectral_radius", "trace", "recording")
    }
    ops, methods = [], []
    for i, call in enumerate(calls):
        op = LayerOperator(call.function(), call.state, tokens=picked)
        ops.append(op)
        acc["recording"][i] = float((op.y - call.output.detach()).abs().max())
        if max(op.n_in, op.n_out) <= dense_max:
            J = op.dense()
            s = torch.linalg.svdvals(J).cpu().numpy()
            kk = min(k, s.shape[1])
            sv[i, :, :kk] = s[:, :kk]
            if op.square:
                rho[i] = torch.linalg.eigvals(J).abs().amax(dim=1).cpu().numpy()
                tr[i] = torch.diagonal(J, dim1=1, dim2=2).sum(-1).double().cpu().numpy()
            methods.append("dense")
            continue
        top = top_singular_values(op, k, steps=steps, tol=tol, seed=seed)
        sv[i, :, : top.values.shape[1]] = top.values
        acc["singular_values"][i] = top.accuracy.max()
        method = top.method
        if op.square:
            r = spectral_radius(op, steps=steps, tol=tol, seed=seed)
            rho[i] = r.values[:, 0]
            acc["spectral_radius"][i] = r.accuracy.max()
            tr[i], err = hutchinson_trace(op, probes=probes, seed=seed)
            acc["trace"][i] = err.max()
            method += f", {r.method}, hutchinson ({probes} probes)"
        methods.append(method)
    return Inspection(
        names=rec.names,
        shapes=shapes,
        stages=_frozen(stages),
        norms=_frozen(norms),
        update_cosine=_frozen(update_cosine),
        perturbation=_frozen(perturbation),
        grad_norms=_frozen(grad_norms),
        blocks=_frozen(blocks),
        top_singular_values=_frozen(sv),
        spectral_radius=_frozen(rho),
        trace=_frozen(tr),
        accuracy={kk: _frozen(v) for kk, v in acc.items()},
        methods=tuple(methods),
        causal=bool(causal),
        dtype=str(mdtype).replace("torch.", ""),
        device=str(device),
        output=rec.output,
        _operators=tuple(ops),
        _modules=tuple(c.module for c in calls),
        _states=tuple(c.state.detach() for c in calls),
    )
