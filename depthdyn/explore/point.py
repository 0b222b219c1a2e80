"""The explorer's numbers at one parameter point, computed by depthdyn in Python.

What the widget keeps in its Python state (and what the tests hold the page against): the exact
verdict of the Schur–Cohn conditions at the exact point, the characteristic roots from the
numeric engine (:func:`~depthdyn.spectrum`, refined where float64 cannot be trusted) and the
trajectory over depth from the exact state matrices at that point.

>>> from depthdyn import momentum
>>> at = evaluate(momentum(), {"lam": -0.5, "m": 0.5, "eta": 1}, depth=3)
>>> at.stable, sorted(round(abs(z), 12) for z in at.roots)
(True, [0.707106781187, 0.707106781187])
>>> at.trajectory
[[1.0], [0.5], [0.0], [-0.25]]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..recurrence import Recurrence
from .spec import DEFAULT_DEPTH, exact_point

__all__ = ["Point", "evaluate", "trajectory"]


@dataclass(frozen=True)
class Point:
    """Verdict, roots and trajectory at one point.

    Attributes
    ----------
    stable : bool
        Every characteristic root strictly inside the unit circle (decided exactly by the
        Schur–Cohn conditions where they are within the budget, else by the refined roots).
    roots : tuple of complex
        The characteristic roots (Floquet multipliers of a periodic pattern).
    trajectory : list of list of float
        ``x_0, ..., x_depth`` (each a list of ``dim`` entries; ``None`` past the float range)
        from the window ``w_0 = (1, ..., 1)``, layer by layer.
    exact : bool
        Whether the verdict comes from the exact conditions.
    """

    stable: bool
    roots: tuple
    trajectory: list
    exact: bool


def trajectory(rec: Recurrence, values: Mapping, depth: int) -> list:
    """``x_0 .. x_depth`` from the window of ones, layer by layer, at exact ``values``."""
    from .spec import layer_dim, layer_matrices

    mats = [np.array(sp.Matrix(M).xreplace(_symbols(M, values)).evalf(20).tolist(), dtype=float)
            for M in layer_matrices(rec)]
    w, n = np.ones(mats[0].shape[0]), layer_dim(rec)
    out = [w[:n].copy()]
    with np.errstate(over="ignore", invalid="ignore"):
        for layer in range(depth):
            w = mats[layer % len(mats)] @ w
            out.append(w[:n].copy())
    return [[float(v) if np.isfinite(v) else None for v in x] for x in out]


def _symbols(M, values: Mapping) -> dict:
    return {s: values[s.name] for s in M.free_symbols if s.name in values}


def evaluate(rec: Recurrence, values: Mapping, depth: int = DEFAULT_DEPTH) -> Point:
    """Verdict, roots and trajectory of ``rec`` at ``values`` (every parameter, floats read as the
    decimal they print as, or exact numbers and text)."""
    from ..budget import budget
    from ..errors import BudgetExceededError
    from ..numeric.spectra import spectrum
    from ..symbolic.stability import stability_conditions
    from .spec import CONDITIONS_BUDGET

    exact = exact_point(rec, values)
    missing = [n for n in rec.param_names if n not in exact]
    if missing:
        from ..errors import ParameterError

        raise ParameterError(f"give values for {', '.join(missing)}")
    spec = spectrum(rec, {k: float(v) for k, v in exact.items()}) if exact else spectrum(rec)
    roots = tuple(complex(z) for z in np.asarray(spec.refined).reshape(-1))
    try:
        with budget(CONDITIONS_BUDGET):
            stable, certain = bool(stability_conditions(rec).holds(exact)), True
    except BudgetExceededError:
        stable, certain = bool(max(abs(z) for z in roots) < 1), False
    return Point(stable=stable, roots=roots, trajectory=trajectory(rec, exact, depth), exact=certain)
