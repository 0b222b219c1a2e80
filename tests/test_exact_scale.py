"""The exact core at real sizes: structure, budgets, Schur-Cohn conditions, check's power to fail.

Expected values come from independent computations: Berkowitz determinants and SymPy's
own discriminant of specialised polynomials, numpy roots, and linear-multistep methods
derived here from their definitions (BDF from backward differences, Adams-Bashforth by
integrating the Lagrange interpolant), whose order is verified before use.
"""

from __future__ import annotations

import os
import random
import time

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import depthdyn as dd
from depthdyn import FAMILIES
from depthdyn.budget import budget_seconds
from depthdyn.cli import main
from depthdyn.errors import BudgetExceededError, DepthdynError
from depthdyn.numeric.check import check
from depthdyn.recurrence import r
from depthdyn.symbolic.polynomial import discriminant, root_structure, roots, vieta
from depthdyn.symbolic.stability import stability_conditions

s = sp.Symbol("s")


# ---------------------------------------------------------------- LMM polynomials
def bdf(k: int):
    """BDF-k from backward differences: sum_{j=1..k} (1/j) nabla^j y_{n+k} = h f_{n+k}."""
    rho = sum(sp.Rational(1, j) * r ** (k - j) * (r - 1) ** j for j in range(1, k + 1))
    return sp.expand(rho), r**k


def adams_bashforth(k: int):
    """AB-k: y_{n+1} = y_n + h sum_j b_j f_{n-j}, b_j = int_0^1 of the Lagrange basis on 0..-(k-1)."""
    nodes = [-j for j in range(k)]
    sigma = 0
    for j, xj in enumerate(nodes):
        basis = sp.Mul(*[(s - xm) / (xj - xm) for m, xm in enumerate(nodes) if m != j])
        sigma += sp.integrate(basis, (s, 0, 1)) * r ** (k - 1 - j)
    return sp.expand(r**k - r ** (k - 1)), sp.expand(sigma)


def order_of(rho, sigma) -> int:
    """Order p of the method: rho(e^h) - h sigma(e^h) = O(h^(p+1)) (independent check)."""
    h = sp.Symbol("h")
    ser = sp.series((rho - h * sigma).subs(r, sp.exp(h)), h, 0, 10).removeO()
    return min(sp.Poly(ser, h).monoms())[0] - 1


@pytest.mark.parametrize("k", [3, 4, 5, 6])
def test_bdf_derivation_has_order_k(k):
    assert order_of(*bdf(k)) == k


@pytest.mark.parametrize("k", [4, 5])
def test_adams_bashforth_derivation_has_order_k(k):
    assert order_of(*adams_bashforth(k)) == k


def test_order_check_can_fail():
    rho, sigma = bdf(4)
    assert order_of(rho + (r - 1) ** 2 / 100, sigma) < 4


def general(pair):
    return dd.general(rho=sp.sstr(pair[0]), sigma=sp.sstr(pair[1]))


# ----------------------------------------------------------------------- structure
def _berkowitz_at(rec, point):
    M = sp.Matrix(-rec.coeffs[1]).xreplace(point)
    return sp.expand((r * sp.eye(M.rows) - M).det(method="berkowitz"))


@pytest.mark.parametrize("make", [
    lambda: dd.entangled(n=4), lambda: dd.entangled(n=5, kind="orthogonal"),
    lambda: dd.hyper_connection(n=3), lambda: dd.hyper_connection(n=3, doubly_stochastic=False),
    lambda: dd.entangled(kind="matrix", Gamma=[[1, 2], [3, 4]]),
])
def test_structured_charpoly_matches_berkowitz(make):
    rec = make()
    rng = random.Random(3)
    for _ in range(2):
        point = {p.symbol: sp.Rational(rng.randint(-9, 9), rng.randint(1, 5)) for p in rec.params}
        assert sp.expand(rec.charpoly().xreplace(point) - _berkowitz_at(rec, point)) == 0


