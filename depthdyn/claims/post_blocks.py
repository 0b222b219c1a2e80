"""Claims of source 000 (the blog post), part one: the first-order block (§1), the
second-order block (§2) and the oscillator toy (§3).

:mod:`depthdyn.claims.post` holds the rest of the post's claims and the full ``CLAIMS`` tuple.
"""

from __future__ import annotations

import re
from functools import partial

import sympy as sp

from ..families import momentum, oscillator, residual
from ..families.literature import momentum_sander
from ..symbolic.polynomial import discriminant, roots, vieta
from ..symbolic.solve import closed_form, depth_limit
from ..symbolic.stability import root_condition
from ..symbolic.statespace import realisation, similarity
from .base import (
    Claim,
    Outcome,
    compare_exact,
    compare_rounded,
    ensure,
    show,
    stated_expr,
    verdict,
    wrong_value,
)

__all__ = ["CLAIMS", "claim", "SOURCE", "block_input", "chain", "r_symbol"]


SOURCE = "000_c40155c17ead4a32.txt"
_CLAIMS: list[Claim] = []
c = sp.Symbol("c")
r_symbol = sp.Symbol("r")


def claim(
    id, section, statement, stated, method, check, *, premises=None, mutant=None, reading_of=""
) -> Claim:
    """A claim of this source; without a ``mutant`` the stated value made wrong is the mutant."""
    if mutant is None and wrong_value(stated) is not None:
        mutant = {"stated": wrong_value(stated)}
    return Claim(id, SOURCE, section, statement, stated, method, check, premises or {}, mutant, reading_of)


def _add(*args, **kwargs) -> None:
    _CLAIMS.append(claim(*args, **kwargs))


def chain(text: str) -> list[str]:
    return [t.strip() for t in text.split("->")]


def block_input(rec):
    """(A0, b) with s' = A0 s + b u: the block's output u in place of lam x (lam enters linearly)."""
    A = realisation(rec, "block" if rec.native else "companion").A
    lam = rec.lam_symbol
    ensure(A.diff(lam, 2) == sp.zeros(*A.shape), "the block matrix is not linear in lam")
    return A.xreplace({lam: 0}), A.diff(lam)[:, 0]


# ============================================================== §1 first order
def _scaled(alpha):
    return residual(scaled=True).subs(lam=alpha, L=4)


def _ratio(alpha, cl):
    (root,) = roots(_scaled(alpha)).values()
    return Outcome(show(root), compare_rounded(cl.stated, root).verdict)


def _trajectory(alpha, cl):
    stated = chain(cl.stated)
    xs = _scaled(alpha).iterate([stated_expr(stated[0])], len(stated) - 1)
    bad = [f"x_{i} = {show(x)} vs {t}" for i, (t, x) in enumerate(zip(stated, xs, strict=True))
           if not compare_rounded(t, x)]
    return Outcome([show(x) for x in xs], verdict(not bad), "; ".join(bad))


def _heading(alpha, cl):
    expr, dec = (t.strip() for t in cl.stated.split("≈"))
    rec = residual(scaled=True)
    dl = depth_limit(rec, [1])
    lim = dl.limit.xreplace({rec.symbols["lam"]: alpha})
    ok = compare_exact(stated_expr(expr), lim).holds and compare_rounded(dec, lim).holds
    return Outcome(show(lim), verdict(ok), f"{dl} (x_0 = 1, lam = alpha); at L = 4, "
                   f"x_4 = {show(_scaled(alpha).iterate([1], 4)[-1])}")


