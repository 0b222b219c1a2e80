"""Safe parsing of user expressions (command line, JSON, strings passed to the API).

SymPy's ``sympify`` and ``parse_expr`` call :func:`eval`, so a string such as
``__import__('os').system(...)`` would run. This module walks Python's own syntax tree
and builds SymPy objects from an allow-list: numbers, known names, arithmetic
(``+ - * / **``, and ``^`` read as ``**``), unary signs, calls of a few mathematical functions, and nested
lists (for matrices). Anything else raises :class:`~depthdyn.errors.ParseError`.
:func:`as_sympy` is the one door for any user value (a string, a number, or a container
of them): every public entry point that takes an expression goes through it.

Decimal literals are read exactly from their text (``0.5`` -> ``1/2``, ``1e-400`` ->
``10**-400``, ``0.99999999999999999999`` stays below 1), never through a binary float.

The parser's budget covers the whole expression, not one operator: before each operation
it estimates the size of the result (decimal digits of the largest exact number, number
of terms once expanded) and refuses anything past :data:`MAX_DIGITS` / :data:`MAX_TERMS`,
so ``((2**999)**999)**999`` or ``binomial(10**100, 10**50)`` end in a one-line
:class:`~depthdyn.errors.ParseError` at once instead of running for hours.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from fractions import Fraction

import sympy as sp

from .errors import ParseError
from .limits import MAX_DIGITS, MAX_EXPONENT, MAX_NESTING, MAX_TERMS, MAX_TEXT_LENGTH

__all__ = [
    "parse_expr",
    "parse_value",
    "free_names",
    "as_sympy",
    "exact_number",
    "FUNCTIONS",
    "CONSTANTS",
    "NON_FINITE",
    "check_name",
    "nesting_depth",
]

#: Functions a user may call inside an expression.
FUNCTIONS: Mapping[str, object] = {
    "sqrt": sp.sqrt,
    "exp": sp.exp,
    "log": sp.log,
    "sin": sp.sin,
    "cos": sp.cos,
    "tan": sp.tan,
    "atan": sp.atan,
    "acos": sp.acos,
    "asin": sp.asin,
    "cosh": sp.cosh,
    "sinh": sp.sinh,
    "tanh": sp.tanh,
    "Abs": sp.Abs,
    "abs": sp.Abs,
    "re": sp.re,
    "im": sp.im,
    "conjugate": sp.conjugate,
    "binomial": sp.binomial,
    "Rational": sp.Rational,
}

#: Named constants.
CONSTANTS: Mapping[str, sp.Expr] = {"I": sp.I, "pi": sp.pi, "E": sp.E, "oo": sp.oo}

#: Names of undefined or infinite values: never a number and never a parameter name.
NON_FINITE = frozenset({"nan", "NaN", "NAN", "inf", "Inf", "INF", "infinity", "Infinity", "zoo"})


def check_name(name: str) -> str:
    """``name`` unless it may not name a parameter: a non-finite value or a double underscore.

    Raises
    ------
    ParseError
        ``nan``, ``inf``, ``zoo`` ... (:data:`NON_FINITE`) or a name with ``__`` (how code
        reaches the interpreter).
    """
    if name in NON_FINITE:
        raise ParseError(f"{name!r} is not a number depthdyn can work with and not a parameter name: "
                         "give finite values")
    if "__" in name:
        raise ParseError(f"the name {name!r} is not allowed (no double underscores)")
    return name


# exp, sinh, cosh of a number x have about |x| / ln(10) digits
_MAX_EXP_ARG = MAX_DIGITS * math.log(10)
_GROWING = ("exp", "sinh", "cosh")

_BINOPS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a**b,
}


def _log10(n: int) -> float:
    """Decimal digits of an integer (0 for |n| <= 1), without converting it to text."""
    n = abs(int(n))
    return math.log10(n) if n > 1 else 0.0


def _rational_digits(q: sp.Rational) -> float:
    return _log10(q.p) + _log10(q.q)


def _count(x: float) -> str:
    return f"{int(x)}" if x < 1e9 else f"{x:.2g}"


def _too_large(what: str, digits: float) -> ParseError:
    return ParseError(
        f"{what} is too large for exact work: about {_count(digits)} decimal digits (limit {MAX_DIGITS})"
    )


def _decimal_text(text: str) -> sp.Rational:
    """The exact rational a decimal literal's text denotes (``"1e-400"``, ``"0.1"``)."""
    try:
        dec = Decimal(text.replace("_", ""))
    except InvalidOperation:
        raise ParseError(f"cannot read the number {text!r}") from None
    if not dec.is_finite():
        raise ParseError(f"non-finite number {text!r}")
    _, digits, exponent = dec.as_tuple()
    if len(digits) + abs(exponent) > MAX_DIGITS + 1:
        raise _too_large(f"the number {text[:40]}", len(digits) + abs(exponent))
    return sp.Rational(Fraction(dec))