@pytest.mark.parametrize("make", [
    dd.momentum, lambda: dd.smooth(k=4), lambda: dd.hyper_connection(n=2), lambda: dd.hyper_connection(n=3),
    lambda: dd.entangled(n=4, kind="orthogonal"), lambda: dd.residual(scaled=True),
])
def test_discriminant_matches_specialised_sympy(make):
    rec = make()
    disc = discriminant(rec)
    rng = random.Random(5)
    for _ in range(2):
        point = {p.symbol: sp.Rational(rng.randint(1, 9), rng.randint(1, 5)) for p in rec.params}
        ref = sp.discriminant(sp.expand(rec.charpoly().xreplace(point)), r)
        assert sp.simplify(disc.xreplace(point) - ref) == 0


def test_repeated_factor_vieta_roots_and_structure():
    rec = dd.general(rho="(r-a)**2*(r-b)")
    assert vieta(rec).holds
    mults = sorted(rt.multiplicity for rt in roots(rec))
    assert mults == [1, 2]
    assert discriminant(rec) == 0
    text = str(root_structure(rec))
    assert "< 0" not in text  # (a - b)**2 < 0 cannot occur
    assert "(r - a)**2" in text.replace("(-a + r)", "(r - a)")


def test_vieta_fails_for_a_wrong_coefficient():
    from depthdyn.symbolic import polynomial as P

    rec = dd.general(rho="(r-a)**2*(r-b)")
    points = P._vieta_points(rec, 2, 30, random.Random(0))
    a, b = sorted(rec.symbols.values(), key=str)
    assert P._numeric_vieta(points, 1, 2 * a + b, 30)
    assert not P._numeric_vieta(points, 1, 2 * a + b + sp.Rational(1, 1000), 30)


def test_root_structure_prunes_impossible_cases():
    cases = [str(c) for c, _ in root_structure(dd.entangled(n=3)).cases]
    assert cases == ["gamma**2 > 0", "Eq(gamma**2, 0)"]
    numeric = root_structure(dd.entangled(n=3, kind="orthogonal")).cases
    assert len(numeric) == 1 and numeric[0][0] is sp.true  # no "0 > 0" row


# ------------------------------------------------------------------------ budgets
def test_budget_refuses_up_front_and_names_the_part():
    with pytest.raises(BudgetExceededError, match="discriminant") as info:
        discriminant(dd.hyper_connection(n=4))
    assert info.value.part == "discriminant"
    assert isinstance(info.value, DepthdynError) and isinstance(info.value, ValueError)


def test_budget_deadline_interrupts():
    # Above the up-front estimate (3.3 ms) and well below the work (about 0.25 s of CPU):
    # only the deadline can stop it. A budget below the estimate raced the timer, which the
    # kernel fires at its tick (up to 10 ms), against reaching the estimate (10-20 ms in).
    with dd.budget(0.05), pytest.raises(BudgetExceededError, match="ran past"):
        stability_conditions(general(bdf(6)), lam="complex")
    with dd.budget(None):
        assert budget_seconds() == float("inf")


def _spin():  # a bytecode loop: the timer lands between two instructions
    while True:
        pass


