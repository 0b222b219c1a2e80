"""Reading the claims' own transcribed formulas without evaluating text.

The claims modules transcribe a source's formulas as text (``"Sum(q(j), (j, n, k))"``,
``"A_ij > 0"``, ``"n!"``). :func:`formula` reads such a text through Python's syntax
tree and builds SymPy objects from an allow-list, as :mod:`depthdyn.parse` does for user
input, but with the vocabulary a transcription needs: undefined function calls
(``x(l - j)``), ``Sum``/``Product``, comparisons and tuples. Unknown names become plain
symbols and unknown calls undefined functions, as SymPy's reader would make them; no
attribute, subscript, keyword, lambda or import is accepted, so nothing in the text runs.

>>> formula("Sum(q(j), (j, 1, 3)) + n!").doit()
q(1) + q(2) + q(3) + factorial(n)
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Mapping

import sympy as sp

from ..errors import ParseError
from ..parse import CONSTANTS, FUNCTIONS, exact_number

__all__ = ["formula"]

#: Callables a transcription may use besides :data:`depthdyn.parse.FUNCTIONS`.
EXTRA_FUNCTIONS: Mapping[str, object] = {
    "Sum": sp.Sum,
    "Product": sp.Product,
    "factorial": sp.factorial,
    "Max": sp.Max,
    "Min": sp.Min,
}

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.Pow: operator.pow}
_COMPARE = {ast.Lt: sp.Lt, ast.LtE: sp.Le, ast.Gt: sp.Gt, ast.GtE: sp.Ge, ast.Eq: sp.Eq, ast.NotEq: sp.Ne}
_BOOL = {ast.And: sp.And, ast.Or: sp.Or}
# "n!" and "(n - 1)!" as factorial(...); "!=" is left alone
_FACTORIAL = re.compile(r"(\b\w+|\([^()]*\))!(?!=)")


def formula(text: str, names: Mapping[str, object] | None = None) -> sp.Basic:
    """A transcribed formula as SymPy, built from an allow-list of syntax (never evaluated).

    Parameters
    ----------
    text : str
        The formula; ``^`` is a power and ``n!`` a factorial.
    names : mapping, optional
        Identifiers and the SymPy objects (or callables such as ``sp.Function("q")``) they
        stand for; other names become symbols, other calls undefined functions.

    Raises
    ------
    ParseError
        On syntax outside the allow-list (attributes, subscripts, keywords, ...).
    """
    if not isinstance(text, str):
        raise ParseError(f"expected a formula as text, got {type(text).__name__}")
    source = _FACTORIAL.sub(r"factorial(\1)", text.strip().replace("^", "**"))
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError) as exc:
        raise ParseError(f"cannot read the formula {text[:80]!r}: {getattr(exc, 'msg', exc)}") from None
    return _Reader(text, dict(names or {})).build(tree.body)


class _Reader:
    def __init__(self, text: str, names: dict):
        self.text = text
        self.names = names

    def fail(self, what: str) -> ParseError:
        return ParseError(f"cannot read the formula {self.text[:80]!r}: {what}")

    def name(self, ident: str):
        if ident in self.names:
            return self.names[ident]
        if ident in CONSTANTS:
            return CONSTANTS[ident]
        return sp.Symbol(ident)

    def build(self, node: ast.AST):
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, (int, float, complex)):
                raise self.fail(f"unsupported constant {node.value!r}")
            return exact_number(node.value)
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = self.build(node.operand)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](self.build(node.left), self.build(node.right))
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
            return _COMPARE[type(node.ops[0])](self.build(node.left), self.build(node.comparators[0]))
        if isinstance(node, ast.BoolOp) and type(node.op) in _BOOL:
            return _BOOL[type(node.op)](*[self.build(v) for v in node.values])
        if isinstance(node, ast.Tuple):
            return tuple(self.build(e) for e in node.elts)
        if isinstance(node, ast.List):
            return [self.build(e) for e in node.elts]
        if isinstance(node, ast.Call):
            return self.call(node)
        raise self.fail(f"{type(node).__name__} is not allowed")

    def call(self, node: ast.Call):
        if not isinstance(node.func, ast.Name) or node.keywords:
            raise self.fail("only plain calls f(a, b) are allowed")
        ident = node.func.id
        func = self.names.get(ident) or FUNCTIONS.get(ident) or EXTRA_FUNCTIONS.get(ident)
        if func is None:
            func = sp.Function(ident)
        if not callable(func):
            raise self.fail(f"{ident!r} is not a function")
        return func(*[self.build(a) for a in node.args])
