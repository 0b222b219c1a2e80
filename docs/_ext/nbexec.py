"""Execute a notebook in this process as a Jupyter kernel with the inline backend would show it.

The code cells run in order in one namespace (the notebook's directory as working
directory). Each cell's outputs are recorded in nbformat 4 form: printed text as a
``stream``; the value of a last expression as ``execute_result`` (``text/plain``, and
``text/latex`` where the object has ``_repr_latex_``); and every pyplot figure the cell left
open, as a PNG ``display_data``, as the inline backend shows them at the end of a cell.
Figures made by depthdyn's plot functions without ``ax`` and by
:func:`depthdyn.style.new_figure` are pyplot figures here, as they are in a Jupyter kernel.
A plain :class:`matplotlib.figure.Figure` as a cell's value is *not* shown as an image: a
kernel without pyplot's inline formatter prints ``<Figure size ...>`` for it, and so does this
executor. ``tests/test_notebooks.py`` runs the notebooks through a real kernel too.

No kernel is started: the docs build uses this to execute the notebooks quickly; a failing
``assert`` in a notebook raises.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import copy
import io
import linecache
import os
from pathlib import Path


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _png(fig) -> dict:
    from depthdyn.style import figure_bytes

    return {"output_type": "display_data", "metadata": {},
            "data": {"image/png": base64.b64encode(figure_bytes(fig, "png")).decode("ascii"),
                     "text/plain": "<Figure>"}}


def execute(nb: dict, cwd: Path, name: str = "notebook") -> dict:
    """A copy of ``nb`` (an nbformat 4 dict) with the outputs of running its code cells."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from depthdyn import style

    out = copy.deepcopy(nb)
    namespace: dict = {"__name__": "__main__"}
    kernel, style._in_ipython_kernel = style._in_ipython_kernel, lambda: True
    count = 0
    try:
        with contextlib.chdir(cwd):
            for cell in out.get("cells", []):
                if cell.get("cell_type") != "code":
                    continue
                count += 1
                src = "\n".join(line for line in _source(cell).splitlines()
                                if not line.lstrip().startswith("%"))
                filename = f"{name}[cell {count}]"
                linecache.cache[filename] = (len(src), None, src.splitlines(keepends=True), filename)
                tree = ast.parse(src, filename)
                last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
                text = io.StringIO()
                with contextlib.redirect_stdout(text):
                    exec(compile(tree, filename, "exec"), namespace)  # noqa: S102 - our own notebooks
                    value = eval(compile(ast.Expression(last.value), filename, "eval"), namespace) \
                        if last is not None else None
                outputs = []
                if text.getvalue():
                    outputs.append({"output_type": "stream", "name": "stdout", "text": text.getvalue()})
                # A figure as the cell's value is shown by a kernel only through pyplot's inline
                # formatter; a plain matplotlib Figure prints as "<Figure size ...>" there, so it
                # does here (pyplot's figures are shown below, as the inline backend shows them)
                if value is not None:
                    data = {"text/plain": repr(value) if not hasattr(value, "_text") else str(value)}
                    if hasattr(value, "_repr_latex_"):
                        data["text/latex"] = value._repr_latex_()
                    outputs.append({"output_type": "execute_result", "execution_count": count,
                                    "metadata": {}, "data": data})
                shown = [plt.figure(n) for n in plt.get_fignums()]
                plt.close("all")
                outputs += [_png(f) for f in shown]
                cell["outputs"], cell["execution_count"] = outputs, count
    finally:
        style._in_ipython_kernel = kernel
        plt.close("all")
    return out


def image_outputs(nb: dict) -> int:
    """Number of PNG outputs in an executed notebook."""
    return sum("image/png" in o.get("data", {}) for c in nb.get("cells", []) for o in c.get("outputs", []))


def requirements_met(nb: dict) -> bool:
    """The optional modules the notebook names in its ``depthdyn.requires`` metadata import."""
    import importlib.util

    needs = nb.get("metadata", {}).get("depthdyn", {}).get("requires", [])
    return all(importlib.util.find_spec(m) is not None for m in needs)


def run_file(path, env_backend: str = "Agg") -> dict:
    """Execute the notebook at ``path`` (JSON file) and return the executed copy."""
    import json

    os.environ.setdefault("MPLBACKEND", env_backend)
    path = Path(path)
    return execute(json.loads(path.read_text(encoding="utf-8")), path.parent, path.name)
