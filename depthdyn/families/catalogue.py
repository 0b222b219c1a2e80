"""The catalogue of families: one entry per family, with its factory, parameters, rule and source.

Every built-in family has one :class:`Family` entry in :data:`FAMILIES`: its name, its factory
(which gives the parameters and their domains), a one-line summary and example arguments for
the front ends, and the family's update rule as its paper writes it, with the citation and
the builder of the :func:`~depthdyn.rules.from_rule` arguments that re-derive the family from
that rule (the rule text, branches and their mode, parameter domains, matrices, and exact
values for parameters the family fixes: ``h = 1`` where a multistep family's ``lam`` stands for
``z = h lam``). ``cases`` lists structural arguments at which the tests re-derive the family
from its rule and compare it with the hand-derived one.

Where the paper's rule needs a reading to fit one eigenmode, ``rule`` gives the paper's form
and ``note`` the reading (RevNet's two branches share the mode ``lam = F'G'``; the Hamiltonian
network's scaled stream ``w = h kappa z``; DeepNorm's post-normalisation divides by its scale).
The multistep rules use the textbooks' tables of coefficients (Hairer, Norsett & Wanner I,
§III.1; Hairer & Wanner II, §V.1), which the factories derive by integration instead.
:mod:`depthdyn.families.registry` looks entries up, parses specifications and writes help.
"""

from __future__ import annotations

import inspect
import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
import sympy as sp

from ..mixing import sinkhorn
from ..parse import parse_expr
from ..recurrence import Param, Recurrence, to_exact
from ..rules import from_rule
from . import literature as lit
from .common import stochastic_from_floats
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

__all__ = ["Family", "FAMILIES"]

# the arguments of ``general`` that the command line takes as --rho/--sigma
_POLYNOMIALS = ("rho", "sigma")


@dataclass(frozen=True)
class Family:
    """A catalogue entry: name, factory, one-line summary, example arguments, and the update rule.

    ``example`` holds factory arguments (structural ones and parameter values) that make
    every parameter but ``lam`` numeric: the gallery draws each family there, and
    :func:`depthdyn.compare` uses them for whatever a comparison leaves open. ``rule`` is the
    update rule as the paper (``citation``) writes it, ``note`` the reading that fits it to one
    eigenmode (if any); ``arguments(**structural)`` gives the :func:`~depthdyn.rules.from_rule`
    arguments that re-derive the family from its rule, checked at the structural ``cases``.
    """

    name: str
    factory: Callable[..., Recurrence]
    summary: str
    example: Mapping[str, object] = field(default_factory=dict)
    rule: str = ""
    citation: str = ""
    arguments: Callable[..., dict] | None = None
    cases: tuple = ({},)
    note: str = ""

    @property
    def structural(self) -> dict[str, object]:
        """Keyword-only structural arguments and their defaults."""
        sig = inspect.signature(self.factory)
        return {k: v.default for k, v in sig.parameters.items() if v.kind is inspect.Parameter.KEYWORD_ONLY}

    @property
    def options(self) -> dict[str, object]:
        """:attr:`structural` without the polynomials of ``general`` (``--rho``/``--sigma`` on the
        command line)."""
        return {k: v for k, v in self.structural.items() if k not in _POLYNOMIALS}

    def example_structural(self) -> dict[str, object]:
        """The structural arguments of :attr:`example` (``k``, ``n``, ``rho`` ...)."""
        structural = self.structural
        return {k: v for k, v in self.example.items() if k in structural}

    def params(self, **structural) -> tuple[Param, ...]:
        """The parameters, with their domains, of the family built with ``structural``
        arguments (default: those of :attr:`example`).

        Examples
        --------
        >>> [(p.name, p.domain) for p in FAMILIES["momentum"].params()]
        [('lam', Complexes), ('m', Interval.Ropen(0, 1)), ('eta', Interval(0, oo))]
        """
        return self.factory(**(structural or self.example_structural())).params

    def help(self) -> str:
        """A paragraph for this family: summary, structural arguments, parameters and domains."""
        lines = [f"{self.name}: {self.summary}"]
        structural = self.options
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

    def paper_rule(self) -> str:
        """The update rule as the paper writes it, with the reading used in brackets (if any).

        >>> FAMILIES["revnet"].paper_rule()
        "y1 = x1 + F(x2), y2 = x2 + G(y1) [the mode lam = F'G' is carried by F]"
        """
        return self.rule + (f" [{self.note}]" if self.note else "")

    def rule_arguments(self, **structural) -> dict:
        """The :func:`~depthdyn.rules.from_rule` arguments of the family at its ``structural`` arguments."""
        spec = dict(self.arguments(**structural))
        values = {k: spec.pop(k) for k in list(spec) if k not in
                  ("rule", "branches", "params", "n", "matrices", "strict")}
        return {**spec, **values}

    def from_rule(self, *, rule: str | None = None, **structural) -> Recurrence:
        """The family derived from its update rule (``rule`` replaces the text, e.g. to mutate it)."""
        args = self.rule_arguments(**structural)
        if rule is not None:
            args["rule"] = rule
        return from_rule(**args, strict=True, name=self.name, source=self.citation)