def exact_number(value) -> sp.Expr:
    """An exact SymPy number from a Python, NumPy or :mod:`decimal` number.

    Floats become the decimal they print as (``0.1`` -> ``1/10``); NaN, infinities,
    booleans and integers past :data:`MAX_DIGITS` digits raise
    :class:`~depthdyn.errors.ParseError`.

    Examples
    --------
    >>> exact_number(0.1), exact_number(3), exact_number(1 - 2j)
    (1/10, 3, 1 - 2*I)
    """
    if hasattr(value, "item") and getattr(value, "shape", None) == ():
        value = value.item()  # a NumPy scalar
    if isinstance(value, bool) or not isinstance(value, (int, float, complex, Fraction, Decimal)):
        raise ParseError(f"expected a number, got {value!r} ({type(value).__name__})")
    if isinstance(value, complex):
        return exact_number(value.real) + sp.I * exact_number(value.imag)
    if isinstance(value, float) and not math.isfinite(value):
        raise ParseError(f"non-finite number {value!r}")
    if isinstance(value, float):
        return _decimal_text(repr(value))  # the shortest decimal that round-trips
    if isinstance(value, Decimal):
        return _decimal_text(str(value))
    q = sp.Rational(value.numerator, value.denominator)
    if _rational_digits(q) > MAX_DIGITS:
        raise _too_large("the number", _rational_digits(q))
    return q


