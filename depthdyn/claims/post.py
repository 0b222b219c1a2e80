"""Claims of source 000, the blog post "Dynamics of Higher-Order Residual Networks".

Every number and formula is recomputed with depthdyn (families, exact iteration, Vieta
relations, discriminants, closed forms, depth limits, stability conditions); the stated
values are only compared against. Where the post is ambiguous each reading is checked:

* the §3 toy ``Delta^2 x = -(beta/L)^2 x`` in two discretisations: ``explicit``
  (``x_{l+1} = x_l + v_l``, the recurrence printed in §3) and ``block`` (the §2 block,
  ``x_{l+1} = x_l + v_{l+1}``);
* ``v_0 = 0`` under two velocity conventions: ``forward`` (``v_0 = x_1 - x_0``, as §3
  writes) and ``backward`` (``v_0 = x_0 - x_{-1}``, the block's own convention).

The §4 block outputs are not printed in the post: they are inferred from its first-order
trajectory (``u_l = x_{l+1} - x_l``), and the claims say so.
"""

from __future__ import annotations

from functools import partial

import sympy as sp

from ..families import from_coefficients, momentum, oscillator, residual
from ..symbolic.polynomial import discriminant, roots, vieta
from ..symbolic.stability import root_condition, stability_conditions
from ..symbolic.statespace import realisation, similarity
from .base import Claim, Outcome, compare_exact, compare_rounded, ensure, show, stated_expr, verdict
from .post_blocks import CLAIMS as BLOCKS_CLAIMS
from .post_blocks import SOURCE, block_input, chain, claim, r_symbol

__all__ = ["SOURCE", "CLAIMS"]


# the source's claims in document order: those of post_blocks first
_CLAIMS: list[Claim] = list(BLOCKS_CLAIMS)


def _add(*args, **kwargs) -> None:
    _CLAIMS.append(claim(*args, **kwargs))


# ============================================================== §4 the velocity buffer
_FIRST_ORDER = "0 -> 1 -> 0.2 -> 0.8 -> 0.4"  # the stated first-order trajectory of §4
_INFERRED = "block outputs not printed; inferred from the first-order trajectory as u_l = x_{l+1} - x_l"
_S4 = {"first_order": _FIRST_ORDER, "m": sp.Rational(1, 2), "eta": 1}  # the premises of §4
_CALM = {"premises": {"first_order": "0 -> 1 -> 0.95 -> 1 -> 0.95"}}  # small reversals: the buffer no longer helps


def _second(cl):
    return momentum(m=cl.premises["m"], eta=cl.premises["eta"])


def _outputs(cl):
    """The stated first-order trajectory and the block outputs it implies (x' = A0 x + b u)."""
    xs = [stated_expr(t) for t in chain(cl.premises["first_order"])]
    A0, b = block_input(residual())
    return xs, [sp.expand((x1 - A0[0, 0] * x0) / b[0]) for x0, x1 in zip(xs, xs[1:], strict=False)]


def _forced(rec, us):
    """x_0..x_n and v_0..v_n of a block driven by the outputs ``us`` from x_0 = v_0 = 0."""
    A0, b = block_input(rec)
    s, xs, vs = sp.zeros(A0.shape[0], 1), [sp.S.Zero], [sp.S.Zero]
    for u in us:
        s = A0 * s + b * u
        xs.append(s[0])
        vs.append(s[-1])
    return xs, vs


def _swing(xs):
    """The largest reversal |x_{l+1} - x_l| after the first layer."""
    return max(abs(b - a) for a, b in zip(xs[1:], xs[2:], strict=False))


def _alternating(cl):
    xs, us = _outputs(cl)
    ensure(_forced(residual(), us)[0] == xs, "replaying the inferred outputs through the residual block")
    return Outcome([show(u) for u in us], verdict(all(a * b < 0 for a, b in zip(us, us[1:], strict=False))),
                   _INFERRED)


