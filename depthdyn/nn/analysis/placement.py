"""The bridge: measured per-layer ``lam`` values on the stability region of a family.

A residual step ``x_{l+1} = x_l + f(x_l)`` has the Jacobian ``J = I + Df``; the eigenvalues
``lam`` of ``Df = J - I`` are the values a depthdyn family takes as its ``lam`` (the eigenvalue
of the linearised branch). :func:`place` puts them on a region and returns one
:class:`Placement`, from either source of measured ``lam``:

* an :class:`~.inspection.Inspection` of any model (the step operators at the recorded
  states): each step on its own block's recurrence, or on *any* family with a free ``lam``
  (``residual``, ``momentum`` with its ``m`` and ``eta``, the literature's ``lm_resnet``,
  ``rk4`` with its ``h``, ...): "where would this branch sit in that update rule";
* a :class:`~.linearise.Linearisation` of a depthdyn stack: each layer on the recurrence of
  its learned coefficients (per sample, per channel), cross-checked against the family's
  exact Schur–Cohn conditions (:func:`depthdyn.stability_conditions`).

Verdicts come from the exact masks of :func:`depthdyn.stability_mask`; the figure is
:func:`depthdyn.plot.placement.plot_placement`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np
import sympy as sp
import torch

from ...errors import DepthdynError, ParameterError, ShapeError
from ...families import build
from ...numeric.masks import stability_mask
from ...records import Record
from ...symbolic.stability import stability_conditions
from ..blocks.base import DepthBlock
from .krylov import ritz_values
from .linearise import Linearisation, layer_recurrences
from .readonly import frozen

__all__ = ["Placement", "block_lam", "eigenvalues", "place"]


@dataclass(frozen=True, eq=False)
class Placement(Record):
    """Per step (layer): the recurrences tested, the measured ``lam`` values and their verdicts.

    Attributes
    ----------
    names, families : tuple of str
        Per step: its name and the family whose region it is placed on.
    lam : tuple of ndarray
        Per step, ``(N, r)``: ``r`` values for each of ``N`` problems (samples, token blocks):
        the eigenvalues of the step's branch Jacobian (dense) or Ritz values of it.
    strict, bounded : tuple of ndarray of bool
        Per step, ``(N, C, r)``: strictly stable (all roots in the open unit disc) and at
        least marginally stable, for each of the ``C`` recurrences tested (one, or one per
        channel where the coefficients are per channel).
    recurrences : tuple of tuple of Recurrence
        Per step, the recurrences tested.
    params : tuple
        Per step, the ``(name, value)`` pairs fixed for a family placement (empty otherwise).
    conditions : tuple of str
        The family's exact conditions (``expr > 0``) where they were checked (linearised stacks).
    conditions_agree : float or None
        Fraction of points where the exact conditions give the same verdict as the mask
        (real ``lam`` only; ``None`` where not checked).
    coordinates : dict
        ``lam`` and every learned coefficient as ``(L, N, C, r)`` arrays (linearised stacks;
        for momentum ``coordinates["eta"] * coordinates["lam"]`` against ``coordinates["m"]``).
    family_recurrence : Recurrence or None
        The symbolic family (no learned numbers), for its exact conditions and its figure.
    """

    names: tuple
    families: tuple
    lam: tuple
    strict: tuple
    bounded: tuple
    recurrences: tuple = ()
    params: tuple = ()
    conditions: tuple = ()
    conditions_agree: float | None = None
    coordinates: dict = field(default_factory=dict, repr=False)
    family_recurrence: object = field(default=None, repr=False)

    @property
    def family(self) -> str:
        """The family of the steps (``"mixed"`` where they differ)."""
        return self.families[0] if len(set(self.families)) == 1 else "mixed"

    @property
    def inside(self) -> np.ndarray:
        """``(L,)``: per step, the fraction of its tested values strictly inside."""
        return frozen([float(np.mean(s)) for s in self.strict])

    @property
    def marginal(self) -> np.ndarray:
        """``(L,)``: per step, the fraction of its tested values at least marginally inside."""
        return frozen([float(np.mean(b)) for b in self.bounded])

    @property
    def fraction_inside(self) -> float:
        """The fraction of all measured ``lam`` values strictly inside (steps weighted by their size)."""
        sizes = np.array([lam.size for lam in self.lam], float)
        return float(np.sum(self.inside * sizes) / sizes.sum())

    @property
    def per_layer(self) -> np.ndarray:
        """``(L,)``: per step, the fraction of problems whose every value and channel is strictly inside."""
        return frozen([float(s.all(axis=(1, 2)).mean()) for s in self.strict])

    @property
    def fraction(self) -> float:
        """The fraction of (step, problem) points whose every value and channel is strictly inside."""
        return float(np.mean(np.concatenate([s.all(axis=(1, 2)) for s in self.strict])))

    @property
    def marginal_fraction(self) -> float:
        """:attr:`fraction` for marginal stability (roots in the closed disc, those on the circle
        simple): residual-type layers with ``lam ~ 0`` and ``C^k`` layers (``k >= 2``) are marginal."""
        return float(np.mean(np.concatenate([b.all(axis=(1, 2)) for b in self.bounded])))

    def to_json(self) -> dict:
        return {
            "names": list(self.names),
            "families": list(self.families),
            "params": [dict(p) for p in self.params],
            "inside": self.inside.tolist(),
            "marginal": self.marginal.tolist(),
            "fraction_inside": self.fraction_inside,
            "family": self.family,
            "conditions": list(self.conditions),
            "fraction": self.fraction,
            "marginal_fraction": self.marginal_fraction,
            "per_layer": self.per_layer.tolist(),
            "conditions_agree": self.conditions_agree,
        }

    def _text(self) -> str:
        agree = "" if self.conditions_agree is None else f", conditions agree on {self.conditions_agree:.1%}"
        conditions = f" [{' & '.join(self.conditions)}]" if self.conditions else ""
        return (
            f"{self.family}: {self.fraction_inside:.1%} of the measured lam strictly inside; "
            f"{self.fraction:.1%} of (step, problem) points strictly stable{conditions}, "
            f"{self.marginal_fraction:.1%} at least marginally{agree}"
        )

    def _latex(self) -> str:
        return (rf"\text{{{self.family}}}: {100 * self.fraction_inside:.1f}\%\ \text{{of }} \lambda"
                r"\ \text{strictly inside}")


def eigenvalues(op, steps: int) -> np.ndarray:
    """Eigenvalues of ``J`` per problem: exact where ``n <= steps``, Ritz values otherwise."""
    if op.n_in <= steps:
        return torch.linalg.eigvals(op.dense().double()).cpu().numpy()
    return ritz_values(op, steps=steps)


def block_lam(block: DepthBlock, state: torch.Tensor):
    """The block's recurrence(s) (one, or one per channel) and the eigenvalues of its branch
    Jacobian at the branch input (divided by the step where the family carries it as ``h``)."""
    recs = layer_recurrences(block)
    if not recs:
        raise ParameterError(f"{type(block).__name__} gives no recurrence with a free lam")
    u = block.branch_input(state.detach())
    scale = block.step if "h" in block.coefficients() else 1.0
    J = torch.func.vmap(torch.func.jacrev(lambda t: block.branch(t[None])[0]))(u)
    J = J.detach().reshape(u.shape[0], u[0].numel(), -1) / scale
    return recs, torch.linalg.eigvals(J.double()).cpu().numpy()


def _params(params: dict) -> dict:
    bad = [k for k, v in params.items() if isinstance(v, (np.ndarray, list, tuple))]
    if bad:
        raise ParameterError(f"placement parameters must be single values, got arrays for {bad}")
    return {k: complex(v) if isinstance(v, complex) else float(v) for k, v in params.items()}


def _family(family: str, params: dict):
    values = _params(params)
    rec = build(family, **values) if values else build(family)
    if "lam" not in {str(p.name) for p in rec.params}:
        raise ParameterError(f"family {family} has no free lam to place the measured eigenvalues on")
    return rec, tuple(sorted(values.items()))


def _verdicts(recs, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(N, C, r)`` strict and marginal masks of the values ``lam`` ``(N, r)`` on each recurrence."""
    lam = lam.reshape(lam.shape[0], -1)
    masks = [stability_mask(rec, lam=lam) for rec in recs]
    return (np.stack([m[0] for m in masks], axis=1), np.stack([m[1] for m in masks], axis=1))


