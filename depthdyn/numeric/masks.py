"""Vectorised stability masks without root finding.

A batched **Schur–Cohn** recursion (:func:`schur_cohn`) decides "all roots inside the unit
circle" exactly, without computing a root: with ``p`` monic, ``|a_n| < 1`` and the
degree-``(n-1)`` polynomial ``(p - a_n p*) / z`` stable, where
``p*(z) = z^n conj(p(1/conj z))``. Non-finite coefficients (an overflow such as ``a**2 - b**2`` at
``a = b = 1e200``) raise :class:`~depthdyn.errors.ParameterError` rather than read as
"unstable". The singular case ``|a_n| = 1`` is resolved exactly:
if ``p - a_n p* = 0`` the polynomial is self-inversive and it satisfies the root condition
(all roots on the circle and simple) iff ``p'`` is strictly stable (Cohn); otherwise
neither verdict holds. Complex coefficients are allowed; for real ones the recursion
is the Jury table.

:func:`stability_mask` applies it to a recurrence over a batch of parameter values,
through the characteristic polynomial (``det`` for matrix families). Work is done in
chunks of rows, so extra memory stays at a few chunk-sized buffers plus the output masks.

The 2-D stability regions (boundary locus, winding-number fill,
:class:`~depthdyn.numeric.region.StabilityRegion`) are built on these helpers in
:mod:`depthdyn.numeric.region`.
"""

from __future__ import annotations

import functools

import numpy as np

from ..errors import ParameterError, ShapeError
from .bridge import compile_entries, prepare_values

__all__ = ["schur_cohn", "stability_mask"]
_CHUNK = 1 << 15  # points per chunk: the buffers of one chunk stay in the L2 cache


