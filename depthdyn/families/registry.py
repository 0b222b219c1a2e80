"""The registry of families: names, parameters and their domains, specifications and help.

One place owns what every front end needs to know about the families: the command line
(``derive --list``, ``-p NAME=VALUE``), :func:`depthdyn.compare` (``"momentum:m=1/2"``),
the report and the torch blocks of :mod:`depthdyn.nn` all look families up here.

* :data:`FAMILIES` maps names to :class:`Family` entries (factory, summary, example
  arguments); :func:`get_family` looks one up and suggests the nearest names for a
  misspelt one;
* :meth:`Family.params` gives the parameters with their domains, :meth:`Family.help` and
  :func:`families_help` the help text;
* :func:`parse_spec` reads ``FAMILY[:NAME=VALUE,...]``, :func:`build_from_assignments`
  builds a family from ``NAME=VALUE`` strings (structural arguments converted, parameter
  values parsed safely), :func:`resolve_spec` fills what a specification leaves open from
  the entry's example.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import sympy as sp

from ..errors import ParameterError, UnknownFamilyError, UnknownParameterError
from ..parse import parse_expr, parse_value
from ..recurrence import Param, Recurrence
from . import literature as lit
from .multistep import adams_bashforth, adams_moulton, bdf, from_lmm, milne_simpson, nystrom
from .sources import (
    dense,
    entangled,
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
    "Family",
    "FAMILIES",
    "get_family",
    "build",
    "suggest",
    "families_help",
    "parse_spec",
    "split_top",
    "build_from_assignments",
    "resolve_spec",
]

# the arguments of ``general`` that the command line takes as --rho/--sigma
_POLYNOMIALS = ("rho", "sigma")


@dataclass(frozen=True)
class Family:
    """A registry entry: name, factory, one-line summary and example arguments.

    ``example`` holds factory arguments (structural ones and parameter values) that make
    every parameter but ``lam`` numeric: the gallery draws each family there, and
    :func:`depthdyn.compare` uses them for whatever a comparison leaves open.
    """

    name: str
    factory: Callable[..., Recurrence]
    summary: str
    example: Mapping[str, object] = field(default_factory=dict)

    @property
    def structural(self) -> dict[str, object]:
        """Keyword-only structural arguments and their defaults."""
        sig = inspect.signature(self.factory)
        return {k: v.default for k, v in sig.parameters.items() if v.kind is inspect.Parameter.KEYWORD_ONLY}

    def example_structural(self) -> dict[str, object]:
        """The structural arguments of :attr:`example` (``k``, ``n``, ``rho`` ...)."""
        structural = self.structural
        return {k: v for k, v in self.example.items() if k in structural}

    def params(self, **structural) -> tuple[Param, ...]:
        """The parameters, with their domains, of the family built with ``structural``
        arguments (default: those of :attr:`example`).

        Examples
        --------
        >>> [(p.name, p.domain) for p in get_family("momentum").params()]
        [('lam', Complexes), ('m', Interval.Ropen(0, 1)), ('eta', Interval(0, oo))]
        """
        return self.factory(**(structural or self.example_structural())).params

    def help(self) -> str:
        """A paragraph for this family: summary, structural arguments, parameters and domains."""
        lines = [f"{self.name}: {self.summary}"]
        structural = {k: v for k, v in self.structural.items() if k not in _POLYNOMIALS}
        if structural:
            lines.append("  structural: " + ", ".join(f"{k}={v!r}" for k, v in structural.items()))
        for p in self.params():
            text = f" ({p.description})" if p.description else ""
            lines.append(f"  {p.name} in {sp.sstr(p.domain)}{text}")
        if self.example:
            lines.append("  example: " + ",".join(f"{k}={v}" for k, v in self.example.items()))
        return "\n".join(lines)

    def __call__(self, **kwargs) -> Recurrence:
        return self.factory(**kwargs)


def _registry() -> dict[str, Family]:
    half, one = sp.Rational(1, 2), sp.Integer(1)
    entries = (
        Family("residual", residual,
               "plain / pre-norm residual x' = x + f(LN(x)); scaled=1 for the alpha/L toy"),
        Family("rezero", rezero, "ReZero x' = x + a f(x)", {"a": half}),
        Family("weighted", weighted, "weighted residual x' = a x + f(x)", {"a": half}),
        Family("highway", highway, "highway x' = g H(x) + (1 - g) x, gate g a parameter", {"g": half}),
        Family("momentum", momentum, "second-order momentum residual v' = m v + eta f(x), x' = x + v'",
               {"m": half, "eta": one}),
        Family("oscillator", oscillator,
               "oscillator toy Delta^2 x = -(beta/L)^2 x (form=block|explicit)", {"beta": one, "L": 8}),
        Family("smooth", smooth, "C^k smooth network (r-1)^k x = h^k lam r^(k-1) x, order k", {"h": one}),
        Family("dense", dense, "dense network with k lags x' = x[l+1-k] + h lam sum_j x[l-j]", {"h": one}),
        Family("entangled", entangled,
               "entangled residual x' = Gamma x + f(x) (kind=uniform|orthogonal|matrix)", {"gamma": half}),
        Family("hyper_connection", hyper_connection,
               "hyper-connections, n streams, x' = H_res x + H_post^T F(H_pre x)",
               {"hres_1_1": sp.Rational(3, 4), "hpre_1": half, "hpre_2": half, "hpost_1": one, "hpost_2": one}),
        Family("general", general, "general model rho(r) x = lam sigma(r) x (give rho, sigma)",
               {"rho": "r**2 - r", "sigma": "r"}),
        # linear multistep methods (depthdyn.multistep)
        Family("adams_bashforth", adams_bashforth, "Adams-Bashforth k-step method (explicit, order k)"),
        Family("adams_moulton", adams_moulton, "Adams-Moulton k-step method (implicit, order k+1)"),
        Family("bdf", bdf, "backward differentiation formula, k steps (order k)"),
        Family("nystrom", nystrom, "Nystrom k-step method (explicit; k=2 is leapfrog)"),
        Family("milne_simpson", milne_simpson, "Milne-Simpson k-step method (implicit; k=2 is Simpson)"),
        Family("lmm", from_lmm, "linear multistep method from alpha=[...], beta=[...] (lowest index first)",
               {"alpha": [-1, 1], "beta": [1, 0]}),
        # the literature (depthdyn.literature)
        Family("lm_resnet", lit.lm_resnet, "LM-ResNet u' = (1 - k) u + k u_prev + f(u) (Lu et al. 2018)",
               {"k": sp.Rational(-1, 10)}),
        Family("revnet", lit.revnet, "RevNet y1 = x1 + F(x2), y2 = x2 + G(y1), lam = F'G' (Gomez et al. 2017)"),
        Family("hamiltonian", lit.hamiltonian,
               "Hamiltonian Verlet network, lam = -(h kappa)^2 (Haber & Ruthotto 2017; Chang et al. 2018)"),
        Family("leapfrog", lit.leapfrog, "leapfrog network Y' = 2Y - Y_prev + h^2 f(Y) (Chang et al. 2018)",
               {"h": one}),
        Family("antisymmetric", lit.antisymmetric,
               "antisymmetric block x' = x + eps s((W - W^T - gamma I) x) (Chang et al. 2019)",
               {"eps": half, "gamma": half}),
        Family("runge_kutta", lit.runge_kutta, "one Runge-Kutta step per block, any Butcher tableau",
               {"h": one}),
        Family("rk2", lit.rk2, "explicit-midpoint (RK2) block x' = R(h lam) x", {"h": one}),
        Family("rk4", lit.rk4, "classical RK4 block x' = R(h lam) x", {"h": one}),
        Family("momentum_sander", lit.momentum_sander,
               "Momentum ResNet v' = gamma v + (1 - gamma) f(x) (Sander et al. 2021)",
               {"gamma": sp.Rational(9, 10)}),
        Family("deepnet", lit.deepnet, "DeepNorm x' = LN(alpha x + f(x)), alpha(N) (Wang et al. 2022)",
               {"N": 8, "M": 8}),
        Family("branch_scaled", lit.branch_scaled, "residual with branch scaled by L^-power (1/sqrt(L), 1/L)",
               {"L": 16}),
        Family("hc_static", lit.hc_static, "static hyper-connections at their initialisation (Zhu et al. 2025)"),
        Family("mhc", lit.mhc, "mHC: Sinkhorn-Knopp doubly stochastic H_res (Xie et al. 2025)"),
        Family("mhc_lite", lit.mhc_lite, "mHC-lite: H_res a convex combination of permutations (Yang & Gao 2026)",
               {"w_1": sp.Rational(3, 4)}),
        Family("kromhc", lit.kromhc, "KromHC: H_res a Kronecker product of 2x2 doubly stochastic factors",
               {"a_1": sp.Rational(3, 4), "a_2": sp.Rational(9, 10)}),
    )
    return {f.name: f for f in entries}


FAMILIES: Mapping[str, Family] = MappingProxyType(_registry())


def suggest(name: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the choices nearest to a misspelt ``name``, else ``""``.

    Examples
    --------
    >>> print(suggest("hamiltonain", FAMILIES))
     (did you mean 'hamiltonian'?)
    >>> suggest("zzz", FAMILIES)
    ''
    """
    close = difflib.get_close_matches(str(name), list(choices), n=3, cutoff=0.6)
    return f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""


