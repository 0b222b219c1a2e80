"""The notebooks in notebooks/ run in a real Jupyter kernel, assert their results and show every figure.

Each notebook is executed by nbclient through the ``python3`` kernel of this interpreter
(ipykernel), as Jupyter runs it: a failing ``assert`` fails its test, and every figure the
notebook makes must come back as an image output (a plain matplotlib ``Figure`` as a cell's
value prints ``<Figure size ...>`` in a kernel, and this test sees that). The in-process
executor of the docs build (docs/_ext/nbexec.py) is tested on synthetic notebooks. Notebooks
are stored without outputs.
"""

from __future__ import annotations

import ast
import inspect
import json
import linecache
import os
import sys
import warnings
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


def _plot_function(name: str):
    """The figure function ``name`` of depthdyn.plot (its modules included), or None."""
    import importlib
    import pkgutil

    import depthdyn.plot as plot

    for info in [None, *pkgutil.iter_modules(plot.__path__)]:
        module = plot if info is None else importlib.import_module(f"depthdyn.plot.{info.name}")
        if callable(getattr(module, name, None)):
            return getattr(module, name)
    return None


def figures_made(src: str) -> int:
    """Figures a cell makes: ``new_figure``/``Figure``/``plt.figure``/``plt.subplots`` calls and
    depthdyn figure functions called without an axes (their ``ax`` parameter left unbound)."""
    count = 0
    for node in ast.walk(ast.parse(src)):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        owner = getattr(node.func, "value", None)
        pyplot = name in ("figure", "subplots") and getattr(owner, "id", "") == "plt"
        if name in ("new_figure", "Figure") or pyplot:
            count += 1
        elif name.startswith("plot_") and (fn := _plot_function(name)) is not None:
            bound = inspect.signature(fn).bind_partial(*[None] * len(node.args),
                                                       **{k.arg: None for k in node.keywords if k.arg})
            count += "ax" not in bound.arguments
    return count


def _kernel_run(path: Path) -> dict:
    nbclient = pytest.importorskip("nbclient", reason="the notebook tests need the test extra (nbclient)")
    nbformat = pytest.importorskip("nbformat", reason="the notebook tests need the test extra (nbformat)")
    pytest.importorskip("ipykernel", reason="the notebook tests need the test extra (ipykernel)")
    with warnings.catch_warnings():  # nbformat 4.4 files have no cell ids; Jupyter reads them as they are
        warnings.simplefilter("ignore", nbformat.warnings.MissingIDFieldWarning)
        nb = nbformat.read(str(path), as_version=4)
    # the python3 kernel spec ipykernel provides for this interpreter (no installed spec needed)
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=1200,
                                     resources={"metadata": {"path": str(path.parent)}})
    # as Jupyter starts it: no MPLBACKEND (the suite's Agg), so ipykernel picks the inline backend
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    client.execute(env=env)
    return json.loads(nbformat.writes(nb))


@pytest.mark.slow
@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_notebook_runs_in_a_kernel_and_shows_every_figure(path):
    nb = _load(path)
    for module in nb["metadata"].get("depthdyn", {}).get("requires", []):  # optional extras
        pytest.importorskip(module, reason=f"{path.name} needs the optional {module} extra")
    executed = _kernel_run(path)
    cells = [c for c in executed["cells"] if c["cell_type"] == "code"]
    assert all(c["execution_count"] is not None for c in cells)
    missing = []
    for i, cell in enumerate(cells):
        want = figures_made("".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"])
        got = image_outputs({"cells": [cell]})
        if got < want:
            missing.append(f"code cell {i + 1}: {want} figure(s), {got} image(s)")
    assert missing == [], f"{path.name}: {missing}"
    assert image_outputs(executed) >= 1, f"{path.name} shows no figure"


def test_figure_count_sees_figures_with_and_without_axes():
    assert figures_made("ax = dd.plot.plot_stability_region(dd.residual())") == 1
    assert figures_made("dd.plot.plot_stability_region(rec, ax=ax)") == 0
    assert figures_made("plot_depth_trajectories(p, labels, a, phase=True)") == 0  # ax by position
    assert figures_made("fig = new_figure(figsize=(4, 4))\nfig.add_subplot()") == 1
    assert figures_made("fig = Figure()\nfig") == 1


@pytest.mark.slow
def test_kernel_run_catches_a_bare_figure(tmp_path):
    """The bug the in-process runner hid: a plain Figure as a cell's value shows no image in a kernel."""
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "from matplotlib.figure import Figure\nfig = Figure(figsize=(4, 4))\nfig.add_subplot()\nfig")])
    path = tmp_path / "bare.ipynb"
    nbformat.write(nb, str(path))
    out = _kernel_run(path)
    (result,) = out["cells"][0]["outputs"]
    text = "".join(result["data"]["text/plain"])
    assert image_outputs(out) == 0 and text.startswith("<Figure size 400x400")


def test_executor_records_figures_text_and_latex(tmp_path):
    """A figure left open (a plot without ax), a plain returned figure, printed text and a result's LaTeX."""
    nb = {"nbformat": 4, "metadata": {}, "cells": [
        {"cell_type": "code",
         "source": "import depthdyn as dd\nax = dd.plot.plot_spectrum([[0.0, 1.0], [1.0, 0.0]])\n"},
        {"cell_type": "code",
         "source": "from matplotlib.figure import Figure\nfig = Figure()\nfig.add_subplot()\nfig"},
        {"cell_type": "code", "source": "print('hello')\ndd.roots(dd.momentum())"},
        {"cell_type": "code", "source": "x = 1"},
    ]}
    out = execute(nb, tmp_path, "synthetic")
    kinds = [[o["output_type"] for o in c["outputs"]] for c in out["cells"]]
    # a plain Figure as the value prints as text, as it does in a kernel without pyplot's formatter
    assert kinds == [["display_data"], ["execute_result"], ["stream", "execute_result"], []]
    assert out["cells"][1]["outputs"][0]["data"]["text/plain"].startswith("<Figure size")
    assert image_outputs(out) == 1
    assert "\\lambda" in out["cells"][2]["outputs"][1]["data"]["text/latex"]
    assert image_outputs({"cells": [nb["cells"][3]]}) == 0  # the count can be zero


def test_executor_raises_on_a_failing_assert(tmp_path):
    nb = {"nbformat": 4, "metadata": {},
          "cells": [{"cell_type": "code", "source": "assert 1 == 2, 'nb fails'"}]}
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
