"""Claims of the source documents as checkable records, and the verdict helpers.

A :class:`Claim` holds what a source says (its statement in words, the stated value or
formula and the premises the source gives, all *inputs*) and a ``check`` that computes
the truth from those premises with depthdyn's own symbolic and numeric layers and
returns an :class:`Outcome`: the computed value, a verdict and a note. Running a claim
gives a :class:`ClaimResult`.

Verdict policy
--------------
The verdict judges the sentence **as printed**, under its plain reading:

``holds``
    true as printed (rounded values: to the digits printed).
``fails``
    false under the plain reading of the sentence as printed, even when a charitable
    reading (another equation, another parameter, a limit) would make it true; the
    correct statement or a concrete counterexample is then in ``computed`` and the
    charitable reading, if any, in the note.
``holds-with-caveat``
    true under the plain reading only with a condition the source leaves unstated
    (a domain, a convention, a case excluded), or true only in a limit the source
    implies (``L -> oo``, ``steps -> oo``); the note names the condition. Never used
    for a sentence that the plain reading makes false.

An ambiguous sentence gives one claim per reading, all with the same
:attr:`Claim.statement_key`; a compound sentence ("A, but B") gives one claim per part.
Summaries count source statements: one statement with several readings counts once
(``holds``/``fails`` if every reading agrees, else ``holds-with-caveat``: true under one
reading only, the reading being the unstated condition).

Every verdict can go every way: each claim's check computes from ``stated`` and
``premises``, and :attr:`Claim.mutant` names a changed stated value or premise under
which the verdict must change (``tests/test_claims_mutation.py`` runs it for the whole
catalogue). Statements of the sources that no claim checks are listed, each with its
reason, in :mod:`depthdyn.claims.unchecked`.

A check that raises is an internal failure, never a verdict: :meth:`Claim.run` re-raises
it as :class:`ClaimError` naming the claim.

Rounding rule (:func:`compare_rounded`): a value printed with ``d`` decimals holds when
``|exact - stated| <= 10^-d / 2``, half a unit in the last printed digit. A tie (exact
value exactly halfway) is therefore accepted whichever way it was rounded, so
round-half-up and round-half-even printings both hold.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation

import sympy as sp

from ..errors import BudgetExceededError, DepthdynError
from ..limits import MAX_DIGITS
from ..parse import as_sympy, free_names, parse_expr
from ..records import Record
from .formula import formula

__all__ = [
    "VERDICTS",
    "ClaimError",
    "Comparison",
    "compare_rounded",
    "compare_exact",
    "Outcome",
    "Claim",
    "ClaimResult",
    "check_claims",
    "stated_expr",
    "show",
    "verdict",
    "wrong_value",
    "stated_matrix",
    "ensure",
    "format_table",
]

#: The possible verdicts.
VERDICTS = ("holds", "fails", "holds-with-caveat")


class ClaimError(DepthdynError, RuntimeError):
    """A claim's check failed internally (an exception, or a malformed outcome)."""


