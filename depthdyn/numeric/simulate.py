"""Batched simulation of linear depth recurrences: final states and trajectories.

Conventions
-----------
Coefficients are *monic* arrays as :func:`~depthdyn.numeric.bridge.batch_coefficients`
returns them: ``batch + (p + 1,)`` with ``coeffs[..., 0] == 1`` for a scalar recurrence

.. math::

    x_{l+p} + a_1 x_{l+p-1} + \\dots + a_p x_l = 0,

or ``batch + (p + 1, n, n)`` with ``A_0 = I`` for a matrix one (``matrix=True``).
Initial conditions are the **values** ``x_0, ..., x_{p-1}`` at layers ``0 .. p-1``:
``init[..., j] = x_j`` (shape ``batch + (p,)``; ``batch + (p, n)`` for matrices), and
``init`` broadcasts against the coefficient batch. Layer ``l`` of the output is ``x_l``.
For an order-2 model given by a content and a velocity, :func:`initial_from_velocity`
turns ``(x_0, v_0)`` into these values under either velocity convention.

Overflow is never returned as ``inf``/``NaN``: an entry that becomes non-finite or larger
than ``threshold`` in magnitude (real and imaginary parts separately for complex values)
raises :class:`SimulationOverflowError`, whose :class:`OverflowReport` says at which layer,
how many entries and which ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ArrayTooLargeError, DepthdynError, ParameterError, ShapeError
from ..limits import MAX_LAYERS
from ..records import Record
from .bridge import check_size
from .powers import final_by_squaring, ill_conditioned

__all__ = [
    "DEFAULT_THRESHOLD",
    "OverflowReport",
    "SimulationOverflowError",
    "initial_from_velocity",
    "final_state",
    "trajectory",
    "Trajectory",
    "simulate",
]

#: Magnitude above which a simulated value counts as overflowing.
DEFAULT_THRESHOLD = 1e300


@dataclass(frozen=True)
class OverflowReport:
    """Where a simulation overflowed.

    ``layer`` is the first layer at which an entry became non-finite or exceeded
    ``threshold``; ``count`` entries of ``total`` are affected (at that layer for a
    trajectory, where the simulation stops; within the ``L`` layers for a final state);
    ``indices`` are the batch indices of the first few of them.
    """

    layer: int
    count: int
    total: int
    indices: tuple
    threshold: float

    def __str__(self) -> str:
        shown = ", ".join(map(str, self.indices)) + (", ..." if self.count > len(self.indices) else "")
        return (
            f"simulation overflow at layer {self.layer}: {self.count} of {self.total} entries are "
            f"non-finite or exceed {self.threshold:.3g} in magnitude (batch indices {shown}); "
            "these recurrences grow too fast for float64: use fewer layers, smaller initial "
            "values, or parameters inside the stability region"
        )


class SimulationOverflowError(DepthdynError, OverflowError):
    """A simulated value became non-finite or exceeded the threshold; see :attr:`report`."""

    def __init__(self, report: OverflowReport):
        super().__init__(str(report))
        self.report = report

    def __reduce__(self):  # picklable across process pools
        return (type(self), (self.report,))


def overflow_report(layer: int, bad: np.ndarray, batch: tuple, threshold: float,
                    flat_ids=None) -> OverflowReport:
    """The :class:`OverflowReport` of the entries flagged in ``bad`` (a mask over ``batch``, or over
    the flat indices ``flat_ids`` of it) at ``layer``."""
    flat = np.flatnonzero(bad)
    if flat_ids is not None:
        flat = flat_ids[flat]
    first = tuple(tuple(int(i) for i in np.unravel_index(int(k), batch)) for k in flat[:5])
    return OverflowReport(int(layer), int(flat.size), int(np.prod(batch, dtype=np.int64)), first, threshold)


def row_ok(row: np.ndarray, threshold: float) -> bool:
    """True when every entry is finite and within ``threshold`` (NaN compares false)."""
    if row.size == 0:
        return True
    row = np.atleast_1d(row)  # a 0-d complex row (scalar state, no batch) cannot be viewed as reals
    v = row.view(row.real.dtype) if np.iscomplexobj(row) and row.flags.c_contiguous else row
    if np.iscomplexobj(v):
        v = np.abs(v)
    return bool(v.max() <= threshold) and bool(v.min() >= -threshold)


def bad_entries(row: np.ndarray, threshold: float, matrix: bool) -> np.ndarray:
    """Mask of the batch entries of ``row`` that are non-finite or beyond ``threshold`` (for
    ``matrix`` states, any component of the entry's vector)."""
    with np.errstate(invalid="ignore"):
        bad = ~(np.abs(row) <= threshold)
    return bad.any(axis=-1) if matrix else bad


# ------------------------------------------------------------------- preparation
@dataclass(frozen=True)
class Problem:
    """A validated batch of monic recurrences and initial values, as :func:`prepare_problem` makes it."""

    cols: tuple  # C_1..C_p with x_{l+p} = sum_j C_j x_{l+p-j}; scalar or contiguous array
    init: tuple  # x_0..x_{p-1}, each of shape batch (+ (n,))
    batch: tuple
    dtype: np.dtype
    matrix: bool

    @property
    def order(self) -> int:
        return len(self.cols)


def as_numeric(name: str, value) -> np.ndarray:
    """``value`` as a float64 or complex128 array; a :class:`ParameterError` naming ``name`` for
    non-numeric or non-finite input."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "biufc" or arr.dtype == bool:
        raise ParameterError(f"{name} must be a numeric array, got dtype {arr.dtype}")
    arr = arr.astype(np.complex128 if arr.dtype.kind == "c" else np.float64, copy=False)
    if not np.isfinite(arr).all():
        raise ParameterError(f"{name} contains NaN or infinite entries; give finite values")
    return arr


def _threshold(threshold) -> float:
    """A finite positive overflow threshold: ``inf`` would let ``inf`` values through."""
    try:
        t = float(threshold)
    except (TypeError, ValueError):
        raise ParameterError(f"threshold must be a positive finite number, got {threshold!r}") from None
    if not (np.isfinite(t) and t > 0):
        raise ParameterError(
            f"threshold must be a positive finite number (at most 1.8e308), got {threshold!r}; "
            "values past it are reported as a SimulationOverflowError, never returned as inf")
    return t


def checked_depth(L) -> int:
    """The number of layers ``L`` as an ``int``, refusing anything but a non-negative integer."""
    if isinstance(L, (bool, np.bool_)) or not isinstance(L, (int, np.integer)) or L < 0:
        raise ParameterError(f"the number of layers L must be a non-negative integer, got {L!r}")
    return int(L)


def _constant_or_array(col: np.ndarray):
    """A coefficient column that is constant over the batch becomes a scalar (saves bandwidth)."""
    flat = col.reshape(-1)
    if flat.size and (flat == flat[0]).all():
        return flat[0].item()
    return np.ascontiguousarray(col)


def prepare_problem(coeffs, init, matrix: bool) -> Problem:
    """``coeffs`` and ``init`` (see the module's conventions), validated and made monic."""
    a = as_numeric("coeffs", coeffs)
    x = as_numeric("init", init)
    if matrix:
        if a.ndim < 3 or a.shape[-1] != a.shape[-2] or a.shape[-3] < 2:
            raise ShapeError(f"matrix coeffs must have shape batch + (p+1, n, n) with p >= 1, got {a.shape}")
        p, n = a.shape[-3] - 1, a.shape[-1]
        if x.ndim < 2 or x.shape[-2:] != (p, n):
            raise ShapeError(f"init must have shape batch + ({p}, {n}) (x_0..x_{p - 1}), got {x.shape}")
        lead = a[..., 0, :, :]
        if not (lead == np.eye(n)).all():
            try:
                a = np.linalg.solve(lead[..., None, :, :], a)
            except np.linalg.LinAlgError:
                raise ParameterError("the leading coefficient A_0 is singular for some entries") from None
        core = (a.shape[:-3], x.shape[:-2])
    else:
        if a.ndim < 1 or a.shape[-1] < 2:
            raise ShapeError(f"coeffs must have shape batch + (p+1,) with p >= 1, got {a.shape}")
        p = a.shape[-1] - 1
        if x.ndim < 1 or x.shape[-1] != p:
            raise ShapeError(f"init must have shape batch + ({p},) holding x_0..x_{p - 1}, got {x.shape}")
        lead = a[..., 0]
        if not (lead == 1).all():
            if (lead == 0).any():
                raise ParameterError("the leading coefficient is 0 for some entries; x_{l+p} is undetermined")
            a = a / lead[..., None]
        core = (a.shape[:-1], x.shape[:-1])
    try:
        batch = np.broadcast_shapes(*core)
    except ValueError:
        raise ShapeError(f"coefficient batch {core[0]} and initial-value batch {core[1]} do not broadcast"
                         ) from None
    dtype = np.result_type(a, x)
    if matrix:
        cols = tuple(np.ascontiguousarray(np.broadcast_to(-a[..., j, :, :], batch + (n, n)))
                     for j in range(1, p + 1))
        x0 = tuple(np.array(np.broadcast_to(x[..., j, :], batch + (n,)), dtype=dtype) for j in range(p))
    else:
        cols = tuple(_constant_or_array(np.broadcast_to(-a[..., j], batch)) for j in range(1, p + 1))
        x0 = tuple(np.array(np.broadcast_to(x[..., j], batch), dtype=dtype) for j in range(p))
    return Problem(cols, x0, batch, dtype, matrix)


def initial_from_velocity(coeffs, x0, v0, convention: str = "backward", *, matrix: bool = False
                          ) -> np.ndarray:
    """Initial values ``(x_0, x_1)`` of an order-2 recurrence from a content and a velocity.

    Parameters
    ----------
    coeffs : array_like
        Monic coefficients, ``batch + (3,)`` (or ``batch + (3, n, n)`` with ``matrix=True``).
    x0, v0 : array_like
        Content and velocity at layer 0.
    convention : {"backward", "forward"}
        ``"backward"``: ``v_0 = x_0 - x_{-1}`` (the momentum block of 000 §2,
        ``x_{l+1} = x_l + v_{l+1}``), so ``x_1 = -a_1 x_0 - a_2 (x_0 - v_0)``.
        ``"forward"``: ``v_0 = x_1 - x_0`` (the reading of 000 §3), so ``x_1 = x_0 + v_0``.

    Returns
    -------
    numpy.ndarray
        ``batch + (2,)`` (``batch + (2, n)``): ``x_0, x_1`` for :func:`final_state`.

    Examples
    --------
    >>> initial_from_velocity([1.0, -1.5, 0.5], 1.0, 0.25)   # x_{-1} = 0.75
    array([1.   , 1.125])
    """
    if convention not in ("backward", "forward"):
        raise ParameterError(f"convention must be 'backward' or 'forward', got {convention!r}")
    a = as_numeric("coeffs", coeffs)
    if a.shape[-3 if matrix else -1] != 3:
        raise ShapeError(f"a velocity needs an order-2 recurrence (3 coefficients), got coeffs {a.shape}")
    x0, v0 = as_numeric("x0", x0), as_numeric("v0", v0)
    if convention == "forward":
        x1 = x0 + v0
    else:
        pair = np.stack(np.broadcast_arrays(x0, x0 - v0), axis=-2 if matrix else -1)
        prob = prepare_problem(a, pair, matrix)
        x1 = _combine(prob.cols, prob.init[::-1], None, matrix)  # x_1 from (x_{-1}, x_0)
    return np.stack(np.broadcast_arrays(x0, x1), axis=-2 if matrix else -1)


# --------------------------------------------------------------- the layer loop
class _Stop(Exception):
    """Internal: the layer loop met an overflowing row."""

    def __init__(self, layer: int, bad: np.ndarray):
        super().__init__(layer)
        self.layer, self.bad = layer, bad


def _combine(cols, rows, out, matrix: bool, tmp=None):
    """``out = sum_j C_j rows[-j]`` (``rows`` oldest first); allocates when ``out`` is None."""
    if matrix:
        out = np.einsum("...ij,...j->...i", cols[0], rows[-1], out=out)
        for j, c in enumerate(cols[1:], start=2):
            out += np.einsum("...ij,...j->...i", c, rows[-j], out=tmp)
        return out
    out = np.multiply(cols[0], rows[-1], out=out) if out is not None else np.array(cols[0] * rows[-1])
    for j, c in enumerate(cols[1:], start=2):
        np.add(out, np.multiply(c, rows[-j], out=tmp), out=out)
    return out


def _run(prob: Problem, L: int, rows_at, threshold: float) -> None:
    """Write ``x_0 .. x_L`` into ``rows_at(l)``; raise :class:`_Stop` on overflow."""
    p = prob.order
    rows = []
    for j in range(min(p, L + 1)):
        row = rows_at(j)
        np.copyto(row, prob.init[j])
        if not row_ok(row, threshold):
            raise _Stop(j, bad_entries(row, threshold, prob.matrix))
        rows.append(row)
    tmp = np.empty(prob.init[0].shape, prob.dtype) if p > 1 else None
    with np.errstate(over="ignore", invalid="ignore"):
        for l in range(p, L + 1):  # noqa: E741 - the layer index
            new = _combine(prob.cols, rows, rows_at(l), prob.matrix, tmp)
            if not row_ok(new, threshold):
                raise _Stop(l, bad_entries(new, threshold, prob.matrix))
            rows = rows[1:] + [new]


def _check_layers(L: int) -> None:  # before any work: the layer loop alone takes ~10 us a layer
    if L > MAX_LAYERS:
        raise ArrayTooLargeError(
            f"a stored trajectory of {L} layers exceeds the limit of {MAX_LAYERS} (depthdyn.limits."
            "MAX_LAYERS); keep only x_L (final_state, or simulate(..., full=False): O(log L) steps), "
            "use fewer layers, or pass out= a numpy.memmap on disk")


def trajectory(coeffs, init, L, *, out=None, matrix: bool = False, threshold: float = DEFAULT_THRESHOLD):
    """All layers ``x_0 .. x_L`` of a batch of linear recurrences.

    A loop over layers, each a few elementwise passes over the whole batch (``p``
    multiplies and ``p - 1`` adds for a scalar recurrence) written straight into the
    output row, and a finiteness/threshold check of that row while it is in cache.

    Parameters
    ----------
    coeffs : array_like
        Monic coefficients ``batch + (p + 1,)`` (``batch + (p + 1, n, n)`` if ``matrix``).
    init : array_like
        ``x_0 .. x_{p-1}``: ``batch + (p,)`` (``batch + (p, n)``); broadcasts with ``coeffs``.
    L : int
        Number of layers.
    out : numpy.ndarray, optional
        Array of shape ``(L + 1,) + batch`` (``+ (n,)``) to write into (e.g. a memmap).
    matrix : bool
        Matrix coefficients.
    threshold : float
        Magnitude that counts as overflow.

    Returns
    -------
    numpy.ndarray
        ``out[l] = x_l``, shape ``(L + 1,) + batch`` (``+ (n,)``).

    Raises
    ------
    SimulationOverflowError
        At the first layer where an entry is non-finite or exceeds ``threshold``.
    ShapeError, ParameterError
        Bad shapes, non-finite input or a negative ``L``.

    Examples
    --------
    >>> trajectory([1.0, -1.0, -1.0], [0.0, 1.0], 6)   # Fibonacci
    array([0., 1., 1., 2., 3., 5., 8.])
    """
    L, threshold = checked_depth(L), _threshold(threshold)
    if out is None:
        _check_layers(L)
    prob = prepare_problem(coeffs, init, matrix)
    shape = (L + 1,) + prob.init[0].shape
    if out is None:
        check_size(f"a trajectory of {L + 1} layers x {int(np.prod(shape[1:]))} entries",
                   int(np.prod(shape, dtype=object)), prob.dtype.itemsize,
                   "keep only x_L (final_state, or simulate(..., full=False)), use fewer layers or a "
                   "smaller batch, or pass out= a numpy.memmap on disk")
        out = np.empty(shape, prob.dtype)
    elif out.shape != shape or not np.can_cast(prob.dtype, out.dtype, "same_kind"):
        raise ShapeError(
            f"out must have shape {shape} and a {prob.dtype}-compatible dtype, got {out.shape} {out.dtype}")
    try:
        _run(prob, L, lambda l: out[l, ...], threshold)  # noqa: E741
    except _Stop as stop:
        raise SimulationOverflowError(overflow_report(stop.layer, stop.bad, prob.batch, threshold)) from None
    return out


# ------------------------------------------------------------- repeated squaring
def _subset(prob: Problem, flat: np.ndarray) -> Problem:
    def take(a):
        if np.ndim(a) == 0:
            return a
        tail = a.shape[len(prob.batch):]
        return np.ascontiguousarray(a.reshape((-1,) + tail)[flat])

    cols, init = tuple(map(take, prob.cols)), tuple(map(take, prob.init))
    return Problem(cols, init, (flat.size,), prob.dtype, prob.matrix)


def final_state(coeffs, init, L, *, matrix: bool = False, threshold: float = DEFAULT_THRESHOLD) -> np.ndarray:
    """``x_L`` for a batch of linear recurrences, by repeated squaring of the companion matrix.

    ``O(log L)`` batched steps: for ``p = 2`` the powers are kept as ``C^n = s C + t I``
    (two arrays, about eight elementwise passes per squaring), ``p = 1`` is a power, any
    other order uses batched ``numpy.matmul`` on the ``(p n) x (p n)`` block companion.
    Scalar entries with clustered or repeated roots (a Jordan-like, non-normal companion,
    whose squares lose digits) are iterated layer by layer instead, so they match
    :func:`trajectory`.

    Parameters
    ----------
    coeffs, init, matrix, threshold
        As for :func:`trajectory`.
    L : int
        The layer wanted.

    Returns
    -------
    numpy.ndarray
        ``x_L``, shape ``batch`` (``batch + (n,)``).

    Raises
    ------
    SimulationOverflowError
        If some ``x_L`` is non-finite or exceeds ``threshold`` (or an intermediate power
        overflowed). The flagged entries are then iterated layer by layer to report the
        first layer at which one of them overflows; entries whose trajectory stays finite
        keep the iterated value.

    Examples
    --------
    >>> final_state([1.0, -1.0, -1.0], [0.0, 1.0], 90)   # Fibonacci F_90
    array(2.88006719e+18)
    """
    L, threshold = checked_depth(L), _threshold(threshold)
    prob = prepare_problem(coeffs, init, matrix)
    x = final_by_squaring(prob, L)
    bad = bad_entries(x, threshold, matrix)
    # clustered roots: powers of the non-normal companion lose digits, the layer loop does not
    slow = ill_conditioned(prob) if L >= prob.order else np.zeros(bad.shape, bool)
    if not (bad | slow).any():
        return x
    flat = np.flatnonzero(bad | slow)
    sub = _subset(prob, flat)
    ring = [np.empty(sub.init[0].shape, sub.dtype) for _ in range(sub.order + 1)]
    try:
        _run(sub, L, lambda l: ring[l % len(ring)], threshold)  # noqa: E741
    except _Stop as stop:
        bad = bad.copy()
        bad.reshape(-1)[flat[stop.bad.reshape(-1)]] = True
        report = overflow_report(stop.layer, bad, prob.batch, threshold)
        raise SimulationOverflowError(report) from None
    x.reshape((-1,) + x.shape[len(prob.batch):])[flat] = ring[L % len(ring)]
    return x


# ------------------------------------------------------------ Recurrence level
@dataclass(frozen=True, eq=False)
class Trajectory(Record):
    """A simulated batch: ``values[l] = x_l`` (``None`` unless ``full``) and ``final = x_L``."""

    values: np.ndarray | None
    final: np.ndarray
    depth: int
    convention: str
    name: str = "recurrence"

    def _text(self) -> str:
        mags = np.abs(self.final)
        what = f"x_0..x_{self.depth} stored" if self.values is not None else f"x_{self.depth} only"
        return (
            f"{self.name}: {self.depth} layers, x_L of shape {self.final.shape}, {what}; "
            f"{self.convention}; |x_{self.depth}| in [{mags.min():.6g}, {mags.max():.6g}]"
        )

    def _latex(self) -> str:
        return f"x_{{{self.depth}}},\\ \\text{{batch }} {self.final.shape}"


_CONVENTIONS = {
    "values": "initial values x_0..x_{p-1}",
    "backward": "initial (x_0, v_0) with v_0 = x_0 - x_{-1}",
    "forward": "initial (x_0, v_0) with v_0 = x_1 - x_0",
}


def simulate(rec, initial, L, /, *, convention: str = "values", full: bool = True,
             threshold: float = DEFAULT_THRESHOLD, values=None, **kw) -> Trajectory:
    """Simulate a :class:`~depthdyn.Recurrence` over ``L`` layers at a batch of parameter values.

    Parameters
    ----------
    rec : Recurrence
    initial : array_like
        ``batch + (p,)`` (``batch + (p, n)`` for matrix coefficients), broadcasting with
        the parameter batch. With ``convention="values"`` it holds ``x_0 .. x_{p-1}``; with
        ``"backward"`` or ``"forward"`` (order 2 only) it holds ``(x_0, v_0)``, see
        :func:`initial_from_velocity`.
    L : int
        Number of layers. ``rec``, ``initial`` and ``L`` are positional-only, so a
        parameter called ``L`` (the depth of :func:`~depthdyn.oscillator`) is given as
        ``L=...`` like any other.
    full : bool
        Keep every layer (:func:`trajectory`, at most :data:`MAX_LAYERS`) or only ``x_L``
        (:func:`final_state`).
    values, **kw
        Parameter values (scalars or broadcasting arrays), as for
        :func:`~depthdyn.numeric.bridge.batch_coefficients`.

    Returns
    -------
    Trajectory

    Examples
    --------
    >>> from depthdyn import momentum
    >>> res = simulate(momentum(), [1.0, 0.0], 3, convention="backward", lam=-0.25, m=0.25, eta=1)
    >>> res.values
    array([1.    , 0.75  , 0.5   , 0.3125])
    """
    from .bridge import batch_coefficients

    if convention not in _CONVENTIONS:
        raise ParameterError(f"convention must be one of {sorted(_CONVENTIONS)}, got {convention!r}")
    if full:
        _check_layers(checked_depth(L))
    coeffs = batch_coefficients(rec, values, **kw)
    matrix = not rec.is_scalar
    try:
        init = np.asarray(initial)
    except (TypeError, ValueError) as exc:  # ragged lists
        raise ShapeError(f"cannot make an array of initial: {exc}") from None
    if convention != "values":
        if rec.order != 2:
            raise ParameterError(f"a velocity convention needs order 2; {rec.name} has order {rec.order}")
        axis = -2 if matrix else -1
        if init.ndim < -axis or init.shape[axis] != 2:
            raise ShapeError(f"initial must hold (x_0, v_0) along axis {axis}, got shape {init.shape}")
        x0, v0 = np.take(init, 0, axis=axis), np.take(init, 1, axis=axis)
        init = initial_from_velocity(coeffs, x0, v0, convention, matrix=matrix)
    if full:
        traj = trajectory(coeffs, init, L, matrix=matrix, threshold=threshold)
        return Trajectory(traj, traj[-1], int(L), _CONVENTIONS[convention], rec.name)
    return Trajectory(None, final_state(coeffs, init, L, matrix=matrix, threshold=threshold), int(L),
                      _CONVENTIONS[convention], rec.name)
