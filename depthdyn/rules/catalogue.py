"""The update rule of every built-in family, as its paper writes it.

One table: family name -> the rule (``paper``, for display), its citation, and ``make``, which
returns the arguments of :func:`~depthdyn.rules.from_rule` for the family's structural
arguments (``k``, ``n`` ...): the rule text, the branches and their mode, the parameter
domains, the matrices, and exact values for parameters the family fixes (``h = 1`` where a
multistep family's ``lam`` stands for ``z = h lam``). ``cases`` lists structural arguments at
which the tests re-derive the family from its rule and compare it with the hand-derived one.

Where the paper's rule needs a reading to fit one eigenmode, ``paper`` gives the paper's form
and ``note`` the reading (RevNet's two branches share the mode ``lam = F'G'``; the Hamiltonian
network's scaled stream ``w = h kappa z``; DeepNorm's post-normalisation divides by its scale).
The multistep rules use the textbooks' tables of coefficients (Hairer, Norsett & Wanner I,
§III.1; Hairer & Wanner II, §V.1), which :mod:`depthdyn` otherwise derives by integration.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
import sympy as sp

from ..errors import UnknownFamilyError
from ..recurrence import Recurrence, to_exact
from .build import from_rule

__all__ = ["RuleEntry", "RULES", "rule_entry", "rule_arguments", "rule_recurrence", "paper_rule"]

_LAM = {"lam": "complex"}
_H = {"h": "positive"}


@dataclass(frozen=True)
class RuleEntry:
    """A family's update rule: display text, citation, the builder of its ``from_rule`` arguments."""

    family: str
    paper: str
    citation: str
    make: Callable[..., dict]
    cases: tuple = ({},)
    note: str = ""
    extra: Mapping = field(default_factory=dict)


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
    a = sp.Poly(parse_poly(rho), r)
    b = sp.Poly(parse_poly(sigma), r) if sigma is not None else sp.Poly(0, r)
    p = max(a.degree(), b.degree())
    lhs = _combination(((a.coeff_monomial(r**j), _x(j - p + 1)) for j in range(p + 1)), keep_first=True)
    rhs = _combination((b.coeff_monomial(r**j), f"f({_x(j - p + 1)})") for j in range(p + 1))
    return {"rule": f"{lhs} = {rhs}", "params": _LAM}


