"""The explorer as one self-contained HTML page: no Python, no server, no network.

The page inlines the front end (``static/explorer.js``), the recurrence's compiled functions
and its data, and a small in-page stand-in for anywidget's model (``get``, ``set``, ``on``,
``save_changes``), so the page and the Jupyter widget run the same code. It exposes what it
shows as ``window.depthdynExplorer.state()`` (values, roots, verdict, conditions, trajectory).

>>> html = page("momentum")
>>> html.startswith("<!DOCTYPE html>"), "COMPILED" in html, "eval(" in html
(True, True, False)
"""

from __future__ import annotations

import html as _html
import json
from collections.abc import Mapping
from pathlib import Path

from .spec import DEFAULT_DEPTH, ExplorerSpec, compile_recurrence

__all__ = ["page", "write_page", "front_end", "house_style", "model_state"]

#: The house font for the page: Computer Modern where installed (as in the figures), else a serif.
FONT = ("'CMU Serif', 'Latin Modern Roman', 'Computer Modern', 'STIX Two Text', Georgia, "
        "'Times New Roman', serif")

_MODEL_SHIM = """
// anywidget's model API, in the page: values live here, "change:KEY" handlers run at once
function pageModel(initial) {
  const data = { ...initial }, handlers = {};
  return {
    get: (key) => data[key],
    set(key, value) { data[key] = value; for (const f of handlers[`change:${key}`] || []) f(); },
    on(event, f) { (handlers[event] = handlers[event] || []).push(f); },
    off() {},
    save_changes() {},
  };
}
const DD_STATE = JSON.parse(document.getElementById("depthdyn-explorer-data").textContent);
window.depthdynExplorer = mount(pageModel(DD_STATE), document.getElementById("depthdyn-explorer"), COMPILED);
"""


def front_end() -> str:
    """The source of ``static/explorer.js``."""
    return (Path(__file__).parent / "static" / "explorer.js").read_text(encoding="utf-8")


def house_style() -> dict:
    """The colours and font of :mod:`depthdyn.style`, for the front end."""
    from .. import style

    return {"blue": style.BLUE, "vermilion": style.VERMILION, "green": style.GREEN, "stable": style.STABLE,
            "marginal": style.MARGINAL, "reference": "#4d4d4d", "palette": list(style.PALETTE), "font": FONT}


def model_state(spec: ExplorerSpec) -> dict:
    """The model's keys the front end reads: ``spec``, ``values``, ``x``, ``y``, ``depth``."""
    data = {**spec.data, "style": house_style()}
    return {"spec": data, "values": {p["name"]: p["value"] for p in data["params"]},
            "x": data["x"], "y": data["y"], "depth": data["depth"]}


def _script_json(obj) -> str:
    # inside <script>, "</" would end the element: JSON allows "<\\/"
    return json.dumps(obj, ensure_ascii=False).replace("</", "<\\/")


def page(target, *, at: Mapping | None = None, x: str | None = None, y: str | None = None,
         depth: int = DEFAULT_DEPTH, title: str | None = None) -> str:
    """The explorer of ``target`` (a recurrence, a periodic pattern or ``"FAMILY[:NAME=VALUE,...]"``)
    as the text of one self-contained HTML page.

    Parameters are those of :func:`~depthdyn.explore.spec.compile_recurrence`; ``title`` is the
    page's title (default: the recurrence's name).
    """
    spec = compile_recurrence(target, at=at, x=x, y=y, depth=depth)
    state = model_state(spec)
    name = title or f"depthdyn explorer: {spec.data['name']}"
    script = front_end() + "\n" + spec.module + _MODEL_SHIM
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<meta name=\"generator\" content=\"depthdyn\">\n<title>{_html.escape(name)}</title>\n"
        "<style>body { margin: 1em; background: #fff; }</style>\n</head>\n<body>\n"
        "<div id=\"depthdyn-explorer\"></div>\n"
        f"<script type=\"application/json\" id=\"depthdyn-explorer-data\">{_script_json(state)}</script>\n"
        f"<script type=\"module\">\n{script}</script>\n"
        "</body>\n</html>\n"
    )


def write_page(target, path, **kwargs) -> Path:
    """Write :func:`page` to ``path`` atomically; returns the path."""
    from ..output import atomic_write

    return atomic_write(Path(path), page(target, **kwargs))