for _a, _name, _rt, _traj, _lim in (
    (1, "growing", "1.25", "1 -> 1.25 -> 1.56 -> 1.95 -> 2.44", "exp(1) ≈ 2.72"),
    (-1, "decaying", "0.75", "1 -> 0.75 -> 0.56 -> 0.42 -> 0.32", "exp(-1) ≈ 0.37"),
):
    _add(f"000-s1-{_name}-ratio", "§1", f"L = 4, alpha = {_a}: the ratio is r = 1 + alpha/L", _rt,
         "root of residual(scaled=True) at lam = alpha, L = 4, rounded to the printed digits",
         partial(_ratio, _a))
    _add(f"000-s1-{_name}-trajectory", "§1", f"L = 4, x_0 = 1, alpha = {_a}: the trajectory x_0..x_4", _traj,
         "exact iteration of residual(scaled=True); each value rounded to the printed digits",
         partial(_trajectory, _a))
    _add(f"000-s1-{_name}-limit", "§1", f"alpha = {_a}: x_L is heading toward e^alpha", _lim,
         "depth_limit of residual(scaled=True) as L -> oo (exact), then rounded", partial(_heading, _a),
         mutant={"stated": _lim.replace("2.72", "2.79").replace("0.37", "0.44")})


def _monotone(cl):
    lines, ok = [], True
    for alpha in cl.premises["alphas"]:
        xs = _scaled(alpha).iterate([1], 4)
        steps = [b - a for a, b in zip(xs, xs[1:], strict=False)]
        signs = {sp.sign(t) for t in steps}
        ok = ok and len(signs) == 1 and 0 not in signs
        lines.append(f"alpha={alpha}: steps {[show(t) for t in steps]}")
    return Outcome("; ".join(lines), verdict(ok))


_add("000-s1-monotone", "§1", "in both cases (alpha = 1, -1) the trajectory is monotone", "monotone",
     "signs of x_{l+1} - x_l along the exact trajectories", _monotone,
     premises={"alphas": (1, -1)}, mutant={"premises": {"alphas": (1, -5)}})


def _ratio_in_u():
    """The first-order root with alpha = u L (u = alpha/L real)."""
    u, rec = sp.Symbol("u", real=True), residual(scaled=True)
    (root,) = roots(rec).values()
    return u, sp.expand(root.xreplace({rec.symbols["lam"]: u * rec.symbols["L"]}))


def _neutral(cl):
    u, ratio = _ratio_in_u()
    domain = cl.premises["alpha_over_L"]  # the range of alpha/L the sentence speaks about
    neutral = sp.solveset(sp.Eq(ratio**2, 1), u, domain)  # |r| = 1 for a real root
    positive = neutral.intersect(sp.solveset(ratio > 0, u, sp.S.Reals))
    stated = sp.FiniteSet(stated_expr(cl.stated.split("=")[1]))
    outcome = "holds" if neutral == stated else "fails"  # as printed: no restriction on alpha here
    notes = [f"alpha = {sp.sstr(o)}*L gives r = {sp.sstr(ratio.xreplace({u: o}))}: x_l = "
             f"({sp.sstr(ratio.xreplace({u: o}))})**l x_0, neutral and sign-alternating"
             for o in sorted(neutral - stated, key=str)]
    if outcome == "fails" and positive == stated:
        notes.append("alpha = 0 is the only neutral point with a positive ratio, as the previous sentence "
                     "assumes")
    return Outcome(f"|1 + alpha/L| = 1 for alpha/L in {sp.sstr(neutral)}", outcome, "; ".join(notes))


_add("000-s1-neutral", "§1", "the only exactly neutral point (|r| = 1) is alpha = 0", "alpha = 0",
     "solve |1 + alpha/L| = 1 for real alpha (L > 0) from the residual root", _neutral,
     premises={"alpha_over_L": sp.S.Reals}, mutant={"premises": {"alpha_over_L": sp.Interval.open(-1, sp.oo)}})


def _no_oscillation(cl):
    u, ratio = _ratio_in_u()
    domain = cl.premises["alpha_over_L"]  # the range of alpha/L the sentence speaks about
    osc = sp.solveset(ratio**2 <= 1, u, domain).intersect(sp.solveset(ratio < 0, u, domain))
    positive = sp.solveset(ratio > 0, u, sp.S.Reals)
    outcome = "holds" if osc.is_empty else "fails"  # as printed: no restriction on alpha in this sentence
    note = "" if outcome == "holds" else (
        "alpha in [-2L, -L) gives a bounded, sign-alternating trajectory; true only for a positive ratio "
        "1 + alpha/L > 0" + (" (there no such regime exists)" if osc.intersect(positive).is_empty else ""))
    return Outcome(f"bounded sign-alternating x_l for alpha/L in {sp.sstr(osc)}", outcome, note)


