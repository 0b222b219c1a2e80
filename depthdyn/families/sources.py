"""The families of the source documents as factory functions returning a :class:`~depthdyn.Recurrence`.

Every factory linearises its block, ``f(x) ~ lam x`` in one eigenmode (``lam`` is the
eigenvalue of the block's Jacobian; for matrix families it acts as ``lam * I`` on the
features), and returns the resulting linear depth recurrence. Keyword-only arguments
are structural (order ``k``, number of streams ``n`` ...); any other keyword is a value
for one of the recurrence's symbolic parameters and is substituted exactly.

The post's blocks (000), Hauser's C^k and dense networks (002), Lechner's entangled maps (001)
and hyper-connections (003); the registry of every family is :mod:`depthdyn.families.registry`.
"""

from __future__ import annotations

import random

import sympy as sp

from ..errors import DegreeTooLargeError, ParameterError, ParseError
from ..limits import MAX_ORDER, MAX_STREAMS
from ..parse import as_sympy, free_names, parse_expr
from ..recurrence import COMPLEXES, REALS, Param, Realisation, Recurrence, r, signed_pascal
from .common import (
    DEPTH,
    LAM,
    NONNEG,
    STEP,
    UNIT,
    finish,
    matrix_arg,
    positive_int,
    stochastic_arg,
    vector_arg,
)

__all__ = [
    "residual",
    "rezero",
    "weighted",
    "highway",
    "momentum",
    "oscillator",
    "smooth",
    "dense",
    "entangled",
    "hyper_connection",
    "general",
    "from_coefficients",
]


def _first_order(factor: sp.Expr, params, name, description, source, values) -> Recurrence:
    rec = Recurrence(
        coeffs=(1, -factor), params=params, lam="lam", name=name, description=description, source=source
    )
    return finish(rec, values)


def residual(*, scaled: bool = False, **values) -> Recurrence:
    """Plain or pre-norm residual block ``x_{l+1} = x_l + f(LN(x_l))``.

    Linearised, ``x_{l+1} = (1 + lam) x_l`` (pre-normalisation only rescales ``lam``).
    With ``scaled=True`` the block is ``f(x) = (lam/L) x`` as in the first-order toy,
    so ``x_L -> e^lam x_0`` as ``L -> oo`` (``lam`` plays the role of ``alpha``).

    Source: 000 §1 (``x_{l+1} = x_l + f_l(x_l)``, ``f_l(x) = alpha x / L``); 004
    (pre-norm variant ``y = x + F(LayerNorm(x))``); 002 eq. 2.

    Examples
    --------
    >>> residual().charpoly()
    -lam + r - 1
    """
    lam = LAM.symbol
    if scaled:
        L = DEPTH.symbol
        return _first_order(
            1 + lam / L,
            (LAM, DEPTH),
            "residual",
            "residual block scaled by 1/L: x[l+1] = (1 + lam/L) x[l]",
            "000 §1",
            values,
        )
    return _first_order(
        1 + lam,
        (LAM,),
        "residual",
        "plain / pre-norm residual: x[l+1] = x[l] + lam x[l]",
        "000 §1; 004; 002 eq. 2",
        values,
    )


def rezero(**values) -> Recurrence:
    """ReZero block ``x_{l+1} = x_l + a f(x_l)`` (``a`` initialised at 0).

    Linearised: ``x_{l+1} = (1 + a lam) x_l``. Source: 004 (Alternatives table).
    """
    a = Param("a", REALS, "residual gain, initialised at 0")
    return _first_order(
        1 + a.symbol * LAM.symbol,
        (LAM, a),
        "rezero",
        "ReZero: x[l+1] = x[l] + a lam x[l]",
        "004 (ReZero)",
        values,
    )


