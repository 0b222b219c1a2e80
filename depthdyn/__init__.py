"""depthdyn: residual-family networks as recurrences over depth, analysed exactly and fast.

One core object, :class:`Recurrence`, flows through everything: families build it,
symbolic analyses take it and return small printable records.

>>> from depthdyn import momentum, vieta
>>> vieta(momentum()).product
m
"""

import sys as _sys
import types as _types

from . import errors
from .budget import budget, budget_seconds
from .errors import (
    ArrayTooLargeError,
    BudgetExceededError,
    DegreeTooLargeError,
    DepthdynError,
    DomainError,
    InconsistentInitialDataError,
    OptionalDependencyError,
    ParameterError,
    ParseError,
    RealisationError,
    RuleError,
    ShapeError,
    UnknownFamilyError,
    UnknownParameterError,
)
from .version import __version__  # noqa: F401 - the package version, depthdyn.__version__

__all__ = [
    # core
    "Recurrence", "Param", "Realisation", "r", "l", "to_exact", "REALS", "COMPLEXES",
    # families
    "FAMILIES", "Family", "get_family", "build", "MAX_ORDER", "MAX_STREAMS",
    "residual", "rezero", "weighted", "highway", "momentum", "oscillator", "smooth", "dense",
    "entangled", "hyper_connection", "general", "from_coefficients", "from_rule",
    "adams_bashforth", "adams_moulton", "bdf", "nystrom", "milne_simpson", "from_lmm",
    # families of the literature (depthdyn.literature)
    "lm_resnet", "revnet", "hamiltonian", "leapfrog", "antisymmetric", "runge_kutta", "rk2", "rk4",
    "momentum_sander", "deepnet", "branch_scaled", "hc_static", "mhc", "mhc_lite", "kromhc",
    # side by side
    "compare", "ComparisonTable", "plot_comparison",
    # symbolic analyses
    "charpoly", "char_poly", "roots", "Roots", "vieta", "Vieta", "discriminant", "root_structure",
    "modes", "Modes", "closed_form", "ClosedForm", "depth_limit", "DepthLimit",
    "realisations", "realisation", "similarity", "Similarity", "signed_pascal",
    "stability_conditions", "StabilityConditions", "root_condition", "RootCondition",
    "stability_numbers", "StabilityNumbers", "solve_for", "Interval", "IntervalUnion",
    "order_and_error_constant",
    # numeric engine (batched; depthdyn.numeric has the array-level functions)
    "batch_coefficients", "spectrum", "Spectrum", "spectral_radius", "stability_mask",
    "stability_region", "StabilityRegion", "simulate", "Trajectory", "SimulationOverflowError",
    "sweep", "check", "CheckReport",
    # products over depth (depthdyn.products)
    "periodic", "Periodic", "stability_switches", "state_matrices", "lyapunov", "LyapunovSpectrum", "growth_rate",
    "product_singular_values", "random_layers", "composite_gains", "CompositeGains", "hc_vs_mhc",
    "end_to_end_singular_values", "EndToEnd", "ProductOverflowError", "SingularProductError",
    "plot_exponents", "plot_composite_gains",
    # claims of the source documents
    "run_claims", "Claim", "ClaimResult",
    # pictures (matplotlib is imported on first use)
    "plot_stability_region", "plot_root_locus", "plot_trajectories", "plot_spectrum",
    # errors
    "errors", "DepthdynError", "ParameterError", "UnknownParameterError", "DomainError",
    "ShapeError", "ParseError", "RuleError", "UnknownFamilyError", "DegreeTooLargeError", "RealisationError",
    "OptionalDependencyError", "BudgetExceededError", "ArrayTooLargeError", "InconsistentInitialDataError",
    # budgets of exact work
    "budget", "budget_seconds",
]