_add("000-s1-no-oscillation", "§1",
     "first-order residual dynamics have no nontrivial bounded oscillatory regime", "no bounded oscillation",
     "real alpha with |r| <= 1 and r < 0 (sign changes), from the residual root",
     _no_oscillation, premises={"alpha_over_L": sp.S.Reals},
     mutant={"premises": {"alpha_over_L": sp.Interval.open(-1, sp.oo)}})


# ============================================================== §2 the second-order block
def _reduction(cl):
    (A0, b), (R0, rb) = block_input(momentum(**cl.premises)), block_input(residual())
    ok = A0[0, 0] == R0[0, 0] and A0[0, 1] == 0 and b[0] == rb[0]
    x, v, u = sp.symbols("x v u")
    new = A0 * sp.Matrix([x, v]) + b * u
    return Outcome(f"x' = {new[0]}, v' = {new[1]}; residual: x' = {(R0 * sp.Matrix([x]) + rb * u)[0]}",
                   verdict(ok), "v does not enter the x update, so the trajectories coincide for any v_0")


_add("000-s2-reduction", "§2",
     "m = 0, eta = 1 give v' = f(LN(x)), x' = x + f(LN(x)): the pre-norm residual block", "x' = x + u",
     "the momentum block with its output u in place of lam x, vs the residual block", _reduction,
     premises={"m": 0, "eta": 1}, mutant={"premises": {"m": sp.Rational(1, 2)}})


def _velocity(cl):
    rec = momentum()
    ok = compare_exact(realisation(rec, "block").A, realisation(rec, cl.premises["realisation"]).A).holds
    ok = ok and similarity(rec, "companion", "block").verified
    return Outcome(realisation(rec, "block").A, verdict(ok),
                   "the block update is the content/velocity realisation (v_l = x_l - x_{l-1}) of "
                   "x_{l+1} = (1 + m + eta lam) x_l - m x_{l-1}")


_add("000-s2-velocity", "§2",
     "eliminating v with v_l = x_l - x_{l-1} (from x_{l+1} = x_l + v_{l+1}) gives the second-order "
     "recurrence",
     "v_l = x_l - x_{l-1}",
     "block realisation vs the content_velocity realisation of momentum(); similarity to the companion",
     _velocity, premises={"realisation": "content_velocity"},
     mutant={"premises": {"realisation": "content_velocity_forward"}})


def _damped(cl):
    cmp = compare_exact(stated_expr(cl.stated, "r", "m", "eta", "lam"), momentum().charpoly())
    return Outcome(momentum().charpoly(), cmp.verdict, "the formula is missing from the extracted text; "
                   "reconstructed from the words: Delta^2 x_{l-1} + gamma (x_l - x_{l-1}) = eta f(LN(x_l))")


_add("000-s2-damped-oscillator", "§2",
     "in finite differences the recurrence is a damped driven oscillator with damping gamma = 1 - m",
     "(r - 1)**2 + (1 - m)*(r - 1) - eta*lam*r",
     "characteristic polynomial of momentum() vs the stated difference form (x_l = r^l)", _damped)


def _sander_block(gamma, lam):
    """Sander et al.'s Momentum ResNet rule v' = gamma v + (1 - gamma) f(x), x' = x + v', with f(x) = lam x,
    as the Jacobian of the update on (x, v), built here from the rule (not from a family)."""
    x, v = sp.symbols("x v")
    new_v = gamma * v + (1 - gamma) * lam * x
    return sp.Matrix([x + new_v, new_v]).jacobian([x, v])


