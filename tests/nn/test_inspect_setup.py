"""inspect() on models set up the ways users really call it: each bad setup ends in a correct
result or a one-line typed error that says what to change, never a raw torch error."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

torch = pytest.importorskip("torch", reason="depthdyn.nn needs the optional torch extra")

from torch import nn  # noqa: E402

from depthdyn.errors import DepthdynError, ParameterError, ShapeError  # noqa: E402
from depthdyn.nn.analysis import inspect  # noqa: E402
from depthdyn.nn.analysis.checks import ModelSetupError, NonFiniteError  # noqa: E402
from depthdyn.nn.experiments.zoo import ResidualMLP  # noqa: E402
from depthdyn.plot.placement import plot_placement  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


class _InPlace(nn.Module):
    """``x += f(x)``: the residual update written in place, as some model code does."""

    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(dim, dim)

    def forward(self, x):
        x += torch.tanh(self.lin(x))
        return x


class _Net(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = nn.ModuleList(layers)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def _reference_sigma(model, x):
    """Top singular value per layer and sample from jacrev of each layer at its input."""
    out, states = [], [x]
    with torch.no_grad():
        for layer in model.layers:
            states.append(layer(states[-1].clone()))
    for layer, s in zip(model.layers, states[:-1], strict=False):
        J = torch.func.vmap(torch.func.jacrev(lambda t, layer=layer: layer(t[None].clone())[0]))(s)
        out.append(torch.linalg.svdvals(J.detach())[:, 0].numpy())
    return np.array(out)


def test_in_place_residual_update_is_analysed_correctly():
    model = _Net([_InPlace(6), _InPlace(6)]).double().eval()
    x = torch.randn(3, 6, dtype=torch.float64)
    x0 = x.clone()
    ins = inspect(model, x, k=1)
    assert torch.equal(x, x0)  # the caller's input untouched
    np.testing.assert_allclose(ins.top_singular_values[:, :, 0], _reference_sigma(model, x0), rtol=1e-12)
    assert np.all(ins.accuracy["recording"] == 0)
    assert np.isnan(ins.grad_norms).all() and any("x = x + f(x)" in n for n in ins.notes)
    with torch.no_grad():
        assert torch.allclose(ins.output, model(x0.clone()))


@pytest.mark.parametrize("context", ["no_grad", "inference_mode"])
def test_under_no_grad_or_inference_mode(context):
    model = ResidualMLP(dim=6, depth=2).double().eval()
    x = torch.randn(2, 6, dtype=torch.float64)
    ref = inspect(model, x, k=2)
    with getattr(torch, context)():
        ins = inspect(model, x, k=2)
    assert np.array_equal(ins.top_singular_values, ref.top_singular_values)
    assert np.array_equal(ins.grad_norms, ref.grad_norms) and np.all(ins.grad_norms > 0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_models_are_analysed_in_float32_and_say_so(dtype):
    model = ResidualMLP(dim=6, depth=2).to(dtype).eval()
    x = torch.randn(2, 6).to(dtype)
    ins = inspect(model, x, k=2)
    assert ins.dtype == "float32" and any("float32 copy" in n for n in ins.notes)
    assert next(model.parameters()).dtype == dtype  # the user's model is unchanged
    ref = inspect(model.float(), x.float(), k=2)
    np.testing.assert_allclose(ins.top_singular_values, ref.top_singular_values, rtol=1e-6)


def test_meta_device_model_is_refused():
    with torch.device("meta"):
        model = ResidualMLP(dim=6, depth=2)
    with pytest.raises(ModelSetupError, match="meta device"):
        inspect(model, torch.randn(2, 6))


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_inputs_are_refused(bad):
    model = ResidualMLP(dim=6, depth=2).double().eval()
    x = torch.randn(2, 6, dtype=torch.float64)
    x[1, 3] = bad
    with pytest.raises(NonFiniteError, match="NaN or infinite"):
        inspect(model, x)


def test_a_state_that_overflows_mid_model_is_refused_with_its_layer():
    model = _Net([nn.Linear(4, 4), nn.Linear(4, 4)]).double()
    with torch.no_grad():
        model.layers[1].weight.fill_(1e308)
        model.layers[1].bias.fill_(1e308)
    with pytest.raises(NonFiniteError, match="layers.1"):
        inspect(model, torch.randn(2, 4, dtype=torch.float64))


def test_empty_batch_is_refused():
    model = ResidualMLP(dim=6, depth=2).double().eval()
    with pytest.raises(ShapeError, match="empty"):
        inspect(model, torch.zeros(0, 6, dtype=torch.float64))


@pytest.mark.parametrize("layer", [nn.Dropout(0.1), nn.BatchNorm1d(6)])
def test_training_mode_with_dropout_or_batchnorm_asks_for_eval(layer):
    model = _Net([nn.Linear(6, 6), layer, nn.Linear(6, 6)]).double()
    x = torch.randn(4, 6, dtype=torch.float64)
    with pytest.raises(ModelSetupError, match=r"call model\.eval\(\)") as err:
        inspect(model, x)
    assert "\n" not in str(err.value) and isinstance(err.value, DepthdynError)
    model.eval()
    assert inspect(model, x).streams == 1  # in eval mode the rows are independent


def test_a_random_layer_is_refused_rather_than_analysed():
    class Noisy(nn.Module):
        def forward(self, x):
            return x + 0.1 * torch.randn_like(x)

    model = _Net([Noisy(), nn.Linear(4, 4)]).double()
    with pytest.raises(ModelSetupError, match="deterministic"):
        inspect(model, torch.randn(2, 4, dtype=torch.float64))


def test_split_on_an_unknown_layer_class_says_how():
    model = ResidualMLP(dim=6, depth=2).double().eval()
    with pytest.raises(ParameterError, match="no attention/MLP split known"):
        inspect(model, torch.randn(2, 6, dtype=torch.float64), split=True)


# ------------------------------------------------------------------ placement on any family
def test_placement_on_momentum_and_a_literature_family_against_roots():
    class Res(nn.Module):  # no LayerNorm: its null direction would put lam = 0 on the edge
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(8, 8)

        def forward(self, x):
            return x + torch.tanh(self.lin(x))

    model = _Net([Res(), Res()]).double()
    with torch.no_grad():  # branches with O(1) eigenvalues
        for p in model.parameters():
            p.mul_(2.0)
    x = torch.randn(3, 8, dtype=torch.float64)
    ins = inspect(model, x)
    res = ins.placement()
    mom = ins.placement("momentum", m=0.9, eta=0.5)
    lm = ins.placement("lm_resnet", k=-0.05)
    for i in range(2):
        lam = mom.lam[i].reshape(-1)
        np.testing.assert_allclose(np.sort_complex(lam), np.sort_complex(res.lam[i].reshape(-1)))
        # momentum: r^2 - (1 + m + eta lam) r + m;
        # LM-ResNet u' = (1 - k + lam) u + k u_prev: r^2 - (1 - k + lam) r - k
        m_r = [np.abs(np.roots([1, -(1.9 + 0.5 * v), 0.9])).max() for v in lam]
        l_r = [np.abs(np.roots([1, -(1.05 + v), 0.05])).max() for v in lam]
        assert min(abs(np.array(m_r + l_r) - 1)) > 1e-6  # no point on an edge: the verdicts are sharp
        m_in, l_in = np.mean(np.array(m_r) < 1), np.mean(np.array(l_r) < 1)
        assert mom.inside[i] == pytest.approx(m_in) and lm.inside[i] == pytest.approx(l_in)
    assert mom.families == ("momentum", "momentum") and 0 <= mom.fraction_inside <= 1
    # momentum with m = 0, eta = 1 is the residual rule (charpoly r (r - 1 - lam)): same verdicts
    assert np.array_equal(ins.placement("momentum", m=0.0, eta=1.0).inside, res.inside)
    assert not np.array_equal(mom.inside, res.inside)
    assert 0 < mom.fraction_inside < 1  # so the verdict above really moved
    with pytest.raises(ParameterError, match="missing"):
        ins.placement("momentum", m=0.9)
    ax = plot_placement(mom)
    assert len(ax.collections) >= 2 and ax.images  # the region and one point set per step
    assert "inside" in ax.get_title()


# ------------------------------------------------------------------ the coupling probe itself
@pytest.mark.parametrize("B", [6, 40])
def test_row_coupling_probe_finds_a_single_coupled_pair(B):
    from depthdyn.nn.analysis.checks import row_coupling

    lin = nn.Linear(5, 5).double()

    def fn(x, pair=None):
        y = x + torch.tanh(lin(x))
        if pair is None:
            return y
        a, b = pair
        return torch.cat([y[:b], y[b : b + 1] + 0.3 * x[a : a + 1], y[b + 1 :]])

    x = torch.randn(B, 5, dtype=torch.float64)
    assert np.array_equal(row_coupling(fn, x), np.eye(B, dtype=bool))
    for pair in [(1, 2), (B - 2, B - 1), (0, int(np.ceil(np.sqrt(B))))]:  # the last: same class mod m
        mask = row_coupling(lambda t, pair=pair: fn(t, pair), x)
        want = np.eye(B, dtype=bool)
        want[pair[1], pair[0]] = True
        assert np.array_equal(mask, want), pair


def test_progress_prints_an_estimate(capsys):
    model = ResidualMLP(dim=6, depth=2).double().eval()
    ins = inspect(model, torch.randn(2, 6, dtype=torch.float64), progress=True)
    assert np.isfinite(ins.estimate_seconds) and ins.estimate_seconds >= 0
    assert "inspect: 2 steps x 2 problems of size 6: at most about" in capsys.readouterr().err