def _second_order(cl):
    xs, vs = _forced(_second(cl), _outputs(cl)[1])
    bad = [f"x_{i}: {show(x)} vs {t}" for i, (t, x) in enumerate(zip(chain(cl.stated), xs, strict=True))
           if not compare_rounded(t, x)]
    return Outcome([show(x) for x in xs], verdict(not bad),
                   "; ".join([_INFERRED, f"v_0..v_4 = {[show(v) for v in vs]}", *bad]))


def _first_swing(cl):
    xs = _outputs(cl)[0]
    swing, ptp = _swing(xs), max(xs[1:]) - min(xs[1:])
    return Outcome(show(swing), compare_rounded(cl.stated, swing).verdict,
                   "read as the largest swing |x_(l+1) - x_l| after layer 1; the peak-to-peak range of "
                   f"x_1..x_4 is {show(ptp)}, half of it (an amplitude in the strict sense) {show(ptp / 2)}")


def _smaller(cl):
    first, second = _swing(_outputs(cl)[0]), _swing(_forced(_second(cl), _outputs(cl)[1])[0])
    return Outcome(f"largest swing {show(second)} vs {show(first)} (ratio {show(second / first)})",
                   verdict(second < first), _INFERRED)


def _partial_reversal(cl):
    us = _outputs(cl)[1]
    vs = _forced(_second(cl), us)[1]
    pairs = [(us[k], vs[k + 1]) for k in range(1, len(us))]  # u_k reverses u_(k-1)
    ok = all(abs(v) < abs(u) and sp.sign(v) == sp.sign(u) for u, v in pairs)
    return Outcome([f"u_{k + 1} = {show(u)} -> v_{k + 2} = {show(v)}" for k, (u, v) in enumerate(pairs)],
                   verdict(ok), "v follows each reversal of u with a smaller magnitude (m v_l offsets it); "
                   + _INFERRED)


_add("000-s4-outputs", "§4", "the 4 layers' block outputs alternate in sign", "alternating signs",
     f"outputs inferred from the stated first-order trajectory {_FIRST_ORDER} through the residual block",
     _alternating, premises=_S4, mutant={"premises": {"first_order": "0 -> 1 -> 2 -> 3 -> 4"}})
_add("000-s4-second-order", "§4",
     "second order (m = 0.5, eta = 1, x_0 = v_0 = 0) driven by the same outputs: the content trajectory",
     "0 -> 1 -> 0.7 -> 1.15 -> 0.975",
     "exact iteration of the momentum block with the inferred outputs in place of lam x", _second_order,
     premises=_S4)
_add("000-s4-first-order-swing", "§4", "the first-order model swings with 0.8 amplitude", "0.8",
     "largest |x_{l+1} - x_l| after the first layer of the stated first-order trajectory", _first_swing,
     premises=_S4)
_add("000-s4-smaller-swing", "§4", "the second-order oscillation amplitude is much smaller",
     "smaller than 0.8", "largest swings of the two exact trajectories", _smaller, premises=_S4, mutant=_CALM)
_add("000-s4-partial-reversal", "§4", "a reversal in u only partially reverses v", "|v_{l+1}| < |u_l|",
     "exact velocities of the momentum block driven by the inferred outputs", _partial_reversal,
     premises=_S4, mutant=_CALM)


# ============================================================== §6 linearised stability
def _charpoly6(cl):
    poly = realisation(momentum(), "block").A.charpoly(r_symbol).as_expr()
    return Outcome(sp.collect(sp.expand(poly), r_symbol),
                   compare_exact(stated_expr(cl.stated, "r", "m", "eta", "lam"), poly).verdict,
                   "j (the Jacobian eigenvalue) is depthdyn's lam")


def _vieta6(which, cl):
    value = getattr(vieta(momentum()), which)
    return Outcome(value, compare_exact(stated_expr(cl.stated, "m", "eta", "lam"), value).verdict)


