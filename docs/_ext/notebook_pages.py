"""Execute ``notebooks/*.ipynb`` and render them as MyST pages with their outputs.

At ``builder-inited`` every notebook in the repository's ``notebooks/`` directory is
executed (:mod:`nbexec`: in this process, as a Jupyter kernel with the inline backend shows
it; a failing ``assert`` stops the build) and turned into ``docs/_notebooks/<name>.md``:
markdown cells verbatim, code cells as Python code blocks, and their outputs (printed text,
LaTeX of results, and PNG figures written next to the page); the executed notebook is
written beside it as ``<name>.ipynb``. Executed notebooks are kept in ``docs/_build/notebook-cache``
under a hash of the notebook, the package source and the executor, so a build runs a notebook again only
when one of them changed. A notebook whose optional modules (its
``depthdyn.requires`` metadata) are missing is shown without outputs, with a note. The
notebooks are stored without outputs. The marker ``<!-- notebook-pages -->`` in
``docs/notebooks.md`` is replaced by a toctree of the generated pages, so a new notebook
needs no change to the docs.
"""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

GENERATED = "_notebooks"
#: Executed notebooks by a hash of the notebook, the package source and the executor: a build
#: executes a notebook again only when one of them changed (docs/_build is ignored by git).
CACHE_DIR = Path(__file__).resolve().parents[1] / "_build" / "notebook-cache"


def _key(nb_path: Path) -> str:
    import hashlib

    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256(nb_path.read_bytes())
    for path in sorted((root / "depthdyn").rglob("*.py")) + [Path(__file__).with_name("nbexec.py")]:
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:20]


def _fence(text: str, lang: str) -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}\n"


def _join(source) -> str:
    return "".join(source) if isinstance(source, list) else str(source)


def render(nb_path: Path, out_dir: Path, execute: bool = True) -> dict:
    """Execute one notebook and write its MyST page, PNG outputs and executed copy; return the executed notebook."""
    from nbexec import execute as run
    from nbexec import requirements_met

    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    ran = execute and requirements_met(nb)
    if ran:
        cached = CACHE_DIR / f"{nb_path.stem}-{_key(nb_path)}.ipynb"
        if cached.is_file():  # same notebook, same package source: the same outputs
            nb = json.loads(cached.read_text(encoding="utf-8"))
        else:
            nb = run(nb, nb_path.parent, nb_path.name)
            CACHE_DIR.mkdir(parents=True, exist_ok=True)
            for old in CACHE_DIR.glob(f"{nb_path.stem}-*.ipynb"):
                old.unlink()
            cached.write_text(json.dumps(nb, indent=1) + "\n", encoding="utf-8")
        (out_dir / nb_path.name).write_text(json.dumps(nb, indent=1) + "\n", encoding="utf-8")
    stem = nb_path.stem
    parts: list[str] = []
    cells = nb.get("cells", [])
    first_md = next((c for c in cells if c.get("cell_type") == "markdown"), None)
    if first_md is None or not _join(first_md.get("source", "")).lstrip().startswith("# "):
        parts.append(f"# {stem}\n")
    parts.append(
        f"*`notebooks/{nb_path.name}`, executed when these pages were built; "
        f"{{download}}`download the notebook <../../notebooks/{nb_path.name}>`.*\n"
        if ran else
        f"*`notebooks/{nb_path.name}`, shown without outputs: it needs the optional "
        f"{', '.join(nb.get('metadata', {}).get('depthdyn', {}).get('requires', []))} extra; "
        f"{{download}}`download the notebook <../../notebooks/{nb_path.name}>`.*\n"
    )
    n_fig = 0
    for cell in cells:
        kind = cell.get("cell_type")
        src = _join(cell.get("source", ""))
        if kind == "markdown":
            parts.append(src.rstrip() + "\n")
        elif kind == "code" and src.strip():
            parts.append(_fence(src, "python"))
            for out in cell.get("outputs", []):
                otype = out.get("output_type")
                if otype == "stream":
                    parts.append(_fence(_join(out.get("text", "")), "text"))
                elif otype in ("execute_result", "display_data"):
                    data = out.get("data", {})
                    if "image/png" in data:
                        n_fig += 1
                        name = f"{stem}_fig{n_fig}.png"
                        (out_dir / name).write_bytes(base64.b64decode(_join(data["image/png"])))
                        parts.append(f"![output {n_fig}]({name})\n")
                    elif "text/latex" in data:
                        body = _join(data["text/latex"]).strip().strip("$").strip()
                        parts.append(f"$$\n{body}\n$$\n")
                    elif "text/plain" in data:
                        parts.append(_fence(_join(data["text/plain"]), "text"))
                elif otype == "error":
                    parts.append(_fence(f"{out.get('ename')}: {out.get('evalue')}", "text"))
    (out_dir / f"{stem}.md").write_text("\n".join(parts), encoding="utf-8")
    return nb


def _generate(app) -> None:
    src = Path(app.srcdir)
    out_dir = src / GENERATED
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir()
    for nb_path in sorted((src.parent / "notebooks").glob("*.ipynb")):
        render(nb_path, out_dir)


MARKER = "<!-- notebook-pages -->"


def _fill_marker(app, docname, source) -> None:
    if docname != "notebooks" or MARKER not in source[0]:
        return
    pages = sorted(p.stem for p in (Path(app.srcdir) / GENERATED).glob("*.md"))
    if pages:
        entries = "\n".join(f"{GENERATED}/{p}" for p in pages)
        block = f"```{{toctree}}\n:maxdepth: 1\n\n{entries}\n```\n"
    else:
        block = "*No notebooks have been committed yet.*\n"
    source[0] = source[0].replace(MARKER, block)


def setup(app):
    app.connect("builder-inited", _generate)
    app.connect("source-read", _fill_marker)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
