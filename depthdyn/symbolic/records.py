"""Base class for small frozen result records that print as text and LaTeX."""

from __future__ import annotations

import functools

import sympy as sp

from ..parse import as_sympy, free_names

__all__ = ["Record", "sstr", "tex", "tex_sum"]

_GREEK_LATIN = {"lam": "\\lambda"}  # ASCII names the code uses for Greek letters SymPy does not know


def sstr(expr) -> str:
    """SymPy-parsable string of an expression (or nested list of them)."""
    if isinstance(expr, (list, tuple)):
        return [sstr(e) for e in expr]
    return sp.sstr(expr)


def _symbol_tex(name: str) -> str | None:
    """LaTeX for ``lam`` and ``lam_<sub>`` (``\\lambda``, ``\\lambda_{re}``); None for other names."""
    base, _, sub = name.partition("_")
    if base not in _GREEK_LATIN:
        return None
    return _GREEK_LATIN[base] + (f"_{{\\mathrm{{{sub}}}}}" if sub else "")


def tex(expr, **settings) -> str:
    """``sympy.latex`` with the library's ASCII names printed as letters (``lam`` -> ``\\lambda``).

    >>> tex(sp.Symbol("eta") * sp.Symbol("lam") + 1)
    '\\\\eta \\\\lambda + 1'
    """
    if not isinstance(expr, sp.Basic):  # text is parsed, never evaluated
        names = {n: sp.Symbol(n) for n in free_names(expr)} if isinstance(expr, str) else None
        expr = as_sympy(expr, names)
        expr = sp.Matrix(expr) if isinstance(expr, list) else expr
    names = {s: t for s in getattr(expr, "free_symbols", set())
             if isinstance(s, sp.Symbol) and (t := _symbol_tex(s.name)) is not None}
    return sp.latex(expr, symbol_names=names, **settings) if names else sp.latex(expr, **settings)


def tex_sum(*terms) -> str:
    """LaTeX of ``terms[0] + terms[1] + ...`` with each sign written once (``a - b``, never ``a + -b``).

    >>> tex_sum(sp.Symbol("a"), -sp.Symbol("b") / 2)
    'a - \\\\frac{b}{2}'
    """
    out = ""
    for i, term in enumerate(terms):
        text = term if isinstance(term, str) else tex(term)
        if i == 0:
            out = text
        elif text.startswith("-"):
            out += " - " + text[1:].lstrip()
        else:
            out += " + " + text
    return out


class Record:
    """Mixin: ``__str__`` from ``_text()``, ``_repr_latex_`` from ``_latex()``.

    Subclasses are frozen dataclasses; they implement ``_text`` and ``_latex``. SymPy's
    printers call ``_sympystr(printer)`` and ``_latex(printer)``, so ``sympy.latex(record)``
    and records inside SymPy containers print: a subclass's ``_latex(self)`` is wrapped here
    to accept (and ignore) the printer argument.
    """

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        body = cls.__dict__.get("_latex")
        if body is not None and not getattr(body, "_takes_printer", False):

            @functools.wraps(body)
            def _latex(self, printer=None, _body=body) -> str:
                return _body(self)

            _latex._takes_printer = True
            cls._latex = _latex

    def _text(self) -> str:  # pragma: no cover - every record overrides
        raise NotImplementedError

    def _latex(self, printer=None) -> str:  # pragma: no cover
        raise NotImplementedError

    def __str__(self) -> str:
        return self._text()

    def _repr_latex_(self) -> str:
        return f"$\\displaystyle {self._latex()}$"

    def _sympystr(self, printer) -> str:
        return self._text()


