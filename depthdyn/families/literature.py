"""Architectures from the literature as depth recurrences, derived from their update rules.

Each factory writes down the block's update exactly as its paper states it, linearised in one
eigenmode (``f ~ lam``), and lets depthdyn derive the recurrence:

* blocks with a state (two streams, a velocity, a lag) are composed from their half-steps
  into the block matrix ``M`` of ``s_{l+1} = M s_l``; the characteristic polynomial is
  ``det(r I - M)`` (Cayley-Hamilton: every state component satisfies it) and ``M`` stays
  attached as the native realisation ``block``, checked against the companion form by
  :func:`depthdyn.similarity`;
* Runge-Kutta blocks solve their stage equations for the stability function
  ``R(z) = P(z) / Q(z)``, giving ``Q x_{l+1} = P x_l``;
* multi-stream blocks (hyper-connections and their doubly stochastic variants) are the
  matrix recurrence ``x_{l+1} = (H_res + lam H_post^T H_pre) x_l`` on the streams.

Every docstring names the paper and the equation it follows. The stability statements the
papers make about their own blocks are checked in :mod:`depthdyn.claims.literature`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import sympy as sp

from ..errors import DegreeTooLargeError, ParameterError, RealisationError, ShapeError
from ..limits import MAX_SINKHORN_ROUNDS, MAX_STREAMS
from ..mixing import sinkhorn
from ..recurrence import REALS, Param, Realisation, Recurrence, r, to_exact
from .common import (
    DEPTH,
    FLOAT_TOLERANCE,
    LAM,
    NONNEG,
    POS,
    STEP,
    UNIT,
    stochastic_from_floats,
    exact_float,
    finish,
    matrix_arg,
    positive_int,
    vector_arg,
)

__all__ = [
    "lm_resnet",
    "revnet",
    "hamiltonian",
    "leapfrog",
    "antisymmetric",
    "runge_kutta",
    "rk2",
    "rk4",
    "momentum_sander",
    "deepnet",
    "branch_scaled",
    "hc_static",
    "mhc",
    "mhc_lite",
    "kromhc",
    "TABLEAUX",
    "stability_function",
]


# ------------------------------------------------------------------ block-matrix families
def _block(M, states, params, *, T=None, shift=0, name, description, source, rule, values) -> Recurrence:
    """The scalar recurrence of the block ``s_{l+1} = M s_l``, observed in its first state.

    The coefficients are those of ``det(r I - M)``. ``T`` maps the companion state
    ``w_{l+shift}`` to ``s_l``; without it, ``T = O^-1 J`` with ``O`` the observability
    matrix of the first state (rows ``e_1^T M^j``) and ``J`` the reversal, ``shift = p - 1``.
    """
    M = sp.ImmutableMatrix(M).applyfunc(sp.expand)
    p = M.shape[0]
    char = sp.Poly(sp.expand((r * sp.eye(p) - M).det(method="berkowitz")), r)
    if T is None:
        rows = [sp.eye(p)[0, :]]
        for _ in range(p - 1):
            rows.append(rows[-1] * M)
        O = sp.Matrix.vstack(*rows)
        if sp.expand(O.det()) == 0:
            raise RealisationError(f"{name}: the first state does not observe the whole block")
        J = sp.Matrix(p, p, lambda i, j: 1 if i + j == p - 1 else 0)
        T, shift = (O.inv() * J).applyfunc(sp.cancel), p - 1
    native = Realisation("block", states, M, sp.ImmutableMatrix(T), shift, rule)
    rec = Recurrence(coeffs=tuple(char.all_coeffs()), params=tuple(params), lam="lam", name=name,
                     description=description, source=source, native=(native,))
    return finish(rec, values)


def lm_resnet(**values) -> Recurrence:
    """Linear-multistep ResNet (LM-ResNet) of Lu, Zhong, Li and Dong (2018).

    .. math::

        u_{n+1} = (1 - k_n) u_n + k_n u_{n-1} + f(u_n)

    (Lu et al., *Beyond Finite Layer Neural Networks*, ICML 2018: the update rule of
    the LM-architecture). With ``f ~ lam`` the block acts on ``(u_n, u_{n-1})`` by
    ``M = [[1 - k + lam, k], [1, 0]]``, and ``det(r I - M)`` gives
    ``r^2 - (1 - k + lam) r - k = (r - 1)(r + k) - lam r``: a two-step method with
    ``rho(r) = (r - 1)(r + k)`` and ``sigma(r) = r``. ``k = 0`` is the ResNet (with a
    spurious root 0).

    Examples
    --------
    >>> lm_resnet().charpoly()
    -k + r**2 + r*(k - lam - 1)
    """
    k_p = Param("k", REALS, "trainable multistep weight k_n (initialised in [-0.1, 0] by Lu et al.)")
    lam, k = LAM.symbol, k_p.symbol
    return _block([[1 - k + lam, k], [1, 0]], ("u", "u_prev"), (LAM, k_p), T=sp.eye(2), shift=0,
                  name="lm_resnet", description="LM-ResNet: u' = (1 - k) u + k u_prev + f(u)",
                  source="Lu et al. 2018 (ICML), LM-architecture update",
                  rule="(u, u_prev)' = (u + f(u) - k (u - u_prev), u)", values=values)


def _coupled(lam_sign_text: str, name: str, description: str, source: str, rule: str, values) -> Recurrence:
    """Two streams updated in turn, ``y' = y + w``, ``w' = w + lam y'`` (half-steps composed)."""
    lam = LAM.symbol
    first = sp.Matrix([[1, 1], [0, 1]])  # y' = y + w
    second = sp.Matrix([[1, 0], [lam, 1]])  # w' = w + lam y'
    return _block(second * first, ("y", "w"), (LAM,), name=name, description=description,
                  source=source, rule=rule + lam_sign_text, values=values)