def _small_j(cl):
    rec, eps = momentum(), sp.Rational(1, 1000)
    sc = stability_conditions(rec)
    ms = (0, sp.Rational(1, 2), sp.Rational(9, 10))
    sides = {sign: all(sc.holds(m=m, eta=1, lam=sign * eps) for m in ms) for sign in cl.premises["signs"]}
    at_zero = root_condition(rec.subs(m=sp.Rational(1, 2), eta=1, lam=0))
    above = root_condition(rec.subs(m=sp.Rational(1, 2), eta=1, lam=eps))
    outcome = "holds" if all(sides.values()) else "fails"  # "j small" as printed: either sign
    return Outcome(f"|r| < 1 iff {sp.sstr(sc.solve_for('lam'))}", outcome,
                   f"true only for small eta j < 0: at j = 0 a root is 1 (spectral radius {at_zero.spectral_radius:.6g}); "
                   f"m = 1/2, eta = 1, j = {eps}: spectral radius {above.spectral_radius:.9g} > 1")


def _two_modes(cl):
    rec = momentum(lam=0)
    found = sp.FiniteSet(*roots(rec).values())
    stated = sp.FiniteSet(*(stated_expr(t, "m").xreplace({sp.Symbol("m"): rec.symbols["m"]})
                            for t in cl.stated.strip("{} ").split(",")))
    return Outcome(found, verdict(found == stated),
                   "at eta j = 0 exactly: r+ = 1 (content mode), r- = m (velocity mode)")


def _product_constant(cl):
    rec = momentum()
    prod = vieta(rec).product
    ok = not prod.has(rec.lam_symbol) and compare_exact(stated_expr(cl.stated, "m"), prod).holds
    return Outcome(prod, verdict(ok))


def _complex_modulus(cl):
    rec, lam = momentum(), sp.Symbol("lam", real=True)
    rho = sp.sqrt(vieta(rec).product)  # a complex-conjugate pair has |r|^2 = the product
    at = {"m": sp.Rational(1, 4), "eta": 1}
    disc = discriminant(rec.subs(at)).xreplace({rec.lam_symbol: lam})
    band = sp.solve_univariate_inequality(disc < 0, lam, relational=False)
    mid = (band.start + band.end) / 2
    mods = {sp.simplify(sp.Abs(z)) for z in roots(rec.subs(at, lam=mid)).values()}
    ok = compare_exact(stated_expr(cl.stated, "m"), rho).holds
    ok = ok and mods == {rho.subs(rec.symbols["m"], at["m"])}
    return Outcome(rho, verdict(ok), f"m = 1/4, eta = 1: complex roots for j in {sp.sstr(band)}; "
                   f"at j = {mid}, |r| = {sp.sstr(mods)}")


def _damping_rate(cl):
    m, mp = momentum().symbols["m"], sp.Symbol("m", positive=True)  # 0 < m < 1, where |r| = sqrt(m)
    slope = sp.diff(sp.sqrt(vieta(momentum()).product).xreplace({m: mp}), mp)
    want = {"increasing": True, "decreasing": False}[cl.stated.split()[0]]
    return Outcome(f"d|r|/dm = {sp.sstr(slope)}", verdict(bool(slope.is_positive) == want),
                   "|r| = sqrt(m) grows with m: slower damping as m -> 1")


def _first_order6(cl):
    rec = residual()
    ok = compare_exact(stated_expr(cl.stated, "r", "lam"), rec.charpoly()).holds and len(roots(rec)) == 1
    return Outcome(f"{sp.sstr(rec.charpoly())}: {len(roots(rec))} root", verdict(ok))


_add("000-s6-charpoly", "§6",
     "the linearised block's characteristic equation is r^2 - (1 + m + eta j) r + m = 0",
     "r**2 - (1 + m + eta*lam)*r + m", "characteristic polynomial of the block's (x, v) matrix", _charpoly6)
_add("000-s6-vieta-product", "§6", "by Vieta the product of the roots is m", "m", "vieta(momentum()).product",
     partial(_vieta6, "product"))
_add("000-s6-vieta-sum", "§6", "by Vieta the sum of the roots is 1 + m + eta j", "1 + m + eta*lam",
     "vieta(momentum()).sum", partial(_vieta6, "sum"))
_add("000-s6-small-j", "§6", "if 0 <= m < 1, both roots have |r| < 1 when j is small", "|r| < 1 for small j",
     "exact stability conditions (Schur-Cohn) at j = ±1/1000, m = 0, 1/2, 9/10, eta = 1", _small_j,
     premises={"signs": (-1, 1)}, mutant={"premises": {"signs": (-1,)}})
