"""The activation object: a function and its Gaussian moments, float64 and vectorised.

An :class:`Activation` knows ``phi``, its derivative and an accurate difference
``phi(u + h) - phi(u)``; from these it computes every Gaussian moment the mean-field maps
need, by the graded quadrature of :mod:`depthdyn.meanfield.gaussian` (with an error bound on
request). Activations with closed-form moments (:mod:`depthdyn.meanfield.closedform`)
override the methods with exact formulas.

Conventions: ``z ~ N(0, 1)``; ``(u1, u2)`` jointly Gaussian with variances ``q1, q2`` and
correlation ``c``; near ``c = 1`` give ``eps = 1 - c`` instead of ``c``.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from ..errors import DomainError
from . import mehler
from .gaussian import correlation_parts, expect, expect2

__all__ = ["Activation", "variance_array", "near_or_series", "NEAR_ONE"]

#: ``1 - c`` up to which an activation's own method near ``c = 1`` (``cross_near_one``,
#: ``difference_near_one``) is tried where the Hermite series does not certify a moment.
NEAR_ONE = 0.5


_PLUS_MINUS = np.array([1.0, -1.0])


@cache
def _phi_owner(cls: type) -> type:
    """The class in ``cls``'s method resolution order that defines ``phi``."""
    return next(c for c in cls.__mro__ if "phi" in vars(c))


def variance_array(q, name: str = "q") -> np.ndarray:
    """``q`` as a float array, checked finite and ``>= 0`` (a :class:`DomainError` otherwise)."""
    arr = np.asarray(q, dtype=float)
    # two reductions: a NaN fails the first comparison, an inf the second
    if not (arr.min(initial=0.0) >= 0 and arr.max(initial=0.0) < np.inf):
        raise DomainError(f"the variance {name} must be finite and >= 0")
    return arr


