"""The core object: a linear depth recurrence with constant (symbolic) coefficients.

A :class:`Recurrence` of order ``p`` on ``n``-vectors is

.. math::

    A_0 x_{l+p} + A_1 x_{l+p-1} + \\dots + A_p x_l = 0,

with ``n x n`` coefficient matrices ``A_j`` (``1 x 1`` for a scalar eigenmode). Its
characteristic polynomial is ``det(A_0 r^p + A_1 r^(p-1) + ... + A_p)`` in the variable
:data:`r`. Families of architectures build one of these with the eigenvalue of the
linearised block as the parameter ``lam``; analyses take it as input and return small
records; ``subs`` returns a new object. Derived things are computed, never stored.
"""

from __future__ import annotations

import keyword
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property

import sympy as sp

from .errors import DomainError, ParameterError, ParseError, ShapeError, UnknownParameterError
from .parse import as_sympy, parse_value
from .printing import short_repr, tex
from .printing import symbol as _symbol
from .structure import matrix_charpoly, r

__all__ = ["r", "Param", "Realisation", "Recurrence", "REALS", "COMPLEXES", "to_exact", "as_square_matrix",
           "RESERVED", "l", "signed_pascal"]

#: The layer index of closed forms (``x_l``).
l = sp.Symbol("l", integer=True)  # noqa: E741 - the layer index of the papers

REALS = sp.S.Reals
COMPLEXES = sp.S.Complexes

#: Names a parameter may not have, and what they stand for.
RESERVED = {
    "r": "the characteristic variable (x_l = r**l)",
    "l": "the layer index of closed forms (x_l)",
}


def to_exact(value, names: Mapping[str, sp.Expr] | None = None) -> sp.Expr:
    """Turn a user value into an exact SymPy expression.

    Integers, fractions and SymPy objects pass through; floats become the decimal they
    print as (``0.1 -> 1/10``); strings go through the safe parser (decimals read exactly
    from their text). NaN, infinities, numbers past the parser's digit budget and
    containers raise :class:`~depthdyn.errors.ParameterError`.
    """
    try:
        expr = as_sympy(value, names, scalar=True)
    except ParseError as exc:
        if isinstance(value, str):
            raise
        raise ParameterError(f"cannot use {_brief(value)} as a parameter value: {exc}") from None
    if not isinstance(expr, sp.Expr):
        raise ParameterError(f"cannot use {_brief(value)} ({type(value).__name__}) as a parameter value")
    if expr.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        raise ParameterError(f"parameter values must be finite, got {expr}")
    return expr


