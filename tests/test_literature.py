"""The literature's families: each characteristic polynomial against an independent derivation.

The factories derive their recurrences from the block matrix (``det(r I - M)``), the stage
equations or the stream matrix. Here every one is checked a second way: the paper's update
rule is iterated symbolically (written out again in the test, step by step) and the
trajectory must satisfy the recurrence; Runge-Kutta functions against the determinant
formula and a numeric step; stream families against the matrix determinant lemma or known
eigenvalues. Each check is also fed a wrong rule and must then fail.
"""

import numpy as np
import pytest
import sympy as sp

import depthdyn as dd
from depthdyn.families import literature as lit
from depthdyn.errors import DepthdynError, ParameterError, ShapeError
from depthdyn.recurrence import r


def annihilates(rec, xs) -> bool:
    """Whether the trajectory ``xs`` satisfies ``rec`` at every window."""
    c = sp.Poly(rec.charpoly(), r).all_coeffs()
    p = len(c) - 1
    return all(sp.simplify(sum(c[j] * xs[l + p - j] for j in range(p + 1))) == 0
               for l in range(len(xs) - p))


def run(step, state, n=5, observe=0):
    """Iterate ``step`` on ``state`` (a tuple), returning the observed component."""
    out = [state[observe]]
    for _ in range(n):
        state = step(*state)
        out.append(sp.expand(state[observe]))
    return out


S = sp.symbols("s0 s1")


def test_lm_resnet_by_iteration():
    rec = lit.lm_resnet()
    lam, k = rec.symbols["lam"], rec.symbols["k"]

    def f(u):
        return lam * u

    xs = run(lambda u, up: ((1 - k) * u + k * up + f(u), u), S)
    assert annihilates(rec, xs)
    assert not annihilates(rec, run(lambda u, up: ((1 + k) * u - k * up + f(u), u), S))  # sign of k flipped
    assert sp.expand(rec.charpoly() - ((r - 1) * (r + k) - lam * r)) == 0
    assert sp.expand(rec.subs(k=0).charpoly() - r * dd.residual().charpoly()) == 0  # ResNet, spurious 0


@pytest.mark.parametrize("name", ["revnet", "hamiltonian"])
def test_two_stream_blocks_by_iteration(name):
    rec = dd.build(name)
    lam = rec.symbols["lam"]
    a, b = sp.symbols("a b")  # the two branch gains; lam = a b

    def block(x1, x2):  # RevNet: y1 = x1 + F(x2), y2 = x2 + G(y1); Hamiltonian: G = -h K^T, F = h K
        y1 = x1 + a * x2
        return y1, x2 + b * y1

    xs = [x.subs(b, lam / a) for x in run(block, S)]
    assert annihilates(rec, [sp.simplify(x) for x in xs])
    wrong = [x.subs(b, lam / a) for x in run(lambda x1, x2: (x1 + a * x2, x2 + b * x1), S)]  # G(x1)
    assert not annihilates(rec, wrong)
    M = rec.native[0].A
    assert M.det() == 1  # volume preserving
    assert dd.similarity(rec, "companion", "block").verified


def test_leapfrog_by_iteration_and_as_smooth_k2():
    rec = lit.leapfrog()
    lam, h = rec.symbols["lam"], rec.symbols["h"]
    xs = run(lambda y, yp: (2 * y - yp + h**2 * lam * y, y), S)
    assert annihilates(rec, xs)
    assert not annihilates(rec, run(lambda y, yp: (2 * y - yp + h * lam * y, y), S))
    smooth = dd.smooth(k=2)
    assert sp.expand(rec.charpoly() - smooth.charpoly().xreplace(
        {smooth.symbols["lam"]: lam, smooth.symbols["h"]: h})) == 0
    assert dd.similarity(rec, "companion", "block").verified


def test_momentum_sander_by_iteration_and_as_the_post_block():
    rec = lit.momentum_sander()
    lam, g = rec.symbols["lam"], rec.symbols["gamma"]

    def block(x, v):
        v = g * v + (1 - g) * lam * x
        return x + v, v

    assert annihilates(rec, run(block, S))
    assert not annihilates(rec, run(lambda x, v: (x + (1 - g) * v + g * lam * x, (1 - g) * v + g * lam * x), S))
    post = dd.momentum()
    mapped = post.charpoly().xreplace({post.symbols["m"]: g, post.symbols["eta"]: 1 - g, post.symbols["lam"]: lam})
    assert sp.expand(rec.charpoly() - mapped) == 0
    assert sp.expand(rec.native[0].A.det() - g) == 0
    assert dd.similarity(rec, "companion", "block").verified


