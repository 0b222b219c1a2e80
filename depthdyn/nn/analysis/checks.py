"""What :func:`~depthdyn.nn.inspect` checks before it trusts a model, and the batch grouping.

A model as it ships may not be what a per-sample Jacobian analysis assumes. Each case here
either works (said in the result) or stops with a one-line typed error that says what to change:

* parameters on the ``meta`` device (no values): :class:`ModelSetupError`;
* BatchNorm or dropout in training mode (the forward is not a fixed function of one
  sample): :class:`ModelSetupError` asking for ``model.eval()``;
* an empty batch, NaN or infinite inputs or recorded states: :class:`NonFiniteError` /
  :class:`~depthdyn.errors.ShapeError`;
* float16 / bfloat16 models: analysed as a float32 copy (:func:`analysis_dtype`);
* rows of the batch that are not independent (hyper-connection libraries fold their residual
  streams into the batch axis, ``(b s) ... d``): :func:`row_coupling` probes it with one
  cotangent per row, :func:`grouping` turns the coupled rows into one state per group
  (:class:`Grouping`), and where no uniform grouping exists :class:`BatchCouplingError`
  says what to pass.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ...errors import ParameterError, ShapeError
from .operators import math_attention, quiet  # noqa: F401 (re-exported)

__all__ = [
    "BatchCouplingError",
    "Grouping",
    "ModelSetupError",
    "NonFiniteError",
    "analysis_dtype",
    "check_inputs",
    "check_model",
    "grouping",
    "math_attention",
    "row_coupling",
]


class ModelSetupError(ParameterError):
    """The model is set up in a way the analysis cannot use (meta device, training mode)."""


class NonFiniteError(ParameterError):
    """NaN or infinite values in the inputs or in a recorded state."""


class BatchCouplingError(ParameterError):
    """Rows of the batch influence each other in a way no grouping into equal states explains."""


def _tensors(obj):
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, Mapping):
        for v in obj.values():
            yield from _tensors(v)
    elif isinstance(obj, (tuple, list)):
        for v in obj:
            yield from _tensors(v)


def check_model(model: nn.Module, loaded: set[str] = frozenset()) -> None:
    """Refuse a model on the meta device or with BatchNorm / dropout in training mode.

    ``loaded`` names the parameters and buffers on the meta device that a hook loads when their
    module runs (accelerate's disk offload): those are not refused."""
    meta = [
        n for n, t in (*model.named_parameters(), *model.named_buffers())
        if t.device.type == "meta" and n not in loaded
    ]
    if meta:
        raise ModelSetupError(
            f"the model has {len(meta)} parameters/buffers on the meta device (e.g. {meta[0]}), which hold "
            "no values: materialise it first (model.to_empty(device='cpu') and load weights, or build it "
            "without the meta device)"
        )
    stochastic = [
        n
        for n, m in model.named_modules()
        if m.training
        and (
            (isinstance(m, nn.modules.batchnorm._BatchNorm) and m.track_running_stats is not None)
            or (isinstance(m, nn.modules.dropout._DropoutNd) and m.p > 0)
        )
    ]
    if stochastic:
        raise ModelSetupError(
            f"the model is in training mode with BatchNorm/dropout ({', '.join(stochastic[:3])}"
            f"{', ...' if len(stochastic) > 3 else ''}): its forward mixes the batch or is random; "
            "call model.eval() before inspect"
        )


def check_inputs(inputs) -> None:
    """An empty batch or non-finite floating inputs stop here, before the model runs."""
    for t in _tensors(inputs):
        if t.dim() >= 1 and t.shape[0] == 0:
            raise ShapeError(
                f"the batch is empty (an input of shape {tuple(t.shape)}): pass at least one input"
            )
        if t.is_floating_point() and t.device.type != "meta" and not bool(torch.isfinite(t).all()):
            raise NonFiniteError(
                f"an input of shape {tuple(t.shape)} holds NaN or infinite values: the Jacobians there are "
                "undefined; pass finite inputs"
            )


def check_states(names, states) -> None:
    """Every recorded state finite (a NaN mid-model would give NaN spectra without a word)."""
    for i, s in enumerate(states):
        if not bool(torch.isfinite(s.detach()).all()):
            where = "the input of the first layer" if i == 0 else f"the output of layer {names[i - 1]}"
            raise NonFiniteError(
                f"{where} holds NaN or infinite values (overflow in the model, or in its dtype): nothing to "
                "analyse there; check the inputs and weights, or pass dtype=torch.float64"
            )


def analysis_dtype(model_dtype: torch.dtype, requested: torch.dtype | None) -> tuple[torch.dtype | None, str]:
    """The dtype to analyse in (``None``: the model's own) and a note when it was changed."""
    if requested is not None:
        if requested not in (torch.float32, torch.float64):
            raise ParameterError(f"dtype must be torch.float32 or torch.float64, got {requested!r}")
        return requested, ""
    if model_dtype in (torch.float16, torch.bfloat16):
        name = str(model_dtype).replace("torch.", "")
        return torch.float32, (
            f"the {name} model was analysed as a float32 copy ({name} has no linear algebra on every device "
            "and too few digits for Krylov iterations)"
        )
    return None, ""


def row_coupling(fn, x: torch.Tensor, *, rows: int = 32, seed: int = 0) -> np.ndarray:
    """``(B, B)`` boolean: ``[r, s]`` when output row ``r`` moves with input row ``s``.

    A reverse pass with a random cotangent on output row ``r`` alone must leave every other
    input row without gradient when rows are independent; a leak above rounding (``1e3`` eps
    of the lane's largest gradient) marks a coupling. Up to ``rows`` rows, one such pass per
    row (batched by ``vmap``). Larger batches are screened first with ``2 m + 1`` passes
    (``m = ceil(sqrt(B))``): the cotangent on every row of one residue class mod ``m``, then
    mod ``m + 1``; two distinct rows share both classes only if they differ by a multiple of
    ``m (m + 1) >= B``, so any coupling leaks into another class. Only then is every row probed.
    """
    B = x.shape[0]
    if B == 1:
        return np.ones((1, 1), dtype=bool)
    y, vjp = quiet(torch.func.vjp)(fn, x.detach())
    gen = torch.Generator().manual_seed(seed)
    noise = torch.randn(y.shape, generator=gen, dtype=y.dtype).to(y.device)
    eps = torch.finfo(y.dtype).eps
    pull = quiet(torch.func.vmap(lambda v: vjp(v)[0]))

    def leaks(select: torch.Tensor) -> np.ndarray:
        """``select`` ``(lanes, B)`` 0/1 rows of each lane's cotangent -> ``(lanes, B)`` leak sizes."""
        shape = (select.shape[0], B) + (1,) * (y.dim() - 1)
        grads = pull(noise[None] * select.reshape(shape).to(noise)).detach()
        size = grads.reshape(grads.shape[0], B, -1).norm(dim=-1).double()
        return (size > 1e3 * eps * size.max(dim=1, keepdim=True).values.clamp(min=1e-300)).cpu().numpy()

    idx = torch.arange(B)
    if B > rows:
        m = math.isqrt(B - 1) + 1
        clean = True
        for mod in (m, m + 1):
            select = (idx[None, :] % mod == torch.arange(mod)[:, None]).double()
            if (leaks(select) & (select.numpy() == 0)).any():
                clean = False
                break
        if clean:
            return np.eye(B, dtype=bool)
    mask = np.eye(B, dtype=bool)
    for lo in range(0, B, rows):
        hi = min(B, lo + rows)
        select = (idx[None, :] == torch.arange(lo, hi)[:, None]).double()
        mask[lo:hi] |= leaks(select)
    return mask


@dataclass(frozen=True, eq=False)
class Grouping:
    """Rows of the batch taken together as one state: ``rows[g]`` are the rows of state ``g``.

    ``streams`` rows per state; ``sequence``: the state is ``(B, T, d)`` and a group becomes
    ``(T, streams * d)`` (token-major, so causal token blocks stay token blocks); otherwise a
    group is its rows flattened.
    """

    rows: np.ndarray
    sequence: bool

    @property
    def streams(self) -> int:
        return int(self.rows.shape[1])

    @property
    def trivial(self) -> bool:
        return self.streams == 1

    def group(self, x: torch.Tensor) -> torch.Tensor:
        if self.trivial:
            return x
        G, n = self.rows.shape
        idx = torch.as_tensor(self.rows.reshape(-1), device=x.device)
        g = x.index_select(0, idx).reshape(G, n, *x.shape[1:])
        if self.sequence:
            return g.transpose(1, 2).reshape(G, x.shape[1], n * x.shape[2])
        return g.reshape(G, -1)

    def ungroup(self, g: torch.Tensor, shape) -> torch.Tensor:
        """Back to the batch layout; ``shape`` is the per-row shape."""
        if self.trivial:
            return g
        G, n = self.rows.shape
        if self.sequence:
            rows = g.reshape(G, shape[0], n, shape[1]).transpose(1, 2)
        else:
            rows = g.reshape(G, n, *shape)
        rows = rows.reshape(G * n, *shape)
        inv = torch.as_tensor(np.argsort(self.rows.reshape(-1)), device=g.device)
        return rows.index_select(0, inv)

    def wrap(self, fn, in_shape, out_shape):
        """``fn`` on the batch as a function of the grouped state."""
        if self.trivial:
            return fn
        return lambda g: self.group(fn(self.ungroup(g, in_shape)))


def _components(mask: np.ndarray) -> list[list[int]]:
    sym = mask | mask.T
    seen, comps = set(), []
    for r in range(mask.shape[0]):
        if r in seen:
            continue
        stack, comp = [r], []
        seen.add(r)
        while stack:
            a = stack.pop()
            comp.append(a)
            for b in np.flatnonzero(sym[a]):
                if int(b) not in seen:
                    seen.add(int(b))
                    stack.append(int(b))
        comps.append(sorted(comp))
    return comps


def grouping(mask: np.ndarray, streams, *, sequence: bool, where: str) -> Grouping:
    """The grouping of the batch rows given the coupling ``mask`` and the ``streams`` option.

    ``streams=None``: the connected components of the coupling, if all of one size (``1``
    for independent rows). ``streams=n``: consecutive groups of ``n`` rows (the ``(b s)``
    layout of hyper-connection libraries), checked against the probe. ``streams="batch"``:
    the whole batch as one state.
    """
    B = mask.shape[0]
    if streams == "batch":
        return Grouping(np.arange(B)[None], sequence)
    if streams is not None:
        if isinstance(streams, bool) or not isinstance(streams, int) or streams < 1 or B % streams:
            raise ParameterError(
                f"streams must be a positive divisor of the batch size {B} or 'batch', got {streams!r}"
            )
        rows = np.arange(B).reshape(B // streams, streams)
        label = np.repeat(np.arange(B // streams), streams)
        outside = mask & (label[:, None] != label[None, :])
        if outside.any():
            r, s = np.argwhere(outside)[0]
            raise BatchCouplingError(
                f"{where}: batch row {r} moves with row {s}, outside its group of {streams} consecutive "
                "rows; "
                f"streams={streams} does not describe this model (leave streams=None to detect the coupling)"
            )
        return Grouping(rows, sequence)
    comps = _components(mask)
    sizes = {len(c) for c in comps}
    if len(sizes) == 1:
        return Grouping(np.array(comps), sequence)
    raise BatchCouplingError(
        f"{where}: rows of the batch influence each other in groups of unequal size "
        f"({', '.join(str(c) for c in comps[:4])}...): the per-input analysis would be wrong. If the model "
        "folds n residual streams into the batch, pass streams=n; to take the whole batch as one state, "
        "streams='batch'; if BatchNorm or batch-wise pooling mixes the rows, call model.eval()"
    )


@contextlib.contextmanager
def grad_on():
    """Gradients on whatever the caller wrapped us in (``no_grad``, ``inference_mode``)."""
    with torch.inference_mode(False), torch.enable_grad():
        yield
