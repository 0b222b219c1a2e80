"""Periodic patterns of per-layer recurrences and their exact (Floquet) analysis.

A pattern ``R_1, ..., R_p`` repeats over depth: layer ``l`` follows ``R_{(l mod p) + 1}``. Every
layer is written on one common state, the window ``w_l = (x_l, x_{l-1}, ..., x_{l-P+1})`` with
``P`` the largest order in the pattern (a layer of lower order ignores the older entries), so
the per-layer state matrices ``C_i`` act on states of one size and one meaning whatever the
family. One period maps ``w_l`` to ``w_{l+p}``:

.. math::

    w_{l+p} = M w_l, \\qquad M = C_p C_{p-1} \\cdots C_1,

the monodromy matrix. ``M`` is itself a first-order matrix recurrence over periods, so the
pattern *is* a :class:`~depthdyn.Recurrence` (:class:`Periodic`) and every verb that takes one
(``charpoly``, ``roots``, ``stability_conditions``, ``stability_mask``, ``stability_region``,
``plot_stability_region``, ``simulate``) takes the pattern: its characteristic roots are the
Floquet multipliers, its steps are periods.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import sympy as sp

from ..errors import DegreeTooLargeError, DomainError, ParameterError, ShapeError
from ..limits import MAX_PERIOD, MAX_PRODUCT_DIGITS, MAX_STATE
from ..printing import sstr, tex
from ..records import Record
from ..recurrence import Param, Recurrence, as_square_matrix, to_exact, with_param_symbols
from ..symbolic.statespace import next_rows

__all__ = ["Periodic", "periodic", "layer_matrix", "state_matrices", "Switch",
           "stability_switches"]



def layer_matrix(rec: Recurrence, order: int | None = None) -> sp.ImmutableMatrix:
    """The state matrix of one layer on the window of ``order`` lags (default: its own order).

    ``w_{l+1} = C w_l`` with ``w_l = (x_l, ..., x_{l-order+1})``: the first block row is
    ``x_{l+1} = -A_0^{-1} (A_1 x_l + ... + A_p x_{l-p+1})``, padded with zeros past the layer's
    own order ``p``; the other block rows shift the window.

    Examples
    --------
    >>> from depthdyn import residual
    >>> layer_matrix(residual(), 2)
    Matrix([
    [lam + 1, 0],
    [      1, 0]])
    """
    P = rec.order if order is None else order
    if P < rec.order:
        raise ShapeError(f"a window of {P} lags cannot hold a recurrence of order {rec.order}")
    n = rec.dim
    C = sp.zeros(P * n)
    R = next_rows(rec)
    C[:n, : R.shape[1]] = R
    for i in range(1, P):
        C[i * n : (i + 1) * n, (i - 1) * n : i * n] = sp.eye(n)
    return sp.ImmutableMatrix(C)


def state_matrices(rec: Recurrence, values=None, **kw) -> np.ndarray:
    """The state matrix of ``rec`` at a batch of parameter values: ``batch + (N, N)``.

    A stack whose layer ``l`` has its own value (``lam`` drawn i.i.d. per layer and sample,
    say ``lam=rng.normal(size=(B, L))``) is then ``(B, L, N, N)``, ready for
    :func:`~depthdyn.products.lyapunov.lyapunov`. Values as in
    :func:`depthdyn.numeric.batch_coefficients`.

    Examples
    --------
    >>> from depthdyn import momentum
    >>> state_matrices(momentum(m=0.5, eta=1), lam=[0.0, -1.0]).tolist()
    [[[1.5, -0.5], [1.0, 0.0]], [[0.5, -0.5], [1.0, 0.0]]]
    """
    return periodic(rec).numeric_layers(values, **kw)[..., 0, :, :]


def _merged_params(layers) -> tuple[Param, ...]:
    """One parameter per name over the layers; a shared name lies in every layer's domain."""
    merged: dict[str, Param] = {}
    for rec in layers:
        for p in rec.params:
            if p.name not in merged:
                merged[p.name] = p
                continue
            old = merged[p.name]
            if old.domain == p.domain:
                continue
            domain = old.domain.intersect(p.domain)
            if domain.is_empty:
                raise DomainError(f"parameter {p.name} is shared by two layers whose domains "
                                  f"{old.domain} and {p.domain} do not meet; rename it in one layer")
            merged[p.name] = Param(p.name, domain, old.description)
    return tuple(merged.values())