def weighted(**values) -> Recurrence:
    """Weighted residual ``x_{l+1} = a x_l + f(x_l)``.

    Linearised: ``x_{l+1} = (a + lam) x_l``. Source: 004 (weighted residual,
    ``y = F(x) + alpha x``); 001 eq. 2 with the scalar skip ``Gamma = a I``.
    """
    a = Param("a", REALS, "skip weight")
    return _first_order(
        a.symbol + LAM.symbol,
        (LAM, a),
        "weighted",
        "weighted residual: x[l+1] = a x[l] + lam x[l]",
        "004 (weighted residual); 001 eq. 2",
        values,
    )


def highway(**values) -> Recurrence:
    """Highway block ``x_{l+1} = g H(x_l) + (1 - g) x_l`` with the gate ``g`` a parameter.

    ``lam`` is the eigenvalue of the transform ``H``; linearised
    ``x_{l+1} = (1 - g + g lam) x_l``. Source: 004 (highway networks); 001 §2.
    """
    g = Param("g", UNIT, "transform gate in [0, 1]")
    return _first_order(
        1 - g.symbol + g.symbol * LAM.symbol,
        (LAM, g),
        "highway",
        "highway: x[l+1] = (1 - g) x[l] + g lam x[l]",
        "004 (highway networks)",
        values,
    )


def _content_velocity(A, name: str, description: str, forward: bool = False) -> Realisation:
    T = [[0, 1], [1, -1]] if forward else [[1, 0], [1, -1]]
    return Realisation(
        name, ("x", "v"), sp.ImmutableMatrix(A), sp.ImmutableMatrix(T), int(forward), description
    )


def momentum(**values) -> Recurrence:
    """Second-order (momentum) residual block.

    .. math::

        v_{l+1} = m v_l + \\eta f(\\mathrm{LN}(x_l)), \\qquad x_{l+1} = x_l + v_{l+1}

    with ``0 <= m < 1`` and ``eta >= 0``. Linearised (``f ~ lam``), eliminating
    ``v_l = x_l - x_{l-1}`` gives ``x_{l+1} = (1 + m + eta lam) x_l - m x_{l-1}``; at
    ``m = 0, eta = 1`` it is the plain residual block. The block's own content/velocity
    update is kept as the native realisation ``block``.

    Source: 000 §2 (block), §5 (state-space view), §6 (linearisation), §8.

    Examples
    --------
    >>> momentum().charpoly()
    m + r**2 + r*(-eta*lam - m - 1)
    """
    lam = LAM.symbol
    m_p = Param("m", sp.Interval.Ropen(0, 1), "velocity carry, 0 <= m < 1")
    eta_p = Param("eta", NONNEG, "forcing scale, eta >= 0")
    m, eta = m_p.symbol, eta_p.symbol
    block = _content_velocity(
        [[1 + eta * lam, m], [eta * lam, m]],
        "block",
        "the block's update: v' = m v + eta lam x, x' = x + v' (v_l = x_l - x_{l-1})",
    )
    rec = Recurrence(
        coeffs=(1, -(1 + m + eta * lam), m),
        params=(LAM, m_p, eta_p),
        lam="lam",
        name="momentum",
        description="second-order momentum residual: v' = m v + eta f(x), x' = x + v'",
        source="000 §2, §5, §6, §8",
        native=(block,),
    )
    return finish(rec, values)


