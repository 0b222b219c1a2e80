"""The notebooks in notebooks/ run top to bottom (no Jupyter kernel), assert their results and show figures.

Each notebook's code cells are executed in order in one fresh namespace by the executor the
docs build uses (docs/_ext/nbexec.py: outputs recorded as a Jupyter kernel with the inline
backend shows them), so a failing ``assert`` inside a notebook fails its test, and the
executed notebook must hold image outputs. Notebooks are stored without outputs.
"""

from __future__ import annotations

import ast
import json
import linecache
import sys
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
sys.path.insert(0, str(NOTEBOOKS.parent / "docs" / "_ext"))

from nbexec import execute, image_outputs  # noqa: E402


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _code_cells(nb: dict) -> list[str]:
    return [
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in nb["cells"]
        if c["cell_type"] == "code"
    ]


def run_notebook(nb: dict, name: str) -> dict:
    """Execute the code cells of a notebook (a loaded nbformat-4 dict) in one namespace."""
    namespace: dict = {"__name__": "__main__"}
    for i, src in enumerate(_code_cells(nb)):
        filename = f"{name}[cell {i}]"
        linecache.cache[filename] = (
            len(src),
            None,
            src.splitlines(keepends=True),
            filename,
        )  # readable tracebacks
        exec(compile(src, filename, "exec"), namespace)  # noqa: S102 - our own notebooks
    return namespace


def test_at_least_three_notebooks():
    assert len(PATHS) >= 3, PATHS


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_notebook_is_clean_and_asserts(path):
    nb = _load(path)
    assert nb["nbformat"] == 4
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell.get("outputs", []) == [], f"{path.name}: stored outputs; clear them"
            assert cell.get("execution_count") is None, f"{path.name}: stored execution count"
    asserts = sum(
        isinstance(node, ast.Assert) for src in _code_cells(nb) for node in ast.walk(ast.parse(src))
    )
    assert asserts >= 1, f"{path.name} has no assert statements"


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_notebook_runs(path, monkeypatch):
    nb = _load(path)
    for module in nb["metadata"].get("depthdyn", {}).get("requires", []):  # optional extras
        pytest.importorskip(module, reason=f"{path.name} needs the optional {module} extra")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    executed = execute(nb, path.parent, path.name)
    assert image_outputs(executed) >= 1, f"{path.name} shows no figure"
    for cell in executed["cells"]:
        if cell["cell_type"] == "code":
            assert cell["execution_count"] is not None


def test_executor_records_figures_text_and_latex(tmp_path):
    """Figures left open (a plot without ax), a returned figure, printed text and a result's LaTeX."""
    nb = {"nbformat": 4, "metadata": {}, "cells": [
        {"cell_type": "code", "source": "import depthdyn as dd\nax = dd.plot.plot_spectrum([[0.0, 1.0], [1.0, 0.0]])\n"},
        {"cell_type": "code", "source": "from matplotlib.figure import Figure\nfig = Figure()\nfig.add_subplot()\nfig"},
        {"cell_type": "code", "source": "print('hello')\ndd.roots(dd.momentum())"},
        {"cell_type": "code", "source": "x = 1"},
    ]}
    out = execute(nb, tmp_path, "synthetic")
    kinds = [[o["output_type"] for o in c["outputs"]] for c in out["cells"]]
    assert kinds == [["display_data"], ["display_data"], ["stream", "execute_result"], []]
    assert image_outputs(out) == 2
    assert "\\lambda" in out["cells"][2]["outputs"][1]["data"]["text/latex"]
    assert image_outputs({"cells": [nb["cells"][3]]}) == 0  # the count can be zero


def test_executor_raises_on_a_failing_assert(tmp_path):
    nb = {"nbformat": 4, "metadata": {}, "cells": [{"cell_type": "code", "source": "assert 1 == 2, 'nb fails'"}]}
    with pytest.raises(AssertionError, match="nb fails"):
        execute(nb, tmp_path, "synthetic")


def test_failing_assert_in_a_notebook_fails():
    nb = {
        "nbformat": 4,
        "cells": [
            {"cell_type": "markdown", "source": ["# synthetic"]},
            {"cell_type": "code", "source": ["x = 1\n"], "outputs": []},
            {"cell_type": "code", "source": ["assert x == 2, 'notebook assertion'\n"], "outputs": []},
        ],
    }
    with pytest.raises(AssertionError, match="notebook assertion"):
        run_notebook(nb, "synthetic.ipynb")