_add("000-s6-two-modes", "§6", "when eta j = 0, r+ = 1 (slow content mode) and r- = m (fast velocity mode)",
     "{1, m}", "roots of momentum(lam=0)", _two_modes, mutant={"stated": "{1, -m}"})
_add("000-s6-product-constant", "§6", "as eta j moves, the product r+ r- = m stays constant", "m",
     "Vieta product of momentum(), checked free of lam", _product_constant)
_add("000-s6-complex-modulus", "§6", "when the roots are complex, |r±| = sqrt(m) < 1 (damped oscillation)",
     "sqrt(m)", "sqrt of the Vieta product; exact roots inside the complex band at m = 1/4, eta = 1",
     _complex_modulus)
_add("000-s6-damping-rate", "§6", "m closer to 1 means slower damping", "increasing in m",
     "sign of d|r|/dm for |r| = sqrt(m)", _damping_rate, mutant={"stated": "decreasing in m"})
_add("000-s6-first-order", "§6", "the first-order linearisation x_{l+1} = (1 + j) x_l has a single mode",
     "r - (1 + lam)", "charpoly and roots of residual()", _first_order6)


# ============================================================== §5, §7 state-space views
def _state_space(cl):
    sim = similarity(momentum(), "companion", "block")
    states = realisation(momentum(), "block").states
    named = tuple(t.strip() for t in cl.stated.split("(")[1].rstrip(")").split(","))
    return Outcome(f"A = {sp.sstr(realisation(momentum(), 'block').A)} on states {states}",
                   verdict(sim.verified and named == tuple(states)), f"T = {sim.T.tolist()}")


def _augmented(cl):
    ok, shapes = True, []
    for p in range(1, 5):
        names = [f"a{j}" for j in range(1, p + 1)]
        rec = from_coefficients([1, *names], names)
        comp = realisation(rec, "companion").A
        size = stated_expr(cl.stated, "p").xreplace({sp.Symbol("p"): p})
        ok = ok and comp.shape == (size, size)
        ok = ok and compare_exact(rec.charpoly(), comp.charpoly(r_symbol).as_expr()).holds
        ok = ok and similarity(rec, "companion", "difference").verified
        shapes.append(f"p={p}: {comp.shape[0]}x{comp.shape[1]}")
    return Outcome("; ".join(shapes), verdict(ok), "companion charpoly = recurrence charpoly and the "
                   "difference realisation is similar, for generic coefficients a_1..a_p")


_add("000-s5-state-space", "§5",
     "stacking (x_l, v_l) gives a linear first-order state-space model of the block",
     "first-order recurrence on (x, v)", "exact similarity of the block realisation to the companion form",
     _state_space, mutant={"stated": "first-order recurrence on (x, v, w)"})
_add("000-s7-augmented-state", "§7",
     "a p-th order depth model is a first-order recurrence on the augmented state (of size p)",
     "p", "companion and difference realisations of generic order-p "
     "recurrences, p = 1..4", _augmented)


# ============================================================== §8 initialisation
def _sigmoid(cl):
    a = sp.Symbol("a", real=True)
    sig = 1 / (1 + sp.exp(-a))
    lim = sp.limit(sig, a, -sp.oo)
    inside = bool(sp.Interval.Ropen(0, 1).contains(sig.xreplace({a: -10})))
    return Outcome(f"lim_(a->-oo) sigmoid(a) = {lim}", verdict(lim == stated_expr(cl.stated) and inside),
                   "m = sigmoid(a) lies in (0, 1): never exactly 0, inside the domain [0, 1) of m")


def _softplus(cl):
    value = sp.simplify(sp.log(1 + sp.exp(sp.log(sp.E - 1))))
    return Outcome(value, compare_exact(stated_expr(cl.stated), value).verdict,
                   "exactly 1 (the post says ≈ 1)")


