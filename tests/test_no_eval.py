"""No text is ever evaluated: a scan of the package source, and the public helpers that took strings.

The scan is strict and syntactic (``ast``): it forbids

* calls of ``eval``, ``exec``, ``compile`` and ``__import__`` (``Poly.eval``-style methods are fine),
* importing ``sympify``, ``S``, ``parse_expr`` or anything from ``sympy.parsing`` out of SymPy,
* ``<x>.S(...)``, ``<x>.parse_expr(...)`` and ``<x>.parse_latex(...)`` calls and any ``sympy.parsing`` access,
* ``<x>.sympify(...)`` unless it passes ``strict=True`` (SymPy then refuses strings),
* ``nsimplify`` of a string literal.

``parse_expr`` called by its bare name is depthdyn's own safe parser, since SymPy's cannot
be imported under that name.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
import sympy as sp

import depthdyn
from depthdyn.errors import DepthdynError

PACKAGE = Path(depthdyn.__file__).resolve().parent

_BUILTINS = {"eval", "exec", "compile", "__import__"}
_SYMPY_READERS = {"sympify", "S", "parse_expr", "parse_latex"}


def _strict(call: ast.Call) -> bool:
    return any(k.arg == "strict" and isinstance(k.value, ast.Constant) and k.value.value is True
               for k in call.keywords)


def violations(source: str, filename: str = "<snippet>") -> list[str]:
    """Every place in ``source`` that could evaluate text (see the module docstring)."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        where = f"{filename}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "sympy":
            if "parsing" in (node.module or "").split("."):
                found.append(f"{where}: import from {node.module}")
            found += [f"{where}: import of sympy's {a.name}" for a in node.names if a.name in _SYMPY_READERS]
        elif isinstance(node, ast.Import):
            found += [f"{where}: import {a.name}" for a in node.names if "parsing" in a.name.split(".")]
        elif isinstance(node, ast.Attribute) and node.attr == "parsing":
            found.append(f"{where}: access to sympy.parsing")
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if isinstance(func, ast.Name) and name in _BUILTINS:
                found.append(f"{where}: call of {name}")
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                    func.value.id == "builtins" and name in _BUILTINS:
                found.append(f"{where}: call of builtins.{name}")
            elif name == "sympify" and not _strict(node):
                found.append(f"{where}: sympify without strict=True")
            elif isinstance(func, ast.Attribute) and name in _SYMPY_READERS - {"sympify"}:
                found.append(f"{where}: call of .{name}")
            elif isinstance(func, ast.Name) and name == "S":
                found.append(f"{where}: call of S")
            elif name == "nsimplify" and any(isinstance(a, ast.Constant) and isinstance(a.value, str)
                                             for a in node.args):
                found.append(f"{where}: nsimplify of a string")
    return found


def test_package_source_never_evaluates_text():
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 50  # the whole package is scanned, not an empty glob
    found = []
    for path in files:
        found += violations(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE)))
    assert found == []


@pytest.mark.parametrize("snippet", [
    "eval(text)",
    "exec(compile(text, 'f', 'exec'), {})",
    "import builtins\nbuiltins.eval(text)",
    "__import__('os')",
    "import sympy as sp\nsp.sympify(text)",
    "import sympy as sp\nsp.sympify(text, locals=names)",
    "import sympy as sp\nsp.sympify(text, strict=False)",
    "import sympy\nsympy.S(text)",
    "from sympy import S\nS(text)",
    "from sympy import sympify",
    "from sympy.core.sympify import sympify as read",
    "from sympy.parsing.sympy_parser import parse_expr as sympy_parse",
    "import sympy.parsing.sympy_parser",
    "import sympy as sp\nsp.parsing.sympy_parser.parse_expr(text)",
    "import sympy as sp\nsp.nsimplify('1/3')",
])
def test_scan_flags_each_way_of_evaluating_text(snippet):
    assert violations(snippet)


@pytest.mark.parametrize("snippet", [
    "import sympy as sp\nsp.sympify(value, strict=True)",
    "poly.eval(2)\nmodel.eval()",
    "from .parse import parse_expr\nparse_expr(text, names)",
    "import sympy as sp\nsp.S.Half + sp.S.Zero",
    "import sympy as sp\nsp.nsimplify(x)",
])
def test_scan_allows_what_cannot_read_text(snippet):
    assert violations(snippet) == []


def test_scan_fails_on_a_mutated_package_module():
    """Re-inserting the old ``sympify`` into ``printing.tex`` is caught."""
    path = PACKAGE / "printing.py"
    source = path.read_text(encoding="utf-8")
    assert violations(source) == []
    marker = "def tex(expr, **settings) -> str:\n"
    assert marker in source
    mutated = source.replace(marker, marker + "    expr = sp.sympify(expr)\n", 1)
    assert violations(mutated)
    assert violations(source + textwrap.dedent("""
        def _listing(text):
            exec(text, {})
    """))


# ---------------------------------------------------------------- the helpers that used to run text
_PAYLOAD = "__import__('os').getcwd()"


def test_tex_does_not_evaluate_a_string():
    from depthdyn.printing import tex

    with pytest.raises(DepthdynError):
        tex(_PAYLOAD)
    assert tex("lam/2 + eta") == tex(sp.Symbol("lam") / 2 + sp.Symbol("eta"))
    assert tex(0.5) == r"\frac{1}{2}"  # an exact number, not a float


def test_schur_stable_does_not_evaluate_a_string():
    from depthdyn.symbolic.numbers import schur_stable

    with pytest.raises(DepthdynError):
        schur_stable([1, _PAYLOAD])
    # exact reading of strings and floats: r^2 - 1/4 is stable, r^2 - 1 is not
    assert schur_stable([1, 0, "-1/4"]) and not schur_stable([1, 0, "-1"])
    assert schur_stable([1, 0.0, -0.25]) is True


def test_formula_reader_refuses_code():
    from depthdyn.claims.formula import formula

    for text in (_PAYLOAD, "x.__class__", "f(a=1)", "lambda: 1", "[i for i in x]"):
        with pytest.raises(DepthdynError):
            formula(text)
    n = sp.Symbol("n")
    assert formula("n!", {"n": n}) == sp.factorial(n)
    assert formula("A_ij > 0") == sp.Gt(sp.Symbol("A_ij"), 0)


def test_listing_interpreter_refuses_code():
    from depthdyn.claims.listing import ListingError, run_listing

    for text in ("import os", "open('x')", "np = 1\nnp.__class__", "import numpy as np\nnp.load('f')",
                 "def f():\n    pass", "x = [].append"):
        with pytest.raises(ListingError):
            run_listing(text)
    assert run_listing("a = = 1")[0] == "SyntaxError"
    err, space = run_listing("import numpy as np\nk = np.ones((2, 2)).reshape((4,))\nfor i in range(2):\n"
                             "    k[i] -= i\n")
    assert err is None and space["k"].tolist() == [1.0, 0.0, 1.0, 1.0]
