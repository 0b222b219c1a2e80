"""Linearised stacks against exact references and finite differences of the real network."""

import copy
import math
from fractions import Fraction

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="depthdyn.nn needs the optional torch extra")

import sympy as sp  # noqa: E402

from depthdyn import closed_form, momentum, stability_conditions  # noqa: E402
from depthdyn.errors import ParameterError, ShapeError  # noqa: E402
from depthdyn.nn.analysis import (  # noqa: E402
    Linearisation,
    jacobian_spectra,
    linearise,
    measure_response,
    place,
    predict_response,
    record,
    response_agreement,
)
from depthdyn.nn.blocks import (  # noqa: E402
    DepthStack,
    MomentumBlock,
    ResidualBlock,
    SmoothBlock,
    mlp,
    tanh_layer,
)

torch.set_num_threads(1)


def linear(dim: int, weight) -> torch.nn.Linear:
    lin = torch.nn.Linear(dim, dim, bias=False).double()
    with torch.no_grad():
        lin.weight.copy_(torch.as_tensor(weight, dtype=torch.float64).reshape(dim, dim))
    return lin


def momentum_stack(weights, a, b, step=0.5, dim=1) -> DepthStack:
    blocks = []
    for w, al, bl in zip(weights, a, b, strict=True):
        blk = MomentumBlock(dim, linear(dim, w), step=step, norm=False).double()
        with torch.no_grad():
            blk.a.copy_(torch.as_tensor(al, dtype=torch.float64).expand(dim))
            blk.b.copy_(torch.as_tensor(bl, dtype=torch.float64).expand(dim))
        blocks.append(blk)
    return DepthStack(blocks)


def test_constant_linear_momentum_matches_closed_form():
    # m = sigmoid(0) = 1/2, eta = softplus(log(e - 1)) = 1, lam = step * w = -1/4
    L = 7
    stack = momentum_stack([-0.5] * L, [0.0] * L, [math.log(math.e - 1)] * L)
    x = torch.tensor([[1.0], [-2.0]], dtype=torch.float64)
    lin = linearise(stack, x)
    np.testing.assert_allclose(lin.lam, -0.25, rtol=0, atol=1e-15)
    cf = closed_form(momentum(lam=sp.Rational(-1, 4), m=sp.Rational(1, 2), eta=1), [1, 1], start=-1)
    exact = np.array([float(cf.at(k)) for k in range(L + 1)])
    pred = predict_response(lin, np.ones((2, 1)))
    np.testing.assert_allclose(pred[:, :, 0], exact[:, None] * np.ones((1, 2)), rtol=1e-13, atol=1e-15)
    # f is linear, so the finite difference is exact for any eps (up to rounding)
    meas = measure_response(stack, x, np.ones((2, 1)), eps=1.0)
    np.testing.assert_allclose(meas, pred, rtol=1e-12, atol=1e-14)


def test_time_varying_linear_momentum_matches_rational_iteration():
    weights = [-1.0, 0.3, -2.5, -0.7, 1.1, -0.2]
    a, b = [-2.0, 0.5, 1.5, -0.3, 3.0, 0.0], [0.1, -1.0, 0.7, 2.0, 0.0, -0.4]
    stack = momentum_stack(weights, a, b, step=0.5)
    lin = linearise(stack, torch.tensor([[0.3]], dtype=torch.float64))
    prev = cur = Fraction(1)  # v_0 = 0: x_{-1} = x_0
    ref = [cur]
    for blk in stack.blocks:  # exact rational iteration of x' = (1 + m + eta lam) x - m x_prev
        m, eta = Fraction(blk.m.item()), Fraction(blk.eta.item())
        lam = Fraction(0.5) * Fraction(blk.f.weight.item())
        prev, cur = cur, (1 + m + eta * lam) * cur - m * prev
        ref.append(cur)
    ref = np.array([float(v) for v in ref])
    for method in ("recurrence", "jacobian"):
        pred = predict_response(lin, [[1.0]], method=method)[:, 0, 0]
        np.testing.assert_allclose(pred, ref, rtol=1e-12, atol=1e-14)
    assert all(len(r) == 1 and r[0].lam == "lam" for r in lin.recurrences)