@dataclass(frozen=True)
class Periodic(Recurrence):
    """A periodic pattern of per-layer recurrences, as the recurrence of its monodromy.

    Build it with :func:`periodic`. ``coeffs`` are ``(I, -M)`` with ``M`` the monodromy over
    one period (so the characteristic roots are the Floquet multipliers); ``layers`` keeps the
    per-layer recurrences. ``subs`` substitutes into the layers and rebuilds the pattern.
    """

    layers: tuple = ()

    @property
    def period(self) -> int:
        """Number of layers in one period."""
        return len(self.layers)

    @property
    def window(self) -> int:
        """Lags in the common state (the largest order of the layers)."""
        return max(rec.order for rec in self.layers)

    @property
    def monodromy(self) -> sp.ImmutableMatrix:
        """``M = C_p ... C_1``: the state after one period is ``M`` times the state before."""
        return sp.ImmutableMatrix(-self.coeffs[1])

    @cached_property
    def layer_matrices(self) -> tuple[sp.ImmutableMatrix, ...]:
        """``C_1, ..., C_p`` on the common window, in the pattern's parameter symbols."""
        symbols = self.symbols
        return tuple(with_param_symbols(layer_matrix(rec, self.window), symbols) for rec in self.layers)

    def subs(self, values=None, **kwargs) -> Periodic:
        """Substitute into every layer that has the parameter and rebuild the pattern."""
        items = {**dict(values or {}), **kwargs}
        names = {}
        for key, value in items.items():
            name = key.name if isinstance(key, sp.Symbol) else str(key)
            param = self.param(name)  # unknown names are refused here
            if not isinstance(value, str):
                expr = to_exact(value)
                if not expr.free_symbols:
                    param.check(expr)  # the shared domain, narrower than a layer's
            names[name] = value
        if not names:
            return self
        layers = [rec.subs({k: v for k, v in names.items() if k in rec.param_names}) for rec in self.layers]
        return periodic(*layers, name=self.name)

    def kron(self, d: int) -> Periodic:
        """Every layer expanded to ``d`` channels (see :meth:`Recurrence.kron`)."""
        return periodic(*(rec.kron(d) for rec in self.layers))

    def after_periods(self, n) -> sp.ImmutableMatrix:
        """``M**n``: the state after ``n`` periods is ``M**n`` times the initial window.

        ``n`` may be a SymPy symbol (closed form through the Jordan form of ``M``).
        """
        if isinstance(n, int) and n < 0:
            raise ParameterError(f"n must be >= 0, got {n}")
        return sp.ImmutableMatrix(self.monodromy**n).applyfunc(sp.simplify)

    def averaged(self) -> Recurrence:
        """The constant recurrence of the mean layer matrix ``(C_1 + ... + C_p) / p``.

        For layers affine in their parameters (every first-order family in ``lam``; momentum
        in ``m`` and ``eta lam``) it is the constant recurrence at the averaged parameters;
        ``p`` of its steps compare with one period.
        """
        mean = sum(self.layer_matrices, sp.zeros(self.dim)) / self.period
        N = self.dim
        return Recurrence((sp.eye(N), -sp.ImmutableMatrix(mean).applyfunc(sp.expand)), params=self.params,
                          lam=self.lam, name=f"mean of {self.name}",
                          description="constant recurrence of the mean per-layer state matrix")

    def numeric_layers(self, values=None, **kw) -> np.ndarray:
        """``C_1, ..., C_p`` at a batch of parameter values: ``batch + (p, N, N)``.

        Values as in :func:`depthdyn.numeric.batch_coefficients`.
        """
        from ..numeric.bridge import batch_coefficients

        vals = {**dict(values or {}), **kw}
        N = self.dim
        out = []
        for C in self.layer_matrices:
            used = {s.name for s in C.free_symbols}
            rec = Recurrence((sp.eye(N), -C), params=tuple(p for p in self.params if p.name in used))
            sub = {k: v for k, v in vals.items() if k in used}
            a = batch_coefficients(rec, sub) if used else np.asarray(batch_coefficients(rec))
            out.append(-a[..., 1, :, :] if a.ndim >= 3 and a.shape[-1] == N and a.shape[-2] == N
                       and not rec.is_scalar else -a[..., 1][..., None, None])
        shape = np.broadcast_shapes(*(o.shape[:-2] for o in out))
        # + 0.0 turns the negated zeros (-0.0) into zeros
        return np.stack([np.broadcast_to(o, shape + (N, N)) for o in out], axis=-3) + 0.0


def _as_layer(layer, i: int):
    """A per-layer state matrix (SymPy, nested lists, 2-D array) as the recurrence ``s' = M s``;
    its free symbols become real parameters. Recurrences pass through."""
    if isinstance(layer, Recurrence):
        return layer
    if isinstance(layer, np.ndarray) and layer.ndim == 2:
        if layer.dtype.kind in "biufc" and not np.isfinite(layer).all():
            raise ParameterError(f"layer {i + 1} is not finite")
        layer = layer.tolist()  # object and text entries are read one by one, safely
    if isinstance(layer, (sp.MatrixBase, list, tuple)):
        M = as_square_matrix(layer, f"layer {i + 1}")
        params = tuple(Param(s.name) for s in sorted(M.free_symbols, key=lambda s: s.name))
        return Recurrence((sp.eye(M.shape[0]), -M), params=params, name="matrix")
    return layer  # refused below with its type named


