"""Running a short NumPy code listing from a source without :func:`exec`.

Some claims are about a printed code listing ("the listing creates the kernels"). The
listing is read with :mod:`ast` and interpreted over an allow-list: assignments (plain,
tuple, subscripted, augmented), ``for`` loops over ``range``, arithmetic, subscripts
and slices, ``import numpy as np`` and a few NumPy functions by their dotted names.
Anything else raises :class:`ListingError`; a name used before it is assigned raises
:class:`NameError`, as Python would; a syntax error is reported as :class:`SyntaxError`.

>>> error, space = run_listing("import numpy as np\\nk = np.zeros((2, 2))\\nk[0, 0] += 3")
>>> error, space["k"].tolist()
(None, [[3.0, 0.0], [0.0, 0.0]])
>>> run_listing("x = y + 1")[0]
'NameError'
"""

from __future__ import annotations

import ast
import operator

import numpy as np

from ..errors import DepthdynError
from ..limits import MAX_LISTING_STEPS

__all__ = ["run_listing", "ListingError", "CALLABLES"]


class ListingError(DepthdynError, ValueError):
    """A listing uses a construct outside the interpreter's allow-list."""


#: Functions a listing may call, by dotted name (``np`` is the NumPy module's alias).
CALLABLES = {
    "np.random.normal": np.random.normal,
    "np.linalg.qr": np.linalg.qr,
    "np.zeros": np.zeros,
    "np.ones": np.ones,
    "np.square": np.square,
    "np.eye": np.eye,
    "range": range,
}
_MODULES = {"numpy"}
_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
           ast.Pow: operator.pow}
# array attributes a listing may use (methods are bound to their array, nothing else is reachable)
_ARRAY_ATTRIBUTES = ("reshape", "copy", "shape", "T")


class _Path(str):
    """A dotted name (``np.linalg``) that is only ever looked up in :data:`CALLABLES`."""


def run_listing(text: str):
    """Interpret ``text``; ``(None, namespace)``, or ``(error type name, None)`` on a Python error."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return "SyntaxError", None
    space: dict = {}
    try:
        _Interpreter(space).block(tree.body)
    except NameError:
        return "NameError", None
    return None, space


class _Interpreter:
    def __init__(self, space: dict):
        self.space = space
        self.steps = 0

    def block(self, statements) -> None:
        for node in statements:
            self.statement(node)

    def statement(self, node: ast.stmt) -> None:
        self.steps += 1
        if self.steps > MAX_LISTING_STEPS:
            raise ListingError("the listing runs too long")
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name not in _MODULES:
                    raise ListingError(f"import of {alias.name!r} is not allowed")
                self.space[alias.asname or alias.name] = _Path("np")
        elif isinstance(node, ast.Assign):
            value = self.expr(node.value)
            for target in node.targets:
                self.assign(target, value)
        elif isinstance(node, ast.AugAssign) and type(node.op) in _BINOPS:
            op = _BINOPS[type(node.op)]
            if isinstance(node.target, ast.Name):
                self.space[node.target.id] = op(self.expr(node.target), self.expr(node.value))
            elif isinstance(node.target, ast.Subscript):
                obj, key = self.expr(node.target.value), self.index(node.target.slice)
                obj[key] = op(obj[key], self.expr(node.value))
            else:
                raise ListingError("unsupported augmented assignment")
        elif isinstance(node, ast.For) and not node.orelse:
            for value in self.expr(node.iter):
                self.assign(node.target, value)
                self.block(node.body)
        else:
            raise ListingError(f"{type(node).__name__} is not allowed in a listing")

    def assign(self, target: ast.expr, value) -> None:
        if isinstance(target, ast.Name):
            self.space[target.id] = value
        elif isinstance(target, ast.Tuple):
            values = list(value)
            if len(values) != len(target.elts):
                raise ListingError("cannot unpack: wrong number of values")
            for t, v in zip(target.elts, values, strict=True):
                self.assign(t, v)
        elif isinstance(target, ast.Subscript):
            self.expr(target.value)[self.index(target.slice)] = value
        else:
            raise ListingError(f"cannot assign to {type(target).__name__}")

    def index(self, node: ast.expr):
        if isinstance(node, ast.Slice):
            parts = (node.lower, node.upper, node.step)
            return slice(*[None if p is None else self.expr(p) for p in parts])
        if isinstance(node, ast.Tuple):
            return tuple(self.index(e) for e in node.elts)
        return self.expr(node)

    def expr(self, node: ast.expr):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in self.space:
                return self.space[node.id]
            if node.id in CALLABLES:
                return _Path(node.id)
            raise NameError(f"name {node.id!r} is not defined")
        if isinstance(node, ast.Attribute):
            base = self.expr(node.value)
            if isinstance(base, np.ndarray) and node.attr in _ARRAY_ATTRIBUTES:
                return getattr(base, node.attr)
            if not isinstance(base, _Path):
                raise ListingError("attributes are allowed on the numpy module and arrays' "
                                   f"{', '.join(_ARRAY_ATTRIBUTES)} only")
            return _Path(f"{base}.{node.attr}")
        if isinstance(node, ast.Call):
            func = self.expr(node.func)
            method = isinstance(getattr(func, "__self__", None), np.ndarray)
            if not method and (not isinstance(func, _Path) or func not in CALLABLES):
                raise ListingError(f"call of {func!s} is not allowed")
            args = [self.expr(a) for a in node.args]
            if any(k.arg is None for k in node.keywords):
                raise ListingError("**keywords are not allowed in a listing")
            kwargs = {k.arg: self.expr(k.value) for k in node.keywords}
            return (func if method else CALLABLES[func])(*args, **kwargs)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](self.expr(node.left), self.expr(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = self.expr(node.operand)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.Subscript):
            return self.expr(node.value)[self.index(node.slice)]
        if isinstance(node, ast.Tuple):
            return tuple(self.expr(e) for e in node.elts)
        raise ListingError(f"{type(node).__name__} is not allowed in a listing")