def revnet(**values) -> Recurrence:
    """Reversible residual block (RevNet) of Gomez, Ren, Urtasun and Grosse (2017).

    .. math::

        y_1 = x_1 + F(x_2), \\qquad y_2 = x_2 + G(y_1)

    (Gomez et al., *The Reversible Residual Network*, NeurIPS 2017: the reversible
    block equations). Linearised,
    ``F ~ a`` and ``G ~ b``; in the scaled stream ``w = a x_2`` the block is
    ``y' = y + w``, ``w' = w + lam y'`` with ``lam = a b``, the product of the two
    branches' gains. The composed block matrix ``[[1, 1], [lam, 1 + lam]]`` has
    determinant 1 (the block is volume preserving and invertible), and
    ``det(r I - M) = r^2 - (2 + lam) r + 1``.

    Examples
    --------
    >>> revnet().charpoly()
    r**2 + r*(-lam - 2) + 1
    """
    return _coupled("; lam = F'G'", "revnet", "RevNet: y1 = x1 + F(x2), y2 = x2 + G(y1)",
                    "Gomez et al. 2017 (NeurIPS), reversible block", "y' = y + w, w' = w + lam y' (w = F' x2)",
                    values)


def hamiltonian(**values) -> Recurrence:
    """Hamiltonian (Verlet) network of Haber and Ruthotto (2017) and Chang et al. (2018).

    .. math::

        y_{j+1} = y_j + h \\sigma(K_j z_j + b_j), \\qquad
        z_{j+1} = z_j - h \\sigma(K_j^T y_{j+1} + b_j)

    (Haber and Ruthotto, *Stable Architectures for Deep Neural Networks*, Inverse
    Problems 2017: the Hamiltonian network with its Verlet discretisation; Chang et al.,
    *Reversible Architectures for Arbitrarily Deep Residual Neural Networks*, AAAI 2018:
    the Hamiltonian reversible block).
    Linearised along one singular pair ``kappa`` of ``K`` (slopes of ``sigma`` absorbed)
    and in the scaled stream ``w = h kappa z``: ``y' = y + w``, ``w' = w + lam y'`` with
    ``lam = -(h kappa)^2 <= 0``. The recurrence is RevNet's with a non-positive ``lam``.

    Examples
    --------
    >>> hamiltonian().charpoly()
    r**2 + r*(-lam - 2) + 1
    """
    return _coupled("; lam = -(h kappa)^2", "hamiltonian",
                    "Hamiltonian (Verlet) network: y' = y + h s(K z), z' = z - h s(K^T y')",
                    "Haber & Ruthotto 2017 (Verlet network); Chang et al. 2018 (AAAI), Hamiltonian block",
                    "y' = y + w, w' = w + lam y' (w = h kappa z)", values)


