"""Products over depth: periodic patterns (exact Floquet analysis), Lyapunov exponents,
HC/mHC composite gains and end-to-end singular values of layer stacks.

* :mod:`.periodic`: :func:`periodic` patterns as the recurrence of their monodromy;
* :mod:`.lyapunov`: QR Lyapunov exponents, growth rates, product singular values, ensembles;
* :mod:`.hc`: composite gains of ``H_res`` products, HC against mHC;
* :mod:`.endtoend`: matrix-free singular values of ``J_L ... J_1``;
* :mod:`.plot`: pictures (matplotlib imported on first use).

Nothing here imports torch or matplotlib at import time.
"""

from .endtoend import EndToEnd, end_to_end_singular_values, product_operator
from .hc import CompositeGains, HcComparison, composite_gains, hc_vs_mhc
from .lyapunov import (
    KINDS,
    LogSingularValues,
    LyapunovSpectrum,
    ProductOverflowError,
    SingularProductError,
    growth_rate,
    lyapunov,
    product_singular_values,
    random_layers,
)
from .periodic import (
    Periodic,
    Switch,
    layer_matrix,
    periodic,
    stability_switches,
    state_matrices,
)

__all__ = [
    "Periodic", "periodic", "layer_matrix", "Switch", "stability_switches",
    "state_matrices",
    "LyapunovSpectrum", "lyapunov", "growth_rate", "LogSingularValues", "product_singular_values",
    "random_layers", "KINDS", "ProductOverflowError", "SingularProductError",
    "CompositeGains", "composite_gains", "HcComparison", "hc_vs_mhc",
    "EndToEnd", "end_to_end_singular_values", "product_operator",
]
