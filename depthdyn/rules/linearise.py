"""Building one side of a rule's equation as a linear map of the states, in one mode.

Every value is a SymPy matrix: a state of ``n`` streams is an ``n x 1`` column of symbols
(one per stream and layer offset), a scalar is ``1 x 1`` and multiplies anything. A branch
call ``f(z)`` becomes ``mode * z`` (``f ~ lam`` in the declared mode). A normalisation
inside a branch (pre-norm, ``f(LN(x))``) becomes its argument: its scale is part of the
branch's slope. A normalisation outside every branch (post-norm, DeepNorm's
``LN(alpha x + f(x))``) divides by its scale while the branch is small, the coefficient ``c``
of the one state its argument keeps when every branch is zero (``(alpha + lam) / alpha``);
an argument with no such single skip term is refused. What could make the map non-linear is
refused where it happens:
a product of two state terms, a state under a power, a division or a maths function.
Sub-expressions without states are handed whole to :func:`depthdyn.parse.parse_expr`,
whose allow-list and size budgets then apply.
"""

from __future__ import annotations

import ast

import sympy as sp

from ..errors import ParseError, RuleError, RuleShapeError
from ..limits import MAX_MATRIX_POWER
from ..parse import parse_expr
from .parse import NORMALISERS, PRIME, RuleSyntax, Side, located_as

__all__ = ["Lineariser", "check_column"]

_Matrix = sp.ImmutableMatrix