class _Builder:
    """Builds ``(value, digits, terms)`` bottom-up, checking the size before each operation."""

    def __init__(self, text: str, names: Mapping[str, sp.Expr], allow_lists: bool):
        self.text = text
        self.names = names
        self.allow_lists = allow_lists

    def fail(self, what: str) -> ParseError:
        allowed = ", ".join(sorted(self.names)) or "none"
        return ParseError(
            f"cannot parse {self._short()}: {what}. Allowed: numbers, the names "
            f"[{allowed}], + - * / ** ^, and the functions {', '.join(sorted(FUNCTIONS))}"
        )

    def _short(self) -> str:
        return repr(self.text) if len(self.text) <= 80 else repr(self.text[:77] + "...")

    def budget(self, digits: float, terms: int) -> tuple[float, int]:
        if digits > MAX_DIGITS:
            raise ParseError(
                f"cannot parse {self._short()}: a number in it would have about {_count(digits)} "
                f"decimal digits (limit {MAX_DIGITS}); substitute smaller values"
            )
        if terms > MAX_TERMS:
            raise ParseError(
                f"cannot parse {self._short()}: expanded it would have about {_count(terms)} terms "
                f"(limit {MAX_TERMS})"
            )
        return digits, terms

    def constant(self, node: ast.Constant):
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float, complex)):
            raise self.fail(f"unsupported constant {value!r}")
        if isinstance(value, int):
            if _log10(value) > MAX_DIGITS:
                raise _too_large("an integer literal", _log10(value))
            return sp.Integer(value), _log10(value), 1
        # read the literal's own text: a binary float would turn 1e-400 into 0
        segment = ast.get_source_segment(self.source, node) or repr(value)
        if isinstance(value, complex):
            q = _decimal_text(segment.rstrip("jJ"))
            return sp.I * q, _rational_digits(q), 1
        q = _decimal_text(segment)
        return q, _rational_digits(q), 1

    def build(self, node: ast.AST, depth: int = 0):
        if depth > MAX_NESTING:
            raise self.fail("expression nested too deeply")
        if isinstance(node, ast.Expression):
            return self.build(node.body, depth + 1)
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.Name):
            check_name(node.id)
            if node.id in self.names:
                return self.names[node.id], 0.0, 1
            if node.id in CONSTANTS:
                return CONSTANTS[node.id], 0.0, 1
            raise self.fail(f"unknown name {node.id!r}")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand, d, t = self.build(node.operand, depth + 1)
            if isinstance(operand, list):
                raise self.fail("arithmetic on a list")
            return (-operand if isinstance(node.op, ast.USub) else operand), d, t
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return self.binop(node, depth)
        if isinstance(node, ast.Call):
            return self.call(node, depth)
        if isinstance(node, (ast.List, ast.Tuple)) and self.allow_lists:
            items = [self.build(e, depth + 1) for e in node.elts]
            terms = sum(t for _, _, t in items)
            digits = max((d for _, d, _ in items), default=0.0)
            self.budget(digits, terms)
            return [v for v, _, _ in items], digits, terms
        raise self.fail(f"{type(node).__name__} is not allowed")

    def binop(self, node: ast.BinOp, depth: int):
        left, dl, tl = self.build(node.left, depth + 1)
        right, dr, tr = self.build(node.right, depth + 1)
        if isinstance(left, list) or isinstance(right, list):
            raise self.fail("arithmetic on a list")
        op = type(node.op)
        if op in (ast.Add, ast.Sub):
            digits, terms = max(dl, dr) + math.log10(2), tl + tr
        elif op in (ast.Mult, ast.Div):
            if op is ast.Div and right == 0:
                raise self.fail("division by zero")
            digits, terms = dl + dr, tl * tr
        else:
            digits, terms = self.power_size(left, right, dl, tl, dr)
        self.budget(digits, terms)
        return _BINOPS[op](left, right), digits, terms

    def power_size(self, base, exponent, db: float, tb: int, de: float) -> tuple[float, int]:
        if not exponent.is_number:
            return db + de, tb
        size = _magnitude(exponent)
        if size is None or size > MAX_EXPONENT:
            raise self.fail(f"exponent {exponent} is too large (limit {MAX_EXPONENT})")
        if exponent.is_Integer:
            n = abs(int(exponent))
            return db * max(n, 1), (math.comb(n + tb - 1, tb - 1) if tb > 1 else 1)
        return db * max(math.ceil(size), 1) + de, tb

    def call(self, node: ast.Call, depth: int):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            raise self.fail("only calls of the listed functions are allowed")
        if node.keywords:
            raise self.fail("keyword arguments are not allowed")
        name = node.func.id
        built = [self.build(a, depth + 1) for a in node.args]
        if any(isinstance(v, list) for v, _, _ in built):
            raise self.fail("a list cannot be a function argument")
        args = [v for v, _, _ in built]
        digits = sum(d for _, d, _ in built)
        terms = max((t for _, _, t in built), default=1)
        if name in _GROWING and len(args) == 1 and args[0].is_number:
            size = _magnitude(args[0])
            if size is None or size > _MAX_EXP_ARG:
                raise self.fail(f"{name}({args[0]}) is too large (argument limit {_MAX_EXP_ARG:.0f})")
            digits += size / math.log(10)
        if name == "binomial" and len(args) == 2:
            digits = max(digits, _binomial_digits(*args))
        self.budget(digits, terms)
        try:
            return FUNCTIONS[name](*args), digits, terms
        except (TypeError, ValueError) as exc:
            raise self.fail(f"bad call of {name}: {exc}") from None


def _magnitude(value: sp.Expr) -> float | None:
    """``|value|`` as a float for a number of bounded size, ``None`` if it is not finite."""
    try:
        mag = float(sp.Abs(value).evalf(15))
    except (TypeError, ValueError, OverflowError):
        return None
    return mag if math.isfinite(mag) else None


def _binomial_digits(n: sp.Expr, k: sp.Expr) -> float:
    """Decimal digits of ``binomial(n, k)`` for integers (an upper bound), 0 when symbolic."""
    if not (n.is_Integer and k.is_Integer):
        return 0.0
    n, k = int(n), int(k)
    if n < 0 or k < 0 or k > n:
        return _log10(n) * min(abs(k), 10**6)
    k = min(k, n - k)
    if n < 10**15:  # log Gamma is accurate here
        return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)) / math.log(10)
    return k * _log10(n)


def nesting_depth(text: str) -> tuple[int, int]:
    """``(depth, position)``: how deeply brackets and runs of signs nest in ``text``, and where.

    Read from the text before Python's parser sees it: its syntax tree is built recursively
    and thousands of nested signs (``- - - ... x``) exhaust the interpreter's stack.

    >>> nesting_depth("-(-(x + 1))")
    (4, 3)
    """
    depth = best = run = 0
    where = 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(depth - 1, 0)
        if ch in "+-~":
            run += 1
        elif not ch.isspace():
            run = 0 if ch not in "([{" else run
        if depth + run > best:
            best, where = depth + run, i
    return best, where


