"""The stability explorer: sliders for a recurrence's parameters and live views of its modes.

:func:`explore` gives a Jupyter widget (anywidget: JupyterLab, Notebook 7, VS Code; the
``explore`` extra); :func:`page` the same explorer as one self-contained HTML file, which is
what ``depthdyn explore`` writes. Both run one front end, ``static/explorer.js``, on the exact
results compiled to JavaScript by :mod:`depthdyn.explore.spec`. The widget's module imports
anywidget, so it is imported on first use.
"""

from .page import page, write_page
from .point import Point, evaluate
from .spec import DEFAULT_DEPTH, ExplorerSpec, compile_recurrence

__all__ = ["explore", "Explorer", "page", "write_page", "compile_recurrence", "ExplorerSpec", "evaluate",
           "Point"]


def explore(target, *, at=None, x=None, y=None, depth=DEFAULT_DEPTH):
    """An interactive stability explorer of ``target`` in Jupyter (see
    :func:`depthdyn.explore.widget.explore`); needs anywidget (the ``explore`` extra).

    Raises
    ------
    OptionalDependencyError
        Without anywidget.
    """
    from .widget import explore as widget_explore

    return widget_explore(target, at=at, x=x, y=y, depth=depth)


def __getattr__(name: str):
    if name == "Explorer":
        from .widget import Explorer

        return Explorer
    raise AttributeError(f"module 'depthdyn.explore' has no attribute {name!r}")
