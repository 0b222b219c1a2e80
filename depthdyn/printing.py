"""Printing of exact expressions: parameter symbols that LaTeX prints as Greek letters, ``tex``, ``sstr``."""

from __future__ import annotations

import sympy as sp

from .parse import as_sympy, free_names

__all__ = ["TexSymbol", "symbol", "sstr", "tex", "tex_sum"]

_GREEK_LATIN = {"lam": "\\lambda"}  # ASCII names the code uses for Greek letters SymPy does not know


class TexSymbol(sp.Symbol):
    r"""A parameter symbol with an ASCII name that LaTeX prints as its Greek letter (``lam`` -> ``\lambda``).

    It is the plain :class:`sympy.Symbol` of the same name and assumptions in every other
    respect: equal to it (both ways), with the same hash and sort key, replaced by ``subs``
    and ``xreplace`` with it, so expressions a user builds with ``sympy.Symbol("lam")``
    compare, cancel and substitute exactly as before. Only the printers differ.

    >>> lam = TexSymbol("lam")
    >>> sp.latex(2 * lam), lam == sp.Symbol("lam"), sp.expand(lam - sp.Symbol("lam"))
    ('2 \\lambda', True, 0)
    """

    def _latex(self, printer=None) -> str:
        return _symbol_tex(self.name)

    def _plain(self) -> sp.Symbol:
        return sp.Symbol(self.name, **self.assumptions0)

    def __eq__(self, other):
        # Python asks the subclass first, also for Symbol("lam") == TexSymbol("lam")
        if isinstance(other, sp.Symbol) and not isinstance(other, sp.Dummy):
            other = other._plain() if isinstance(other, TexSymbol) else other
            return self._plain() == other
        return sp.Symbol.__eq__(self, other)

    def __ne__(self, other):
        return not self == other

    def __hash__(self) -> int:
        return hash(self._plain())

    @classmethod
    def class_key(cls):
        return sp.Symbol.class_key()  # the same place as Symbol("lam") in canonical argument order

    def _eval_subs(self, old, new):
        return new if old == self else None

    def __getnewargs_ex__(self):
        return (self.name,), self.assumptions0


# SymPy orders the arguments of sums and products by class *name* (Basic.compare): under
# its own name the class would sort apart from Symbol("lam"), and eta*lam*r built with either
# would not cancel. The printers dispatch on the ``_latex`` method first, so they still see it.
TexSymbol.__name__ = "Symbol"


def symbol(name: str, **assumptions) -> sp.Symbol:
    """A parameter symbol: a :class:`TexSymbol` for ``lam`` (and ``lam_<part>``), else a plain Symbol."""
    return TexSymbol(name, **assumptions) if _symbol_tex(name) else sp.Symbol(name, **assumptions)


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
