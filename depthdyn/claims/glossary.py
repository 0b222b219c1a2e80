"""Claims of source 004, the glossary page "Residual Connections".

The Jacobian and gradient identities are checked with SymPy on undefined functions; the
gradient-flow claim with a concrete counterexample and the one-mode families
(:func:`depthdyn.families.residual`, ``rezero``, ``weighted``); the numpy code's GELU
approximation against the exact GELU ``x Phi(x)`` (mpmath ``erf``) with a stated tolerance.
Historical statements (ImageNet, layer counts) are not checkable by computation.
"""

from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

from ..families import residual, rezero, weighted
from ..symbolic.polynomial import roots
from .base import Claim, Outcome, compare_exact, verdict

__all__ = ["SOURCE", "CLAIMS"]

SOURCE = "004_3517e0990818788b.txt"
_CLAIMS: list[Claim] = []
_GELU_TOL = 1e-3  # the tolerance at which "GELU approximation" is read as holding


def _add(id, section, statement, stated, method, check) -> None:
    _CLAIMS.append(Claim(id, SOURCE, section, statement, stated, method, check))


def _xs(n: int = 3):
    xs = sp.Matrix(sp.symbols(f"x1:{n + 1}"))
    F = sp.Matrix([sp.Function(f"F{i + 1}")(*xs) for i in range(n)])
    return xs, F


def _jacobian(cl):
    xs, F = _xs()
    J = (F + xs).jacobian(xs)
    ok = compare_exact(F.jacobian(xs) + sp.eye(3), J).holds
    lam = residual().lam_symbol  # one eigenmode, F ~ lam x: the residual family's root
    (root,) = roots(residual()).values()
    ok = ok and compare_exact(1 + lam, root).holds
    return Outcome("d(F(x) + x)/dx = dF/dx + I (n = 3, undefined F); one mode: r = 1 + lam", verdict(ok))


_add(
    "004-jacobian",
    "definition",
    "the gradient of y = F(x) + x with respect to x is dF/dx + I",
    "dF/dx + I",
    "SymPy Jacobian with undefined F; root of residual()",
    _jacobian,
)


def _gradient(cl):
    xs, F = _xs()
    ys = sp.Matrix(sp.symbols("y1:4"))
    Lf = sp.Function("Loss")(*ys)
    y = F + xs
    dLdy = sp.Matrix([[sp.diff(Lf, v) for v in ys]]).subs(dict(zip(ys, y, strict=True)), simultaneous=True)
    direct = sp.Matrix([[sp.diff(Lf.subs(dict(zip(ys, y, strict=True)), simultaneous=True), v) for v in xs]])
    ok = compare_exact(dLdy * (F.jacobian(xs) + sp.eye(3)), direct).holds
    return Outcome("dL/dx = dL/dy (dF/dx + I) (row gradient, n = 3, undefined L and F)", verdict(ok))


_add(
    "004-gradient-identity",
    "formula",
    "dL/dx = dL/dy (dF/dx + I)",
    "dL/dy (dF/dx + I)",
    "chain rule by SymPy on L(F(x) + x) with undefined L, F",
    _gradient,
)


def _direct_path(cl):
    xs, F = _xs(2)
    g = sp.Matrix([[sp.Symbol("g1"), sp.Symbol("g2")]])  # dL/dy
    zero = g * (sp.zeros(2) + sp.eye(2))  # dF/dx = 0: the gradient passes unchanged
    passes = compare_exact(g, zero).holds
    killed = g * (-sp.eye(2) + sp.eye(2))  # F(x) = -x: dF/dx = -I
    (root,) = roots(residual().subs(lam=-1)).values()
    partial = g * (sp.Matrix([[-1, 0], [0, 3]]) + sp.eye(2))  # an eigenvalue -1 kills one direction
    ok = passes and killed == sp.zeros(1, 2)
    return Outcome(
        f"F(x) = -x (dF/dx = -I): dL/dx = dL/dy (-I + I) = {sp.sstr(killed.tolist())}; residual() at "
        f"lam = -1 has r = {root}; dF/dx = diag(-1, 3) gives {sp.sstr(partial.tolist())}",
        "holds-with-caveat" if ok else "fails",
        "true when dF/dx vanishes (the gradient passes unchanged), but not 'regardless of what F does': "
        "any eigenvalue -1 of dF/dx removes that direction of the gradient (and over many layers the "
        "product of (I + dF/dx) can still vanish or explode)",
    )


_add(
    "004-gradient-always-flows",
    "overview",
    "the + I term means the gradient always flows back, regardless of what F does; even if dF/dx vanishes "
    "the gradient still flows",
    "dL/dx != 0 for any F",
    "dL/dx for dF/dx = 0, -I and diag(-1, 3); residual() at lam = -1",
    _direct_path,
)


def _gelu(cl):
    xs = np.linspace(-8, 8, 4001)
    c = np.sqrt(2.0 / np.pi)
    approx = xs * 0.5 * (1.0 + np.tanh(c * (xs + 0.044715 * xs**3)))  # the page's numpy code
    with mpmath.workdps(30):
        exact = np.array([float(x * (1 + mpmath.erf(mpmath.mpf(x) / mpmath.sqrt(2))) / 2) for x in xs])
    err = np.abs(approx - exact)
    worst = float(err.max())
    return Outcome(
        f"max |approx - x Phi(x)| on [-8, 8] = {worst:.3e} at x = {xs[err.argmax()]:.3f} (tolerance "
        f"{_GELU_TOL:g})",
        verdict(worst <= _GELU_TOL),
        "the tanh form approximates the exact GELU x Phi(x) (PyTorch nn.GELU() default is the exact erf "
        "form, so the numpy and torch listings differ by up to this amount)",
    )


_add(
    "004-gelu-approximation",
    "numpy code",
    "0.5 h (1 + tanh(sqrt(2/pi) (h + 0.044715 h^3))) is a GELU approximation",
    "x Phi(x)",
    "float64 tanh form vs exact GELU with mpmath erf on 4001 points of [-8, 8], tolerance 1e-3",
    _gelu,
)


def _rezero(cl):
    rec = rezero()
    a, lam = rec.symbols["a"], rec.lam_symbol
    (root,) = roots(rec).values()
    ok = compare_exact(1, root.xreplace({a: 0})).holds
    return Outcome(
        f"rezero(): r = {sp.sstr(root)}; at a = 0, r = {sp.sstr(root.xreplace({a: 0}))} for every lam",
        verdict(ok and root.has(lam)),
    )


_add(
    "004-rezero",
    "alternatives table",
    "ReZero y = x + alpha F(x) with alpha initialised to 0: each layer starts as identity",
    "identity",
    "root of rezero() at a = 0",
    _rezero,
)


def _weighted(cl):
    rec = weighted()
    a = rec.symbols["a"]
    (root,) = roots(rec).values()
    (res_root,) = roots(residual()).values()
    ok = compare_exact(res_root, root.xreplace({a: 1})).holds
    return Outcome(
        f"weighted(): r = {sp.sstr(root)}; at a = 1 it is the residual root {sp.sstr(res_root)}; "
        "the identity path carries a factor a per layer (a^L over L layers)",
        verdict(ok),
    )


_add(
    "004-weighted",
    "alternatives table",
    "weighted residual y = F(x) + alpha x gives fine-grained control over "
    "skip strength (alpha = 1: the residual connection)",
    "alpha = 1: residual",
    "root of weighted() vs residual()",
    _weighted,
)

CLAIMS: tuple[Claim, ...] = tuple(_CLAIMS)