def oscillator(*, form: str = "block", **values) -> Recurrence:
    """Scalar oscillator toy ``Delta^2 x = -(beta/L)^2 x`` of 000 §3, two discretisations.

    ``form="block"`` (what the §2 block gives, ``v_{l+1} = v_l - (beta/L)^2 x_l``,
    ``x_{l+1} = x_l + v_{l+1}``)::

        x_{l+1} - (2 - beta^2/L^2) x_l + x_{l-1} = 0     (root product 1)

    ``form="explicit"`` (as printed in 000 §3, from ``x_{l+1} = x_l + v_l``)::

        x_{l+1} - 2 x_l + (1 + beta^2/L^2) x_{l-1} = 0   (root product 1 + beta^2/L^2)

    The toy has no block, hence no ``lam``. Source: 000 §3.
    """
    beta_p = Param("beta", NONNEG, "oscillation frequency over the whole depth")
    beta, L = beta_p.symbol, DEPTH.symbol
    eps2 = beta**2 / L**2
    if form == "block":
        coeffs = (1, -(2 - eps2), 1)
        native = _content_velocity(
            [[1 - eps2, 1], [-eps2, 1]],
            "block",
            "v' = v - (beta/L)^2 x, x' = x + v' (v_l = x_l - x_{l-1})",
        )
        description = "oscillator toy, block form: v' = v - (beta/L)^2 x, x' = x + v'"
    elif form == "explicit":
        coeffs = (1, -2, 1 + eps2)
        native = _content_velocity(
            [[1, 1], [-eps2, 1]],
            "explicit",
            "x' = x + v, v' = v - (beta/L)^2 x (v_l = x_{l+1} - x_l)",
            forward=True,
        )
        description = "oscillator toy, explicit form as printed: x[l+1] - 2x[l] + (1 + beta^2/L^2) x[l-1] = 0"
    else:
        raise ParameterError(f"form must be 'block' or 'explicit', got {form!r}")
    rec = Recurrence(
        coeffs=coeffs,
        params=(beta_p, DEPTH),
        name="oscillator",
        description=description,
        source="000 §3",
        native=(native,),
    )
    return finish(rec, values)


def smooth(*, k: int = 2, **values) -> Recurrence:
    """``C^k`` smooth network: ``delta^+ (delta^-)^(k-1) x_l = sigma(x_l) h^k``.

    .. math::

        \\sum_{i=0}^{k} (-1)^i \\binom{k}{i} x_{l+1-i} = h^k \\lambda x_l,

    i.e. ``rho(r) = (r - 1)^k`` and ``sigma(r) = h^k r^(k-1)``. The native realisation
    ``hauser`` is the difference-state form of 002 eq. 7/8 with
    ``q_n = (delta^-)^(n-1) x_l``: an upper-triangular matrix of ones plus ``h^k lam`` in
    the first column. Source: 002 eq. 4a-4c, 5, 7, 8.
    """
    k = positive_int(k, "k", MAX_ORDER)
    lam, h = LAM.symbol, STEP.symbol
    z = h**k * lam
    coeffs = [(-1) ** i * sp.binomial(k, i) for i in range(k + 1)]
    coeffs[1] -= z
    A = sp.Matrix(k, k, lambda i, j: (1 if j >= i else 0) + (z if j == 0 else 0))
    native = Realisation(
        "hauser",
        tuple(f"q{n + 1}" for n in range(k)),
        A,
        signed_pascal(k),
        0,
        "002 eq. 7: q_n' = sum_{j>=n} q_j + h^k lam q_1, q_n = (delta^-)^(n-1) x",
    )
    rec = Recurrence(
        coeffs=tuple(coeffs),
        params=(LAM, STEP),
        lam="lam",
        name="smooth",
        description=f"C^{k} smooth network: (r-1)^{k} x = h^{k} lam r^{k - 1} x",
        source="002 eq. 4c, 7, 8",
        native=(native,),
    )
    return finish(rec, values)


def dense(*, k: int = 2, **values) -> Recurrence:
    """Dense network with ``k`` lags (002 eq. 9, the ``n = 0`` row).

    .. math::

        x_{l+1} = x_{l+1-k} + h \\lambda \\sum_{j=0}^{k-1} x_{l-j}

    so ``rho(r) = r^k - 1`` and ``sigma(r) = h (r^(k-1) + ... + 1)``. Since
    ``rho = (r - 1) sigma / h``, the characteristic polynomial factors as
    ``(r - 1 - h lam) (r^(k-1) + ... + 1)``: one residual mode and ``k - 1`` roots of
    unity. ``k = 1`` is the residual network. Source: 002 eq. 9, 10, 12-16.
    """
    k = positive_int(k, "k", MAX_ORDER)
    lam, h = LAM.symbol, STEP.symbol
    coeffs = [sp.Integer(1)] + [-h * lam] * k
    coeffs[k] = coeffs[k] - 1
    rec = Recurrence(
        coeffs=tuple(coeffs),
        params=(LAM, STEP),
        lam="lam",
        name="dense",
        description=f"dense network with {k} lags: x[l+1] = x[l+1-{k}] + h lam sum_j x[l-j]",
        source="002 eq. 9, its n = 0 row imposed at every layer (not eq. 9's system, whose state space is eq. 15)",
    )
    return finish(rec, values)