def leapfrog(**values) -> Recurrence:
    """Leapfrog network of Chang et al. (2018) (second-order network of Haber and Ruthotto).

    .. math::

        Y_{j+1} = 2 Y_j - Y_{j-1} + h^2 \\sigma(K_j Y_j + b_j)

    (Chang et al., AAAI 2018: the leapfrog network; Haber and Ruthotto 2017: the
    second-order network discretised by leapfrog). Its block
    carries the velocity ``v_j = Y_j - Y_{j-1}``: ``v' = v + h^2 lam Y``, ``Y' = Y + v'``,
    whose determinant gives ``(r - 1)^2 = h^2 lam r``: the same recurrence as the
    ``C^2`` smooth network (``smooth(k=2)``). As a linear multistep method it is Störmer's
    rule; the family is named for the network, not the method.

    Examples
    --------
    >>> leapfrog().charpoly()
    r**2 + r*(-h**2*lam - 2) + 1
    """
    lam, h = LAM.symbol, STEP.symbol
    z = h**2 * lam
    velocity = sp.Matrix([[1, 0], [z, 1]])  # v' = v + h^2 lam Y
    position = sp.Matrix([[1, 1], [0, 1]])  # Y' = Y + v'
    return _block(position * velocity, ("Y", "v"), (LAM, STEP), T=[[1, 0], [1, -1]], shift=0,
                  name="leapfrog", description="leapfrog network: Y' = 2Y - Y_prev + h^2 f(Y)",
                  source="Chang et al. 2018 (AAAI), leapfrog network; Haber & Ruthotto 2017",
                  rule="v' = v + h^2 lam Y, Y' = Y + v' (v = Y - Y_prev)", values=values)


def momentum_sander(**values) -> Recurrence:
    """Momentum ResNet of Sander, Ablin, Blondel and Peyré (2021), ``gamma`` parametrisation.

    .. math::

        v_{n+1} = \\gamma v_n + (1 - \\gamma) f(x_n), \\qquad x_{n+1} = x_n + v_{n+1}

    (Sander et al., *Momentum Residual Neural Networks*, ICML 2021: the forward rule of
    the Momentum ResNet), ``0 <= gamma
    <= 1``. Composing the two half-steps gives the block ``[[1 + (1-gamma) lam, gamma],
    [(1-gamma) lam, gamma]]`` on ``(x, v)``, and its determinant
    ``r^2 - (1 + gamma + (1 - gamma) lam) r + gamma``: the post's momentum block with
    ``m = gamma`` and ``eta = 1 - gamma``. The block's determinant is ``gamma``.

    Examples
    --------
    >>> momentum_sander().charpoly()
    gamma + r**2 + r*(gamma*lam - gamma - lam - 1)
    """
    g_p = Param("gamma", UNIT, "momentum term gamma in [0, 1]")
    lam, g = LAM.symbol, g_p.symbol
    velocity = sp.Matrix([[1, 0], [(1 - g) * lam, g]])  # v' = gamma v + (1 - gamma) lam x
    position = sp.Matrix([[1, 1], [0, 1]])  # x' = x + v'
    return _block(position * velocity, ("x", "v"), (LAM, g_p), T=[[1, 0], [1, -1]], shift=0, name="momentum_sander",
                  description="Momentum ResNet: v' = gamma v + (1 - gamma) f(x), x' = x + v'",
                  source="Sander et al. 2021 (ICML), Momentum ResNet forward rule",
                  rule="v' = gamma v + (1 - gamma) lam x, x' = x + v' (v = x - x_prev)", values=values)


# ------------------------------------------------------------------ first-order blocks
def _first(factor, params, *, name, description, source, values, den=1) -> Recurrence:
    rec = Recurrence(coeffs=(den, -factor), params=tuple(params), lam="lam", name=name,
                     description=description, source=source)
    return finish(rec, values)