def _momentum_resnets(cl):
    rec = momentum()
    m, eta, lam = (rec.symbols[k] for k in ("m", "eta", "lam"))
    gamma = sp.Symbol("gamma", nonnegative=True)
    mapping = {}
    for part in cl.stated.split(","):
        name, _, value = part.partition("=")
        mapping[rec.symbols[name.strip()]] = stated_expr(value.strip(), "gamma").xreplace(
            {sp.Symbol("gamma"): gamma})
    block = realisation(rec, "block").A
    forward = compare_exact(_sander_block(gamma, lam), block.xreplace(mapping))  # every Momentum ResNet is a block
    # and back: a block with m < 1 is a Momentum ResNet with gamma = m and f scaled by eta / (1 - m)
    backward = compare_exact(_sander_block(m, eta * lam / (1 - m)), block)
    family = compare_exact(momentum_sander().native[0].A.xreplace({momentum_sander().symbols["gamma"]: gamma}),
                           _sander_block(gamma, momentum_sander().lam_symbol))
    ok = forward.holds and backward.holds and family.holds
    return Outcome(f"Sander's block on (x, v) {sp.sstr(_sander_block(gamma, lam).tolist())}; the post's block at "
                   f"the stated map {sp.sstr(block.xreplace(mapping).tolist())}", verdict(ok),
                   "equivalent up to the scale of f: a Momentum ResNet is the block with eta = 1 - m; a block with "
                   "m < 1 is a Momentum ResNet with gamma = m and f scaled by eta/(1 - m) (f is learned). "
                   f"The registry's momentum_sander agrees with the rule: {family.holds}")


_add("000-s2-momentum-resnets", "§2 prior work",
     "Sander et al.'s Momentum ResNets are equivalent to this second-order form",
     "m = gamma, eta = 1 - gamma",
     "the Momentum ResNet rule (Sander et al. 2021) written out as its (x, v) update matrix, against "
     "realisation(momentum(), 'block') under the stated map, and back with f rescaled",
     _momentum_resnets, mutant={"stated": "m = 1 - gamma, eta = gamma"})


# ============================================================== §3 the oscillator toy
_FORMS = {"explicit": "x' = x + v, v' = v - (beta/L)^2 x, i.e. x_{l+1} = x_l + v_l (as §3 eliminates v)",
          "block": "v' = v - (beta/L)^2 x, x' = x + v', i.e. the §2 block"}
_CONVENTIONS = {"forward": ("content_velocity_forward", "v_0 = x_1 - x_0 (as §3 writes)"),
                "backward": ("content_velocity", "v_0 = x_0 - x_{-1} (the §2 block's convention)")}
_COS_STATED = "1 - beta**2/(2*L**2)"


def _toy(form):
    """The family and the (x, v) update matrix built from the toy's equations under ``form``."""
    rec = oscillator(form=form)
    e2 = rec.symbols["beta"] ** 2 / rec.symbols["L"] ** 2
    x, v = sp.symbols("x v")
    new_v = v - e2 * x
    new_x = x + v if form == "explicit" else x + new_v
    return rec, sp.Matrix([new_x, new_v]).jacobian([x, v])


def _pair(rec):
    """(modulus, cos theta, sin theta) of the complex pair r = rho e^(+-i theta) (where disc < 0)."""
    v = vieta(rec)
    rho = sp.sqrt(v.product)
    return rho, sp.simplify(v.sum / 2 / rho), sp.sqrt(sp.factor(-discriminant(rec))) / (2 * rho)


def _recurrence(form, cl):
    rec, A = _toy(form)
    poly = sp.collect(sp.expand(A.charpoly(r_symbol).as_expr()), r_symbol)  # Cayley-Hamilton: x_l satisfies it
    ensure(compare_exact(rec.charpoly(), poly).holds, f"oscillator(form={form!r}) vs its update equations")
    conv = "v_l = x_{l+1} - x_l" if A[0, :] == sp.Matrix([[1, 1]]) else "v_l = x_l - x_{l-1}"
    return Outcome(poly, compare_exact(stated_expr(cl.stated, "r", "beta", "L"), poly).verdict,
                   f"update {_FORMS[form]}; there v is eliminated with {conv}")