def test_first_order_blocks_by_their_rule():
    rec = lit.antisymmetric()
    lam, eps, gam = (rec.symbols[k] for k in ("lam", "eps", "gamma"))
    assert annihilates(rec, run(lambda x: (x + eps * (lam - gam) * x,), (S[0],)))
    assert not annihilates(rec, run(lambda x: (x + eps * (lam + gam) * x,), (S[0],)))
    rec = lit.deepnet(N=8)
    lam = rec.symbols["lam"]
    alpha = sp.root(16, 4)  # (2N)^(1/4) at N = 8

    def deepnorm(x):  # LN(alpha x + f(x)) with LN linearised as division by alpha
        return ((alpha * x + lam * x) / alpha,)

    assert annihilates(rec, run(deepnorm, (S[0],)))
    assert not annihilates(lit.deepnet(N=9), run(deepnorm, (S[0],)))
    rec = lit.branch_scaled(power=1)
    lam, L = rec.symbols["lam"], rec.symbols["L"]
    assert sp.expand(rec.charpoly() - dd.residual(scaled=True).charpoly().xreplace(
        {dd.residual(scaled=True).symbols["lam"]: lam, dd.residual(scaled=True).symbols["L"]: L})) == 0


def _r_by_det(A, b, z):
    A, b = sp.Matrix(A), sp.Matrix(b)
    s = A.shape[0]
    return (sp.eye(s) - z * A + z * sp.ones(s, 1) * b.T).det() / (sp.eye(s) - z * A).det()


@pytest.mark.parametrize("name", sorted(lit.TABLEAUX))
def test_runge_kutta_against_the_determinant_formula_and_a_numeric_step(name):
    A, b = lit.TABLEAUX[name]
    rec = lit.runge_kutta(tableau=name)
    lam, h = rec.symbols["lam"], rec.symbols["h"]
    z = sp.Symbol("z")
    c0, c1 = (c[0, 0] for c in rec.coeffs)
    R = sp.cancel(-c1 / c0)
    assert sp.simplify(R.subs(h * lam, z).subs({h: 1, lam: z}) - _r_by_det(A, b, z)) == 0
    # one numeric RK step of dx/dt = mu x (stages solved as a linear system), mu complex
    mu, step = -0.7 + 0.4j, 0.9
    An, bn = np.array(A, dtype=float), np.array(b, dtype=float)
    k = np.linalg.solve(np.eye(len(bn)) - step * mu * An, mu * np.ones(len(bn)))
    x1 = 1 + step * bn @ k
    assert abs(complex(R.subs({h: step, lam: mu})) - x1) < 1e-12
    wrong = _r_by_det(A, [*b[:-1], b[-1] + sp.Rational(1, 7)], z)
    assert sp.simplify(R.subs({h: 1, lam: z}) - wrong) != 0


def test_rk4_is_the_taylor_polynomial_and_named():
    rec = lit.rk4()
    lam, h = rec.symbols["lam"], rec.symbols["h"]
    assert rec.name == "rk4" and lit.rk2().name == "rk2"
    assert sp.expand(rec.charpoly() - (r - sum((h * lam) ** j / sp.factorial(j) for j in range(5)))) == 0


def test_custom_tableau_and_errors():
    rec = lit.runge_kutta(A=[[0, 0], [1, 0]], b=[sp.Rational(1, 2), sp.Rational(1, 2)])
    assert rec.charpoly() == lit.runge_kutta(tableau="heun").charpoly()
    with pytest.raises(ParameterError, match="tableau must be one of"):
        lit.runge_kutta(tableau="rk5")
    with pytest.raises(ParameterError, match="both A and b"):
        lit.runge_kutta(A=[[0]])
    with pytest.raises(ShapeError):
        lit.runge_kutta(A=[[0, 0], [1, 0]], b=[1])


def lemma(H, pre, post, lam):
    """``det(r I - H - lam u v^T) = det(r I - H) (1 - lam v^T (r I - H)^-1 u)``."""
    n = H.shape[0]
    R = r * sp.eye(n) - H
    return sp.expand(sp.cancel(R.det() * (1 - lam * (pre * R.inv() * post.T)[0, 0])))


@pytest.mark.parametrize("make", [
    lambda: lit.hc_static(n=3, layer=1),
    lambda: lit.mhc_lite(n=2),
    lambda: lit.mhc_lite(n=3, weights=[0, sp.Rational(1, 2), 0, sp.Rational(1, 4), sp.Rational(1, 4), 0]),
    lambda: lit.kromhc(factors=2, H_pre=[1, 0, 0, 1], H_post=[0, 1, 1, 1]),
    lambda: lit.mhc(n=3, seed=2),
])
def test_stream_families_by_the_determinant_lemma(make):
    rec = make()
    lam = rec.lam_symbol
    M = -rec.coeffs[1]
    H = M.subs(lam, 0)
    dM = sp.expand((M - H) / lam) if lam else None
    post, pre = None, None
    for i in range(H.shape[0]):  # read the rank-one update u v^T back as H_post^T H_pre
        if any(dM.row(i)):
            pre = dM.row(i) / next(e for e in dM.row(i) if e != 0)
            post = sp.Matrix([[dM[j, list(pre).index(1)]] for j in range(H.shape[0])]).T
            break
    assert sp.expand(post.T * pre - dM) == sp.zeros(*H.shape)
    assert sp.expand(rec.charpoly() - lemma(H, pre, post, lam)) == 0
    assert sp.expand(rec.charpoly() - lemma(H, pre, 2 * post, lam)) != 0


