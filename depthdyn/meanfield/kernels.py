"""Kernel (mean-field) recurrences of depthdyn's families at initialisation.

Every family's layer is written as one linear state update plus a random branch,

.. math::

    X_{l+1} = C X_l + e \\, \\sum_{j} F_l\\big((R X_l)_j\\big),
    \\qquad F_l(y) = W_l \\phi(y) + b_l,

with the state ``X_l`` a ``k``-vector of width-``N`` fields (the stream ``x``; ``(x, v)`` for
momentum; the lags ``x_l .. x_{l-k+1}`` for ``C^k`` smooth and dense networks; the ``n``
streams of hyper-connections), ``C`` the skip map, ``R`` the rows that the branch reads and
``e`` where it writes. ``W_l`` (entries ``N(0, sw2/N)``) and ``b_l`` (``N(0, sb2)``) are drawn
afresh at every layer and shared by the terms of the sum (dense networks apply one ``f`` to
every lag). Because ``W_l`` is independent of ``X_l`` and has mean zero, the branch is
uncorrelated with the state, and in the infinite-width limit the per-unit covariances of the
state for two inputs ``a, b`` follow exactly

.. math::

    P' = C P C^T + e e^T \\sum_{ij} G(Q_{ii}, Q_{jj}, Q_{ij}), \\qquad
    S' = C S C^T + e e^T \\sum_{ij} G(Q_{ii}, Q_{jj}, R S R^T_{ij}),

with ``P = E[X_a X_a^T]`` (the same for ``b``), ``S = E[X_a X_b^T]``, ``Q = R P R^T`` and
``G(q_1, q_2, k) = sw2 E[\\phi(u_1) \\phi(u_2)] + sb2`` for ``Var u_i = q_i``,
``Cov = k``. Near ``c = 1`` the difference ``D = 2 (P - S)`` is carried instead of ``S``:
``D' = C D C^T + e e^T 2 sw2 sum_ij [M(P_ij) - M(S_ij)]`` with the difference of the two
Gaussian expectations written (Price's theorem) as an integral of ``E[phi' phi']`` over the
covariance, so ``1 - c`` stays accurate down to ``1e-300``.

The family definitions follow depthdyn's torch blocks (:mod:`depthdyn.nn.blocks`) with
``f(y) = W phi(y) + b``: see :func:`kernel_spec`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from ..errors import DomainError, ParameterError, UnknownFamilyError, UnknownParameterError
from ..families import suggest
from ..limits import MAX_ORDER, MAX_STREAMS
from ..records import Record
from .branch import branch_moments, single_branch_moments
from .checks import as_count, as_matrix, as_real, as_variance, check_weights

__all__ = [
    "KERNEL_FAMILIES",
    "KernelSpec",
    "KernelTrajectory",
    "kernel_spec",
    "kernel_step",
    "iterate_family",
    "resolve_activation",
    "Q_MAX",
]

#: The families with a kernel recurrence, and the keyword parameters each takes.
KERNEL_FAMILIES: dict[str, tuple[str, ...]] = {
    "plain": ("norm",),
    "residual": ("h", "norm"),
    "full_residual": ("h", "sv2", "sa2", "norm"),
    "weighted": ("a", "h", "norm"),
    "rezero": ("a", "h", "norm"),
    "scaled_residual": ("h", "norm"),
    "highway": ("g", "h", "norm"),
    "momentum": ("m", "eta", "h", "norm"),
    "smooth": ("k", "h", "norm"),
    "dense": ("k", "h", "norm"),
    "hyper_connection": ("n", "H_res", "H_pre", "H_post", "expansion", "h", "norm"),
}
_FIRST_ORDER = ("plain", "residual", "full_residual", "weighted", "rezero", "scaled_residual", "highway")
#: LayerNorm's ``eps`` (torch's default): the normalised variance is ``q / (q + eps)``.
LN_EPS = 1e-5
#: The default bound of the variance: beyond it every family's map (the plain chain's too) stops
#: and reports an exploding phase.
Q_MAX = 1e8


def resolve_activation(act):
    """An activation object with the moment methods: ``act`` itself, or ``get_activation(act)``."""
    if hasattr(act, "cross_moment") and hasattr(act, "derivative_cross_moment"):
        return act
    from .activations import get_activation

    return get_activation(act)


@dataclass(frozen=True, eq=False)
class KernelSpec(Record):
    """One family's layer as ``X' = C X + e sum_j F((R X)_j)`` (see the module docstring).

    ``inputs`` ``(k, m)`` is the state of layer 0 as depthdyn's blocks build it from the input
    (``v_0 = 0``; equal lags; the expansion of hyper-connections): ``X_0 = inputs @ Z`` with
    ``Z``'s ``m`` rows independent fields of the input's variance, the first the input itself;
    ``P0 = inputs @ inputs.T`` is its per-unit covariance for ``q0 = 1``. ``branch`` is ``"one"``
    (``W phi(y) + b``) or ``"two"`` (``V phi(W y + b) + a``, the full residual block); ``norm`` is
    ``None``, ``"pre"`` (LayerNorm on the branch input) or ``"post"`` (on the new state).
    """

    family: str
    states: tuple[str, ...]
    C: np.ndarray
    e: np.ndarray
    R: np.ndarray
    inputs: np.ndarray
    branch: str = "one"
    norm: str | None = None
    sv2: float = 0.0
    sa2: float = 0.0
    params: dict = field(default_factory=dict)

    @property
    def k(self) -> int:
        return self.C.shape[0]

    @cached_property
    def P0(self) -> np.ndarray:
        """The state's per-unit covariance at layer 0 for ``q0 = 1``: ``inputs @ inputs.T``."""
        return self.inputs @ self.inputs.T

    @cached_property
    def reads_all(self) -> bool:
        """The branch reads every state (``R`` is the identity: dense networks)."""
        return self.R.shape[0] == self.R.shape[1] and bool(np.array_equal(self.R, np.eye(self.k)))

    @cached_property
    def ee(self) -> np.ndarray:
        """``e e^T``: where the branch's covariance enters the state's."""
        return np.outer(self.e, self.e)

    @cached_property
    def iterated(self) -> tuple[KernelSpec, np.ndarray | None]:
        """The spec the layers are iterated in, and the matrix ``B`` taking its state back to this one's
        (``X = B Y``; ``None``: this spec itself). A ``C^k`` smooth layer is iterated on the backward
        differences ``y_j = nabla^j x_l`` (``j < k``) of its lags: ``nabla^k x_{l+1} = h^k F(x_l)`` gives
        ``y'_j = sum_{i >= j} y_i + h^k F``, and ``x_{l-m} = sum_j (-1)^j C(m, j) y_j``. The lags'
        covariances are nearly equal and their alternating binomial sums lose the differences' digits
        (at ``k = 6``, ``h = 0.05`` all of them), which the differences' covariances keep."""
        k = self.k
        if self.family != "smooth" or k == 1:
            return self, None
        states = tuple(f"nabla^{j} x[l]" if j else "x[l]" for j in range(k))
        back = np.array([[(-1) ** j * math.comb(m, j) for j in range(k)] for m in range(k)], dtype=float)
        # equal lags at layer 0: the input in x_0, no differences
        spec = replace(self, states=states, C=np.triu(np.ones((k, k))), e=np.full(k, self.e[0]),
                       inputs=np.eye(k)[:, :1])
        return spec, back

    def branch_inputs(self, P: np.ndarray) -> np.ndarray:
        """``R P R^T``: the covariance of what the branch reads."""
        return P if self.reads_all else self.R @ P @ self.R.T

    @cached_property
    def _carry(self) -> tuple[np.ndarray, list[int], list[float]]:
        """``(C kron C)^T`` (``vec(C X C^T) = (C kron C) vec(X)``, row-major: a layer's products for both
        fields in one product of small matrices), and where ``e e^T`` is nonzero, its values there."""
        ee = self.ee.reshape(-1)
        where = np.flatnonzero(ee)
        return np.ascontiguousarray(np.kron(self.C, self.C).T), where.tolist(), ee[where].tolist()

    def carry(self, state: np.ndarray, GP: float, GD: float) -> np.ndarray:
        """The next stack ``[C P C^T + GP e e^T, C D C^T + GD e e^T]`` from the stack ``state = [P, D]``."""
        k, (product, where, values) = self.k, self._carry
        flat = state.reshape(2, k * k) @ product
        if len(where) == 1:  # e picks one state (most families): two numbers to add
            flat[0, where[0]] += GP * values[0]
            flat[1, where[0]] += GD * values[0]
        else:  # e e^T's zeros added too: no fancy indexing
            flat += np.multiply.outer((GP, GD), self.ee.reshape(-1))
        return flat.reshape(2, k, k)

    def _text(self) -> str:
        kw = ", ".join(f"{k}={v}" for k, v in self.params.items())
        states = ", ".join(self.states)
        return f"kernel spec {self.family}({kw}): states {states}; branch reads R = {self.R.tolist()}"

    def _latex(self) -> str:
        return f"\\text{{{self._text()}}}"