def antisymmetric(**values) -> Recurrence:
    """Antisymmetric residual block of Chang, Chen, Haber and Chi (2019).

    .. math::

        h_t = h_{t-1} + \\epsilon \\sigma\\big((W - W^T - \\gamma I) h_{t-1} + V x_t + b\\big)

    (Chang, Chen, Haber and Chi, *AntisymmetricRNN*, ICLR 2019: the AntisymmetricRNN
    update with diffusion). Here ``lam`` is an
    eigenvalue of ``W - W^T`` (purely imaginary for a real ``W``; slopes of ``sigma``
    absorbed), so the block is ``x' = (1 + eps (lam - gamma)) x``: forward Euler on
    eigenvalues ``i omega - gamma``, the diffusion ``gamma >= 0`` moving them left.

    Examples
    --------
    >>> antisymmetric().charpoly()
    eps*gamma - eps*lam + r - 1
    """
    eps = Param("eps", POS, "step size epsilon")
    gamma = Param("gamma", NONNEG, "diffusion gamma >= 0")
    factor = 1 + eps.symbol * (LAM.symbol - gamma.symbol)
    return _first(factor, (LAM, eps, gamma), name="antisymmetric",
                  description="antisymmetric block: x' = x + eps s((W - W^T - gamma I) x)",
                  source="Chang et al. 2019 (ICLR, AntisymmetricRNN), update with diffusion", values=values)


def deepnet(*, arch: str = "single", **values) -> Recurrence:
    """DeepNet's DeepNorm residual ``x_{l+1} = LN(alpha x_l + f(x_l))`` (Wang et al. 2022).

    (Wang et al., *DeepNet: Scaling Transformers to 1,000 Layers*, 2022: the DeepNorm
    update and its table of constants: ``alpha = (2N)^(1/4)`` for an encoder-only or decoder-only model of ``N``
    layers (``arch="single"``); ``alpha = 0.81 (N^4 M)^(1/16)`` for the encoder
    (``arch="encoder"``) and ``alpha = (3M)^(1/4)`` for the decoder (``arch="decoder"``)
    of an ``N``-layer-encoder / ``M``-layer-decoder model.) ``LN`` only rescales all modes
    together; it is linearised as the division by ``alpha``, its scale while the branch
    is small, so one mode follows ``x_{l+1} = (1 + lam / alpha) x_l``.

    Examples
    --------
    >>> deepnet().charpoly()
    r - 1 - 2**(3/4)*lam/(2*N**(1/4))
    """
    N = Param("N", POS, "number of (encoder) layers")
    M = Param("M", POS, "number of decoder layers")
    n, m = N.symbol, M.symbol
    alphas = {"single": ((2 * n) ** sp.Rational(1, 4), (N,)),
              "encoder": (sp.Rational(81, 100) * (n**4 * m) ** sp.Rational(1, 16), (N, M)),
              "decoder": ((3 * m) ** sp.Rational(1, 4), (M,))}
    if arch not in alphas:
        raise ParameterError(f"arch must be one of {sorted(alphas)}, got {arch!r}")
    alpha, params = alphas[arch]
    return _first(1 + LAM.symbol / alpha, (LAM, *params), name="deepnet",
                  description=f"DeepNorm ({arch}): x' = LN(alpha x + f(x)), alpha = {alpha}",
                  source="Wang et al. 2022 (DeepNet), DeepNorm and its alpha table", values=values)


def branch_scaled(*, power=sp.Rational(1, 2), **values) -> Recurrence:
    """Residual block with its branch scaled by ``L^(-power)``: ``x' = x + f(x) / L^power``.

    ``power = 1/2`` is the ``1/sqrt(L)`` branch multiplier (Hanin and Rolnick 2018, *How to
    Start Training: The Effect of Initialization and Architecture*; the depth-muP
    multiplier of Yang, Yu, Zhu and Hayou 2023, *Tensor Programs VI*); ``power = 1`` the
    ``1/L`` scaling of the ODE limit (000 §1, ``residual(scaled=True)``). In one mode
    ``x_{l+1} = (1 + lam L^(-power)) x_l``.

    Examples
    --------
    >>> branch_scaled().charpoly()
    r - 1 - lam/sqrt(L)
    """
    power = to_exact(power)
    if not (power.is_Rational and power > 0):
        raise ParameterError(f"power must be a positive rational, got {power}")
    return _first(1 + LAM.symbol * DEPTH.symbol ** (-power), (LAM, DEPTH), name="branch_scaled",
                  description=f"branch scaled by L^-{power}: x' = x + f(x) / L^{power}",
                  source="Hanin & Rolnick 2018; Yang et al. 2023 (depth-muP); 000 §1", values=values)


