"""The branch's covariance sums of one kernel layer, from the activation's Gaussian moments.

A layer of :mod:`depthdyn.meanfield.kernels` adds ``e e^T`` times the sums over the branch
inputs ``y_i`` of ``sw2 E[phi(y_i) phi(y_j)] + sb2`` (one input) and of the difference of the
one-input and two-input moments (the ``D = 2 (P - S)`` of two inputs). Same-lag pairs use
``E[phi^2]`` and the activation's accurate difference moment; pairs of different lags (dense
networks) use the bivariate moments, and where their two covariances are close the Hermite
series of the difference or Price's theorem, so that ``1 - c`` keeps its digits. An activation
``a + b y + s psi(k y)`` (:class:`~depthdyn.meanfield.reduced.Reduced`) takes ``psi``'s sums at the
covariances times ``k^2`` and adds the affine part's in closed form.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from . import hermite_rule, layer_series, mehler
from .activation import NEAR_ONE, Activation, near_or_series
from .memo import ActivationMemo
from .reduced import Reduced

__all__ = ["branch_moments", "single_branch_moments"]

# Gauss-Legendre nodes on [0, 1] for the covariance integral of a small difference.
_GL_T, _GL_W = np.polynomial.legendre.leggauss(10)
_GL_T, _GL_W = (_GL_T + 1) / 2, _GL_W / 2
_SMALL = 1e-3
_ULP = float(np.finfo(float).eps)


def _unit(eps):
    """``eps`` clipped to ``[0, 2]`` (ufuncs: ``np.clip``'s wrapper costs more than the work here)."""
    return np.minimum(np.maximum(eps, 0.0), 2.0)


def _price_difference(act, qi, qj, eps_lo, delta):
    """``M(eps_lo) - M(eps_lo + delta)`` for a small ``delta``, by Price's theorem.

    ``= sqrt(qi qj) int_0^delta E[phi' phi'](eps_lo + s) ds`` with ``s = delta t^2``, so that
    the ``sqrt(s)`` behaviour of kinked activations is smooth in ``t`` (Gauss-Legendre in t).
    """
    t = _GL_T[:, None]
    dd = act.derivative_cross_moment(qi[None], qj[None], eps=_unit(eps_lo + delta * t**2))
    return np.sqrt(qi * qj) * delta * np.sum(_GL_W[:, None] * 2 * t * dd, axis=0)


def _small_difference(act, qi, qj, eps_lo, delta):
    """``M(eps_lo) - M(eps_lo + delta)``: the Hermite series where it converges, else Price's theorem."""
    if getattr(act, "growth", None) is None:
        return _price_difference(act, qi, qj, eps_lo, delta)
    value, _, ok = mehler.cross_difference(act, qi, qj, 1 - eps_lo, delta)
    if not ok.all():
        value[~ok] = _price_difference(act, qi[~ok], qj[~ok], eps_lo[~ok], delta[~ok])
    return value


def _difference(act, q, eps):
    """``E[phi(u)^2] - E[phi(u_a) phi(u_b)]`` at variance ``q``, correlation ``1 - eps``, accurately."""
    if getattr(act, "growth", None) is not None:  # the Hermite series directly (the layer's hot path)
        value, _, ok = mehler.difference_moment(act, q, eps)
        if not ok.all():
            value[~ok] = act.difference_moment(q[~ok], eps=eps[~ok])
        return value
    if hasattr(act, "difference_moment"):
        return np.asarray(act.difference_moment(q, eps=eps), dtype=float)
    small = eps < _SMALL
    out = np.asarray(act.cross_moment(q, q, eps=0 * eps) - act.cross_moment(q, q, eps=eps), dtype=float)
    if small.any():
        out = np.where(small, _price_difference(act, q, q, 0 * eps, eps), out)
    return out


def _second(act, q):
    """``E[phi(sqrt(q) z)^2]``."""
    if getattr(act, "growth", None) is not None and type(act).second_moment is Activation.second_moment:
        value, _, ok = mehler.second_moment(act, q)
        if not ok.all():
            value[~ok] = act.second_moment(q[~ok])
        return value
    return act.second_moment(q) if hasattr(act, "second_moment") else act.cross_moment(q, q, eps=0 * q)


def _series(act) -> bool:
    """``E[phi^2]`` and the difference moment come from the Hermite series (a growth bound, and no
    closed form of the q-map)."""
    return getattr(act, "growth", None) is not None and type(act).second_moment is Activation.second_moment


def _diagonal(act, q, eps):
    """``(_second, _difference)`` of the same variances, from one Hermite record where there is one."""
    if getattr(act, "growth", None) is None or type(act).second_moment is not Activation.second_moment:
        return _second(act, q), _difference(act, q, eps)
    second, second_ok, difference, difference_ok = mehler.diagonal_moments(act, q, eps)
    if not second_ok.all():
        second[~second_ok] = act.second_moment(q[~second_ok])
    if not difference_ok.all():
        difference[~difference_ok] = act.difference_moment(q[~difference_ok], eps=eps[~difference_ok])
    return second, difference


def _cross(act, q1, q2, eps):
    """``E[phi(u1) phi(u2)]``: the Hermite series directly where the activation has one, then its own
    method near ``c = 1`` (if any)."""
    if getattr(act, "growth", None) is None:
        return act.cross_moment(q1, q2, eps=eps)
    value, _, ok = near_or_series(act, lambda a, x, y, c, e: mehler.cross_moment(a, x, y, c),
                                  getattr(act, "cross_near_one", None), q1, q2, 1.0 - eps, eps)
    if not ok.all():
        value[~ok] = act.cross_moment(q1[~ok], q2[~ok], eps=eps[~ok])
    return value


@cache
def _pairs(r: int) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray, np.ndarray]:
    """The pairs ``i < j`` of ``r`` lags, and the lags of ``(diagonal, pairs, pairs)`` in one call."""
    iu = np.triu_indices(r, 1)
    lags = np.arange(r)
    return iu, np.concatenate((lags, iu[0], iu[0])), np.concatenate((lags, iu[1], iu[1]))


