"""The explorer as a Jupyter widget (anywidget: JupyterLab, Notebook 7, VS Code).

The widget's front end is the page's (``static/explorer.js``) with the recurrence's compiled
functions appended, so a notebook and a saved page show the same numbers. Its synced state
holds the slider values (``values``, ``x``, ``y``, ``depth``, set by the sliders or by the
kernel) and, recomputed in Python on every change, depthdyn's verdict, roots and trajectory
at the current point (``stable``, ``verdict``, ``roots``, ``trajectory``; ``error`` says why a
point was refused).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import DepthdynError, OptionalDependencyError

try:
    import anywidget
    import traitlets as t
except ImportError as exc:  # pragma: no cover - the explore extra is part of the test set-up
    raise OptionalDependencyError(
        "the explorer widget needs anywidget: pip install 'depthdyn[explore]' "
        "(or write a page without it: depthdyn.explore.page / depthdyn explore FAMILY)") from exc

from .page import front_end, model_state
from .point import evaluate
from .spec import DEFAULT_DEPTH, compile_recurrence, resolve

__all__ = ["Explorer", "explore"]

_RENDER = """
export default {
  render({ model, el }) {
    const view = mount(model, el, COMPILED);
    return () => view.dispose();
  },
};
"""


class Explorer(anywidget.AnyWidget):
    """The stability explorer of one recurrence; build it with :func:`explore`.

    Attributes
    ----------
    values : dict
        Parameter name -> current value (floats; set it to move the sliders).
    stable : bool or None
        Every root strictly inside the unit circle at ``values`` (``None`` while ``error``).
    verdict : str
        ``"strictly stable"`` or ``"not strictly stable"`` (empty while ``error``).
    roots : list
        The characteristic roots (Floquet multipliers of a pattern) as ``[re, im]`` pairs.
    trajectory : list
        ``x_0, ..., x_depth`` from the window of ones (each a list of ``dim`` entries).
    error : str
        Why the current ``values`` were refused (a value outside its domain, a missing one).
    """

    _esm = ""  # set per instance: the front end and this recurrence's compiled functions
    spec = t.Dict().tag(sync=True)
    values = t.Dict().tag(sync=True)
    x = t.Unicode(None, allow_none=True).tag(sync=True)
    y = t.Unicode(None, allow_none=True).tag(sync=True)
    depth = t.Int(DEFAULT_DEPTH).tag(sync=True)
    stable = t.Bool(None, allow_none=True).tag(sync=True)
    verdict = t.Unicode("").tag(sync=True)
    roots = t.List().tag(sync=True)
    trajectory = t.List().tag(sync=True)
    error = t.Unicode("").tag(sync=True)

    def __init__(self, target, *, at: Mapping | None = None, x: str | None = None, y: str | None = None,
                 depth: int = DEFAULT_DEPTH):
        rec = resolve(target)
        spec = compile_recurrence(rec, at=at, x=x, y=y, depth=depth)
        self.recurrence = rec
        super().__init__(_esm=front_end() + "\n" + spec.module + _RENDER, **model_state(spec))
        self.observe(self._recompute, names=["values", "depth"])
        self._recompute()

    def _recompute(self, change=None) -> None:
        try:
            if not 1 <= self.depth <= 2000:
                raise DepthdynError(f"depth must be in 1..2000, got {self.depth}")
            at = evaluate(self.recurrence, self.values, self.depth)
        except DepthdynError as exc:
            self.set_trait("error", str(exc))
            self.set_trait("stable", None)
            self.set_trait("verdict", "")
            return
        with self.hold_sync():
            self.stable = at.stable
            self.verdict = "strictly stable" if at.stable else "not strictly stable"
            self.roots = [[z.real, z.imag] for z in at.roots]
            self.trajectory = at.trajectory
            self.error = ""


def explore(target, *, at: Mapping | None = None, x: str | None = None, y: str | None = None,
            depth: int = DEFAULT_DEPTH) -> Explorer:
    """An interactive stability explorer of ``target`` in Jupyter: a slider per free parameter
    and live views of the stable set, the roots, the trajectory and the exact conditions.

    Parameters
    ----------
    target : Recurrence or str
        A family's recurrence, a :func:`~depthdyn.from_rule` recurrence, a
        :func:`~depthdyn.periodic` pattern, or a specification ``"FAMILY[:NAME=VALUE,...]"``.
    at : mapping, optional
        Starting values of the sliders.
    x, y : str, optional
        The parameters of the region view (default ``lam`` and the next one).
    depth : int
        Layers of the trajectory.

    Returns
    -------
    Explorer
        The widget (display it, or let it be a cell's value). Its ``values`` can be set from
        the kernel; ``stable``, ``roots`` and ``trajectory`` follow.

    Examples
    --------
    >>> from depthdyn import momentum
    >>> w = explore(momentum(), at={"lam": -1, "m": 0.5, "eta": 1})
    >>> w.verdict, len(w.roots)
    ('strictly stable', 2)
    >>> w.values = {**w.values, "lam": 0.5}
    >>> w.verdict
    'not strictly stable'
    """
    return Explorer(target, at=at, x=x, y=y, depth=depth)
