"""From an update rule to a :class:`~depthdyn.Recurrence`: declarations, solving, realisation.

The equations, linear in the states once the branches are linearised, are one linear system
``E_new u + E_old w = 0`` in the unknowns ``u`` (every state at ``l+1`` and every stage) and
the knowns ``w`` (every state at ``l, l-1, ...`` down to its largest lag). Solving it for
``u`` (implicit rules included: a new state on the right only changes ``E_new``) gives the
block matrix ``M`` of ``s_{l+1} = M s_l`` on the rule's own states. A scalar rule (one
stream) yields the scalar recurrence of ``det(r I - M)`` (denominators cleared), with ``M``
kept as the native realisation ``rule``; a rule on ``n`` streams yields the matrix
recurrence ``x_{l+1} = M x_l``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

import sympy as sp

from ..errors import DegreeTooLargeError, ParameterError, ParseError, RuleError
from ..limits import MAX_STATE, MAX_STREAMS, MAX_UNKNOWNS
from ..parse import as_sympy, free_names, parse_expr, parse_value
from ..recurrence import COMPLEXES, REALS, Param, Realisation, Recurrence, r
from .linearise import Lineariser, check_column
from .parse import PRIME, located, read_rule

__all__ = ["from_rule", "parse_domain"]


_NAMED_DOMAINS = {
    "complex": COMPLEXES, "complexes": COMPLEXES, "c": COMPLEXES,
    "real": REALS, "reals": REALS, "r": REALS,
    "positive": sp.Interval.open(0, sp.oo), "nonnegative": sp.Interval(0, sp.oo),
}
_INTERVAL = re.compile(r"^\s*([\[(])(.+),(.+)([\])])\s*$")


def parse_domain(value, what: str = "domain") -> sp.Set:
    """A parameter domain from a SymPy set or text: ``"complex"``, ``"real"``, ``"positive"``,
    ``"nonnegative"`` or an interval ``"[0, 1)"`` (ends parsed safely, ``oo`` allowed).

    Examples
    --------
    >>> parse_domain("[0, 1)")
    Interval.Ropen(0, 1)
    """
    if isinstance(value, sp.Set):
        return value
    if not isinstance(value, str):
        raise ParameterError(f"{what} must be a SymPy set or text such as '[0, 1)', got {value!r}")
    key = value.strip().lower()
    if key in _NAMED_DOMAINS:
        return _NAMED_DOMAINS[key]
    match = _INTERVAL.match(value)
    if not match:
        raise ParameterError(f"cannot read the {what} {value!r}; write complex, real, positive, "
                             "nonnegative or an interval such as [0, 1) or (0, oo)")
    lo, hi = (parse_expr(match.group(i)) for i in (2, 3))
    return sp.Interval(lo, hi, left_open=match.group(1) == "(", right_open=match.group(4) == ")")


def _rule_text(rule) -> str:
    if isinstance(rule, str):
        return rule
    if isinstance(rule, (list, tuple)) and rule and all(isinstance(e, str) for e in rule):
        if any(";" in e or "\n" in e for e in rule):
            raise RuleError("give one equation per list item (no ';' inside an item)")
        return "; ".join(e.strip() for e in rule)
    raise RuleError(f"a rule is text or a list of equations as text, got {type(rule).__name__}")


def _branches(branches) -> dict:
    if branches is None:
        return {"f": "lam"}
    if isinstance(branches, str):
        branches = [branches]
    if isinstance(branches, (list, tuple)):
        branches = dict.fromkeys(branches, "lam") if all(isinstance(b, str) for b in branches) else None
    if isinstance(branches, Mapping) and all(
            isinstance(b, str) and b.isidentifier() and b.isascii() and "__" not in b for b in branches):
        return dict(branches)
    raise ParameterError("branches must map branch names (identifiers) to their modes, "
                         "e.g. {'f': 'lam', 'g': 'mu'}")


def _names_of(value) -> list[str]:
    """Free names of a declared value (text, number, SymPy object, or nested lists of them)."""
    if isinstance(value, str):
        return sorted(free_names(value))
    if isinstance(value, (list, tuple)):
        return [name for v in value for name in _names_of(v)]
    if isinstance(value, (sp.Basic, sp.MatrixBase)):
        return sorted(s.name for s in value.free_symbols)
    return []


def _declared(params) -> dict[str, Param]:
    out = {}
    for key, spec in dict(params or {}).items():
        if isinstance(spec, Param):
            out[key] = spec
        elif isinstance(spec, tuple) and len(spec) == 2:
            out[key] = Param(key, parse_domain(spec[0], f"domain of {key}"), str(spec[1]))
        else:
            out[key] = Param(key, parse_domain(spec, f"domain of {key}"))
    return out


def _symbolic_shape(name: str, value) -> list | None:
    """``(rows, cols)`` declares a matrix of free entries ``name_i_j``."""
    if isinstance(value, tuple) and len(value) == 2 and all(type(v) is int for v in value):
        rows, cols = value
        if not (1 <= rows <= MAX_STREAMS and 1 <= cols <= MAX_STREAMS):
            raise DegreeTooLargeError(f"matrix {name} is {rows}x{cols}; the limit is {MAX_STREAMS}")
        return [[f"{name}_{i + 1}_{j + 1}" for j in range(cols)] for i in range(rows)]
    return None


def _matrix(name: str, value, scalars: dict) -> sp.ImmutableMatrix:
    if isinstance(value, str):
        value = parse_value(value, scalars)
    elif isinstance(value, (list, tuple)):
        value = as_sympy(_texts(value, scalars))
    if isinstance(value, sp.MatrixBase):
        M = sp.ImmutableMatrix(value).xreplace({s: scalars[s.name] for s in value.free_symbols
                                               if s.name in scalars})
    elif isinstance(value, list) and value and all(isinstance(row, list) for row in value):
        if len({len(row) for row in value}) != 1:
            raise RuleError(f"matrix {name}: rows have different lengths")
        M = sp.ImmutableMatrix(value)
    else:
        raise RuleError(f"matrix {name} must be a list of rows, a SymPy matrix or (rows, cols), "
                        f"got {value!r}")
    if max(M.shape) > MAX_STREAMS:
        raise DegreeTooLargeError(f"matrix {name} is {M.shape[0]}x{M.shape[1]}; the limit is {MAX_STREAMS}")
    if M.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        raise RuleError(f"matrix {name} has entries that are not finite")
    return M


def _texts(value, scalars):
    """Nested lists with text entries parsed against the parameter symbols."""
    if isinstance(value, (list, tuple)):
        return [_texts(v, scalars) for v in value]
    if isinstance(value, str):
        return parse_expr(value, scalars)
    if isinstance(value, sp.Basic):
        return value.xreplace({s: scalars[s.name] for s in value.free_symbols if s.name in scalars})
    return value


def _mode(branch: str, value, scalars: dict) -> sp.Expr:
    """The slope of ``branch`` in the mode: text, a number or a SymPy expression."""
    try:
        expr = as_sympy(value, scalars, scalar=True)
    except ParseError as exc:
        raise RuleError(f"the mode of branch {branch!r} cannot be read: {exc}") from None
    if not isinstance(expr, sp.Expr) or expr.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        raise RuleError(f"the mode of branch {branch!r} must be a finite expression, got {value!r}")
    return expr.xreplace({s: scalars[s.name] for s in expr.free_symbols if s.name in scalars})


def from_rule(rule, *, branches=None, params=None, strict: bool = False, n: int = 1, matrices=None,
              lam: str | None = None, name: str = "rule", description: str = "", source: str = "",
              **values) -> Recurrence:
    """The linear depth recurrence of an update rule written as in a paper.

    Parameters
    ----------
    rule : str or list of str
        Equations separated by ``;`` or new lines: ``"v' = m*v + eta*f(x); x' = x + v'"``,
        ``"x[l+1] = 2*x[l] - x[l-1] + h^2*f(x[l])"``, implicit ones such as
        ``"x' = x + h*f(x')"``, stages such as ``"k1 = f(x); x' = x + h*k1"``.
    branches : mapping, optional
        Branch function -> its slope in the linearised mode (``{"f": "lam", "g": "mu"}``;
        a shared name shares the mode; a number fixes it). Default ``{"f": "lam"}``.
        ``LN``, ``RMSNorm`` ... are the identity in the mode.
    params : mapping, optional
        Name -> domain (a SymPy set, ``"[0, 1)"``, ``"positive"``, ``(domain, description)``
        or a :class:`~depthdyn.Param`). Undeclared names are real (mode slopes complex)
        unless ``strict``, when they are an error.
    n : int
        Streams of every state (``X`` is an ``n``-vector in one channel mode).
    matrices : mapping, optional
        Matrix name -> value (list of rows, SymPy matrix, text) or ``(rows, cols)`` for free
        entries ``name_i_j``. Names in the entries become parameters.
    lam : str, optional
        The recurrence's block eigenvalue; default the first branch's mode.
    name, description, source : str
        As in :class:`~depthdyn.Recurrence`; the rule text is kept in its ``rule`` field.
    **values
        Exact values substituted at the end (``m=1/2``).

    Raises
    ------
    RuleError
        With the position in the text: an unknown name or function, a state entering
        non-linearly outside a branch, a missing or undetermined new state, code-like text,
        limits (length, lags, sizes); :class:`~depthdyn.errors.RuleShapeError` for
        inconsistent dimensions.

    Examples
    --------
    >>> from_rule("v' = m*v + eta*f(x); x' = x + v'").charpoly()
    m + r**2 + r*(-eta*lam - m - 1)
    >>> from_rule("x' = x + h*f(x')").charpoly()
    r*(-h*lam + 1) - 1
    """
    text = _rule_text(rule)
    modes_raw = _branches(branches)
    for what, given in (("params", params), ("matrices", matrices)):
        if given is not None and not isinstance(given, Mapping):
            raise ParameterError(f"{what} must map names to values, got {type(given).__name__}")
    matrices_raw = dict(matrices or {})
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_STREAMS:
        raise ParameterError(f"n (streams) must be an integer in 1..{MAX_STREAMS}, got {n!r}")
    syntax = read_rule(text, modes_raw, matrices_raw)
    declared = _declared(params)
    used_branches = [b for b in modes_raw if b in syntax.calls]
    used_matrices = [m for m in matrices_raw if m in syntax.first_use]
    for m in used_matrices:
        shape = _symbolic_shape(m, matrices_raw[m])
        matrices_raw[m] = shape if shape is not None else matrices_raw[m]
    mode_names = [x for b in used_branches for x in _names_of(modes_raw[b])]
    matrix_names = [x for m in used_matrices for x in _names_of(matrices_raw[m])]
    order = list(dict.fromkeys(mode_names + syntax.params + matrix_names))
    built: dict[str, Param] = {}
    for pname in order:
        if pname in syntax.constants:
            continue
        if pname in declared:
            built[pname] = declared[pname] if declared[pname].name == pname else Param(
                pname, declared[pname].domain, declared[pname].description)
        elif strict and pname not in mode_names:
            pos = syntax.first_use.get(pname) if pname in syntax.params else None
            raise located(text, pos, f"unknown symbol {pname!r}: declare it (params={{'{pname}': 'real'}}) "
                          "or make it a state, a stage or a matrix")
        else:
            built[pname] = Param(pname, COMPLEXES if pname in mode_names else REALS,
                                 "slope of a branch in the mode" if pname in mode_names else "")
    scalars = {p: prm.symbol for p, prm in built.items()}
    modes = {b: _mode(b, modes_raw[b], scalars) for b in used_branches}
    mats = {m: _matrix(m, matrices_raw[m], scalars) for m in used_matrices}
    lin = Lineariser(syntax, n, scalars, mats, modes)
    rows, where = _equations(syntax, lin, n, mats)
    M, labels = _solve(syntax, lin, rows, where, n)
    rec = _recurrence(M, labels, syntax, n, built, modes, used_branches, lam, name,
                      description or "derived from its update rule", source)
    return rec.subs(values) if values else rec


def _equations(syntax, lin: Lineariser, n: int, mats: dict):
    """Residuals ``lhs - rhs`` of the state and stage equations; constants are defined on the way."""
    rows, where = [], []
    for eq in syntax.equations:  # constants first, in their order: the equations may use them
        if eq.defines in syntax.constants:
            value = lin.build(eq.rhs, eq.rhs.tree, 0)
            if lin.depends(value):  # pragma: no cover - the scan makes it a stage
                raise located(syntax.text, eq.start, "a constant may not depend on a state")
            if value.shape == (1, 1):
                lin.scalars[eq.defines] = value[0, 0]
            else:
                mats[eq.defines] = value
    for eq in syntax.equations:
        if eq.defines in syntax.constants:
            continue
        lhs = lin.build(eq.lhs, eq.lhs.tree, eq.shift)
        rhs = lin.build(eq.rhs, eq.rhs.tree, eq.shift)
        check_column(syntax, eq.lhs, eq.lhs.tree, lhs, n)
        check_column(syntax, eq.rhs, eq.rhs.tree, rhs, n)
        rows += list(lhs - rhs)
        where += [eq] * n
    return rows, where


def _solve(syntax, lin: Lineariser, rows, where, n):
    """The block matrix ``M`` of ``s_{l+1} = M s_l`` and the labels of ``s``."""
    text = syntax.text
    if not syntax.states:
        raise located(text, 0, "the rule updates no state: write the new state as x' = ... or x[l+1] = ... "
                      "(a plain name on the left defines a stage or a constant)")
    for s in syntax.states:
        if not any(eq.defines is None and s in _lhs(eq) for eq in syntax.equations):
            raise located(text, syntax.first_use.get(s), f"no equation determines the new state {s}' "
                          f"(write {s}' = ...); the rule does not determine the new state")
    unknowns = [sym for s in syntax.states for sym in lin.state(s, 1)]
    unknowns += [sym for st in syntax.stages for sym in lin.stages[st]]
    labels, knowns = [], []
    for s in syntax.states:
        for j in range(syntax.lags[s] + 1):
            knowns += list(lin.state(s, -j))
            stem = s if j == 0 else f"{s}[l-{j}]"
            lag = "" if j == 0 else f"[l-{j}]"
            labels += [stem] if n == 1 else [f"{s}_{i + 1}{lag}" for i in range(n)]
    if len(unknowns) > MAX_UNKNOWNS:
        raise DegreeTooLargeError(f"the rule has {len(unknowns)} unknowns (new states and stages times "
                                  f"streams); exact work is limited to {MAX_UNKNOWNS}")
    if len(knowns) > MAX_STATE:
        raise DegreeTooLargeError(f"the rule's realisation has {len(knowns)} states; exact work is limited "
                                  f"to {MAX_STATE} (fewer streams, lags or states)")
    if len(rows) != len(unknowns):
        raise located(text, None, f"the rule has {len(rows) // n} equation(s) for {len(unknowns) // n} new "
                      "state(s) and stage(s); give one equation for each")
    try:
        A, b = sp.linear_eq_to_matrix(rows, unknowns + knowns)
    except sp.solvers.solveset.NonlinearError:  # pragma: no cover - the lineariser refuses these
        raise located(text, None, "the rule is not linear in its states") from None
    for i, value in enumerate(b):
        if sp.expand(value) != 0:
            raise located(text, where[i].start, "a term without a state (a bias or forcing): the modes "
                          "do not depend on it; drop it")
    E_new, E_old = A[:, : len(unknowns)], A[:, len(unknowns):]
    if sp.cancel(E_new.det(method="berkowitz")) == 0:
        raise located(text, None, "the rule does not determine the new state(s): solving for "
                      f"{', '.join(s + chr(39) for s in syntax.states)} has no unique solution")
    G = E_new.LUsolve(-E_old).applyfunc(sp.cancel)
    N = len(knowns)
    M = sp.zeros(N)
    pos = 0
    for k, s in enumerate(syntax.states):
        for j in range(syntax.lags[s] + 1):
            for i in range(n):
                if j == 0:
                    M[pos, :] = G[k * n + i, :]
                else:
                    M[pos, pos - n] = 1
                pos += 1
    return sp.ImmutableMatrix(M), labels


def _lhs(eq) -> set:
    """States that appear at a new layer (``x'``, ``x[l+k]``) on the left of ``eq``."""
    return {node.id.removesuffix(PRIME) if isinstance(node, ast.Name) else node.value.id
            for node in ast.walk(eq.lhs.tree)
            if isinstance(node, ast.Subscript) or (isinstance(node, ast.Name) and node.id.endswith(PRIME))}


def _recurrence(M, labels, syntax, n, built, modes, used_branches, lam, name, description, source):
    params = tuple(built.values())
    if lam is None:
        lam = next((s.name for b in used_branches for s in sorted(modes[b].free_symbols, key=str)
                    if s.name in built), None)
    rule = "; ".join(eq.text for eq in syntax.equations)
    if n == 1:
        char = sp.cancel((r * sp.eye(M.shape[0]) - M).det(method="berkowitz"))
        num, _ = sp.fraction(char)
        coeffs = tuple(sp.Poly(sp.expand(num), r).all_coeffs())
        lead = coeffs[0].xreplace({s: sp.S.Zero for s in coeffs[0].free_symbols})
        if lead.is_number and lead.is_negative:  # 1 - h*lam rather than h*lam - 1
            coeffs = tuple(-c for c in coeffs)
        native = _native(M, labels, syntax)
        return Recurrence(coeffs=coeffs, params=params, lam=lam, name=name, description=description,
                          source=source, native=native, rule=rule)
    den = sp.lcm([sp.fraction(sp.together(e))[1] for e in M] + [sp.Integer(1)])
    if den.is_number:  # numeric denominators stay in the entries; symbolic ones are cleared
        den = sp.Integer(1)
    N = M.shape[0]
    coeffs = (den * sp.eye(N), (-den * M).applyfunc(sp.cancel))
    native = (Realisation("rule", tuple(labels), M, sp.eye(N), 0, f"the rule's states: {rule}"),)
    return Recurrence(coeffs=coeffs, params=params, lam=lam, name=name, description=description,
                      source=source, native=native, rule=rule)


def _native(M, labels, syntax) -> tuple:
    """The rule's own realisation, tied to the companion form through one observed state."""
    N = M.shape[0]
    rule = "; ".join(eq.text for eq in syntax.equations)
    if len(syntax.states) == 1:  # s_l = (x_l, x_{l-1}, ...) is the companion state itself
        return (Realisation("rule", tuple(labels), M, sp.eye(N), 0, f"the rule's states: {rule}"),)
    last = next((s for eq in reversed(syntax.equations) if eq.defines is None for s in _lhs(eq)), None)
    candidates = [labels.index(last)] if last in labels else []
    candidates += [i for i, lab in enumerate(labels) if "[" not in lab and i not in candidates]
    J = sp.Matrix(N, N, lambda i, j: 1 if i + j == N - 1 else 0)
    for i in candidates:
        rows = [sp.eye(N)[i, :]]
        for _ in range(N - 1):
            rows.append((rows[-1] * M).applyfunc(sp.cancel))
        obs = sp.Matrix.vstack(*rows)
        if sp.cancel(obs.det(method="berkowitz")) != 0:
            T = (obs.inv() * J).applyfunc(sp.cancel)
            return (Realisation("rule", tuple(labels), M, T, N - 1,
                                f"the rule's states, observed in {labels[i]}: {rule}"),)
    return ()  # no single state observes the whole block: the rule's realisation is not minimal
