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

import contextlib
import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ...errors import ParameterError, ShapeError
from ...records import Record
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
from .krylov import check_tol, top_singular_values
from .offload import check_dispatched_dtype, dispatched, loaded, offloaded_names, weights_by_reference
from .operators import LayerOperator
from .placement import Placement, place
from .product import ProductOperator
from .profile import DepthProfile, depth_profile, gradient_norms
from .readonly import frozen
from .record import find_layers, record
from .steps import SPLITS, capture_mids, layer_steps, momentum_layout, split_steps
from .stepspectra import is_causal, step_spectra, token_sample

__all__ = ["Inspection", "inspect"]


@dataclass(frozen=True, eq=False)
class Inspection(Record):
    """The depth dynamics of one model at one batch of inputs (see :func:`inspect`).

    Attributes
    ----------
    names : tuple of str
        The depth steps, in forward order (``L`` of them): the residual layers, or with
        ``split=True`` each layer's attention step (``<layer>.attention``) and MLP step
        (``<layer>.mlp``).
    kinds : tuple of str
        ``"layer"``, or ``"attention"`` / ``"mlp"`` per step.
    layers : ndarray
        ``(L,)`` index of the model layer each step belongs to.
    shapes : tuple of tuple
        Per-problem state shape at every recorded depth (``L + 1``).
    stages : ndarray
        ``(L,)`` stage index of each step: a new stage starts where a step changes the
        state's shape (resnet downsampling); within a stage the profile is comparable.
    streams : int
        Batch rows taken together as one state (1: every row its own input; ``n`` where the
        model couples its rows, e.g. hyper-connection streams folded into the batch).
    norms : ndarray
        ``(L + 1, B)``: ``||x_l||`` per state (``B`` states: rows / ``streams``).
    update_cosine : ndarray
        ``(L - 1, B)``: cosine of ``x_{l+1} - x_l`` and ``x_{l+2} - x_{l+1}`` (NaN across a
        change of shape).
    perturbation : ndarray
        ``(L, B)``: ``||x_{l+1} - x_l|| / ||x_l||`` (NaN where the shape changes).
    grad_norms : ndarray
        ``(L + 1,)``: ``||d loss / d x_l||`` over the batch.
    blocks : ndarray
        ``(N, 2)``: (state, token) of each analysed problem; token ``-1`` for a whole-state
        Jacobian. ``N = B`` unless causal sequence layers are analysed per token block.
    top_singular_values : ndarray
        ``(L, N, k)``, descending.
    spectral_radius : ndarray
        ``(L, N)`` (NaN for a step that changes the state's shape).
    jacobian_trace : ndarray
        ``(L, N)``: ``tr J`` (exact when dense, Hutchinson otherwise; NaN if not square).
    accuracy : dict
        ``"singular_values"``, ``"spectral_radius"``: ``(L,)`` the largest error bound of the
        step's values (0: dense, rounding only); ``"jacobian_trace"``: ``(L,)`` the largest standard
        error of the Hutchinson estimate; ``"recording"``: ``(L,)`` ``max |step(x_l) - x_{l+1}|``
        of the step function against the recorded output (0 for a deterministic layer).
    methods : tuple of str
        How each step's values were found (and how ``J w`` was formed).
    causal : bool
    dtype : str
        The dtype the analysis ran in (the model's, or that of its analysis copy).
    device : str
        Where it ran: the model's device, or for a model dispatched by accelerate its devices,
        e.g. ``"0, 1, cpu, disk (device_map)"``.
    notes : tuple of str
        What was done differently from the model as given (a float32 copy of a float16 model,
        coupled rows grouped, attention on its math backend).
    estimate_seconds : float
        The cost estimate made before the Krylov work: one timed product times the most products
        the analysis may take (the iterations usually stop earlier, at ``tol``).
    momentum : float or None
        ``gamma`` of a momentumnet ``MomentumNet``: the steps (``kind`` ``"branch"``) are then
        its branch functions ``f``, not residual steps.
    output : object
        What the model returned in the recorded forward.
    """

    names: tuple
    kinds: tuple
    layers: np.ndarray
    shapes: tuple
    stages: np.ndarray
    streams: int
    norms: np.ndarray
    update_cosine: np.ndarray
    perturbation: np.ndarray
    grad_norms: np.ndarray
    blocks: np.ndarray
    top_singular_values: np.ndarray
    spectral_radius: np.ndarray
    jacobian_trace: np.ndarray
    accuracy: dict
    methods: tuple
    causal: bool
    dtype: str
    device: str
    notes: tuple
    estimate_seconds: float
    output: object
    momentum: float | None = None
    _operators: tuple = ()
    _modules: tuple = ()
    _states: tuple = ()

    @property
    def depth(self) -> int:
        return len(self.names)

    @property
    def profile(self) -> DepthProfile:
        """The depth profile (norms, update cosines, perturbation ratios, gradient norms)."""
        return DepthProfile(self.norms, self.update_cosine, self.perturbation, self.grad_norms)

    @property
    def period(self) -> tuple[str, ...]:
        """The kinds of one layer's steps: ``("layer",)`` or ``("attention", "mlp")``."""
        first = self.layers[0]
        return tuple(k for k, layer in zip(self.kinds, self.layers, strict=True) if layer == first)

    def operator(self, step: int) -> LayerOperator:
        """The matrix-free Jacobian of step ``step`` (for further Krylov work)."""
        return self._operators[step]

    def layer_operator(self, layer: int) -> ProductOperator:
        """The Jacobian of model layer ``layer``: the product of its steps' operators."""
        ops = [op for op, i in zip(self._operators, self.layers, strict=True) if i == layer]
        if not ops:
            raise ParameterError(f"no layer {layer}: the model has {int(self.layers[-1]) + 1}")
        return ProductOperator(ops)

    def step_matrices(self, problem: int = 0, *, limit: int = 4096) -> np.ndarray:
        """``(L, n, n)`` float64: every step's Jacobian of one problem, dense (small states only).

        The model's steps as a depth-varying linear recurrence ``x_{l+1} = A_l x_l``; with
        ``split=True`` the steps alternate attention, MLP (:attr:`period`): the matrices to
        hand to a depth-product or periodic-pattern analysis."""
        if not 0 <= problem < self.blocks.shape[0]:
            raise ParameterError(f"problem must be in 0..{self.blocks.shape[0] - 1}, got {problem}")
        ops = self._operators
        if any(not op.square or op.n_in != ops[0].n_in for op in ops):
            raise ShapeError("the steps change the state's size: no single recurrence of matrices")
        if ops[0].n_in > limit:
            raise ParameterError(
                f"states of {ops[0].n_in} numbers exceed limit={limit}: use operator(l) instead"
            )
        return np.stack([op.dense()[problem].double().cpu().numpy() for op in ops])

    def growth(self, *, steps: int = 100, tol: float = 1e-6) -> dict:
        """End-to-end growth beside the product of the step gains, per problem.

        ``"end_to_end"``: ``sigma_1`` of ``J_L ... J_1`` (Lanczos on the product);
        ``"product_of_steps"``: ``prod_l sigma_1(J_l)`` (its upper bound); ``"bound"``: the
        Lanczos residual bound of ``end_to_end``."""
        ops = self._operators
        if any(not op.square or op.n_in != ops[0].n_in for op in ops):
            raise ShapeError("the steps change the state's size: no end-to-end product of one space")
        top = top_singular_values(ProductOperator(ops), 1, steps=steps, tol=tol)
        return {
            "end_to_end": top.values[:, 0],
            "product_of_steps": np.prod(self.top_singular_values[:, :, 0], axis=0),
            "bound": top.accuracy[:, 0],
        }

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

    def _latex(self) -> str:
        top = float(np.nanmax(self.top_singular_values[:, :, 0]))
        return rf"\text{{Inspection}}: L = {self.depth},\ \max_\ell \sigma_1(J_\ell) = {top:.4g}"

    def _text(self) -> str:
        lines = [
            f"Inspection: {self.depth} steps, {self.blocks.shape[0]} problems"
            f"{' (causal, per token block)' if self.causal else ''}, {self.dtype} on {self.device}",
            f"  {'step':<24} {'shape':<16} {'||x||':>9} {'sigma_1':>9} {'rho':>9} {'ratio':>9}",
        ]
        for i, name in enumerate(self.names):
            lines.append(
                f"  {name:<24} {str(self.shapes[i + 1]):<16} {self.norms[i + 1].mean():9.4g} "
                f"{self.top_singular_values[i, :, 0].mean():9.4g} {np.nanmean(self.spectral_radius[i]):9.4g} "
                f"{np.nanmean(self.perturbation[i]):9.4g}"
            )
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    @property
    def operators(self) -> tuple[LayerOperator, ...]:
        """The matrix-free Jacobian of every step (:meth:`operator`)."""
        return self._operators

    @property
    def step_modules(self) -> tuple:
        """The module of every step (the layer it belongs to)."""
        return self._modules

    @property
    def step_states(self) -> tuple:
        """The recorded input state of every step (batch rows grouped into states)."""
        return self._states

    def placement(self, family: str | None = None, *, steps: int = 40, **params) -> Placement:
        """Each step's ``lam`` values on the stability region of a family: :func:`~.placement.place`."""
        return place(self, family, steps=steps, **params)


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
    """Device and dtype of the model's first floating tensor that holds values (offloaded
    weights wait on the meta device until their module runs)."""
    floating = [t for t in (*model.parameters(), *model.buffers()) if t.is_floating_point()]
    for t in floating:
        if t.device.type != "meta":
            return t.device, t.dtype
    return torch.device("cpu"), floating[0].dtype if floating else torch.get_default_dtype()