def kernel_spec(family: str, *, depth: int | None = None, sw2=1.0, sb2=0.0, **params) -> KernelSpec:
    """The state update of ``family`` with its parameters (see the module docstring).

    Families (their torch block in :mod:`depthdyn.nn.blocks` with ``f = W phi + b``):

    * ``plain``: ``x' = F(x)`` (the chain ``h_{l+1} = W phi(h_l) + b``);
    * ``residual``: ``x' = x + h F(x)`` (:class:`~depthdyn.nn.blocks.ResidualBlock`);
    * ``full_residual``: ``x' = x + h (V phi(W x + b) + a)`` with ``V ~ N(0, sv2/N)``,
      ``a ~ N(0, sa2)`` (``sv2, sa2`` default to ``sw2, sb2``, which are used for nothing
      else here; the default ``mlp`` branch);
    * ``weighted``: ``x' = a x + h F(x)``; ``rezero``: ``x' = x + a h F(x)``;
    * ``scaled_residual``: ``x' = x + (h / sqrt(L)) F(x)`` with ``L = depth``;
    * ``highway``: ``x' = (1 - g) x + g h F(x)`` with a fixed gate ``g`` (the
      :class:`~depthdyn.nn.blocks.HighwayBlock` with gate weights 0 and bias ``logit(g)``);
    * ``momentum``: ``v' = m v + eta h F(x)``, ``x' = x + v'``, ``v_0 = 0``;
    * ``smooth``: ``sum_i (-1)^i C(k, i) x_{l+1-i} = h^k F(x_l)``, lags equal at layer 0;
    * ``dense``: ``x_{l+1} = x_{l+1-k} + h sum_{j<k} F(x_{l-j})`` (one ``F`` for every lag);
    * ``hyper_connection``: ``X' = H_res X + h H_post F(H_pre X)`` on ``n`` streams, initial
      streams ``x + (c_i - 1) P x`` with ``c = expansion`` (``P x`` independent of ``x`` per
      unit); defaults are :class:`~depthdyn.nn.blocks.HyperConnectionBlock`'s initialisation.

    ``norm="pre"`` puts a LayerNorm on the branch input (every family); ``norm="post"``
    normalises the new state (first-order families).
    """
    if not isinstance(family, str) or family not in KERNEL_FAMILIES:
        raise UnknownFamilyError(
            f"no kernel recurrence for family {family!r}{suggest(str(family), KERNEL_FAMILIES)}; "
            f"known: {', '.join(KERNEL_FAMILIES)}"
        )
    allowed = KERNEL_FAMILIES[family]
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise UnknownParameterError(
            f"family {family!r} takes no parameter {', '.join(unknown)}; "
            f"it takes {', '.join(allowed) or 'none'}"
        )
    norm = params.get("norm")
    if norm not in (None, "pre", "post"):
        raise ParameterError(f"norm must be None, 'pre' or 'post', got {norm!r}")
    if norm == "post" and family not in _FIRST_ORDER:
        raise ParameterError(f"norm='post' is defined for first-order families ({', '.join(_FIRST_ORDER)})")
    h = as_real(params.get("h", 1.0), "h", low=0, low_open=True)
    one = np.ones((1, 1))
    skip, gain, extra = 1.0, h, {}
    if family == "plain":
        skip, gain = 0.0, 1.0
    elif family == "weighted":
        skip = as_real(params.get("a", 1.0), "a")
    elif family == "rezero":
        gain = h * as_real(params.get("a", 0.0), "a")
    elif family == "scaled_residual":
        if depth is None:
            raise ParameterError("scaled_residual needs the depth L (its branch scale is h / sqrt(L))")
        gain = h / math.sqrt(as_count(depth, "depth", 10**9))
    elif family == "highway":
        g = as_real(params.get("g", 1 / (1 + math.e**2)), "g", low=0, high=1)
        skip, gain = 1 - g, g * h
    elif family == "full_residual":
        sv2, sa2 = params.get("sv2", sw2), params.get("sa2", sb2)
        extra = {"branch": "two", "sv2": as_real(sv2, "sv2", low=0), "sa2": as_real(sa2, "sa2", low=0)}
    if family in _FIRST_ORDER:
        return KernelSpec(
            family,
            ("x",),
            skip * one,
            np.array([gain]),
            one.copy(),
            one.copy(),
            norm=norm,
            params=dict(params),
            **extra,
        )
    if family == "momentum":
        m = as_real(params.get("m", 0.0), "m", low=0, high=1, high_open=True)
        eta = as_real(params.get("eta", 1.0), "eta", low=0)
        C = np.array([[1.0, m], [0.0, m]])
        return KernelSpec(
            family,
            ("x", "v"),
            C,
            np.array([eta * h, eta * h]),
            np.array([[1.0, 0.0]]),
            np.array([[1.0], [0.0]]),  # v_0 = 0
            norm=norm,
            params=dict(params),
        )
    if family in ("smooth", "dense"):
        k = as_count(params.get("k", 2), "k", MAX_ORDER)
        C = np.zeros((k, k))
        C[1:, :-1] = np.eye(k - 1)
        e = np.zeros(k)
        if family == "smooth":
            C[0] = [-((-1) ** i) * math.comb(k, i) for i in range(1, k + 1)]
            e[0], R = h**k, np.eye(k)[:1]
        else:
            C[0, k - 1] = 1.0
            e[0], R = h, np.eye(k)
        states = tuple(f"x[l-{i}]" if i else "x[l]" for i in range(k))
        return KernelSpec(family, states, C, e, R, np.ones((k, 1)), norm=norm, params=dict(params))
    # hyper-connections
    if params.get("H_res") is not None:
        n = np.asarray(params["H_res"], dtype=object).shape[0]
    else:
        n = params.get("n", 4)
    n = as_count(n, "n", MAX_STREAMS)
    c = np.zeros(n)
    c[0] = 1.0
    if n > 1:
        c[1] = n - 1.0
    H_res = (
        as_matrix(params["H_res"], "H_res", (n, n))
        if params.get("H_res") is not None
        else np.full((n, n), 1 / n)
    )
    H_pre = as_matrix(params["H_pre"], "H_pre", (n,)) if params.get("H_pre") is not None else np.eye(n)[0]
    H_post = as_matrix(params["H_post"], "H_post", (n,)) if params.get("H_post") is not None else c
    expansion = c if params.get("expansion") is None else as_matrix(params["expansion"], "expansion", (n,))
    # stream i holds x + (c_i - 1) P x (HyperConnectionBlock): P x an independent field of x's variance
    inputs = np.stack((np.ones(n), expansion - 1), axis=1)
    states = tuple(f"x{i}" for i in range(n))
    return KernelSpec(family, states, H_res, h * H_post, H_pre[None, :], inputs, norm=norm,
                      params=dict(params))