def _residual_start(cl):
    rec, res = momentum(m=0, eta=1), residual()
    ok = compare_exact(stated_expr(cl.stated, "r", "lam"), rec.charpoly()).holds
    ok = ok and compare_exact(sp.expand(r_symbol * res.charpoly()), rec.charpoly()).holds
    x0, v0 = sp.symbols("x_0 v_0")
    A, s, xs = realisation(rec, "block").A, sp.Matrix([x0, v0]), []
    for _ in range(6):
        xs.append(sp.expand(s[0]))
        s = A * s
    return Outcome(sp.factor(rec.charpoly()), verdict(ok and compare_exact(res.iterate([x0], 5), xs).holds),
                   "x_0..x_5 from (x_0, v_0) through the block equal the residual trajectory for any v_0; "
                   "the extra root 0 never shows in x")


_add("000-s8-sigmoid", "§8", "a_l << 0 makes m_l = sigmoid(a_l) ≈ 0", "0", "exact limit a -> -oo", _sigmoid)
_add("000-s8-softplus", "§8", "b_l = log(e - 1) makes eta_l = softplus(b_l) ≈ 1", "1",
     "exact simplification of log(1 + exp(log(e - 1)))", _softplus)
_add("000-s8-residual-start", "§8",
     "with m = 0, eta = 1 (and v_0 = 0) the model starts as a standard residual net", "r*(r - 1 - lam)",
     "charpoly of momentum(m=0, eta=1) and exact block trajectories vs residual()",
     _residual_start)


# ============================================================== §5 parameters, §3 vs §2
def _parameter_count(cl):
    d = cl.premises["d"]
    a, b = sp.symbols(f"a1:{d + 1}", real=True), sp.symbols(f"b1:{d + 1}", real=True)
    m = [1 / (1 + sp.exp(-t)) for t in a]  # §8: m_l = sigmoid(a_l), eta_l = softplus(b_l), a_l, b_l in R^d
    eta = [sp.log(1 + sp.exp(t)) for t in b]
    count = len(set().union(*(e.free_symbols for e in m + eta)))
    return Outcome(f"{count} learnable numbers per layer for d = {d} channels (m_l, eta_l in R^d, §2, §8)",
                   verdict(count == stated_expr(cl.stated)),
                   "two per channel: a scalar pair per layer only for d = 1")


_add("000-s5-parameter-count", "§5", "the second-order residual has only two learnable scalars per layer "
     "(m_l, eta_l)", "2", "free parameters of §8's m_l = sigmoid(a_l), eta_l = softplus(b_l) with a_l, b_l "
     "in R^d, d = 4", _parameter_count, premises={"d": 4}, mutant={"premises": {"d": 1}})


def _toy_carry(cl):
    toy, block = oscillator(form="block"), momentum()
    m, eta, lam = (block.symbols[k] for k in ("m", "eta", "lam"))
    j = sp.Symbol("j")  # eta*lam as one unknown
    diff = sp.expand(block.charpoly().xreplace({eta: 1, lam: j}) - toy.charpoly())
    (sol,) = sp.solve(sp.Poly(diff, r_symbol).all_coeffs(), [m, j], dict=True)
    domain = cl.premises["m_domain"]
    inside = bool(domain.contains(sol[m]))
    return Outcome(f"the toy is the §2 block with m = {sp.sstr(sol[m])}, eta lam = {sp.sstr(sol[j])}",
                   verdict(inside), f"§2 (and §8's m = sigmoid(a)) restrict m to {sp.sstr(domain)}; the toy is "
                   "the undamped limit m -> 1 of the block, which the block itself never reaches")


_add("000-s3-toy-is-block", "§3 vs §2, §8", "the scalar second-order toy of §3 is the §2 block (with its "
     "carry m_l in [0, 1)) applied to a linear restoring force", "m in [0, 1)",
     "charpoly of oscillator(form='block') matched to momentum(): solve for m and eta lam", _toy_carry,
     premises={"m_domain": sp.Interval.Ropen(0, 1)}, mutant={"premises": {"m_domain": sp.Interval(0, 1)}})

CLAIMS: tuple[Claim, ...] = tuple(_CLAIMS)