# ------------------------------------------------------------------ update rules as from_rule arguments
_LAM = {"lam": "complex"}
_H = {"h": "positive"}


def _idx(var: str, offset: int) -> str:
    return var if offset == 0 else f"{var}{offset:+d}"


def _x(offset: int, name: str = "x", var: str = "l") -> str:
    return f"{name}[{_idx(var, offset)}]"


def _combination(terms, keep_first: bool = False) -> str:
    """``c1*t1 + c2*t2 ...`` from (coefficient, term) pairs, exact coefficients, zeros dropped
    (but the first when ``keep_first``: a zero at the oldest layer still fixes the order)."""
    terms = list(terms)
    parts = [f"({sp.sstr(sp.nsimplify(c))})*{t}" for i, (c, t) in enumerate(terms)
             if c != 0 or (keep_first and i == 0)]
    return " + ".join(parts) if parts else "0"


def _simple(rule: str, params=None, **extra) -> Callable[..., dict]:
    return lambda: {"rule": rule, "params": {**_LAM, **(params or {})}, **extra}


# ------------------------------------------------------------------ post, Hauser, Lechner, HC
def _residual(scaled: bool = False) -> dict:
    if scaled:
        return {"rule": "x' = x + f(x)/L", "params": {**_LAM, "L": "positive"}}
    return {"rule": "x' = x + f(LN(x))", "params": _LAM}


def _oscillator(form: str = "block") -> dict:
    rule = ("v' = v - (beta/L)^2*x; x' = x + v'" if form == "block"
            else "x' = x + v; v' = v - (beta/L)^2*x")
    return {"rule": rule, "params": {"beta": "nonnegative", "L": "positive"}}


def _smooth(k: int = 2) -> dict:
    lhs = _combination(((-1) ** i * math.comb(k, i), _x(1 - i)) for i in range(k + 1))
    return {"rule": f"{lhs} = h^{k}*f(x[l])", "params": {**_LAM, **_H}}


def _dense(k: int = 2) -> dict:
    branch = " + ".join(f"f({_x(-j)})" for j in range(k))
    return {"rule": f"x[l+1] = {_x(1 - k)} + h*({branch})", "params": {**_LAM, **_H}}


def _entangled(kind: str = "uniform", n: int = 2, Gamma=None) -> dict:
    if kind == "matrix" or Gamma is not None:
        G = Gamma
        params = _LAM
    else:
        G = [[f"gamma/{n} + (1 - gamma)" if i == j else f"gamma/{n}" for j in range(n)] for i in range(n)]
        params = {**_LAM, "gamma": "[0, 1]"}
    return {"rule": "x' = Gamma*x + f(x)", "n": len(G), "matrices": {"Gamma": G}, "params": params}


