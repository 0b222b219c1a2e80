"""Safe parsing of user expressions (command line, JSON, strings passed to the API).

SymPy's ``sympify`` and ``parse_expr`` call :func:`eval`, so a string such as
``__import__('os').system(...)`` would run. This module walks Python's own syntax tree
and builds SymPy objects from an allow-list: numbers, known names, arithmetic
(``+ - * / **``, and ``^`` read as ``**``), unary signs, calls of a few mathematical functions, and nested
lists (for matrices). Anything else raises :class:`~depthdyn.errors.ParseError`.

Decimal literals become exact rationals (``0.5`` -> ``1/2``, ``0.1`` -> ``1/10``).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from fractions import Fraction

import sympy as sp

from .errors import ParseError

__all__ = ["parse_expr", "parse_value", "free_names", "FUNCTIONS", "CONSTANTS"]

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

_MAX_LENGTH = 2000
_MAX_EXPONENT = 1000
_MAX_DEPTH = 60

_BINOPS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a**b,
}


def _number(value: object, text: str) -> sp.Expr:
    if isinstance(value, bool) or not isinstance(value, (int, float, complex)):
        raise ParseError(f"unsupported constant {value!r} in {text!r}")
    if isinstance(value, int):
        return sp.Integer(value)
    if isinstance(value, complex):
        return _number(value.real, text) + sp.I * _number(value.imag, text)
    if value != value or value in (float("inf"), float("-inf")):
        raise ParseError(f"non-finite number in {text!r}")
    # repr gives the shortest decimal that round-trips; read it as an exact decimal
    return sp.Rational(Fraction(repr(value)))


class _Builder:
    def __init__(self, text: str, names: Mapping[str, sp.Expr], allow_lists: bool):
        self.text = text
        self.names = names
        self.allow_lists = allow_lists

    def fail(self, what: str) -> ParseError:
        allowed = ", ".join(sorted(self.names)) or "none"
        return ParseError(
            f"cannot parse {self.text!r}: {what}. Allowed: numbers, the names "
            f"[{allowed}], + - * / ** ^, and the functions {', '.join(sorted(FUNCTIONS))}"
        )

    def build(self, node: ast.AST, depth: int = 0):
        if depth > _MAX_DEPTH:
            raise self.fail("expression nested too deeply")
        if isinstance(node, ast.Expression):
            return self.build(node.body, depth + 1)
        if isinstance(node, ast.Constant):
            return _number(node.value, self.text)
        if isinstance(node, ast.Name):
            if node.id in self.names:
                return self.names[node.id]
            if node.id in CONSTANTS:
                return CONSTANTS[node.id]
            raise self.fail(f"unknown name {node.id!r}")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = self.build(node.operand, depth + 1)
            return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            left = self.build(node.left, depth + 1)
            right = self.build(node.right, depth + 1)
            if isinstance(left, list) or isinstance(right, list):
                raise self.fail("arithmetic on a list")
            if isinstance(node.op, ast.Pow):
                if right.is_number and (not right.is_finite or abs(right) > _MAX_EXPONENT):
                    raise self.fail(f"exponent {right} is too large (limit {_MAX_EXPONENT})")
            if isinstance(node.op, ast.Div) and right == 0:
                raise self.fail("division by zero")
            return _BINOPS[type(node.op)](left, right)
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
                raise self.fail("only calls of the listed functions are allowed")
            if node.keywords:
                raise self.fail("keyword arguments are not allowed")
            args = [self.build(a, depth + 1) for a in node.args]
            if any(isinstance(a, list) for a in args):
                raise self.fail("a list cannot be a function argument")
            try:
                return FUNCTIONS[node.func.id](*args)
            except (TypeError, ValueError) as exc:
                raise self.fail(f"bad call of {node.func.id}: {exc}") from None
        if isinstance(node, (ast.List, ast.Tuple)) and self.allow_lists:
            return [self.build(e, depth + 1) for e in node.elts]
        raise self.fail(f"{type(node).__name__} is not allowed")


def _tree(text: str) -> ast.Expression:
    if not isinstance(text, str):
        raise ParseError(f"expected a string, got {type(text).__name__}")
    if len(text) > _MAX_LENGTH:
        raise ParseError(f"expression longer than {_MAX_LENGTH} characters")
    if not text.strip():
        raise ParseError("empty expression")
    # users write r^2 for a power; Python's ^ binds looser than -, so translate the text
    try:
        return ast.parse(text.strip().replace("^", "**"), mode="eval")
    except SyntaxError as exc:
        raise ParseError(f"cannot parse {text!r}: {exc.msg}") from None


def _parse(text: str, names: Mapping[str, sp.Expr], allow_lists: bool):
    result = _Builder(text, names, allow_lists).build(_tree(text))
    if isinstance(result, sp.Basic) and result.has(sp.nan, sp.zoo):
        raise ParseError(f"{text!r} evaluates to an undefined value")
    return result


def free_names(text: str) -> set[str]:
    """Identifiers in ``text`` other than the allowed functions and constants.

    Examples
    --------
    >>> sorted(free_names("r**2 - a*sqrt(b) + pi"))
    ['a', 'b', 'r']
    """
    tree = _tree(text)
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - called
    return {name for name in names if name not in CONSTANTS and name not in FUNCTIONS}


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