def branch_moments(act, gain2, bias2, qd, QP, QD):
    """Branch covariance sums: ``sum_ij G`` over the P pairs and ``2 gain2 sum_ij [M(P) - M(S)]``.

    Same-lag pairs (the diagonal) use the one-variable ``E[phi^2]`` and the activation's
    accurate difference moment; pairs of different lags (dense networks) use the bivariate
    moments, and Price's theorem where the two covariances are close.
    """
    r = qd.size
    if isinstance(act, Reduced):  # a + b y + s psi(k y): psi's sums, and the affine part's in closed form
        a, b, s, k = act.parts
        k2 = k * k
        scaled = (qd, QP, QD) if k2 == 1.0 else (k2 * qd, k2 * QP, k2 * QD)
        sum_p, sum_d = branch_moments(act.inner, gain2 * s * s, 0.0, *scaled)
        if b:  # the line's covariances
            # (sums of a few Python floats: NumPy's reduction costs more than these k^2 additions)
            sum_p, sum_d = (sum_p + gain2 * b * b * sum(QP.ravel().tolist()),
                            sum_d + gain2 * b * b * sum(QD.ravel().tolist()))
        return sum_p + gain2 * a * a * r * r + bias2 * r * r, sum_d
    if r == 1 and qd[0] > 0:
        return single_branch_moments(act, gain2, bias2, float(qd[0]), float(QD[0, 0]))
    if r == 1:
        second, difference = _diagonal(act, qd, _unit(QD.diagonal() / (2 * qd)))
        return gain2 * float(second.sum()) + bias2, 2 * gain2 * float(difference.sum())
    q = qd.tolist()
    if min(q) > 0:  # the lags' numbers as floats (a few lags: NumPy's cost per call dominates)
        sum_p, sum_d = _lag_sums(act, q, QP.tolist(), QD.tolist())
        return gain2 * sum_p + bias2 * r * r, 2 * gain2 * sum_d
    iu, first, second = _pairs(r)
    root = np.sqrt(qd[iu[0]] * qd[iu[1]])
    eps = _unit(QD.diagonal() / (2 * qd))
    eps_p, delta = _unit(1 - QP[iu] / root), QD[iu] / (2 * root)
    eps_s = _unit(eps_p + delta)
    m = iu[0].size
    if getattr(act, "closed_form", False):
        # one call for the diagonal's E[phi^2] and both covariances (the per-call overhead dominates)
        every = act.cross_moment(qd[first], qd[second], eps=np.concatenate((0 * qd, eps_p, eps_s)))
        sum_p, both = float(every[:r].sum()), every[r:]
        sum_d = float(_difference(act, qd, eps).sum())
    else:
        both = _cross(act, qd[first[r:]], qd[second[r:]], np.concatenate((eps_p, eps_s)))
        diagonal, difference = _diagonal(act, qd, eps)
        sum_p, sum_d = float(diagonal.sum()), float(difference.sum())
    mp, diff = both[:m], both[:m] - both[m:]
    small = np.abs(delta) < _SMALL
    if small.any():
        diff = np.where(small, _small_difference(act, qd[iu[0]], qd[iu[1]], eps_p, delta), diff)
    return gain2 * (sum_p + 2 * float(mp.sum())) + bias2 * r * r, 2 * gain2 * (sum_d + 2 * float(diff.sum()))