def _doubly_stochastic(n: int) -> list:
    """``n x n`` with free ``hres_i_j`` (``i, j < n``) and the last row and column closing the sums."""
    H = [[f"hres_{i + 1}_{j + 1}" for j in range(n - 1)] for i in range(n - 1)]
    for i in range(n - 1):
        H[i].append("1 - (" + " + ".join(H[i][: n - 1]) + ")")
    H.append(["1 - (" + " + ".join(H[i][j] for i in range(n - 1)) + ")" for j in range(n)])
    return H


def _streams(H, pre, post, params, n) -> dict:
    return {"rule": "X' = H_res*X + H_post^T*f(H_pre*X)", "n": n,
            "matrices": {"H_res": H, "H_pre": pre, "H_post": post}, "params": {**_LAM, **params}}


def _hyper_connection(n: int = 2, doubly_stochastic: bool = True) -> dict:
    pre, post = [[f"hpre_{i + 1}" for i in range(n)]], [[f"hpost_{i + 1}" for i in range(n)]]
    gates = {f"h{s}_{i + 1}": "real" for s in ("pre", "post") for i in range(n)}
    if doubly_stochastic:
        H = _doubly_stochastic(n)
        free = {f"hres_{i + 1}_{j + 1}": "[0, 1]" for i in range(n - 1) for j in range(n - 1)}
    else:
        H = [[f"hres_{i + 1}_{j + 1}" for j in range(n)] for i in range(n)]
        free = {f"hres_{i + 1}_{j + 1}": "real" for i in range(n) for j in range(n)}
    return _streams(H, pre, post, {**free, **gates}, n)


def _general(rho=None, sigma=None) -> dict:
    r = sp.Symbol("r")
    a = sp.Poly(_parse_poly(rho), r)
    b = sp.Poly(_parse_poly(sigma), r) if sigma is not None else sp.Poly(0, r)
    p = max(a.degree(), b.degree())
    lhs = _combination(((a.coeff_monomial(r**j), _x(j - p + 1)) for j in range(p + 1)), keep_first=True)
    rhs = _combination((b.coeff_monomial(r**j), f"f({_x(j - p + 1)})") for j in range(p + 1))
    return {"rule": f"{lhs} = {rhs}", "params": _LAM}


def _parse_poly(text):
    """A polynomial in ``r`` given as text (numeric coefficients), read safely."""
    return parse_expr(text, {"r": sp.Symbol("r")})


# ------------------------------------------------------------------ multistep (textbook tables)
_Q = sp.Rational
_AB = {1: [1], 2: [_Q(3, 2), _Q(-1, 2)], 3: [_Q(23, 12), _Q(-16, 12), _Q(5, 12)],
       4: [_Q(55, 24), _Q(-59, 24), _Q(37, 24), _Q(-9, 24)]}
_AM = {1: [_Q(1, 2), _Q(1, 2)], 2: [_Q(5, 12), _Q(8, 12), _Q(-1, 12)],
       3: [sp.Rational(9, 24), sp.Rational(19, 24), sp.Rational(-5, 24), sp.Rational(1, 24)]}
_BDF = {1: ([1, -1], 1), 2: ([1, sp.Rational(-4, 3), sp.Rational(1, 3)], sp.Rational(2, 3)),
        3: ([1, sp.Rational(-18, 11), sp.Rational(9, 11), sp.Rational(-2, 11)], sp.Rational(6, 11)),
        4: ([1, sp.Rational(-48, 25), sp.Rational(36, 25), sp.Rational(-16, 25), sp.Rational(3, 25)],
            sp.Rational(12, 25))}