def _band(text: str) -> sp.Interval:
    """``"lo < beta < hi"`` (``hi`` such as ``2L``) -> the open interval of beta/L."""
    lo, _, hi = (t.strip() for t in text.split("<"))
    L = sp.Symbol("L")
    lo, hi = (stated_expr(re.sub(r"(\d)L", r"\1*L", t), "L") / L for t in (lo, hi))
    return sp.Interval.open(sp.simplify(lo), sp.simplify(hi))


def _negative_disc(form, cl):
    rec, u = oscillator(form=form), sp.Symbol("u", positive=True)  # u = beta/L
    d = sp.factor(discriminant(rec).xreplace({rec.symbols["beta"]: u * rec.symbols["L"]}))
    neg = sp.solve_univariate_inequality(d < 0, u, relational=False, domain=sp.Interval.open(0, sp.oo))
    band = _band(cl.stated)
    return Outcome(f"disc = {sp.sstr(discriminant(rec))} < 0 iff beta/L in {sp.sstr(neg)}",
                   verdict(band.is_subset(neg)), "" if neg == band else "the bound beta < 2L is not needed")


def _product(form, cl):
    prod = vieta(oscillator(form=form)).product
    return Outcome(prod, compare_exact(stated_expr(cl.stated, "beta", "L"), prod).verdict)


def _modulus(form, cl):
    rec = oscillator(form=form)
    rho = _pair(rec)[0]
    for t in (sp.Rational(1, 4), sp.Rational(3, 4)):  # spot checks inside the band, L = 4
        point = {rec.symbols["beta"]: 8 * t, rec.symbols["L"]: 4}
        mods = [sp.N(sp.Abs(z), 30) for z in roots(rec.subs({k.name: w for k, w in point.items()})).values()]
        ensure(all(abs(mo - sp.N(rho.xreplace(point), 30)) < 1e-25 for mo in mods), f"|r| at {point}")
    return Outcome(rho, compare_exact(stated_expr(cl.stated, "beta", "L"), rho).verdict,
                   "a complex-conjugate pair (disc < 0) has |r|^2 = the product of the roots")


def _cos_theta(form, cl):
    rec = oscillator(form=form)
    rho, cos, _ = _pair(rec)
    return Outcome(cos, compare_exact(stated_expr(cl.stated, "beta", "L"), cos).verdict,
                   f"roots {[sp.sstr(z) for z in roots(rec).values()]}: real part "
                   f"{sp.sstr(sp.simplify(rho * cos))}, modulus {sp.sstr(rho)}")


def _bounded(form, cl):
    rec, bad = oscillator(form=form), []
    for u in cl.premises["beta_over_L"]:  # points of the stated band 0 < beta/L < 2, at L = 4
        rc = root_condition(rec.subs(beta=4 * u, L=4))
        if not rc.marginal:
            bad.append(f"beta = {4 * u}, L = 4: spectral radius {rc.spectral_radius:.6g}, x_l grows")
    exact = compare_exact(1, vieta(rec).product).holds
    return Outcome(bad[0] if bad else "simple roots on the unit circle for 0 < beta < 2L",
                   verdict(exact and not bad), "; ".join(bad[1:]))