def _layer_names(model: nn.Module, layers):
    """Layers given as modules -> their qualified names in ``model``: an analysis copy of the
    model holds other module objects, found again by these names (:func:`_layers_in`)."""
    if layers is None or isinstance(layers, str):
        return layers
    if isinstance(layers, (list, tuple)) and layers and all(isinstance(p, str) for p in layers):
        return layers
    return tuple(name for name, _ in find_layers(model, layers))


def _layers_in(model: nn.Module, layers):
    """The modules of ``model`` named by :func:`_layer_names`, in the order given."""
    if isinstance(layers, tuple):
        return [model.get_submodule(name) for name in layers]
    return layers


@contextlib.contextmanager
def _full_precision():
    """float32 matrix products in float32 on CUDA for the analysis (TF32, on by the user's
    choice, keeps 10 mantissa bits: too few for Krylov iterations to ``tol``)."""
    cuda = torch.backends.cuda.matmul, torch.backends.cudnn
    saved = [m.allow_tf32 for m in cuda]
    for m in cuda:
        m.allow_tf32 = False
    try:
        yield
    finally:
        for m, v in zip(cuda, saved, strict=True):
            m.allow_tf32 = v


def _device_note(model: nn.Module, device: torch.device) -> tuple[str, str]:
    """The device string of the result and a note on where and with which kernels it ran."""
    spread = getattr(model, "hf_device_map", None)
    if spread and (len(set(spread.values())) > 1 or "disk" in spread.values()):
        places = ", ".join(dict.fromkeys(str(v) for v in spread.values()))
        return f"{places} (device_map)", (
            f"the model is dispatched by accelerate over {places}: each layer was recorded and analysed "
            "where it lives, its weights loaded by the model's own hooks (never gathered on one device)"
        )
    if device.type == "cuda":
        return str(device), (
            f"computed on {device} ({torch.cuda.get_device_name(device)}), float32 matrix products without "
            "TF32 (cuBLAS/cuDNN)"
        )
    return str(device), ""