_NYSTROM = {2: [2, 0], 3: [sp.Rational(7, 3), sp.Rational(-2, 3), sp.Rational(1, 3)]}
_MILNE = {2: [sp.Rational(1, 3), sp.Rational(4, 3), sp.Rational(1, 3)],
          3: [sp.Rational(1, 3), sp.Rational(4, 3), sp.Rational(1, 3), 0],  # Simpson is exact for cubics
          4: [sp.Rational(c, 90) for c in (29, 124, 24, 4, -1)]}


def _y(j: int) -> str:
    return f"y[{_idx('n', j)}]"


def _multistep(new: list, k: int, back: int, newest: int) -> dict:
    """``y[n+k] = y[n+k-back] + h * sum_i new[i] f(y[n+newest-i])`` (textbook order, newest first)."""
    # the oldest term is kept even with a zero coefficient: it fixes the number of steps
    terms = [(c, f"f({_y(newest - i)})") for i, c in enumerate(new)]
    rhs = _combination(reversed(terms), keep_first=True)
    return {"rule": f"{_y(k)} = {_y(k - back)} + h*({rhs})", "params": {**_LAM, **_H}, "h": 1}


def _bdf(k: int = 1) -> dict:
    alpha, beta = _BDF[k]
    lhs = _combination((c, _y(k - i)) for i, c in enumerate(alpha))
    return {"rule": f"{lhs} = ({beta})*h*f({_y(k)})", "params": {**_LAM, **_H}, "h": 1}


def _lmm(alpha=None, beta=None) -> dict:
    beta = list(beta) + [0] * (len(alpha) - len(beta))
    lhs = _combination(((to_exact(c), _y(j)) for j, c in enumerate(alpha)), keep_first=True)
    rhs = _combination((to_exact(c), f"f({_y(j)})") for j, c in enumerate(beta))
    return {"rule": f"{lhs} = h*({rhs})", "params": {**_LAM, **_H}, "h": 1}


# ------------------------------------------------------------------ the literature
_RK = {
    "euler": "x' = x + h*f(x)",
    "midpoint": "k1 = f(x); k2 = f(x + h/2*k1); x' = x + h*k2",
    "heun": "k1 = f(x); k2 = f(x + h*k1); x' = x + h/2*(k1 + k2)",
    "ralston": "k1 = f(x); k2 = f(x + 2/3*h*k1); x' = x + h*(k1/4 + 3/4*k2)",
    "rk3": "k1 = f(x); k2 = f(x + h/2*k1); k3 = f(x - h*k1 + 2*h*k2); x' = x + h/6*(k1 + 4*k2 + k3)",
    "rk4": "k1 = f(x); k2 = f(x + h/2*k1); k3 = f(x + h/2*k2); k4 = f(x + h*k3); "
           "x' = x + h/6*(k1 + 2*k2 + 2*k3 + k4)",
    "backward_euler": "k1 = f(x + h*k1); x' = x + h*k1",
    "implicit_midpoint": "k1 = f(x + h/2*k1); x' = x + h*k1",
}


def _runge_kutta(tableau: str = "rk4") -> dict:
    return {"rule": _RK[tableau], "params": {**_LAM, **_H}}


_ALPHA = {"single": "(2*N)^(1/4)", "encoder": "81/100*(N^4*M)^(1/16)", "decoder": "(3*M)^(1/4)"}


def _deepnet(arch: str = "single") -> dict:
    return {"rule": f"alpha = {_ALPHA[arch]}; x' = LN(alpha*x + f(x))",
            "params": {**_LAM, "N": "positive", "M": "positive"}}


def _branch_scaled(power="1/2") -> dict:
    return {"rule": f"x' = x + f(x)/L^({sp.sstr(to_exact(power))})", "params": {**_LAM, "L": "positive"}}


def _gates(n: int) -> tuple[list, list]:
    return [[sp.Rational(1, 2)] * n], [[1] * n]  # mHC's gates at logit 0


