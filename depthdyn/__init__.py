"""depthdyn: residual-family networks as recurrences over depth, analysed exactly and fast.

One core object, :class:`Recurrence`, flows through everything: families build it,
symbolic analyses take it and return small printable records.

>>> from depthdyn import momentum, vieta
>>> vieta(momentum()).product
m
"""

from . import errors
from .budget import budget, budget_seconds
from .claims import Claim, ClaimResult, run_claims
from .compare import ComparisonTable, compare, plot_comparison
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
from .families import (
    FAMILIES,
    MAX_ORDER,
    MAX_STREAMS,
    Family,
    build,
    dense,
    entangled,
    from_coefficients,
    general,
    get_family,
    highway,
    hyper_connection,
    momentum,
    oscillator,
    residual,
    rezero,
    smooth,
    weighted,
)
from .families.literature import (
    antisymmetric,
    branch_scaled,
    deepnet,
    hamiltonian,
    hc_static,
    kromhc,
    leapfrog,
    lm_resnet,
    mhc,
    mhc_lite,
    momentum_sander,
    revnet,
    rk2,
    rk4,
    runge_kutta,
)
from .families.multistep import (
    adams_bashforth,
    adams_moulton,
    bdf,
    from_lmm,
    milne_simpson,
    nystrom,
    order_and_error_constant,
)
from .numeric import (
    CheckReport,
    SimulationOverflowError,
    Spectrum,
    StabilityRegion,
    Trajectory,
    batch_coefficients,
    spectral_radius,
    spectrum,
    stability_mask,
    stability_region,
    sweep,
)
from .numeric.check import check
from .numeric.simulate import simulate
from .products import (
    CompositeGains,
    EndToEnd,
    LyapunovSpectrum,
    Periodic,
    ProductOverflowError,
    SingularProductError,
    composite_gains,
    end_to_end_singular_values,
    growth_rate,
    hc_vs_mhc,
    lyapunov,
    periodic,
    product_singular_values,
    random_layers,
    stability_switches,
    state_matrices,
)
from .recurrence import COMPLEXES, REALS, Param, Realisation, Recurrence, r, to_exact
from .rules import from_rule
from .symbolic.intervals import Interval, IntervalUnion, solve_for
from .symbolic.numbers import StabilityNumbers, stability_numbers
from .symbolic.polynomial import (
    Roots,
    Vieta,
    char_poly,
    charpoly,
    discriminant,
    root_structure,
    roots,
    vieta,
)
from .symbolic.solve import ClosedForm, DepthLimit, Modes, closed_form, depth_limit, l, modes
from .symbolic.stability import RootCondition, StabilityConditions, root_condition, stability_conditions
from .symbolic.statespace import Similarity, realisation, realisations, signed_pascal, similarity
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

_PLOTS = ("plot_stability_region", "plot_root_locus", "plot_trajectories", "plot_spectrum")


def __getattr__(name: str):
    # plotting lives in depthdyn.plot; importing it here lazily keeps `import depthdyn`
    # free of matplotlib
    if name in _PLOTS:
        from . import plot

        return getattr(plot, name)
    if name in ("plot_exponents", "plot_composite_gains"):
        from .products import plot as product_plots

        return getattr(product_plots, name)
    raise AttributeError(f"module 'depthdyn' has no attribute {name!r}")
