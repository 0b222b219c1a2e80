"""Printing of exact expressions: parameter symbols that LaTeX prints as Greek letters, ``tex``,
``sstr`` (polynomials in ``r`` in descending powers), a short text of a recurrence."""

from __future__ import annotations

import sympy as sp
from sympy.printing.str import StrPrinter

from .parse import as_sympy, free_names

__all__ = ["TexSymbol", "symbol", "sstr", "tex", "tex_sum", "short_repr", "REPR_POLY_CHARS"]

_R = sp.Symbol("r")  # the characteristic variable (depthdyn.structure.r)
#: Longest characteristic polynomial :func:`short_repr` shows whole (characters).
REPR_POLY_CHARS = 100

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


class _Printer(StrPrinter):
    """``sympy.sstr``, except that a sum that is a polynomial in ``r`` is written in descending
    powers of ``r``, each power once, with its coefficient in parentheses when it is a sum."""

    def _print_Add(self, expr, order=None):
        if _R not in expr.free_symbols or not expr.is_polynomial(_R):
            return super()._print_Add(expr, order)
        by_power: dict[int, list] = {}
        for term in expr.args:  # collected by power of r; other factors are left as they are
            coeff, rest = term.as_independent(_R, as_Add=False)
            k = 1 if rest == _R else (int(rest.exp) if rest.is_Pow and rest.base == _R else None)
            pairs = [(0, term)] if rest == 1 else [(k, coeff)] if k is not None else [
                (j, c) for (j, ), c in sp.Poly(term, _R, domain="EX").terms()]
            for j, c in pairs:
                by_power.setdefault(j, []).append(c)
        out = []
        for k in sorted(by_power, reverse=True):
            coeff = sp.Add(*by_power[k])
            if coeff == 0:
                continue
            # a sum leading the polynomial keeps mixed signs: (11/6 - lam)*r**3, not -(lam - 11/6)*r**3
            mixed = coeff.is_Add and not out and not all(t.could_extract_minus_sign() for t in coeff.args)
            negative = coeff.could_extract_minus_sign() and not mixed
            c = -coeff if negative else coeff
            if k == 0 and coeff.is_Add:  # the constant term's own terms, not grouped
                text = super()._print_Add(coeff, order)
                negative, text = text.startswith("-"), text.lstrip("-")
            elif c.is_Add:
                text = f"({self._print(c)})*" + ("r" if k == 1 else f"r**{k}")
            else:
                text = self._print(c * _R**k)
            out.append(("- " if negative else "+ ") + text)
        if not out:
            return "0"
        first = out[0]
        return " ".join([first[2:] if first.startswith("+") else "-" + first[2:], *out[1:]])


def sstr(expr) -> str:
    """SymPy-parsable string of an expression (or nested list of them); polynomials in ``r``
    in descending powers.

    >>> lam, m = sp.symbols("lam m")
    >>> sstr(_R**2 * (1 - 2 * _R) - (1 + lam + m) * _R + m)
    '-2*r**3 + r**2 - (lam + m + 1)*r + m'
    >>> sstr(sp.Eq(_R - 1 - lam, 0)), sstr((sp.Rational(11, 6) - lam) * _R**2 - (lam + 1) * _R)
    ('Eq(r - lam - 1, 0)', '(11/6 - lam)*r**2 - (lam + 1)*r')
    """
    if isinstance(expr, (list, tuple)):
        return [sstr(e) for e in expr]
    return _Printer().doprint(expr)


def short_repr(rec) -> str:
    """A one-line text of a :class:`~depthdyn.recurrence.Recurrence` that reads like its constructor:
    name, order, dimension, parameter names and (for a scalar recurrence) the characteristic
    polynomial, cut with an ellipsis past :data:`REPR_POLY_CHARS` characters. A matrix
    recurrence shows the size of its coefficients instead (its polynomial may be huge)."""
    names = [p.name for p in rec.params]
    shown = ", ".join(names if len(names) <= 6 else names[:4] + ["...", names[-1]])
    params = f"({shown}{',' if len(names) == 1 else ''})" + (f" [{len(names)}]" if len(names) > 6 else "")
    if rec.dim == 1:
        poly = sstr(rec.charpoly())
        poly = poly if len(poly) <= REPR_POLY_CHARS else poly[:REPR_POLY_CHARS - 3] + "..."
        tail = f"char_poly={poly}"
    else:
        tail = f"coeffs={rec.order + 1} matrices {rec.dim}x{rec.dim}"
    return f"Recurrence(name={rec.name!r}, order={rec.order}, dim={rec.dim}, params={params}, {tail})"


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
