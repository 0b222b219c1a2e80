"""Reading an update rule's text: equations, states, stages and names, by an allow-list.

A rule is a list of equations separated by ``;`` or new lines, in paper notation:

* ``x'`` is the new state ``x_{l+1}``, ``x`` the current one; ``x[l+1]``, ``x[l]``,
  ``x[l-1]`` ... name layers by index (any one index letter, the same throughout);
* the left side is the new state (``v' = ...``), any linear combination of states
  (``y[n+2] - 4/3*y[n+1] + 1/3*y[n] = ...``), or a plain name that the rule defines: a
  stage (``k1 = f(x)``, linear in the states) or a constant (``alpha = (2*N)^(1/4)``);
* ``^`` is a power, ``^T`` and ``.T`` a transpose.

The text is checked here before anything is built: only the node types of Python's syntax
tree listed in :data:`ALLOWED_NODES` may occur, names with a double underscore are refused
(they are how code reaches the interpreter), and every error carries the position in the
text. Nothing is evaluated: the values are built in :mod:`depthdyn.rules.linearise`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ..errors import ParseError, RuleError
from ..limits import MAX_EQUATIONS, MAX_NESTING, MAX_ORDER, MAX_RULE_LENGTH
from ..parse import CONSTANTS, FUNCTIONS, check_name, nesting_depth

__all__ = [
    "Side",
    "Equation",
    "RuleSyntax",
    "read_rule",
    "located",
    "located_as",
    "PRIME",
    "NORMALISERS",
]

#: Normalisations: the identity inside a branch (pre-norm ``f(LN(x))``); around a sum (post-norm,
#: ``LN(alpha x + f(x))``) the division by the scale of its skip term (:mod:`.linearise`).
NORMALISERS = ("LN", "LayerNorm", "RMSNorm", "norm", "BN")

#: Suffix that stands for a prime: ``x'`` is read as the name ``x__p`` (user names may not contain ``__``).
PRIME = "__p"
ALLOWED_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Call,
                 ast.Subscript, ast.Attribute, ast.Load, ast.Add, ast.Sub, ast.Mult, ast.Div,
                 ast.Pow, ast.MatMult, ast.USub, ast.UAdd)


def located(text: str, position: int | None, what: str) -> RuleError:
    """A :class:`RuleError` whose message shows ``what`` and the text around ``position``."""
    return located_as(RuleError, text, position, what)


def located_as(kind, text: str, position: int | None, what: str):
    """An error of type ``kind`` (a :class:`RuleError`) with ``what`` and the place in ``text``."""
    if position is None:
        return kind(what, None)
    position = max(0, min(position, len(text)))
    before = text[max(0, position - 24):position].replace("\n", " ")
    after = text[position:position + 24].replace("\n", " ")
    return kind(f"{what} (at column {position + 1}: '{before}>>{after}')", position)


@dataclass
class Side:
    """One side of an equation: its syntax tree and where each character came from."""

    source: str  # the translated text that was parsed (x' -> x__p, ^ -> **)
    origin: list  # origin[i]: index in the rule text of source[i]
    tree: ast.expr

    def position(self, node: ast.AST) -> int:
        return self.origin[min(node.col_offset, len(self.origin) - 1)]

    def segment(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.source, node)


@dataclass
class Equation:
    """One equation ``lhs = rhs`` of a rule, with what the scan found in it."""

    text: str
    start: int
    lhs: Side
    rhs: Side
    defines: str | None = None  # the stage or constant a definition names
    offsets: dict = field(default_factory=dict)  # state -> set of offsets used
    plain: set = field(default_factory=set)  # names used without index or prime
    shift: int = 0  # added to every offset so that the newest state is at +1


@dataclass
class RuleSyntax:
    """What a rule's text says, before any value is built."""

    text: str
    equations: list
    states: list  # in the order their equations come
    stages: list
    constants: list
    params: list  # plain names left over, in order of first use
    calls: set
    index: str | None
    first_use: dict  # name -> position of its first use
    lags: dict  # state -> largest lag (0 for none), after the shifts


def _split(text: str) -> list[tuple[int, str]]:
    """Pieces between ``;`` and new lines, with their start offsets; blank pieces dropped."""
    pieces, start = [], 0
    for i, ch in enumerate(text + ";"):
        if ch in ";\n":
            if text[start:i].strip():
                pieces.append((start, text[start:i]))
            start = i + 1
    return pieces


