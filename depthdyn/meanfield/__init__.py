"""Signal propagation at initialisation: the mean-field depth recurrences of wide networks.

The variance map ``q_{l+1} = sw2 E[phi(sqrt(q_l) z)^2] + sb2`` and the correlation map of two
inputs (Poole et al. 2016; Schoenholz et al. 2017), their fixed points, slopes and depth
scales, and the order-to-chaos boundary; for residual families their kernel recurrences.
The torch parts (``depthdyn.meanfield.montecarlo``, ``depthdyn.meanfield.recipes``) are
imported by name: ``import depthdyn.meanfield`` imports neither torch nor matplotlib.
"""

from .activation import Activation
from .activations import ACTIVATIONS, UnknownActivationError, get_activation
from .asymptotics import KernelAsymptotics, gradient_norms, kernel_asymptotics
from .fixedpoint import CriticalPoint, FixedPoint, critical_point, critical_points, depth_scale, fixed_point
from .isometry import JacobianMoments, isometry_score, jacobian_moments
from .iteration import iterate
from .kernel_analysis import depth_scales, kernel_fixed_point, linearise_kernel
from .kernels import KERNEL_FAMILIES, KernelTrajectory, iterate_family
from .maps import Iterates, c_map, chi1, chi_c, chi_q, eps_map, q_map
from .phase import TRAINABLE_FACTOR, CriticalLine, PhaseDiagram, critical_line, phase_diagram
from .precise import mp_cross_moment, mp_moment
from .residual_isometry import residual_d2_moments, residual_isometry_score, residual_jacobian_moments

__all__ = ["Activation", "ACTIVATIONS", "UnknownActivationError", "get_activation", "Iterates", "iterate",
           "q_map", "c_map", "eps_map", "chi1", "chi_c", "chi_q", "FixedPoint", "CriticalPoint",
           "fixed_point", "critical_point", "critical_points", "depth_scale", "CriticalLine", "critical_line",
           "PhaseDiagram", "phase_diagram", "TRAINABLE_FACTOR", "mp_moment", "mp_cross_moment",
           # the families' kernel recurrences (depthdyn.meanfield.kernels and the modules on it)
           "KERNEL_FAMILIES", "KernelTrajectory", "iterate_family", "kernel_fixed_point", "linearise_kernel",
           "depth_scales", "gradient_norms", "kernel_asymptotics", "KernelAsymptotics", "jacobian_moments",
           "isometry_score", "JacobianMoments", "residual_jacobian_moments", "residual_d2_moments",
           "residual_isometry_score"]