def _digits(numbers) -> int:
    """Most decimal digits of a numerator or denominator among ``numbers`` (from bit lengths)."""
    bits = max((max(abs(q.p).bit_length(), q.q.bit_length()) for q in numbers), default=0)
    return int(bits * 0.30103) + 1


def _check_digits(M: sp.ImmutableMatrix) -> None:
    """Refuse a monodromy whose exact numbers, or its characteristic polynomial's, are too long
    to print (Python prints integers of at most 4300 digits) or to work with."""
    digits = _digits(M.atoms(sp.Rational))
    if digits <= MAX_PRODUCT_DIGITS and not M.free_symbols:
        # the characteristic polynomial multiplies up to n entries: measure it where it is cheap
        digits = max(digits, _digits(c for c in sp.Matrix(M).charpoly().all_coeffs()))
    elif digits <= MAX_PRODUCT_DIGITS:
        digits *= M.shape[0]  # products of n entries, for symbolic entries an estimate
    if digits > MAX_PRODUCT_DIGITS:
        raise DegreeTooLargeError(f"the monodromy has exact numbers of about {digits} digits (limit "
                                  f"{MAX_PRODUCT_DIGITS}); use fewer layers or shorter numbers, or "
                                  "depthdyn.lyapunov on float matrices")


def periodic(*layers, name: str | None = None) -> Periodic:
    """A periodic pattern of per-layer recurrences (one period, first layer first).

    Parameters
    ----------
    *layers : Recurrence or matrix
        The layers of one period, all of one state dimension ``n``; orders may differ (each
        layer is written on the window of the largest order). A layer may also be its state
        matrix (SymPy, nested lists or a 2-D array; free symbols become real parameters). A
        single list, tuple or ``(p, n, n)`` array is read as the layers. Parameters of one name
        are one parameter (``residual()`` twice shares ``lam``); give per-layer values as new
        symbols: ``residual(lam=a)``.
    name : str, optional
        Name of the pattern (default ``periodic(family, family, ...)``).

    Returns
    -------
    Periodic
        A :class:`~depthdyn.Recurrence` whose one step is one period.

    Raises
    ------
    ShapeError
        An empty pattern, or layers of different state dimensions.
    ParameterError
        A layer that is not a :class:`~depthdyn.Recurrence`.
    DegreeTooLargeError
        A period longer than :data:`~depthdyn.limits.MAX_PERIOD`, a common state larger than
        :data:`~depthdyn.limits.MAX_STATE`, or a monodromy with numbers of more than
        :data:`~depthdyn.limits.MAX_PRODUCT_DIGITS` digits.

    Examples
    --------
    >>> import sympy
    >>> from depthdyn import residual, charpoly
    >>> a, b = sympy.symbols("a b")
    >>> pattern = periodic(residual(lam=a), residual(lam=b))
    >>> pattern.monodromy
    Matrix([[a*b + a + b + 1]])
    >>> charpoly(pattern)
    -a*b - a - b + r - 1
    """
    if len(layers) == 1 and (isinstance(layers[0], (list, tuple))
                             or (isinstance(layers[0], np.ndarray) and layers[0].ndim == 3)):
        layers = tuple(layers[0])
    layers = tuple(_as_layer(x, i) for i, x in enumerate(layers))
    if not layers:
        raise ShapeError("an empty pattern: give at least one layer, e.g. periodic(residual(), momentum())")
    for i, rec in enumerate(layers):
        if not isinstance(rec, Recurrence):
            raise ParameterError(f"layer {i + 1} must be a Recurrence (e.g. residual(lam=a)), "
                                 f"got {type(rec).__name__}")
    dims = [rec.dim for rec in layers]
    if len(set(dims)) != 1:
        raise ShapeError(f"layers must have one state dimension, got {dims}; expand scalar layers with "
                         ".kron(n) or use families of the same number of streams")
    if len(layers) > MAX_PERIOD:
        raise DegreeTooLargeError(f"a period of {len(layers)} layers is too long for exact work "
                                  f"(limit {MAX_PERIOD}); use depthdyn.lyapunov on numeric matrices")
    window = max(rec.order for rec in layers)
    if window * dims[0] > MAX_STATE:
        raise DegreeTooLargeError(f"the common state has {window * dims[0]} entries; exact work is limited "
                                  f"to {MAX_STATE}")
    params = _merged_params(layers)
    symbols = {p.name: p.symbol for p in params}
    M = sp.eye(window * dims[0])
    for rec in layers:
        M = with_param_symbols(layer_matrix(rec, window), symbols) * M
    M = sp.ImmutableMatrix(M).applyfunc(sp.expand)
    _check_digits(M)
    names = ", ".join(rec.name for rec in layers)
    lam = "lam" if "lam" in symbols else None
    return Periodic(
        coeffs=(sp.eye(M.shape[0]), -M),
        params=params,
        lam=lam,
        name=name or f"periodic({names})",
        description=f"period-{len(layers)} pattern {names}; one step is one period (monodromy)",
        source="products over depth: Floquet monodromy of the per-layer state matrices",
        layers=tuple(layers),
    )


