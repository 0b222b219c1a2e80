"""The comparison table typeset for a paper: every cell through SymPy's LaTeX printer.

:meth:`~depthdyn.compare.ComparisonTable.to_latex` writes a ``tabular`` (booktabs rules)
that compiles as it is inside a document with ``\\usepackage{booktabs, amsmath}``:

* characteristic polynomials in descending powers of ``r``, each coefficient printed by
  SymPy (:func:`depthdyn.printing.tex`, so ``lam`` is ``\\lambda``) and numbers of more
  than 12 digits shortened as the compact output does
  (:func:`depthdyn.symbolic.compact.shorten`: mHC's rationals read from float64);
* stability intervals as inequalities with exact ends, ``-\\tfrac{6}{11} < \\lambda < 0``,
  infinite ends as ``\\infty``, a punctured interval with ``\\lambda \\neq 0``; the
  imaginary interval in ``t`` for ``\\lambda = i t``;
* ``A(\\alpha)`` in degrees with ``^\\circ``, zero-stability as *yes* / *no*, the depth
  limit as an expression (``e^{\\lambda}``) or in words.
"""

from __future__ import annotations

import sympy as sp

from ..parse import as_sympy
from ..printing import tex, tex_sum
from ..recurrence import r
from ..symbolic.compact import shorten

__all__ = ["COLUMNS", "latex_table", "polynomial_tex", "interval_tex", "number_tex"]

#: The column headers of the LaTeX table (text mode).
COLUMNS = ("family", "order", "states", r"characteristic polynomial $\chi(r)$", r"real interval",
           r"imaginary interval ($\lambda = i t$)", r"$A(\alpha)$", "zero-stable", "area", "depth limit")
#: An exact end longer than this (in LaTeX characters) is printed as a 4-digit decimal instead.
LONG_END = 40
_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
            "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def escape(text: str) -> str:
    """``text`` safe in LaTeX's text mode (a family label as the user wrote it)."""
    return "".join(_ESCAPES.get(c, c) for c in text)


def _t(latex: str) -> str:
    """Text-style fractions: a table row keeps its height."""
    return latex.replace(r"\frac{", r"\tfrac{")


def number_tex(value) -> str:
    """An exact number (SymPy string or expression) in LaTeX; very long ends as 4 significant digits.

    >>> number_tex("-6/11")
    '- \\\\tfrac{6}{11}'
    >>> number_tex(None)
    '\\\\infty'
    """
    if value is None:
        return r"\infty"
    expr = shorten(as_sympy(value) if isinstance(value, str) else value)  # text is parsed, never evaluated
    text = _t(tex(expr))
    if expr.is_Float or (len(text) > LONG_END and expr.is_number):
        return _decimal(float(sp.N(expr, 15)))
    return text


def _decimal(x: float) -> str:
    """``x`` to 4 significant digits, a power of ten as ``\\cdot 10^{k}``."""
    mantissa, _, power = f"{x:.4g}".partition("e")
    return mantissa + (rf" \cdot 10^{{{int(power)}}}" if power else "")


def interval_tex(ends, variable: str = r"\lambda", punctured: bool = False) -> str:
    """``lo < variable < hi`` in math mode (``None`` ends are infinite); ``"none"`` when ``ends`` is None.

    >>> interval_tex(["-6/11", "0"])
    '$- \\\\tfrac{6}{11} < \\\\lambda < 0$'
    >>> interval_tex([None, None], "t", punctured=True)
    '$-\\\\infty < t < \\\\infty,\\\\ t \\\\neq 0$'
    """
    if ends is None:
        return "none"
    lo, hi = ends
    lo_tex = r"-\infty" if lo is None else number_tex(lo)
    body = f"{lo_tex} < {variable} < {number_tex(hi)}"
    return f"${body}" + (rf",\ {variable} \neq 0$" if punctured else "$")


