r"""Pictures: stability regions, root loci, trajectories over depth and spectra.

Every function takes ``ax=None`` and returns the :class:`matplotlib.axes.Axes` it drew
into; without ``ax`` it makes a new :class:`matplotlib.figure.Figure` (never through
``pyplot``, so no global state is touched and nothing is shown). The numbers come from
:mod:`depthdyn.numeric`; these functions only draw them. ``import depthdyn`` does not
import this module (nor matplotlib).

>>> from depthdyn import momentum
>>> ax = plot_stability_region(momentum(), x=("re(lam)", -5, 1, 61), y=("m", 0, 0.99, 30), eta=1)
>>> ax.get_xlabel(), ax.get_ylabel(), ax.get_title()
('$\\mathrm{Re}\\,\\lambda$', '$m$', 'stability region: momentum ($\\eta = 1$)')

Labels, legends and titles are matplotlib mathtext (``$\lambda$``, ``$\eta = 1$``), so the
figures go into a paper as they are; a plain parameter name is printed as its letter.
"""

from __future__ import annotations

from ._common import _axes as _axes  # noqa: F401 - used by depthdyn.compare
from ._common import _legend as _legend  # noqa: F401
from ._common import _math as _math  # noqa: F401
from .curves import plot_root_locus, plot_spectrum, plot_trajectories
from .region import plot_stability_region

__all__ = ["plot_stability_region", "plot_root_locus", "plot_trajectories", "plot_spectrum"]