@dataclass(frozen=True, eq=False)
class KernelTrajectory(Record):
    """The kernel of a family over depth: per-unit variance ``q`` and correlation ``c`` of the
    read-out (``x``; stream 0 for hyper-connections), ``eps = 1 - c`` kept accurately near
    ``c = 1``, and the state covariances ``P`` (one input) and ``D = 2 (P - S)`` (``S`` the
    cross-covariance of the two inputs), each of shape ``(layers + 1, k, k)``.

    When a variance leaves ``[q_min, q_max]`` (``exploding`` or ``vanishing`` phase) the map
    stops there: ``stopped_at`` is that layer, ``reason`` says why, and the arrays end there
    (``len(q) = stopped_at + 1`` instead of ``depth + 1``).
    """

    family: str
    activation: str
    sw2: float
    sb2: float
    depth: int
    q: np.ndarray
    c: np.ndarray
    eps: np.ndarray
    P: np.ndarray = field(repr=False)
    D: np.ndarray = field(repr=False)
    states: tuple[str, ...] = ("x",)
    params: dict = field(default_factory=dict)
    stopped_at: int | None = None
    reason: str = ""

    @property
    def layers(self) -> int:
        """Layers actually computed (``depth`` unless the map stopped)."""
        return len(self.q) - 1

    @property
    def S(self) -> np.ndarray:
        """Cross-covariance of the two inputs' states, ``P - D / 2``."""
        return self.P - self.D / 2

    def _text(self) -> str:
        head = f"{self.family} kernel, {self.activation}, sw2={self.sw2:g}, sb2={self.sb2:g}"
        tail = f": q_{self.layers} = {self.q[-1]:.6g}, 1 - c_{self.layers} = {self.eps[-1]:.6g}"
        if self.stopped_at is not None:
            tail += f" ({self.reason}: stopped at layer {self.stopped_at} of {self.depth})"
        return head + tail

    def _latex(self) -> str:
        return (
            f"q_{{{self.layers}}} = {self.q[-1]:.6g},\\; 1 - c_{{{self.layers}}} = {self.eps[-1]:.6g}"
            f"\\quad \\text{{({self.family}, {self.activation})}}"
        )