def _tree(text: str) -> ast.Expression:
    if not isinstance(text, str):
        raise ParseError(f"expected a string, got {type(text).__name__}")
    if len(text) > MAX_TEXT_LENGTH:
        raise ParseError(f"expression longer than {MAX_TEXT_LENGTH} characters")
    if not text.strip():
        raise ParseError("empty expression")
    if nesting_depth(text)[0] > MAX_NESTING:
        raise ParseError(f"cannot parse {text[:80]!r}: nested more than {MAX_NESTING} deep "
                         "(brackets and signs)")
    # users write r^2 for a power; Python's ^ binds looser than -, so translate the text
    try:
        return ast.parse(_source(text), mode="eval")
    except (RecursionError, MemoryError):
        raise ParseError(f"cannot parse {text[:80]!r}: nested too deeply") from None
    except (SyntaxError, ValueError) as exc:  # ValueError: a null byte
        msg = getattr(exc, "msg", None) or str(exc)
        raise ParseError(f"cannot parse {text[:80]!r}: {msg}") from None


def _source(text: str) -> str:
    return text.strip().replace("^", "**")


def _parse(text: str, names: Mapping[str, sp.Expr], allow_lists: bool):
    tree = _tree(text)
    builder = _Builder(text, names, allow_lists)
    builder.source = _source(text)
    result, _, _ = builder.build(tree)
    if isinstance(result, sp.Basic) and result.has(sp.nan, sp.zoo):
        raise ParseError(f"{text[:80]!r} evaluates to an undefined value")
    return result


def free_names(text: str) -> set[str]:
    """Identifiers in ``text`` other than the allowed functions and constants.

    ``nan``, ``inf``, ``zoo`` and names with ``__`` raise :class:`~depthdyn.errors.ParseError`
    (:func:`check_name`): they would otherwise become free parameters.

    Examples
    --------
    >>> sorted(free_names("r**2 - a*sqrt(b) + pi"))
    ['a', 'b', 'r']
    """
    tree = _tree(text)
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - called
    return {check_name(name) for name in names if name not in CONSTANTS and name not in FUNCTIONS}


def parse_expr(text: str, names: Mapping[str, sp.Expr] | None = None) -> sp.Expr:
    """Parse ``text`` into a SymPy expression without evaluating Python code.

    Parameters
    ----------
    text : str
        The expression, e.g. ``"r**2 - (1 + m + eta*lam)*r + m"``.
    names : mapping, optional
        Allowed identifiers and the SymPy objects they stand for.

    Raises
    ------
    ParseError
        On any construct outside the allow-list.

    Examples
    --------
    >>> import sympy as sp
    >>> r = sp.Symbol("r")
    >>> parse_expr("r^2 - 0.5*r", {"r": r})
    r**2 - r/2
    """
    return _parse(text, names or {}, allow_lists=False)


def parse_value(text: str, names: Mapping[str, sp.Expr] | None = None):
    """Parse a scalar expression or a nested list of expressions (a matrix)."""
    return _parse(text, names or {}, allow_lists=True)


def as_sympy(value, names: Mapping[str, sp.Expr] | None = None, *, scalar: bool = False):
    """Any user value as SymPy, without evaluating text: the one door for user input.

    Strings go through the safe parser (with ``names`` available), numbers become exact
    (:func:`exact_number`), SymPy objects pass through, and lists, tuples and NumPy
    arrays are converted element by element into (nested) lists. Dicts, sets and any
    other type raise :class:`~depthdyn.errors.ParseError`, as do containers when
    ``scalar`` is true.

    Examples
    --------
    >>> as_sympy(["1/2", 0.25, (3, "2**-1")])
    [1/2, 1/4, [3, 1/2]]
    """
    names = names or {}
    if isinstance(value, sp.MatrixBase):
        value = sp.ImmutableMatrix(value)
    if isinstance(value, sp.Basic):
        if scalar and isinstance(value, sp.MatrixBase):
            raise ParseError(f"expected a scalar expression, got a {value.shape[0]}x{value.shape[1]} matrix")
        return value
    if hasattr(value, "tolist") and hasattr(value, "shape"):  # NumPy arrays and scalars
        value = value.tolist()
    if isinstance(value, str):
        return parse_expr(value, names) if scalar else parse_value(value, names)
    if isinstance(value, (list, tuple)):
        if scalar:
            raise ParseError(f"expected a scalar expression, got a {type(value).__name__}")
        return [as_sympy(v, names) for v in value]
    if isinstance(value, (bool, int, float, complex, Fraction, Decimal)):
        return exact_number(value)
    raise ParseError(
        f"cannot read a {type(value).__name__} as an expression; give a string, a number, "
        "a SymPy expression, or a list of them"
    )
