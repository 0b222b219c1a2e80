"""The experiments room: tasks, training, the experiments of 002 §4, the claims checked by
training and the ``depthdyn train`` command (its figures are drawn by :mod:`depthdyn.plot.training`
and :mod:`depthdyn.plot.placement`).

* :mod:`.tasks` (data sets and models around a stack), :mod:`.train` (the seeded trainer),
  :mod:`.separation` (``C^1`` vs ``C^k`` separation, residual vs momentum),
  :mod:`.claims` (the sources' claims on trained blocks),
  :mod:`.command` (``depthdyn train``).
"""

from .separation import (
    SEPARATION_LAYERS,
    SEPARATION_LR,
    SEPARATION_STEP,
    SEPARATION_STEPS,
    SEPARATION_WINDOW,
    Comparison,
    SeparationRow,
    SeparationWindow,
    compare,
    cubic_fit,
    separation_2d,
    separation_window,
)

__all__ = [
    "SEPARATION_STEP",
    "SEPARATION_WINDOW",
    "SEPARATION_LAYERS",
    "SEPARATION_STEPS",
    "SEPARATION_LR",
    "SeparationRow",
    "SeparationWindow",
    "Comparison",
    "separation_window",
    "compare",
    "separation_2d",
    "cubic_fit",
]