def _translate(text: str, start: int, full: str) -> tuple[str, list]:
    """``x'`` -> ``x__p`` and ``^`` -> ``**``, with the origin of every character."""
    out, origin = [], []
    for i, ch in enumerate(text):
        if ch == "^":
            out.append("**")
            origin += [start + i] * 2
        elif ch == "'" and i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"):
            out.append(PRIME)
            origin += [start + i] * len(PRIME)
        elif ch in "#\\":
            raise located(full, start + i, f"{ch!r} is not allowed in a rule (no comments or line "
                          "continuations)")
        elif ch == "'" or ch == '"':
            raise located(full, start + i, "quotes are not allowed in a rule (strings are code, not maths)")
        else:
            out.append(ch)
            origin.append(start + i)
    origin.append(start + len(text))
    return "".join(out), origin


def _side(text: str, start: int, full: str) -> Side:
    stripped = text.lstrip()
    start += len(text) - len(stripped)
    stripped = stripped.rstrip()
    if not stripped:
        raise located(full, start, "an equation side is empty")
    source, origin = _translate(stripped, start, full)
    depth, where = nesting_depth(stripped)
    if depth > MAX_NESTING:
        raise located(full, start + where, f"the expression is nested more than {MAX_NESTING} deep "
                      "(brackets and signs)")
    try:
        tree = ast.parse(source, mode="eval")
    except (RecursionError, MemoryError):
        raise located(full, start, "the expression is nested too deeply") from None
    except (SyntaxError, ValueError) as exc:
        col = (getattr(exc, "offset", None) or 1) - 1
        msg = getattr(exc, "msg", None) or str(exc)
        where = origin[min(max(col, 0), len(origin) - 1)]
        raise located(full, where, f"cannot read the rule: {msg}") from None
    return Side(source, origin, tree.body)


def _equation(start: int, piece: str, full: str) -> Equation:
    cuts = [i for i, ch in enumerate(piece) if ch == "="
            and (i == 0 or piece[i - 1] not in "=<>!") and (i + 1 == len(piece) or piece[i + 1] != "=")]
    if len(cuts) != 1:
        where = start + (cuts[1] if len(cuts) > 1 else 0)
        raise located(full, where, f"an equation needs exactly one '=', found {len(cuts)}")
    cut = cuts[0]
    lhs, rhs = _side(piece[:cut], start, full), _side(piece[cut + 1:], start + cut + 1, full)
    return Equation(piece.strip(), start, lhs, rhs)