def _hc_static(n: int = 2, layer: int = 0) -> dict:
    column = [[int(i == layer % n)] for i in range(n)]
    return {"rule": "X' = A_r^T*X + B^T*f(A_m^T*X)", "n": n, "params": _LAM,
            "matrices": {"A_r": sp.eye(n), "A_m": column, "B": [[1] * n]}}


def _mhc(n: int = 2, seed: int = 0, iterations: int = 20) -> dict:
    logits = np.random.default_rng(seed).normal(size=(n, n))
    H, _ = stochastic_from_floats(sinkhorn(logits, iterations))
    return _streams(H.tolist(), *_gates(n), {}, n)


def _mhc_lite(n: int = 2) -> dict:
    eye = sp.eye(n)
    perms = [sp.Matrix.hstack(*[eye[:, j] for j in p]) for p in itertools.permutations(range(n))]
    w = [sp.Symbol(f"w_{i + 1}") for i in range(len(perms) - 1)]
    weights = w + [1 - sum(w)]
    H = sum((c * P for c, P in zip(weights, perms, strict=True)), sp.zeros(n))
    return _streams(H, *_gates(n), {s.name: "[0, 1]" for s in w}, n)


def _kromhc(factors: int = 2) -> dict:
    H = sp.Matrix([[1]])
    for i in range(factors):
        a = sp.Symbol(f"a_{i + 1}")
        H = sp.kronecker_product(H, sp.Matrix([[a, 1 - a], [1 - a, a]]))
    n = H.shape[0]
    return _streams(H, *_gates(n), {f"a_{i + 1}": "[0, 1]" for i in range(factors)}, n)


