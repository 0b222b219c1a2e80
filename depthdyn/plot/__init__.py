r"""Pictures: every figure of depthdyn is drawn here.

Stability regions (:mod:`.region`), root loci, trajectories over depth and spectra
(:mod:`.curves`), families side by side (:mod:`.comparison`), products over depth
(:mod:`.products`), a network's layers on a region (:mod:`.placement`) and training runs
(:mod:`.training`); what they share (axes, legends, typeset labels) is :mod:`.common`.
Every function takes computed data (or a recurrence to compute it from) and ``ax=None``,
draws in the house style of :mod:`depthdyn.style` and returns the
:class:`matplotlib.axes.Axes` it drew into; without ``ax`` it makes a new
:class:`matplotlib.figure.Figure` (never through ``pyplot`` outside Jupyter, so no global
state is touched and nothing is shown). ``import depthdyn`` does not import this module
(nor matplotlib).

>>> from depthdyn import momentum
>>> ax = plot_stability_region(momentum(), x=("re(lam)", -5, 1, 61), y=("m", 0, 0.99, 30), eta=1)
>>> ax.get_xlabel(), ax.get_ylabel(), ax.get_title()
('$\\mathrm{Re}\\,\\lambda$', '$m$', 'stability region: momentum ($\\eta = 1$)')

Labels, legends and titles are matplotlib mathtext (``$\lambda$``, ``$\eta = 1$``), so the
figures go into a paper as they are; a plain parameter name is printed as its letter.
"""

from __future__ import annotations

from .comparison import plot_comparison
from .curves import plot_root_locus, plot_spectrum, plot_trajectories
from .placement import plot_placement
from .products import plot_composite_gains, plot_exponents
from .region import plot_stability_region
from .training import plot_depth_profile, plot_depth_trajectories, plot_loss

__all__ = ["plot_stability_region", "plot_root_locus", "plot_trajectories", "plot_spectrum",
           "plot_comparison", "plot_exponents", "plot_composite_gains", "plot_placement",
           "plot_loss", "plot_depth_profile", "plot_depth_trajectories"]
