"""A recurrence compiled for the explorer: parameters with ranges and the exact results as JavaScript.

The explorer's front end (``static/explorer.js``) computes nothing of its own: every number it
shows comes from three functions that SymPy's JavaScript printer writes from depthdyn's exact
results,

* ``coefficients(p)``: the characteristic-polynomial coefficients (highest power first) as
  ``[re, im]`` pairs (the root finder works in complex arithmetic), at the parameter vector ``p``;
* ``conditions(p)``: the exact Schur–Cohn conditions of :func:`~depthdyn.stability_conditions`
  (then those implied by the domains), each a boolean;
* ``layers(p)``: the state matrices of one period (one for a plain recurrence, one per layer of a
  periodic pattern) on the window ``w_l = (x_l, x_{l-1}, ...)``, for the trajectory over depth.

They are emitted as JavaScript source text into the page or the widget's module, never built at
run time from strings: the parameters are renamed ``P0, P1, ...`` before printing, so no name a
user chose reaches the generated code. Everything else (names, ranges, the conditions as text
and MathML) is JSON data.

>>> from depthdyn import momentum
>>> spec = compile_recurrence(momentum())
>>> [p["name"] for p in spec.data["params"]], spec.data["x"], spec.data["y"]
(['lam', 'm', 'eta'], 'lam', 'm')
>>> [c["text"] for c in spec.data["conditions"]]
['eta*lam + 2*m + 2 > 0', '-eta*lam > 0', '1 - m > 0']
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

import sympy as sp
from sympy.printing.jscode import jscode
from sympy.printing.mathml import mathml

from ..errors import BudgetExceededError, ParameterError
from ..printing import sstr
from ..recurrence import Recurrence, to_exact

__all__ = ["ExplorerSpec", "compile_recurrence", "resolve", "parameter_range", "unicode_label",
           "exact_point", "layer_matrices", "layer_dim", "domain_text", "DEFAULT_DEPTH", "MAX_DEPTH"]

#: Layers of the trajectory shown unless asked otherwise, and the most the explorer draws.
DEFAULT_DEPTH, MAX_DEPTH = 30, 2000
#: Seconds of CPU time for the exact conditions; past them the verdict comes from the roots.
CONDITIONS_BUDGET = 20.0

_GREEK = {"lam": "λ", "eta": "η", "beta": "β", "gamma": "γ", "alpha": "α", "eps": "ε", "epsilon": "ε",
          "Gamma": "Γ", "sigma": "σ", "mu": "μ", "tau": "τ", "theta": "θ", "delta": "δ", "omega": "ω",
          "rho": "ρ", "kappa": "κ", "nu": "ν", "phi": "φ", "xi": "ξ", "zeta": "ζ", "psi": "ψ", "chi": "χ"}
#: SymPy's MathML printer turns these names into their letters.
_MATHML_NAME = {"lam": "lambda", "eps": "epsilon"}
_SUBSCRIPTABLE = set("0123456789aehijklmnoprstuvx")
_SUB = str.maketrans("0123456789aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ")
_SUP = str.maketrans("abdeilmnoprst", "ᵃᵇᵈᵉⁱˡᵐⁿᵒᵖʳˢᵗ")
_MATRIX = re.compile(r"^h(res|pre|post)_(\d+)(?:_(\d+))?$")


def unicode_label(name: str) -> str:
    """A parameter name as plain text for axis labels: ``lam`` -> ``λ``, ``hres_1_2`` -> ``Hʳᵉˢ₁₂``.

    >>> unicode_label("lam"), unicode_label("w_1"), unicode_label("hpost_2")
    ('λ', 'w₁', 'Hᵖᵒˢᵗ₂')
    """
    match = _MATRIX.match(name)
    if match:
        kind, i, j = match.groups()
        return "H" + kind.translate(_SUP) + (i + (j or "")).translate(_SUB)
    base, _, sub = name.partition("_")
    base = _GREEK.get(base, base)
    if not sub:
        return base
    return base + sub.translate(_SUB) if set(sub) <= _SUBSCRIPTABLE else f"{base}_{sub}"


def _display_symbol(name: str) -> sp.Symbol:
    """The symbol SymPy's MathML printer shows as the parameter's typeset name."""
    match = _MATRIX.match(name)
    if match:
        kind, i, j = match.groups()
        return sp.Symbol(f"H^{kind}_{i}{j or ''}")
    base, _, sub = name.partition("_")
    base = _MATHML_NAME.get(base, base)
    return sp.Symbol(f"{base}_{sub}" if sub else base)


def _mathml(expr: sp.Basic) -> str:
    shown = expr.xreplace({s: _display_symbol(s.name) for s in expr.free_symbols})
    return f'<math display="inline">{mathml(shown, printer="presentation")}</math>'


def domain_text(domain: sp.Set) -> str:
    """A domain as a reader writes it: ``[0, 1)``, ``(0, ∞)``, ``ℝ``.

    >>> domain_text(sp.Interval.Ropen(0, 1)), domain_text(sp.Interval.open(0, sp.oo))
    ('[0, 1)', '(0, ∞)')
    >>> domain_text(sp.S.Complexes)
    'ℝ (as a real number)'
    """
    if domain == sp.S.Reals:
        return "ℝ"
    if domain == sp.S.Complexes:
        return "ℝ (as a real number)"
    if isinstance(domain, sp.Interval):
        def end(v):
            return "∞" if v is sp.oo else "−∞" if v is -sp.oo else sstr(v).replace("-", "−")
        return ("(" if domain.left_open else "[") + f"{end(domain.start)}, {end(domain.end)}" + (
            ")" if domain.right_open else "]")
    return sstr(domain)


# ------------------------------------------------------------------ what the explorer shows
def resolve(target) -> Recurrence:
    """A :class:`~depthdyn.Recurrence` (a periodic pattern is one) or a family specification
    ``"FAMILY[:NAME=VALUE,...]"`` (structural arguments and fixed values, as ``depthdyn.compare``
    reads it) as the recurrence to explore."""
    if isinstance(target, Recurrence):
        return target
    if isinstance(target, str):
        from ..families.registry import build_from_assignments, parse_spec

        name, given = parse_spec(target)
        return build_from_assignments(name, given)
    raise ParameterError(f"explore takes a Recurrence (a family, from_rule, periodic) or a spec such as "
                         f"'momentum:m=1/2', got {type(target).__name__}")


def _nice_step(span: float) -> float:
    raw = span / 400
    power = 10 ** math.floor(math.log10(raw))
    return next(k * power for k in (1, 2, 5, 10) if k * power >= raw)


def _float(value: sp.Expr) -> float:
    return float(sp.Float(value, 17))


def parameter_range(param, default: float | None = None, *, is_lam: bool = False) -> dict:
    """The slider of one parameter: ``lo``, ``hi``, ``step``, ``value`` and the domain's bounds.

    A bounded domain gives its own ends (an open end moved in by one step); a half-line ends
    four units past its finite end (or at twice the default); the real line is ``[-4, 1]``
    for ``lam`` and two units either side of the default otherwise. ``min``/``max`` and
    ``min_open``/``max_open`` are the domain's (``null`` for an infinite end): a value typed in
    the box may leave the slider's range but not the domain.

    >>> from depthdyn import momentum
    >>> r = parameter_range(momentum().param("m"))
    >>> r["lo"], r["hi"], r["step"], r["value"], r["max_open"]
    (0.0, 0.995, 0.005, 0.5, True)
    """
    dom = param.domain if param.domain.is_subset(sp.S.Reals) else sp.S.Reals
    inf, sup = dom.inf, dom.sup
    lo_d = None if inf.is_infinite else _float(inf)
    hi_d = None if sup.is_infinite else _float(sup)
    if default is None:
        candidates = ([-0.5] if is_lam else []) + [1.0]
        default = next((c for c in candidates if dom.contains(sp.Rational(str(c))) is sp.true), None)
        if default is None:
            default = ((lo_d if lo_d is not None else (hi_d or 0) - 2) +
                       (hi_d if hi_d is not None else (lo_d or 0) + 2)) / 2
    if lo_d is not None and hi_d is not None:
        lo, hi = lo_d, hi_d
    elif lo_d is not None:
        lo, hi = lo_d, max(lo_d + 4, 2 * default)
    elif hi_d is not None:
        lo, hi = min(hi_d - 4, 2 * default), hi_d
    elif is_lam:
        lo, hi = min(-4.0, default - 1), max(1.0, default + 1)
    else:
        lo, hi = default - 2, default + 2
    step = _nice_step(hi - lo)
    open_lo = lo_d is not None and bool(dom.contains(inf) is not sp.true)
    open_hi = hi_d is not None and bool(dom.contains(sup) is not sp.true)
    lo, hi = round(lo + step * open_lo, 12), round(hi - step * open_hi, 12)
    return {"lo": lo, "hi": hi, "step": step, "value": float(default), "min": lo_d, "max": hi_d,
            "min_open": open_lo, "max_open": open_hi}


# ------------------------------------------------------------------ compiling
@dataclass(frozen=True)
class ExplorerSpec:
    """A recurrence compiled for the explorer.

    Attributes
    ----------
    data : dict
        JSON-able: the recurrence's name and equation, its parameters with their sliders, the
        conditions as text and MathML, the axes of the region, the depth of the trajectory.
    module : str
        JavaScript source defining ``COMPILED`` (``coefficients``, ``conditions``, ``layers``),
        printed by SymPy's JavaScript printer from the exact results.
    """

    data: dict
    module: str


def _js(expr: sp.Expr, index: Mapping[str, sp.Symbol]) -> str:
    expr = sp.sympify(expr, strict=True)
    return jscode(expr.xreplace({s: index[s.name] for s in expr.free_symbols}))


def _prelude(names) -> str:
    return f"    const [{', '.join(f'P{i}' for i in range(len(names)))}] = p;\n" if names else ""


def layer_dim(rec: Recurrence) -> int:
    """Entries of ``x_l``: the dimension of a layer (of the pattern's layers for a periodic one)."""
    layers = getattr(rec, "layers", ())
    return layers[0].dim if layers else rec.dim


def layer_matrices(rec: Recurrence) -> tuple:
    """The state matrices of one period on the window: one for a recurrence, one per layer of a pattern."""
    from ..products.periodic import layer_matrix

    layers = getattr(rec, "layer_matrices", None)
    return tuple(layers) if layers else (layer_matrix(rec),)


def _conditions(rec: Recurrence):
    from ..budget import budget
    from ..symbolic.stability import stability_conditions

    try:
        with budget(CONDITIONS_BUDGET):
            return stability_conditions(rec)
    except BudgetExceededError:
        return None


def compile_recurrence(target, *, at: Mapping | None = None, x: str | None = None, y: str | None = None,
                       depth: int = DEFAULT_DEPTH) -> ExplorerSpec:
    """Compile a recurrence (or a family specification) for the explorer.

    Parameters
    ----------
    target : Recurrence or str
        What to explore (see :func:`resolve`); every parameter it still has gets a slider.
    at : mapping, optional
        Starting values of the sliders (default: the family's example values, else a point
        inside the domain).
    x, y : str, optional
        The two parameters of the region view (default: ``lam`` and the next parameter).
    depth : int
        Layers of the trajectory shown.

    Raises
    ------
    UnknownParameterError, DomainError
        A name of ``at``, ``x`` or ``y`` that is no parameter, a value outside its domain.
    ParameterError
        A depth outside ``1..MAX_DEPTH``, complex entries in the state matrices.
    """
    from ..families.catalogue import FAMILIES

    rec = resolve(target)
    layers = layer_matrices(rec)
    if any(e.has(sp.I) for M in layers for e in M):  # then the coefficients are real too
        raise ParameterError("the explorer shows real recurrences: the state matrices have complex entries")
    if not isinstance(depth, int) or isinstance(depth, bool) or not 1 <= depth <= MAX_DEPTH:
        raise ParameterError(f"depth must be an integer in 1..{MAX_DEPTH}, got {depth!r}")
    names = rec.param_names
    index = {name: sp.Symbol(f"P{i}", real=True) for i, name in enumerate(names)}
    start = {}
    entry = FAMILIES.get(rec.name)
    for key, value in {**(dict(entry.example) if entry else {}), **dict(at or {})}.items():
        if key in names:
            exact = to_exact(value)
            rec.param(key).check(exact)
            start[key] = _float(exact)
    for key in dict(at or {}):
        rec.param(key)  # an unknown name is refused with the parameters there are
    params = []
    for p in rec.params:
        is_lam = p.name == rec.lam or p.description.startswith("per-layer value of lam")
        slider = parameter_range(p, start.get(p.name), is_lam=is_lam)
        params.append({"name": p.name, "label": unicode_label(p.name), "mathml": _mathml(p.symbol),
                       "description": p.description, "domain": domain_text(p.domain), **slider})
    axes = [rec.lam] if rec.lam in names else []
    axes += [n for n in names if n not in axes]
    for key in (x, y):
        if key is not None:
            rec.param(key)
    x = x or (axes[0] if axes else None)
    y = y or next((n for n in axes if n != x), None)
    if x is not None and x == y:
        raise ParameterError(f"the region needs two different parameters, got x = y = {x}")

    sc = _conditions(rec)
    conds, never, reason = [], False, ""
    if sc is not None:
        never, reason = sc.never, sc.reason
        for c, implied in [(c, False) for c in sc.conditions] + [(c, True) for c in sc.implied_by_domain]:
            if c in (sp.true, sp.false):
                js = "true" if c is sp.true else "false"
            else:
                rel = c.func(sp.expand(c.lhs - c.rhs), 0)
                js = f"({_js(rel.lhs, index)}) {rel.rel_op} 0"
            conds.append(({"text": sstr(c), "mathml": _mathml(c), "implied": implied}, js))

    pre = _prelude(names)
    layer_js = ",\n".join(
        "      [" + ", ".join("[" + ", ".join(_js(e, index) for e in row) + "]" for row in M.tolist()) + "]"
        for M in layers)
    coeffs = [f"[{_js(sp.expand(c), index)}, 0]" for c in rec.charpoly_coeffs()]  # [re, im] pairs
    module = (
        "const COMPILED = {\n"
        "  coefficients(p) {\n" + pre + "    return [\n" + "".join(f"      {c},\n" for c in coeffs)
        + "    ];\n  },\n"
        "  conditions(p) {\n" + pre + "    return [\n" + "".join(f"      {js},\n" for _, js in conds)
        + "    ];\n  },\n"
        "  layers(p) {\n" + pre + "    return [\n" + layer_js + "\n    ];\n  },\n"
        "};\n"
    )
    data = {
        "name": rec.name,
        "equation": rec.equation() if hasattr(rec, "equation") else "",
        "description": rec.description,
        "source": rec.source,
        "charpoly": sstr(rec.charpoly()),
        "charpoly_mathml": _mathml(sp.Eq(rec.charpoly(), 0, evaluate=False)),
        "degree": len(coeffs) - 1,
        "dim": layer_dim(rec),
        "period": len(layers),
        "state": layers[0].shape[0],
        "params": params,
        "x": x,
        "y": y,
        "depth": depth,
        "conditions": [d for d, _ in conds],
        "exact": sc is not None,
        "never": never,
        "reason": reason,
        "note": "" if sc is not None else
        "the exact conditions exceed the budget; the verdict comes from the roots",
    }
    return ExplorerSpec(data=data, module=module)


def exact_point(rec: Recurrence, values: Mapping) -> dict:
    """Slider values (floats as the decimal they print as, or text) as exact numbers, each
    checked against its parameter's domain."""
    out = {}
    for key, value in values.items():
        exact = to_exact(value)
        rec.param(key).check(exact)
        out[key] = exact
    return out