def _solution(form, conv, cl):
    rec = oscillator(form=form)
    names = {sp.Symbol(n): rec.symbols[n] for n in ("beta", "L")}
    v0 = stated_expr(cl.premises["v0"], "c", "beta", "L").xreplace({sp.Symbol("c"): c, **names})
    cf = closed_form(rec, {"x": c, "v": v0}, realisation=_CONVENTIONS[conv][0])
    cos_stated = stated_expr(cl.stated.split("cos(theta) =")[1], "beta", "L").xreplace(names)
    xs = [cf.at(k) for k in range(6)]
    want = [c * sp.chebyshevt(k, cos_stated) for k in range(6)]  # c cos(l theta) = c T_l(cos theta)
    rho, cos, sin = _pair(rec)
    B = sp.simplify((xs[1] / rho - xs[0] * cos) / sin)
    point = {rec.symbols["beta"]: 1, rec.symbols["L"]: 4, c: 1}  # the trig form reproduces the closed form
    th = sp.atan2(sin.subs(point), cos.subs(point))
    for k in range(4):
        trig = (rho**k * (xs[0] * sp.cos(k * th) + B * sp.sin(k * th))).subs(point)
        ensure(abs(sp.N(trig - xs[k].subs(point), 30)) < 1e-25, "trigonometric form of the closed form")
    note = f"{_CONVENTIONS[conv][1]}, v_0 = {cl.premises['v0']}; B = 0 {'holds' if B == 0 else 'fails'}"
    first = next((k for k in range(6) if not compare_exact(want[k], xs[k]).holds), None)
    if first is not None:
        note += (f"; x_{first} = {sp.sstr(sp.factor(xs[first]))} but c cos({first} theta) = "
                 f"{sp.sstr(sp.factor(want[first]))}; B = 0 needs x_1 = {sp.sstr(sp.factor(c * rho * cos))}")
    return Outcome(f"x_l = rho^l (c cos(l theta) + B sin(l theta)), rho = {sp.sstr(rho)}, cos(theta) = "
                   f"{sp.sstr(cos)}, B = {sp.sstr(B)}", compare_exact(want, xs).verdict, note)


def _theta(form, cl):
    rec = oscillator(form=form)
    L, eps = rec.symbols["L"], sp.Symbol("eps", positive=True)
    _, cos, sin = _pair(rec)
    theta = sp.atan(sp.simplify(sin / cos)).xreplace({L: 1 / eps})  # cos(theta) > 0 for large L
    ser = sp.expand(sp.series(theta, eps, 0, 4).removeO())
    lead = (ser.coeff(eps, 0) + ser.coeff(eps, 1) * eps).xreplace({eps: 1 / L})
    return Outcome(f"theta = {sp.sstr(ser.xreplace({eps: 1 / L}))} + O(L**-5)",
                   compare_exact(stated_expr(cl.stated, "beta", "L"), lead).verdict)


def _large_depth(form, conv, cl):
    dl = depth_limit(oscillator(form=form), {"x": c, "v": 0}, realisation=_CONVENTIONS[conv][0])
    cmp = compare_exact(stated_expr(cl.stated, "c", "beta"), dl.limit)
    slow = cmp.holds and dl.order == 1
    note = f"{_CONVENTIONS[conv][1]}; {dl}"
    if slow:
        note += ("; the correction is O(1/L), not the O(1/L^2) of x_L = c cos(L theta) with theta = beta/L "
                 "+ O(L^-3): the limit holds, the finite-depth value depends on the reading")
    return Outcome(dl.limit, "holds-with-caveat" if slow else cmp.verdict, note)


def _first_order_table(cl):
    dl = depth_limit(residual(scaled=True), [c])
    return Outcome(dl.limit, compare_exact(stated_expr(cl.stated, "c", "lam"), dl.limit).verdict, str(dl))


def _by(fn, *keys):
    """A check reading its reading (form, convention) from the claim's premises."""
    return lambda cl: fn(*(cl.premises[k] for k in keys), cl)


_OTHER = {"explicit": "block", "block": "explicit"}
_V0_FOR_COS = {"forward": "-c*beta**2/(2*L**2)", "backward": "c*beta**2/(2*L**2)"}  # x_1 = c cos(theta)
_BAND_POINTS = (sp.Rational(1, 8), sp.Rational(1, 2), 1, sp.Rational(15, 8))
_CORRECT_EXPLICIT = {"product": "1 + beta**2/L**2", "modulus": "sqrt(1 + beta**2/L**2)",
                     "cos-theta": "1/sqrt(1 + beta**2/L**2)"}