def _brief(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_PRECISIONS = (30, 120, 500)  # significant digits tried when SymPy cannot decide a comparison


def _sign(value: sp.Expr) -> int | None:
    """The sign of a real number SymPy cannot compare symbolically, by evaluation with error control.

    ``evalf(strict=True)`` raises when the requested digits are not certain, so a returned
    value is trustworthy; ``None`` when the value is indistinguishable from 0 at every precision.
    """
    for digits in _PRECISIONS:
        try:
            approx = value.evalf(digits, strict=True, maxn=4 * digits)
        except (sp.core.evalf.PrecisionExhausted, ValueError, TypeError):
            continue
        if approx.is_real and approx != 0:
            return 1 if approx > 0 else -1
    return None


def _decide(cond, what: str) -> bool:
    """Truth of a parameter-free condition; raise :class:`DomainError` if it cannot be decided."""
    if isinstance(cond, bool) or cond in (sp.true, sp.false):
        return bool(cond)
    if isinstance(cond, (sp.And, sp.Or)):
        parts = [_decide(arg, what) for arg in cond.args]
        return all(parts) if isinstance(cond, sp.And) else any(parts)
    if isinstance(cond, sp.Not):
        return not _decide(cond.args[0], what)
    if isinstance(cond, sp.core.relational.Relational) and not cond.free_symbols:
        sign = _sign(sp.expand(cond.lhs - cond.rhs))
        if sign is not None:
            return {"<": sign < 0, "<=": sign <= 0, ">": sign > 0, ">=": sign >= 0,
                    "==": False, "!=": True}[cond.rel_op]
    raise DomainError(
        f"cannot decide {what}: the value agrees with the boundary to {_PRECISIONS[-1]} digits; "
        "give it in a simpler exact form"
    )


def _symbol_for(name: str, domain: sp.Set) -> sp.Symbol:
    # assumptions let SymPy simplify, e.g. sqrt(beta**2) = beta for beta >= 0
    if domain == COMPLEXES or not domain.is_subset(REALS):
        return _symbol(name)
    if domain.is_subset(sp.Interval.open(0, sp.oo)):
        return _symbol(name, positive=True)
    if domain.is_subset(sp.Interval(0, sp.oo)):
        return _symbol(name, nonnegative=True)
    return _symbol(name, real=True)


@dataclass(frozen=True)
class Param:
    """A named symbolic parameter with its domain.

    Parameters
    ----------
    name : str
        ASCII identifier (``lam``, ``m``, ``eta`` ...).
    domain : sympy.Set
        Where the parameter may lie, e.g. ``Interval.Ropen(0, 1)`` for ``m``.
    description : str
        One line shown by ``depthdyn derive`` and in errors.
    """

    name: str
    domain: sp.Set = REALS
    description: str = ""

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or keyword.iskeyword(self.name) or not self.name.isascii():
            raise ParameterError(f"parameter name {self.name!r} must be an ASCII identifier")
        if self.name in RESERVED:
            raise ParameterError(
                f"{self.name!r} is reserved for {RESERVED[self.name]}; name the parameter differently"
            )
        if not isinstance(self.domain, sp.Set):
            raise ParameterError(f"domain of {self.name!r} must be a sympy Set, got {self.domain!r}")

    @cached_property
    def symbol(self) -> sp.Symbol:
        """The SymPy symbol, with assumptions matching the domain (cached: ``is_subset`` is slow)."""
        return _symbol_for(self.name, self.domain)

    def check(self, value: sp.Expr) -> None:
        """Raise :class:`DomainError` if a number ``value`` lies outside the domain.

        What SymPy leaves open (``sin(1)**2 + cos(1)**2 < 1``) is decided by evaluation
        with error control, or refused when the value cannot be told from the boundary.
        """
        if not value.free_symbols:
            real = value.is_extended_real
            if real is None:
                real = not _decide(sp.Ne(sp.im(value), 0), f"whether {self.name}={value} is real")
            if self.domain.is_subset(REALS) and not real:
                raise DomainError(f"{self.name} must be real ({self.domain}), got {value}")
            what = f"whether {self.name}={value} lies in {self.domain}"
            inside = _decide(self.domain.contains(value), what)
            if not inside:
                raise DomainError(
                    f"{self.name}={value} is outside its domain {self.domain}"
                    + (f" ({self.description})" if self.description else "")
                )


@dataclass(frozen=True)
class Realisation:
    """A first-order state-space form ``s_{l+1} = A s_l`` with named states.

    ``s_l = T w_{l + shift}``, where ``w_l = (x_l, x_{l-1}, ..., x_{l-p+1})`` is the
    companion state. ``shift`` is 1 for states that look one layer ahead, such as the
    forward velocity ``v_l = x_{l+1} - x_l``.
    """

    name: str
    states: tuple[str, ...]
    A: sp.ImmutableMatrix
    T: sp.ImmutableMatrix
    shift: int = 0
    description: str = ""

    def __post_init__(self) -> None:
        A, T = sp.ImmutableMatrix(self.A), sp.ImmutableMatrix(self.T)
        object.__setattr__(self, "A", A)
        object.__setattr__(self, "T", T)
        object.__setattr__(self, "states", tuple(self.states))
        if not A.is_square or A.shape != T.shape or len(self.states) != A.shape[0]:
            raise ShapeError(
                f"realisation {self.name!r}: A {A.shape}, T {T.shape} and "
                f"{len(self.states)} state names must agree"
            )

    def subs(self, mapping: Mapping[sp.Symbol, sp.Expr]) -> Realisation:
        return replace(self, A=self.A.subs(mapping), T=self.T.subs(mapping))

    def __str__(self) -> str:
        return f"{self.name}: states {', '.join(self.states)}\nA = {self.A.tolist()}"

    def _repr_latex_(self) -> str:
        return f"$A_{{\\mathrm{{{self.name}}}}} = {tex(self.A)}$"


def signed_pascal(k: int) -> sp.ImmutableMatrix:
    """The binomial-inversion matrix ``P[n, j] = (-1)^j C(n, j)`` (``n, j = 0..k-1``).

    ``q = P w`` maps ``w = (x_l, ..., x_{l-k+1})`` to the difference states
    ``q_{n+1} = (delta^-)^n x_l``. ``P`` is an involution: ``P^-1 = P`` (binomial
    inversion).

    Examples
    --------
    >>> signed_pascal(3)
    Matrix([
    [1,  0, 0],
    [1, -1, 0],
    [1, -2, 1]])
    """
    return sp.ImmutableMatrix(k, k, lambda n, j: (-1) ** j * sp.binomial(n, j) if j <= n else 0)


def as_square_matrix(value, what: str, *, allow_scalar: bool = False) -> sp.ImmutableMatrix:
    """An exact square matrix from a SymPy matrix, a list of rows or a (safely parsed) string.

    Raises :class:`~depthdyn.errors.ShapeError` for ragged or non-square input; a scalar is
    a ``1 x 1`` matrix only with ``allow_scalar``.
    """
    if isinstance(value, str) and not allow_scalar:
        value = parse_value(value)
    elif not isinstance(value, (sp.Basic, sp.MatrixBase)):
        value = as_sympy(value)  # lists, tuples and arrays of numbers or strings, read safely
    if isinstance(value, sp.MatrixBase):
        M = sp.ImmutableMatrix(value)
    elif isinstance(value, (list, tuple)) and value and all(isinstance(row, (list, tuple)) for row in value):
        widths = {len(row) for row in value}
        if len(widths) != 1:
            raise ShapeError(f"{what}: rows have different lengths {sorted(widths)}")
        M = sp.ImmutableMatrix([[to_exact(v) for v in row] for row in value])
    elif allow_scalar and not isinstance(value, (list, tuple)):
        M = sp.ImmutableMatrix([[to_exact(value)]])
    else:
        raise ShapeError(f"{what} must be a square matrix given as a list of rows, got {value!r}")
    if not M.is_square:
        raise ShapeError(f"{what} must be square, got shape {M.shape[0]}x{M.shape[1]}")
    return M


def _fresh_param(sym: sp.Symbol, replaced: Param, value: sp.Expr) -> Param:
    """The parameter a new SymPy symbol in a substituted value stands for.

    A bare symbol takes the real part of the replaced parameter's domain (``momentum(m=a)``:
    ``a`` in ``[0, 1)``); a symbol inside an expression is real, as the names of
    :func:`~depthdyn.general` are. Real, so that exact stability conditions apply.
    """
    if sym.name in RESERVED:
        raise UnknownParameterError(
            f"{sym.name!r} is reserved for {RESERVED[sym.name]}; name the new parameter differently"
        )
    domain = replaced.domain.intersect(REALS) if value == sym else REALS
    return Param(sym.name, domain, f"per-layer value of {replaced.name}")


def with_param_symbols(M, symbols: Mapping[str, sp.Symbol]):
    """Replace symbols that share a parameter's name (but not its assumptions) by the parameter's."""
    rename = {s: symbols[s.name] for s in M.free_symbols if s.name in symbols and s != symbols[s.name]}
    return M.xreplace(rename) if rename else M


@dataclass(frozen=True)
class Recurrence:
    """A linear depth recurrence ``A_0 x_{l+p} + ... + A_p x_l = 0``.

    Parameters
    ----------
    coeffs : sequence
        ``A_0, ..., A_p``: scalars (a scalar eigenmode) or square matrices of one size.
        Strings are parsed safely with the parameter names available.
    params : sequence of Param
        The symbolic parameters the coefficients may contain, with their domains.
    lam : str, optional
        Name of the parameter that is the eigenvalue of the linearised block, if the
        family has a block.
    name, description, source : str
        Family name, one-line description, and the source (file and equation).
    native : sequence of Realisation
        Realisations that the family defines directly (e.g. the block's own
        content/velocity update); they are checked against the companion form by
        :func:`depthdyn.similarity`.
    rule : str
        The update rule the recurrence was derived from (see :func:`depthdyn.from_rule`),
        kept for display and citation; empty when it was given by its coefficients.

    Examples
    --------
    >>> from depthdyn import Recurrence, Param
    >>> rec = Recurrence([1, "-(1 + a)"], params=[Param("a")])
    >>> rec.charpoly()
    -a + r - 1
    >>> rec.subs(a=1).charpoly()
    r - 2
    """

    coeffs: tuple
    params: tuple = ()
    lam: str | None = None
    name: str = "recurrence"
    description: str = ""
    source: str = ""
    native: tuple = field(default=(), compare=True)
    rule: str = ""

    def __post_init__(self) -> None:
        params = tuple(self.params)
        for p in params:
            if not isinstance(p, Param):
                raise ParameterError(f"params must be Param objects, got {p!r}")
        names = [p.name for p in params]
        if len(set(names)) != len(names):
            raise ParameterError(f"duplicate parameter names in {names}")
        object.__setattr__(self, "params", params)
        symbols = {p.name: p.symbol for p in params}
        parsed = []
        for j, c in enumerate(self.coeffs):
            if isinstance(c, str):
                c = parse_value(c, {**symbols, "r": r})
                if isinstance(c, sp.Expr) and c.has(r):
                    raise ParseError(f"coefficient A_{j} may not contain r")
            parsed.append(as_square_matrix(c, f"coefficient A_{j}", allow_scalar=True))
        if len(parsed) < 2:
            raise ShapeError("a recurrence needs at least two coefficients (order >= 1)")
        shapes = {M.shape for M in parsed}
        if len(shapes) != 1:
            raise ShapeError(f"all coefficients must have one shape, got {sorted(shapes)}")
        allowed = set(symbols.values())
        # plain SymPy symbols named like a parameter (sympy.Symbol("a")) are that parameter
        parsed = [with_param_symbols(M, symbols) for M in parsed]
        for j, M in enumerate(parsed):
            if M.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
                raise ParameterError(f"coefficient A_{j} is not finite: {M.tolist()}")
            stray = M.free_symbols - allowed
            if stray:
                raise UnknownParameterError(
                    f"coefficient A_{j} uses {sorted(map(str, stray))}, which are not "
                    f"parameters (declared: {names or 'none'})"
                )
        object.__setattr__(self, "coeffs", tuple(parsed))
        if self.lam is not None and self.lam not in names:
            raise ParameterError(f"lam={self.lam!r} is not one of the parameters {names}")
        native = tuple(self.native)
        for real in native:
            if not isinstance(real, Realisation):
                raise ParameterError(f"native realisations must be Realisation, got {real!r}")
            if real.A.shape[0] != self.order * self.dim:
                raise ShapeError(
                    f"realisation {real.name!r} has {real.A.shape[0]} states; "
                    f"expected order*dim = {self.order * self.dim}"
                )
        object.__setattr__(self, "native", native)
        if sp.expand(parsed[0].det()) == 0:
            raise ParameterError(
                "the leading coefficient A_0 is singular for all parameter values; "
                "the recurrence does not determine x_{l+p}"
            )

    # ----------------------------------------------------------------- basic facts
    @property
    def order(self) -> int:
        """Number of past layers the recurrence looks back (``p``)."""
        return len(self.coeffs) - 1

    @property
    def dim(self) -> int:
        """Size ``n`` of the coefficient matrices (1 for a scalar eigenmode)."""
        return self.coeffs[0].shape[0]

    @property
    def is_scalar(self) -> bool:
        return self.dim == 1

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    @property
    def symbols(self) -> dict[str, sp.Symbol]:
        """Parameter name -> SymPy symbol."""
        return {p.name: p.symbol for p in self.params}

    @property
    def lam_symbol(self) -> sp.Symbol | None:
        return self.symbols.get(self.lam) if self.lam else None

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise UnknownParameterError(
            f"{self.name} has no parameter {name!r}; its parameters are {list(self.param_names)}"
        )

    # --------------------------------------------------------------- polynomials
    def matrix_polynomial(self) -> sp.ImmutableMatrix:
        """``A_0 r^p + A_1 r^(p-1) + ... + A_p``."""
        p = self.order
        return sp.ImmutableMatrix(
            sum((A * r ** (p - j) for j, A in enumerate(self.coeffs)), sp.zeros(self.dim))
        )

    def charpoly(self) -> sp.Expr:
        """Characteristic polynomial in :data:`r` (``det`` form for matrix coefficients)."""
        return self._charpoly

    @cached_property
    def _charpoly(self) -> sp.Expr:
        if self.is_scalar:
            return sp.collect(sp.expand(self.matrix_polynomial()[0, 0]), r)
        coeffs = self.charpoly_coeffs()
        n = len(coeffs) - 1
        return sp.Add(*[c * r ** (n - j) for j, c in enumerate(coeffs)])  # collected in r

    def charpoly_coeffs(self) -> tuple:
        """Coefficients in ``r`` of :meth:`charpoly`, highest first (expanded).

        Matrix recurrences use their structure (:mod:`depthdyn.structure`): a
        shift ``chi_Gamma(r - lam)`` for ``Gamma + lam I``, the matrix determinant lemma
        for a rank-one update in ``lam``, sparse Berkowitz otherwise.
        """
        return self._charpoly_coeffs

    @cached_property
    def _charpoly_coeffs(self) -> tuple:
        if self.is_scalar:
            return tuple(sp.expand(A[0, 0]) for A in self.coeffs)
        from .budget import part

        # a dense symbolic matrix (n^2 free entries) has a charpoly of ~e n! terms: bounded
        with part("characteristic polynomial"):
            return tuple(matrix_charpoly(self.coeffs, self.lam_symbol, r)[0])

    def rho_sigma(self) -> tuple[sp.Expr, sp.Expr] | None:
        """``(rho, sigma)`` with ``charpoly = rho(r) - lam*sigma(r)``, if that form exists."""
        return self._rho_sigma

    @cached_property
    def _rho_sigma(self) -> tuple[sp.Expr, sp.Expr] | None:
        lam = self.lam_symbol
        if lam is None:
            return None
        poly = sp.expand(self.charpoly())
        if sp.degree(poly, lam) != 1:
            return None
        sigma = -poly.coeff(lam, 1)
        rho = poly.coeff(lam, 0)
        return sp.collect(rho, r), sp.collect(sigma, r)

    # --------------------------------------------------------------- substitution
    def subs(self, values: Mapping | None = None, **kwargs) -> Recurrence:
        """Return a new recurrence with some parameters replaced.

        Values may be numbers (floats are read as the decimal they print as), SymPy
        expressions in the other parameters, or strings parsed safely. Each numeric value
        is checked against the parameter's domain.

        Raises
        ------
        UnknownParameterError, DomainError, ParameterError
        """
        items = dict(values or {})
        items.update(kwargs)
        symbols = self.symbols
        mapping: dict[sp.Symbol, sp.Expr] = {}
        fresh: dict[str, Param] = {}  # new symbols of SymPy values: they become parameters
        for key, value in items.items():
            name = key.name if isinstance(key, sp.Symbol) else str(key)
            param = self.param(name)
            expr = with_param_symbols(to_exact(value, symbols), symbols)
            stray = expr.free_symbols - set(symbols.values())
            if stray and isinstance(value, str):  # text keeps refusing unknown names: typos
                raise UnknownParameterError(f"value for {name} uses unknown names {sorted(map(str, stray))}")
            for s in stray:
                fresh.setdefault(s.name, _fresh_param(s, param, expr))
            expr = with_param_symbols(expr, {k: p.symbol for k, p in fresh.items()})
            param.check(expr)
            mapping[param.symbol] = expr
        if not mapping:
            return self
        for sym, expr in mapping.items():  # the values go in at once: one may not use another's name
            if clash := [f"{s.name}, which is given a value itself ({s.name}={mapping[s]})"
                         for s in sorted(expr.free_symbols & set(mapping), key=str)]:
                raise ParameterError(f"{sym.name}={expr} uses {'; '.join(clash)}: substitute in two steps")
        coeffs = [sp.ImmutableMatrix(M.xreplace(mapping)).applyfunc(sp.expand) for M in self.coeffs]
        kept = tuple(p for p in self.params if p.symbol not in mapping) + tuple(
            p for k, p in fresh.items() if k not in symbols or symbols[k] in mapping
        )
        lam = self.lam if self.lam in {p.name for p in kept} else None
        native = tuple(
            replace(real, A=real.A.xreplace(mapping), T=real.T.xreplace(mapping)) for real in self.native
        )
        return replace(self, coeffs=tuple(coeffs), params=kept, lam=lam, native=native)

    def is_numeric(self) -> bool:
        """True when no symbolic parameter is left."""
        return not any(M.free_symbols for M in self.coeffs)

    # --------------------------------------------------------------- structure
    def kron(self, d: int) -> Recurrence:
        """Expand to ``d`` channels: every coefficient becomes ``A_j (x) I_d``.

        The spectrum is unchanged, each eigenvalue repeated ``d`` times.
        """
        if not isinstance(d, int) or isinstance(d, bool) or d < 1:
            raise ParameterError(f"d must be a positive integer, got {d!r}")
        eye = sp.eye(d)
        coeffs = tuple(sp.ImmutableMatrix(sp.kronecker_product(A, eye)) for A in self.coeffs)
        native = tuple(
            replace(
                real,
                A=sp.kronecker_product(real.A, eye),
                T=sp.kronecker_product(real.T, eye),
                states=tuple(f"{s}_{c + 1}" for s in real.states for c in range(d)),
            )
            for real in self.native
        )
        return replace(self, coeffs=coeffs, native=native, name=f"{self.name}(x)I{d}")

    def iterate(self, initial: Iterable, steps: int) -> list:
        """Exact forward iteration from ``x_0 ... x_{p-1}``; returns ``x_0 ... x_{steps}``.

        Every parameter must have been substituted or the result stays symbolic
        (slowly). Vectors are returned as SymPy column matrices when ``dim > 1``.
        """
        values = [self._as_state_value(v) for v in initial]
        if len(values) != self.order:
            raise ParameterError(
                f"need {self.order} initial values x_0..x_{self.order - 1}, got {len(values)}"
            )
        A0inv = self.coeffs[0].inv()
        p = self.order
        while len(values) <= steps:
            rhs = sum((self.coeffs[j] * values[-j] for j in range(1, p + 1)), sp.zeros(self.dim, 1))
            values.append((-A0inv * rhs).applyfunc(sp.expand))
        out = values[: steps + 1]
        return [v[0, 0] for v in out] if self.is_scalar else out

    def _as_state_value(self, v) -> sp.Matrix:
        if isinstance(v, (list, tuple, sp.MatrixBase)):
            M = sp.Matrix([to_exact(e, self.symbols) for e in list(v)])
        else:
            M = sp.Matrix([to_exact(v, self.symbols)])
        if M.shape != (self.dim, 1):
            raise ShapeError(f"an initial value must have {self.dim} entries, got {M.shape[0]}")
        return M

    # --------------------------------------------------------------- printing
    def equation(self) -> str:
        """The recurrence as text, e.g. ``x[l+2] - (m + 1)*x[l+1] + m*x[l] = 0``."""
        p = self.order
        terms = []
        for j, A in enumerate(self.coeffs):
            k = p - j
            idx = "l" if k == 0 else f"l+{k}"
            c = A[0, 0] if self.is_scalar else A
            if self.is_scalar and c == 0:
                continue
            terms.append(f"({sp.sstr(c)})*x[{idx}]" if self.is_scalar else f"{c.tolist()}*x[{idx}]")
        return " + ".join(terms) + " = 0"

    def __repr__(self) -> str:
        return short_repr(self)

    def __str__(self) -> str:
        lines = [f"{self.name}: {self.equation()}"]
        if self.params:
            lines.append("parameters: " + ", ".join(f"{p.name} in {p.domain}" for p in self.params))
        if self.rule:
            lines.append(f"rule: {self.rule}")
        if self.source:
            lines.append(f"source: {self.source}")
        return "\n".join(lines)

    def _repr_latex_(self) -> str:
        return f"${tex(self.charpoly())} = 0$"