def schur_cohn_chunk(cols: list, shape: tuple, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Strict and marginal verdicts for one chunk; ``cols`` are ``a_0..a_n`` (broadcastable)."""
    n = len(cols) - 1
    for c in cols:  # a NaN would compare False everywhere below: a silent "unstable"
        if not np.isfinite(c).all():
            bad = int(np.count_nonzero(~np.isfinite(np.broadcast_to(c, shape))))
            raise ParameterError(
                f"the characteristic polynomial has NaN or infinite coefficients at {bad} point(s) "
                "(overflow while evaluating them, or non-finite input): no stability verdict exists "
                "there; restrict or rescale the parameter range")
    alive = np.ones(shape, dtype=bool)
    deriv = np.zeros(shape, dtype=bool)
    with np.errstate(all="ignore"):
        a0 = cols[0]
        if np.ndim(a0) == 0 and a0 == 1:
            a = list(cols[1:])
        else:
            alive &= np.asarray(a0) != 0  # the degree drops: a root at infinity
            inv0 = 1 / np.where(a0 == 0, 1, a0)
            a = [c * inv0 for c in cols[1:]]
        cplx = any(np.iscomplexobj(c) for c in a)
        for deg in range(n, 0, -1):
            an = a[deg - 1]
            d = 1 - (an.real * an.real + an.imag * an.imag if cplx else an * an)
            cont, sing = d > tol, np.abs(d) <= tol
            alive &= cont | sing
            inv = np.where(cont, 1 / np.where(cont, d, 1), 0)
            new = [
                (a[j - 1] - an * (np.conj(a[deg - j - 1]) if cplx else a[deg - j - 1])) * inv
                for j in range(1, deg)
            ]
            todo = sing & alive
            if np.any(todo):
                new = [np.array(np.broadcast_to(c, shape)) for c in new]
                todo = np.broadcast_to(todo, shape)
                alive[todo & deriv] = False  # strict(p') fails: p had a multiple unit root
                todo = todo & ~deriv
                full = [np.broadcast_to(c, shape)[todo] for c in a[:deg]]
                scale = 1 + np.max([np.abs(c) ** 2 for c in full], axis=0)
                tp = [full[j - 1] - full[deg - 1] * np.conj(full[deg - j - 1]) for j in range(1, deg)]
                selfinv = (
                    np.all([np.abs(b) <= tol * scale for b in tp], axis=0)
                    if tp
                    else np.ones(len(full[0]), bool)
                )
                where = np.flatnonzero(todo)
                alive.flat[where[~selfinv]] = False
                deriv.flat[where[selfinv]] = True
                for j in range(1, deg):  # p' / deg, monic
                    new[j - 1].flat[where[selfinv]] = full[j - 1][selfinv] * ((deg - j) / deg)
            a = new
    return alive & ~deriv, alive


def schur_cohn(coeffs, *, tol: float = 1e-12) -> tuple[np.ndarray, np.ndarray]:
    """Strict and marginal stability of a batch of polynomials, without roots.

    Parameters
    ----------
    coeffs : array_like
        ``batch + (p + 1,)`` coefficients, highest power first (real or complex).
    tol : float
        ``|a_n|^2`` within ``tol`` of ``|a_0|^2`` (after normalisation) counts as equal.

    Returns
    -------
    strict, marginal : ndarray of bool
        ``strict``: all roots strictly inside the unit circle. ``marginal``: the root
        condition (all roots in the closed disk, those on the circle simple).

    Examples
    --------
    >>> s, m = schur_cohn([[1, -0.5], [1, -1.0], [1, -2.0], [1, 0.0]])
    >>> s.tolist(), m.tolist()
    ([True, False, False, True], [True, True, False, True])
    >>> schur_cohn([1, -2, 1])[1].item()  # (r - 1)^2: a double root on the circle
    False
    """
    try:
        a = np.asarray(coeffs)
    except ValueError as exc:  # ragged nested lists
        raise ShapeError(f"coefficients must be a rectangular array: {exc}") from None
    if a.dtype.kind not in "biufc":
        raise ParameterError(f"coefficients must be numeric, got dtype {a.dtype}")
    if a.ndim == 0 or a.shape[-1] < 2:
        raise ShapeError(f"coefficients must have shape batch + (p + 1,) with p >= 1, got {a.shape}")
    a = a.astype(np.result_type(a.dtype, np.float64), copy=False)
    batch = a.shape[:-1]
    flat = a.reshape(-1, a.shape[-1])
    strict = np.empty(flat.shape[0], dtype=bool)
    marginal = np.empty(flat.shape[0], dtype=bool)
    for s in range(0, flat.shape[0], _CHUNK):
        blk = flat[s : s + _CHUNK]
        cols = [np.ascontiguousarray(blk[:, j]) for j in range(blk.shape[1])]
        strict[s : s + _CHUNK], marginal[s : s + _CHUNK] = schur_cohn_chunk(cols, (blk.shape[0],), tol)
    return strict.reshape(batch), marginal.reshape(batch)


@functools.lru_cache(maxsize=64)
def charpoly_entries(rec) -> tuple:
    """Compiled coefficients of the characteristic polynomial (``det`` for matrix families)."""
    import sympy as sp

    from ..recurrence import r

    if rec.is_scalar:
        return tuple(e[0][0] for e in compile_entries(rec).entries)
    syms = [p.symbol for p in rec.params]
    out = []
    for c in sp.Poly(rec.charpoly(), r).all_coeffs():
        out.append(
            sp.lambdify(syms, c, modules="numpy")
            if c.free_symbols
            else complex(c).real
            if complex(c).imag == 0
            else complex(c)
        )
    return tuple(out)


def evaluate_entries(entries: tuple, args: list) -> list:
    """Each compiled entry at the parameter arrays ``args`` (constants as they are)."""
    with np.errstate(all="ignore"):
        return [e(*args) if callable(e) else e for e in entries]


def _rows(batch: tuple) -> tuple[int, int]:
    rest = int(np.prod(batch[1:])) if len(batch) > 1 else 1
    return batch[0], max(1, _CHUNK // max(rest, 1))


def chunked_mask(rec, arg_rows, batch: tuple, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Schur–Cohn over a batch, evaluating the coefficients chunk by chunk along axis 0."""
    entries = charpoly_entries(rec)
    strict = np.empty(batch, dtype=bool)
    marginal = np.empty(batch, dtype=bool)
    n0, step = _rows(batch)
    for s in range(0, n0, step):
        args = arg_rows(s, min(n0, s + step))
        shape = (min(n0, s + step) - s,) + batch[1:]
        cols = evaluate_entries(entries, args)
        strict[s : s + step], marginal[s : s + step] = schur_cohn_chunk(cols, shape, tol)
    return strict, marginal


def stability_mask(rec, values=None, *, tol: float = 1e-12, **kw) -> tuple[np.ndarray, np.ndarray]:
    """Strict and marginal stability of a recurrence over a batch of parameter values.

    Matrix recurrences are tested through their characteristic polynomial
    ``det(A_0 r^p + ... + A_p)``.

    Values are validated as in :func:`~depthdyn.numeric.bridge.batch_coefficients`; the
    coefficients are evaluated and tested chunk by chunk, never stored for the whole batch.

    Examples
    --------
    >>> from depthdyn import momentum
    >>> strict, marginal = stability_mask(momentum(), lam=[-1.0, 0.0, 0.5], m=0.5, eta=1)
    >>> strict.tolist(), marginal.tolist()
    ([True, False, False], [True, True, False])
    """
    arrays, batch = prepare_values(rec, values, **kw)
    shaped = (1,) if batch == () else batch
    comp = compile_entries(rec)
    padded = [
        np.reshape(arrays[n], (1,) * (len(shaped) - np.ndim(arrays[n])) + np.shape(arrays[n]))
        for n in comp.names
    ]

    def arg_rows(s, e):
        return [x if x.shape[0] == 1 else x[s:e] for x in padded]

    strict, marginal = chunked_mask(rec, arg_rows, shaped, tol)
    return strict.reshape(batch), marginal.reshape(batch)