def kernel_step(act, spec: KernelSpec, sw2: float, sb2: float, P: np.ndarray, D: np.ndarray):
    """One layer of the kernel map: ``(P, D) -> (P', D', z)``.

    ``z`` is the variance of the read-out before a post-LN (``P'[0, 0]`` otherwise); ``act``
    an activation object (:func:`resolve_activation`), ``spec`` from :func:`kernel_spec`.
    """
    state = np.stack((P, D))
    state, z = _advance(act, spec, sw2, sb2, state, spec.branch_inputs(state))
    return state[0], state[1], z


def _advance(act, spec: KernelSpec, sw2: float, sb2: float, state: np.ndarray, Q: np.ndarray):
    """:func:`kernel_step` on the stack ``state = [P, D]`` (one ``2 x k x k`` array: the same
    products for both at once), given its branch inputs ``Q = [R P R^T, R D R^T]``; returns the
    next stack and ``z``."""
    (QP, QD), qd = Q, Q[0].diagonal().copy()
    if spec.norm == "pre":
        nu = 1 / np.sqrt(qd + LN_EPS)
        QP, QD, qd = QP * np.outer(nu, nu), QD * np.outer(nu, nu), qd * nu**2
    if spec.branch == "two":  # hidden pre-activation W y + b of the full residual block
        QP, QD = sw2 * QP + sb2, sw2 * QD
        qd = sw2 * qd + sb2
        gain2, bias2 = spec.sv2, spec.sa2
    else:
        gain2, bias2 = sw2, sb2
    GP, GD = branch_moments(act, gain2, bias2, qd, QP, QD)
    state = spec.carry(state, GP, GD)
    z = state[0, 0, 0]
    if spec.norm == "post":
        state = state * (1 / (z + LN_EPS))
    return state, z


