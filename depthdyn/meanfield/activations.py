"""The activation registry: names, parameters, and :func:`get_activation`.

An activation is named (``"relu"``, ``"tanh"``, ...; see :data:`ACTIVATIONS`), given as a
SymPy expression in one symbol, or given as a function of a torch tensor. Named activations
use closed forms where they exist and certified quadrature elsewhere; a SymPy expression
that is a polynomial gets exact (Mehler) moments, and one that is a registered activation of
its symbol (``tanh(x)``) gets that activation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import MappingProxyType

from ..errors import DomainError, ParameterError, UnknownParameterError
from .activation import Activation
from .closedform import Cos, Exp, GaussianBump, PiecewiseLinear, Polynomial, Sin
from .erf import Erf
from .smooth import GELU, SELU, CallableActivation, Sigmoid, SiLU, Softplus, SymbolicActivation, Tanh

__all__ = ["ACTIVATIONS", "get_activation", "UnknownActivationError"]


class UnknownActivationError(ParameterError, KeyError):
    """An activation name that is not in the registry."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


def _hermite_coefficients(n: int):
    import numpy as np

    return np.polynomial.hermite_e.herme2poly([0] * n + [1])


def _number(name: str, value, low=-math.inf, high=math.inf) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(value) or not low <= value <= high:
        raise DomainError(f"{name} must be finite and in [{low:g}, {high:g}], got {value!r}")
    return value


def _degree(value) -> int:
    number = _number("n", value, 0, 40)
    if number != int(number):
        raise DomainError(f"the Hermite degree n must be an integer in [0, 40], got {value!r}")
    return int(number)


#: name -> (factory(**params), {parameter: default}, one-line description)
_REGISTRY: dict[str, tuple[Callable[..., Activation], dict, str]] = {
    "linear": (lambda: PiecewiseLinear("linear", 1.0), {}, "x (closed form)"),
    "relu": (lambda: PiecewiseLinear("relu", 0.0), {}, "max(x, 0) (arc-cosine kernel)"),
    "leaky_relu": (lambda alpha=0.01: PiecewiseLinear("leaky_relu", _number("alpha", alpha, -1, 1),
                                                      alpha=float(alpha)),
                   {"alpha": 0.01}, "max(x, alpha x) (closed form)"),
    "abs": (lambda: PiecewiseLinear("abs", -1.0), {}, "|x| (closed form)"),
    "erf": (lambda: Erf(), {}, "erf(x) (arcsine kernel)"),
    "gelu": (lambda: GELU(), {}, "x Phi(x) (closed-form q-map, quadrature c-map)"),
    "sin": (lambda: Sin(), {}, "sin(x) (closed form)"),
    "cos": (lambda: Cos(), {}, "cos(x) (closed form)"),
    "exp": (lambda: Exp(), {}, "exp(x) (closed form)"),
    "gaussian": (lambda: GaussianBump(), {}, "exp(-x^2/2) (closed form)"),
    "hermite": (lambda n=3: Polynomial("hermite", _hermite_coefficients(_degree(n)), n=_degree(n)),
                {"n": 3}, "He_n(x), probabilists' Hermite polynomial (closed form)"),
    "tanh": (lambda: Tanh(), {}, "tanh(x) (certified quadrature)"),
    "sigmoid": (lambda: Sigmoid(), {}, "1/(1+exp(-x)) (certified quadrature)"),
    "silu": (lambda: SiLU(), {}, "x sigmoid(x), also 'swish' (certified quadrature)"),
    "softplus": (lambda: Softplus(), {}, "log(1+exp(x)) (certified quadrature)"),
    "selu": (lambda: SELU(), {}, "scaled ELU of Klambauer et al. (certified quadrature)"),
}
_ALIASES = {"swish": "silu", "identity": "linear", "leakyrelu": "leaky_relu", "leaky": "leaky_relu"}