def _cayley_orthogonal(n: int, seed: int) -> sp.ImmutableMatrix:
    """An exactly orthogonal rational matrix ``(I - S)(I + S)^-1`` from a seeded skew S."""
    rng = random.Random(seed)
    S = sp.zeros(n)
    for i in range(n):
        for j in range(i + 1, n):
            S[i, j] = sp.Rational(rng.randint(-4, 4), rng.randint(1, 4))
            S[j, i] = -S[i, j]
    eye = sp.eye(n)
    return sp.ImmutableMatrix((eye - S) * (eye + S).inv())


def entangled(*, kind: str = "uniform", n: int = 2, seed: int = 0, Gamma=None, **values) -> Recurrence:
    """Entangled residual map ``x_{l+1} = Gamma x_l + f(x_l)`` on ``n`` features.

    With the block linearised isotropically (``f ~ lam I``) the recurrence is
    ``x_{l+1} = (Gamma + lam I) x_l``. ``kind`` picks Gamma:

    * ``"uniform"``: ``Gamma = (gamma/n) 1 1^T + (1 - gamma) I`` with ``0 <= gamma <= 1``
      (001 eq. 4);
    * ``"orthogonal"``: an exactly orthogonal rational matrix drawn from ``seed`` (Cayley
      transform of a random skew-symmetric matrix; 001 uses the Q of a QR factorisation);
    * ``"matrix"``: the given square ``Gamma``.

    Source: 001 eq. 2, 3, 4. (001 writes the Jacobian as ``df/dx + Gamma^T`` for row
    vectors; depthdyn uses column vectors, ``x_{l+1} = Gamma x_l``.)
    """
    lam = LAM.symbol
    params = [LAM]
    if Gamma is not None and kind == "uniform":
        kind = "matrix"
    if kind == "uniform":
        n = positive_int(n, "n", MAX_STREAMS)
        g = Param("gamma", UNIT, "entanglement coefficient in [0, 1]")
        params.append(g)
        G = sp.ImmutableMatrix(g.symbol / n * sp.ones(n, n) + (1 - g.symbol) * sp.eye(n))
    elif kind == "orthogonal":
        n = positive_int(n, "n", MAX_STREAMS)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ParameterError(f"seed must be an integer, got {seed!r}")
        G = _cayley_orthogonal(n, seed)
    elif kind == "matrix":
        if Gamma is None:
            raise ParameterError("kind='matrix' needs Gamma=[[...], ...]")
        G = matrix_arg(Gamma, "Gamma")
        if G.free_symbols:
            raise ParameterError("Gamma must have numeric entries; use kind='uniform' for a symbolic gamma")
        n = G.shape[0]
    else:
        raise ParameterError(f"kind must be 'uniform', 'orthogonal' or 'matrix', got {kind!r}")
    rec = Recurrence(
        coeffs=(sp.eye(n), -(G + lam * sp.eye(n))),
        params=tuple(params),
        lam="lam",
        name="entangled",
        description=f"entangled residual ({kind}, n={n}): x[l+1] = (Gamma + lam I) x[l]",
        source="001 eq. 2, 4",
    )
    return finish(rec, values)