# ------------------------------------------------------------------ the table
def _catalogue() -> dict[str, Family]:
    half, one = sp.Rational(1, 2), sp.Integer(1)
    entries = (
        Family("residual", residual,
               "plain / pre-norm residual x' = x + f(LN(x)); scaled=1 for the alpha/L toy",
               rule="x' = x + f(LN(x))",
               citation="000 §1; 004; 002 eq. 2",
               arguments=_residual,
               cases=({}, {"scaled": True})),
        Family("rezero", rezero, "ReZero x' = x + a f(x)", {"a": half},
               rule="x' = x + a f(x)",
               citation="004 (ReZero)",
               arguments=_simple("x' = x + a*f(x)", {"a": "real"})),
        Family("weighted", weighted, "weighted residual x' = a x + f(x)", {"a": half},
               rule="x' = a x + f(x)",
               citation="004 (weighted residual); 001 eq. 2",
               arguments=_simple("x' = a*x + f(x)", {"a": "real"})),
        Family("highway", highway, "highway x' = g H(x) + (1 - g) x, gate g a parameter", {"g": half},
               rule="x' = g H(x) + (1 - g) x",
               citation="004 (highway networks)",
               arguments=lambda: {"rule": "x' = g*H(x) + (1 - g)*x", "branches": {"H": "lam"},
                                  "params": {**_LAM, "g": "[0, 1]"}}),
        Family("momentum", momentum, "second-order momentum residual v' = m v + eta f(x), x' = x + v'",
               {"m": half, "eta": one},
               rule="v' = m v + eta f(LN(x)); x' = x + v'",
               citation="000 §2, §6",
               arguments=_simple("v' = m*v + eta*f(LN(x)); x' = x + v'",
                                 {"m": "[0, 1)", "eta": "nonnegative"})),
        Family("oscillator", oscillator, "oscillator toy Delta^2 x = -(beta/L)^2 x (form=block|explicit)",
               {"beta": one, "L": 8},
               rule="v' = v - (beta/L)^2 x; x' = x + v' (form=explicit: x' = x + v with the old v)",
               citation="000 §3",
               arguments=_oscillator,
               cases=({}, {"form": "explicit"})),
        Family("smooth", smooth, "C^k smooth network (r-1)^k x = h^k lam r^(k-1) x, order k", {"h": one},
               rule="sum_i (-1)^i C(k,i) x[l+1-i] = h^k f(x[l])",
               citation="002 eq. 4c",
               arguments=_smooth,
               cases=({"k": 1}, {"k": 2}, {"k": 3}, {"k": 5})),
        Family("dense", dense, "dense network with k lags x' = x[l+1-k] + h lam sum_j x[l-j]", {"h": one},
               rule="x[l+1] = x[l+1-k] + h sum_{j<k} f(x[l-j])",
               citation="002 eq. 9",
               arguments=_dense,
               cases=({"k": 1}, {"k": 2}, {"k": 4})),
        Family("entangled", entangled,
               "entangled residual x' = Gamma x + f(x) (kind=uniform|orthogonal|matrix)",
               {"gamma": half},
               rule="x' = Gamma x + f(x), Gamma = (gamma/n) 1 1^T + (1 - gamma) I",
               citation="001 eq. 2, 4",
               arguments=_entangled,
               cases=({"n": 2}, {"n": 3}, {"kind": "matrix", "Gamma": [[0, 1], [1, 0]]})),
        Family("hyper_connection", hyper_connection,
               "hyper-connections, n streams, x' = H_res x + H_post^T F(H_pre x)",
               {"hres_1_1": sp.Rational(3, 4), "hpre_1": half,
                "hpre_2": half, "hpost_1": one, "hpost_2": one},
               rule="X' = H_res X + H_post^T f(H_pre X)",
               citation="003 eq. (3)",
               arguments=_hyper_connection,
               cases=({"n": 2}, {"n": 3}, {"n": 2, "doubly_stochastic": False})),
        Family("general", general, "general model rho(r) x = lam sigma(r) x (give rho, sigma)",
               {"rho": "r**2 - r", "sigma": "r"},
               rule="rho(E) x = sigma(E) f(x)",
               citation="000 §7",
               arguments=_general,
               cases=({"rho": "r**2 - r", "sigma": "r"}, {"rho": "2*r**3 - r + 1", "sigma": "r**2 + 1/2"})),
        # linear multistep methods (depthdyn.families.multistep); lam stands for z = h lam
        Family("adams_bashforth", adams_bashforth, "Adams-Bashforth k-step method (explicit, order k)",
               rule="y[n+k] = y[n+k-1] + h sum_j b_j f(y[n+j])",
               citation="Hairer-Norsett-Wanner I §III.1",
               arguments=lambda k=1: _multistep(_AB[k], k, 1, k - 1),
               cases=tuple({"k": k} for k in _AB),
               note="lam stands for z = h lam (h = 1)"),
        Family("adams_moulton", adams_moulton, "Adams-Moulton k-step method (implicit, order k+1)",
               rule="y[n+k] = y[n+k-1] + h sum_j b_j f(y[n+j]) (implicit)",
               citation="Hairer-Norsett-Wanner I §III.1",
               arguments=lambda k=1: _multistep(_AM[k], k, 1, k),
               cases=tuple({"k": k} for k in _AM),
               note="lam stands for z = h lam (h = 1)"),
        Family("bdf", bdf, "backward differentiation formula, k steps (order k)",
               rule="sum_j a_j y[n+j] = b h f(y[n+k])",
               citation="Hairer-Wanner II §V.1",
               arguments=_bdf,
               cases=tuple({"k": k} for k in _BDF),
               note="lam stands for z = h lam (h = 1)"),
        Family("nystrom", nystrom, "Nystrom k-step method (explicit; k=2 is leapfrog)",
               rule="y[n+k] = y[n+k-2] + h sum_j b_j f(y[n+j])",
               citation="Hairer-Norsett-Wanner I §III.1",
               arguments=lambda k=2: _multistep(_NYSTROM[k], k, 2, k - 1),
               cases=tuple({"k": k} for k in _NYSTROM),
               note="lam stands for z = h lam (h = 1)"),
        Family("milne_simpson", milne_simpson, "Milne-Simpson k-step method (implicit; k=2 is Simpson)",
               rule="y[n+2] = y[n] + h/3 (f(y[n+2]) + 4 f(y[n+1]) + f(y[n]))",
               citation="Hairer-Norsett-Wanner I §III.1",
               arguments=lambda k=2: _multistep(_MILNE[k], k, 2, k),
               cases=tuple({"k": k} for k in _MILNE),
               note="lam stands for z = h lam (h = 1)"),
        Family("lmm", from_lmm, "linear multistep method from alpha=[...], beta=[...] (lowest index first)",
               {"alpha": [-1, 1], "beta": [1, 0]},
               rule="sum_j alpha_j y[n+j] = h sum_j beta_j f(y[n+j])",
               citation="Hairer-Norsett-Wanner I §III.2",
               arguments=_lmm,
               cases=({"alpha": [-1, 1], "beta": [1, 0]}, {"alpha": [-1, 0, 1], "beta": [0, 2, 0]}),
               note="lam stands for z = h lam (h = 1)"),
        # the literature (depthdyn.families.literature)
        Family("lm_resnet", lit.lm_resnet, "LM-ResNet u' = (1 - k) u + k u_prev + f(u) (Lu et al. 2018)",
               {"k": sp.Rational(-1, 10)},
               rule="u_{n+1} = (1 - k_n) u_n + k_n u_{n-1} + f(u_n)",
               citation="Lu et al. 2018 (ICML)",
               arguments=_simple("u' = (1 - k)*u + k*u[l-1] + f(u)", {"k": "real"})),
        Family("revnet", lit.revnet,
               "RevNet y1 = x1 + F(x2), y2 = x2 + G(y1), lam = F'G' (Gomez et al. 2017)",
               rule="y1 = x1 + F(x2), y2 = x2 + G(y1)",
               citation="Gomez et al. 2017 (NeurIPS)",
               arguments=lambda: {"rule": "x1' = x1 + F(x2); x2' = x2 + G(x1')",
                                  "branches": {"F": "lam", "G": 1}, "params": _LAM},
               note="the mode lam = F'G' is carried by F"),
        Family("hamiltonian", lit.hamiltonian,
               "Hamiltonian Verlet network, lam = -(h kappa)^2 (Haber & Ruthotto 2017; Chang et al. 2018)",
               rule="y' = y + h s(K z), z' = z - h s(K^T y')",
               citation="Haber & Ruthotto 2017; Chang et al. 2018 (AAAI)",
               arguments=_simple("y' = y + w; w' = w + f(y')"),
               note="in the scaled stream w = h kappa z, f ~ lam = -(h kappa)^2"),
        Family("leapfrog", lit.leapfrog, "leapfrog network Y' = 2Y - Y_prev + h^2 f(Y) (Chang et al. 2018)",
               {"h": one},
               rule="Y[j+1] = 2 Y[j] - Y[j-1] + h^2 f(Y[j])",
               citation="Chang et al. 2018 (AAAI)",
               arguments=_simple("Y[l+1] = 2*Y[l] - Y[l-1] + h^2*f(Y[l])", _H)),
        Family("antisymmetric", lit.antisymmetric,
               "antisymmetric block x' = x + eps s((W - W^T - gamma I) x) (Chang et al. 2019)",
               {"eps": half, "gamma": half},
               rule="h' = h + eps s((W - W^T - gamma I) h)",
               citation="Chang et al. 2019 (ICLR)",
               arguments=lambda: {"rule": "x' = x + eps*s(A(x) - gamma*x)", "branches": {"s": 1, "A": "lam"},
                                  "params": {**_LAM, "eps": "positive", "gamma": "nonnegative"}},
               note="A ~ lam, an eigenvalue of W - W^T; the slope of s absorbed"),
        Family("runge_kutta", lit.runge_kutta, "one Runge-Kutta step per block, any Butcher tableau",
               {"h": one},
               rule="k_i = f(x + h sum_j a_ij k_j); x' = x + h sum_i b_i k_i",
               citation="Butcher tableau",
               arguments=_runge_kutta,
               cases=tuple({"tableau": t} for t in _RK)),
        Family("rk2", lit.rk2, "explicit-midpoint (RK2) block x' = R(h lam) x", {"h": one},
               rule="x' = x + h f(x + h/2 f(x))",
               citation="explicit midpoint",
               arguments=_simple("x' = x + h*f(x + h/2*f(x))", _H)),
        Family("rk4", lit.rk4, "classical RK4 block x' = R(h lam) x", {"h": one},
               rule=_RK["rk4"],
               citation="classical RK4",
               arguments=lambda: _runge_kutta("rk4")),
        Family("momentum_sander", lit.momentum_sander,
               "Momentum ResNet v' = gamma v + (1 - gamma) f(x) (Sander et al. 2021)",
               {"gamma": sp.Rational(9, 10)},
               rule="v' = gamma v + (1 - gamma) f(x); x' = x + v'",
               citation="Sander et al. 2021 (ICML)",
               arguments=_simple("v' = gamma*v + (1 - gamma)*f(x); x' = x + v'", {"gamma": "[0, 1]"})),
        Family("deepnet", lit.deepnet, "DeepNorm x' = LN(alpha x + f(x)), alpha(N) (Wang et al. 2022)",
               {"N": 8, "M": 8},
               rule="x' = LN(alpha x + f(x))",
               citation="Wang et al. 2022 (DeepNet)",
               arguments=_deepnet,
               cases=({}, {"arch": "encoder"}, {"arch": "decoder"}),
               note="post-LN read as the division by its scale alpha"),
        Family("branch_scaled", lit.branch_scaled, "residual with branch scaled by L^-power (1/sqrt(L), 1/L)",
               {"L": 16},
               rule="x' = x + f(x) / L^power",
               citation="Hanin & Rolnick 2018; Yang et al. 2023",
               arguments=_branch_scaled,
               cases=({}, {"power": 1})),
        Family("hc_static", lit.hc_static,
               "static hyper-connections at their initialisation (Zhu et al. 2025)",
               rule="H' = B^T T(A_m^T H) + A_r^T H",
               citation="Zhu et al. 2025 (ICLR)",
               arguments=_hc_static,
               cases=({"n": 2}, {"n": 2, "layer": 1}, {"n": 3, "layer": 2})),
        Family("mhc", lit.mhc, "mHC: Sinkhorn-Knopp doubly stochastic H_res (Xie et al. 2025)",
               rule="X' = H_res X + H_post^T f(H_pre X), H_res = Sinkhorn-Knopp(exp(logits))",
               citation="Xie et al. 2025 (mHC)",
               arguments=_mhc,
               cases=({"n": 2}, {"n": 3, "seed": 1})),
        Family("mhc_lite", lit.mhc_lite,
               "mHC-lite: H_res a convex combination of permutations (Yang & Gao 2026)",
               {"w_1": sp.Rational(3, 4)},
               rule="X' = H_res X + H_post^T f(H_pre X), H_res = sum_k w_k P_k",
               citation="Yang & Gao 2026 (mHC-lite)",
               arguments=_mhc_lite,
               cases=({"n": 2}, {"n": 3})),
        Family("kromhc", lit.kromhc, "KromHC: H_res a Kronecker product of 2x2 doubly stochastic factors",
               {"a_1": sp.Rational(3, 4), "a_2": sp.Rational(9, 10)},
               rule="X' = H_res X + H_post^T f(H_pre X), H_res = U_1 (x) ... (x) U_K",
               citation="Zhou et al. 2026 (KromHC)",
               arguments=_kromhc,
               cases=({"factors": 1}, {"factors": 2})),
    )
    return {f.name: f for f in entries}


#: Family name -> its :class:`Family` entry (read-only).
FAMILIES: Mapping[str, Family] = MappingProxyType(_catalogue())
