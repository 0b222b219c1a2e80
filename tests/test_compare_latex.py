"""The comparison table for a paper: typeset by SymPy's printer, and compiled by pdflatex."""

import contextlib
import io
import re
import subprocess

import pytest
import sympy as sp
from system_programs import pdflatex

from depthdyn.cli import main
from depthdyn.compare import compare
from depthdyn.compare.latex import interval_tex, number_tex, polynomial_tex
from depthdyn.recurrence import r

PAPER = ["smooth:k=3", "bdf:k=2", "adams_bashforth:k=3", "rk4"]
#: The plain-text spellings a paper's table must not show: SymPy's ``oo`` and ``lam`` as words
#: ("smooth" and ``\lambda`` contain the letters), the rest anywhere.
PLAIN = (r"\boo\b", r"(?<![\\\w])lam\b", r"exp\(", " deg", "True", "False", "textbackslash")


@pytest.fixture(scope="module")
def paper_table():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["compare", *PAPER, "--format", "latex", "--quiet"])
    return code, out.getvalue()


def test_paper_table_exits_0_and_reads_as_latex(paper_table):
    code, tex = paper_table
    assert code == 0
    assert [s for s in PLAIN if re.search(s, tex)] == []
    # the patterns find the old table's spellings
    old = r"smooth:k=3 & (-oo, 0) \textbackslash{} {0} & 90 deg & True & exp(lam) \\"
    assert len([s for s in PLAIN if re.search(s, old)]) == 6
    rows = [line for line in tex.splitlines() if line.endswith(r"\\")][1:]
    assert [row.split(" & ")[0] for row in rows] == ["smooth:k=3", "bdf:k=2", r"adams\_bashforth:k=3", "rk4"]
    cells = {row.split(" & ")[0]: row.split(" & ") for row in rows}
    # AB3's real stability interval is (-6/11, 0) (Hairer & Wanner II, Table V.1.1 region; the
    # boundary locus rho/sigma at r = -1: (-1 - 1 - 0) / ((23 + 16 + 5)/12) = -24/44)
    assert cells[r"adams\_bashforth:k=3"][4] == r"$- \tfrac{6}{11} < \lambda < 0$"
    # BDF2 is L-stable: A-stable, and sigma = r^2 sends both roots to 0 as lam -> -oo
    assert cells["bdf:k=2"][6] == r"$90^\circ$ (L-stable)" and cells["bdf:k=2"][7] == "yes"
    assert cells["smooth:k=3"][7] == "no"  # (r - 1)^3 at lam = 0: a triple root on the circle
    assert cells["rk4"][9].strip(" \\") == r"$e^{\lambda}$"
    # smooth k=3 with lam -> lam/L: (r - 1)^3 = lam r^2 / L puts the roots at 1 + (lam/L)^(1/3),
    # so r^L grows like exp(c L^(2/3)): no limit (the Puiseux expansion; checked by iteration)
    assert cells["smooth:k=3"][9].strip(" \\") == "no finite limit"


def _compile(tmp_path, body: str) -> subprocess.CompletedProcess:
    doc = "\n".join([r"\documentclass{article}", r"\usepackage[margin=1cm,landscape]{geometry}",
                     r"\usepackage{booktabs,amsmath}", r"\begin{document}", body, r"\end{document}"])
    (tmp_path / "doc.tex").write_text(doc)
    return subprocess.run([pdflatex(), "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape",
                           "doc.tex"], cwd=tmp_path, capture_output=True, text=True, timeout=300)


def test_paper_table_compiles(paper_table, tmp_path):
    _code, tex = paper_table
    done = _compile(tmp_path, tex)
    assert done.returncode == 0, done.stdout[-2000:]
    assert (tmp_path / "doc.pdf").stat().st_size > 0


def test_compile_check_can_fail(tmp_path):
    # the old table's "(-oo, 0) \textbackslash{} {0}" was text; a bare math command outside math fails
    done = _compile(tmp_path, r"\begin{tabular}{l} -\tfrac{6}{11} < \lambda \\ \end{tabular}")
    assert done.returncode != 0


def test_polynomial_in_descending_powers_of_r():
    lam = sp.Symbol("lam")
    p = r**3 + r * lam - 2 + r**2 * (lam - 1)
    tex = polynomial_tex(p)
    where = [tex.index(t) for t in ("r^{3}", "r^{2}", r"\lambda r")]
    assert where == sorted(where) and tex.startswith("r^{3}") and tex.endswith("- 2")
    # the same polynomial printed by SymPy's default order starts elsewhere: the check can fail
    assert not sp.latex(sp.expand(p)).startswith("r^{3}")
    # long rationals (from float64, as mHC's) are shortened to 10 digits
    long = sp.Rational(3465527650391917, 50000000000000000)
    assert "3465527650391917" not in polynomial_tex(r - long) and "0.06931055301" in polynomial_tex(r - long)


def test_interval_and_number_cells():
    assert interval_tex(None) == "none"
    assert interval_tex([None, "0"]) == r"$-\infty < \lambda < 0$"
    assert interval_tex(["-2", None], "t", punctured=True) == r"$-2 < t < \infty,\ t \neq 0$"
    assert number_tex("2*sqrt(2)") == r"2 \sqrt{2}"
    assert number_tex(sp.Float(-6e-17)) == r"-6 \cdot 10^{-17}"
    huge = "+".join(f"sqrt({p})" for p in (2, 3, 5, 7, 11, 13))
    assert re.fullmatch(r"[\d.]+", number_tex(huge))  # too long to read: 4 significant digits


def test_labels_are_escaped():
    t = compare("momentum:m=1/2", n=21)
    tex = t.to_latex()
    assert "momentum:m=1/2" in tex and r"\left(\lambda + \tfrac{3}{2}\right) r" in tex


def test_ci_installs_the_latex_engine_or_says_why_not():
    from pathlib import Path

    ci = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text()
    assert "latex_pkgs=(texlive-latex-base texlive-latex-recommended)" in ci
    assert ci.count('export DEPTHDYN_NO_LATEX="') == 2  # apt failed / apt not usable: the skip reason