def _text(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    if isinstance(value, sp.MatrixBase):
        return sp.sstr(value.tolist())
    return sp.sstr(value)


def _sympy(value):
    """A stated or computed value as SymPy, read safely (strings never evaluated, decimals exact).

    Names in a string become plain symbols (matched to the computed ones by name later).
    """
    if isinstance(value, str):
        return parse_expr(value, {n: sp.Symbol(n) for n in free_names(value)})
    if isinstance(value, (list, tuple)):
        return [_sympy(v) for v in value]
    return as_sympy(value)


def show(value, digits: int = 6) -> str:
    """Exact value plus a decimal when it helps: ``625/256 = 2.44140625``, ``E ≈ 2.71828``."""
    value = _sympy(value)
    if value.is_Integer or not value.is_number:
        return sp.sstr(value)
    if value.is_Rational:
        den = int(value.q)
        while den % 2 == 0:
            den //= 2
        while den % 5 == 0:
            den //= 5
        if den == 1:  # a terminating decimal: print it exactly
            return f"{sp.sstr(value)} = {Decimal(int(value.p)) / Decimal(int(value.q))}"
    return f"{sp.sstr(value)} ≈ {sp.N(value, digits)}"


def stated_expr(text: str, *names: str) -> sp.Expr:
    """Parse a stated formula safely, with plain symbols for ``names`` (decimals exact)."""
    return parse_expr(text, {n: sp.Symbol(n) for n in names})


def wrong_value(stated) -> str | None:
    """A stated value changed so that a correct statement becomes wrong (a mutant's ``stated``).

    A printed decimal moves by 7 units in its last digit (beyond any rounding tolerance), the
    last entry of an ``a -> b -> c`` chain likewise, a formula gets ``+ 1``; ``None`` for
    anything else (words), whose claims name their mutant themselves.

    >>> wrong_value("1.25"), wrong_value("1 -> 0.75"), wrong_value("m*r")
    ('1.32', '1 -> 0.82', '(m*r) + 1')
    """
    if not isinstance(stated, str):
        return None
    if "->" in stated:
        head, _, last = stated.rpartition("->")
        moved = wrong_value(last.strip())
        return None if moved is None else f"{head}-> {moved}"
    try:
        dec = Decimal(stated.strip())
    except InvalidOperation:
        dec = None
    if dec is not None and dec.is_finite():
        return str(dec + Decimal(7).scaleb(dec.as_tuple().exponent))
    try:
        expr = parse_expr(stated, {n: sp.Symbol(n) for n in free_names(stated)})
    except Exception:  # not a formula: the claim gives its own mutant
        return None
    if isinstance(expr, sp.Symbol) and len(expr.name) > 3:  # a word such as "monotone", not a variable
        return None
    return f"({stated}) + 1"


def stated_matrix(text: str, names: dict, spellings=()) -> sp.Matrix:
    """A stated matrix formula in a source's spelling, built from named matrices.

    ``spellings`` are ``(as printed, name)`` pairs (``("dF/dx", "J")``); juxtaposition is a
    product (``H_post^T F' H_pre``). Only our own transcriptions are parsed here.

    >>> stated_matrix("J + I", {"J": sp.Matrix([[0, 1], [2, 3]]), "I": sp.eye(2)})
    Matrix([
    [1, 1],
    [2, 4]])
    """
    for printed, name in spellings:
        text = text.replace(printed, name)
    text = " ".join(text.split()).replace(" ", "*").replace("*+*", " + ").replace("*-*", " - ")
    return sp.Matrix(formula(text, names))


def verdict(ok: bool) -> str:
    """``"holds"`` or ``"fails"``."""
    return "holds" if ok else "fails"


def ensure(ok: bool, what: str) -> None:
    """Internal consistency check of depthdyn itself inside a claim's check.

    Raises ``RuntimeError``, which :meth:`Claim.run` reports as a :class:`ClaimError`:
    a disagreement between two of depthdyn's own computations is a bug, not a verdict.
    """
    if not ok:
        raise RuntimeError(f"depthdyn is inconsistent: {what}")


# ------------------------------------------------------------------ comparisons
@dataclass(frozen=True)
class Comparison(Record):
    """Result of comparing a stated value with a computed one.

    ``tolerance`` is 0 for an exact comparison, half a unit in the last printed digit
    for a rounded one; ``difference`` is ``computed - stated`` (simplified).
    """

    holds: bool
    stated: sp.Basic
    computed: sp.Basic
    difference: sp.Basic
    tolerance: sp.Expr

    @property
    def verdict(self) -> str:
        return "holds" if self.holds else "fails"

    def __bool__(self) -> bool:
        return self.holds

    def _text(self) -> str:
        rel = "==" if self.tolerance == 0 else f"within {sp.sstr(self.tolerance)} of"
        return f"{_text(self.computed)} {rel} {_text(self.stated)}: {self.verdict}"

    def _latex(self) -> str:
        return f"{sp.latex(self.computed)} \\ \\text{{vs}}\\ {sp.latex(self.stated)}"


def _tuple(value):
    return sp.Tuple(*value) if isinstance(value, list) else value


def _decimal(text: str) -> tuple[sp.Rational, int]:
    if not isinstance(text, str):
        raise ValueError(f"stated value {text!r} must be the printed decimal, as a string")
    try:
        dec = Decimal(text.strip())
    except InvalidOperation:
        raise ValueError(f"stated value {text!r} is not a plain decimal number") from None
    if not dec.is_finite():
        raise ValueError(f"stated value {text!r} is not finite")
    if len(dec.as_tuple().digits) + abs(dec.as_tuple().exponent) > MAX_DIGITS:
        raise ValueError(f"stated value {text[:40]!r} has more than {MAX_DIGITS} digits")
    exponent = dec.as_tuple().exponent
    digits = -exponent if exponent < 0 else 0
    num, den = dec.as_integer_ratio()
    return sp.Rational(num, den), digits


def compare_rounded(stated: str, exact) -> Comparison:
    """Does ``exact`` round to the printed decimal ``stated``?

    Holds when ``|exact - stated| <= 10^-d / 2`` with ``d`` the number of printed
    decimals (ties accepted, so both round-half-up and round-half-even printings hold).

    Parameters
    ----------
    stated : str
        The value as printed, a plain decimal such as ``"1.56"`` or ``"-0.32"``.
    exact : number or sympy expression
        The exact value (rational, or a real constant such as ``E``).

    Returns
    -------
    Comparison
        ``holds``, the parsed stated value, ``difference = exact - stated`` and the tolerance.

    Raises
    ------
    ValueError
        ``stated`` is not a plain decimal, or ``exact`` is not a real number.

    Examples
    --------
    >>> compare_rounded("1.56", sp.Rational(25, 16)).holds
    True
    >>> compare_rounded("1.57", sp.Rational(25, 16)).holds
    False
    >>> compare_rounded("2.72", sp.E).holds
    True
    """
    q, digits = _decimal(stated)
    exact = _sympy(exact)
    if not isinstance(exact, sp.Expr):
        raise ValueError(f"compare_rounded needs a real number, got {exact}")
    if not exact.is_number or exact.is_real is False:
        raise ValueError(f"compare_rounded needs a real number, got {exact}")
    tol = sp.Rational(1, 2 * 10**digits)
    diff = exact - q
    inside = sp.Le(sp.Abs(diff), tol)
    if inside not in (sp.true, sp.false):  # undecided by SymPy: 60 significant digits decide
        inside = sp.true if abs(sp.N(diff, 60)) <= tol else sp.false
    return Comparison(bool(inside), q, exact, diff, tol)


def _unify(stated, computed):
    """Rename the stated formula's plain symbols to the computed one's same-named symbols."""
    by_name = {s.name: s for s in getattr(computed, "free_symbols", set())}
    mapping = {s: by_name[s.name] for s in getattr(stated, "free_symbols", set()) if s.name in by_name}
    return stated.xreplace(mapping) if mapping else stated


def _probe(e: sp.Expr) -> sp.Expr:
    """``e`` at a fixed point: positive rationals for symbols, cubics for undefined functions.

    An identity (for all values and all functions) must hold there too, so a clearly
    nonzero value disproves it without :func:`sympy.simplify` (slow on nested functions).
    """
    from sympy.core.function import AppliedUndef

    def cubic(f):
        a = sp.Rational(len(f.func.__name__) % 5 + 2, 3)
        y = f.args[0] if len(f.args) == 1 else sp.Add(*f.args)
        return a * y + y**2 / 7 - a * y**3 / 11 + 1 / a

    for _ in range(20):  # innermost functions first
        funcs = e.atoms(AppliedUndef)
        if not funcs:
            break
        e = e.xreplace({f: cubic(f) for f in funcs if not f.args[0].atoms(AppliedUndef)})
    point = {}
    for i, s in enumerate(sorted(e.free_symbols, key=str)):  # values that respect the assumptions
        value = sp.Integer(i + 3) if s.is_integer else sp.Rational(2 * i + 3, 5 + i)
        point[s] = -value if s.is_negative or s.is_nonpositive else value
    return e.xreplace(point)


def _probe_decides(e: sp.Expr) -> bool:
    """Whether a nonzero probe value disproves ``e == 0``: no symbolic exponents, no integer-only functions.

    (Identities such as ``(-1)**(2*n) = 1`` need integer values that a probe may not use.)
    """
    if any(p.exp.free_symbols for p in e.atoms(sp.Pow)):
        return False
    return not e.has(sp.KroneckerDelta, sp.binomial, sp.factorial, sp.floor, sp.ceiling, sp.Mod)


def _is_zero(e: sp.Expr) -> bool:
    e = sp.expand(e)
    if e == 0:
        return True
    try:
        if not _probe_decides(e):
            raise ValueError("the probe cannot decide this expression")
        value = sp.N(_probe(e), 50)
        if value.is_number and value.is_finite and abs(value) > sp.Float("1e-30"):
            return False
    except (TypeError, ValueError, ZeroDivisionError):
        pass
    return sp.simplify(e) == 0


def compare_exact(stated, computed) -> Comparison:
    """Exact comparison: ``simplify(computed - stated) == 0`` (elementwise for lists, matrices).

    Symbols in ``stated`` are matched to those of ``computed`` by name, so a stated
    formula written with plain symbols compares with a family's symbols (which carry
    assumptions such as ``positive=True``). A difference that is clearly nonzero at a
    probe point (positive rationals for symbols, cubics for undefined functions) is
    reported without calling :func:`sympy.simplify`: an identity must hold there too.

    Parameters
    ----------
    stated, computed : sympy expression, matrix, or list of them
        The stated formula (an input) and the value depthdyn computed.

    Returns
    -------
    Comparison
        ``holds`` and the simplified ``difference = computed - stated``.

    Examples
    --------
    >>> from depthdyn import vieta, momentum
    >>> compare_exact(stated_expr("m", "m"), vieta(momentum()).product).holds
    True
    """
    stated, computed = _sympy(stated), _sympy(computed)
    if isinstance(stated, list) or isinstance(computed, list):
        if not (isinstance(stated, list) and isinstance(computed, list)):
            return Comparison(False, _tuple(stated), _tuple(computed), sp.S.NaN, sp.S.Zero)
        s, c = stated, computed
        if len(s) != len(c):
            return Comparison(False, sp.Tuple(*s), sp.Tuple(*c), sp.S.NaN, sp.S.Zero)
        parts = [compare_exact(a, b) for a, b in zip(s, c, strict=True)]
        return Comparison(all(p.holds for p in parts), sp.Tuple(*(p.stated for p in parts)),
                          sp.Tuple(*c), sp.Tuple(*(p.difference for p in parts)), sp.S.Zero)
    if isinstance(stated, sp.MatrixBase) or isinstance(computed, sp.MatrixBase):
        S, C = sp.ImmutableMatrix(stated), sp.ImmutableMatrix(computed)
        if S.shape != C.shape:
            return Comparison(False, S, C, sp.S.NaN, sp.S.Zero)
        S = _unify(S, C)
        D = (C - S).applyfunc(sp.expand)
        return Comparison(all(_is_zero(e) for e in D), S, C, sp.ImmutableMatrix(D), sp.S.Zero)
    stated = _unify(stated, computed)
    diff = sp.expand(computed - stated)
    ok = _is_zero(diff)
    if ok:
        diff = sp.S.Zero
    elif sp.count_ops(diff) < 200:  # a readable difference, without simplify's cost
        diff = sp.factor(diff)
    return Comparison(ok, stated, computed, diff, sp.S.Zero)


# ------------------------------------------------------------------ claims
@dataclass(frozen=True)
class Outcome:
    """What a check returns: the computed value, the verdict and a note.

    ``computed`` is a SymPy object, a list of them, or text; for ``fails`` it must hold
    the correct value or a concrete counterexample.
    """

    computed: object
    verdict: str
    note: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ClaimError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")


@dataclass(frozen=True)
class ClaimResult(Record):
    """The record of one checked claim; :meth:`to_json` gives the JSON object."""

    id: str
    source: str
    section: str
    statement: str
    stated: object
    computed: object
    verdict: str
    method: str
    note: str = ""
    statement_key: str = ""

    def to_json(self) -> dict:
        """Keys ``id, source, section, statement, stated, computed, verdict, method, note, statement_key``."""
        return {
            "id": self.id,
            "source": self.source,
            "section": self.section,
            "statement": self.statement,
            "stated": _text(self.stated),
            "computed": _text(self.computed),
            "verdict": self.verdict,
            "method": self.method,
            "note": self.note,
            "statement_key": self.statement_key or self.id,
        }

    def _text(self) -> str:
        lines = [f"[{self.verdict}] {self.id} ({self.source} {self.section}): {self.statement}",
                 f"  stated:   {_text(self.stated)}", f"  computed: {_text(self.computed)}"]
        if self.note:
            lines.append(f"  note:     {self.note}")
        return "\n".join(lines)

    def _latex(self) -> str:
        return f"\\text{{{self.id}: {self.verdict}}}"


@dataclass(frozen=True)
class Claim:
    """One claim of a source, with the check that computes its truth.

    Parameters
    ----------
    id : str
        ``"<source number>-<section>-<slug>"``, e.g. ``"000-s1-growing-trajectory"``.
    source : str
        The source's file name (in ``shared/seeds``).
    section : str
        Section, equation or figure, e.g. ``"§3"`` or ``"eq. 13"``.
    statement : str
        What the source says, in words.
    stated : str or sympy object
        The stated value or formula: an input to compare against, never an expected
        output of the computation.
    method : str
        How depthdyn checks it.
    check : callable
        ``check(claim) -> Outcome``, computing with depthdyn from ``claim.stated`` and
        ``claim.premises``.
    premises : mapping, optional
        The source's premises the check starts from (parameter values, table entries,
        dimensions), so that a test can change them.
    mutant : mapping, optional
        Field changes (``stated``, ``premises``; premises are merged) under which the
        verdict must differ: a wrong value for a statement that holds, the correct one
        for a statement that fails. ``None``: exempt, the reason in ``tests``.
    reading_of : str, optional
        The key of the source statement this claim is one reading (or one part) of;
        claims sharing it count as one statement. Default: the claim's own id.
    """

    id: str
    source: str
    section: str
    statement: str
    stated: object
    method: str
    check: Callable[[Claim], Outcome] = field(repr=False, compare=False)
    premises: Mapping = field(default_factory=dict, repr=False, compare=False)
    mutant: Mapping | None = field(default=None, repr=False, compare=False)
    reading_of: str = ""

    @property
    def statement_key(self) -> str:
        """The source statement this claim belongs to (shared by all its readings)."""
        return self.reading_of or self.id

    def mutated(self) -> Claim:
        """This claim with :attr:`mutant` applied (premises merged into the original ones).

        Raises
        ------
        ClaimError
            The claim has no mutant.
        """
        if self.mutant is None:
            raise ClaimError(f"claim {self.id} has no mutant")
        changes = dict(self.mutant)
        if "premises" in changes:
            changes["premises"] = {**self.premises, **changes["premises"]}
        return replace(self, **changes)

    def run(self) -> ClaimResult:
        """Run the check; an exception inside it is re-raised as :class:`ClaimError`."""
        try:
            outcome = self.check(self)
        except BudgetExceededError as exc:  # not a bug: the verdict needs a larger budget
            raise BudgetExceededError(f"claim {self.id}, {exc.part}", exc.reason) from None
        except Exception as exc:
            raise ClaimError(f"claim {self.id}: internal failure in its check: "
                             f"{type(exc).__name__}: {exc}") from exc
        if not isinstance(outcome, Outcome):
            raise ClaimError(f"claim {self.id}: its check returned {outcome!r}, not an Outcome")
        return ClaimResult(self.id, self.source, self.section, self.statement, self.stated,
                           outcome.computed, outcome.verdict, self.method, outcome.note,
                           self.statement_key)


def check_claims(claims: Iterable[Claim]) -> list[ClaimResult]:
    """Run claims in order.

    Parameters
    ----------
    claims : iterable of Claim
        Claims with distinct ids.

    Returns
    -------
    list of ClaimResult

    Raises
    ------
    ClaimError
        Duplicate ids, or the first check that fails internally (its exception chained).
    """
    claims = list(claims)
    ids = [c.id for c in claims]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise ClaimError(f"duplicate claim ids: {dup}")
    return [c.run() for c in claims]


def format_table(results: Iterable[ClaimResult], width: int = 48) -> str:
    """A plain-text table of results: id, statement, stated, computed, verdict.

    Parameters
    ----------
    results : iterable of ClaimResult
    width : int
        Longest cell; longer statements and values are cut with an ellipsis.
    """

    def cut(s: str) -> str:
        s = " ".join(s.split())
        return s if len(s) <= width else s[: width - 1] + "…"

    rows = [("id", "statement", "stated", "computed", "verdict")]
    for res in results:
        j = res.to_json()
        rows.append((j["id"], cut(j["statement"]), cut(j["stated"]), cut(j["computed"]), j["verdict"]))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
                     for row in rows)