def iterate_family(
    act,
    sw2,
    sb2,
    *,
    depth: int,
    q0=1.0,
    c0=None,
    eps0=None,
    family: str = "residual",
    q_min: float = 1e-8,
    q_max: float = Q_MAX,
    **params,
) -> KernelTrajectory:
    """Iterate ``family``'s kernel recurrence for ``depth`` layers from two inputs.

    Parameters
    ----------
    act : str, SymPy expression, callable or Activation
        The activation (anything :func:`~depthdyn.meanfield.activations.get_activation` takes).
    sw2, sb2 : float
        Weight variance ``sw2 > 0`` (entries ``N(0, sw2/N)``) and bias variance ``sb2 >= 0``.
    depth : int
        Number of layers ``L >= 0``; the result has ``L + 1`` entries (layer 0 is the input).
    q0 : float
        Per-unit variance of each input (``> 0``).
    c0, eps0 : float
        Correlation of the two inputs, or ``eps0 = 1 - c0`` for inputs nearly equal
        (default ``c0 = 0``).
    family : str
        One of :data:`KERNEL_FAMILIES`; parameters as in :func:`kernel_spec`.
    q_min, q_max : float
        Range of branch-input variances the map may use; outside it the map stops and says
        so (exploding or vanishing phase; the plain chain's
        :func:`~depthdyn.meanfield.iterate` stops at ``q_max`` the same way), never
        returning NaN or inf.

    Returns
    -------
    KernelTrajectory

    Examples
    --------
    >>> from depthdyn.meanfield.kernels import iterate_family
    >>> class Linear:  # phi(u) = u: E[phi(u1) phi(u2)] = cov, E[phi' phi'] = 1
    ...     def cross_moment(self, q1, q2, c=None, *, eps=None):
    ...         return (q1 * q2) ** 0.5 * (1 - eps if c is None else c)
    ...     def derivative_cross_moment(self, q1, q2, c=None, *, eps=None):
    ...         return 0 * q1 * q2 + 1.0
    >>> traj = iterate_family(Linear(), 1.0, 0.0, depth=3, q0=1.0, c0=0.5, family="residual")
    >>> traj.q.tolist()  # q' = 2 q
    [1.0, 2.0, 4.0, 8.0]
    """
    act = resolve_activation(act)
    sw2, sb2 = check_weights(sw2, sb2)
    depth = 0 if depth == 0 and not isinstance(depth, bool) else as_count(depth, "depth", 10**7)
    q0 = as_variance(q0, "q0", positive=True)
    q_max = as_variance(q_max, "q_max", positive=True)
    q_min = as_real(q_min, "q_min", low=0, high=q_max)
    if c0 is not None and eps0 is not None:
        raise ParameterError("give c0 or eps0 = 1 - c0, not both")
    eps0 = 1.0 if c0 is None and eps0 is None else eps0
    eps0 = as_real(eps0, "eps0", low=0, high=2) if c0 is None else 1 - as_real(c0, "c0", low=-1, high=1)
    spec = kernel_spec(family, depth=depth, sw2=sw2, sb2=sb2, **params)
    run, back = spec.iterated
    P = q0 * run.P0
    D = 2 * eps0 * P
    layers = _one_input_layers if run.R.shape[0] == 1 else _layers
    Ps, Ds, stopped, reason = layers(act, run, sw2, sb2, P, D, depth, q_min, q_max)
    q = Ps[:, 0, 0].copy()  # x_l is the first state in both
    eps = np.clip(Ds[:, 0, 0] / (2 * q), 0.0, 2.0)
    if back is not None:  # the state's covariances in the spec's own basis
        Ps, Ds = back @ Ps @ back.T, back @ Ds @ back.T
    name = getattr(act, "name", None) or type(act).__name__
    return KernelTrajectory(family, str(name), sw2, sb2, depth, q, 1 - eps, eps, Ps, Ds, spec.states,
                            dict(params), stopped, reason)


