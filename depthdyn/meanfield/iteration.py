"""Iterating the mean-field maps over depth: the plain chain here, other families by their kernels.

``iterate(act, sw2, sb2, depth=L, q0=..., c0=...)`` runs the plain chain's maps of
:mod:`depthdyn.meanfield.maps` (carrying ``eps = 1 - c`` and ``log q``); for
``family != "plain"`` it hands over to :func:`depthdyn.meanfield.kernels.iterate_family`,
which owns every family's kernel recurrence.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import DomainError, ParameterError
from .activation import Activation
from .activations import get_activation
from .checks import as_variance, check_weights
from .gaussian import correlation_parts
from .kernels import Q_MAX, iterate_family
from .maps import Iterates

__all__ = ["iterate"]



def _check_depth(depth) -> int:
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)):
        if isinstance(depth, float) and depth.is_integer():
            depth = int(depth)
        else:
            raise ParameterError(f"depth must be a whole number, got {depth!r}")
    if depth < 0:
        raise DomainError(f"depth must be >= 0, got {depth}")
    if depth > 10_000_000:
        raise DomainError(f"depth {depth} is too large; give at most 10,000,000 layers")
    return int(depth)


def iterate(act, sw2, sb2, *, depth: int, q0: float = 1.0, c0: float | None = None, eps0: float | None = None,
            family: str = "plain", q_max: float = Q_MAX, **params):
    """Iterate the mean-field maps ``depth`` times from ``(q0, c0)``.

    Parameters
    ----------
    act : str, sympy.Expr, callable or Activation
        The activation (see :func:`get_activation`).
    sw2, sb2 : float
        Weight and bias variances (``sw2 > 0``, ``sb2 >= 0``).
    depth : int
        Number of layers ``L >= 0``; the arrays have ``L + 1`` entries.
    q0 : float
        The inputs' variance per unit.
    c0, eps0 : float, optional
        Their correlation, or ``eps0 = 1 - c0`` (more digits near 1); default ``c0 = 0.5``.
    family : str
        ``"plain"`` (this module) or a family of :mod:`depthdyn.meanfield.kernels`
        (``"residual"``, ...), to which ``**params`` go; the plain chain with ``norm="pre"`` or
        ``"post"`` (a LayerNorm) is the kernels' ``"plain"`` family too.
    q_max : float
        Where an exploding variance stops the map (at most
        :data:`depthdyn.limits.MAX_VARIANCE`): the record's ``stopped_at`` and ``reason`` say
        so, and its arrays end at that layer. Every family
        follows this convention; nothing is returned as inf or NaN.

    Returns
    -------
    Iterates
        (:class:`~depthdyn.meanfield.kernels.KernelTrajectory` for the other families.)

    Examples
    --------
    >>> it = iterate("relu", 2.0, 0.0, depth=3, q0=1.0, c0=0.0)
    >>> it.q.tolist()
    [1.0, 1.0, 1.0, 1.0]
    >>> round(float(it.c[1]), 12) == round(1 / 3.141592653589793, 12)
    True
    >>> it = iterate("relu", 3.0, 0.1, depth=100)  # q grows by 3/2 per layer
    >>> it.stopped_at, it.reason
    (45, 'exploding phase: q > q_max = 1e+08')
    """
    depth = _check_depth(depth)
    sw2, sb2 = check_weights(sw2, sb2)
    if c0 is None and eps0 is None:
        c0 = 0.5
    _, eps = correlation_parts(c0, eps0)
    q0 = as_variance(q0, "q0")
    q_max = as_variance(q_max, "q_max", positive=True)
    if family != "plain" or params.get("norm") is not None:  # a LayerNorm: the plain family's kernel map
        return iterate_family(act, sw2, sb2, depth=depth, q0=q0, eps0=float(eps), family=family, q_max=q_max,
                              **params)
    params.pop("norm", None)
    if params:
        raise ParameterError(f"the plain chain takes no parameters, got {', '.join(sorted(params))}; "
                             "activation parameters go to get_activation(name, ...)")
    act = get_activation(act)
    return _iterate_plain(act, sw2, sb2, depth, q0, 1.0 - float(eps) if c0 is None else float(c0), float(eps),
                          q_max)


def _iterate_plain(act: Activation, sw2: float, sb2: float, depth: int, q0: float, c0: float,
                   eps0: float, q_max: float) -> Iterates:
    log_q = np.empty(depth + 1)
    eps = np.empty(depth + 1)
    log_q[0] = math.log(q0) if q0 > 0 else -math.inf
    eps[0] = eps0
    growth = sw2 * float(act.second_moment(1.0)) if act.homogeneous else None
    log_max = math.log(q_max)
    stopped, reason, last = None, "", depth
    for layer in range(depth):
        lq, e = log_q[layer], eps[layer]
        if lq == -math.inf:  # q = 0: the next layer is the bias alone
            log_q[layer + 1] = math.log(sb2) if sb2 > 0 else -math.inf
            eps[layer + 1] = 0.0 if sb2 > 0 else e
        elif growth is not None:
            # homogeneous phi: q' = q (sw2 m + sb2 / q) and eps' = sw2 D(1, eps) / (sw2 m + sb2 / q), in logs
            ratio = growth + sb2 * math.exp(-lq)
            eps[layer + 1] = float(sw2 * act.difference_moment(1.0, eps=e)) / ratio
            log_q[layer + 1] = lq + math.log(ratio)
        else:
            q = math.exp(lq)
            try:
                q_next = float(sw2 * act.second_moment(q) + sb2)
                d = float(sw2 * act.difference_moment(q, eps=e))
            except DomainError:  # E[phi^2] past float64 (exp at q > 354): the variance explodes here
                reason = f"exploding phase: a Gaussian moment overflows float64 at q = {q:.6g}"
                stopped, last = layer, layer
                break
            eps[layer + 1] = d / q_next if q_next > 0 else e
            log_q[layer + 1] = math.log(q_next) if q_next > 0 else -math.inf
        if log_q[layer + 1] > log_max:
            stopped, reason, last = layer + 1, f"exploding phase: q > q_max = {q_max:g}", layer + 1
            break
    log_q, eps = log_q[: last + 1], eps[: last + 1]
    q = np.exp(log_q)
    c = 1.0 - eps
    c[0] = c0  # as given (1 - (1 - c0) may differ from c0 in the last bit)
    return Iterates(str(act), sw2, sb2, "plain", q, c, eps, log_q, depth, stopped, reason)