def test_vector_linear_momentum_matches_block_companion():
    rng = np.random.default_rng(3)
    d, L, step = 3, 4, 0.25
    Ws = [rng.normal(size=(d, d)) for _ in range(L)]
    stack = momentum_stack(Ws, [[-1.0, 0.0, 2.0]] * L, [[0.3, -0.2, 1.0]] * L, step=step, dim=d)
    x = torch.tensor(rng.normal(size=(2, d)))
    delta = rng.normal(size=(2, d))
    lin = linearise(stack, x)
    s = np.concatenate([delta, np.zeros_like(delta)], axis=1)  # (x, v), v_0 = 0
    ref, spectra = [delta], jacobian_spectra(record(stack, x[:1]))
    for i, (blk, W) in enumerate(zip(stack.blocks, Ws, strict=True)):
        M, E = np.diag(blk.m.detach().numpy()), np.diag(blk.eta.detach().numpy())
        EJ = E @ (step * W)
        A = np.block([[np.eye(d) + EJ, M], [EJ, M]])
        s = s @ A.T
        ref.append(s[:, :d])
        np.testing.assert_allclose(
            np.sort_complex(spectra[i]), np.sort_complex(np.linalg.eigvals(A)), atol=1e-12
        )
    np.testing.assert_allclose(predict_response(lin, delta), np.stack(ref), rtol=1e-12, atol=1e-13)
    assert lin.lam.shape == (L, 2) and len(lin.recurrences[0]) == d  # one recurrence per channel


@pytest.fixture(scope="module")
def trained():
    """A d = 1 momentum stack trained on y = -x^3 (float64, a few hundred Adam steps)."""
    torch.manual_seed(0)
    L = 8
    stack = DepthStack(
        MomentumBlock(1, mlp(1, 8), step=1 / L, norm=False, a_init=-2.0) for _ in range(L)
    ).double()
    x = torch.linspace(-1, 1, 64, dtype=torch.float64)[:, None]
    opt = torch.optim.Adam(stack.parameters(), lr=1e-2)
    for _ in range(300):
        opt.zero_grad()
        loss = ((stack(x) + x**3) ** 2).mean()
        loss.backward()
        opt.step()
    assert loss.item() < 1e-2
    return stack, torch.linspace(-1, 1, 33, dtype=torch.float64)[:, None]


def test_trained_momentum_prediction_agrees_with_measurement(trained):
    stack, x = trained
    ag = response_agreement(stack, x)
    print(f"\ntrained momentum stack: {ag}")
    assert ag.method == "recurrence"
    assert ag.max_rel < 1e-5 and ag.median_rel < 1e-6
    assert ag.max_rel_large > 10 * ag.max_rel  # the nonlinearity shows at eps = 1e-2
    lin = linearise(stack, x)
    rec, jac = predict_response(lin, 1.0, method="recurrence"), predict_response(lin, 1.0, method="jacobian")
    np.testing.assert_allclose(rec, jac, rtol=1e-12, atol=1e-12)
    central = measure_response(stack, x, 1.0, eps=1e-5, central=True)
    assert np.abs(central - rec).max() / np.abs(rec).max() < 1e-7


def test_trained_momentum_placement_matches_the_inequality(trained):
    stack, x = trained
    pl = place(linearise(stack, x))
    print(f"\n{pl}; per layer {np.round(pl.per_layer, 3).tolist()}")
    z, m = pl.coordinates["eta"] * pl.coordinates["lam"], pl.coordinates["m"]
    np.testing.assert_array_equal(np.stack(pl.strict), (-2 * (1 + m) < z) & (z < 0))  # independent reference
    assert pl.conditions_agree == 1.0
    assert pl.fraction == pytest.approx(np.stack(pl.strict).mean())
    assert set(pl.to_json()) >= {"fraction", "per_layer", "conditions"}


@pytest.mark.parametrize("w, inside", [(-1.0, True), (-2.5, True), (1.0, False), (-4.0, False)])
def test_placement_inside_and_outside(w, inside):
    # m = 1/2, eta = 1: strictly stable iff -3 < lam < 0, lam = step * w with step 1
    stack = momentum_stack([w] * 3, [0.0] * 3, [math.log(math.e - 1)] * 3, step=1.0)
    pl = place(linearise(stack, torch.linspace(-1, 1, 5, dtype=torch.float64)[:, None]))
    assert pl.fraction == (1.0 if inside else 0.0)
    assert stability_conditions(momentum()).holds(lam=sp.Rational(w), m=sp.Rational(1, 2), eta=1) is inside


def test_smooth_recurrence_with_step_parameter_matches_jacobians():
    torch.manual_seed(1)
    stack = DepthStack(SmoothBlock(1, tanh_layer(1), k=2, step=0.3) for _ in range(5)).double()
    lin = linearise(stack, torch.linspace(-1, 1, 7, dtype=torch.float64)[:, None])
    rec, jac = predict_response(lin, 1.0, method="recurrence"), predict_response(lin, 1.0, method="jacobian")
    np.testing.assert_allclose(rec, jac, rtol=1e-12, atol=1e-12)


def test_layernorm_residual_vector_stack_agrees():
    torch.manual_seed(2)
    stack = DepthStack(ResidualBlock(4, step=0.25, norm=True) for _ in range(4))  # float32: copied to float64
    ag = response_agreement(stack, torch.randn(6, 4))
    assert ag.method == "jacobian" and ag.max_rel < 1e-5
    assert next(stack.parameters()).dtype == torch.float32


