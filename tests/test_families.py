"""Families: each factory against an independent derivation of its recurrence."""

import random
import re

import pytest
import sympy as sp

import depthdyn as dd
from depthdyn.families import MAX_ORDER
from depthdyn.recurrence import r


def test_registry_names_and_read_only():
    expected = {
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
    }
    assert expected <= set(dd.FAMILIES)
    with pytest.raises(TypeError):
        dd.FAMILIES["new"] = None
    with pytest.raises(dd.errors.UnknownFamilyError, match="choose one of"):
        dd.get_family("resnet")


@pytest.mark.parametrize("name", sorted(dd.FAMILIES))
def test_every_factory_cites_its_source(name):
    fam = dd.FAMILIES[name]
    doc = fam.factory.__doc__
    if fam.factory.__module__ == "depthdyn.families.literature":  # a paper: authors and year
        assert re.search(r"[A-Z][a-z]+ (et al\.|and [A-Z][a-z]+).{0,80}\b(19|20)\d\d\b", doc, re.S) or \
            "Source as :func:`runge_kutta`" in doc
        return
    assert "Source:" in doc
    assert any(tag in doc for tag in ("000", "001", "002", "003", "004"))


@pytest.mark.parametrize("name", [n for n in dd.FAMILIES if n not in ("oscillator", "general", "lmm")])
def test_block_families_use_lam(name):
    rec = dd.FAMILIES[name]()
    assert rec.lam == "lam" and rec.charpoly().has(rec.lam_symbol)


def test_momentum_charpoly_by_eliminating_velocity():
    # independent route: iterate the block (x, v) with symbols and read off the recurrence
    rec = dd.momentum()
    lam, m, eta = (rec.symbols[k] for k in ("lam", "m", "eta"))
    x0, v0 = sp.symbols("x0 v0")
    x, v, xs = x0, v0, [x0]
    for _ in range(3):
        v = m * v + eta * lam * x
        x = x + v
        xs.append(x)
    # x_{l+2} - (1 + m + eta lam) x_{l+1} + m x_l = 0 along the trajectory
    assert sp.expand(xs[3] - (1 + m + eta * lam) * xs[2] + m * xs[1]) == 0
    assert sp.expand(rec.charpoly() - (r**2 - (1 + m + eta * lam) * r + m)) == 0


def test_momentum_reduces_to_residual():
    mom = dd.momentum(m=0, eta=1)
    res = dd.residual()
    lam = res.lam_symbol
    assert sp.expand(mom.charpoly() - r * res.charpoly().subs(res.lam_symbol, mom.lam_symbol)) == 0
    # same trajectory: x_1 = (1 + lam) x_0 when v_0 = 0, then identical steps
    xs = mom.iterate([1, 1 + mom.lam_symbol], 5)
    assert [sp.expand(x.subs(mom.lam_symbol, lam)) for x in xs] == [
        sp.expand((1 + lam) ** j) for j in range(6)
    ]


@pytest.mark.parametrize("form, product", [("block", 1), ("explicit", None)])
def test_oscillator_forms(form, product):
    rec = dd.oscillator(form=form)
    beta, L = rec.symbols["beta"], rec.symbols["L"]
    poly = sp.Poly(rec.charpoly(), r)
    const = poly.all_coeffs()[-1] / poly.LC()
    expected = 1 if product == 1 else 1 + beta**2 / L**2
    assert sp.simplify(const - expected) == 0
    with pytest.raises(dd.errors.ParameterError):
        dd.oscillator(form="implicit")


def test_oscillator_explicit_form_is_forward_velocity_update():
    rec = dd.oscillator(form="explicit")
    beta, L = rec.symbols["beta"], rec.symbols["L"]
    x, v, xs = sp.Integer(1), sp.Integer(0), [sp.Integer(1)]
    for _ in range(3):  # x' = x + v, v' = v - (beta/L)^2 x  (v_l = x_{l+1} - x_l)
        x, v = x + v, v - (beta / L) ** 2 * x
        xs.append(x)
    assert [sp.simplify(a - b) for a, b in zip(rec.iterate(xs[:2], 3), xs, strict=True)] == [0] * 4


@pytest.mark.parametrize("k", range(1, 7))
def test_smooth_difference_equation(k):
    rec = dd.smooth(k=k)
    lam, h = rec.symbols["lam"], rec.symbols["h"]
    # 002 eq. 4c: sum_i (-1)^i C(k,i) x_{l+1-i} = h^k lam x_l, checked on a trajectory
    xs = rec.iterate(list(sp.symbols(f"x0:{k}")), k + 2)
    lhs = sum((-1) ** i * sp.binomial(k, i) * xs[k - i + 1] for i in range(k + 1))
    assert sp.expand(lhs - h**k * lam * xs[k]) == 0