#: The moments of the last pairs of lags and of single lags met, by their exact inputs: a dense
#: network's lags shift by one per layer, so all but the newest lag's pairs were met a layer before.
_memo = ActivationMemo(256)


def _lag_sums(act, q: list, P: list, D: list) -> tuple[float, float]:
    """``sum_ij M(P_ij)`` and ``sum_ij [M(P_ij) - M(S_ij)]`` over the lags (all ``q > 0``), Python floats.

    A pair's moments depend on ``(q_i, q_j, P_ij, D_ij)`` alone and a lag's on ``(q_i, D_ii)``: those
    met before (a dense network's older lags) are recalled, the rest computed in one call.
    """
    r, kept = len(q), _memo.of(act)
    pairs, pending, lags, fresh = [], [], [], []
    for i in range(r):
        for j in range(i + 1, r):
            key = (q[i], q[j], P[i][j], D[i][j])
            pairs.append(kept.get(key))
            if pairs[-1] is None:
                pending.append((i, j, key, len(pairs) - 1))
    for i in range(r):
        key = (q[i], D[i][i])
        lags.append(kept.get(key))
        if lags[-1] is None:
            fresh.append((i, key))
    if pending or fresh:
        new_pairs, new_lags = _new_moments(act, q, P, D, [p[:2] for p in pending], [i for i, _ in fresh])
        for (_, _, key, k), moments in zip(pending, new_pairs, strict=True):
            pairs[k] = kept.put(key, moments)
        for (i, key), moments in zip(fresh, new_lags, strict=True):
            lags[i] = kept.put(key, moments)
    sum_p = sum_d = 0.0
    for mp, diff in pairs:  # in one order, whichever were recalled
        sum_p, sum_d = sum_p + 2 * mp, sum_d + 2 * diff
    for second, difference in lags:
        sum_p, sum_d = sum_p + second, sum_d + difference
    return sum_p, sum_d