def _busy(seconds: float) -> None:
    """Spin for ``seconds`` of CPU time: budgets count CPU time, so on a loaded machine a
    wall-clock spin would use less of the budget than it says."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_every_analysis_is_bounded_as_a_whole():
    """No path through an analysis outlasts the budget, not only the parts estimated up front
    (a root-structure sign proof by factoring once ran unbounded at a complex lam)."""
    from depthdyn.budget import bounded

    spinning = bounded("spinning analysis")(_spin)
    with dd.budget(1e-3), pytest.raises(BudgetExceededError, match="ran past") as info:
        spinning()
    assert info.value.part == "spinning analysis"
    for analysis in (dd.roots, dd.discriminant, dd.vieta, dd.stability_conditions, root_structure,
                     dd.closed_form, dd.modes, dd.depth_limit, dd.root_condition, dd.stability_numbers,
                     dd.similarity):
        assert analysis.__wrapped__  # each public analysis runs inside one part
    heavy = dd.from_coefficients([1, "a*b + I/3", "a**2*b - b**3 + I*a", "a*b**2 - 1/5"], params=("a", "b"))
    with dd.budget(1e-3), pytest.raises(BudgetExceededError):
        root_structure(heavy)  # 9 s with the default budget
    assert len(root_structure(dd.momentum()).cases) >= 2  # the timer is gone afterwards


def test_a_swallowed_interruption_fires_again():
    """Library code that swallows the timer's exception (a finaliser, a bare ``except:``)
    does not leave the part without a deadline: the timer fires again."""
    from depthdyn.budget import at_most

    def swallow_once():
        try:
            _spin()
        except BaseException:  # noqa: BLE001 - what a careless finaliser does
            pass
        _busy(5)
        return "ran on without a deadline"

    start = time.process_time()
    with dd.budget(1e-3):
        assert at_most(5, "swallowing", swallow_once, "gave up") == "gave up"
    assert time.process_time() - start < 2


def test_deadlines_landing_anywhere_leave_no_part_behind():
    """Tiny budgets expire at every point of nested parts and refinements, their own entry and
    exit included: always a typed error, the bookkeeping intact and no alarm left over (a
    late alarm once cut a part's exit half-way, or killed the process once its handler was gone)."""
    from depthdyn.budget import _active, at_most, part

    # the CPU-time timer fires on the kernel's tick (a few ms), so parts last some ms
    rng = random.Random(1)
    exceeded = 0
    for _ in range(400):
        try:
            with dd.budget(rng.uniform(1e-3, 3e-2)), part("outer"):
                _busy(rng.uniform(0, 8e-3))
                with part("inner"):
                    _busy(rng.uniform(0, 8e-3))
                at_most(5e-3, "refinement", lambda: _busy(rng.uniform(0, 8e-3)), None)
                _busy(rng.uniform(0, 4e-3))
        except BudgetExceededError:
            exceeded += 1
        assert not _active
    assert 40 < exceeded < 360  # deadlines did land, and not always
    _busy(0.3)  # a stale alarm would raise here (or end the process)


def test_no_deadline_is_lost_in_a_finaliser_or_a_gc_callback():
    """A deadline that falls inside a ``__del__`` or a garbage-collector callback (hypothesis
    registers one) is not raised there, where the interpreter would print and drop it and
    the part would run on (this stalled a CI run for 90 minutes): it lands just after."""
    import gc
    import sys

    from depthdyn.budget import part

    class Slow:
        def __del__(self):
            _busy(3e-4)

    def closing():
        try:
            yield
        finally:  # runs when the generator is dropped unfinished
            _busy(3e-4)

    def callback(phase, info):
        _busy(3e-4)

    dropped, previous = [], sys.unraisablehook
    sys.unraisablehook = lambda unraisable: dropped.append(unraisable.exc_type)
    gc.callbacks.append(callback)
    rng, exceeded = random.Random(2), 0
    try:
        for _ in range(200):
            try:
                with dd.budget(rng.uniform(1e-4, 2e-3)), part("collecting"):
                    for _ in range(20):
                        Slow()  # finalised at once: most of the time is in __del__ ...
                        gc.collect(0)  # ... in the callback ...
                        next(closing())  # ... and in a generator closed at deallocation
                        _busy(3e-4)
            except BudgetExceededError:
                exceeded += 1
    finally:
        gc.callbacks.remove(callback)
        sys.unraisablehook = previous
    assert not dropped, dropped
    assert exceeded > 100  # and the deadlines did land


def test_a_running_generator_is_interrupted():
    """Only a generator being closed waits for the deadline; one running is cut like any code."""
    from depthdyn.budget import part

    def generator():
        _busy(3)
        yield "ran on without a deadline"

    start = time.process_time()
    with dd.budget(1e-3), pytest.raises(BudgetExceededError), part("generating"):
        next(generator())
    assert time.process_time() - start < 1


def test_optional_refinements_give_up_with_their_fallback():
    from depthdyn.budget import at_most
    from depthdyn.symbolic.signs import sign

    a = sp.Symbol("a", real=True)
    assert at_most(5, "adding", lambda: 1 + 1, None) == 2
    with dd.budget(1e-3):
        assert at_most(5, "spinning", _spin, "gave up") == "gave up"
    assert sign(a**2 + 1, {a: sp.Reals}) == 1
    with dd.budget(1e-6):  # undecided, never a wrong sign or an escaped timer
        assert sign(a**2 + 1, {a: sp.Reals}) in (None, 1)
    assert sign(a**2 - 1, {a: sp.Reals}) is None


def test_budget_rejects_bad_values():
    from depthdyn.budget import part

    for bad in (0, -1, -5, "x", float("nan"), True, 10**400, [1]):
        with pytest.raises(DepthdynError), dd.budget(bad):
            pass
    with dd.budget(1e300):  # as good as none: no timer can be set that far
        assert budget_seconds() == float("inf")
        with part("far"):
            assert 1 + 1 == 2


def test_waiting_does_not_spend_a_budget():
    """A budget counts CPU time: a process that waits for a core on a loaded machine (here it
    sleeps, the extreme case) keeps its budget, so the verdict does not depend on the load."""
    from depthdyn.budget import part

    with dd.budget(0.05), part("waiting"):
        time.sleep(0.3)  # six budgets of wall time, almost no CPU
        _busy(0.01)
    with dd.budget(0.05), pytest.raises(BudgetExceededError), part("working"):
        _busy(0.5)  # CPU time is what counts


def test_an_early_tick_does_not_drop_the_deadline():
    """The kernel samples CPU time at its tick, so the CPU timer may fire a little before the
    precise clock reaches the deadline; the handler waits for the rest instead of treating the
    signal as stale (that left ``derive hyper_connection -p n=8`` without any deadline)."""
    import signal
    import sys

    from depthdyn.budget import part

    budget_module = sys.modules["depthdyn.budget"]
    with dd.budget(5), part("early"):
        budget_module._on_alarm(signal.SIGPROF, None)  # as if the tick came early
        assert 0 < signal.getitimer(signal.ITIMER_PROF)[0] <= 5.1  # re-armed for the rest
    with dd.budget(0.05), pytest.raises(BudgetExceededError), part("early, then due"):
        budget_module._on_alarm(signal.SIGPROF, None)
        _busy(1)
    assert signal.getitimer(signal.ITIMER_PROF)[0] == 0  # nothing left over


def test_a_loaded_machine_gives_the_same_verdict():
    """Under real load (busy processes on every core) an analysis within its CPU budget when
    idle stays within it: the same input gets the same answer."""
    import subprocess
    import sys

    from depthdyn.budget import part

    def work():
        with dd.budget(0.4), part("bounded work"):
            _busy(0.2)  # ~1 s of wall time beside the busy processes: a wall clock would trip
        return "finished"

    assert work() == "finished"
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(3 * (os.cpu_count() or 2))]
    try:
        assert work() == "finished"
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def test_cli_prints_the_rest_and_exits_2_past_budget(capsys):
    code = main(["derive", "hyper_connection", "-p", "n=4", "--full"])  # compact by default: exit 0
    out, err = capsys.readouterr()
    assert code == 2
    assert "characteristic polynomial" in out and "roots" in out and "state-space" in out
    assert "discriminant: not computed" in out
    assert err.count("\n") == 1 and "discriminant" in err and "--budget" in err


