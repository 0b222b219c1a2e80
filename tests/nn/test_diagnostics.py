"""Depth diagnostics against hand-computed values."""

import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="depthdyn.nn needs the optional torch extra")

from depthdyn.errors import ParameterError, ShapeError  # noqa: E402
from depthdyn.nn.analysis import (  # noqa: E402
    Diagnostics,
    diagnose,
    grad_norms,
    hc_profile,
    inversion_growth,
    jacobian_spectra,
    norm_profile,
    perturbation_ratio,
    record,
    update_cosine,
)
from depthdyn.nn.blocks import DepthBlock, DepthStack, MomentumBlock, ResidualBlock  # noqa: E402

torch.set_num_threads(1)


def scalar_linear(w: float) -> torch.nn.Linear:
    lin = torch.nn.Linear(1, 1, bias=False).double()
    with torch.no_grad():
        lin.weight.fill_(w)
    return lin


def residual_stack(w: float, L: int = 5) -> DepthStack:
    """Scalar residual stack with f(x) = w x: x' = (1 + w) x."""
    return DepthStack(ResidualBlock(1, scalar_linear(w), norm=False) for _ in range(L))


def zero_f(dim: int) -> torch.nn.Linear:
    lin = torch.nn.Linear(dim, dim).double()
    torch.nn.init.zeros_(lin.weight)
    torch.nn.init.zeros_(lin.bias)
    return lin


class HandMadeHC(DepthBlock):
    """n streams mixed by a fixed H_res: X' = H_res X (no branch); stands in for hyper-connections."""

    family = "hyper_connection"

    def __init__(self, H, reported=None):
        H = torch.as_tensor(H, dtype=torch.float64)
        self.slots = H.shape[0]
        super().__init__(2)
        self.register_buffer("H", H)
        self.reported = H if reported is None else torch.as_tensor(reported, dtype=torch.float64)

    def forward(self, state):
        return torch.einsum("ij,bjd->bid", self.H, state)

    def coefficients(self):
        return {"H_res": self.reported}


def test_identity_f_stack_has_flat_norms_and_zero_perturbation_ratio():
    stack = DepthStack(ResidualBlock(3, zero_f(3)) for _ in range(4)).double()  # pre-norm, f = 0
    x = torch.randn(6, 3, dtype=torch.float64)
    tr = stack.trace(x)
    np.testing.assert_allclose(norm_profile(tr), np.full(5, x.norm(dim=1).mean().item()), rtol=1e-14)
    pr = perturbation_ratio(tr)
    assert pr.mean == 0.0 and not pr.per_layer.any()


def test_perturbation_ratio_of_a_linear_residual_stack():
    tr = residual_stack(0.1, L=3).trace(torch.tensor([[2.0], [-0.5]], dtype=torch.float64))
    np.testing.assert_allclose(perturbation_ratio(tr).per_layer, 0.1, rtol=1e-13)


def test_update_cosine_counts_sign_flips():
    x = torch.tensor([[1.0], [-3.0]], dtype=torch.float64)
    calm = update_cosine(residual_stack(0.2).trace(x))  # x' = 1.2 x: updates keep their sign
    np.testing.assert_allclose(calm.cosine, 1.0)
    assert calm.flip_fraction == 0.0
    flip = update_cosine(residual_stack(-1.5).trace(x))  # x' = -0.5 x: updates alternate
    np.testing.assert_allclose(flip.cosine, -1.0)
    assert flip.flip_fraction == 1.0 and flip.flips_per_layer.tolist() == [1.0] * 4


def test_grad_norms_of_a_linear_residual_stack_in_closed_form():
    lam, L = 0.3, 4
    stack = residual_stack(lam, L=L)
    x = torch.tensor([[1.0], [2.0], [-1.0]], dtype=torch.float64)
    g = grad_norms(record(stack, x), lambda out: out.sum())  # d x_L.sum() / d x_l = (1 + lam)^(L - l)
    np.testing.assert_allclose(g, math.sqrt(3) * (1 + lam) ** np.arange(L, -1, -1), rtol=1e-13)
    assert all(p.grad is None for p in stack.parameters())
    with pytest.raises(ShapeError):
        grad_norms(record(stack, x), lambda out: out)


def test_grad_norms_are_nan_where_no_gradient_arrives():
    # the first block runs without a graph: no gradient reaches its input or its output; 0
    # would claim that the gradient vanishes there
    class Cut(ResidualBlock):
        def __init__(self, *args, cut: bool, **kwargs):
            super().__init__(*args, **kwargs)
            self.cut = cut

        def forward(self, state):
            with torch.set_grad_enabled(not self.cut and torch.is_grad_enabled()):
                return super().forward(state)

    stack = DepthStack(Cut(1, scalar_linear(0.5), norm=False, cut=cut) for cut in (True, False))
    x = torch.tensor([[1.0], [2.0]], dtype=torch.float64)
    g = grad_norms(record(stack, x), lambda out: out.sum())
    assert np.isnan(g[:2]).all() and g[2] == pytest.approx(math.sqrt(2))  # x_1: layer 0's output, no graph
    np.testing.assert_array_equal(diagnose(stack, x, lambda out: out.sum()).grad_norms, g)


def test_jacobian_spectra_of_a_scalar_momentum_block():
    blk = MomentumBlock(1, scalar_linear(-0.8), step=0.5, norm=False, a_init=0.0).double()
    got = jacobian_spectra(record(DepthStack([blk]), torch.tensor([[0.7]], dtype=torch.float64)))[0]
    z, m = blk.eta.item() * 0.5 * -0.8, 0.5
    want = np.linalg.eigvals(np.array([[1 + z, m], [z, m]]))
    np.testing.assert_allclose(np.sort_complex(got), np.sort_complex(want), atol=1e-14)