def _new_moments(act, q: list, P: list, D: list, pairs: list, lags: list):
    """``[(M(P_ij), M(P_ij) - M(S_ij))]`` of the ``pairs`` ``(i, j)`` and ``[(E[phi^2], difference)]`` of
    the ``lags``: an odd or even activation's in one call of the series (a lag's difference as
    ``E[phi^2] - E[phi(u) phi(u')]`` where that is within its bound), the rest one by one."""
    i, j = [a for a, _ in pairs], [b for _, b in pairs]
    roots = [math.sqrt(q[a] * q[b]) for a, b in pairs]
    eps_p = [min(max(1 - P[a][b] / root, 0.0), 2.0) for (a, b), root in zip(pairs, roots, strict=True)]
    delta = [D[a][b] / (2 * root) for (a, b), root in zip(pairs, roots, strict=True)]
    eps_s = [min(max(e + d, 0.0), 2.0) for e, d in zip(eps_p, delta, strict=True)]
    eps, eps_lag = eps_p + eps_s, [min(max(D[a][a] / (2 * q[a]), 0.0), 2.0) for a in lags]
    m, (kind, odd), found = len(pairs), _kind(act), {}
    if not (m or odd is not None):
        both = []  # no pairs, and no series for the lags: they take their own path below
    elif kind == "pair":  # closed forms written for one point (erf)
        both = [act.pair_moment(q[a], q[b], e) for a, b, e in zip(i + i, j + j, eps, strict=True)]
    elif kind == "closed":
        both = act.cross_moment(np.array([q[a] for a in i] * 2), np.array([q[b] for b in j] * 2),
                                eps=np.array(eps)).tolist()
    elif odd is not None:  # every lag's record of its parity's coefficients (or of all)
        rho = [1.0 - e for e in eps + eps_lag]
        top = max(max(rho), -min(rho))
        order = full = hermite_rule.order_of(max(q), top, more=True)
        if m:  # fewer terms where an older lag's record says its tail is that small (a dense layer)
            order = layer_series.least_order(act, q[j[0]], odd, top, full)
        both, errors, ok = layer_series.cross_moments(act, q, odd, order, i + i + lags, j + j + lags, rho)
        if order < full and not all(ok):  # the new lag's tail was not as small: the order |rho|^N asks
            order = full
            both, errors, ok = layer_series.cross_moments(act, q, odd, order, i + i + lags, j + j + lags, rho)
        failed = [k for k in range(2 * m) if not ok[k]]
        if failed:  # the activation's own method near c = 1, then the quadrature (the series declined them)
            qa, qb = np.array([q[(i + i)[k]] for k in failed]), np.array([q[(j + j)[k]] for k in failed])
            e = np.array([eps[k] for k in failed])
            near = getattr(act, "cross_near_one", None)
            value, _, good = near_or_series(act, _declined, near, qa, qb, 1 - e, e)
            if not good.all():
                value[~good] = act.cross_moment(qa[~good], qb[~good], eps=e[~good])
            for k, v in zip(failed, value.tolist(), strict=True):
                both[k] = v
        for a, value, error in zip(lags, both[2 * m:], errors[2 * m:], strict=True):
            series = layer_series.layer_series(act, q[a], order, odd)
            difference = series.m0 - value  # the far sum: E[phi^2] - sum b_n^2 rho^n
            # the sum's bound (its rounding too), E[phi^2]'s, and the subtraction's rounding
            bound = error + series.m0_err + 2 * _ULP * abs(difference)
            if series.m0_err <= mehler.RTOL * series.m0 and bound <= mehler.RTOL * max(difference, 1e-300):
                found[a] = (series.m0, difference)
    else:
        both = _cross(act, np.array([q[a] for a in i] * 2), np.array([q[b] for b in j] * 2),
                      np.array(eps)).tolist()
    diff = [both[k] - both[m + k] for k in range(m)]
    small = [k for k in range(m) if abs(delta[k]) < _SMALL]
    if small:  # close covariances: their difference without the cancellation
        qi, qj = np.array([q[i[k]] for k in small]), np.array([q[j[k]] for k in small])
        near = _small_difference(act, qi, qj, np.array([eps_p[k] for k in small]),
                                 np.array([delta[k] for k in small]))
        for k, value in zip(small, near.tolist(), strict=True):
            diff[k] = value
    # after the pairs: a lag's own moments reuse the coefficients its pairs needed
    moments = [found[a] if a in found else _single_diagonal(act, q[a], e)
               for a, e in zip(lags, eps_lag, strict=True)]
    return list(zip(both[:m], diff, strict=True)), moments


