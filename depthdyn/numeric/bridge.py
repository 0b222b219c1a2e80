"""From a symbolic :class:`~depthdyn.Recurrence` to batched NumPy coefficient arrays.

Every coefficient entry is compiled once per recurrence with :func:`sympy.lambdify`
(cached: a :class:`~depthdyn.Recurrence` is hashable) and evaluated on whole arrays of
parameter values, so a grid of a million points costs a few NumPy passes and no Python
loop over the points. Values broadcast together (any leading batch shape); ``lam`` may be
complex. Values are checked before use: unknown or missing names, NaN and infinities,
values outside a parameter's domain and incompatible shapes raise typed errors that say
how to fix the call.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..errors import ArrayTooLargeError, DomainError, ParameterError, ShapeError, UnknownParameterError
from ..limits import MAX_BYTES

__all__ = ["batch_coefficients", "prepare_values", "monic_columns", "check_size"]



def check_size(what: str, count: int, itemsize: int, way_out: str) -> None:
    """Raise :class:`~depthdyn.errors.ArrayTooLargeError` if ``count * itemsize > MAX_BYTES``."""
    need = int(count) * int(itemsize)
    if need > MAX_BYTES:
        raise ArrayTooLargeError(
            f"{what} needs {need / 2**30:.3g} GiB at once (limit {MAX_BYTES / 2**30:.3g} GiB, "
            f"depthdyn.limits.MAX_BYTES): {way_out}")


@dataclass(frozen=True)
class CompiledEntries:
    """Compiled coefficient entries of one recurrence (see :func:`compile_entries`)."""

    names: tuple[str, ...]
    used: tuple[bool, ...]  # does parameter i appear in any coefficient?
    entries: tuple  # entries[j][i][k]: a callable of all parameters, or a Python number
    complex_consts: bool  # some coefficient has non-real constants (e.g. I)


def check_grid(rec, given: dict, bytes_per_point: int, what: str) -> None:
    """Refuse, before any work, a grid whose result would exceed :data:`MAX_BYTES`."""
    try:
        batch = np.broadcast_shapes(*(np.shape(v) for v in given.values() if not isinstance(v, sp.Basic)))
    except ValueError:
        return  # the validation reports the shapes
    points = int(np.prod(batch, dtype=object))
    check_size(f"{what} of {rec.name} on a grid of {points} points", points, bytes_per_point,
               "split the grid into pieces, or use the chunked stability_mask / spectral_radius")


def _constant(expr: sp.Expr):
    value = complex(expr)
    return value.real if value.imag == 0 else value


@functools.lru_cache(maxsize=256)
def compile_entries(rec) -> CompiledEntries:
    """The coefficient entries of ``rec`` as NumPy callables of all its parameters (constants
    as Python numbers), compiled once per recurrence (cached)."""
    symbols = [p.symbol for p in rec.params]
    free = set().union(*(A.free_symbols for A in rec.coeffs))
    entries, cplx = [], False
    for A in rec.coeffs:
        rows = []
        for i in range(A.shape[0]):
            row = []
            for k in range(A.shape[1]):
                e = A[i, k]
                if e.free_symbols:
                    row.append(sp.lambdify(symbols, e, modules="numpy"))
                    cplx = cplx or e.has(sp.I)
                else:
                    c = _constant(e)
                    cplx = cplx or isinstance(c, complex)
                    row.append(c)
            rows.append(tuple(row))
        entries.append(tuple(rows))
    used = tuple(s in free for s in symbols)
    return CompiledEntries(rec.param_names, used, tuple(entries), cplx)


def _domain_text(domain) -> str:
    if isinstance(domain, sp.Interval):
        left = "(" if domain.left_open or domain.start.is_infinite else "["
        right = ")" if domain.right_open or domain.end.is_infinite else "]"
        return f"{left}{sp.sstr(domain.start)}, {sp.sstr(domain.end)}{right}"
    return str(domain)


def _describe_domain(param) -> str:
    text = f"{param.name} must lie in {_domain_text(param.domain)}"
    return text + (f" ({param.description})" if param.description else "")


def _first_bad(arr: np.ndarray, bad: np.ndarray, name: str) -> str:
    idx = np.unravel_index(int(np.argmax(bad)), bad.shape) if bad.ndim else ()
    value = (arr[idx] if arr.ndim else arr[()]).item()
    where = f" at index {tuple(int(i) for i in idx)}" if bad.ndim else ""
    count = int(np.count_nonzero(bad))
    return f"{count} of {bad.size} entries are outside; the first is {name}={value!r}{where}"


def _check_domain(param, arr: np.ndarray) -> np.ndarray:
    """Vectorised domain check; returns the (possibly real-cast) array."""
    domain = param.domain
    if domain == sp.S.Complexes:
        return arr
    if np.iscomplexobj(arr):
        bad = arr.imag != 0
        if bad.any():
            raise DomainError(
                f"{param.name} must be real ({_domain_text(domain)}): {_first_bad(arr, bad, param.name)}; "
                f"pass real values for {param.name}"
            )
        arr = np.ascontiguousarray(arr.real)
    if isinstance(domain, sp.Interval):
        bad = np.zeros(arr.shape, dtype=bool)
        if domain.start.is_finite:
            a = float(domain.start)
            bad |= (arr <= a) if domain.left_open else (arr < a)
        if domain.end.is_finite:
            b = float(domain.end)
            bad |= (arr >= b) if domain.right_open else (arr > b)
        if bad.any():
            raise DomainError(f"{_describe_domain(param)}: {_first_bad(arr, bad, param.name)}")
    elif isinstance(domain, sp.FiniteSet):
        allowed = np.array([complex(v) for v in domain.args])
        bad = ~np.isin(arr, allowed)
        if bad.any():
            raise DomainError(f"{_describe_domain(param)}: {_first_bad(arr, bad, param.name)}")
    return arr


def _first(arr: np.ndarray, bad: np.ndarray):
    return (arr[np.unravel_index(int(np.argmax(bad)), bad.shape)] if arr.ndim else arr[()]).item()


def _exact_spelling(name: str, text: str) -> sp.Expr:
    """A value spelled exactly ("1/2", "sqrt(2)/2"), read by the safe parser (never evaluated)."""
    from ..parse import as_sympy

    value = as_sympy(str(text))
    if value.free_symbols:
        raise ParameterError(f"{name}={text!r} is symbolic; the numeric layer needs numbers")
    return value


def _as_array(name: str, value, check_finite: bool = True) -> np.ndarray:
    if isinstance(value, str):
        value = _exact_spelling(name, value)
    elif isinstance(value, (list, tuple, np.ndarray)):
        try:
            strings = np.asarray(value)
        except (TypeError, ValueError) as exc:  # ragged lists
            raise ShapeError(f"cannot make an array from the value of {name}: {exc}") from None
        if strings.dtype.kind in "US":
            value = np.array([complex(_exact_spelling(name, v)) for v in strings.flat]).reshape(strings.shape)
            value = value.real.copy() if not np.any(value.imag) else value  # real spellings stay real
    if isinstance(value, sp.Basic):
        if value.free_symbols:
            raise ParameterError(
                f"{name}={value} is symbolic; the numeric layer needs numbers (use rec.subs for symbols)"
            )
        value = complex(value)
        value = value.real if value.imag == 0 else value  # a real exact number stays real
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:  # ragged lists
        raise ShapeError(f"cannot make an array from the value of {name}: {exc}") from None
    if arr.dtype == bool:
        raise ParameterError(f"{name} must be numeric, got booleans")
    if arr.dtype.kind in "iuf":
        arr = arr.astype(np.float64, copy=False)
    elif arr.dtype.kind == "c":
        arr = arr.astype(np.complex128, copy=False)
    else:
        try:
            arr = arr.astype(np.complex128)
        except (TypeError, ValueError):
            raise ParameterError(f"{name} must be numeric, got an array of {arr.dtype}") from None
        if not np.any(arr.imag):
            arr = arr.real.copy()
    finite = np.isfinite(arr) if check_finite or arr.size < 4096 else True
    if not np.all(finite):
        bad = ~finite
        raise ParameterError(
            f"{name} must be finite: {int(np.count_nonzero(bad))} of {arr.size} entries are NaN or "
            f"infinite (first {_first(arr, bad)!r})"
        )
    return arr


def prepare_values(rec, values: Mapping | None = None, **kw) -> tuple[dict[str, np.ndarray], tuple]:
    """Validate parameter values for ``rec`` and return ``(arrays, batch_shape)``.

    Parameters
    ----------
    rec : Recurrence
    values : mapping, optional
        Parameter name (or SymPy symbol) -> scalar or array-like.
    **kw
        More values by name.

    Returns
    -------
    arrays : dict
        Name -> float64 or complex128 array (unbroadcast).
    batch_shape : tuple
        The broadcast shape of all values.

    Raises
    ------
    UnknownParameterError, ParameterError, DomainError, ShapeError
    """
    return prepare_given(rec, {**dict(values or {}), **kw}, check_finite=True)


def prepare_given(rec, given: dict, check_finite: bool) -> tuple[dict[str, np.ndarray], tuple]:
    """:func:`prepare_values` of the mapping ``given``; ``check_finite=False`` leaves the NaN/inf
    scan to the caller."""
    items = {getattr(k, "name", str(k)): v for k, v in given.items()}
    names = rec.param_names
    unknown = sorted(set(items) - set(names))
    if unknown:
        raise UnknownParameterError(
            f"{rec.name} has no parameter(s) {unknown}; its parameters are {list(names) or 'none'}"
        )
    missing = [n for n in names if n not in items]
    if missing:
        raise ParameterError(
            f"give values for every symbolic parameter of {rec.name}: missing {missing} "
            f"(e.g. batch_coefficients(rec, {', '.join(f'{n}=...' for n in missing)}))"
        )
    arrays = {}
    for name in names:
        arrays[name] = _check_domain(rec.param(name), _as_array(name, items[name], check_finite))
    try:
        batch = np.broadcast_shapes(*(a.shape for a in arrays.values())) if arrays else ()
    except ValueError:
        shapes = ", ".join(f"{n}: {a.shape}" for n, a in arrays.items())
        raise ShapeError(
            f"parameter arrays do not broadcast together ({shapes}); give them compatible shapes, "
            "e.g. lam[:, None] and m[None, :] for a 2-D grid"
        ) from None
    return arrays, batch


def _evaluate(entry, args: list, batch: tuple):
    if callable(entry):
        with np.errstate(all="ignore"):
            out = entry(*args)
        out = np.asarray(out)
        if not np.isfinite(out).all():
            raise ParameterError(
                "a coefficient is not finite at some parameter values (overflow or a pole); "
                "restrict the parameter range"
            )
        return out
    return entry


def _singular_error(rec, bad: np.ndarray) -> ParameterError:
    where = np.unravel_index(int(np.argmax(bad)), bad.shape) if bad.ndim else ()
    return ParameterError(
        f"the leading coefficient A_0 of {rec.name} is singular at {int(np.count_nonzero(bad))} point(s) "
        f"(first at batch index {tuple(int(i) for i in where)}); the recurrence does not determine "
        "x_{l+p} there: remove those parameter values"
    )


def monic_columns(rec, values: Mapping | None = None, **kw) -> tuple[list, tuple]:
    """Monic coefficients of a scalar recurrence as a list, without broadcasting.

    The cheap path used by the spectra and masks: ``cols[j]`` is ``a_j = A_j / A_0`` as a
    0-d or batch-broadcastable array (a constant coefficient stays a Python number), so a
    coefficient that does not depend on the grid costs no memory.

    Returns
    -------
    cols : list
        ``p + 1`` entries, ``cols[0] == 1``.
    batch_shape : tuple
    """
    if not rec.is_scalar:
        raise ShapeError(
            f"monic_columns needs a scalar recurrence; {rec.name} has {rec.dim}x{rec.dim} coefficients"
        )
    arrays, batch = prepare_values(rec, values, **kw)
    comp = compile_entries(rec)
    args = [arrays[n] for n in comp.names]
    cols = [_evaluate(e[0][0], args, batch) for e in comp.entries]
    a0 = cols[0]
    if not (isinstance(a0, (int, float, complex)) and a0 == 1):
        zero = np.asarray(a0) == 0
        if zero.any():
            raise _singular_error(rec, np.broadcast_to(zero, batch) if batch else zero)
        cols = [c / a0 for c in cols]
        cols[0] = 1.0
    return cols, batch


def batch_coefficients(rec, values: Mapping | None = None, **kw) -> np.ndarray:
    """Monic coefficient arrays of ``rec`` at a batch of parameter values.

    Parameters
    ----------
    rec : Recurrence
        Any recurrence; every symbolic parameter left in it needs a value.
    values : mapping, optional
        Parameter name -> scalar or array; arrays broadcast together.
    **kw
        More values by name, e.g. ``lam=grid, m=0.5``.

    Returns
    -------
    numpy.ndarray
        ``batch + (p + 1,)`` for scalar recurrences (``out[..., 0] == 1``, so
        ``r**p + out[..., 1] r**(p-1) + ... + out[..., p]``), ``batch + (p + 1, n, n)``
        for matrix recurrences (``A_0^{-1} A_j``). ``float64`` unless a value or a
        coefficient is complex, then ``complex128``.

    Raises
    ------
    UnknownParameterError
        A name that is not a parameter of ``rec``.
    ParameterError
        A missing parameter, a NaN or infinite value, or a point where ``A_0`` is singular.
    DomainError
        Values outside a parameter's domain (the message counts them and shows the first).
    ShapeError
        Values that do not broadcast together.

    Examples
    --------
    >>> import numpy as np
    >>> from depthdyn import momentum
    >>> batch_coefficients(momentum(), lam=np.array([-1.0, 0.0]), m=0.5, eta=1)
    array([[ 1. , -0.5,  0.5],
           [ 1. , -1.5,  0.5]])
    """
    check_grid(rec, {**dict(values or {}), **kw}, 16 * (rec.order + 1) * rec.dim**2, "the coefficients")
    if rec.is_scalar:
        cols, batch = monic_columns(rec, values, **kw)
        dtype = np.result_type(*[np.asarray(c).dtype for c in cols], np.float64)
        out = np.empty(batch + (len(cols),), dtype=dtype)
        for j, c in enumerate(cols):
            out[..., j] = c
        return out
    arrays, batch = prepare_values(rec, values, **kw)
    comp = compile_entries(rec)
    args = [arrays[n] for n in comp.names]
    n, p1 = rec.dim, len(comp.entries)
    vals = [[[_evaluate(e, args, batch) for e in row] for row in A] for A in comp.entries]
    flat = [np.asarray(v).dtype for A in vals for row in A for v in row]
    dtype = np.result_type(*flat, np.float64)
    out = np.empty(batch + (p1, n, n), dtype=dtype)
    for j, A in enumerate(vals):
        for i, row in enumerate(A):
            for k, v in enumerate(row):
                out[..., j, i, k] = v
    if comp.entries[0] == tuple(tuple(1.0 if i == k else 0.0 for k in range(n)) for i in range(n)):
        return out
    A0 = out[..., 0, :, :]
    det = np.linalg.det(A0)
    if (det == 0).any():
        raise _singular_error(rec, det == 0)
    try:
        out = np.linalg.solve(A0[..., None, :, :], out)
    except np.linalg.LinAlgError:
        raise _singular_error(rec, np.ones(batch, dtype=bool)) from None
    return out
