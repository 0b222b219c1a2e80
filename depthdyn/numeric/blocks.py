"""Nonlinear depth blocks simulated layer by layer with a user block ``f``.

Each family's update is written out with a vectorised callable ``f`` in place of the
linearised ``lam``; with ``f(x) = lam * x`` every block reproduces the linear recurrence
of :mod:`depthdyn.families` (tested against :func:`~depthdyn.numeric.simulate.simulate`).
"""

from __future__ import annotations

from math import comb

import numpy as np

from ..errors import ParameterError, ShapeError
from .simulate import (
    DEFAULT_THRESHOLD,
    SimulationOverflowError,
    Trajectory,
    as_numeric,
    bad_entries,
    checked_depth,
    overflow_report,
    row_ok,
)

__all__ = ["BLOCKS", "simulate_block"]

#: Nonlinear blocks :func:`simulate_block` runs: name -> (parameters, update).
BLOCKS = {
    "residual": ((), "x' = x + f(x)"),
    "rezero": (("a",), "x' = x + a f(x)"),
    "weighted": (("a",), "x' = a x + f(x)"),
    "highway": (("g",), "x' = (1 - g) x + g f(x)"),
    "momentum": (("m", "eta", "v0"), "v' = m v + eta f(x), x' = x + v' (v_0 = x_0 - x_{-1}, default 0)"),
    "smooth": (("k", "h", "history"), "sum_i (-1)^i C(k,i) x[l+1-i] = h^k f(x[l])"),
    "dense": (("k", "h", "history"), "x[l+1] = x[l+1-k] + h sum_{j<k} f(x[l-j])"),
    "entangled": (("Gamma",), "x' = Gamma x + f(x) (features on the last axis)"),
    "hyper_connection": (
        ("H_res", "H_pre", "H_post"),
        "X' = H_res X + H_post^T f(H_pre X), X[..., stream, channel]",
    ),
}
_OPTIONAL = {"v0", "k", "history"}


def _checked(family: str, f, x):
    y = np.asarray(f(x))
    if y.shape != np.shape(x):
        raise ShapeError(f"f must keep its input's shape {np.shape(x)} ({family} block), got {y.shape}")
    return y


def _block_params(family: str, params: dict) -> dict:
    """Validate block parameters against the family's domains (through its Recurrence)."""
    from .. import families
    from .bridge import prepare_values

    if family not in BLOCKS:
        raise ParameterError(f"unknown block family {family!r}; choose one of {', '.join(BLOCKS)}")
    names = BLOCKS[family][0]
    unknown = sorted(set(params) - set(names))
    missing = [n for n in names if n not in params and n not in _OPTIONAL]
    if unknown or missing:
        raise ParameterError(
            f"simulate_block({family!r}) takes {list(names) or 'no parameters'}; "
            + (f"unknown {unknown}" if unknown else f"missing {missing}")
        )
    out = dict(params)
    if family in ("entangled", "hyper_connection"):
        for key in names:
            out[key] = as_numeric(key, params[key])
        return out
    k = {"k": params.get("k", 2)} if family in ("smooth", "dense") else {}
    rec = getattr(families, family)(**k)
    scalars = {n: params[n] for n in names if n in rec.param_names}
    arrays, _ = prepare_values(rec, {"lam": 0.0, **scalars})
    out.update({n: arrays[n] for n in scalars})
    out["k"] = rec.order
    return out


def _step(family: str, f, P: dict, hist: list, extra: dict):
    """The next state from ``hist`` (oldest first); ``extra`` carries velocity / f history."""
    x = hist[-1]
    if family == "residual":
        return x + _checked(family, f, x)
    if family == "rezero":
        return x + P["a"] * _checked(family, f, x)
    if family == "weighted":
        return P["a"] * x + _checked(family, f, x)
    if family == "highway":
        return (1 - P["g"]) * x + P["g"] * _checked(family, f, x)
    if family == "momentum":
        extra["v"] = P["m"] * extra["v"] + P["eta"] * _checked(family, f, x)
        return x + extra["v"]
    if family == "smooth":
        k = P["k"]
        acc = P["h"] ** k * _checked(family, f, x)
        for i in range(1, k + 1):
            acc = acc - (-1) ** i * comb(k, i) * hist[-i]
        return acc
    if family == "dense":
        extra["f"] = (extra["f"] + [_checked(family, f, x)])[-P["k"] :]
        return hist[-P["k"]] + P["h"] * sum(extra["f"][1:], extra["f"][0])
    if family == "entangled":
        return x @ P["Gamma"].T + _checked(family, f, x)
    pre = np.einsum("j,...jd->...d", P["H_pre"], x)
    mixed = np.einsum("ij,...jd->...id", P["H_res"], x)
    return mixed + P["H_post"][:, None] * _checked(family, f, pre)[..., None, :]


