"""inspect() on models as their libraries ship them (random weights from configuration objects,
tiny: 2 layers, width 64, float64), cross-checked against dense ``torch.func.jacrev`` Jacobians of
the whole batch, the cross-batch blocks included. Each library is skipped with a reason when it
is not installed (the test extra installs transformers and hyper-connections)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="depthdyn.nn needs the optional torch extra")

from torch import nn  # noqa: E402

torch.set_num_threads(1)  # a second thread on a shared 2-core machine makes each op ~100x slower

from shipped_models import full_jacobian as _full_jacobian  # noqa: E402
from shipped_models import library as _library  # noqa: E402
from shipped_models import rel as _rel  # noqa: E402

from depthdyn.nn.analysis import find_layers, inspect, record  # noqa: E402
from depthdyn.nn.analysis.checks import BatchCouplingError  # noqa: E402

TOL = 1e-8


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def _gpt2():
    tf = _library("transformers")
    cfg = tf.GPT2Config(
        n_embd=64, n_layer=2, n_head=2, vocab_size=64, n_positions=16, bos_token_id=0, eos_token_id=0
    )
    return tf.GPT2LMHeadModel(cfg).double().eval()


def _llama():
    tf = _library("transformers")
    cfg = tf.LlamaConfig(
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        vocab_size=64,
        bos_token_id=0,
        eos_token_id=0,
    )
    return tf.LlamaForCausalLM(cfg).double().eval()


# ------------------------------------------------------------ causal decoders, default attention
@pytest.mark.parametrize("make", [_gpt2, _llama], ids=["gpt2", "llama"])
def test_decoders_with_default_attention_against_whole_batch_jacobians(make):
    model = make()
    assert model.config._attn_implementation == "sdpa"  # as shipped: no eager switch anywhere
    ids = torch.randint(0, 64, (2, 5))
    ins = inspect(model, {"input_ids": ids, "use_cache": False}, k=3, tokens=[1, 4], dense_max=0, steps=64)
    assert ins.causal and ins.streams == 1
    assert any("math backend" in n for n in ins.notes)
    assert np.all(ins.accuracy["recording"] == 0)
    rec = record(model, {"input_ids": ids, "use_cache": False})
    # LLaMA's RMSNorm computes in float32 inside a float64 model: its Jacobian carries float32
    # rounding (~1e-8 relative, amplified by the non-normal eigenproblem); GPT-2 is float64 throughout
    tol = TOL if make is _gpt2 else 1e-6
    for layer in range(2):
        call = rec.calls[layer]
        J = _full_jacobian(call.function(), call.state)  # (2, 5, 64, 2, 5, 64)
        assert float(J[0, :, :, 1].abs().max()) == 0 and float(J[1, :, :, 0].abs().max()) == 0
        assert float(J[0, 1, :, 0, 2:].abs().max()) == 0  # causal: token 1 ignores tokens 2..4
        for row, (b, t) in enumerate(ins.blocks):
            D = J[b, t, :, b, t, :]
            sv = torch.linalg.svdvals(D)[:3].numpy()
            rho = float(torch.linalg.eigvals(D).abs().max())
            assert _rel(ins.top_singular_values[layer, row], sv) < TOL
            # LLaMA's RMSNorm computes in float32 inside a float64 model: its Jacobian carries float32
            # rounding, which the non-normal eigenproblem amplifies past 1e-8 (GPT-2: pure float64)
            assert _rel(ins.spectral_radius[layer, row], rho) < (TOL if make is _gpt2 else 1e-6)
        op = ins.operator(layer)
        W = torch.randn(1, op.problems, 64, dtype=torch.float64)
        Jw = op.matvec(W)[0]
        ref = torch.stack([J[b, t, :, b, t, :] @ W[0, i] for i, (b, t) in enumerate(ins.blocks)])
        assert float((Jw - ref).abs().max()) < tol * float(ref.abs().max())


def test_bert_bidirectional_whole_sequence_against_jacrev():
    tf = _library("transformers")
    cfg = tf.BertConfig(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=128,
        vocab_size=64,
        max_position_embeddings=16,
    )
    model = tf.BertModel(cfg).double().eval()
    ids = torch.randint(0, 64, (2, 4))
    ins = inspect(model, {"input_ids": ids}, k=3, dense_max=0, steps=256)
    assert not ins.causal and ins.top_singular_values.shape == (2, 2, 3)
    rec = record(model, {"input_ids": ids})
    call = rec.calls[1]
    J = _full_jacobian(call.function(), call.state).reshape(2, 256, 2, 256)
    assert float(J[0, :, 1].abs().max()) == 0
    for b in range(2):
        assert _rel(ins.top_singular_values[1, b], torch.linalg.svdvals(J[b, :, b])[:3].numpy()) < TOL
        assert _rel(ins.spectral_radius[1, b], float(torch.linalg.eigvals(J[b, :, b]).abs().max())) < TOL


def test_vit_split_into_attention_and_mlp_steps():
    tf = _library("transformers")
    cfg = tf.ViTConfig(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=128,
        image_size=16,
        patch_size=8,
        num_channels=3,
    )
    model = tf.ViTModel(cfg).double().eval()
    px = torch.randn(1, 3, 16, 16, dtype=torch.float64)
    ins = inspect(model, px, k=2, dense_max=320, split=True)
    assert ins.kinds == ("attention", "mlp") * 2 and ins.period == ("attention", "mlp")
    first = find_layers(model)[0][0]
    assert ins.names[:2] == (f"{first}.attention", f"{first}.mlp")
    assert ins.layers.tolist() == [0, 0, 1, 1]
    assert np.all(ins.accuracy["recording"] == 0)
    rec = record(model, px)
    call = rec.calls[1]
    J = _full_jacobian(call.function(), call.state).reshape(320, 320)
    A = ins.step_matrices(0)  # (4, 320, 320): the steps as a depth-varying recurrence
    np.testing.assert_allclose(A[3] @ A[2], J.numpy(), atol=1e-10)  # mlp step after attention step
    blk = ins._modules[3]
    h = torch.from_numpy(np.asarray(ins._states[3][0])).reshape(1, 5, 64)
    Jm = _full_jacobian(lambda t: t + blk.mlp(blk.layernorm_after(t)), h)
    np.testing.assert_allclose(A[3], Jm.reshape(320, 320).numpy(), atol=1e-12)
    lay = ins.layer_operator(1)
    assert np.allclose(lay.dense()[0].numpy(), J.numpy(), atol=1e-10)
    grow = ins.growth(steps=320)
    total = np.linalg.multi_dot(A[::-1])
    assert _rel(grow["end_to_end"], np.linalg.norm(total, 2)) < 1e-8
    assert grow["end_to_end"][0] <= grow["product_of_steps"][0] * (1 + 1e-12)


def test_hf_resnet_stages_with_batchnorm_in_eval():
    tf = _library("transformers")
    cfg = tf.ResNetConfig(
        num_channels=3, embedding_size=4, hidden_sizes=[4, 8], depths=[1, 1], layer_type="basic"
    )
    model = tf.ResNetModel(cfg).double()
    px = torch.randn(2, 3, 16, 16, dtype=torch.float64)
    from depthdyn.nn.analysis.checks import ModelSetupError

    with pytest.raises(ModelSetupError, match=r"model\.eval\(\)"):
        inspect(model, px, "encoder.stages.*.layers.*")
    model.eval()
    ins = inspect(model, px, "encoder.stages.*.layers.*", k=2, dense_max=64)
    assert ins.stages.tolist() == [0, 1] and np.isnan(ins.spectral_radius[1]).all()
    rec = record(model, px, "encoder.stages.*.layers.*")
    call = rec.calls[0]
    J = _full_jacobian(call.function(), call.state).reshape(2, 64, 2, 64)
    assert float(J[0, :, 1].abs().max()) == 0
    assert _rel(ins.top_singular_values[0, 1], torch.linalg.svdvals(J[1, :, 1])[:2].numpy()) < TOL


# ------------------------------------------------------------ hyper-connections, streams in the batch
def _hc_model(streams=4, dim=64, depth=2):
    hc = _library("hyper_connections")
    init, expand, reduce = hc.get_init_and_expand_reduce_stream_functions(streams, disable=False)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.expand, self.reduce = expand, reduce
            self.layers = nn.ModuleList(
                init(dim=dim, branch=nn.Sequential(nn.Linear(dim, dim), nn.Tanh()), layer_index=i)
                for i in range(depth)
            )

        def forward(self, x):
            x = self.expand(x)
            for layer in self.layers:
                x = layer(x)
            return self.reduce(x)

    net = Net().double().eval()
    with torch.no_grad():  # away from the identity initialisation: real mixing between streams
        for p in net.parameters():
            p.add_(0.3 * torch.randn_like(p))
    return net


def test_hyper_connections_streams_in_the_batch_are_detected_and_analysed_as_one_state():
    net = _hc_model()
    x = torch.randn(2, 64, dtype=torch.float64)
    ins = inspect(net, x, k=3, dense_max=256)
    assert ins.streams == 4 and ins.top_singular_values.shape == (2, 2, 3)
    assert any("rows [0, 1, 2, 3]" in n for n in ins.notes)
    rec = record(net, x)
    for layer in range(2):
        call = rec.calls[layer]
        J = _full_jacobian(call.function(), call.state).reshape(2, 4 * 64, 2, 4 * 64)  # (b s) rows
        assert float(J[0, :, 1].abs().max()) == 0 and float(J[0, :64, 0, 64:].abs().max()) > 1e-3
        for b in range(2):
            assert _rel(ins.top_singular_values[layer, b], torch.linalg.svdvals(J[b, :, b])[:3].numpy()) < TOL
            assert (
                _rel(ins.spectral_radius[layer, b], float(torch.linalg.eigvals(J[b, :, b]).abs().max())) < TOL
            )
        # the per-row reading (what a batch-independent analysis reports) is far off
        per_row = torch.linalg.svdvals(J[0, :64, 0, :64])[0]
        assert abs(float(per_row) - ins.top_singular_values[layer, 0, 0]) > 1e-2
    same = inspect(net, x, k=3, dense_max=256, streams=4)
    assert np.array_equal(same.top_singular_values, ins.top_singular_values)
    with pytest.raises(BatchCouplingError, match="streams=1"):
        inspect(net, x, streams=1)
    with pytest.raises(BatchCouplingError, match="streams=2"):
        inspect(net, x, streams=2)


def test_uncoupled_rows_stay_separate_and_a_mixing_layer_is_refused():
    class Mix(nn.Module):  # row 0 feeds row 1 only: no grouping into equal states exists
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(8, 8)

        def forward(self, x):
            y = x + torch.tanh(self.lin(x))
            return torch.cat([y[:1], y[1:2] + 0.5 * x[:1], y[2:]])

    class Net(nn.Module):
        def __init__(self, mix):
            super().__init__()
            self.layers = nn.ModuleList([Mix() if mix else nn.Linear(8, 8), nn.Linear(8, 8)])

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    x = torch.randn(3, 8, dtype=torch.float64)
    assert inspect(Net(False).double(), x).streams == 1
    with pytest.raises(BatchCouplingError, match="streams="):
        inspect(Net(True).double(), x)


# ------------------------------------------------------------ momentumnet
def test_momentumnet_branches_placed_on_the_momentum_family():
    mn = _library("momentumnet")
    fs = [nn.Sequential(nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 16)) for _ in range(2)]
    model = mn.MomentumNet(fs, gamma=0.8).double().eval()
    x = torch.randn(3, 16, dtype=torch.float64)
    ins = inspect(model, x, k=2)
    assert ins.kinds == ("branch", "branch") and ins.momentum == 0.8
    placed = ins.placement()
    assert placed.families == ("momentum", "momentum")
    for layer, f in enumerate(fs):
        xl = torch.from_numpy(np.asarray(ins._states[layer]))
        Df = _full_jacobian(f, xl).reshape(3, 16, 3, 16)
        lam = np.concatenate([np.linalg.eigvals(Df[b, :, b].numpy()) for b in range(3)])
        # textbook: v' = g v + (1 - g) lam x, x' = x + v'  ->  r^2 - (1 + g + (1 - g) lam) r + g = 0
        roots = [np.roots([1, -(1 + 0.8 + 0.2 * v), 0.8]) for v in lam]
        inside = np.mean([np.all(np.abs(r) < 1) for r in roots])
        assert placed.inside[layer] == pytest.approx(inside)
        assert np.allclose(np.sort_complex(placed.lam[layer].reshape(-1)), np.sort_complex(lam), atol=1e-10)


def test_hyper_connections_on_token_sequences_group_streams_per_token():
    net = _hc_model(dim=16)
    x = torch.randn(2, 5, 16, dtype=torch.float64)
    ins = inspect(net, x, k=2, tokens=[1, 4], dense_max=0, steps=64)
    assert ins.streams == 4 and ins.causal and ins.shapes[0] == (5, 64)  # (T, streams * d)
    call = record(net, x).calls[1]
    J = _full_jacobian(call.function(), call.state).reshape(2, 4, 5, 16, 2, 4, 5, 16)
    for row, (b, t) in enumerate(ins.blocks):
        D = J[b, :, t, :, b, :, t, :].reshape(64, 64)  # streams x features of token t
        assert _rel(ins.top_singular_values[1, row], torch.linalg.svdvals(D)[:2].numpy()) < TOL
        assert _rel(ins.spectral_radius[1, row], float(torch.linalg.eigvals(D).abs().max())) < TOL