class _Scan:
    """Walks every equation once: allow-list, names, states and offsets, with positions."""

    def __init__(self, text: str):
        self.text = text
        self.index: str | None = None
        self.first_use: dict[str, int] = {}
        self.plain: dict[str, int] = {}
        self.calls: dict[str, int] = {}
        self.states: dict[str, int] = {}
        self.transposed = set()

    def fail(self, side: Side, node: ast.AST, what: str) -> RuleError:
        return located(self.text, side.position(node), what)

    def name(self, side: Side, node: ast.AST, name: str) -> str:
        base = name[: -len(PRIME)] if name.endswith(PRIME) else name
        if "__" in base or not base.isidentifier():
            raise self.fail(side, node, f"the name {base!r} is not allowed (no double underscores)")
        try:
            check_name(base)
        except ParseError as exc:
            raise self.fail(side, node, str(exc)) from None
        self.first_use.setdefault(base, side.position(node))
        return base

    def offset(self, side: Side, node: ast.Subscript) -> int:
        sl = node.slice
        if isinstance(sl, ast.Name):
            var, k = self.name(side, sl, sl.id), 0
        elif (isinstance(sl, ast.BinOp) and isinstance(sl.left, ast.Name)
              and isinstance(sl.op, (ast.Add, ast.Sub))
              and isinstance(sl.right, ast.Constant) and type(sl.right.value) is int):
            var = self.name(side, sl.left, sl.left.id)
            k = sl.right.value * (1 if isinstance(sl.op, ast.Add) else -1)
        else:
            raise self.fail(side, sl, "a layer index must read l, l+k or l-k with an integer k")
        if self.index is None:
            self.index = var
        elif var != self.index:
            raise self.fail(side, sl, f"the layer index is {self.index!r} elsewhere in the rule, "
                            f"here {var!r}")
        if abs(k) > MAX_ORDER:
            raise self.fail(side, sl, f"offset {k} is past the limit of {MAX_ORDER} layers")
        return k

    def walk(self, side: Side, node: ast.AST, eq: Equation, depth: int = 0) -> None:
        if depth > MAX_NESTING:
            raise self.fail(side, node, "the expression is nested too deeply")
        if not isinstance(node, ALLOWED_NODES):
            raise self.fail(side, node, f"{type(node).__name__} is not allowed in a rule "
                            "(only numbers, names, x', x[l-k], + - * / ^, and calls)")
        if isinstance(node, ast.Name):
            base = self.name(side, node, node.id)
            if node.id.endswith(PRIME):
                self.state(side, node, base, 1, eq)
            else:
                self.plain.setdefault(base, side.position(node))
                eq.plain.add(base)
            return
        if isinstance(node, ast.Subscript):
            if not isinstance(node.value, ast.Name) or node.value.id.endswith(PRIME):
                raise self.fail(side, node, "only a state name may carry a layer index, as in x[l-1]")
            base = self.name(side, node.value, node.value.id)
            self.state(side, node, base, self.offset(side, node), eq)
            return
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.keywords or len(node.args) != 1 or any(
                    isinstance(a, ast.Starred) for a in node.args):
                raise self.fail(side, node, "a call must read name(argument): one argument, no keywords")
            if node.func.id.endswith(PRIME):
                raise self.fail(side, node, "a primed function (f'(x)) is not allowed; a prime marks a "
                                "new state")
            self.calls.setdefault(self.name(side, node.func, node.func.id), side.position(node))
            self.walk(side, node.args[0], eq, depth + 1)
            return
        if isinstance(node, ast.Attribute):
            if node.attr != "T":
                raise self.fail(side, node, f"attribute .{node.attr} is not allowed (only .T, a transpose)")
            self.walk(side, node.value, eq, depth + 1)
            return
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Name) \
                and node.right.id == "T":
            self.walk(side, node.left, eq, depth + 1)  # X^T: a transpose, T is no parameter
            return
        if isinstance(node, ast.Constant) and (isinstance(node.value, bool)
                                               or not isinstance(node.value, (int, float, complex))):
            raise self.fail(side, node, f"the constant {node.value!r} is not allowed (numbers only)")
        for child in ast.iter_child_nodes(node):
            self.walk(side, child, eq, depth + 1)

    def state(self, side: Side, node: ast.AST, base: str, offset: int, eq: Equation) -> None:
        self.states.setdefault(base, side.position(node))
        eq.offsets.setdefault(base, set()).add(offset)


def _names_in(node: ast.AST):
    """Names and called names under ``node`` (primes dropped), in a fixed order (dict keys)."""
    out: dict[str, None] = {}
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            out[sub.id[: -len(PRIME)] if sub.id.endswith(PRIME) else sub.id] = None
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
            out[sub.func.id] = None
    return out.keys()


def read_rule(text: str, branches, matrices) -> RuleSyntax:
    """Scan ``text`` into a :class:`RuleSyntax`; ``branches`` and ``matrices`` are the declared names."""
    if not isinstance(text, str):
        raise RuleError(f"a rule is text (or a list of equations as text), got {type(text).__name__}")
    if len(text) > MAX_RULE_LENGTH:
        raise located(text, MAX_RULE_LENGTH, f"the rule is longer than {MAX_RULE_LENGTH} characters")
    for i, ch in enumerate(text):
        if not (ch.isascii() and (ch.isprintable() or ch in "\n\t")):
            raise located(text, i, f"character {ch!r} is not allowed (ASCII maths only: eta, lam)")
    pieces = _split(text)
    if not pieces:
        raise RuleError("the rule is empty; write equations such as \"x' = x + f(x)\"")
    if len(pieces) > MAX_EQUATIONS:
        raise located(text, pieces[MAX_EQUATIONS][0], f"more than {MAX_EQUATIONS} equations")
    equations = [_equation(start, piece, text) for start, piece in pieces]
    if "__" in text:  # in the text, where x' is not yet x__p: a written x__p must not read as a prime
        raise located(text, text.index("__"), "names with a double underscore are not allowed")
    scan = _Scan(text)
    for eq in equations:
        scan.walk(eq.lhs, eq.lhs.tree, eq)
        scan.walk(eq.rhs, eq.rhs.tree, eq)
    return _classify(text, equations, scan, set(branches), set(matrices))