def place(source, family: str | None = None, *, steps: int = 40, **params) -> Placement:
    """The measured ``lam`` of every step (layer) of ``source`` on a stability region.

    Parameters
    ----------
    source : Inspection or Linearisation
        An :class:`~.inspection.Inspection` of any model, or a :class:`~.linearise.Linearisation`
        of a depthdyn stack.
    family : str, optional
        ``None``: each step on its own recurrence. For an inspection a depthdyn block gives its
        own recurrence (:meth:`~depthdyn.nn.blocks.base.DepthBlock.recurrence`) with ``lam``
        the eigenvalues of its branch Jacobian at the branch input (``H_pre X`` for
        hyper-connections), any other step is taken as an identity-skip residual step
        ``x_{l+1} = (1 + lam) x_l`` with ``lam = eig(J - I)`` (dense) or its Ritz values, and a
        momentumnet's branch functions go on the momentum family of its ``gamma``; for a
        linearisation each layer's recurrence with its learned coefficients. A registered
        family with a free ``lam`` (``depthdyn derive --list``) and values for its other
        parameters in ``params`` (``m=0.9, eta=1``): the same measured ``lam`` on that
        family's region.
    steps : int
        Arnoldi steps for the Ritz values of inspected steps larger than this (a sampled spectrum).

    Raises
    ------
    ParameterError
        ``source`` is neither, the family has no ``lam``, a parameter is missing or an array,
        parameters without a family, or blocks with no recurrence with a free ``lam``.
    ShapeError
        A step changes the state's shape (no recurrence over depth there).
    """
    if isinstance(source, Linearisation):
        return _place_linearisation(source, family, params)
    if not all(hasattr(source, a) for a in ("operators", "step_modules", "step_states", "kinds")):
        raise ParameterError(
            f"place takes an Inspection (inspect) or a Linearisation (linearise), got {type(source).__name__}"
        )
    return _place_steps(source, family, steps, params)


