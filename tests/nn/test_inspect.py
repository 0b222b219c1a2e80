"""inspect() on models nobody here wrote the analysis for: depth profile and layer Jacobian
spectra against dense Jacobians computed independently (torch.autograd.functional.jacobian of
the layer's own math), the recording against the model's own output."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="depthdyn.nn needs the optional torch extra")

from torch import nn  # noqa: E402

torch.set_num_threads(1)  # a second thread on a loaded 2-core machine slows each small op ~100x

from depthdyn.errors import ParameterError, ShapeError  # noqa: E402
from depthdyn.nn.analysis import (  # noqa: E402
    diagnose,
    find_layers,
    hc_profile,
    inspect,
    jacobian_spectra,
    linearise,
    place,
    record,
)
from depthdyn.nn.blocks import ConvEntangledBlock, DepthStack, MomentumBlock, make_stack  # noqa: E402
from depthdyn.nn.experiments.zoo import GPT2Style, LlamaStyle, ResidualMLP  # noqa: E402

RTOL = 1e-5


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def _dense_spectra(J: torch.Tensor, k: int):
    J = J.double()
    return torch.linalg.svdvals(J)[:k].numpy(), float(torch.linalg.eigvals(J).abs().max())


def _close(a, b, rtol=RTOL):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.all(np.abs(a - b) <= rtol * np.maximum(np.abs(b), 1e-300))


def _states_by_loop(model, x):
    states = [x]
    for layer in model.layers:
        states.append(layer(states[-1]))
    return states


# ----------------------------------------------------------------- a user's own ModuleList
@pytest.mark.parametrize("dense_max", [64, 0])
def test_user_modulelist_against_dense_jacobians(dense_max):
    model = ResidualMLP(dim=12, depth=3).double().eval()
    x = torch.randn(4, 12, dtype=torch.float64)
    ins = inspect(model, x, k=3, dense_max=dense_max, steps=12)
    assert ins.names == ("layers.0", "layers.1", "layers.2")
    assert ins.methods[0] == (
        "dense" if dense_max else "dense (full Krylov space), arnoldi (exact), hutchinson (16 probes)"
    )
    with torch.no_grad():
        states = _states_by_loop(model, x)
        assert torch.equal(ins.output, model(x))  # the recorded forward is the model's forward
    # recording is exact: norms of the hand-run loop, bit for bit
    np.testing.assert_array_equal(ins.norms, np.stack([s.norm(dim=1).numpy() for s in states]))
    assert np.all(ins.accuracy["recording"] == 0)
    for i, layer in enumerate(model.layers):
        for b in range(4):
            J = torch.autograd.functional.jacobian(lambda t, m=layer: m(t), states[i][b])
            sv, rho = _dense_spectra(J, 3)
            assert _close(ins.top_singular_values[i, b], sv)
            assert _close(ins.spectral_radius[i, b], rho)
            assert _close(ins.jacobian_trace[i, b], float(torch.trace(J))) if dense_max else True
    assert np.all(np.diff(ins.top_singular_values, axis=-1) <= 0)
    # the check can fail: a layer perturbed after recording no longer agrees
    with torch.no_grad():
        model.layers[1].mlp[0].weight.mul_(1.5)
    J = torch.autograd.functional.jacobian(model.layers[1], states[1][0].detach())
    assert not _close(ins.top_singular_values[1, 0], _dense_spectra(J, 3)[0])


def test_profile_matches_its_definitions_and_grad_norms_come_from_the_loss():
    model = ResidualMLP(dim=6, depth=3).double().eval()
    x = torch.randn(5, 6, dtype=torch.float64)
    ins = inspect(model, x, loss_fn=lambda out: out.pow(2).sum())
    with torch.no_grad():
        s = [t.numpy() for t in _states_by_loop(model, x)]
    u = [s[i + 1] - s[i] for i in range(3)]
    np.testing.assert_allclose(
        ins.perturbation[1], np.linalg.norm(u[1], axis=1) / np.linalg.norm(s[1], axis=1)
    )
    cos = (u[0] * u[1]).sum(1) / np.linalg.norm(u[0], axis=1) / np.linalg.norm(u[1], axis=1)
    np.testing.assert_allclose(ins.update_cosine[0], cos)
    xs = x.clone().requires_grad_(True)
    states = _states_by_loop(model, xs)
    for st in states:
        st.retain_grad()
    model.head(states[-1]).pow(2).sum().backward()
    np.testing.assert_allclose(ins.grad_norms, [float(st.grad.norm()) for st in states], rtol=1e-12)


def test_krylov_with_few_steps_reports_its_accuracy():
    model = ResidualMLP(dim=40, depth=1).double().eval()
    x = torch.randn(2, 40, dtype=torch.float64)
    exact = inspect(model, x, k=1)
    rough = inspect(model, x, k=1, dense_max=0, steps=4)
    err = np.abs(rough.top_singular_values[0, :, 0] - exact.top_singular_values[0, :, 0])
    assert rough.accuracy["singular_values"][0] > 0 and err.max() > 1e-6  # 4 steps: not converged
    assert np.all(err <= rough.accuracy["singular_values"][0] + 1e-12)  # but within its bound
    assert exact.accuracy["singular_values"][0] == 0


# ----------------------------------------------------------------- causal decoders
def _diagonal_blocks(layer_fn, x, b, tokens):
    """Dense Jacobian of sample ``b`` (the other samples held, as the layer's call may be batched)."""
    T, d = x.shape[1:]

    def one(t):
        return layer_fn(torch.cat((x[:b], t.reshape(1, T, d), x[b + 1 :])))[b].reshape(-1)

    J = torch.autograd.functional.jacobian(one, x[b].reshape(-1))
    J = J.reshape(T, d, T, d)
    return J, [J[t, :, t, :] for t in tokens]


@pytest.mark.parametrize("cls", [GPT2Style, LlamaStyle])
def test_causal_decoders_per_token_blocks(cls):
    model = cls(dim=8, depth=2).double().eval()
    ids = torch.randint(0, 50, (2, 7))
    ins = inspect(model, ids, k=2, tokens=[0, 3, 6], dense_max=0, steps=8)
    every = inspect(model, ids, k=1, tokens=7)  # all token blocks, dense
    assert ins.causal
    layers = find_layers(model)
    assert [n for n, _ in layers] == list(ins.names)
    assert torch.equal(ins.output, model(ids))
    assert np.all(ins.accuracy["recording"] == 0)
    for layer in range(2):
        op = ins.operator(layer)
        # GPT-2-style layers take a shorter sequence (per-token products on prefixes); the
        # LLaMA-style ones are called with a length-T mask and position table (whole sequence)
        assert op.prefixed is (cls is GPT2Style)
        J, blocks = _diagonal_blocks(op.fn, op.x, 1, (0, 3, 6))
        # block lower triangular: no output token depends on a later input token
        assert all(float(J[s, :, t, :].abs().max()) == 0 for s in range(7) for t in range(s + 1, 7))
        for i, t in enumerate((0, 3, 6)):
            sv, rho = _dense_spectra(blocks[i], 2)
            row = np.flatnonzero((ins.blocks[:, 0] == 1) & (ins.blocks[:, 1] == t))[0]
            assert _close(ins.top_singular_values[layer, row], sv)
            assert _close(ins.spectral_radius[layer, row], rho)
        # the eigenvalues of the whole causal Jacobian are those of the diagonal blocks
        whole = float(torch.linalg.eigvals(J.reshape(56, 56)).abs().max())
        rows = every.blocks[:, 0] == 1
        assert _close(every.spectral_radius[layer, rows].max(), whole)


def test_llama_mask_and_float32_norm_are_the_models_own():
    model = LlamaStyle(dim=8, depth=2).double().eval()
    ids = torch.randint(0, 50, (1, 5))
    ins = inspect(model, ids, tokens=[4])
    x = ins.operator(0).x
    layer = model.model.layers[0]
    # replayed without its mask the layer computes something else: the mask matters
    pe_out = ins.operator(0).y
    T = 5
    hd = 4
    freq = 1.0 / (10000 ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
    ang = torch.arange(T, dtype=torch.float64)[:, None] * freq
    ang = torch.cat((ang, ang), dim=-1)
    mask = torch.full((T, T), float("-inf"), dtype=torch.float64).triu(1)
    with torch.no_grad():
        unmasked = layer(x, attention_mask=None, position_embeddings=(ang.cos(), ang.sin()))
        masked = layer(x, attention_mask=mask, position_embeddings=(ang.cos(), ang.sin()))
    assert float((unmasked - pe_out).abs().max()) > 1e-3
    assert torch.equal(masked, pe_out)
    assert ins.dtype == "float64"


def test_causal_claim_on_a_bidirectional_layer_is_refused():
    class Flip(nn.Linear):
        def forward(self, x):
            return super().forward(x.flip(1))  # token t reads token T-1-t

    class Bidirectional(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([Flip(5, 5)])

        def forward(self, x):
            return self.layers[0](x)

    x = torch.randn(2, 4, 5)
    with pytest.raises(ParameterError, match="not causal"):
        inspect(Bidirectional(), x, causal=True)
    assert not inspect(Bidirectional(), x).causal  # auto: whole-sequence Jacobians


# ----------------------------------------------------------------- depthdyn's own stacks
def test_momentum_stack_against_the_state_jacobians():
    stack = DepthStack(MomentumBlock(3, a_init=-1.0) for _ in range(3)).double()
    x = torch.randn(4, 3, dtype=torch.float64)
    ins = inspect(stack, x, dense_max=0, steps=6)
    rec = record(stack, x)
    for b in range(4):
        radius = np.abs(jacobian_spectra(rec, b)[:, 0])
        assert _close(ins.spectral_radius[:, b], radius)
    # profile reads positions x_l from the (x, v) state
    with torch.no_grad():
        tr = stack.trace(x)
    np.testing.assert_allclose(ins.norms, tr.positions.norm(dim=-1).numpy(), rtol=1e-15)
    placed = ins.placement()
    assert placed.families == ("momentum",) * 3
    assert placed.inside.shape == (3,)


def _trained_hc(mixing="dynamic", steps=60):
    stack = make_stack("hyper_connection", layers=4, dim=4, n=4, mixing=mixing).double()
    x = torch.randn(32, 4, dtype=torch.float64)
    y = torch.tanh(x.roll(1, dims=1) * 2)
    opt = torch.optim.Adam(stack.parameters(), lr=0.05)
    for _ in range(steps):
        opt.zero_grad()
        (stack(x) - y).pow(2).mean().backward()
        opt.step()
    return stack, x


def test_trained_hc_gain_per_token_is_the_product_of_per_token_matrices():
    stack, x = _trained_hc()
    prof = hc_profile(record(stack, x))
    with torch.no_grad():
        states = stack.trace(x).states
        H = [blk.mixing_matrices(s)[0].numpy() for blk, s in zip(stack.blocks, states, strict=False)]
    for b in (0, 7, 31):
        P = np.eye(4)
        for depth in range(4):
            P = H[depth][b] @ P
            np.testing.assert_allclose(prof.products[depth, b], P, rtol=1e-12, atol=1e-15)
        assert np.isclose(prof.forward_gain[-1, b], np.abs(P).sum(1).max())
        assert np.isclose(prof.backward_gain[-1, b], np.abs(P).sum(0).max())
        assert np.isclose(prof.homogenisation[-1, b], np.linalg.svd(P, compute_uv=False)[1])
    # dynamic mixing: tokens differ, and a wrong (static) reading gives other gains
    assert np.ptp(prof.forward_gain[-1]) > 0
    static = hc_profile(record(stack, x), mixing=lambda layer, state: layer.mixing_matrices()[0])
    assert not np.allclose(static.forward_gain[-1], prof.forward_gain[-1])
    assert "4 streams" in str(prof)


def test_sinkhorn_mixing_keeps_gains_at_one_and_homogenises():
    stack, x = _trained_hc("sinkhorn", steps=20)
    prof = hc_profile(record(stack, x))
    np.testing.assert_allclose(prof.forward_gain, 1, atol=1e-4)
    np.testing.assert_allclose(prof.backward_gain, 1, atol=1e-10)


def test_hc_stack_inspect_and_lam_at_the_branch_input():
    stack, x = _trained_hc(steps=20)
    ins = inspect(stack, x[:3], dense_max=0, steps=16)
    dense = inspect(stack, x[:3])
    assert _close(ins.spectral_radius, dense.spectral_radius)
    placed = dense.placement()
    blk, state = stack.blocks[0], dense._states[0]
    u = blk.branch_input(state)
    J = torch.autograd.functional.jacobian(lambda t: blk.branch(t[None])[0], u[0])
    lam = np.sort_complex(torch.linalg.eigvals(J).numpy())
    np.testing.assert_allclose(np.sort_complex(placed.lam[0][0]), lam, atol=1e-12)
    wrong = torch.autograd.functional.jacobian(lambda t: blk.branch(t[None])[0], state[0, 0])
    assert not np.allclose(np.sort_complex(torch.linalg.eigvals(wrong).numpy()), lam)


def test_conv_entangled_block_passes_diagnose_and_inspect():
    stack = DepthStack(ConvEntangledBlock(2, hidden=3) for _ in range(3)).double()
    x = torch.randn(2, 2, 4, 4, dtype=torch.float64)
    diag = diagnose(stack, x)
    ins = inspect(stack, x)
    assert ins.shapes[0] == (2, 4, 4)
    assert _close(ins.spectral_radius[:, 0], diag.jacobian_radius)


def test_stages_that_change_shape_are_reported_per_stage():
    class Down(nn.Module):
        def __init__(self, a, b):
            super().__init__()
            self.lin = nn.Linear(a, b)

        def forward(self, x):
            return self.lin(x)

    class Staged(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(
                [ResidualMLP(6, 1).layers[0], Down(6, 4), ResidualMLP(4, 1).layers[0]]
            )

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    ins = inspect(Staged().double(), torch.randn(3, 6, dtype=torch.float64), k=2)
    assert ins.stages.tolist() == [0, 1, 1]  # the down layer opens stage 1
    assert np.isnan(ins.spectral_radius[1]).all() and np.isfinite(ins.top_singular_values[1]).all()
    assert np.isnan(ins.perturbation[1]).all() and np.isfinite(ins.perturbation[2]).all()
    with pytest.raises(ShapeError):
        ins.placement()


def test_layers_by_pattern_and_errors():
    model = GPT2Style(dim=8, depth=3)
    assert [n for n, _ in find_layers(model, "transformer.h.*")] == [f"transformer.h.{i}" for i in range(3)]
    assert len(find_layers(model, model.transformer.h)) == 3
    with pytest.raises(ParameterError, match="matches"):
        find_layers(model, "model.layers.*")
    with pytest.raises(ParameterError, match="no residual layers"):
        find_layers(nn.Linear(3, 3))
    with pytest.raises(ParameterError, match="not submodules"):
        find_layers(model, [nn.Linear(2, 2)])
    with pytest.raises(ParameterError):
        inspect(model, torch.randint(0, 50, (1, 4)), k=0)


def test_float32_option_reports_and_stays_close():
    model = ResidualMLP(dim=10, depth=2).double().eval()
    x = torch.randn(3, 10, dtype=torch.float64)
    hi = inspect(model, x)
    lo = inspect(model, x, dtype=torch.float32)
    assert lo.dtype == "float32" and next(model.parameters()).dtype == torch.float64
    assert np.allclose(lo.top_singular_values, hi.top_singular_values, rtol=1e-5)


# ----------------------------------------------------------------- Hugging Face (if installed)
def _hf(kind):
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    if kind == "gpt2":
        cfg = transformers.GPT2Config(
            n_embd=16,
            n_layer=2,
            n_head=2,
            vocab_size=64,
            n_positions=32,
            attn_implementation="eager",
            use_cache=False,
        )
        return transformers.GPT2LMHeadModel(cfg), "transformer.h.*"
    cfg = transformers.LlamaConfig(
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        vocab_size=64,
        attn_implementation="eager",
        use_cache=False,
    )
    return transformers.LlamaForCausalLM(cfg), "model.layers.*"


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_hugging_face_decoders(kind):
    model, pattern = _hf(kind)
    model = model.double().eval()
    ids = torch.randint(0, 64, (2, 6))
    ins = inspect(model, {"input_ids": ids}, k=2, tokens=[0, 5], dense_max=0, steps=16)
    assert ins.causal and ins.names == tuple(n for n, _ in find_layers(model, pattern))
    assert np.all(ins.accuracy["recording"] == 0)
    with torch.no_grad():
        assert torch.equal(ins.output.logits, model(input_ids=ids).logits)
    op = ins.operator(1)
    _, blocks = _diagonal_blocks(op.fn, op.x, 0, (5,))
    sv, rho = _dense_spectra(blocks[0], 2)
    row = np.flatnonzero((ins.blocks[:, 0] == 0) & (ins.blocks[:, 1] == 5))[0]
    assert _close(ins.top_singular_values[1, row], sv)
    assert _close(ins.spectral_radius[1, row], rho)


def test_linearise_takes_hc_lam_at_the_branch_input_and_no_two_stream_conditions():
    stack, x = _trained_hc(steps=20)
    lin = linearise(stack, x[:2])
    with torch.no_grad():
        states = stack.trace(x[:2]).states
    blk = stack.blocks[2]
    u = blk.branch_input(states[2])[1]
    J = torch.autograd.functional.jacobian(lambda t: blk.branch(t[None])[0], u)
    np.testing.assert_allclose(lin.jacobians[2, 1], J.numpy(), atol=1e-12)
    stream0 = torch.autograd.functional.jacobian(lambda t: blk.branch(t[None])[0], states[2][1, 0])
    assert not np.allclose(lin.jacobians[2, 1], stream0.numpy(), atol=1e-6)
    placed = place(lin)
    assert placed.conditions == ()  # not the 2-stream family's
    two = make_stack("hyper_connection", layers=2, dim=3, n=2).double()
    assert place(linearise(two, torch.randn(2, 3, dtype=torch.float64))).conditions


class _Basic(nn.Module):
    """A torchvision-style BasicBlock: conv-bn-relu-conv-bn plus a (downsampling) shortcut."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1, self.bn2 = nn.BatchNorm2d(cout), nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.downsample = None if stride == 1 and cin == cout else nn.Conv2d(cin, cout, 1, stride, bias=False)

    def forward(self, x):
        out = self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x)))))
        return torch.relu(out + (x if self.downsample is None else self.downsample(x)))


class _MiniResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(1, 2, 3, padding=1)
        widths = [(2, 2, 1), (2, 3, 2), (3, 3, 1), (3, 3, 1)]
        for i, (a, b, s) in enumerate(widths, 1):
            setattr(self, f"layer{i}", nn.Sequential(_Basic(a, b, s), _Basic(b, b, 1)))

    def forward(self, x):
        x = self.stem(x)
        for i in range(1, 5):
            x = getattr(self, f"layer{i}")(x)
        return x.mean((2, 3))


def test_resnet_stages_are_found_and_reported_per_stage():
    model = _MiniResNet().double().eval()
    x = torch.randn(2, 1, 4, 4, dtype=torch.float64)
    ins = inspect(model, x, k=2)
    assert ins.names == tuple(f"layer{i}.{j}" for i in range(1, 5) for j in range(2))
    assert ins.stages.tolist() == [0, 0, 1, 1, 1, 1, 1, 1]  # layer2.0 halves the map, widens to 3
    assert ins.shapes[2] == (2, 4, 4) and ins.shapes[3] == (3, 2, 2)
    assert np.isnan(ins.spectral_radius[2]).all() and np.isfinite(ins.spectral_radius[3]).all()
    J = torch.autograd.functional.jacobian(lambda t: model.layer2[0](t[None])[0], ins._states[2][0])
    sv = torch.linalg.svdvals(J.reshape(12, 32))[:2].numpy()
    assert _close(ins.top_singular_values[2, 0], sv)