def test_bad_inputs_raise_typed_errors(trained):
    stack, x = trained
    with pytest.raises(ParameterError):
        linearise("not a stack", x)
    with pytest.raises(ShapeError):
        linearise(stack, torch.ones(3, 2))
    with pytest.raises(ParameterError):
        linearise(stack, torch.tensor([[float("nan")]]))
    lin = linearise(stack, x[:3])
    assert isinstance(lin, Linearisation) and "momentum" in str(lin)
    with pytest.raises(ShapeError):
        predict_response(lin, np.ones((4, 1)))
    with pytest.raises(ParameterError):
        predict_response(lin, 1.0, method="bogus")
    with pytest.raises(ParameterError):
        measure_response(stack, x, 1.0, eps=0.0)
    with pytest.raises(ParameterError):
        place("lin")
    vec = linearise(DepthStack(ResidualBlock(2, norm=False) for _ in range(2)), torch.ones(1, 2))
    with pytest.raises(ParameterError):
        predict_response(vec, 1.0, method="recurrence")


def test_ck_layers_are_marginal_never_strict():
    # C^2 with f(x) = w x: r^2 - (2 + h^2 w) r + 1 has root product 1, so never strictly
    # stable; for -4 < h^2 w < 0 both roots are simple on the unit circle (marginal).
    f = torch.nn.Linear(1, 1, bias=False).double()
    with torch.no_grad():
        f.weight.fill_(-1.0)
    stack = DepthStack(SmoothBlock(1, copy.deepcopy(f), k=2, step=0.5) for _ in range(3)).double()
    pl = place(linearise(stack, torch.linspace(-1, 1, 5, dtype=torch.float64)[:, None]))
    assert (pl.fraction, pl.marginal_fraction) == (0.0, 1.0)
    with torch.no_grad():
        for b in stack.blocks:
            b.f.weight.fill_(1.0)  # a real root above 1: not even marginal
    pl = place(linearise(stack, torch.linspace(-1, 1, 5, dtype=torch.float64)[:, None]))
    assert (pl.fraction, pl.marginal_fraction) == (0.0, 0.0)
    assert "at least marginally" in str(pl)


def test_one_placement_for_a_linearisation_and_a_family():
    # m = 1/2, eta = 1, lam = w: the learned recurrences put lam = -1 inside (-3 < lam < 0);
    # the residual family's region |1 + lam| < 1 puts it inside too, lam = -2.5 outside
    x = torch.linspace(-1, 1, 5, dtype=torch.float64)[:, None]
    for w, own, residual in ((-1.0, True, True), (-2.5, True, False)):
        lin = linearise(momentum_stack([w] * 3, [0.0] * 3, [math.log(math.e - 1)] * 3, step=1.0), x)
        mine, fam = place(lin), place(lin, "residual")
        assert (mine.fraction, fam.fraction) == (float(own), float(residual))
        assert fam.families == ("residual",) * 3 and fam.params == ((),) * 3
        np.testing.assert_allclose(np.concatenate(fam.lam).real, w, rtol=1e-12)
        assert place(lin, "momentum", m=0.5, eta=1.0).fraction == mine.fraction  # the same region
    with pytest.raises(ParameterError):
        place(lin, m=0.5)  # parameters need a family
    with pytest.raises(ParameterError):
        place(lin, "momentum", m=[0.5, 0.6], eta=1.0)


def test_plot_placement_of_a_linearisation_in_its_coefficient_plane():
    from matplotlib.figure import Figure

    from depthdyn.plot.placement import plot_placement

    x = torch.linspace(-1, 1, 5, dtype=torch.float64)[:, None]
    pl = place(linearise(momentum_stack([-1.0, -2.0, -2.5], [0.0, 1.0, -1.0], [0.5] * 3, step=1.0), x))
    ax = plot_placement(pl, Figure().add_subplot(), plane=("eta*lam", "m"), n=41)
    pts = ax.collections[-1].get_offsets()
    z, m = pl.coordinates["eta"] * pl.coordinates["lam"], pl.coordinates["m"]
    np.testing.assert_allclose(np.sort(pts[:, 0]), np.sort(z.real.ravel()), rtol=1e-12)
    np.testing.assert_allclose(np.sort(pts[:, 1]), np.sort(m.ravel()), rtol=1e-12)
    assert "lambda" in ax.get_xlabel() and "eta" in ax.get_xlabel()
    with pytest.raises(ParameterError):  # three recurrences (one per learned m): no single lam plane
        plot_placement(pl, Figure().add_subplot())
    with pytest.raises(ParameterError):
        plot_placement(pl, Figure().add_subplot(), plane=("m", "eta"))  # no lam on the x axis
    with pytest.raises(ParameterError):
        plot_placement(pl, Figure().add_subplot(), plane=("eta*lam", "k"))  # no such coordinate
