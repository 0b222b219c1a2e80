"""Signal propagation at initialisation: the mean-field depth recurrences of wide networks.

The variance map ``q_{l+1} = sw2 E[phi(sqrt(q_l) z)^2] + sb2`` and the correlation map of two
inputs (Poole et al. 2016; Schoenholz et al. 2017), their fixed points, slopes and depth
scales, and the order-to-chaos boundary.
"""

from .activation import Activation
from .activations import ACTIVATIONS, UnknownActivationError, get_activation
from .fixedpoint import CriticalPoint, FixedPoint, critical_point, critical_points, depth_scale, fixed_point
from .iteration import iterate
from .maps import Iterates, c_map, chi1, chi_c, chi_q, eps_map, q_map
from .phase import TRAINABLE_FACTOR, CriticalLine, PhaseDiagram, critical_line, phase_diagram
from .precise import mp_cross_moment, mp_moment

__all__ = ["Activation", "ACTIVATIONS", "UnknownActivationError", "get_activation", "Iterates", "iterate",
           "q_map", "c_map", "eps_map", "chi1", "chi_c", "chi_q", "FixedPoint", "CriticalPoint",
           "fixed_point", "critical_point", "critical_points", "depth_scale", "CriticalLine", "critical_line",
           "PhaseDiagram", "phase_diagram", "TRAINABLE_FACTOR", "mp_moment", "mp_cross_moment"]
