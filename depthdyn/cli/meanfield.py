"""``depthdyn meanfield``: signal propagation at initialisation (mean-field maps, fixed points, phases)."""

from __future__ import annotations

import math
import sys
from fractions import Fraction

from ..errors import DomainError, ParameterError
from .common import emit_json


def add_arguments(cmd) -> None:
    cmd.add_argument("activation", help="activation name (relu, tanh, erf, gelu, silu, ...) or a SymPy "
                     "expression in x, e.g. 'x*tanh(x)'")
    cmd.add_argument("--family", default="plain", metavar="F",
                     help="network family: plain (default), residual, ... (depthdyn.meanfield.kernels)")
    cmd.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                     help="a parameter of the activation (alpha=0.2 of leaky_relu) or of the family (h=0.5; "
                     "norm=pre or norm=post places a LayerNorm); repeatable")
    point = cmd.add_argument_group("where to look (default: the critical sw2 at sb2 = 0)")
    point.add_argument("--sw2", type=float, metavar="V", help="weight variance sigma_w^2 (> 0)")
    point.add_argument("--sb2", type=float, metavar="V", help="bias variance sigma_b^2 (>= 0; default 0)")
    point.add_argument("--phase", action="store_true",
                       help="the phase diagram: the order-to-chaos line and xi_c over (sw2, sb2)")
    cmd.add_argument("--depth", type=int, metavar="L", help="iterate the maps over L layers (with --phase: "
                     "outline the trainable region of depth L)")
    cmd.add_argument("--q0", type=float, metavar="Q",
                     help="input variance, with --depth (default 1)")
    cmd.add_argument("--c0", type=float, metavar="C",
                     help="input correlation, with --depth (default 1/2)")
    cmd.add_argument("--json", action="store_true", help="emit one JSON object")
    cmd.add_argument("--out", metavar="FIG", help="write the figure here (.png at 200 dpi, .pdf or .svg): "
                     "the phase diagram with --phase, else c_l over depth (needs --depth)")


#: Family parameters whose values are words, not numbers: LayerNorm's placement (``none`` for none).
_WORDS = ("norm",)


def _split_params(activation: str, assignments) -> tuple[dict, dict]:
    """``-p NAME=VALUE`` into the activation's parameters and the family's."""
    from ..meanfield import ACTIVATIONS

    own = set(ACTIVATIONS.get(activation.strip().lower(), {}))
    act_params, family_params = {}, {}
    for text in assignments:
        name, sep, value = text.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ParameterError(f"-p expects NAME=VALUE, got {text!r}")
        if name in _WORDS and name not in own:  # the family checks the word (norm: pre or post)
            word = value.strip().lower()
            family_params[name] = None if word == "none" else word
            continue
        try:  # an integer stays one: stream counts, lags and Hermite degrees are counts
            number = int(value)
        except ValueError:
            try:  # 1/2, 0.1 and 1e-3 as elsewhere on the command line
                number = float(Fraction(value.strip()))
            except (ValueError, ZeroDivisionError):
                raise ParameterError(f"-p {name}: expected a number, got {value!r}") from None
        (act_params if name in own else family_params)[name] = number
    return act_params, family_params


def _activation(text: str, params: dict):
    from ..meanfield import ACTIVATIONS, get_activation

    key = text.strip().lower()
    named = key in ACTIVATIONS or key.replace("-", "_") in ACTIVATIONS
    if named or key.isidentifier() and text.strip() != "x":  # "x": the expression of the identity
        return get_activation(text, **params)  # an unknown name: the registry suggests the nearest
    import sympy as sp

    from ..parse import parse_expr

    expr = parse_expr(text, {"x": sp.Symbol("x")})
    if params:
        raise ParameterError("parameters go with a named activation; write them into the expression")
    return get_activation(expr)


def _check_depth(depth):
    if depth is not None and depth < 0:
        raise DomainError(f"--depth must be >= 0, got {depth}")
    if depth is not None and depth > 1_000_000:
        raise DomainError(f"--depth {depth} is too large; give at most 1,000,000 layers")


def _point(act, sw2, sb2) -> tuple[float, float, str]:
    """``(sw2, sb2, note)``: the given values, or the critical sw2 at the given (or zero) sb2."""
    from ..meanfield import critical_point

    sb2 = 0.0 if sb2 is None else sb2
    if sw2 is not None:
        return sw2, sb2, ""
    try:
        cp = critical_point(act, sb2=sb2)
    except DomainError:
        return 1.0, sb2, f"no order-to-chaos point at sb2={sb2:g}: sw2 = 1 used"
    return cp.sw2, sb2, f"sw2 not given: the critical value at sb2={sb2:g}"