def get_family(name: str) -> Family:
    """Look a family up by name; raises :class:`UnknownFamilyError` with the nearest names
    and the choices.

    Examples
    --------
    >>> print(get_family("rezero").summary)
    ReZero x' = x + a f(x)
    """
    try:
        return FAMILIES[name]
    except (KeyError, TypeError):
        raise UnknownFamilyError(
            f"unknown family {name!r}{suggest(name, FAMILIES)}; choose one of {', '.join(FAMILIES)}"
        ) from None


def build(name: str, **kwargs) -> Recurrence:
    """Build family ``name`` with structural arguments and parameter values."""
    return get_family(name)(**kwargs)


def families_help() -> str:
    """One line per family: name, summary and structural arguments (``depthdyn derive --list``)."""
    width = max(map(len, FAMILIES))
    lines = []
    for name, fam in FAMILIES.items():
        extra = ", ".join(f"{k}={v!r}" for k, v in fam.structural.items() if k not in _POLYNOMIALS)
        lines.append(f"{name:<{width}}  {fam.summary}" + (f"  [{extra}]" if extra else ""))
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ specifications
def _split_assignment(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise ParameterError(f"-p expects NAME=VALUE, got {text!r}")
    return name.strip(), value.strip()


def _structural_value(name: str, default, text: str):
    """Convert a -p value for a factory's structural (keyword-only) argument."""
    if isinstance(default, bool):
        lowered = text.lower()
        if lowered in ("1", "true", "yes"):
            return True
        if lowered in ("0", "false", "no"):
            return False
        raise ParameterError(f"{name} must be true or false, got {text!r}")
    if isinstance(default, int):
        value = parse_expr(text)
        if not value.is_Integer:
            raise ParameterError(f"{name} must be an integer, got {text!r}")
        return int(value)
    if isinstance(default, str):
        return text
    return parse_value(text)  # matrices and vectors: nested lists, parsed safely


def build_from_assignments(
    family: str, assignments: Sequence[str] = (), rho: str | None = None, sigma: str | None = None
):
    """Build family ``family`` from ``NAME=VALUE`` strings (``-p`` of the command line).

    A structural argument (``k``, ``n``, ``kind`` ...) is converted to its default's type;
    any other name is a parameter whose value is parsed safely against the recurrence's
    own parameter names. ``rho``/``sigma`` are the polynomials of ``general``.

    Examples
    --------
    >>> build_from_assignments("smooth", ["k=3", "h=1/2"]).charpoly()
    r**3 + r**2*(-lam/8 - 3) + 3*r - 1
    >>> try:
    ...     build_from_assignments("momentum", ["mm=1/2"])
    ... except UnknownParameterError as exc:
    ...     print(str(exc).partition(";")[0])
    momentum has no parameter 'mm' (did you mean 'm'?)
    """
    fam = get_family(family)
    structural = fam.structural
    kwargs: dict[str, object] = {}
    if family == "general":
        kwargs.update({"rho": rho, "sigma": sigma})
    elif rho is not None or sigma is not None:
        raise ParameterError("--rho and --sigma apply to the 'general' family only")
    values: dict[str, str] = {}
    for item in assignments:
        name, text = _split_assignment(item)
        if name in kwargs or name in values:
            raise ParameterError(f"{name} is given twice")
        if name in structural and name not in ("rho", "sigma"):
            kwargs[name] = _structural_value(name, structural[name], text)
        else:
            values[name] = text  # parsed safely against the recurrence's own parameter names
    rec = fam(**kwargs)
    for name in values:
        if name not in rec.param_names:
            raise UnknownParameterError(
                f"{family} has no parameter {name!r}{suggest(name, [*rec.param_names, *structural])}; "
                f"its parameters: {', '.join(rec.param_names) or 'none'}"
                + (f"; structural arguments: {', '.join(structural)}" if structural else "")
            )
    return rec.subs(values) if values else rec


def split_top(text: str) -> list[str]:
    """Split at commas outside brackets (matrix values contain commas)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch in "([") - (ch in ")]")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [p.strip() for p in parts + [cur] if p.strip()]


def parse_spec(text: str) -> tuple[str, list[str]]:
    """``"FAMILY[:NAME=VALUE,...]"`` -> ``(family, ["NAME=VALUE", ...])``.

    Examples
    --------
    >>> parse_spec("momentum:m=1/2,eta=1")
    ('momentum', ['m=1/2', 'eta=1'])
    >>> parse_spec("hc_static:A_r=[[1, 0], [0, 1]]")
    ('hc_static', ['A_r=[[1, 0], [0, 1]]'])
    """
    if not isinstance(text, str) or not text.strip():
        raise ParameterError(f"a family specification must be FAMILY[:NAME=VALUE,...], got {text!r}")
    name, _, rest = text.strip().partition(":")
    return name.strip(), split_top(rest)


def resolve_spec(spec) -> tuple[str, Recurrence, dict]:
    """``(label, recurrence, values filled from the example)`` for one specification of :func:`depthdyn.compare`."""
    if isinstance(spec, Recurrence):
        return spec.name, spec, {}
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[1], dict):
        name, given = spec[0], [f"{k}={v}" for k, v in spec[1].items()]
        label = name + (":" + ",".join(given) if given else "")
    else:
        name, given = parse_spec(spec)
        label = str(spec).strip()
    fam = get_family(name)
    keys = {a.partition("=")[0].strip() for a in given}
    structural = fam.structural
    extra = [f"{k}={v}" for k, v in fam.example.items() if k in structural and k not in keys
             and k not in ("rho", "sigma")]
    rho = sigma = None
    if name == "general":
        pairs = dict(a.split("=", 1) for a in given if a.split("=", 1)[0].strip() in ("rho", "sigma"))
        given = [a for a in given if a.split("=", 1)[0].strip() not in ("rho", "sigma")]
        rho = pairs.get("rho", fam.example.get("rho"))
        sigma = pairs.get("sigma", fam.example.get("sigma"))
    rec = build_from_assignments(name, given + extra, rho, sigma)
    filled = {k: v for k, v in fam.example.items() if k in rec.param_names and k != rec.lam}
    return label, (rec.subs(filled) if filled else rec), filled