@pytest.mark.parametrize("n", [2, 3, 8])
def test_cli_derive_entangled(n, capsys):
    assert main(["derive", "entangled", "-p", f"n={n}"]) == 0
    assert "stability" in capsys.readouterr().out


# ------------------------------------------------------------ Schur-Cohn (complex)
def _numeric_stable(rec, lam):
    cs = [complex(sp.N(c)) for c in rec.subs(lam=lam).charpoly_coeffs()]
    return np.abs(np.roots(cs)).max() < 1


@pytest.mark.parametrize("pair, scale", [(bdf(3), 1), (bdf(6), 1), (adams_bashforth(4), sp.Rational(1, 8))])
def test_complex_conditions_match_numeric_roots(pair, scale):
    rec = general(pair)
    sc = stability_conditions(rec, lam="complex")
    rng = random.Random(11)
    agree = stable = 0
    for _ in range(40):
        lam = scale * (sp.Rational(rng.randint(-300, 50), 100) + sp.I * sp.Rational(rng.randint(-200, 200), 100))
        want = _numeric_stable(rec, lam)
        stable += want
        agree += sc.holds(lam=lam) == want
    assert agree == 40 and 0 < stable < 40


# ------------------------------------------------------------------- check passes
LMM = {f"bdf{k}": bdf(k) for k in (3, 4, 5, 6)} | {f"ab{k}": adams_bashforth(k) for k in (4, 5)}


@pytest.mark.parametrize("name", sorted(LMM))
def test_check_general_lmm_passes(name):
    with dd.budget(300):  # correctness, not speed: a loaded machine must not skip rows
        report = check(general(LMM[name]), samples=6)
    assert report.passed, str(report)
    assert any(row.name.startswith("stability (complex") and row.compared for row in report.rows)