def run(args) -> int:
    from ..output import figure_destination

    out = figure_destination(args.out) if args.out else None
    _check_depth(args.depth)
    act_params, family_params = _split_params(args.activation, args.param)
    act = _activation(args.activation, act_params)
    if (args.q0 is not None or args.c0 is not None) and (args.depth is None or args.phase):
        raise ParameterError("--q0 and --c0 are the input of the iteration over --depth L layers: give "
                             "--depth (they have no part in a fixed point or the phase diagram)")
    if args.phase:
        if args.sw2 is not None or args.sb2 is not None:
            raise ParameterError("--phase draws the whole (sw2, sb2) plane: leave out --sw2 and --sb2")
        return _phase(act, args, out)
    if out is not None and args.depth is None:
        raise ParameterError("--out draws c_l over depth: give --depth L (or --phase for the phase diagram)")
    return _point_report(act, args, family_params, out)


def _point_report(act, args, family_params: dict, out) -> int:
    from ..meanfield import fixed_point, iterate
    from ..meanfield.checks import check_weights

    sw2, sb2, note = _point(act, args.sw2, args.sb2)
    if note and args.family != "plain":
        note = note.replace("the critical value", "the plain chain's critical value")
    check_weights(sw2, sb2)
    report = {"activation": str(act), "family": args.family, "sw2": sw2, "sb2": sb2, "note": note}
    fp = None
    plain = args.family == "plain" and not family_params  # the chain's fixed point (no LayerNorm)
    unknown = sorted(set(family_params) - set(_WORDS)) if args.family == "plain" else []
    if unknown:
        raise ParameterError(f"the plain chain has no parameter {unknown[0]!r}; "
                             f"{act} takes {', '.join(act.params) or 'none'}")
    if plain:
        fp = fixed_point(act, sw2, sb2)
        report["fixed_point"] = fp.to_json()
    it = None
    if args.depth is not None:
        q0, c0 = 1.0 if args.q0 is None else args.q0, 0.5 if args.c0 is None else args.c0
        it = iterate(act, sw2, sb2, depth=args.depth, q0=q0, c0=c0, family=args.family, **family_params)
        report["iterates"] = it.to_json()
    elif not plain:
        raise ParameterError(f"--family {args.family}: give --depth L to iterate its kernel maps")
    if out is not None:
        from ..output import save_figure
        from ..plot.meanfield import plot_correlations
        from ..style import new_figure

        ax = new_figure().add_subplot()
        ax._depthdyn_own = True
        plot_correlations(it, ax=ax)
        save_figure(ax.figure, out)
        report["figure"] = args.out
    if args.json:
        emit_json(report)
        return 0
    if note:
        sys.stdout.write(f"({note})\n")
    if fp is not None:
        sys.stdout.write(f"{fp}\n")
    if it is not None:
        sys.stdout.write(f"{it}\n")
    if out is not None:
        sys.stdout.write(f"figure written to {args.out}\n")
    return 0


def _phase(act, args, out) -> int:
    from ..meanfield import critical_line, phase_diagram

    line = critical_line(act)
    diagram = phase_diagram(act)
    if out is not None:
        from ..output import save_figure
        from ..plot.meanfield import plot_phase_diagram
        from ..style import new_figure

        ax = new_figure().add_subplot()
        ax._depthdyn_own = True
        plot_phase_diagram(diagram, line, ax=ax, depth=args.depth)
        save_figure(ax.figure, out)
    inside = (line.sw2 >= diagram.sw2[0]) & (line.sw2 <= diagram.sw2[-1]) & (line.sb2 <= diagram.sb2[-1])
    if args.json:
        emit_json({"activation": str(act), "critical_line": line.to_json(),
                   "phase_diagram": diagram.to_json(), "figure": args.out})
        return 0
    sys.stdout.write(f"{line}\n{diagram}\n")
    if inside.any():
        k = int(inside.nonzero()[0][-1])
        sys.stdout.write(f"  e.g. critical at sw2 = {line.sw2[k]:.10g}, sb2 = {line.sb2[k]:.10g} "
                         f"(xi_c = inf there)\n")
    if args.depth is not None:
        depth = 6 * diagram.xi_c
        share = float((depth >= args.depth).mean()) if math.isfinite(args.depth) else 0.0
        sys.stdout.write(f"  trainable to depth {args.depth} (6 xi_c >= L) on {share:.0%} of the grid\n")
    if out is not None:
        sys.stdout.write(f"figure written to {args.out}\n")
    return 0