#: public name -> module that defines it; imported on first use (PEP 562), so that
#: ``import depthdyn`` (and the command line's start-up) loads only what is asked for
_LAZY = {
    **dict.fromkeys((
        "Claim", "ClaimResult", "run_claims"
    ), ".claims"),
    **dict.fromkeys((
        "ComparisonTable", "compare", "plot_comparison"
    ), ".compare"),
    **dict.fromkeys((
        "FAMILIES", "MAX_ORDER", "MAX_STREAMS", "Family", "build", "dense", "entangled",
        "from_coefficients", "general", "get_family", "highway", "hyper_connection", "momentum",
        "oscillator", "residual", "rezero", "smooth", "weighted"
    ), ".families"),
    **dict.fromkeys((
        "antisymmetric", "branch_scaled", "deepnet", "hamiltonian", "hc_static", "kromhc", "leapfrog",
        "lm_resnet", "mhc", "mhc_lite", "momentum_sander", "revnet", "rk2", "rk4", "runge_kutta"
    ), ".families.literature"),
    **dict.fromkeys((
        "adams_bashforth", "adams_moulton", "bdf", "from_lmm", "milne_simpson", "nystrom",
        "order_and_error_constant"
    ), ".families.multistep"),
    **dict.fromkeys((
        "CheckReport", "SimulationOverflowError", "Spectrum", "StabilityRegion", "Trajectory",
        "batch_coefficients", "spectral_radius", "spectrum", "stability_mask", "stability_region", "sweep"
    ), ".numeric"),
    **dict.fromkeys((
        "check",
    ), ".numeric.check"),
    **dict.fromkeys((
        "simulate",
    ), ".numeric.simulate"),
    **dict.fromkeys((
        "COMPLEXES", "REALS", "Param", "Realisation", "Recurrence", "r", "to_exact"
    ), ".recurrence"),
    **dict.fromkeys((
        "Interval", "IntervalUnion"
    ), ".symbolic.intervals"),
    **dict.fromkeys((
        "solve_for",
    ), ".symbolic.solvefor"),
    **dict.fromkeys((
        "StabilityNumbers", "stability_numbers"
    ), ".symbolic.numbers"),
    **dict.fromkeys((
        "Roots", "Vieta", "char_poly", "charpoly", "discriminant", "root_structure", "roots", "vieta"
    ), ".symbolic.polynomial"),
    **dict.fromkeys((
        "ClosedForm", "DepthLimit", "Modes", "closed_form", "depth_limit", "l", "modes"
    ), ".symbolic.solve"),
    **dict.fromkeys((
        "RootCondition", "StabilityConditions", "root_condition", "stability_conditions"
    ), ".symbolic.stability"),
    **dict.fromkeys((
        "Similarity", "realisation", "realisations", "signed_pascal", "similarity"
    ), ".symbolic.statespace"),
    **dict.fromkeys((
        "plot_stability_region", "plot_root_locus", "plot_trajectories", "plot_spectrum"
    ), ".plot"),
    **dict.fromkeys((
        "CompositeGains", "EndToEnd", "LyapunovSpectrum", "Periodic", "ProductOverflowError",
        "SingularProductError", "composite_gains", "end_to_end_singular_values", "growth_rate", "hc_vs_mhc",
        "lyapunov", "periodic", "product_singular_values", "random_layers", "stability_switches",
        "state_matrices"
    ), ".products"),
    **dict.fromkeys((
        "plot_exponents", "plot_composite_gains"
    ), ".products.plot"),
    **dict.fromkeys((
        "from_rule",
    ), ".rules"),
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value  # later look-ups are plain attribute reads
        return value
    raise AttributeError(f"module 'depthdyn' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(_types.ModuleType):
    """Keeps ``depthdyn.compare`` the function when the submodule of that name is imported
    (the import system sets the submodule as an attribute of its package)."""

    def __setattr__(self, name, value):
        if isinstance(value, _types.ModuleType) and _LAZY.get(name) == f".{name}":
            value = getattr(value, name)
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package