def simulate_block(
    family: str, f, x0, L, *, full: bool = True, threshold: float = DEFAULT_THRESHOLD, **params
) -> Trajectory:
    """Simulate a nonlinear block ``f`` of one of the families in :data:`BLOCKS`.

    Parameters
    ----------
    family : str
        ``residual``, ``rezero``, ``weighted``, ``highway`` (first order), ``momentum``,
        ``smooth`` (``C^k``), ``dense`` (``k`` lags), ``entangled`` or ``hyper_connection``.
    f : callable
        Vectorised block: maps an array to an array of the same shape (applied to the
        whole batch at once; for ``hyper_connection`` to ``H_pre X``).
    x0 : array_like
        ``x_0`` (any shape; ``(..., n)`` for ``entangled``, ``(..., n, d)`` for
        ``hyper_connection``).
    L : int
        Number of layers.
    **params
        The family's parameters as scalars or arrays broadcasting with ``x0`` (``m``,
        ``eta``, ``a``, ``g``, ``h``; matrices ``Gamma``, ``H_res``, ``H_pre``, ``H_post``),
        structural ``k`` (default 2), and initial data: ``v0`` for ``momentum`` (backward
        velocity ``v_0 = x_0 - x_{-1}``, default 0) and ``history`` for ``smooth`` / ``dense``
        (``x_{-1}, ..., x_{-(k-1)}``, most recent first; default ``x_0`` repeated).

    Returns
    -------
    Trajectory
        ``values[l] = x_l`` when ``full``, and ``final = x_L``.

    Raises
    ------
    SimulationOverflowError
        At the first layer where a state entry is non-finite or exceeds ``threshold``.
    ParameterError, DomainError, ShapeError
        Unknown family or parameters, values outside the family's domains, or an ``f``
        that changes the shape.

    Examples
    --------
    >>> import numpy as np
    >>> res = simulate_block("momentum", np.tanh, np.array([1.0, -2.0]), 50, m=0.5, eta=0.1)
    >>> res.values.shape
    (51, 2)
    """
    L = checked_depth(L)
    P = _block_params(family, params)
    x = as_numeric("x0", x0)
    k = P.get("k", 1) if family in ("smooth", "dense") else 1
    history = [as_numeric("history", h) for h in params.get("history", [x] * (k - 1))]
    if len(history) != k - 1:
        raise ParameterError(f"history must hold the {k - 1} values x_-1 .. x_-{k - 1}, got {len(history)}")
    hist = [np.broadcast_to(h, x.shape) for h in history[::-1]] + [x]
    past_f = [_checked(family, f, h) for h in hist[:-1]] if family == "dense" else []
    extra = {"v": as_numeric("v0", params.get("v0", 0.0)), "f": past_f}
    out = np.empty((L + 1,) + x.shape, x.dtype) if full else None
    with np.errstate(over="ignore", invalid="ignore"):
        for l in range(L + 1):  # noqa: E741 - the layer index
            if l:
                new = np.asarray(_step(family, f, P, hist, extra))
                if new.shape != x.shape:
                    raise ShapeError(
                        f"parameters change the state's shape {x.shape} to {new.shape}; "
                        "give x0 the full batch shape"
                    )
                hist = (hist + [new])[-max(k, 1) :]
            if not row_ok(np.ascontiguousarray(hist[-1]), threshold):
                bad = bad_entries(hist[-1], threshold, False)
                raise SimulationOverflowError(overflow_report(l, bad, x.shape, threshold))
            if full:
                out[l] = hist[-1]
    return Trajectory(out, np.array(hist[-1]), L, f"{family} block: {BLOCKS[family][1]}", family)