for _f in ("explicit", "block"):
    _how = f"oscillator(form={_f!r})"
    _form = {"form": _f}
    _key = "000-s3-"
    _add(f"000-s3-recurrence-{_f}", "§3", "eliminating v (with v_l = x_{l+1} - x_l) gives x_{l+1} - 2x_l + "
         f"(1 + beta^2/L^2) x_{{l-1}} = 0 (as its characteristic polynomial); reading: {_FORMS[_f]}",
         "r**2 - 2*r + 1 + beta**2/L**2", "characteristic polynomial of the toy's (x, v) update matrix",
         _by(_recurrence, "form"), premises=_form, reading_of=_key + "recurrence",
         mutant=None if _f == "explicit" else {"premises": {"form": "explicit"}})
    _add(f"000-s3-discriminant-{_f}", "§3", f"the discriminant is negative when 0 < beta < 2L ({_f} form)",
         "0 < beta < 2L", f"discriminant of {_how}, solved for beta/L", _by(_negative_disc, "form"),
         premises=_form, reading_of=_key + "discriminant", mutant={"stated": "-L < beta < 2L"})
    for _what, _fn, _method in (("product", _product, f"vieta({_how}).product"),
                                ("modulus", _modulus, "sqrt(product) of the complex pair, spot-checked "
                                 "against exact roots"),
                                ("cos-theta", _cos_theta, "cos(theta) = Re(r)/|r| = (sum/2)/sqrt(product) "
                                 "from Vieta")):
        _text = {"product": "by Vieta the product of the roots equals 1",
                 "modulus": "|r±| = 1 for 0 < beta < 2L",
                 "cos-theta": "r± = e^(±i theta) with cos(theta) = 1 - beta^2/(2L^2)"}[_what]
        _add(f"000-s3-{_what}-{_f}", "§3", f"{_text} ({_f} form)", _COS_STATED if _what == "cos-theta" else "1",
             _method, _by(_fn, "form"), premises=_form, reading_of=_key + _what,
             mutant={"stated": _CORRECT_EXPLICIT[_what]} if _f == "explicit" else None)
    _add(f"000-s3-bounded-{_f}", "§3",
         f"every 0 < beta < 2L gives bounded oscillatory propagation ({_f} form)", "bounded",
         "root product 1 and disc < 0 (exact); root_condition at beta/L = 1/8, 1/2, 1, 15/8 (L = 4)",
         _by(_bounded, "form"), premises={**_form, "beta_over_L": _BAND_POINTS}, reading_of=_key + "bounded",
         mutant={"premises": {"form": "block"}} if _f == "explicit"
         else {"premises": {"beta_over_L": (*_BAND_POINTS, sp.Rational(5, 2))}})
    _add(f"000-s3-theta-{_f}", "§3", f"for large L, theta ≈ beta/L ({_f} form)", "beta/L",
         "series of theta = atan(Im r / Re r) in 1/L", _by(_theta, "form"), premises=_form,
         reading_of=_key + "theta")
    for _cv in ("forward", "backward"):
        _add(f"000-s3-solution-{_f}-{_cv}", "§3",
             f"x_0 = c, v_0 = 0 give A = c, B = 0, so x_l = c cos(l theta) ({_f} form, "
             f"{_CONVENTIONS[_cv][1]})",
             "c*cos(l*theta), cos(theta) = " + _COS_STATED,
             f"closed_form of {_how} from (x, v) = (c, 0) via {_CONVENTIONS[_cv][0]}, vs c T_l(cos theta), "
             "l = 0..5", _by(_solution, "form", "conv"), premises={**_form, "conv": _cv, "v0": "0"},
             reading_of=_key + "solution",
             mutant={"premises": {"form": "block", "v0": _V0_FOR_COS[_cv]}})
        _add(f"000-s3-large-depth-{_f}-{_cv}", "§3", f"for large L, x_L ≈ c cos(beta) ({_f} form, "
             f"{_CONVENTIONS[_cv][1]})", "c*cos(beta)",
             "depth_limit as L -> oo; holds-with-caveat when the correction is O(1/L)",
             _by(_large_depth, "form", "conv"), premises={**_form, "conv": _cv}, reading_of=_key + "large-depth")
_add("000-s3-table-first-order", "§3 table", "first order Delta x_l = (alpha/L) x_l: x_L ≈ e^alpha c "
     "(alpha = lam)", "c*exp(lam)", "depth_limit of residual(scaled=True) from x_0 = c", _first_order_table)

CLAIMS: tuple[Claim, ...] = tuple(_CLAIMS)