def _stop_reason(q: float, q_min: float, q_max: float) -> str:
    if q > q_max:
        return f"exploding phase: q > q_max = {q_max:g}"
    return f"vanishing phase: q < q_min = {q_min:g}"


def _overflow_reason(q: float) -> str:
    # a Gaussian moment past float64 (exp at q > 354): the variance explodes here
    return f"exploding phase: a Gaussian moment overflows float64 at q = {q:.6g}"


def _layers(act, spec, sw2, sb2, P, D, depth, q_min, q_max):
    """The layers of :func:`iterate_family` for a branch with several inputs, on the stack
    ``[P, D]`` (:func:`_advance`); returns ``(Ps, Ds, stopped_at, reason)``."""
    state = np.stack((P, D))
    states = [state]
    for layer in range(depth):
        Q = spec.branch_inputs(state)
        qd = Q[0].diagonal().tolist()  # a few lags: Python's max and min cost less than two reductions
        top, low = max(qd), min(qd)
        if spec.norm != "pre" and (top > q_max or low < q_min):
            reason = _stop_reason(top if top > q_max else low, q_min, q_max)
            return _split(states, spec.k, False) + (layer, reason)
        try:
            state, _ = _advance(act, spec, sw2, sb2, state, Q)
        except DomainError:
            return _split(states, spec.k, False) + (layer, _overflow_reason(top))
        # one sum: an inf or NaN anywhere makes it non-finite (entries stay far below overflow)
        if not math.isfinite(state.sum()):
            return _split(states, spec.k, False) + (layer + 1, "exploding phase: the covariance overflowed")
        states.append(state)
        if state[0, 0, 0] > q_max and spec.norm == "pre":
            return _split(states, spec.k, False) + (layer + 1, f"exploding phase: q > q_max = {q_max:g}")
    return _split(states, spec.k, False) + (None, "")


