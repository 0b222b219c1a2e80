"""The mean-field maps of the plain chain ``h_{l+1} = W phi(h_l) + b`` and their iterates.

With ``W_ij ~ N(0, sw2 / N)`` and ``b_i ~ N(0, sb2)``, in the infinite-width limit

.. math::

    q_{l+1} = \\sigma_w^2\\, E[\\phi(\\sqrt{q_l} z)^2] + \\sigma_b^2, \\qquad
    c_{l+1} = \\frac{\\sigma_w^2 E[\\phi(u_1)\\phi(u_2)] + \\sigma_b^2}{q_{l+1}}

(Poole et al. 2016), for two inputs of equal variance ``q_l`` and correlation ``c_l``. The
correlation is carried as ``eps = 1 - c``:
``eps_{l+1} = sw2 (E[phi(u)^2] - E[phi(u1) phi(u2)]) / q_{l+1}`` with the difference formed
without cancellation (:meth:`Activation.difference_moment`), so nothing is lost as ``c -> 1``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..records import Record
from .activation import variance_array
from .activations import get_activation
from .checks import check_weights
from .gaussian import correlation_parts

__all__ = ["q_map", "c_map", "eps_map", "chi1", "chi_c", "chi_q", "Iterates"]


def _prepare(act, sw2, sb2):
    return get_activation(act), *check_weights(sw2, sb2)


def q_map(act, q, sw2, sb2):
    """``sw2 E[phi(sqrt(q) z)^2] + sb2``, vectorised over ``q``.

    >>> float(q_map("relu", 2.0, sw2=2.0, sb2=0.5))
    2.5
    """
    act, sw2, sb2 = _prepare(act, sw2, sb2)
    return sw2 * act.second_moment(q) + sb2


def eps_map(act, eps, q, sw2, sb2):
    """``1 - c_{l+1}`` from ``eps = 1 - c_l`` at equal variances ``q``; no digit lost as ``eps -> 0``."""
    act, sw2, sb2 = _prepare(act, sw2, sb2)
    q = variance_array(q)
    q_next = sw2 * act.second_moment(q) + sb2
    diff = sw2 * act.difference_moment(q, eps=eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        # both inputs zero (q = 0, sb2 = 0): the correlation is the limit q -> 0, eps unchanged
        return np.where(q_next > 0, diff / np.where(q_next > 0, q_next, 1.0), np.asarray(eps, dtype=float))


def c_map(act, c, q, sw2, sb2):
    """The correlation map ``c_{l+1}`` at equal variances ``q`` (see :func:`eps_map` near ``c = 1``).

    >>> round(float(c_map("linear", 0.5, 1.0, sw2=1.0, sb2=0.0)), 12)
    0.5
    """
    c, eps = correlation_parts(c=c)
    return 1.0 - eps_map(act, eps, q, sw2, sb2)


def chi1(act, q, sw2):
    """``chi_1 = sw2 E[phi'(sqrt(q) z)^2]``: c-map slope at ``c = 1``, gradient growth per layer."""
    act, sw2, _ = _prepare(act, sw2, 0.0)
    return sw2 * act.derivative_second_moment(q)


def chi_c(act, q, sw2, sb2, c=None, *, eps=None):
    """The c-map's slope ``dc_{l+1}/dc_l = sw2 q E[phi'(u1) phi'(u2)] / q_{l+1}`` at equal variances ``q``."""
    act, sw2, sb2 = _prepare(act, sw2, sb2)
    q = variance_array(q)
    q_next = sw2 * act.second_moment(q) + sb2
    slope = sw2 * q * act.derivative_cross_moment(q, q, c, eps=eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        # q = 0 with sb2 = 0: the limit q -> 0 of the slope, sw2 phi'(0)^2
        limit = sw2 * act.derivative_second_moment(q)
        return np.where(q_next > 0, slope / np.where(q_next > 0, q_next, 1.0), limit)


def chi_q(act, q, sw2):
    """The q-map's slope ``sw2 d/dq E[phi(sqrt(q) z)^2]``."""
    act, sw2, _ = _prepare(act, sw2, 0.0)
    return sw2 * act.second_moment_slope(q)


@dataclass(frozen=True, eq=False)
class Iterates(Record):
    """The variance ``q_l`` and correlation ``c_l`` (with ``eps_l = 1 - c_l``) for ``l = 0 .. depth``.

    An exploding variance is reported, never returned as inf or NaN: when ``q`` passes ``q_max``
    (or its Gaussian moments pass float64's range) the map stops there, ``stopped_at`` is that
    layer, ``reason`` says why, and the arrays end there (``layers = stopped_at`` instead of
    ``depth``), as in :class:`~depthdyn.meanfield.kernels.KernelTrajectory`. ``log_q`` is
    ``log q`` (``-inf`` where ``q = 0``).
    """

    activation: str
    sw2: float
    sb2: float
    family: str
    q: np.ndarray
    c: np.ndarray
    eps: np.ndarray
    log_q: np.ndarray
    depth: int
    stopped_at: int | None = None
    reason: str = ""
    params: dict = field(default_factory=dict)

    @property
    def layers(self) -> int:
        """Layers actually computed (``depth`` unless the map stopped)."""
        return len(self.q) - 1

    def _text(self) -> str:
        lines = [f"mean-field iterates of {self.activation} ({self.family}), sw2={self.sw2:g}, "
                 f"sb2={self.sb2:g}, depth {self.depth}"]
        shown = sorted(set(np.unique(np.linspace(0, self.layers, min(self.layers + 1, 6)).astype(int))))
        for layer in shown:
            lines.append(f"  l={layer:<5d} q={self.q[layer]:<14.6g} c={self.c[layer]:.12g}  "
                         f"1-c={self.eps[layer]:.6g}")
        if self.stopped_at is not None:
            lines.append(f"  {self.reason}: stopped at layer {self.stopped_at} of {self.depth}")
        return "\n".join(lines)

    def _latex(self) -> str:
        return rf"q_{{{self.layers}}} = {self.q[-1]:.6g},\ c_{{{self.layers}}} = {self.c[-1]:.12g}"