@pytest.mark.parametrize("k", range(1, 5))
def test_dense_matches_direct_simulation_of_eq9(k):
    rec = dd.dense(k=k, h=sp.Rational(1, 3), lam=sp.Rational(-1, 2))
    rng = random.Random(k)
    hist = [sp.Rational(rng.randint(-9, 9), rng.randint(1, 5)) for _ in range(k)]
    xs = list(hist)
    for _ in range(6):  # x_{l+1} = x_{l+1-k} + sum_{j<k} sigma(x_{l-j}) h with sigma(x) = lam x
        xs.append(xs[-k] + sum(sp.Rational(1, 3) * sp.Rational(-1, 2) * xs[-1 - j] for j in range(k)))
    assert rec.iterate(hist, len(xs) - 1) == xs


@pytest.mark.parametrize("k", range(1, 5))
def test_dense_factorises_into_residual_mode_and_roots_of_unity(k):
    rec = dd.dense(k=k)
    lam, h = rec.symbols["lam"], rec.symbols["h"]
    assert sp.expand(rec.charpoly() - (r - 1 - h * lam) * sum(r**j for j in range(k))) == 0


@pytest.mark.parametrize("bad", [0, -1, 2.5, "3", True])
def test_order_must_be_positive_integer(bad):
    with pytest.raises(dd.errors.ParameterError):
        dd.smooth(k=bad)
    with pytest.raises(dd.errors.ParameterError):
        dd.dense(k=bad)


def test_order_too_large_is_refused():
    with pytest.raises(dd.errors.DegreeTooLargeError):
        dd.smooth(k=MAX_ORDER + 1)


def test_entangled_uniform_gamma_spectrum():
    n = 4
    rec = dd.entangled(n=n, lam=0)
    gamma = rec.symbols["gamma"]
    got = {rt.value: rt.multiplicity for rt in dd.roots(rec)}
    assert got == {1: 1, 1 - gamma: n - 1}
    with pytest.raises(dd.errors.DomainError):
        dd.entangled(gamma=2)


def test_entangled_orthogonal_is_exactly_orthogonal():
    for seed in range(3):
        rec = dd.entangled(kind="orthogonal", n=3, seed=seed, lam=0)
        G = -rec.coeffs[1]
        assert G.T * G == sp.eye(3)
        for rt in dd.roots(rec):
            assert sp.simplify(sp.Abs(rt.value) - 1) == 0


def test_entangled_given_matrix_and_errors():
    rec = dd.entangled(Gamma=[[0, 1], [1, 0]])
    lam = rec.lam_symbol
    assert sp.expand(rec.charpoly() - ((r - lam) ** 2 - 1)) == 0
    with pytest.raises(dd.errors.ShapeError):
        dd.entangled(Gamma=[[1, 2, 3], [4, 5, 6]])
    with pytest.raises(dd.errors.ShapeError):
        dd.entangled(Gamma=[[1, 2], [3]])
    with pytest.raises(dd.errors.ParameterError):
        dd.entangled(kind="sparse")


def test_hyper_connection_matches_determinant_lemma():
    rec = dd.hyper_connection(n=3)
    syms = rec.symbols
    H = sp.Matrix(3, 3, lambda i, j: 0)
    free = sp.Matrix(2, 2, lambda i, j: syms[f"hres_{i + 1}_{j + 1}"])
    H[:2, :2] = free
    for i in range(2):
        H[i, 2] = 1 - free[i, 0] - free[i, 1]
        H[2, i] = 1 - free[0, i] - free[1, i]
    H[2, 2] = 1 - H[2, 0] - H[2, 1]
    pre = sp.Matrix([[syms[f"hpre_{i}"] for i in (1, 2, 3)]])
    post = sp.Matrix([[syms[f"hpost_{i}"] for i in (1, 2, 3)]])
    lam = syms["lam"]
    M = r * sp.eye(3) - H
    lemma = M.det() - lam * (pre * M.adjugate() * post.T)[0, 0]
    assert sp.expand(rec.charpoly() - lemma) == 0
    # doubly stochastic: rows and columns of H_res sum to one
    assert all(sp.expand(s - 1) == 0 for s in list(H * sp.ones(3, 1)) + list(sp.ones(1, 3) * H))


def test_hyper_connection_identity_init_is_residual_on_one_stream():
    rec = dd.hyper_connection(n=2, H_res=[[1, 0], [0, 1]], H_pre=[1, 0], H_post=[1, 0])
    lam = rec.lam_symbol
    assert sp.factor(rec.charpoly()) == sp.factor((r - 1) * (r - 1 - lam))
    with pytest.raises(dd.errors.ShapeError):
        dd.hyper_connection(n=2, H_pre=[1, 0, 0])


def test_general_from_rho_sigma_and_errors():
    rec = dd.general(rho="r**2 - a*r", sigma="r")
    assert set(rec.param_names) == {"lam", "a"}
    assert dd.general(rho="r**2 - 1").lam is None
    for bad in ["r**2 +", "sqrt(r)", "1/r", "r**(1/2)"]:
        with pytest.raises(dd.errors.DepthdynError):
            dd.general(rho=bad)
    with pytest.raises(dd.errors.ParameterError):
        dd.general()
    with pytest.raises(dd.errors.ParameterError):
        dd.general(rho="1")


def test_from_coefficients():
    rec = dd.from_coefficients([1, "-a", 1], params=["a"])
    assert sp.expand(rec.charpoly() - (r**2 - rec.symbols["a"] * r + 1)) == 0