# ------------------------------------------------------------------ Runge-Kutta blocks
_h = sp.Rational(1, 2)
#: Butcher tableaux ``(A, b)`` by name.
TABLEAUX = {
    "euler": ([[0]], [1]),
    "midpoint": ([[0, 0], [_h, 0]], [0, 1]),
    "heun": ([[0, 0], [1, 0]], [_h, _h]),
    "ralston": ([[0, 0], [sp.Rational(2, 3), 0]], [sp.Rational(1, 4), sp.Rational(3, 4)]),
    "rk3": ([[0, 0, 0], [_h, 0, 0], [-1, 2, 0]], [sp.Rational(1, 6), sp.Rational(2, 3), sp.Rational(1, 6)]),
    "rk4": ([[0, 0, 0, 0], [_h, 0, 0, 0], [0, _h, 0, 0], [0, 0, 1, 0]],
            [sp.Rational(1, 6), sp.Rational(1, 3), sp.Rational(1, 3), sp.Rational(1, 6)]),
    "backward_euler": ([[1]], [1]),
    "implicit_midpoint": ([[_h]], [1]),
}


def stability_function(A, b, z: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
    """``(P, Q)`` with ``R(z) = P(z) / Q(z)``, from the stage equations of the tableau.

    The stages of ``x' = x + h sum_i b_i k_i``, ``k_i = f(x + h sum_j a_ij k_j)`` with
    ``f ~ lam`` and ``z = h lam`` solve ``(I - z A) k = lam x 1``; then ``x' = R(z) x``.

    Examples
    --------
    >>> z = sp.Symbol("z")
    >>> stability_function(*TABLEAUX["implicit_midpoint"], z)
    (z/2 + 1, 1 - z/2)
    """
    A, b = sp.Matrix(A), sp.Matrix(b)
    s = A.shape[0]
    if A.shape != (s, s) or b.shape != (s, 1):
        raise ShapeError(f"a Butcher tableau needs a square A and len(b) = {s}, got {A.shape}, {b.shape}")
    stages = (sp.eye(s) - z * A).LUsolve(sp.ones(s, 1))  # k / (lam x)
    R = sp.cancel(sp.together(1 + z * (b.T * stages)[0, 0]))
    P, Q = sp.fraction(R)
    lead = sp.Poly(Q, z).TC()  # normalise Q(0) = 1
    return sp.expand(P / lead), sp.expand(Q / lead)


def check_stages(A) -> None:
    """Refuse a tableau past the exact-matrix limit from its shape alone, before converting
    its entries (a 2000 x 2000 list took 105 s and 373 MB to be refused after conversion)."""
    shape = getattr(A, "shape", None)
    rows = shape[0] if shape else len(A) if isinstance(A, (list, tuple)) else None
    if rows is not None and rows > MAX_STREAMS:
        raise DegreeTooLargeError(f"a Butcher tableau with {rows} stages is too large for exact work "
                                  f"(at most {MAX_STREAMS} stages)")


def runge_kutta(*, tableau: str = "rk4", A=None, b=None, **values) -> Recurrence:
    """A block that takes one Runge-Kutta step of ``dx/dt = f(x)``: ``Q(h lam) x' = P(h lam) x``.

    ``tableau`` names one of :data:`TABLEAUX` (``euler``, ``midpoint``, ``heun``,
    ``ralston``, ``rk3``, ``rk4``, ``backward_euler``, ``implicit_midpoint``), or ``A`` and
    ``b`` give any Butcher tableau. The stability function ``R = P/Q`` is derived from the
    stage equations (:func:`stability_function`). RK-stage networks: Lu et al. 2018
    (PolyNet, FractalNet as RK schemes); Zhu, Chang and Fu 2018 (*Convolutional Neural
    Networks Combined with Runge-Kutta Methods*: the RK block); Butcher, *Numerical
    Methods for ODEs* (the tableau and ``R(z)``).

    Examples
    --------
    >>> runge_kutta(tableau="heun").charpoly()
    -h**2*lam**2/2 - h*lam + r - 1
    """
    if A is None and b is None:
        if tableau not in TABLEAUX:
            raise ParameterError(f"tableau must be one of {sorted(TABLEAUX)}, got {tableau!r}")
        A, b, label = *TABLEAUX[tableau], tableau
    elif A is None or b is None:
        raise ParameterError("give both A and b (a Butcher tableau), or a tableau name")
    else:
        check_stages(A)
        A = matrix_arg(A, "A")
        b = list(vector_arg(b, "b", A.shape[0]))
        label = f"A = {sp.sstr(A.tolist())}, b = {sp.sstr(b)}"  # read back by symbolic.butcher
    A = sp.Matrix(A).applyfunc(to_exact)
    if A.free_symbols or any(to_exact(v).free_symbols for v in b):
        raise ParameterError("the Butcher tableau must have numeric entries")
    z = sp.Dummy("z")
    P, Q = stability_function(A, [to_exact(v) for v in b], z)
    hl = STEP.symbol * LAM.symbol
    return _first(P.subs(z, hl), (LAM, STEP), den=Q.subs(z, hl), name="runge_kutta",
                  description=f"Runge-Kutta block ({label}): x' = R(h lam) x",
                  source="Zhu, Chang & Fu 2018 (RK block); Lu et al. 2018; Butcher tableau",
                  values=values)


def rk2(**values) -> Recurrence:
    """Explicit-midpoint (RK2) block ``x' = x + h f(x + h f(x)/2)``: ``runge_kutta(tableau="midpoint")``.

    ``R(z) = 1 + z + z^2/2``. Source as :func:`runge_kutta`.
    """
    return replace(runge_kutta(tableau="midpoint", **values), name="rk2")


def rk4(**values) -> Recurrence:
    """Classical RK4 block: ``runge_kutta(tableau="rk4")``, ``R(z) = sum_{j<=4} z^j / j!``.

    Source as :func:`runge_kutta`.
    """
    return replace(runge_kutta(tableau="rk4", **values), name="rk4")


# ------------------------------------------------------------------ multi-stream blocks
def _streams(H, pre, post, params, *, name, description, source, values) -> Recurrence:
    """``x_{l+1} = (H_res + lam H_post^T H_pre) x_l`` on the streams (one channel mode)."""
    n = H.shape[0]
    M = sp.ImmutableMatrix(H) + LAM.symbol * sp.ImmutableMatrix(post).T * sp.ImmutableMatrix(pre)
    rec = Recurrence(coeffs=(sp.eye(n), -M), params=(LAM, *params), lam="lam", name=name,
                     description=description, source=source)
    return finish(rec, values)


def _gates(n: int, H_pre, H_post):
    """``H_pre`` and ``H_post`` rows; the defaults are mHC's gates at logit 0 (1/2 and 1)."""
    pre = vector_arg(H_pre, "H_pre", n) if H_pre is not None else sp.ImmutableMatrix([[_h] * n])
    post = vector_arg(H_post, "H_post", n) if H_post is not None else sp.ImmutableMatrix([[1] * n])
    return pre, post


def hc_static(*, n: int = 2, layer: int = 0, A_r=None, A_m=None, B=None, **values) -> Recurrence:
    """Static hyper-connections of Zhu et al. (2024/2025).

    The hyper-connection matrix ``[[0, B], [A_m, A_r]]`` acts as
    ``H' = B^T T(A_m^T H) + A_r^T H`` on ``n`` streams (Zhu et al., *Hyper-Connections*,
    ICLR 2025: the hyper-connection matrix and its forward rule); one channel mode is
    ``x' = (A_r^T + lam B^T A_m^T) x``. The defaults are the paper's initialisation for
    layer ``k``: ``A_r = I``,
    ``A_m = e_(k mod n)``, ``B = 1``. ``A_r`` is an ``n x n`` matrix, ``A_m`` and ``B``
    rows of ``n`` entries.

    Examples
    --------
    >>> sp.factor(hc_static(n=2).charpoly())
    (r - 1)*(-lam + r - 1)
    """
    n = positive_int(n, "n", MAX_STREAMS)
    if isinstance(layer, bool) or not isinstance(layer, int) or layer < 0:
        raise ParameterError(f"layer must be a non-negative integer, got {layer!r}")
    Ar = matrix_arg(A_r, "A_r", n) if A_r is not None else sp.eye(n)
    Am = vector_arg(A_m, "A_m", n) if A_m is not None else sp.ImmutableMatrix([[int(i == layer % n) for i in range(n)]])
    Bv = vector_arg(B, "B", n) if B is not None else sp.ImmutableMatrix([[1] * n])
    if any(M.free_symbols for M in (Ar, Am, Bv)):
        raise ParameterError("static hyper-connection matrices must be numeric")
    return _streams(sp.ImmutableMatrix(Ar).T, Am, Bv, (), name="hc_static",
                    description=f"static hyper-connections, {n} streams: x' = (A_r^T + lam B^T A_m^T) x",
                    source="Zhu et al. 2025 (ICLR, Hyper-Connections), static HC and its initialisation", values=values)


def mhc(*, n: int = 2, seed: int = 0, iterations: int = 20, logits=None, H_pre=None, H_post=None,
        **values) -> Recurrence:
    """Manifold-constrained hyper-connections (mHC) of Xie et al. (2025).

    ``H_res = SinkhornKnopp(exp(logits))`` with ``t_max = 20`` iterations, ``H_pre =
    sigmoid(.)`` and ``H_post = 2 sigmoid(.)`` (Xie et al., *mHC: Manifold-Constrained
    Hyper-Connections*, 2025: the manifold projection of the three mappings). ``H_res`` is computed in float64 as the
    network computes it (logits drawn from ``seed`` unless given) and read exactly by
    :func:`~depthdyn.families.common.stochastic_from_floats`: row (column) sums within
    ``FLOAT_TOLERANCE = 1e-12`` of 1 are made 1 exactly through the last column (row), so a
    converged run is doubly stochastic exactly, as the projection means it to be, and a run
    stopped early keeps its row residual (its columns, normalised last, are exact). The
    gates default to logit 0
    (``H_pre = 1/2``, ``H_post = 1``). One channel mode:
    ``x' = (H_res + lam H_post^T H_pre) x``.
    """
    n = positive_int(n, "n", MAX_STREAMS)
    iterations = positive_int(iterations, "iterations", MAX_SINKHORN_ROUNDS)
    if logits is None:
        logits = np.random.default_rng(seed).normal(size=(n, n))
    else:
        logits = np.array(matrix_arg(logits, "logits", n).evalf(), dtype=float)
    H, _ = stochastic_from_floats(sinkhorn(logits, iterations))
    pre, post = _gates(n, H_pre, H_post)
    return _streams(H, pre, post, (), name="mhc",
                    description=f"mHC, {n} streams: H_res = Sinkhorn-Knopp({iterations} steps) of exp(logits)",
                    source="Xie et al. 2025 (mHC), Sinkhorn-Knopp projection", values=values)


def _permutations(n: int) -> list[sp.ImmutableMatrix]:
    eye = sp.eye(n)
    return [sp.ImmutableMatrix.hstack(*[eye[:, j] for j in perm]) for perm in itertools.permutations(range(n))]


def mhc_lite(*, n: int = 2, weights=None, H_pre=None, H_post=None, **values) -> Recurrence:
    """mHC-lite of Yang and Gao (2026): ``H_res`` a convex combination of permutation matrices.

    ``H_res = sum_k w_k P_k`` over the ``n!`` permutation matrices with softmax weights
    (Yang and Gao, *mHC-lite: You Don't Need 20 Sinkhorn-Knopp Iterations*, 2026: the
    Birkhoff-von Neumann reparametrisation), exactly doubly stochastic. ``weights`` (``n!`` non-negative
    numbers summing to 1, in :func:`itertools.permutations` order; floats are read by
    :func:`~depthdyn.families.common.exact_float`, and a float sum within ``1e-12`` of 1 is
    made exact through the last weight) or, without them,
    symbolic ``w_1 .. w_(n!-1)`` in ``[0, 1]`` with the last weight ``1 - sum``
    (``n <= 3``). Gates as in :func:`mhc`.

    Examples
    --------
    >>> sp.factor(mhc_lite(n=2).charpoly())
    (-lam + r - 1)*(r - 2*w_1 + 1)
    """
    n = positive_int(n, "n", MAX_STREAMS)
    perms = _permutations(n) if math.factorial(n) <= 720 else None
    params: tuple = ()
    if weights is None:
        if n > 3:
            raise ParameterError("symbolic weights are limited to n <= 3; give weights=[...] for larger n")
        params = tuple(Param(f"w_{i + 1}", UNIT, "weight of a permutation matrix")
                       for i in range(len(perms) - 1))
        w = [p.symbol for p in params] + [1 - sum(p.symbol for p in params)]
    else:
        if perms is None:
            raise ParameterError(f"n={n} has {math.factorial(n)} permutations; mHC-lite is limited to n <= 6")
        w = [exact_float(v) for v in (weights if isinstance(weights, (list, tuple)) else [weights])]
        if len(w) != len(perms):
            raise ShapeError(f"weights must have n! = {len(perms)} entries, got {len(w)}")
        if not any(v.free_symbols for v in w) and 0 < abs(sum(w) - 1) <= FLOAT_TOLERANCE:
            w[-1] = 1 - sum(w[:-1])  # float weights (a softmax): their sum is 1 to rounding, made exact
        if any(v.free_symbols or v < 0 for v in w) or sp.nsimplify(sum(w)) != 1:
            raise ParameterError("weights must be non-negative numbers summing to 1 (a convex combination)")
    H = sum((wk * P for wk, P in zip(w, perms, strict=True)), sp.zeros(n))
    pre, post = _gates(n, H_pre, H_post)
    return _streams(sp.ImmutableMatrix(H).applyfunc(sp.expand), pre, post, params, name="mhc_lite",
                    description=f"mHC-lite, {n} streams: H_res = sum_k w_k P_k (exact Birkhoff)",
                    source="Yang & Gao 2026 (mHC-lite), Birkhoff-von Neumann reparametrisation", values=values)


def kromhc(*, factors: int = 2, H_pre=None, H_post=None, **values) -> Recurrence:
    """KromHC of Zhou, Gu, Iacovides and Mandic (2026): ``H_res`` a Kronecker product.

    ``H_res = U_1 (x) U_2 (x) ... (x) U_K`` with small doubly stochastic factors (Zhou et
    al., *KromHC: Manifold-Constrained Hyper-Connections with Kronecker-Product Residual
    Matrices*, 2026: the Kronecker-product residual matrix); here each factor is the general ``2 x 2`` one,
    ``U_i = [[a_i, 1 - a_i], [1 - a_i, a_i]]``, so ``n = 2^factors`` streams. Gates as in
    :func:`mhc`.

    Examples
    --------
    >>> sp.factor(kromhc(factors=1, H_pre=[1, 1], H_post=[1, 1]).charpoly())
    (-2*a_1 + r + 1)*(-2*lam + r - 1)
    """
    factors = positive_int(factors, "factors", 3)
    params = tuple(Param(f"a_{i + 1}", UNIT, "diagonal weight of a 2 x 2 doubly stochastic factor")
                   for i in range(factors))
    H = sp.Matrix([[1]])
    for p in params:
        a = p.symbol
        H = sp.kronecker_product(H, sp.Matrix([[a, 1 - a], [1 - a, a]]))
    n = H.shape[0]
    pre, post = _gates(n, H_pre, H_post)
    return _streams(sp.ImmutableMatrix(H), pre, post, params, name="kromhc",
                    description=f"KromHC, {n} streams: H_res = kron of {factors} 2x2 doubly stochastic factors",
                    source="Zhou et al. 2026 (KromHC), Kronecker-product residual matrix", values=values)
