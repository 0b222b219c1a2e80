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
from .base import Claim, Outcome, compare_exact, ensure, stated_expr, stated_matrix, verdict

__all__ = ["SOURCE", "CLAIMS"]

SOURCE = "004_3517e0990818788b.txt"
_CLAIMS: list[Claim] = []
_GELU_TOL = 1e-3  # the tolerance at which "GELU approximation" is read as holding


def _add(id, section, statement, stated, method, check, premises=None, mutant=None, reading_of="") -> None:
    _CLAIMS.append(Claim(id, SOURCE, section, statement, stated, method, check, premises or {}, mutant,
                         reading_of))


def _stated_matrix(text: str, names: dict) -> sp.Matrix:
    return stated_matrix(text, names, (("dF/dx", "J"), ("W_s", "Ws")))


def _xs(n: int = 3):
    xs = sp.Matrix(sp.symbols(f"x1:{n + 1}"))
    F = sp.Matrix([sp.Function(f"F{i + 1}")(*xs) for i in range(n)])
    return xs, F


def _jacobian(cl):
    xs, F = _xs()
    J = (F + xs).jacobian(xs)
    ok = compare_exact(_stated_matrix(cl.stated, {"J": F.jacobian(xs), "I": sp.eye(3)}), J).holds
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
    mutant={"stated": "dF/dx - I"},
)


def _gradient(cl):
    xs, F = _xs()
    ys = sp.Matrix(sp.symbols("y1:4"))
    Lf = sp.Function("Loss")(*ys)
    y = F + xs
    dLdy = sp.Matrix([[sp.diff(Lf, v) for v in ys]]).subs(dict(zip(ys, y, strict=True)), simultaneous=True)
    direct = sp.Matrix([[sp.diff(Lf.subs(dict(zip(ys, y, strict=True)), simultaneous=True), v) for v in xs]])
    inner = cl.stated.split("(", 1)[1].rsplit(")", 1)[0]
    ok = compare_exact(dLdy * _stated_matrix(inner, {"J": F.jacobian(xs), "I": sp.eye(3)}), direct).holds
    return Outcome("dL/dx = dL/dy (dF/dx + I) (row gradient, n = 3, undefined L and F)", verdict(ok))


_add(
    "004-gradient-identity",
    "formula",
    "dL/dx = dL/dy (dF/dx + I)",
    "dL/dy (dF/dx + I)",
    "chain rule by SymPy on L(F(x) + x) with undefined L, F",
    _gradient,
    mutant={"stated": "dL/dy (dF/dx - I)"},
)


def _direct_path(cl):
    """Does dL/dx = dL/dy (dF/dx + I) keep every direction of dL/dy for each premise Jacobian?"""
    rows, lost = [], []
    for J in cl.premises["jacobians"]:
        J = sp.Matrix(J)
        M = J + sp.eye(J.shape[0])
        kernel = M.T.nullspace()  # dL/dy in here gives dL/dx = 0
        rows.append(f"dF/dx = {J.tolist()}: det(dF/dx + I) = {M.det()}")
        if kernel:
            lost.append(f"dF/dx = {J.tolist()}, dL/dy = {list(kernel[0])}: dL/dx = 0")
    (root,) = roots(residual().subs(lam=-1)).values()
    ensure(root == 0, "residual() at lam = -1 is the zero map")
    if not lost:
        return Outcome("; ".join(rows), "holds", "dF/dx + I is invertible for every Jacobian given, so no "
                       "direction of dL/dy is lost in this layer")
    return Outcome("; ".join(lost), "fails",
                   "dL/dx = dL/dy (dF/dx + I) vanishes for dL/dy in the left kernel of dF/dx + I, i.e. whenever "
                   "dF/dx has an eigenvalue -1 (one mode of residual() at lam = -1 is the zero map); over many "
                   "layers the product of (I + dF/dx) can still vanish or explode")


_add(
    "004-gradient-vanishing-F",
    "overview",
    "even if dF/dx vanishes entirely, the gradient still flows through the identity branch",
    "dL/dx = dL/dy when dF/dx = 0",
    "left kernel of dF/dx + I for dF/dx = 0 (exact)",
    _direct_path,
    premises={"jacobians": ([[0, 0], [0, 0]],)},
    mutant={"premises": {"jacobians": ([[-1, 0], [0, 0]],)}},
)


_add(
    "004-gradient-always-flows",
    "overview",
    "the + I term means the gradient always has a direct path back to earlier layers, regardless of what F "
    "does",
    "dL/dx != 0 for any F",
    "left kernel of dF/dx + I for dF/dx = 0, -I and diag(-1, 3) (exact); residual() at lam = -1",
    _direct_path,
    premises={"jacobians": ([[0, 0], [0, 0]], [[-1, 0], [0, -1]], [[-1, 0], [0, 3]])},
    mutant={"premises": {"jacobians": ([[0, 0], [0, 0]], [[2, 0], [0, 3]])}},
    reading_of="004-gradient-always-flows",
)


def _gelu(cl):
    xs = np.linspace(-8, 8, 4001)
    c = np.sqrt(2.0 / np.pi)
    approx = xs * 0.5 * (1.0 + np.tanh(c * (xs + 0.044715 * xs**3)))  # the page's numpy code
    reference = {"x Phi(x)": lambda x: x * (1 + mpmath.erf(x / mpmath.sqrt(2))) / 2,
                 "x sigmoid(x)": lambda x: x / (1 + mpmath.exp(-x))}[cl.stated]
    with mpmath.workdps(30):
        exact = np.array([float(reference(mpmath.mpf(x))) for x in xs])
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
    mutant={"stated": "x sigmoid(x)"},
)