def _one_input_layers(act, spec, sw2, sb2, P, D, depth, q_min, q_max):
    """:func:`_layers` for a branch that reads one input, with NumPy's cost per call kept off the layer.

    The branch input's numbers are Python floats, and so is the state when it is one field; a state
    of ``k`` fields is the stack ``[P, D]`` (one ``2 x k x k`` array, the same products as
    :func:`kernel_step` for both at once).
    """
    gain2, bias2 = (spec.sv2, spec.sa2) if spec.branch == "two" else (sw2, sb2)
    pre, post, two = spec.norm == "pre", spec.norm == "post", spec.branch == "two"
    scalar = spec.k == 1
    if scalar:
        c2, e2 = float(spec.C[0, 0]) ** 2, float(spec.ee[0, 0])  # as KernelSpec.carry rounds them
        state = [float(P[0, 0]), float(D[0, 0])]
        q, d = state
    else:
        R, RT = spec.R, spec.R.T
        row = np.flatnonzero(R[0])
        # R picks one state: R X R^T = X_jj
        j = int(row[0]) if row.size == 1 and R[0, row[0]] == 1.0 else None
        state = np.stack((P, D))
        q, d = _read(state, j, R, RT)
    states = [state]
    for layer in range(depth):
        if not pre and (q > q_max or q < q_min):
            return _split(states, spec.k, scalar) + (layer, _stop_reason(q, q_min, q_max))
        qb, db = q, d
        if pre:
            nu = 1 / math.sqrt(q + LN_EPS)
            qb, db = qb * (nu * nu), db * (nu * nu)
        if two:  # hidden pre-activation W y + b of the full residual block
            qb, db = sw2 * qb + sb2, sw2 * db
        try:
            if qb > 0:
                GP, GD = single_branch_moments(act, gain2, bias2, qb, db)
            else:
                GP, GD = branch_moments(act, gain2, bias2, np.array([qb]), np.array([[qb]]), np.array([[db]]))
        except DomainError:
            return _split(states, spec.k, scalar) + (layer, _overflow_reason(q))
        if scalar:
            p, d = c2 * state[0] + GP * e2, c2 * state[1] + GD * e2
            if post:
                scale = 1 / (p + LN_EPS)
                p, d = p * scale, d * scale
            state, q, top, finite = [p, d], p, p, math.isfinite(p) and math.isfinite(d)
        else:
            state = spec.carry(state, GP, GD)
            if post:
                state *= 1 / (state[0, 0, 0] + LN_EPS)
            q, d = _read(state, j, R, RT)
            top, finite = float(state[0, 0, 0]), math.isfinite(state.sum())
        if not finite:
            return _split(states, spec.k, scalar) + (layer + 1, "exploding phase: the covariance overflowed")
        states.append(state)
        if top > q_max and pre:
            return _split(states, spec.k, scalar) + (layer + 1, f"exploding phase: q > q_max = {q_max:g}")
    return _split(states, spec.k, scalar) + (None, "")


def _read(state: np.ndarray, j: int | None, R: np.ndarray, RT: np.ndarray) -> list[float]:
    """The branch input's ``(R P R^T, R D R^T)`` from the stack ``[P, D]``."""
    if j is not None:
        return state[:, j, j].tolist()
    return (R @ state @ RT).reshape(2).tolist()


def _split(states: list, k: int, scalar: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(P, D)`` of shape ``(layers + 1, k, k)`` from :func:`_one_input_layers`' states."""
    both = np.array(states).reshape(len(states), 2, k, k)
    return np.ascontiguousarray(both[:, 0]), np.ascontiguousarray(both[:, 1])