#: Registered activation names -> their parameters' defaults (read-only).
ACTIVATIONS = MappingProxyType({name: MappingProxyType(dict(entry[1])) for name, entry in _REGISTRY.items()})


def describe_activations() -> dict[str, str]:
    """Name -> one-line description, for help texts."""
    return {name: entry[2] for name, entry in _REGISTRY.items()}


def _suggest(name: str) -> str:
    import difflib

    close = difflib.get_close_matches(name.lower(), list(_REGISTRY) + list(_ALIASES), n=2, cutoff=0.5)
    return f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""


def _by_name(name: str, params: dict) -> Activation:
    key = name.strip().lower().replace("-", "_")
    key = _ALIASES.get(key, key)
    if key not in _REGISTRY:
        raise UnknownActivationError(f"unknown activation {name!r}{_suggest(name)}; "
                                     f"choose from {', '.join(_REGISTRY)}, or pass a SymPy expression")
    factory, defaults, _ = _REGISTRY[key]
    unknown = set(params) - set(defaults)
    if unknown:
        import difflib

        bad = sorted(unknown)[0]
        close = difflib.get_close_matches(bad, list(defaults), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        allowed = ", ".join(defaults) or "none"
        raise UnknownParameterError(f"activation {key} has no parameter {bad!r}{hint}; "
                                    f"its parameters: {allowed}")
    return factory(**params)


def _from_sympy(expression) -> Activation:
    import sympy as sp

    symbols = expression.free_symbols
    if len(symbols) != 1:
        raise ParameterError("an activation expression needs exactly one symbol, got "
                             f"{sorted(map(str, symbols))}; "
                             "substitute numbers for the others")
    (x,) = symbols
    if expression == x:  # the identity: the named linear activation (homogeneous, in closed form)
        return _by_name("linear", {})
    if expression.is_polynomial(x):
        coefficients = [float(a) for a in reversed(sp.Poly(expression, x).all_coeffs())]
        return Polynomial(str(expression), coefficients)
    named = {sp.tanh(x): "tanh", sp.erf(x): "erf", sp.sin(x): "sin", sp.cos(x): "cos", sp.exp(x): "exp",
             sp.exp(-x ** 2 / 2): "gaussian", sp.Abs(x): "abs", sp.Max(x, 0): "relu"}
    if expression in named:
        return _by_name(named[expression], {})
    return SymbolicActivation(expression, x)


def get_activation(act, **params) -> Activation:
    """The :class:`Activation` for a name, a SymPy expression in one symbol, or a function.

    Parameters
    ----------
    act : str, sympy.Expr, callable or Activation
        A registered name (see :data:`ACTIVATIONS`; ``"swish"`` is ``"silu"``), a SymPy
        expression in one symbol, a function of a torch tensor (or of a NumPy array), or an
        :class:`Activation` (returned as it is).
    **params
        The activation's parameters (``alpha`` of ``leaky_relu``, ``n`` of ``hermite``).

    Raises
    ------
    UnknownActivationError
        For a name not in the registry (with the nearest names).
    UnknownParameterError, DomainError
        For a parameter the activation does not have, or a value outside its domain.

    Examples
    --------
    >>> get_activation("relu").second_moment(2.0)
    array(1.)
    >>> get_activation("tanhh")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    depthdyn.meanfield.activations.UnknownActivationError: unknown activation 'tanhh' ...
    """
    if isinstance(act, Activation):
        if params:
            raise UnknownParameterError("parameters go with an activation's name, "
                                        "not with an Activation object")
        return act
    if isinstance(act, str):
        return _by_name(act, params)
    if params:
        raise UnknownParameterError("parameters go with an activation's name; "
                                    "substitute them into the expression")
    if hasattr(act, "free_symbols") and hasattr(act, "subs"):
        return _from_sympy(act)
    if callable(act):
        return CallableActivation(act)
    raise ParameterError("an activation is a name, a SymPy expression or a function, "
                         f"got {type(act).__name__}")