def _place_steps(ins, family, steps: int, params: dict) -> Placement:
    ops = ins.operators
    for i, op in enumerate(ops):
        if not op.square:
            raise ShapeError(f"step {ins.names[i]} changes the state's shape: no recurrence to place")
    branch = all(kind == "branch" for kind in ins.kinds)
    if family is None and branch and ins.momentum is not None and not params:
        family, params = "momentum", {"m": ins.momentum, "eta": 1.0 - ins.momentum}
    if family is None and params:
        raise ParameterError(f"parameters {sorted(params)} need a family=")
    fixed = _family(family, params) if family is not None else None
    fams, lams, strict, bounded, recs_all = [], [], [], [], []
    for op, module, state in zip(ops, ins.step_modules, ins.step_states, strict=True):
        if fixed is not None:
            recs, lam = (fixed[0],), eigenvalues(op, steps) - (0.0 if branch else 1.0)
            fams.append(family)
        elif isinstance(module, DepthBlock) and ins.streams == 1:
            recs, lam = block_lam(module, state)
            fams.append(module.family)
        else:
            recs, lam = (build("residual"),), eigenvalues(op, steps) - 1.0
            fams.append("residual")
        s, b = _verdicts(recs, lam)
        lams.append(frozen(lam))
        strict.append(frozen(s))
        bounded.append(frozen(b))
        recs_all.append(tuple(recs))
    n = len(fams)
    return Placement(
        names=tuple(ins.names), families=tuple(fams), lam=tuple(lams), strict=tuple(strict),
        bounded=tuple(bounded), recurrences=tuple(recs_all), params=((fixed[1] if fixed else ()),) * n,
        family_recurrence=fixed[0] if fixed else None,
    )


