"""Batched characteristic roots, spectral radius and dominant modes, with refinement.

Coefficient arrays are *monic* ``batch + (p + 1,)`` arrays as made by
:func:`~depthdyn.numeric.bridge.batch_coefficients` (``r**p + a_1 r**(p-1) + ... + a_p``;
a non-monic array is divided by its leading column) or, with ``matrix=True``,
``batch + (p + 1, n, n)`` arrays of ``A_0^{-1} A_j``.

Methods: closed forms for degree 1 and 2 (the quadratic with the cancellation-free
``q = -(b + s sqrt(b^2 - 4c))/2``, ``r_1 = q``, ``r_2 = c/q``, ``s`` aligning
``sqrt`` with ``b``, complex-safe); batched companion (block companion for matrix
coefficients) eigenvalues above that, in chunks of bounded memory.

Accuracy
--------
:func:`spectrum` polishes roots of degree >= 3 with one guarded Newton step and estimates
each root's relative error as ``8 p eps S_i / (|p'(r_i)| |r_i|)`` with
``S_i = sum_j |a_j| |r_i|^(p-j)`` and ``p'(r_i) = prod_{k != i} (r_i - r_k)`` (the
componentwise condition number). Points where an estimate exceeds ``tol`` (default
``1e-12``) are *flagged*: clustered or repeated roots, e.g. ``(r - 1)^k`` near ``lam = 0``.
Flagged points are *refined*: the characteristic polynomial is rebuilt exactly from the
parameter values (floats read as their exact binary values), split into square-free
factors, and each factor solved at rising precision until every root sits in a certified
inclusion disk of relative radius ``2**-60``
(:func:`~depthdyn.symbolic.circle.certified_roots`; coefficients of any scaling). So the
roots in :attr:`Spectrum.refined` are accurate to ``tol`` relative at unflagged points and
to double precision at refined ones. :func:`spectral_radius` flags and refines the same
way.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from ..errors import ParameterError
from ..records import Record
from ..recurrence import r as _r
from ..symbolic.circle import certified_roots
from .bridge import batch_coefficients, check_grid, prepare_values
from .companion import CHUNK_BYTES, block_companion, checked_coefficients, roots

__all__ = [
    "roots",
    "spectral_radius",
    "dominant_mode",
    "Spectrum",
    "spectrum",
]


class _Work:
    """Reusable flat float64 buffers, so chunk loops allocate (and page-fault) only once."""

    def __init__(self, count: int):
        self.bufs, self.count = [], count

    def get(self, shape: tuple) -> list:
        size = int(np.prod(shape))
        if not self.bufs or self.bufs[0].size < size:
            self.bufs = [np.empty(size) for _ in range(self.count)]
        return [buf[:size].reshape(shape) for buf in self.bufs]


def _radius_quadratic(b, c, work: _Work | None = None, tol: float | None = None):
    """``max |r|`` for ``r^2 + b r + c`` in real arithmetic (no complex sqrt).

    With ``D = b^2 - 4c`` and ``d = sqrt(D)`` aligned with ``b``, the larger-modulus
    root is ``q = -(b + d)/2``: ``|q|^2 = (|b|^2 + |D| + 2 |Re(conj(b) d)|) / 4``, a sum of
    non-negative terms, and it is the radius (the other root, ``c/q``, is not larger).
    ``sqrt(D)`` is formed from its larger component, without cancellation. The work is
    done in place in reused buffers: allocation, not arithmetic, dominates a chunk loop
    otherwise. With ``tol``, also the points near a double root that :func:`near_double`
    flags, from the same ``|D|``: ``|D| < (4 k |q|)^2`` (``|q| = (|b| + 2 sqrt|c|)/4`` there).
    """
    b, c = np.asarray(b), np.asarray(c)
    shape = np.broadcast_shapes(b.shape, c.shape)
    Br, Bi, B, Dr, H, A, S, T, X = (work or _Work(9)).get(shape)
    np.copyto(Br, b.real)  # contiguous copies: the parts of a complex array are strided
    np.copyto(Bi, b.imag if np.iscomplexobj(b) else 0.0)
    cr, ci = c.real, (c.imag if np.iscomplexobj(c) else 0.0)
    np.multiply(Br, Br, out=Dr)
    np.multiply(Bi, Bi, out=T)
    np.add(Dr, T, out=B)  # |b|^2
    Dr -= T
    Dr -= 4 * cr  # Re D
    np.multiply(Br, Bi, out=H)
    if np.any(ci):
        H -= 2 * ci  # H = Im(D) / 2
    np.multiply(Dr, Dr, out=A)
    np.multiply(H, H, out=T)
    T *= 4
    A += T
    np.sqrt(A, out=A)  # |D|
    np.abs(Dr, out=S)
    S += A
    S *= 0.5
    np.sqrt(S, out=S)  # the larger component of sqrt(D)
    np.abs(H, out=T)
    np.maximum(S, np.finfo(float).tiny, out=X)
    T /= X  # the smaller component (0 where D = 0)
    # sqrt(D) = (S, sgn T) if Re D >= 0 else (T, sgn S), with sgn = sign(Im D); branch-free:
    np.less(Dr, 0, out=Dr)
    np.subtract(T, S, out=X)
    X *= Dr
    X += S  # Re sqrt(D)
    T += S
    T -= X  # |Im sqrt(D)|
    np.copysign(T, H, out=T)
    T *= Bi
    X *= Br
    X += T
    np.abs(X, out=X)  # |Re(conj(b) d)|
    X *= 2
    X += B
    X += A
    X *= 0.25  # |q|^2, the larger root
    out = np.sqrt(X)
    if tol is None:
        return out
    k = 16 * np.finfo(float).eps / tol
    X *= 16 * k * k
    flags = np.less(A, X)
    flags &= out > 0
    return out, flags


def near_double(b, c, tol: float) -> np.ndarray:
    """Points of ``r^2 + b r + c`` whose roots float64 gets to worse than ``tol`` relative.

    The estimate of :func:`_relative_error`, ``8 p eps S / (|r_1 - r_2| |r|)`` with
    ``|r_1 - r_2| = sqrt|b^2 - 4c|``, matters only near a double root, where
    ``|r| ~ |b|/2 ~ sqrt|c|`` and ``S ~ 4 |r|^2``: there it exceeds ``tol`` iff
    ``|b^2 - 4c| < (64 eps / tol)^2 |r|^2``, with ``|r|`` taken as ``(|b| + 2 sqrt|c|)/4``.
    """
    k = 16 * np.finfo(float).eps / tol
    with np.errstate(all="ignore"):
        scale = np.abs(b) + 2 * np.sqrt(np.abs(c))
        return (np.abs(b * b - 4 * c) < (k * k) * (scale * scale)) & (scale > 0)


# the closed form squares |r|^2 once more: |r| in [2^-230, 2^230] keeps |r|^4 a normal float64
_TINY, _HUGE = 2.0**-230, 2.0**230


_NO_EXPONENT = -(1 << 20)  # the exponent given to 0: below every float64's


def _exponent(x) -> np.ndarray:
    """Binary exponent of ``|x|`` (``frexp``), of the larger part for complex ``x``; very
    negative (``_NO_EXPONENT``) for 0, so that a zero never sets a scale."""
    if np.iscomplexobj(x):
        return np.maximum(_exponent(x.real), _exponent(x.imag))
    return np.where(x != 0, np.frexp(x)[1], _NO_EXPONENT)


def _ldexp(x, k) -> np.ndarray:
    """``x * 2**k`` exactly (barring under/overflow), complex-safe."""
    if np.iscomplexobj(x):
        return np.ldexp(x.real, k) + 1j * np.ldexp(x.imag, k)
    return np.ldexp(x, k)


def _rescaled_quadratic(b, c, shape, where, rad, flags, tol: float):
    """Radius and flags at ``where`` from ``t^2 + (b/s) t + c/s^2``, ``r = s t``, ``s = 2^k``.

    ``k = max(e(b), ceil(e(c)/2))`` makes both coefficients at most 1 and one of them
    about 1, so the radius of the scaled quadratic lies in ``[1/8, 2]`` and none of its
    squares under- or overflows (``r^2 + 1e-300 r + 1e-300`` has radius 1e-150).
    """
    bb, cc = np.broadcast_to(b, shape)[where], np.broadcast_to(c, shape)[where]
    k = np.maximum(_exponent(bb), (_exponent(cc) + 1) // 2)
    k = np.where(k == _NO_EXPONENT // 2, 0, k)  # b = c = 0: radius 0 at any scale
    bs, cs = _ldexp(bb, -k), _ldexp(cc, -2 * k)
    rad, flags = np.array(rad, dtype=float), np.array(flags)  # copies (0-d for a single point)
    small, small_flags = _radius_quadratic(bs, cs, None, tol)
    with np.errstate(over="ignore"):  # a radius past 1.8e308 is inf, reported by the caller
        rad[where] = np.ldexp(small, k)
    flags[where] = small_flags
    return rad, flags


def _scaled(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Monic ``a`` as ``2^(-j k) a_j`` (roots ``r / 2^k``) with ``k = ceil(max_j e(a_j) / j)``.

    The scaled roots then have modulus at most 2 (Fujiwara's bound ``2 max |a_j|^(1/j)``)
    and the largest is at least about ``1/(2p)``: companion eigenvalues, the Newton step and
    the error estimate's powers ``|r|^p`` stay in range whatever the coefficients' scale.
    """
    p = a.shape[-1] - 1
    j = np.arange(1, p + 1)
    k = np.ceil((_exponent(a[..., 1:]) / j).max(axis=-1)).astype(np.int64)
    k = np.where(k < _NO_EXPONENT // (2 * p), 0, k)  # all a_j = 0: every root is 0
    out = a.copy()
    out[..., 1:] = _ldexp(a[..., 1:], -(j * k[..., None]))
    return out, k


def radius_chunk(cols: list, work: _Work | None, tol: float,
                  radius_only: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Spectral radius of one chunk and the points where it cannot be trusted to ``tol``.

    Degree 2: the closed form and its near-double-root flag (:func:`_radius_quadratic`),
    rescaled by a power of two where the radius leaves ``[2^-230, 2^230]``; degree >= 3: polished companion
    roots of the rescaled polynomial (:func:`_scaled`) and the estimate of
    :func:`_relative_error` (the one :func:`spectrum` uses). With ``radius_only`` a
    point is flagged only if an uncertain root could be the largest: clustered roots well
    inside the radius cannot change it (``1e-20 r^3 + (r - 1)^2``).
    """
    a0 = cols[0]
    if not (np.ndim(a0) == 0 and a0 == 1):
        cols = [c / a0 for c in cols]
    shape = np.broadcast_shapes(*(np.shape(c) for c in cols))
    if len(cols) == 2:
        return np.abs(np.broadcast_to(cols[1], shape)), np.zeros(shape, bool)
    if len(cols) == 3:
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):  # redone below if so
            rad, flags = _radius_quadratic(cols[1], cols[2], work, tol)
        extreme = ~((rad > _TINY) & (rad < _HUGE))
        if extreme.any():
            rad, flags = _rescaled_quadratic(cols[1], cols[2], shape, extreme, rad, flags, tol)
        return rad, flags
    a, k = _scaled(np.stack([np.broadcast_to(c, shape) for c in cols], axis=-1))
    z = _polish(a, roots(a))
    mod = np.abs(z)
    rad = mod.max(axis=-1)
    err = _relative_error(a, z)
    if radius_only:
        # a root below rho/2 cannot become the largest: float64 resolves a cluster's centre,
        # its spread is a fraction of its modulus (the first-order estimate is inf there)
        top = rad[..., None]
        with np.errstate(invalid="ignore", over="ignore"):
            near = (mod >= 0.5 * top) | (np.isfinite(err) & (mod * (1 + err) >= top * (1 - tol)))
            flags = ((err > tol) & near).any(axis=-1)
    else:
        flags = (err > tol).any(axis=-1)
    with np.errstate(over="ignore"):
        return np.ldexp(rad, k), flags


def _refine_radius(out: np.ndarray, flags: np.ndarray, exact_poly_at, max_refine: int) -> None:
    """Overwrite the flagged radii by those of the exact polynomial's certified roots."""
    if not flags.any():  # the usual case; argwhere alone costs a few |z| passes
        return
    idx = np.argwhere(flags)
    if len(idx) > max_refine:
        raise ParameterError(
            f"{len(idx)} points have clustered or repeated roots that float64 cannot resolve "
            f"(more than max_refine={max_refine}); raise max_refine, or use spectrum() to see them")
    for pos in map(tuple, idx):
        out[pos] = max(abs(z) for z in _exact_roots(exact_poly_at(pos)))


def spectral_radius(coeffs, values=None, *, matrix: bool = False, tol: float = 1e-12,
                    max_refine: int = 1000, **kw) -> np.ndarray:
    """Largest root modulus at each point of a batch, refined where float64 is ill-conditioned.

    Parameters
    ----------
    coeffs : array_like or Recurrence
        Coefficients as for :func:`roots`, or a recurrence with its parameter values
        (``values`` / keywords, as for :func:`~depthdyn.numeric.bridge.batch_coefficients`);
        the recurrence path evaluates and reduces the coefficients chunk by chunk.
    matrix : bool
        Matrix coefficients (arrays only; no refinement).
    tol, max_refine
        As for :func:`spectrum`: points whose estimated relative error exceeds ``tol``
        (clustered or repeated roots) get the radius of the exact polynomial's certified
        roots, built from the parameter values (recurrence) or from the exact binary values
        of the float coefficients (arrays). More than ``max_refine`` such points raise
        :class:`~depthdyn.errors.ParameterError`.

    Degree 2 uses the closed form in real arithmetic, higher degrees polished companion
    eigenvalues; both with the error estimate of :func:`spectrum`, so the two agree.

    Examples
    --------
    >>> float(spectral_radius([1.0, 0.0, 0.25]))
    0.5
    >>> from depthdyn import momentum
    >>> spectral_radius(momentum(), lam=[-1.0, 0.0], m=0.25, eta=1).tolist()
    [0.5, 1.0]
    """
    from ..recurrence import Recurrence

    if isinstance(coeffs, Recurrence):
        return _radius_of(coeffs, values, tol, max_refine, **kw)
    if matrix:
        return np.abs(roots(coeffs, matrix=True)).max(axis=-1)
    a = checked_coefficients(coeffs, False)
    flat = a.reshape(-1, a.shape[-1])
    out, flags = np.empty(flat.shape[0]), np.empty(flat.shape[0], bool)
    step = max(1, (1 << 15) if a.shape[-1] <= 3 else CHUNK_BYTES // (16 * a.shape[-1] ** 2))
    work = _Work(9)
    for s in range(0, flat.shape[0], step):
        out[s : s + step], flags[s : s + step] = radius_chunk(
            [flat[s : s + step, j] for j in range(a.shape[-1])], work, tol, radius_only=True)
    _refine_radius(out, flags, lambda pos: sp.Poly([_exact(c) for c in flat[pos[0]]], _r), max_refine)
    _finite_roots(out)
    return out.reshape(a.shape[:-1])


def _finite_roots(out: np.ndarray) -> None:
    if not np.isfinite(out).all():
        raise ParameterError(
            f"the roots overflow float64 at {int((~np.isfinite(out)).sum())} point(s) (moduli above 1.8e308); "
            "rescale the coefficients or restrict the parameter range")


def _radius_of(rec, values, tol: float, max_refine: int, **kw) -> np.ndarray:
    from .bridge import compile_entries, prepare_given

    if not rec.is_scalar:
        spec = spectrum(rec, values, tol=tol, max_refine=max_refine, **kw)
        if spec.n_refined < int(spec.flagged.sum()):
            raise ParameterError(f"more than max_refine={max_refine} points need refinement; raise it")
        return spec.radius
    arrays, batch = prepare_given(rec, {**dict(values or {}), **kw}, check_finite=False)  # checked below
    shaped = batch or (1,)
    comp = compile_entries(rec)
    args = [
        np.reshape(arrays[n], (1,) * (len(shaped) - np.ndim(arrays[n])) + np.shape(arrays[n]))
        for n in comp.names
    ]
    rest = int(np.prod(shaped[1:]))
    step = max(1, (1 << 15) // max(rest, 1))
    out, flags = np.empty(shaped), np.empty(shaped, bool)
    work = _Work(9)
    for s in range(0, shaped[0], step):
        sub = [x if x.shape[0] == 1 else x[s : s + step] for x in args]
        with np.errstate(all="ignore"):
            cols = [e[0][0](*sub) if callable(e[0][0]) else e[0][0] for e in comp.entries]
        if np.ndim(cols[0]) or cols[0] != 1:
            if np.any(np.asarray(cols[0]) == 0):
                raise ParameterError(f"the leading coefficient of {rec.name} vanishes at some points")
        with np.errstate(all="ignore"):  # non-finite results are reported just below
            rad, flag = radius_chunk(cols, work, tol, radius_only=True)
            out[s : s + step], flags[s : s + step] = rad, flag
    if not np.isfinite(out).all():  # a NaN/inf value (the scan names it) or an overflow
        prepare_values(rec, values, **kw)
        raise ParameterError(
            f"the spectral radius of {rec.name} overflows at {int((~np.isfinite(out)).sum())} point(s); "
            "restrict the parameter range"
        )
    charpoly, symbols = rec.charpoly(), rec.symbols
    _refine_radius(out, flags, lambda pos: _exact_at(
        charpoly, symbols, {n: np.broadcast_to(arr, shaped)[pos] for n, arr in arrays.items()}), max_refine)
    return out.reshape(batch)


def dominant_mode(coeffs, *, matrix: bool = False) -> np.ndarray:
    """The root of largest modulus at each batch point.

    Ties within ``1e-12`` relative (conjugate pairs) go to the larger real part, then to
    the non-negative imaginary part, so a real dominant root is returned as real.

    Examples
    --------
    >>> dominant_mode([1.0, 0.0, 4.0])
    array(0.+2.j)
    """
    rts = roots(coeffs, matrix=matrix)
    mod = np.abs(rts)
    top = mod >= mod.max(axis=-1, keepdims=True) * (1 - 1e-12)
    score = np.where(top, rts.real + 1e-9 * np.sign(rts.imag) * mod, -np.inf)
    return np.take_along_axis(rts, score.argmax(axis=-1)[..., None], axis=-1)[..., 0]


# ------------------------------------------------------------------ conditioning
def _horner(a: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    v, d = np.ones_like(z), np.zeros_like(z)
    for j in range(1, a.shape[-1]):
        d = d * z + v
        v = v * z + a[..., j, None]
    return v, d


def _polish(a: np.ndarray, z: np.ndarray) -> np.ndarray:
    """One guarded Newton step per root (kept only where it lowers ``|p|``)."""
    with np.errstate(all="ignore"):
        v, d = _horner(a, z)
        new = z - v / d
        v2, _ = _horner(a, new)
        ok = np.isfinite(new) & (np.abs(v2) < np.abs(v))
    return np.where(ok, new, z)


def _relative_error(a: np.ndarray, z: np.ndarray) -> np.ndarray:
    """First-order relative error estimate of each root (see the module docstring)."""
    p = a.shape[-1] - 1
    mod = np.abs(z)
    S = np.zeros_like(mod)
    diff = z[..., :, None] - z[..., None, :]
    idx = np.arange(p)
    diff[..., idx, idx] = 1
    with np.errstate(all="ignore"):  # overflow makes the estimate inf: flagged, then refined
        for j in range(p + 1):
            S = S * mod + np.abs(a[..., j, None])
        dp = np.abs(np.prod(diff, axis=-1))
        est = 8 * p * np.finfo(float).eps * S / (dp * mod)
    est = np.where(S == 0, np.where(dp == 0, np.inf, 0.0), est)
    return np.where(np.isnan(est), np.inf, est)


def _matrix_eig_error(coeffs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Block companion eigenvalues and their error estimates relative to ``max(|z_i|, rho)``.

    The estimate is ``8 m eps ||C||_F kappa_i``, ``kappa_i = ||x_i|| ||y_i||`` the
    eigenvalue condition number from the right (``X``) and left (``X^{-1}``) eigenvectors;
    ``kappa = inf`` where ``X`` is numerically singular (a defective eigenvalue).
    """
    batch, (p1, n, _) = coeffs.shape[:-3], coeffs.shape[-3:]
    flat = coeffs.reshape((-1, p1, n, n))
    m = (p1 - 1) * n
    z = np.empty((flat.shape[0], m), dtype=complex)
    err = np.empty((flat.shape[0], m))
    step = max(1, CHUNK_BYTES // (16 * m * m * 4))
    eps = np.finfo(float).eps
    for start in range(0, flat.shape[0], step):
        C = block_companion(flat[start : start + step])
        w, X = np.linalg.eig(C)
        X = X / np.linalg.norm(X, axis=-2, keepdims=True)
        U, sv, Vh = np.linalg.svd(X)
        ok = sv[..., -1:] > 1e3 * eps * sv[..., :1]
        inv_sv = np.where(ok, 1 / np.where(ok, sv, 1.0), 0.0)
        # rows of X^{-1} = V diag(1/s) U^H; their norms give the left-vector factors
        Y = np.conj(np.swapaxes(Vh, -1, -2))[..., :, :] * inv_sv[..., None, :]
        Y = Y @ np.conj(np.swapaxes(U, -1, -2))
        kappa = np.where(ok, np.linalg.norm(Y, axis=-1), np.inf)
        rho = np.abs(w).max(axis=-1, keepdims=True)
        scale = np.maximum(np.abs(w), rho)
        with np.errstate(invalid="ignore", divide="ignore"):
            e = 8 * m * eps * np.linalg.norm(C, axis=(-2, -1))[:, None] * kappa / scale
        z[start : start + step] = w
        err[start : start + step] = np.where(np.isnan(e), np.where(rho == 0, 0.0, np.inf), e)
    return z.reshape(batch + (m,)), err.reshape(batch + (m,))


@dataclass(frozen=True, eq=False)
class Spectrum(Record):
    """Roots over a batch, with the points where float64 cannot be trusted.

    Attributes
    ----------
    roots : ndarray
        Float64 roots, ``batch + (p,)`` (polished; unsorted).
    refined : ndarray
        ``roots`` with flagged points replaced by the 50-digit values (NaN where a flagged
        point was beyond ``max_refine``).
    radius : ndarray
        Spectral radius from ``refined``.
    flagged : ndarray of bool
        Points whose estimated relative root error exceeds ``tol``.
    error : ndarray
        The per-root relative error estimate of ``roots``.
    """

    roots: np.ndarray
    refined: np.ndarray
    radius: np.ndarray
    flagged: np.ndarray
    error: np.ndarray
    tol: float
    dps: int
    n_refined: int
    method: str = field(default="")

    def _text(self) -> str:
        n, k = self.flagged.size, int(self.flagged.sum())
        lines = [
            f"spectrum: {n} point(s), {self.roots.shape[-1]} root(s) each ({self.method})",
            f"accuracy: relative error <= {self.tol:g} at unflagged points",
            f"flagged (clustered or repeated roots): {k}; refined (certified roots, from {self.dps} digits): "
            f"{self.n_refined}",
        ]
        if k > self.n_refined:
            lines.append(f"{k - self.n_refined} flagged point(s) left unrefined (NaN): raise max_refine")
        if self.radius.size:
            lines.append(
                f"spectral radius: min {np.nanmin(self.radius):.12g}, max {np.nanmax(self.radius):.12g}"
            )
        return "\n".join(lines)

    def _latex(self) -> str:
        return f"\\rho_{{\\max}} = {np.nanmax(self.radius):.12g}"


def _exact(value: complex) -> sp.Expr:
    value = complex(value)
    re = sp.Rational(*value.real.as_integer_ratio())
    im = sp.Rational(*value.imag.as_integer_ratio())
    return re + sp.I * im


def _exact_roots(poly: sp.Poly, dps: int = 30) -> list:
    """Roots of an exact polynomial to double precision: square-free factors, each solved
    with certified inclusion disks at rising precision (any coefficient scaling)."""
    out = []
    for factor, mult in sp.sqf_list(poly)[1]:
        out += certified_roots(factor, dps=dps) * mult
    return out


def _exact_at(charpoly: sp.Expr, symbols: dict, point: dict) -> sp.Poly:
    """The characteristic polynomial at one point, floats read as their exact binary values."""
    mapping = {symbols[name]: _exact(v) for name, v in point.items()}
    return sp.Poly(sp.expand(charpoly.xreplace(mapping)), _r)


def _refine(z: np.ndarray, idx, exact_poly_at, max_refine: int, dps: int = 30) -> int:
    """Replace the roots ``z[pos]`` at flagged positions by the exact-polynomial roots
    (matched one to one); NaN beyond ``max_refine``. Returns the number refined."""
    from scipy.optimize import linear_sum_assignment  # lazy: importing scipy.optimize takes ~1 s

    for k, pos in enumerate(idx):  # only flagged points: rare by construction
        pos = tuple(pos)
        if k >= max_refine:
            z[pos] = np.nan
            continue
        exact = np.array(_exact_roots(exact_poly_at(pos), dps))
        if exact.size != z.shape[-1]:
            raise ParameterError(f"refinement found {exact.size} roots, expected {z.shape[-1]}")
        rows, cols = linear_sum_assignment(np.abs(np.nan_to_num(z[pos])[:, None] - exact[None, :]))
        z[pos][rows] = exact[cols]
    return min(len(idx), max_refine)


def spectrum(
    rec, values=None, *, tol: float = 1e-12, dps: int = 50, max_refine: int = 1000, **kw
) -> Spectrum:
    """Roots of ``rec`` over a batch of parameter values, flagged and refined where needed.

    Parameters
    ----------
    rec : Recurrence
    values : mapping, optional
        Parameter values, as for :func:`~depthdyn.numeric.bridge.batch_coefficients`.
    tol : float
        Relative accuracy required of a float64 root; points whose estimate exceeds it are
        flagged and refined.
    dps : int
        Starting decimal digits of the refinement (doubled until the roots are certified).
    max_refine : int
        At most this many flagged points are refined (the rest get NaN in ``refined``,
        and the record counts them). Refinement costs about 10 ms per point (an exact
        square-free factorisation and mpmath roots); flagged points are rare on ordinary
        grids, which meet repeated roots only on curves.

    Examples
    --------
    >>> from depthdyn import smooth
    >>> s = spectrum(smooth(k=3), lam=[0.0, -1.0], h=1)
    >>> s.flagged.tolist(), s.refined[0].real.tolist()
    ([True, False], [1.0, 1.0, 1.0])
    """
    m = rec.order * rec.dim  # roots, refined roots, errors, coefficients per point
    check_grid(rec, {**dict(values or {}), **kw}, m * 40 + 16 * (rec.order + 1) * rec.dim**2, "spectrum")
    arrays, batch = prepare_values(rec, values, **kw)
    coeffs = batch_coefficients(rec, arrays)
    if not rec.is_scalar:
        z, err = _matrix_eig_error(coeffs)
        method = "block companion eigenvalues (eigenvector condition numbers)"
    else:
        z = roots(coeffs)
        method = "closed form" if coeffs.shape[-1] <= 3 else "companion eigenvalues + Newton polish"
        p1 = coeffs.shape[-1]
        a, zf = coeffs.reshape(-1, p1), z.reshape(-1, p1 - 1)
        err = np.empty(zf.shape)
        step = max(1, CHUNK_BYTES // (16 * p1 * p1))  # the error estimate needs p x p differences
        for s in range(0, len(a), step):
            if p1 > 3:
                zf[s : s + step] = _polish(a[s : s + step], zf[s : s + step])
            err[s : s + step] = _relative_error(a[s : s + step], zf[s : s + step])
        err = err.reshape(z.shape)
    flagged = (err > tol).any(axis=-1)
    refined = z.copy()
    charpoly, symbols = rec.charpoly(), rec.symbols

    def at(pos):
        return _exact_at(charpoly, symbols, {n: np.broadcast_to(arr, batch)[pos] for n, arr in arrays.items()})

    n_ref = _refine(refined, np.argwhere(flagged), at, max_refine, dps)
    radius = np.abs(refined).max(axis=-1)
    return Spectrum(z, refined, radius, flagged, err, tol, dps, n_ref, method)