def polynomial_tex(expr: sp.Expr) -> str:
    """A characteristic polynomial in descending powers of ``r``, coefficients by SymPy's printer.

    >>> lam = sp.Symbol("lam")
    >>> polynomial_tex(r**2 * (sp.Rational(3, 2) - lam) - 2 * r + sp.Rational(1, 2))
    '\\\\left(\\\\tfrac{3}{2} - \\\\lambda\\\\right) r^{2} - 2 r + \\\\tfrac{1}{2}'
    """
    poly = sp.Poly(sp.expand(expr), r)
    terms = []
    for (k,), c in poly.terms():  # descending powers of r
        c = shorten(c)
        power = "" if k == 0 else "r" if k == 1 else f"r^{{{k}}}"
        if not power:
            terms.append(_t(tex(c)))
            continue
        # -(lam + 3) r^2 rather than (-lam - 3) r^2; (3/2 - lam) r^2 stays as it reads
        negative = c.is_Add and all(t.could_extract_minus_sign() for t in c.args)
        sign, c = ("-", -c) if negative or (not c.is_Add and c.could_extract_minus_sign()) else ("", c)
        if c == 1:
            terms.append(sign + power)
        elif c.is_Add:
            terms.append(sign + r"\left(" + _t(tex(c)) + r"\right) " + power)
        else:
            terms.append(sign + _t(tex(c)) + " " + power)
    return tex_sum(*terms) if terms else "0"


def _intervals(nb: dict, axis: str) -> str:
    variable = r"\lambda" if axis == "real" else "t"
    pieces = nb.get(f"{axis}_pieces_exact") or nb.get(f"{axis}_pieces")
    if pieces:  # no piece contains or touches 0 (BDF3 on the imaginary axis): all of them
        return " or ".join(interval_tex(p, variable) for p in pieces)
    ends = nb.get(f"{axis}_exact", nb.get(f"{axis}_interval"))
    if f"{axis}_exact" not in nb and ends is not None:  # grid estimate: floats
        ends = [None if e is None else sp.Float(e) for e in ends]
    return interval_tex(ends, variable, nb.get(f"{axis}_component", "").endswith("on both sides"))


def _alpha(nb: dict) -> str:
    alpha = nb.get("a_alpha_degrees")
    if alpha is None:
        return "none"
    if nb.get("a_alpha_exact") == "90":
        return r"$90^\circ$ (" + ("L-stable" if nb.get("l_stable") else "A-stable") + ")"
    return f"${alpha:.4g}^\\circ$"


def _zero_stable(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "undecided"


def _depth_limit(row) -> str:
    if row.limit is not None:
        return f"${_t(tex(shorten(row.limit)))}$"
    text = row.depth_limit
    if text.startswith("n/a (matrix"):
        return "n/a (matrix family)"
    if text.startswith("n/a"):
        return "n/a (has a depth $L$)"
    if text.startswith("no finite"):
        return "no finite limit"
    return "not available"


def _caption(table) -> list[str]:
    lo, hi, ilo, ihi = table.box
    flagged = any(row.numbers.get("grid_check") for row in table.rows)
    lines = [rf"Area: strictly stable part of the box ${lo:g} \le \operatorname{{Re}}\lambda \le {hi:g}$, "
             rf"${ilo:g} \le \operatorname{{Im}}\lambda \le {ihi:g}$ (${table.n} \times {table.n}$ grid).",
             "Numbers: " + escape(table.numbers_method).replace("A(alpha)", r"$A(\alpha)$") + ".",
             r"Depth limit: $x_L$ as $L \to \infty$ with $\lambda \to \lambda / L$, from "
             r"$x_0 = \dots = x_{p-1} = 1$. Intervals: strict stability, open."]
    if flagged:
        lines.append("(!): the grid cross-check disagrees with the exact numbers (grid\\_check in the JSON).")
    if any(row.limit is None and row.depth_limit.startswith("not available") for row in table.rows):
        lines.append("Not available: neither the closed form nor the principal root decides the limit.")
    return ["% " + line for line in lines]


def latex_table(table) -> str:
    """The ``tabular`` of a :class:`~depthdyn.compare.ComparisonTable`, its caption as comments below."""
    body = []
    for row in table.rows:
        nb = row.numbers
        flag = " (!)" if nb.get("grid_check") else ""
        cells = [escape(row.label) + flag, str(row.order), str(row.state_size),
                 f"${polynomial_tex(row.charpoly)}$", _intervals(nb, "real"), _intervals(nb, "imag"),
                 _alpha(nb), _zero_stable(nb.get("zero_stable")), f"{row.area:.4g}", _depth_limit(row)]
        body.append(" & ".join(cells) + r" \\")
    return "\n".join([r"\begin{tabular}{@{}lrrlllllrl@{}}", r"\toprule", " & ".join(COLUMNS) + r" \\",
                      r"\midrule", *body, r"\bottomrule", r"\end{tabular}", *_caption(table)]) + "\n"