def _doubly_stochastic(n: int) -> tuple[sp.ImmutableMatrix, list[Param]]:
    params = [
        Param(f"hres_{i + 1}_{j + 1}", UNIT, "free entry of doubly stochastic H_res")
        for i in range(n - 1)
        for j in range(n - 1)
    ]
    free = sp.Matrix(n - 1, n - 1, [p.symbol for p in params])
    H = sp.zeros(n)
    H[: n - 1, : n - 1] = free
    for i in range(n - 1):
        H[i, n - 1] = 1 - sum(free.row(i))
        H[n - 1, i] = 1 - sum(free.col(i))
    H[n - 1, n - 1] = 1 - sum(H[n - 1, : n - 1])
    return sp.ImmutableMatrix(H.applyfunc(sp.expand)), params


def hyper_connection(
    *, n: int = 2, H_res=None, H_pre=None, H_post=None, doubly_stochastic: bool = True, **values
) -> Recurrence:
    """Hyper-connections with ``n`` streams (003 eq. 3).

    ``X_{l+1} = H_res X_l + H_post^T F(H_pre X_l)`` with ``X in R^(n x d)``,
    ``H_pre, H_post in R^(1 x n)``. In one channel eigenmode (``F ~ lam``) the streams
    follow ``x_{l+1} = (H_res + lam H_post^T H_pre) x_l``; :meth:`Recurrence.kron`
    expands to ``d`` channels. Matrices not given are symbolic: ``H_res`` doubly stochastic
    with free entries ``hres_i_j`` (``i, j < n``) when ``doubly_stochastic``, else ``n^2``
    free entries; ``H_pre`` entries ``hpre_i``, ``H_post`` entries ``hpost_i``. A float
    ``H_res`` (a Sinkhorn output) has, when ``doubly_stochastic``, its row and column sums
    within ``1e-12`` of 1 made 1 exactly
    (:func:`~depthdyn.families.common.stochastic_from_floats`); with
    ``doubly_stochastic=False`` it is kept as read.
    Source: 003 eq. (3), (10).
    """
    lam = LAM.symbol
    if H_res is not None:
        n = matrix_arg(H_res, "H_res").shape[0]
    n = positive_int(n, "n", MAX_STREAMS)
    params: list[Param] = [LAM]
    if H_res is None:
        if doubly_stochastic:
            Hres, extra = _doubly_stochastic(n)
        else:
            extra = [
                Param(f"hres_{i + 1}_{j + 1}", REALS, "entry of H_res") for i in range(n) for j in range(n)
            ]
            Hres = sp.ImmutableMatrix(n, n, [p.symbol for p in extra])
        params += extra
    else:
        Hres = (stochastic_arg if doubly_stochastic else matrix_arg)(H_res, "H_res", n)
    rows = []
    for given, stem, what in ((H_pre, "hpre", "H_pre"), (H_post, "hpost", "H_post")):
        if given is None:
            extra = [Param(f"{stem}_{i + 1}", REALS, f"entry of {what}") for i in range(n)]
            params += extra
            rows.append(sp.ImmutableMatrix([[p.symbol for p in extra]]))
        else:
            rows.append(vector_arg(given, what, n))
    pre, post = rows
    for M, what in ((Hres, "H_res"), (pre, "H_pre"), (post, "H_post")):
        unknown = {s.name for s in M.free_symbols} - {p.name for p in params}
        if unknown:
            raise ParameterError(f"{what} uses unknown names {sorted(unknown)}")
    M = Hres + lam * post.T * pre
    rec = Recurrence(
        coeffs=(sp.eye(n), -M),
        params=tuple(params),
        lam="lam",
        name="hyper_connection",
        description=f"hyper-connections, {n} streams: x[l+1] = (H_res + lam H_post^T H_pre) x[l]",
        source="003 eq. (3), (10)",
    )
    return finish(rec, values)