def _classify(text, equations, scan: _Scan, branches: set, matrices: set) -> RuleSyntax:
    def fail(name, what):
        return located(text, scan.first_use.get(name), what)

    states = scan.states
    for eq in equations:  # a state written plainly (x) is the current one, x[l]
        for name in eq.plain & set(states):
            eq.offsets.setdefault(name, set()).add(0)
    for name in states:
        if name in branches or name in matrices or name in scan.calls:
            raise fail(name, f"{name!r} is used as a state (x', x[l]) and as a function or matrix")
    for name, pos in scan.calls.items():
        if name in states or name in scan.plain:
            raise located(text, pos, f"{name!r} is used both as a function and as a value")
        if name not in branches and name not in NORMALISERS and name not in FUNCTIONS:
            raise located(text, pos, f"unknown function {name!r}: declare it as a branch "
                          f"(branches={{'{name}': 'mu'}}) or use {', '.join(NORMALISERS)} or a maths "
                          "function")
    defined: dict[str, Equation] = {}
    for eq in equations:
        lhs = eq.lhs.tree
        if isinstance(lhs, ast.Name) and not lhs.id.endswith(PRIME):
            name = lhs.id
            if name in states:
                raise located(text, eq.lhs.position(lhs), f"'{name} = ...' sets the current state; "
                              f"write {name}' = ... (or {name}[l+1] = ...) for the new one")
            if name in defined or name in branches or name in matrices or name in FUNCTIONS \
                    or name in CONSTANTS:
                raise located(text, eq.lhs.position(lhs), f"{name!r} is defined twice or is a reserved name")
            eq.defines = name
            defined[name] = eq
        elif not eq.offsets:
            raise located(text, eq.start, "an equation must update a state (x' = ...) or define a name "
                          "(k = ...)")
    stages = _stages(defined, set(states), branches)
    constants = [name for name in defined if name not in stages]
    for eq in equations:
        if eq.defines is None:
            eq.shift = 1 - max(max(o) for o in eq.offsets.values())
            if eq.shift and any(n in stages for n in _names_in(eq.rhs.tree) | _names_in(eq.lhs.tree)):
                raise located(text, eq.start, "an equation that uses a stage must put the new state at "
                              "l+1 (x' or x[l+1]): stages belong to the step from l to l+1")
        elif eq.defines in stages and eq.offsets and max(max(o) for o in eq.offsets.values()) > 1:
            raise located(text, eq.start, "a stage may not look further ahead than l+1")
    lags = {s: 0 for s in states}
    for eq in equations:
        for s, offs in eq.offsets.items():
            lags[s] = max(lags[s], -(min(offs) + eq.shift))
            if lags[s] > MAX_ORDER:
                raise located(text, eq.start, f"state {s!r} looks back {lags[s]} layers (limit {MAX_ORDER})")
    reserved = {"r": "the characteristic variable", "l": "the layer index"}
    params = []
    for name, pos in scan.plain.items():
        if name in states or name in defined or name in matrices or name in CONSTANTS:
            continue
        if name == scan.index or name in reserved:
            raise located(text, pos, f"{name!r} is reserved ({reserved.get(name, 'the layer index')}); "
                          "it may not be a parameter")
        if name in branches:
            raise located(text, pos, f"{name!r} is a branch function; call it, as in {name}(x)")
        params.append(name)
    order = [s for eq in equations if eq.defines is None for s in _lhs_states(eq)]
    ordered_states = list(dict.fromkeys(order + list(states)))
    return RuleSyntax(text, equations, ordered_states, stages, constants, params, set(scan.calls),
                      scan.index, scan.first_use, lags)


def _lhs_states(eq: Equation) -> list[str]:
    return [n for n in _names_in(eq.lhs.tree) if n in eq.offsets]


def _stages(defined: dict, states: set, branches: set) -> list[str]:
    """Definitions that depend on a state, a branch or another stage (a fixed point)."""
    stages: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, eq in defined.items():
            if name not in stages and (eq.offsets or _names_in(eq.rhs.tree) & (branches | stages)):
                stages.add(name)
                changed = True
    return [name for name in defined if name in stages]