class Activation:
    """An activation function with the Gaussian moments of the mean-field maps.

    Subclasses set :attr:`name` and implement :meth:`phi`, :meth:`dphi` and (for accuracy
    as ``c -> 1``) :meth:`diff`; the moments default to certified quadrature.

    Attributes
    ----------
    name : str
        The registry name (or a description of a user's function).
    params : dict
        Parameters of the activation (``alpha`` of the leaky ReLU, ...).
    closed_form : bool
        Whether the moments are exact formulas rather than quadrature.
    homogeneous : bool
        Positively homogeneous of degree one (linear, ReLU, leaky ReLU, abs): the q-map is
        linear in ``q`` and ``q`` may grow without bound.
    bounded : bool
        ``|phi|`` bounded on the real line (then ``q`` always has a fixed point).
    """

    name: str = "activation"
    closed_form: bool = False
    homogeneous: bool = False
    bounded: bool = False
    #: ``phi`` is smooth (no kink, no jump in ``phi'``); a kink needs finer quadrature near ``c = 1``.
    smooth: bool = False
    #: ``(a, b, d)`` with ``|phi(u)| <= a + b |u|`` and ``|phi'(u)| <= d``: the moments then come from
    #: the Hermite series of :mod:`~depthdyn.meanfield.mehler` wherever that converges within its
    #: bound, and from quadrature elsewhere (``None``: quadrature only). ``phi`` must be analytic on
    #: each side of the origin (the coefficients' panels meet there).
    growth: tuple[float, float, float] | None = None
    #: ``"odd"`` or ``"even"`` where ``phi(-u) = -phi(u)`` or ``phi(u)``: the Hermite coefficients of the
    #: other parity vanish, and those of the series are sums over half the quadrature nodes. It holds
    #: for the ``phi`` of the class that declares it (see :meth:`phi_parity`).
    parity: str | None = None
    #: ``(U, limit, slope, s, d)`` for an odd or even ``phi`` that approaches ``limit + slope u`` as
    #: ``u -> oo`` (tanh: 1; GELU's even part: ``u/2``): for ``u >= U``, ``|phi(u) - limit - slope u| <= s``
    #: and ``|phi'(u) - slope| <= d``. Where a variance has quadrature nodes beyond ``U`` the asymptote's
    #: Hermite coefficients are exact, only the remainder (:meth:`phi_remainder`) is summed, on the
    #: nodes below ``U`` (``phi'`` too: both must not overflow there), and ``s`` and ``d`` enter the
    #: bounds: the sums' rounding is then the remainder's, not ``phi``'s. It holds, as :attr:`parity`
    #: does, for the ``phi`` of the class that declares it (see :meth:`phi_asymptote`).
    asymptote: tuple[float, float, float, float, float] | None = None

    def __init__(self, **params):
        self.params = dict(params)

    # ----------------------------------------------------------- the function itself
    def phi(self, u: np.ndarray) -> np.ndarray:  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    def dphi(self, u: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def diff(self, u: np.ndarray, h: np.ndarray) -> np.ndarray:
        """``phi(u + h) - phi(u)``; subclasses compute it without cancellation for small ``h``."""
        return self.phi(u + h) - self.phi(u)

    def phi_parity(self) -> str | None:
        """:attr:`parity` where it holds for this ``phi``: set on the instance, or declared by the class
        that defines ``phi`` (a subclass that redefines ``phi`` without declaring one has none)."""
        return self._declared("parity")

    def phi_asymptote(self) -> tuple[float, float, float, float, float] | None:
        """:attr:`asymptote` where it holds for this ``phi`` (as :meth:`phi_parity`; it is used only where
        that gives a parity)."""
        return self._declared("asymptote")

    def phi_remainder(self, u: np.ndarray) -> np.ndarray:
        """``phi(u) - limit - slope u`` for ``u >= 0`` (:meth:`phi_asymptote`): the ``remainder`` method of
        the class that defines ``phi`` (computed there without this difference's cancellation, which is
        what makes the asymptote worth subtracting), else this difference."""
        own = vars(_phi_owner(type(self))).get("remainder")
        if own is not None:
            return own(self, u)
        _, limit, slope, _, _ = self.phi_asymptote()
        return self.phi(u) - limit - slope * u

    def phi_mirrored(self, v: np.ndarray) -> np.ndarray:
        """``phi(v)`` and ``phi(-v)`` as the rows of a new ``(2, len(v))`` array, for ``v >= 0``: the even
        and odd parts of a ``phi`` of neither parity from one evaluation. The ``mirrored`` method of the
        class that defines ``phi`` where it has one (each half-line in its own closed form: SELU's),
        else ``phi`` at ``+-v``."""
        own = vars(_phi_owner(type(self))).get("mirrored")
        if own is not None:
            return own(self, v)
        with np.errstate(under="ignore", over="ignore"):
            return self.phi(np.multiply.outer(_PLUS_MINUS, v))

    def _declared(self, name: str):
        """An attribute set on the instance, or declared by the class that defines ``phi``."""
        own = vars(self)
        if name in own:
            return own[name]
        return vars(_phi_owner(type(self))).get(name)

    def __call__(self, u):
        return self.phi(np.asarray(u, dtype=float))

    def torch(self, x):
        """The activation applied to a torch tensor (torch is imported here, lazily)."""
        import torch

        array = self.phi(x.detach().cpu().double().numpy())
        return torch.as_tensor(array, dtype=x.dtype, device=x.device)

    @property
    def function(self):
        """The activation as a function of a torch tensor (``self.torch``)."""
        return self.torch

    def expr(self):
        """The activation as a SymPy expression in ``x`` (``None`` for a plain function)."""
        return None

    def exact_moments(self) -> dict:
        """SymPy closed forms of the moments where they exist (an empty dict otherwise)."""
        return {}

    # ----------------------------------------------------------- one-variable moments
    def mean(self, q, *, return_error: bool = False):
        """``E[phi(sqrt(q) z)]``."""
        return expect(self.phi, np.sqrt(variance_array(q)), return_error=return_error)

    def second_moment(self, q, *, return_error: bool = False):
        """``E[phi(sqrt(q) z)^2]``: the q-map is ``sw2 * second_moment(q) + sb2``."""
        q = variance_array(q)
        if self.growth is None:
            return expect(lambda u: self.phi(u) ** 2, np.sqrt(q), return_error=return_error)
        flat = q.reshape(-1)
        value, bound, ok = mehler.second_moment(self, flat)
        if not ok.all():
            value[~ok], bound[~ok] = expect(lambda u: self.phi(u) ** 2, np.sqrt(flat[~ok]), return_error=True)
        value, bound = value.reshape(q.shape), bound.reshape(q.shape)
        return (value, bound) if return_error else value

    def derivative_second_moment(self, q, *, return_error: bool = False):
        """``E[phi'(sqrt(q) z)^2]``: ``chi_1 = sw2 * derivative_second_moment(q*)``."""
        return expect(lambda u: self.dphi(u) ** 2, np.sqrt(variance_array(q)), return_error=return_error)

    def second_moment_slope(self, q, *, return_error: bool = False):
        """``d/dq E[phi(sqrt(q) z)^2] = E[phi(u) phi'(u) u] / q`` (the q-map's slope over ``sw2``).

        At ``q = 0`` it is the limit ``phi'(0)^2 + phi(0) phi''(0)``, taken at ``q = 1e-12``.
        """
        q = np.maximum(variance_array(q), 1e-12)
        value = expect(lambda u: self.phi(u) * self.dphi(u) * u, np.sqrt(q), return_error=return_error)
        if return_error:
            return value[0] / q, value[1] / q
        return value / q

    # ----------------------------------------------------------- two-variable moments
    def _bivariate(self, series, integrand, q1, q2, c, eps, return_error, near=None):
        """The Hermite series where it converges (``growth`` set), the activation's own method ``near``
        (if any) at ``eps <= NEAR_ONE``, graded quadrature at the points neither certifies."""
        given_c = eps is None
        c, eps = correlation_parts(c, eps)
        q1, q2, c, eps = np.broadcast_arrays(q1, q2, c, eps)
        shape = q1.shape
        q1, q2, c, eps = (np.ascontiguousarray(x, dtype=float).reshape(-1) for x in (q1, q2, c, eps))
        value, bound, ok = near_or_series(self, series, near, q1, q2, c, eps)
        rest = ~ok
        if rest.any():
            corr = {"c": c[rest]} if given_c else {"eps": eps[rest]}
            value[rest], bound[rest] = expect2(integrand, q1[rest], q2[rest], **corr, sharp=not self.smooth,
                                               return_error=True)
        value, bound = value.reshape(shape), bound.reshape(shape)
        return (value, bound) if return_error else value

    def cross_moment(self, q1, q2, c=None, *, eps=None, return_error: bool = False):
        """``E[phi(u1) phi(u2)]``, correlation ``c`` or ``1 - eps``."""
        q1, q2 = variance_array(q1, "q1"), variance_array(q2, "q2")
        return self._bivariate(lambda act, a, b, rho, e: mehler.cross_moment(act, a, b, rho),
                               lambda u, d: self.phi(u) * self.phi(u + d), q1, q2, c, eps, return_error,
                               getattr(self, "cross_near_one", None))

    def derivative_cross_moment(self, q1, q2, c=None, *, eps=None, return_error: bool = False):
        """``E[phi'(u1) phi'(u2)]``: the c-map's slope is ``sw2 * q * derivative_cross_moment / q'``."""
        q1, q2 = variance_array(q1, "q1"), variance_array(q2, "q2")
        return self._bivariate(lambda act, a, b, rho, e: mehler.derivative_cross_moment(act, a, b, rho),
                               lambda u, d: self.dphi(u) * self.dphi(u + d), q1, q2, c, eps, return_error)

    def difference_moment(self, q, c=None, *, eps=None, return_error: bool = False):
        """``E[phi(u)^2] - E[phi(u1) phi(u2)] = E[(phi(u1) - phi(u2))^2] / 2`` at equal variances ``q``.

        Computed from the differences themselves, so that ``1 - c`` of the c-map keeps all its
        digits as ``c -> 1``: the Hermite series, an activation's own method near ``c = 1`` where it
        has one (``difference_near_one(q, eps) -> (value, bound)``, at ``eps <= NEAR_ONE``), and the
        graded quadrature at the points neither certifies.
        """
        q = variance_array(q)
        near = getattr(self, "difference_near_one", None)
        return self._bivariate(lambda act, a, b, rho, e: mehler.difference_moment(act, a, e),
                               lambda u, d: 0.5 * self.diff(u, d) ** 2, q, q, c, eps, return_error,
                               None if near is None else lambda a, b, e: near(a, e))

    # ----------------------------------------------------------- printing
    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.params.items())
        return f"Activation({self.name!r}{extra})"

    def __str__(self) -> str:
        extra = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                          for k, v in self.params.items())
        return f"{self.name}({extra})" if extra else self.name

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.name == other.name and self.params == other.params

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.name, tuple(sorted(map(repr, self.params.items())))))


def near_or_series(act, series, near, q1, q2, c, eps):
    """``(value, bound, ok)`` of a two-variable moment (flat arrays) before the quadrature: the Hermite
    series ``series(act, q1, q2, c, eps) -> (value, bound, ok)`` (where ``act.growth`` is set), then
    at the points with ``eps <= NEAR_ONE`` that it does not certify ``near(q1, q2, eps) -> (value,
    bound)``, the activation's own method near ``c = 1`` (``None``: none); ``ok`` where the bound is
    within ``RTOL`` of the value. The series goes first: where it converges it is the cheaper."""
    if act.growth is not None:
        value, bound, ok = series(act, q1, q2, c, eps)
    else:
        value, bound, ok = np.zeros(q1.shape), np.full(q1.shape, np.inf), np.zeros(q1.shape, dtype=bool)
    late = ~ok & (eps <= NEAR_ONE) if near is not None else ok[:0]
    if late.any():
        v, b = near(q1[late], q2[late], eps[late])
        good = b <= mehler.RTOL * np.maximum(np.abs(v), 1e-300)
        value[late], bound[late] = np.where(good, v, value[late]), np.where(good, b, bound[late])
        ok[late] = good
    return value, bound, ok
