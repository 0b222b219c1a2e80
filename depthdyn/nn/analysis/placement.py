"""The bridge: a model's measured per-step ``lam`` values on the stability region of a family.

A residual step ``x_{l+1} = x_l + f(x_l)`` has the Jacobian ``J = I + Df``; the eigenvalues
``lam`` of ``Df = J - I`` are the values a depthdyn family takes as its ``lam`` (the eigenvalue
of the linearised branch). :func:`place` puts them on the region of *any* family with a free
``lam`` (``residual``, ``momentum`` with its ``m`` and ``eta``, the literature's ``lm_resnet``,
``rk4`` with its ``h``, ...): the question "where would this branch sit if it were used in
that update rule", answered by the exact Schur–Cohn masks of :mod:`depthdyn.numeric.masks`.
:func:`plot_placement` draws the region and the points (``ax=`` in, ``Axes`` out).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ...errors import ParameterError
from ...families import build
from ...numeric.masks import stability_mask
from .linearize import _frozen
from .operators import ritz_values

__all__ = ["LayerPlacement", "eigenvalues", "place", "plot_placement"]


@dataclass(frozen=True, eq=False)
class LayerPlacement:
    """Per step: the family, the ``lam`` values and the fraction strictly/marginally stable.

    ``lam[l]`` (``(N, r)`` complex) are the eigenvalues of the step's branch Jacobian (dense)
    or Ritz values of it (a sampled spectrum); ``inside[l]`` and ``marginal[l]`` are the
    fractions of those points strictly / at least marginally inside the family's region;
    ``fraction_inside`` over all steps. ``recurrences[l]`` are the recurrences tested (one,
    or one per channel for a block family).
    """

    names: tuple[str, ...]
    families: tuple[str, ...]
    lam: tuple[np.ndarray, ...]
    inside: np.ndarray
    marginal: np.ndarray
    recurrences: tuple = ()
    params: tuple = ()

    @property
    def fraction_inside(self) -> float:
        sizes = np.array([lam.size for lam in self.lam], float)
        return float(np.sum(self.inside * sizes) / sizes.sum())

    def to_json(self) -> dict:
        return {
            "names": list(self.names),
            "families": list(self.families),
            "params": [dict(p) for p in self.params],
            "inside": self.inside.tolist(),
            "marginal": self.marginal.tolist(),
            "fraction_inside": self.fraction_inside,
        }


def eigenvalues(op, steps: int) -> np.ndarray:
    """Eigenvalues of ``J`` per problem: exact where ``n <= steps``, Ritz values otherwise."""
    if op.n_in <= steps:
        return torch.linalg.eigvals(op.dense().double()).cpu().numpy()
    return ritz_values(op, steps=steps)


def _params(family: str, params: dict) -> dict:
    bad = [k for k, v in params.items() if isinstance(v, (np.ndarray, list, tuple))]
    if bad:
        raise ParameterError(f"placement parameters must be single values, got arrays for {bad}")
    return {k: complex(v) if isinstance(v, complex) else float(v) for k, v in params.items()}


def place(
    ops, names, family: str = "residual", *, steps: int = 40, lams=None, branch: bool = False, **params
) -> LayerPlacement:
    """``lam = eig(J - I)`` of every step operator in ``ops`` on ``family``'s region.

    Parameters
    ----------
    ops : sequence of LayerOperator
        Square step operators (a step that changes the state's shape has no ``lam``).
    names : sequence of str
    family : str
        A registered family with a free ``lam`` (``depthdyn derive --list``).
    steps : int
        Arnoldi steps for the Ritz values of steps larger than this (a sampled spectrum).
    lams : sequence of ndarray, optional
        Already measured ``lam`` per step (skips the eigenvalue computation).
    branch : bool
        The operators are branch Jacobians ``Df`` (a momentumnet's functions): ``lam = eig(J)``.
    **params
        Values of the family's other parameters (``m=0.9, eta=1`` for momentum).

    Raises
    ------
    ParameterError
        The family has no ``lam``, a parameter is missing, or a step is not square.
    """
    values = _params(family, params)
    rec = build(family, **values) if values else build(family)
    if "lam" not in {str(p.name) for p in rec.params}:
        raise ParameterError(f"family {family} has no free lam to place the measured eigenvalues on")
    out_lam, inside, marginal = [], [], []
    for i, (op, name) in enumerate(zip(ops, names, strict=True)):
        if lams is None:
            if not op.square:
                raise ParameterError(f"step {name} changes the state's shape: no lam to place")
            lam = eigenvalues(op, steps) - (0.0 if branch else 1.0)
        else:
            lam = np.asarray(lams[i])
        strict, marg = stability_mask(rec, lam=lam.reshape(-1))
        out_lam.append(_frozen(lam))
        inside.append(float(np.mean(strict)))
        marginal.append(float(np.mean(marg)))
    n = len(out_lam)
    return LayerPlacement(
        tuple(names),
        (family,) * n,
        tuple(out_lam),
        _frozen(inside),
        _frozen(marginal),
        ((rec,),) * n,
        (tuple(sorted(values.items())),) * n,
    )


def plot_placement(placement: LayerPlacement, ax=None, *, steps=None, window=None, n: int = 301):
    """The family's stability region in the ``lam`` plane with the measured ``lam`` over it.

    Parameters
    ----------
    placement : LayerPlacement
        From :meth:`~depthdyn.nn.analysis.inspect.Inspection.placement` (one family for all
        the steps drawn).
    ax : matplotlib.axes.Axes, optional
        Drawn into; a new figure otherwise.
    steps : sequence of int, optional
        Which steps to draw (all by default), one colour each.
    window : (re_lo, re_hi, im_lo, im_hi), optional
        Default: the points and the unit disc about ``-1``, with a margin.
    n : int
        Grid points per axis of the region.

    Returns
    -------
    matplotlib.axes.Axes
    """
    from ...plot import plot_stability_region

    picked = range(len(placement.lam)) if steps is None else list(steps)
    recs = {id(placement.recurrences[i][0]) for i in picked}
    if len(recs) != 1:
        raise ParameterError("plot_placement draws one family: pick steps placed on the same recurrence")
    rec = placement.recurrences[picked[0]][0]
    pts = np.concatenate([placement.lam[i].reshape(-1) for i in picked])
    if window is None:
        lo_re, hi_re = min(pts.real.min(), -2.0), max(pts.real.max(), 0.0)
        lo_im, hi_im = min(pts.imag.min(), -1.0), max(pts.imag.max(), 1.0)
        pad = 0.1 * max(hi_re - lo_re, hi_im - lo_im)
        window = (lo_re - pad, hi_re + pad, lo_im - pad, hi_im + pad)
    ax = plot_stability_region(
        rec, ax, x=("re(lam)", window[0], window[1], n), y=("im(lam)", window[2], window[3], n)
    )
    for i in picked:
        lam = placement.lam[i].reshape(-1)
        ax.scatter(
            lam.real, lam.imag, s=6, label=f"{placement.names[i]} ({100 * placement.inside[i]:.0f}% inside)"
        )
    sizes = np.array([placement.lam[i].size for i in picked], float)
    frac = float(np.sum(placement.inside[list(picked)] * sizes) / sizes.sum())
    params = ", ".join(f"{k}={v:g}" for k, v in placement.params[picked[0]])
    ax.set_title(
        f"{placement.families[picked[0]]}{f' ({params})' if params else ''}: "
        f"{100 * frac:.0f}% of lam strictly inside",
        fontsize="medium",
    )
    ax.legend(fontsize="x-small", loc="best")
    return ax
