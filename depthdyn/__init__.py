"""depthdyn: residual-family networks as recurrences over depth, analysed exactly and fast.

One core object, :class:`Recurrence`, flows through everything: families build it,
symbolic analyses take it and return small printable records.

>>> from depthdyn import momentum, vieta
>>> vieta(momentum()).product
m

The names here are the verbs and records a user reaches for; everything else is imported
from the module that defines it: the typed errors from :mod:`depthdyn.errors`
(``depthdyn.errors.ParameterError``), every figure from :mod:`depthdyn.plot`, the
literature's blocks and the multistep methods from :mod:`depthdyn.families`, the rest of
the products over depth from :mod:`depthdyn.products`.
"""

import sys as _sys
import types as _types

from .version import __version__  # noqa: F401 - the package version, depthdyn.__version__

#: The public API, one entry per name: ``name -> module that defines it`` (a name that is its
#: module's own name and not defined in it, ``errors`` and ``plot``, is the module itself).
#: Each is imported on first use (PEP 562), so that ``import depthdyn`` (and the command
#: line's start-up) loads only what is asked for.
_PUBLIC: dict[str, str] = {
    name: module
    for module, names in (
        # the core noun
        (".recurrence", ("Recurrence", "Param", "Realisation", "to_exact")),
        # families: the registry, the factories of the five sources, a recurrence from
        # coefficients or from an update rule (the others: depthdyn.families)
        (".families", ("FAMILIES", "Family", "get_family", "build", "from_coefficients", "residual", "rezero",
                       "weighted", "highway", "momentum", "oscillator", "smooth", "dense", "entangled",
                       "hyper_connection", "general")),
        (".rules", ("from_rule",)),
        # exact analyses and their records; derive: all of them about one family at once
        (".derivation", ("derive",)),
        (".symbolic.polynomial", ("charpoly", "roots", "vieta", "discriminant", "root_structure")),
        (".symbolic.solve", ("modes", "closed_form", "depth_limit", "Modes", "ClosedForm")),
        (".symbolic.statespace", ("realisations", "similarity")),
        (".symbolic.stability", ("stability_conditions", "root_condition", "StabilityConditions")),
        (".symbolic.numbers", ("stability_numbers",)),
        (".symbolic.solvefor", ("solve_for",)),
        # the numeric engine (batched; depthdyn.numeric has the array-level functions)
        (".numeric", ("spectrum", "spectral_radius", "stability_mask", "stability_region",
                      "StabilityRegion")),
        (".numeric.simulate", ("simulate", "Trajectory")),
        (".numeric.sweep", ("sweep",)),
        (".numeric.check", ("check",)),
        # products over depth (the rest: depthdyn.products)
        (".products", ("periodic", "lyapunov", "composite_gains", "end_to_end_singular_values", "Periodic")),
        # side by side, the claims of the sources, budgets of exact work
        (".compare", ("compare", "ComparisonTable")),
        (".claims", ("run_claims", "ClaimResult")),
        (".budget", ("budget",)),
        # the interactive stability explorer (a Jupyter widget; needs anywidget, the explore extra)
        (".explore", ("explore",)),
        # the typed errors and the figures (matplotlib is imported on first use)
        (".errors", ("errors",)),
        (".plot", ("plot",)),
    )
    for name in names
}

__all__ = list(_PUBLIC)


def __getattr__(name: str):
    if name in _PUBLIC:
        import importlib

        module = importlib.import_module(_PUBLIC[name], __name__)
        value = _member(module, name)
        globals()[name] = value  # later look-ups are plain attribute reads
        return value
    raise AttributeError(f"module 'depthdyn' has no attribute {name!r}")


def _member(module: _types.ModuleType, name: str):
    """``name`` of ``module``, or the module itself where it is the public name (``errors``)."""
    if module.__name__ == f"{__name__}.{name}" and not hasattr(module, name):
        return module
    return getattr(module, name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(_types.ModuleType):
    """Keeps ``depthdyn.compare`` the function when the submodule of that name is imported
    (the import system sets the submodule as an attribute of its package)."""

    def __setattr__(self, name, value):
        if isinstance(value, _types.ModuleType) and _PUBLIC.get(name) == f".{name}":
            value = _member(value, name)
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package