def parse_poly(text):
    """A polynomial in ``r`` given as text (numeric coefficients), read safely."""
    from ..parse import parse_expr

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
    return {"rule": f"alpha = {_ALPHA[arch]}; x' = (alpha*x + f(x))/alpha",
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
    K = np.exp(np.random.default_rng(seed).normal(size=(n, n)))
    for _ in range(iterations):  # Sinkhorn-Knopp: normalise rows, then columns
        K = K / K.sum(axis=1, keepdims=True)
        K = K / K.sum(axis=0, keepdims=True)
    H = [[to_exact(float(v)) for v in row] for row in K]
    return _streams(H, *_gates(n), {}, n)


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


def _entries():
    E = RuleEntry
    yield E("residual", "x' = x + f(LN(x))", "000 §1; 004; 002 eq. 2", _residual, ({}, {"scaled": True}))
    yield E("rezero", "x' = x + a f(x)", "004 (ReZero)", _simple("x' = x + a*f(x)", {"a": "real"}))
    yield E("weighted", "x' = a x + f(x)", "004 (weighted residual); 001 eq. 2",
            _simple("x' = a*x + f(x)", {"a": "real"}))
    yield E("highway", "x' = g H(x) + (1 - g) x", "004 (highway networks)",
            lambda: {"rule": "x' = g*H(x) + (1 - g)*x", "branches": {"H": "lam"},
                     "params": {**_LAM, "g": "[0, 1]"}})
    yield E("momentum", "v' = m v + eta f(LN(x)); x' = x + v'", "000 §2, §6",
            _simple("v' = m*v + eta*f(LN(x)); x' = x + v'", {"m": "[0, 1)", "eta": "nonnegative"}))
    yield E("oscillator", "v' = v - (beta/L)^2 x; x' = x + v' (form=explicit: x' = x + v with the old v)",
            "000 §3", _oscillator, ({}, {"form": "explicit"}))
    yield E("smooth", "sum_i (-1)^i C(k,i) x[l+1-i] = h^k f(x[l])", "002 eq. 4c", _smooth,
            ({"k": 1}, {"k": 2}, {"k": 3}, {"k": 5}))
    yield E("dense", "x[l+1] = x[l+1-k] + h sum_{j<k} f(x[l-j])", "002 eq. 9", _dense,
            ({"k": 1}, {"k": 2}, {"k": 4}))
    yield E("entangled", "x' = Gamma x + f(x), Gamma = (gamma/n) 1 1^T + (1 - gamma) I", "001 eq. 2, 4",
            _entangled, ({"n": 2}, {"n": 3}, {"kind": "matrix", "Gamma": [[0, 1], [1, 0]]}))
    yield E("hyper_connection", "X' = H_res X + H_post^T f(H_pre X)", "003 eq. (3)", _hyper_connection,
            ({"n": 2}, {"n": 3}, {"n": 2, "doubly_stochastic": False}))
    yield E("general", "rho(E) x = sigma(E) f(x)", "000 §7", _general,
            ({"rho": "r**2 - r", "sigma": "r"}, {"rho": "2*r**3 - r + 1", "sigma": "r**2 + 1/2"}))
    yield E("adams_bashforth", "y[n+k] = y[n+k-1] + h sum_j b_j f(y[n+j])", "Hairer-Norsett-Wanner I §III.1",
            lambda k=1: _multistep(_AB[k], k, 1, k - 1), tuple({"k": k} for k in _AB),
            "lam stands for z = h lam (h = 1)")
    yield E("adams_moulton", "y[n+k] = y[n+k-1] + h sum_j b_j f(y[n+j]) (implicit)",
            "Hairer-Norsett-Wanner I §III.1", lambda k=1: _multistep(_AM[k], k, 1, k),
            tuple({"k": k} for k in _AM), "lam stands for z = h lam (h = 1)")
    yield E("bdf", "sum_j a_j y[n+j] = b h f(y[n+k])", "Hairer-Wanner II §V.1", _bdf,
            tuple({"k": k} for k in _BDF), "lam stands for z = h lam (h = 1)")
    yield E("nystrom", "y[n+k] = y[n+k-2] + h sum_j b_j f(y[n+j])", "Hairer-Norsett-Wanner I §III.1",
            lambda k=2: _multistep(_NYSTROM[k], k, 2, k - 1),
            tuple({"k": k} for k in _NYSTROM), "lam stands for z = h lam (h = 1)")
    yield E("milne_simpson", "y[n+2] = y[n] + h/3 (f(y[n+2]) + 4 f(y[n+1]) + f(y[n]))",
            "Hairer-Norsett-Wanner I §III.1", lambda k=2: _multistep(_MILNE[k], k, 2, k),
            tuple({"k": k} for k in _MILNE), "lam stands for z = h lam (h = 1)")
    yield E("lmm", "sum_j alpha_j y[n+j] = h sum_j beta_j f(y[n+j])", "Hairer-Norsett-Wanner I §III.2",
            _lmm, ({"alpha": [-1, 1], "beta": [1, 0]}, {"alpha": [-1, 0, 1], "beta": [0, 2, 0]}),
            "lam stands for z = h lam (h = 1)")
    yield E("lm_resnet", "u_{n+1} = (1 - k_n) u_n + k_n u_{n-1} + f(u_n)", "Lu et al. 2018 (ICML)",
            _simple("u' = (1 - k)*u + k*u[l-1] + f(u)", {"k": "real"}))
    yield E("revnet", "y1 = x1 + F(x2), y2 = x2 + G(y1)", "Gomez et al. 2017 (NeurIPS)",
            lambda: {"rule": "x1' = x1 + F(x2); x2' = x2 + G(x1')", "branches": {"F": "lam", "G": 1},
                     "params": _LAM}, note="the mode lam = F'G' is carried by F")
    yield E("hamiltonian", "y' = y + h s(K z), z' = z - h s(K^T y')",
            "Haber & Ruthotto 2017; Chang et al. 2018 (AAAI)", _simple("y' = y + w; w' = w + f(y')"),
            note="in the scaled stream w = h kappa z, f ~ lam = -(h kappa)^2")
    yield E("leapfrog", "Y[j+1] = 2 Y[j] - Y[j-1] + h^2 f(Y[j])", "Chang et al. 2018 (AAAI)",
            _simple("Y[l+1] = 2*Y[l] - Y[l-1] + h^2*f(Y[l])", _H))
    yield E("antisymmetric", "h' = h + eps s((W - W^T - gamma I) h)", "Chang et al. 2019 (ICLR)",
            lambda: {"rule": "x' = x + eps*s(A(x) - gamma*x)", "branches": {"s": 1, "A": "lam"},
                     "params": {**_LAM, "eps": "positive", "gamma": "nonnegative"}},
            note="A ~ lam, an eigenvalue of W - W^T; the slope of s absorbed")
    yield E("runge_kutta", "k_i = f(x + h sum_j a_ij k_j); x' = x + h sum_i b_i k_i", "Butcher tableau",
            _runge_kutta, tuple({"tableau": t} for t in _RK))
    yield E("rk2", "x' = x + h f(x + h/2 f(x))", "explicit midpoint",
            _simple("x' = x + h*f(x + h/2*f(x))", _H))
    yield E("rk4", _RK["rk4"], "classical RK4", lambda: _runge_kutta("rk4"))
    yield E("momentum_sander", "v' = gamma v + (1 - gamma) f(x); x' = x + v'", "Sander et al. 2021 (ICML)",
            _simple("v' = gamma*v + (1 - gamma)*f(x); x' = x + v'", {"gamma": "[0, 1]"}))
    yield E("deepnet", "x' = LN(alpha x + f(x))", "Wang et al. 2022 (DeepNet)", _deepnet,
            ({}, {"arch": "encoder"}, {"arch": "decoder"}), "post-LN read as the division by its scale alpha")
    yield E("branch_scaled", "x' = x + f(x) / L^power", "Hanin & Rolnick 2018; Yang et al. 2023",
            _branch_scaled, ({}, {"power": 1}))
    yield E("hc_static", "H' = B^T T(A_m^T H) + A_r^T H", "Zhu et al. 2025 (ICLR)", _hc_static,
            ({"n": 2}, {"n": 2, "layer": 1}, {"n": 3, "layer": 2}))
    yield E("mhc", "X' = H_res X + H_post^T f(H_pre X), H_res = Sinkhorn-Knopp(exp(logits))",
            "Xie et al. 2025 (mHC)", _mhc, ({"n": 2}, {"n": 3, "seed": 1}))
    yield E("mhc_lite", "X' = H_res X + H_post^T f(H_pre X), H_res = sum_k w_k P_k",
            "Yang & Gao 2026 (mHC-lite)", _mhc_lite, ({"n": 2}, {"n": 3}))
    yield E("kromhc", "X' = H_res X + H_post^T f(H_pre X), H_res = U_1 (x) ... (x) U_K",
            "Zhou et al. 2026 (KromHC)", _kromhc, ({"factors": 1}, {"factors": 2}))


#: Family name -> its :class:`RuleEntry` (read-only).
RULES: Mapping[str, RuleEntry] = MappingProxyType({e.family: e for e in _entries()})


def rule_entry(family: str) -> RuleEntry:
    """The rule entry of a built-in family."""
    try:
        return RULES[family]
    except KeyError:
        raise UnknownFamilyError(f"no update rule for {family!r}; rules exist for "
                                 f"{', '.join(RULES)}") from None


def rule_arguments(family: str, **structural) -> dict:
    """The :func:`from_rule` arguments of ``family`` at its structural arguments."""
    spec = dict(rule_entry(family).make(**structural))
    values = {k: spec.pop(k) for k in list(spec) if k not in
              ("rule", "branches", "params", "n", "matrices", "strict")}
    return {**spec, **values}


def rule_recurrence(family: str, *, rule: str | None = None, **structural) -> Recurrence:
    """``family`` derived from its update rule (``rule`` replaces the text, e.g. to mutate it)."""
    entry = rule_entry(family)
    args = rule_arguments(family, **structural)
    if rule is not None:
        args["rule"] = rule
    return from_rule(**args, strict=True, name=family, source=entry.citation)


def paper_rule(family: str) -> str:
    """The update rule of ``family`` as its paper writes it, with the reading used (``""`` if none)."""
    entry = RULES.get(family)
    if entry is None:
        return ""
    return entry.paper + (f" [{entry.note}]" if entry.note else "")