def _kind(act) -> tuple[str | None, int | None]:
    """How a dense layer takes the moments of ``act``'s pairs of lags: ``("pair", _)`` (closed forms for
    one point), ``("closed", _)`` (closed forms on arrays), else ``(None, odd)`` with the records' parity
    (:data:`~depthdyn.meanfield.layer_series.BOTH` for neither) where the Hermite series serves, ``None``
    where it does not. Kept per activation (asked for at every layer)."""
    kind = _memo.get(act, "kind")
    if kind is None:
        odd = None
        if _series(act):  # the records of the parity's degrees, or of every degree for neither parity
            odd = layer_series.parity_of(act)
            odd = layer_series.BOTH if odd is None else odd
        name = ("pair" if hasattr(act, "pair_moment") else "closed" if getattr(act, "closed_form", False)
                else None)
        kind = _memo.put(act, "kind", (name, odd))
    return kind


def _declined(act, q1, q2, c, eps):
    """A series that certifies none of the points (:func:`~depthdyn.meanfield.activation.near_or_series`'s
    first step, where the records' series has already declined them)."""
    return np.zeros(q1.shape), np.full(q1.shape, np.inf), np.zeros(q1.shape, dtype=bool)


def single_branch_moments(act, gain2: float, bias2: float, q: float, d: float) -> tuple[float, float]:
    """:func:`branch_moments` of a branch with one input of variance ``q > 0`` and ``D``-entry ``d``.

    Python floats in and out: most families' layers have one branch input, and NumPy's cost per
    call on one-element arrays would be most of their work.
    """
    eps = min(max(d / (2 * q), 0.0), 2.0)
    if isinstance(act, Reduced):  # a + b y + s psi(k y): E[phi^2] = a^2 + b^2 q + s^2 E[psi^2], and so on
        a, b, s, k = act.parts
        second, difference = _single_diagonal(act.inner, k * k * q, eps)
        s2 = s * s
        return (gain2 * (a * a + b * b * q + s2 * second) + bias2,
                2 * gain2 * (b * b * q * eps + s2 * difference))
    second, difference = _single_diagonal(act, q, eps)
    return gain2 * second + bias2, 2 * gain2 * difference


def _single_diagonal(act, q: float, eps: float) -> tuple[float, float]:
    """:func:`_diagonal` of one variance (Python floats)."""
    if q <= 0:
        return tuple(float(x.reshape(-1)[0]) for x in _diagonal(act, np.array([q]), np.array([eps])))
    if _series(act):
        second, second_ok, difference, difference_ok = mehler.diagonal_moments_scalar(act, q, eps)
        if not second_ok:
            second = float(act.second_moment(np.array([q]))[0])
        near_one = getattr(act, "difference_near_one", None)  # the activation's own (SELU: Price's theorem)
        if not difference_ok and near_one is not None and eps <= NEAR_ONE:
            near, bound = near_one(np.array([q]), np.array([eps]))
            difference_ok = bound[0] <= mehler.RTOL * max(near[0], 1e-300)
            difference = float(near[0]) if difference_ok else difference
        if not difference_ok:
            difference = float(act.difference_moment(np.array([q]), eps=np.array([eps]))[0])
    elif hasattr(act, "layer_moments"):  # closed forms written for one point (erf)
        second, difference = act.layer_moments(q, eps)
    else:
        second, difference = (float(x.reshape(-1)[0]) for x in _diagonal(act, np.array([q]), np.array([eps])))
    return second, difference