def _poly_in_r(expr: sp.Expr, what: str) -> sp.Poly:
    try:
        poly = sp.Poly(expr, r)
    except sp.PolynomialError:
        raise ParseError(f"{what} must be a polynomial in r, got {expr}") from None
    if poly.degree() > MAX_ORDER:
        raise DegreeTooLargeError(f"{what} has degree {poly.degree()}; exact work is limited to {MAX_ORDER}")
    return poly


def general(*, rho=None, sigma=None, **values) -> Recurrence:
    """General linear depth model ``rho(r) x = lam sigma(r) x``.

    ``rho`` and ``sigma`` are polynomials in ``r`` (strings are parsed safely); any
    other names in them become real parameters. Without ``sigma`` the model has no
    block (no ``lam``). The order is ``max(deg rho, deg sigma)``. Source: 000 §7.

    Examples
    --------
    >>> general(rho="r**2 - r", sigma="r").charpoly()
    r**2 + r*(-lam - 1)
    """
    if rho is None:
        raise ParameterError("general needs rho (a polynomial in r), e.g. rho='r**2 - r'")
    polys = {}
    extra: dict[str, Param] = {}
    for text, what in ((rho, "rho"), (sigma, "sigma")):
        if text is None:
            continue
        if isinstance(text, str):
            found = free_names(text)
            reserved = {"r", "lam"}
            for name in sorted(found - reserved):
                extra.setdefault(name, Param(name, REALS, "coefficient parameter"))
            names = {"r": r, "lam": LAM.symbol, **{k: p.symbol for k, p in extra.items()}}
            expr = parse_expr(text, names)
        else:
            try:  # SymPy objects or numbers; containers of strings are refused, never evaluated
                expr = as_sympy(text, scalar=True)
            except ParseError as exc:
                raise ParseError(
                    f"{what} must be a polynomial in r (a string or SymPy expression): {exc}"
                ) from None
            for s in expr.free_symbols - {r}:
                extra.setdefault(s.name, Param(s.name, REALS, "coefficient parameter"))
            expr = expr.xreplace(
                {s: extra[s.name].symbol for s in expr.free_symbols - {r} if s.name in extra}
            )
        if expr.has(LAM.symbol):
            raise ParseError(f"{what} may not contain lam; write rho(r) and sigma(r) separately")
        polys[what] = _poly_in_r(expr, what)
    rho_p = polys["rho"]
    has_block = "sigma" in polys
    char = rho_p.as_expr() - (LAM.symbol * polys["sigma"].as_expr() if has_block else 0)
    poly = sp.Poly(sp.expand(char), r)
    p = poly.degree()
    if p < 1:
        raise ParameterError(f"rho - lam*sigma must have degree >= 1 in r, got {char}")
    coeffs = tuple(poly.all_coeffs())
    params = ((LAM,) if has_block else ()) + tuple(extra.values())
    sigma_text = f" = lam ({polys['sigma'].as_expr()})" if has_block else " = 0"
    rec = Recurrence(
        coeffs=coeffs,
        params=params,
        lam="lam" if has_block else None,
        name="general",
        description=f"general order-{p} model: ({rho_p.as_expr()}) x{sigma_text} x",
        source="000 §7",
    )
    return finish(rec, values)


def from_coefficients(coeffs, params=(), *, lam: str | None = None, **values) -> Recurrence:
    """A recurrence ``A_0 x_{l+p} + ... + A_p x_l = 0`` from its coefficient list.

    ``params`` are :class:`Param` objects or names (real domain). Source: 000 §7.
    """
    params = tuple(
        # names or SymPy symbols (sympy.Symbol("a") is the parameter a)
        p if isinstance(p, Param) else Param(_name(p), COMPLEXES if _name(p) == lam else REALS)
        for p in params
    )
    rec = Recurrence(coeffs=tuple(coeffs), params=params, lam=lam, name="general", source="000 §7")
    return finish(rec, values)


def _name(p) -> str:
    if isinstance(p, sp.Symbol):
        return p.name
    if not isinstance(p, str):
        raise ParameterError(f"params must be Param objects, names or SymPy symbols, got {p!r}")
    return p
