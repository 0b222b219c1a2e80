"""The result of :func:`~depthdyn.nn.inspect`: :class:`Inspection`, with its per-step and
per-layer views, the steps as matrices (a depth-varying recurrence), end-to-end growth and the
placement of the measured ``lam`` values on a family's stability region."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ...errors import ParameterError, ShapeError
from ...families import build
from ...numeric.masks import stability_mask
from ..blocks.base import DepthBlock
from .linearize import _frozen, _layer_recurrences
from .operators import LayerOperator, top_singular_values
from .placement import LayerPlacement, eigenvalues, place
from .steps import ComposedOperator

__all__ = ["Inspection"]


@dataclass(frozen=True, eq=False)
class Inspection:
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
    trace : ndarray
        ``(L, N)``: ``tr J`` (exact when dense, Hutchinson otherwise; NaN if not square).
    accuracy : dict
        ``"singular_values"``, ``"spectral_radius"``: ``(L,)`` the largest error bound of the
        step's values (0: dense, rounding only); ``"trace"``: ``(L,)`` the largest standard
        error of the Hutchinson estimate; ``"recording"``: ``(L,)`` ``max |step(x_l) - x_{l+1}|``
        of the step function against the recorded output (0 for a deterministic layer).
    methods : tuple of str
        How each step's values were found (and how ``J w`` was formed).
    causal : bool
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
    trace: np.ndarray
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
    def period(self) -> tuple[str, ...]:
        """The kinds of one layer's steps: ``("layer",)`` or ``("attention", "mlp")``."""
        first = self.layers[0]
        return tuple(k for k, layer in zip(self.kinds, self.layers, strict=True) if layer == first)

    def operator(self, step: int) -> LayerOperator:
        """The matrix-free Jacobian of step ``step`` (for further Krylov work)."""
        return self._operators[step]

    def layer_operator(self, layer: int) -> ComposedOperator:
        """The Jacobian of model layer ``layer``: the product of its steps' operators."""
        ops = [op for op, i in zip(self._operators, self.layers, strict=True) if i == layer]
        if not ops:
            raise ParameterError(f"no layer {layer}: the model has {int(self.layers[-1]) + 1}")
        return ComposedOperator(ops)

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
        top = top_singular_values(ComposedOperator(ops), 1, steps=steps, tol=tol)
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

    def __str__(self) -> str:
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

    def placement(self, family: str | None = None, *, steps: int = 40, **params) -> LayerPlacement:
        """Each step's ``lam`` values on the stability region of a family.

        ``family=None``: a depthdyn block gives its own recurrence
        (:meth:`~depthdyn.nn.DepthBlock.recurrence`) with ``lam`` the eigenvalues of its branch
        Jacobian at the branch input (:meth:`~depthdyn.nn.DepthBlock.branch_input`: ``H_pre X``
        for hyper-connections); any other step is taken as an identity-skip residual step,
        ``x_{l+1} = (1 + lam) x_l``, with ``lam`` the eigenvalues of ``J - I`` (dense) or its
        Ritz values (``steps``). ``family="momentum", m=0.9, eta=1`` (or any registered family
        with a free ``lam`` and values for its other parameters) places the same measured
        ``lam = eig(J - I)`` on that family's region (:func:`~.placement.place`).

        Raises
        ------
        ShapeError
            A step changes the state's shape (no recurrence over depth there).
        """
        for i, op in enumerate(self._operators):
            if not op.square:
                raise ShapeError(f"step {self.names[i]} changes the state's shape: no recurrence to place")
        branch = all(kind == "branch" for kind in self.kinds)
        if family is None and branch and self.momentum is not None and not params:
            family, params = "momentum", {"m": self.momentum, "eta": 1.0 - self.momentum}
        if family is not None:
            return place(self._operators, self.names, family, steps=steps, branch=branch, **params)
        if params:
            raise ParameterError(f"parameters {sorted(params)} need a family=")
        fams, lams, inside, marginal, recs_all = [], [], [], [], []
        for op, module, state in zip(self._operators, self._modules, self._states, strict=True):
            if isinstance(module, DepthBlock) and self.streams == 1:
                recs, lam = _block_lam(module, state)
                fams.append(module.family)
            else:
                lam = eigenvalues(op, steps) - 1.0
                recs = (build("residual"),)
                fams.append("residual")
            masks = [stability_mask(rec, lam=lam) for rec in recs]  # every channel, every lam
            lams.append(_frozen(lam))
            inside.append(float(np.mean(np.stack([m[0] for m in masks]))))
            marginal.append(float(np.mean(np.stack([m[1] for m in masks]))))
            recs_all.append(tuple(recs))
        return LayerPlacement(
            tuple(self.names),
            tuple(fams),
            tuple(lams),
            _frozen(inside),
            _frozen(marginal),
            tuple(recs_all),
            ((),) * len(fams),
        )


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
