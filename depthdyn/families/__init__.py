"""Architecture families as factory functions returning a :class:`~depthdyn.Recurrence`.

Every factory linearises its block, ``f(x) ~ lam x`` in one eigenmode (``lam`` is the
eigenvalue of the block's Jacobian; for matrix families it acts as ``lam * I`` on the
features), and returns the resulting linear depth recurrence. Keyword-only arguments
are structural (order ``k``, number of streams ``n`` ...); any other keyword is a value
for one of the recurrence's symbolic parameters and is substituted exactly.

The package, lowest module first:

* :mod:`~depthdyn.families.common`: shared parameters and argument checks (the size limits
  are :mod:`depthdyn.limits`);
* :mod:`~depthdyn.families.sources`: the blocks of the source documents (residual,
  momentum, C^k smooth, dense, entangled, hyper-connections, the general model);
* :mod:`~depthdyn.families.multistep`: linear multistep methods;
* :mod:`~depthdyn.families.literature`: architectures of the literature from their
  update rules;
* :mod:`~depthdyn.families.catalogue`: the read-only :data:`FAMILIES` table, one entry per
  family (factory, parameters and domains, summary, example, the paper's update rule and its
  citation);
* :mod:`~depthdyn.families.registry`: look-up, ``FAMILY:NAME=VALUE`` specifications,
  did-you-mean suggestions, help text and update rules, used by the command line,
  :func:`depthdyn.compare`, the report and :mod:`depthdyn.nn`.
"""

from ..limits import MAX_ORDER, MAX_STREAMS
from . import literature, multistep
from .catalogue import FAMILIES, Family
from .literature import (
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
from .multistep import (
    adams_bashforth,
    adams_moulton,
    bdf,
    from_lmm,
    milne_simpson,
    nystrom,
    order_and_error_constant,
)
from .registry import (
    build,
    build_from_assignments,
    families_help,
    get_family,
    parse_spec,
    resolve_spec,
    suggest,
)
from .sources import (
    dense,
    entangled,
    from_coefficients,
    general,
    highway,
    hyper_connection,
    momentum,
    oscillator,
    residual,
    rezero,
    smooth,
    weighted,
)

__all__ = [
    # the blocks of the source documents
    "residual", "rezero", "weighted", "highway", "momentum", "oscillator", "smooth", "dense",
    "entangled", "hyper_connection", "general", "from_coefficients",
    # linear multistep methods
    "adams_bashforth", "adams_moulton", "bdf", "nystrom", "milne_simpson", "from_lmm",
    "order_and_error_constant",
    # the literature
    "lm_resnet", "revnet", "hamiltonian", "leapfrog", "antisymmetric", "runge_kutta", "rk2", "rk4",
    "momentum_sander", "deepnet", "branch_scaled", "hc_static", "mhc", "mhc_lite", "kromhc",
    # the registry
    "Family", "FAMILIES", "get_family", "build", "build_from_assignments", "parse_spec", "resolve_spec",
    "suggest", "families_help", "MAX_ORDER", "MAX_STREAMS",
]