def _hc(stack) -> object:
    return hc_profile(record(stack, torch.randn(3, 2, dtype=torch.float64)))


def test_hc_profile_of_doubly_stochastic_products_is_one():
    mats = [[[0.7, 0.3], [0.3, 0.7]], [[0.0, 1.0], [1.0, 0.0]], [[0.25, 0.75], [0.75, 0.25]]]
    gain = _hc(DepthStack(HandMadeHC(H) for H in mats))
    want = np.array(mats[2]) @ np.array(mats[1]) @ np.array(mats[0])
    np.testing.assert_allclose(gain.products[-1], np.broadcast_to(want, (3, 2, 2)), rtol=1e-15)
    for value in (gain.max_forward_gain, gain.max_backward_gain, gain.spectral_norm[-1].max()):
        assert value == pytest.approx(1.0, abs=1e-14)
    np.testing.assert_allclose(gain.spectral_norm, 1.0, atol=1e-14)
    big = _hc(DepthStack(HandMadeHC([[1.2, 0.1], [0.0, 0.9]]) for _ in range(5)))
    assert big.max_forward_gain > 1 and big.max_backward_gain > 1 and big.spectral_norm[-1, 0] > 1.2**5 - 1e-9
    assert np.all(np.diff(big.spectral_norm[:, 0]) > 0)
    # the products' numbers are those of the NumPy record, each token one sample
    from depthdyn.products.hc import composite_gains

    ref = composite_gains(np.array([[[1.2, 0.1], [0.0, 0.9]]] * 5))
    np.testing.assert_allclose(big.gains.log_row_gain[0], ref.log_row_gain[0], rtol=1e-14)


def test_inversion_growth_is_the_product_of_inverse_carries_and_matches_an_inversion():
    a = [-1.0, 0.5, -2.0, 0.3]
    blocks = []
    for al in a:
        blk = MomentumBlock(2, zero_f(2), norm=False).double()
        with torch.no_grad():
            blk.a.copy_(torch.tensor([al, al + 1.0], dtype=torch.float64))
        blocks.append(blk)
    stack = DepthStack(blocks)
    m = torch.sigmoid(torch.tensor([[al, al + 1.0] for al in a], dtype=torch.float64))
    np.testing.assert_allclose(inversion_growth(stack), (1 / m).prod(dim=0).numpy(), rtol=1e-14)
    np.testing.assert_allclose(
        inversion_growth(stack, log10=True), -torch.log10(m).sum(0).numpy(), rtol=1e-14
    )
    # run the stack backwards from a final state whose velocity carries an error e
    state = stack.run(stack.initial_state(torch.ones(1, 2, dtype=torch.float64))).detach()
    e = 1e-9
    x, v = state[:, 0], state[:, 1] + e
    for blk in reversed(stack.blocks):
        x = x - v
        v = (v - blk.eta.detach() * blk.branch(x).detach()) / blk.m.detach()
    np.testing.assert_allclose(v[0].numpy() / e, inversion_growth(stack), rtol=1e-6)  # v_0 = 0 exactly


def test_diagnose_is_json_serialisable():
    torch.manual_seed(0)
    stack = DepthStack(MomentumBlock(3, step=0.25, a_init=-1.0) for _ in range(3))
    x = torch.randn(5, 3)
    diag = diagnose(stack, x, loss_fn=lambda out: (out**2).mean())
    assert isinstance(diag, Diagnostics) and diag.hc is None
    data = json.loads(json.dumps(diag.to_json()))
    assert len(data["norms"]) == 4 and len(data["grad_norms"]) == 4 and len(data["update_cosine"]) == 2
    np.testing.assert_allclose(data["inversion_log10_growth"], 3 * -np.log10(1 / (1 + np.e)), rtol=1e-6)
    hc = diagnose(
        DepthStack(HandMadeHC([[0.5, 0.5], [0.5, 0.5]]) for _ in range(2)), torch.randn(4, 2).double()
    )
    assert hc.to_json()["hc"]["max_spectral_norm"] == pytest.approx(1.0)
    assert hc.grad_norms is None and hc.inversion_log10_growth is None


def test_bad_inputs_raise_typed_errors():
    stack = residual_stack(0.1, L=1)
    with pytest.raises(ParameterError):
        norm_profile("trace")
    with pytest.raises(ShapeError):
        update_cosine(stack.trace(torch.ones(2, 1, dtype=torch.float64)))
    with pytest.raises(ParameterError):
        jacobian_spectra(stack.trace(torch.ones(2, 1, dtype=torch.float64)))
    with pytest.raises(ParameterError):
        jacobian_spectra(record(stack, torch.ones(2, 1, dtype=torch.float64)), sample=2)
    with pytest.raises(ParameterError):
        hc_profile(record(stack, torch.ones(2, 1, dtype=torch.float64)))
    with pytest.raises(ParameterError):
        inversion_growth(stack)
    with pytest.raises(ShapeError):
        _hc(DepthStack([HandMadeHC(np.eye(2)), HandMadeHC(np.eye(2), reported=np.ones((2, 3)))]))
    deep = DepthStack(MomentumBlock(1, scalar_linear(0.0), norm=False) for _ in range(40))  # m = sigmoid(-20)
    with pytest.raises(ParameterError):
        inversion_growth(deep)
    m = torch.sigmoid(torch.tensor(-20.0, dtype=torch.float64)).item()
    assert inversion_growth(deep, log10=True)[0] == pytest.approx(-40 * math.log10(m), rel=1e-6)
    with pytest.raises(ParameterError):
        grad_norms(record(stack, torch.ones(1, 1, dtype=torch.float64)), "loss")
    with pytest.raises(ParameterError):
        grad_norms("recording", lambda out: out.sum())