@pytest.mark.parametrize("k", [4, 5, 6])
def test_check_smooth_passes(k):
    with dd.budget(300):
        assert check(dd.smooth(k=k), samples=6).passed


# --------------------------------------------------------- check fails on mutation
def _family(name):
    if name == "general":
        return dd.general(rho="r**3 + a*r**2 + b*r + c")
    fam = FAMILIES[name]  # structural arguments a family needs (lmm's coefficients) from its example
    return fam(**{k: v for k, v in fam.example.items() if k in fam.structural})


class _Fixed:
    """Stability conditions replaced by a constant verdict."""

    def __init__(self, verdict):
        self.verdict = verdict

    def holds(self, *args, **kw):
        return self.verdict


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_check_fails_when_conditions_are_mutated(name, monkeypatch):
    from depthdyn.symbolic import stability

    rec = _family(name)
    assert check(rec, samples=4, closed_form_samples=1).passed
    # "never stable" and "always stable"; "never" is no mutation for a never-stable family
    never = stability_conditions(rec).never and stability_conditions(rec, lam="complex").never
    for verdict in (True,) if never else (False, True):
        monkeypatch.setattr(stability, "stability_conditions", lambda *a, v=verdict, **k: _Fixed(v))
        assert not check(rec, samples=4, closed_form_samples=1).passed, (name, verdict)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_check_fails_when_roots_are_mutated(name, monkeypatch):
    from depthdyn.symbolic import polynomial

    real_roots = polynomial.roots

    def shifted(rec):
        found = real_roots(rec)
        first = found.roots[0]
        moved = polynomial.Root(first.value + sp.Rational(1, 10**4), first.multiplicity, first.factor, True)
        return polynomial.Roots(found.charpoly, (moved,) + found.roots[1:])

    monkeypatch.setattr(polynomial, "roots", shifted)
    report = check(_family(name), samples=4, closed_form_samples=1)
    assert not next(row for row in report.rows if row.name == "roots").passed


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_check_fails_when_closed_form_is_mutated(name, monkeypatch):
    from depthdyn.symbolic import solve

    real = solve.closed_form

    class Off:
        def __init__(self, cf):
            self.cf = cf

        def at(self, k):
            return self.cf.at(k) * (1 + sp.Rational(1, 10**6))

    monkeypatch.setattr(solve, "closed_form", lambda *a, **k: Off(real(*a, **k)))
    report = check(_family(name), samples=4, closed_form_samples=2)
    assert not next(row for row in report.rows if row.name == "closed form").passed


# ------------------------------------------------------------------- hypothesis
@st.composite
def recurrences(draw):
    """Random order 1..8 recurrences: rational, repeated and unit-circle roots, a parameter."""
    order = draw(st.integers(1, 8))
    kinds = st.sampled_from(["rational", "unit", "param"])
    factors, degree = [], 0
    while degree < order:
        kind = draw(kinds)
        if kind == "unit" and degree + 2 <= order:
            factors.append("(r**2 + 1)")
            degree += 2
            continue
        if kind == "param":
            factors.append("(r - a)")
        else:
            num, den = draw(st.integers(-5, 5)), draw(st.integers(1, 4))
            factors.append(f"(r - ({num})/{den})")
        degree += 1
    return dd.general(rho="*".join(factors))


@settings(max_examples=8, deadline=None)
@given(recurrences())
def test_random_recurrences_correct_or_typed_error(rec):
    try:
        with dd.budget(20):
            rts = roots(rec)
            assert rts.degree == rec.order
            assert vieta(rec).holds
            disc = discriminant(rec)
            repeated = any(rt.multiplicity > 1 for rt in rts)
            if not rec.params:
                assert (disc == 0) == repeated
            root_structure(rec)
            sc = stability_conditions(rec)
    except BudgetExceededError:
        return
    if not rec.params:  # exact verdict against numeric roots away from the circle
        radius = max(abs(complex(sp.N(v))) for v in rts.values())
        if abs(radius - 1) > 1e-9:
            assert (not sc.never and all(c is sp.true or c == sp.true for c in sc.conditions)) == (radius < 1)