@functools.lru_cache(maxsize=32)
def _conditions(rec):
    sc = stability_conditions(rec)
    names = [s.name for s, _ in sc.domains]
    fn = sp.lambdify([s for s, _ in sc.domains], sp.And(*sc.conditions), modules="numpy")
    return tuple(sp.sstr(c) for c in sc.conditions), names, fn


def _place_linearisation(lin: Linearisation, family, params: dict) -> Placement:
    """Each layer's learned coefficients and ``lam`` values (per sample) on its recurrence.

    For the momentum family the points are ``(eta_l lam_l, m_l)`` per layer and sample, and
    inside means ``-2(1 + m) < eta lam < 0``, as decided by depthdyn's own analyses.
    """
    L, B, K = lin.lam_eigenvalues.shape
    names = tuple(f"layer {i}" for i in range(L))
    if family is not None:
        rec, fixed = _family(family, params)
        verdicts = [_verdicts((rec,), lin.lam_eigenvalues[i]) for i in range(L)]
        return Placement(
            names=names, families=(family,) * L, lam=tuple(frozen(lam) for lam in lin.lam_eigenvalues),
            strict=tuple(frozen(v[0]) for v in verdicts), bounded=tuple(frozen(v[1]) for v in verdicts),
            recurrences=((rec,),) * L, params=(fixed,) * L, family_recurrence=rec,
        )
    if params:
        raise ParameterError(f"parameters {sorted(params)} need a family=")
    if not all(lin.recurrences) or any(r.lam is None for recs in lin.recurrences for r in recs):
        raise ParameterError(f"the {lin.family} blocks give no recurrence with a free lam to place")
    C = max(len(recs) for recs in lin.recurrences)
    inside = np.zeros((L, B, C, K), dtype=bool)
    bounded = np.zeros((L, B, C, K), dtype=bool)
    coords: dict[str, np.ndarray] = {"lam": np.broadcast_to(lin.lam_eigenvalues[:, :, None, :], (L, B, C, K))}
    for name in lin.coefficients[0]:
        coords[name] = np.zeros((L, B, C, K))
    for i, recs in enumerate(lin.recurrences):
        for c, rec in enumerate(recs if len(recs) == C else recs * C):
            inside[i, :, c, :], bounded[i, :, c, :] = stability_mask(rec, lam=lin.lam_eigenvalues[i])
            for name, v in lin.coefficients[i].items():
                v = v.reshape(-1)
                coords[name][i, :, c, :] = v[c] if v.size == C else v[0] if v.size == 1 else np.nan
    conditions, agree = (), None
    if lin.family_recurrence is not None:
        try:
            conditions, cnames, fn = _conditions(lin.family_recurrence)
        except DepthdynError:
            cnames = None
        if cnames is not None and not np.iscomplexobj(coords["lam"]) and set(cnames) <= set(coords):
            exact = np.broadcast_to(fn(*[coords[n] for n in cnames]), inside.shape)
            agree = float(np.mean(exact == inside))
    return Placement(
        names=names, families=(lin.family,) * L, lam=tuple(frozen(lam) for lam in lin.lam_eigenvalues),
        strict=tuple(frozen(s) for s in inside), bounded=tuple(frozen(b) for b in bounded),
        recurrences=tuple(tuple(r) for r in lin.recurrences), params=((),) * L, conditions=conditions,
        conditions_agree=agree, coordinates={k: frozen(v) for k, v in coords.items()},
        family_recurrence=lin.family_recurrence,
    )