def _rezero(cl):
    rec = rezero()
    a, lam = rec.symbols["a"], rec.lam_symbol
    (root,) = roots(rec).values()
    a0 = cl.premises["a0"]
    ok = compare_exact(1, root.xreplace({a: a0})).holds
    return Outcome(
        f"rezero(): r = {sp.sstr(root)}; at a = {a0}, r = {sp.sstr(root.xreplace({a: a0}))} for every lam",
        verdict(ok and root.has(lam)),
    )


_add(
    "004-rezero",
    "alternatives table",
    "ReZero y = x + alpha F(x) with alpha initialised to 0: each layer starts as identity",
    "identity",
    "root of rezero() at a = 0",
    _rezero,
    premises={"a0": 0}, mutant={"premises": {"a0": 1}},
)


def _weighted(cl):
    rec = weighted()
    a = rec.symbols["a"]
    (root,) = roots(rec).values()
    (res_root,) = roots(residual()).values()
    at = stated_expr(cl.stated.split(":")[0].split("=")[1])
    ok = compare_exact(res_root, root.xreplace({a: at})).holds
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
    mutant={"stated": "alpha = 2: residual"},
)

def _projection(cl):
    n_in, n_out = 3, 2
    xs = sp.Matrix(sp.symbols(f"x1:{n_in + 1}"))
    F = sp.Matrix([sp.Function(f"F{i + 1}")(*xs) for i in range(n_out)])
    Ws = sp.Matrix(n_out, n_in, sp.symbols(f"w1:{n_out * n_in + 1}"))
    J = (F + Ws * xs).jacobian(xs)
    names = {"J": F.jacobian(xs), "Ws": Ws, "I": sp.eye(n_in) if n_in == n_out else sp.zeros(n_out, n_in)}
    ok = compare_exact(_stated_matrix(cl.stated, names), J).holds
    return Outcome(
        f"d(F(x) + W_s x)/dx = dF/dx + W_s ({n_out} x {n_in}, undefined F)",
        verdict(ok),
        "no identity term: with a projection the gradient path through the shortcut is W_s^T dL/dy, which "
        "vanishes for dL/dy in the left kernel of dF/dx + W_s (a 2 x 3 W_s has rank <= 2 < 3 inputs)",
    )


_add(
    "004-projection-jacobian",
    "formula (projection)",
    "with a projection, y = F(x) + W_s x (W_s matches dimensions); its Jacobian is then dF/dx + W_s",
    "dF/dx + W_s",
    "SymPy Jacobian of F(x) + W_s x with undefined F and a symbolic 2 x 3 W_s",
    _projection,
    mutant={"stated": "dF/dx + I"},
)


def _numpy_shapes(cl):
    rng = np.random.default_rng(0)
    B, D = cl.premises["B"], cl.premises["D"]
    x = rng.normal(size=(B, D))
    W1, b1, W2, b2 = rng.normal(size=(D, 4 * D)), rng.normal(size=4 * D), rng.normal(size=(4 * D, D)), rng.normal(size=D)
    mu, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)  # the page's listing, line by line
    hh = ((x - mu) / np.sqrt(var + 1e-5)) @ W1 + b1
    hh = hh * 0.5 * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (hh + 0.044715 * hh**3)))
    out = x + (hh @ W2 + b2)
    stated = tuple(int(stated_expr(t, "B", "D").subs({sp.Symbol("B"): B, sp.Symbol("D"): D}))
                   for t in cl.stated.strip("()").split(","))
    return Outcome(f"output shape {out.shape} for B = {B}, D = {D}; hidden {hh.shape}", verdict(out.shape == stated),
                   "the layer norm normalises each sample over its features (axis -1), without a learned scale")


_add(
    "004-numpy-listing-shapes",
    "numpy code",
    "residual_block_forward with x: (B, D), W1: (D, 4D), b1: (4D,), W2: (4D, D), b2: (D,) returns (B, D)",
    "(B, D)",
    "the listing transcribed and run on random float64 inputs, B = 5, D = 3",
    _numpy_shapes,
    premises={"B": 5, "D": 3},
    mutant={"stated": "(B, 4*D)"},
)


def _repeated(cl):
    L = cl.premises["layers"]
    rows, ok = [], True
    for c in cl.premises["factors"]:
        g = sp.Rational(c) ** L  # the gradient scale after L layers that each multiply by c
        side = "vanish" if c < 1 else "explode"
        small, large = g < sp.Rational(1, 1000), g > 1000
        ok = ok and (small if side == "vanish" else large)
        rows.append(f"{c}^{L} = {sp.N(g, 4)} ({side})")
    return Outcome("; ".join(rows), verdict(ok),
                   "read as: a factor below 1 shrinks the gradient by more than 1000 over the layers, a factor "
                   "above 1 grows it by more than 1000 (exact powers)")


_add(
    "004-vanish-explode",
    "overview",
    "without residual connections, gradients through a 100-layer network multiplied by numbers < 1 (> 1) "
    "repeatedly vanish (explode)",
    "vanish below 1, explode above 1",
    "exact powers c^100 of the factors 0.9 and 1.1",
    _repeated,
    premises={"layers": 100, "factors": (sp.Rational(9, 10), sp.Rational(11, 10))},
    mutant={"premises": {"layers": 5}},
)

CLAIMS: tuple[Claim, ...] = tuple(_CLAIMS)