def _stack_size(stack: int | None, device: torch.device, module: nn.Module) -> int:
    """Steps per pass (see ``stack`` of :func:`inspect`): as given, else on a GPU as many copies
    of one layer's weights as a quarter of its free memory holds, else 1."""
    if stack is not None:
        return stack
    if device.type != "cuda":
        return 1
    free, _ = torch.cuda.mem_get_info(device)
    size = sum(t.numel() * t.element_size() for t in (*module.parameters(), *module.buffers()))
    return max(1, int(free // 4 // max(size, 1)))


def _position(module: nn.Module, state: torch.Tensor) -> torch.Tensor:
    """``x_l`` of a state: a depthdyn block reads it from its state slots; else the state."""
    return module.position(state) if isinstance(module, DepthBlock) else state


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
    stack: int | None = None,
    seed: int = 0,
) -> Inspection:
    """Depth profile and per-step Jacobian spectra of ``model`` at ``inputs``.

    Parameters
    ----------
    model : torch.nn.Module
        Any model, in ``eval()`` mode if it has BatchNorm or dropout; it is run once, as it is,
        on its own device. A model dispatched by accelerate (``device_map``: layers on several
        GPUs, offloaded to the CPU or disk) is analysed layer by layer where each layer lives,
        without gathering its weights (:mod:`~depthdyn.nn.analysis.offload`).
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
        A dispatched model is analysed in its own dtype (float32 or float64) only: a copy would
        gather it.
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
    stack : int, optional
        At most this many consecutive same-shaped token-local steps analysed together, their
        products in one pass (``vmap`` over their stacked weights, :mod:`~.stacked`): on a GPU,
        where a product of one layer is bound by latency, several cost about as much as one.
        Default: on a GPU as many as a quarter of its free memory holds copies of, else 1 (one
        by one; on a CPU a product's cost grows with the layers it carries). The values are
        the same up to the Krylov bounds (other start vectors).
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
    checked = [("k", k, 1), ("steps", steps, 1), ("dense_max", dense_max, 0), ("probes", probes, 2)]
    for name, v, lo in checked + ([("stack", stack, 1)] if stack is not None else []):
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise ParameterError(f"{name} must be an integer >= {lo}, got {v!r}")
    check_tol(tol)
    if not isinstance(model, nn.Module):
        raise ParameterError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    check_model(model, offloaded_names(model))
    check_inputs(inputs)
    opts = dict(k=k, tokens=tokens, causal=causal, steps=steps, tol=tol, dense_max=dense_max, probes=probes,
                loss_fn=loss_fn, streams=streams, split=_splits(split), progress=progress, stack=stack,
                seed=seed)
    with grad_on(), _full_precision():  # also under a caller's no_grad / inference_mode
        return _inspect(model, inputs, layers, dtype, **opts)


def _inspect(model, inputs, layers, dtype, *, k, tokens, causal, steps, tol, dense_max, probes, loss_fn,
             streams, split, progress, stack, seed) -> Inspection:
    notes = []
    spread = dispatched(model)
    if spread:  # a copy in another dtype would load every weight at once
        check_dispatched_dtype(_where(model)[1], dtype)
        adtype = None
    else:
        adtype, note = analysis_dtype(_where(model)[1], dtype)
        if note:
            notes.append(note)
    if adtype is not None and _where(model)[1] != adtype:
        layers = _layer_names(model, layers)
        model = copy.deepcopy(model).to(adtype)
        layers = _layers_in(model, layers)
    device, mdtype = _where(model)

    def around(module):
        return loaded(module) if spread else contextlib.nullcontext()

    device_text, note = _device_note(model, device)
    if note:
        notes.append(note)
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
        with weights_by_reference(model):  # offloaded weights: the graph reloads them at backward
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
        with around(st.module):
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
    grads, note = gradient_norms(rec.output, raw_states, loss_fn, seed=seed)
    if note:
        notes.append(note)
    profile = depth_profile([p.to(pos[0].device) for p in pos], grads)  # layers may live on several GPUs

    first = gsteps[0]
    fn0, xg = first.function, first.state
    seq_g = xg.dim() == 3 and xg.shape[1] > 1 and all(s.output.shape == xg.shape for s in gsteps)
    with around(first.module):
        causal_first = seq_g and is_causal(fn0, xg) if causal is not False else False
    if causal is None:
        causal = causal_first
    elif causal and not causal_first:
        raise ParameterError(
            f"causal=True, but step {first.name} is not causal over axis 1 of its (B, T, d) state "
            f"{tuple(xg.shape)}: a later token moves earlier outputs"
        )
    picked = token_sample(xg.shape[1], tokens) if causal else None
    pairs = [(b, t) for t in picked for b in range(G)] if causal else [(b, -1) for b in range(G)]
    blocks = np.array(pairs)
    most = 1 if spread else _stack_size(stack, device, gsteps[0].module)
    opt = dict(k=k, steps=steps, tol=tol, dense_max=dense_max, probes=probes, seed=seed, progress=progress,
               release=spread, around=around, stack=most)
    spectra = step_spectra(gsteps, blocks, picked, notes, opt)
    return Inspection(
        names=tuple(s.name for s in gsteps), kinds=tuple(s.kind for s in gsteps),
        layers=frozen([s.layer for s in gsteps]), shapes=shapes, stages=frozen(stages), streams=grp.streams,
        norms=profile.norms, update_cosine=profile.update_cosine, perturbation=profile.perturbation,
        grad_norms=profile.grad_norms, blocks=frozen(blocks), causal=bool(causal),
        dtype=str(mdtype).replace("torch.", ""), device=device_text, notes=tuple(notes),
        output=rec.output,
        momentum=mom[0] if mom else None, _modules=tuple(s.module for s in gsteps),
        _states=tuple(s.state for s in gsteps), **spectra,
    )