# ------------------------------------------------------------------ switches found on a grid
@dataclass(frozen=True)
class Switch(Record):
    """A point where per-layer stability and stability over the period disagree.

    ``kind`` is ``"layers stable, period unstable"`` or ``"layers unstable, period stable"``;
    ``values`` the exact parameter point; ``layer_radii`` and ``period_radius`` the spectral
    radii there (float64), ``confirmed`` the exact root condition of the pattern and of each
    layer at that point (:func:`depthdyn.root_condition`).
    """

    kind: str
    values: tuple
    layer_radii: tuple
    period_radius: float
    confirmed: bool

    def _text(self) -> str:
        vals = ", ".join(f"{k}={sstr(v)}" for k, v in self.values)
        radii = ", ".join(f"{x:.4g}" for x in self.layer_radii)
        return (f"{self.kind} at {vals}: layer radii {radii}; radius over the period "
                f"{self.period_radius:.4g}" + (" (exact check)" if self.confirmed else " (NOT confirmed)"))

    def _latex(self) -> str:
        return r"\text{" + self.kind + "}: " + ", ".join(f"{k} = {tex(v)}" for k, v in self.values)


def _radius(A: np.ndarray) -> np.ndarray:
    return np.abs(np.linalg.eigvals(A)).max(axis=-1)


def stability_switches(pattern: Periodic, grid: dict, *, margin: float = 0.05) -> dict:
    """Search a grid for points where the layers and the period disagree about stability.

    Parameters
    ----------
    pattern : Periodic
    grid : dict
        Parameter name -> 1-D array of values (every parameter of the pattern); the search
        runs over their Cartesian product, vectorised.
    margin : float
        Only points with every radius at least ``margin`` away from 1 count, so that the
        verdicts do not hang on rounding; the chosen point is then checked exactly.

    Returns
    -------
    dict
        ``{"layers stable, period unstable": Switch | None, "layers unstable, period stable": ...}``:
        for each kind the point farthest from the boundary, or None where the grid has none.
    """
    from ..symbolic.stability import root_condition

    names = list(grid)
    missing = set(pattern.param_names) - set(names)
    if missing:
        raise ParameterError(f"give grid values for {sorted(missing)}")
    for k in names:
        pattern.param(k)
    axes = np.meshgrid(*[np.asarray(grid[k], dtype=float) for k in names], indexing="ij")
    flat = {k: a.ravel() for k, a in zip(names, axes, strict=True)}
    C = pattern.numeric_layers(flat)  # (B, p, N, N)
    layer_r = _radius(C)  # (B, p)
    M = C[:, 0]
    for i in range(1, C.shape[1]):
        M = C[:, i] @ M
    period_r = _radius(M)
    out = {}
    for kind, score in (  # the distance of the weaker verdict from the boundary
        ("layers stable, period unstable", np.minimum(1 - layer_r.max(axis=1), period_r - 1)),
        ("layers unstable, period stable", np.minimum(layer_r.min(axis=1) - 1, 1 - period_r)),
    ):
        ok = score >= margin
        if not ok.any():
            out[kind] = None
            continue
        i = int(np.argmax(np.where(ok, score, -np.inf)))
        point = {k: sp.nsimplify(float(flat[k][i]), rational=True, tolerance=1e-12) for k in names}
        exact = pattern.subs(point)
        layers_exact = [rec.subs({k: v for k, v in point.items() if k in rec.param_names}) for rec in
                        pattern.layers]
        per = root_condition(exact).strict
        lay = [root_condition(rec).strict for rec in layers_exact]
        want_period = kind.endswith("period stable")
        confirmed = bool(per == want_period and all(x == (not want_period) for x in lay))
        out[kind] = Switch(kind, tuple(point.items()), tuple(float(x) for x in layer_r[i]),
                           float(period_r[i]), confirmed)
    return out
