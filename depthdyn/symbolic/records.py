"""Base class for small frozen result records that print as text and LaTeX."""

from __future__ import annotations

import sympy as sp

__all__ = ["Record", "sstr"]


def sstr(expr) -> str:
    """SymPy-parsable string of an expression (or nested list of them)."""
    if isinstance(expr, (list, tuple)):
        return [sstr(e) for e in expr]
    return sp.sstr(expr)


class Record:
    """Mixin: ``__str__`` from ``_text()``, ``_repr_latex_`` from ``_latex()``.

    Subclasses are frozen dataclasses; they implement ``_text`` and ``_latex``.
    """

    def _text(self) -> str:  # pragma: no cover - every record overrides
        raise NotImplementedError

    def _latex(self) -> str:  # pragma: no cover
        raise NotImplementedError

    def __str__(self) -> str:
        return self._text()

    def _repr_latex_(self) -> str:
        return f"$\\displaystyle {self._latex()}$"

    # SymPy printer hooks, so records print inside SymPy containers too
    def _sympystr(self, printer) -> str:
        return self._text()

    def _latex_(self, printer) -> str:  # pragma: no cover - rarely used
        return self._latex()