def test_doubly_stochastic_residuals():
    ones = sp.ones(4, 1)
    for rec in (lit.kromhc(), lit.mhc_lite(n=3)):
        H = (-rec.coeffs[1]).subs(rec.lam_symbol, 0)
        n = H.shape[0]
        assert sp.expand(H * ones[:n, :]) == ones[:n, :] and sp.expand(ones[:n, :].T * H) == ones[:n, :].T
    rec = lit.kromhc()
    a1, a2 = rec.symbols["a_1"], rec.symbols["a_2"]
    eig = [1, 2 * a1 - 1, 2 * a2 - 1, (2 * a1 - 1) * (2 * a2 - 1)]  # products of the factors' eigenvalues
    at0 = (-rec.coeffs[1]).subs(rec.lam_symbol, 0)
    assert sp.expand((r * sp.eye(4) - at0).det() - sp.prod([r - e for e in eig])) == 0
    # mHC: 20 rounds of Sinkhorn-Knopp, written here in the linear domain (rows, then columns)
    K = np.exp(np.random.default_rng(1).normal(size=(4, 4)))
    for _ in range(20):
        K = K / K.sum(axis=1, keepdims=True)
        K = K / K.sum(axis=0, keepdims=True)
    lam = lit.mhc(n=4, seed=1).lam_symbol
    H = np.array((-lit.mhc(n=4, seed=1).coeffs[1]).subs(lam, 0).evalf(), dtype=float)
    assert np.allclose(H, K, atol=1e-15) and np.allclose(K.sum(axis=0), 1, atol=1e-15)


def test_native_block_matrices_have_the_charpoly():
    for name in ("lm_resnet", "revnet", "hamiltonian", "leapfrog", "momentum_sander"):
        rec = dd.build(name)
        (block,) = rec.native
        n = block.A.shape[0]
        assert sp.expand((r * sp.eye(n) - block.A).det() - rec.charpoly()) == 0
        assert dd.similarity(rec, "companion", "block").verified


@pytest.mark.parametrize("call, error", [
    (lambda: lit.deepnet(arch="both"), ParameterError),
    (lambda: lit.branch_scaled(power=-1), ParameterError),
    (lambda: lit.hc_static(n=0), ParameterError),
    (lambda: lit.hc_static(A_r=[[1, 0], [0]]), ShapeError),
    (lambda: lit.mhc_lite(n=2, weights=[1, 1]), ParameterError),
    (lambda: lit.mhc_lite(n=2, weights=[1]), ShapeError),
    (lambda: lit.mhc_lite(n=4), ParameterError),
    (lambda: lit.kromhc(factors=0), ParameterError),
    (lambda: lit.mhc(n=2, iterations=0), ParameterError),
    (lambda: lit.momentum_sander(gamma=2), DepthdynError),
])
def test_bad_input_is_a_clear_error(call, error):
    with pytest.raises(error):
        call()


def test_registry_holds_the_literature_with_examples():
    new = ["lm_resnet", "revnet", "hamiltonian", "leapfrog", "antisymmetric", "runge_kutta", "rk2", "rk4",
           "momentum_sander", "deepnet", "branch_scaled", "hc_static", "mhc", "mhc_lite", "kromhc"]
    assert set(new) <= set(dd.FAMILIES)
    for name in new:
        fam = dd.FAMILIES[name]
        assert fam.factory.__module__ == "depthdyn.families.literature"
        rec = fam()
        free = set(rec.param_names) - {"lam"} - set(fam.example)
        assert not free, f"{name}: the example leaves {free} open"


@pytest.mark.parametrize("name", ["lm_resnet", "revnet", "hamiltonian", "leapfrog", "antisymmetric", "runge_kutta",
                                  "rk2", "rk4", "momentum_sander", "deepnet", "branch_scaled", "hc_static", "mhc",
                                  "mhc_lite", "kromhc"])
def test_unknown_keywords_are_rejected(name):
    with pytest.raises(dd.errors.UnknownParameterError):
        dd.build(name, no_such_argument=1)


def test_every_example_names_only_arguments_and_parameters():
    """An example key is a structural argument, rho/sigma or a parameter of the recurrence it
    builds (the multistep families once carried an ``h`` that none of them takes)."""
    for name, fam in dd.FAMILIES.items():
        ex = fam.example
        rec = fam(**{k: v for k, v in ex.items() if k in fam.structural})
        stray = set(ex) - set(fam.structural) - {"rho", "sigma"} - set(rec.param_names)
        if name == "deepnet":  # M, the decoder depth, is a parameter of arch='encoder' / 'decoder'
            assert "M" in dd.FAMILIES[name](arch="encoder").param_names
            stray -= {"M"}
        assert not stray, f"{name}: example keys {stray} are neither arguments nor parameters"