class Lineariser:
    """Builds the sides of a rule's equations as matrices linear in the state symbols.

    Parameters
    ----------
    syntax : RuleSyntax
        The scanned rule.
    n : int
        Streams per state.
    scalars, matrices : dict
        Values of the parameters and constants (SymPy expressions) and of the matrix names.
    modes : dict
        Branch name -> its slope in the mode (``"f": lam``).
    """

    def __init__(self, syntax: RuleSyntax, n: int, scalars: dict, matrices: dict, modes: dict):
        self.syntax, self.n = syntax, n
        self.scalars, self.matrices, self.modes = scalars, matrices, modes
        self.states = set(syntax.states)
        self.symbols: dict[tuple[str, int], _Matrix] = {}
        self.stages = {s: self._column(s) for s in syntax.stages}
        self.linear: set[sp.Symbol] = set().union(*(M.free_symbols for M in self.stages.values()))
        self.in_branch = 0  # depth of branch calls around the node being built

    def _column(self, label: str) -> _Matrix:
        return _Matrix(self.n, 1, [sp.Dummy(f"{label}_{i + 1}") for i in range(self.n)])

    def state(self, name: str, offset: int) -> _Matrix:
        """The column of symbols for ``name[l + offset]``."""
        key = (name, offset)
        if key not in self.symbols:
            self.symbols[key] = self._column(f"{name}{offset:+d}")
            self.linear |= self.symbols[key].free_symbols
        return self.symbols[key]

    # ----------------------------------------------------------------- helpers
    def fail(self, side: Side, node: ast.AST, what: str, shape: bool = False) -> RuleError:
        kind = RuleShapeError if shape else RuleError
        return located_as(kind, self.syntax.text, side.position(node), what)

    def depends(self, M: _Matrix) -> bool:
        return bool(M.free_symbols & self.linear)

    def _pure(self, node: ast.AST) -> bool:
        """No state, stage, matrix, branch, transpose or layer index anywhere under ``node``."""
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Subscript, ast.Attribute)) or (
                    isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.MatMult)):
                return False
            if isinstance(sub, ast.Name) and (sub.id.endswith(PRIME) or sub.id in self.states
                                              or sub.id in self.stages or sub.id in self.matrices):
                return False
            if _is_transpose(sub):
                return False
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and (
                    sub.func.id in self.modes or sub.func.id in NORMALISERS):
                return False
        return True

    # ----------------------------------------------------------------- building
    def build(self, side: Side, node: ast.AST, shift: int) -> _Matrix:
        """``node`` as a matrix, states at their offsets plus ``shift``."""
        if self._pure(node):
            try:
                value = parse_expr(side.segment(node), self.scalars)
            except ParseError as exc:
                raise self.fail(side, node, str(exc)) from None
            return _Matrix([[value]])
        if isinstance(node, ast.Name):
            return self.name(side, node, shift)
        if isinstance(node, ast.Subscript):
            sl = node.slice
            k = 0 if isinstance(sl, ast.Name) else sl.right.value * (1 if isinstance(sl.op, ast.Add) else -1)
            return self.state(node.value.id, k + shift)
        if isinstance(node, ast.UnaryOp):
            value = self.build(side, node.operand, shift)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.Attribute):  # only .T passes the scan
            return self.build(side, node.value, shift).T
        if isinstance(node, ast.Call):
            return self.call(side, node, shift)
        return self.binop(side, node, shift)

    def name(self, side: Side, node: ast.Name, shift: int) -> _Matrix:
        name = node.id
        if name.endswith(PRIME):
            return self.state(name[: -len(PRIME)], 1 + shift)
        if name in self.states:
            return self.state(name, shift)
        if name in self.stages:
            return self.stages[name]
        if name in self.matrices:
            return self.matrices[name]
        if name in self.scalars:
            return _Matrix([[self.scalars[name]]])
        raise self.fail(side, node, f"unknown name {name!r}")  # pragma: no cover - the scan decides

    def call(self, side: Side, node: ast.Call, shift: int) -> _Matrix:
        name = node.func.id
        if name in NORMALISERS:
            arg = self.build(side, node.args[0], shift)
            if self.in_branch:
                return arg  # pre-normalisation: its scale is part of the branch's slope
            return self.post_norm(side, node, shift, arg)
        self.in_branch += name in self.modes
        try:
            arg = self.build(side, node.args[0], shift)
        finally:
            self.in_branch -= name in self.modes
        if name in self.modes:
            if not self.depends(arg):
                raise self.fail(side, node, f"{name}(...) has no state in its argument: a constant "
                                "forcing or bias does not change the modes; drop it")
            return (self.modes[name] * arg).applyfunc(sp.expand)
        raise self.fail(side, node, f"a state inside {name}(...) enters non-linearly; only the branch "
                        f"functions ({', '.join(sorted(self.modes)) or 'none declared'}) are linearised")

    def post_norm(self, side: Side, node: ast.Call, shift: int, arg: _Matrix) -> _Matrix:
        """``LN(z)`` outside every branch: ``z`` divided by the scale of its skip term.

        With every branch at zero the argument must be ``c`` times one state (or stage); the
        normalisation then divides by ``|c|``, its scale while the branch is small (a ``c`` of
        unknown sign is read as positive, the scale of a skip connection).
        """
        name = node.func.id
        modes = self.modes
        self.modes = {b: sp.S.Zero for b in modes}
        try:
            skip = self.build(side, node.args[0], shift)
        finally:
            self.modes = modes
        for column in (*self.symbols.values(), *self.stages.values()):
            if column.shape != skip.shape:
                continue
            c = sp.expand(skip[0]).coeff(column[0])
            if c == 0 or c.free_symbols & self.linear:
                continue
            if (skip - c * column).applyfunc(sp.expand).is_zero_matrix:
                scale = -c if c.is_negative else c
                return (arg / scale).applyfunc(sp.cancel)
        raise self.fail(side, node, f"{name}(...) around a sum (post-norm) is read as the division by "
                        "the scale of its skip term, c times one state while the branches are zero "
                        f"(DeepNorm's {name}(alpha*x + f(x)) -> (alpha + lam)/alpha x); this argument has "
                        "no single skip term: write the normalisation's scale out explicitly")

    def binop(self, side: Side, node: ast.BinOp, shift: int) -> _Matrix:
        op = node.op
        left = self.build(side, node.left, shift)
        if _is_transpose(node):
            return left.T
        right = self.build(side, node.right, shift)
        dl, dr = self.depends(left), self.depends(right)
        if isinstance(op, (ast.Add, ast.Sub)):
            if left.shape != right.shape:
                raise self.fail(side, node.right, f"dimension clash: {_shape(left)} "
                                f"{'+' if isinstance(op, ast.Add) else '-'} {_shape(right)}", shape=True)
            return left + right if isinstance(op, ast.Add) else left - right
        if isinstance(op, (ast.Mult, ast.MatMult)):
            if dl and dr:
                raise self.fail(side, node, "a product of two state terms: a state enters non-linearly "
                                "outside a branch function")
            return self.product(side, node, left, right)
        if dr:
            what = "divides by" if isinstance(op, ast.Div) else "raises to a power containing"
            raise self.fail(side, node.right, f"the rule {what} a state: non-linear outside a branch "
                            "function")
        if isinstance(op, ast.Div):
            if right.shape != (1, 1):
                raise self.fail(side, node.right, f"division by a {_shape(right)} matrix", shape=True)
            if right[0, 0] == 0:
                raise self.fail(side, node.right, "division by zero")
            return (left / right[0, 0]).applyfunc(sp.cancel)
        return self.power(side, node, left, right, dl)

    def product(self, side, node, left: _Matrix, right: _Matrix) -> _Matrix:
        if left.shape == (1, 1):
            return (left[0, 0] * right).applyfunc(sp.expand)
        if right.shape == (1, 1):
            return (right[0, 0] * left).applyfunc(sp.expand)
        if left.shape[1] != right.shape[0]:
            raise self.fail(side, node.right, f"dimension clash: {_shape(left)} times {_shape(right)}",
                            shape=True)
        return (left * right).applyfunc(sp.expand)

    def power(self, side, node, left: _Matrix, right: _Matrix, depends: bool) -> _Matrix:
        if right.shape != (1, 1):
            raise self.fail(side, node.right, "an exponent must be a scalar", shape=True)
        exponent = right[0, 0]
        if depends:
            raise self.fail(side, node, "a power of a state: non-linear outside a branch function")
        if left.shape == (1, 1):
            try:
                value = parse_expr("a**b", {"a": left[0, 0], "b": exponent})  # the parser's size budget
            except ParseError as exc:
                raise self.fail(side, node, str(exc)) from None
            return _Matrix([[value]])
        if not left.is_square or not (exponent.is_Integer and 0 <= exponent <= MAX_MATRIX_POWER):
            raise self.fail(side, node, "a matrix power needs a square matrix and an integer exponent "
                            f"0..{MAX_MATRIX_POWER}", shape=True)
        return _Matrix(left ** int(exponent)).applyfunc(sp.expand)


def _is_transpose(node: ast.AST) -> bool:
    """``X^T`` (read as ``X**T``): a transpose, not a power."""
    return (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Name)
            and node.right.id == "T")


def _shape(M: _Matrix) -> str:
    return "a scalar" if M.shape == (1, 1) else f"a {M.shape[0]}x{M.shape[1]}"


def check_column(syntax, side: Side, node, value: _Matrix, n: int) -> None:
    """Raise unless ``value`` is an ``n x 1`` column (a state's shape)."""
    if value.shape != (n, 1) and not (n == 1 and value.shape == (1, 1)):
        raise located_as(RuleShapeError, syntax.text, side.position(node),
                       f"dimension clash: this side is {_shape(value)}, a state has {n} stream(s) ({n}x1)")

