"""The sources' claims, checked by computation (see :mod:`depthdyn.claims.base`).

One module per source document defines a tuple ``CLAIMS`` of :class:`Claim` records;
:data:`SOURCES` maps each source to its module, imported lazily. :func:`run_claims`
runs them and returns :class:`ClaimResult` records with verdicts ``holds``, ``fails``
or ``holds-with-caveat``; an exception inside a check is an internal failure and
raises :class:`ClaimError`.

>>> from depthdyn.claims import claims
>>> res = claims("000")[0].run()
>>> res.id, res.stated, res.computed, res.verdict
('000-s1-growing-ratio', '1.25', '5/4 = 1.25', 'holds')
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import MappingProxyType

from ..errors import ParameterError
from .base import (
    VERDICTS,
    Claim,
    ClaimError,
    ClaimResult,
    Comparison,
    Outcome,
    check_claims,
    compare_exact,
    compare_rounded,
    format_table,
)
from .unchecked import NOT_CHECKED, Unchecked

__all__ = [
    "VERDICTS",
    "Claim",
    "ClaimError",
    "ClaimResult",
    "Comparison",
    "Outcome",
    "Source",
    "SOURCES",
    "check_claims",
    "claims",
    "compare_exact",
    "compare_rounded",
    "format_table",
    "resolve_sources",
    "run_claims",
    "summary",
    "statement_verdicts",
    "source_summary",
    "coverage",
    "NOT_CHECKED",
    "Unchecked",
]


@dataclass(frozen=True)
class Source:
    """A source document and the module holding its claims."""

    key: str
    file: str
    title: str
    module: str

    @property
    def short(self) -> str:
        """The module's own name (``post``, ``hauser``)."""
        return self.module.rsplit(".", 1)[-1]

    def claims(self) -> tuple[Claim, ...]:
        return tuple(importlib.import_module(self.module).CLAIMS)


#: Source key -> :class:`Source`, in document order.
SOURCES = MappingProxyType({
    s.key: s
    for s in (
        Source("000", "000_c40155c17ead4a32.txt", "Dynamics of Higher-Order Residual Networks (blog post)",
               "depthdyn.claims.post"),
        Source("001", "001_5f70fa795114e580.txt", "Lechner et al.: Entangled Residual Mappings",
               "depthdyn.claims.lechner"),
        Source("002", "002_1c9afe8adca9f537.txt",
               "Hauser, Gunn, Saab, Ray: State Space Representations of Deep Neural Networks",
               "depthdyn.claims.hauser"),
        Source("003", "003_b990f2cca7ebb478.txt", "Jin Qian: residual and hyper-connections (note)",
               "depthdyn.claims.hyper"),
        Source("004", "004_3517e0990818788b.txt", "Residual Connections (glossary page)",
               "depthdyn.claims.glossary"),
        Source("lit", "literature", "Published architectures' statements about their own blocks (paper per claim)",
               "depthdyn.claims.literature"),
    )
})


def resolve_sources(source: str | None) -> list[Source]:
    """The source named by a key, module name or file name (all sources for ``None``)."""
    if source is None:
        return list(SOURCES.values())
    want = str(source).strip()
    for s in SOURCES.values():
        if want in (s.key, s.file, s.file.rsplit(".", 1)[0], s.short, s.module):
            return [s]
    choices = ", ".join(f"{s.key} ({s.short})" for s in SOURCES.values())
    raise ParameterError(f"unknown source {source!r}; choose one of {choices}")


def claims(source: str | None = None) -> tuple[Claim, ...]:
    """The claims of one source, or of all, without running them.

    Parameters
    ----------
    source : str, optional
        A key (``"000"``), a module name (``"post"``) or the source's file name.

    Raises
    ------
    ParameterError
        Unknown source (the message lists the choices).
    """
    return tuple(c for s in resolve_sources(source) for c in s.claims())


def run_claims(source: str | None = None) -> list[ClaimResult]:
    """Check the claims of one source, or of all.

    Parameters
    ----------
    source : str, optional
        As for :func:`claims`.

    Returns
    -------
    list of ClaimResult
        In document order; ``to_json()`` gives each JSON object.

    Raises
    ------
    ParameterError
        Unknown source.
    ClaimError
        A check failed internally (its exception is chained).
    """
    return check_claims(claims(source))


def summary(results) -> dict[str, int]:
    """Number of results per verdict (every verdict present, possibly 0), plus ``total``."""
    counts = {v: 0 for v in VERDICTS}
    for res in results:
        counts[res.verdict] += 1
    counts["total"] = sum(counts[v] for v in VERDICTS)
    return counts


def statement_verdicts(results) -> dict[str, str]:
    """Verdict per source statement: its readings' verdict when they agree, else ``holds-with-caveat``.

    A statement with several readings (claims sharing a ``statement_key``) holds or fails as a
    whole only when every reading does; otherwise it is true under one reading only, which is
    the condition the source leaves unstated.
    """
    by_key: dict[str, set] = {}
    for res in results:
        by_key.setdefault(res.statement_key or res.id, set()).add(res.verdict)
    return {k: v.pop() if len(v) == 1 else "holds-with-caveat" for k, v in by_key.items()}


def source_summary(results, not_checked=NOT_CHECKED) -> dict[str, dict[str, int]]:
    """Per source key: source statements that hold, fail, hold with a caveat, are not checked, and the total.

    Statements are counted once however many readings they have (:func:`statement_verdicts`).
    """
    table = {key: {v: 0 for v in (*VERDICTS, "not checked")} for key in SOURCES}
    first = {}
    for res in results:
        first.setdefault(res.statement_key or res.id, res.id.split("-")[0])
    for key, verdict_ in statement_verdicts(results).items():
        table[first[key]][verdict_] += 1
    for item in not_checked:
        table[item.source]["not checked"] += 1
    for row in table.values():
        row["total"] = sum(row[v] for v in (*VERDICTS, "not checked"))
    return table


def coverage(results, not_checked=NOT_CHECKED) -> dict:
    """The catalogue of source statements: checked ones (by statement key) and the not-checked table.

    Returns ``{"statements", "covered", "not_checked"}``; raises :class:`ClaimError` when a
    statement is both checked and listed as not checked, or a not-checked key repeats.
    """
    covered = set(statement_verdicts(results))
    listed = [u.key for u in not_checked]
    if len(set(listed)) != len(listed):
        raise ClaimError(f"repeated not-checked keys: {sorted({k for k in listed if listed.count(k) > 1})}")
    both = covered & set(listed)
    if both:
        raise ClaimError(f"statements both checked and listed as not checked: {sorted(both)}")
    return {"statements": len(covered) + len(listed), "covered": len(covered), "not_checked": len(listed)}
