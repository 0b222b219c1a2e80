"""Same-shaped token-local layers analysed together (depthdyn.nn.analysis.stacked): one vmapped
pass for every layer's products. Each layer's figures are checked against dense
``torch.func.jacrev`` blocks of the whole batch, and stacks that would be wrong are refused."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="depthdyn.nn needs the optional torch extra")

from depthdyn.errors import ParameterError  # noqa: E402
from depthdyn.nn import inspect, record  # noqa: E402
from depthdyn.nn.analysis import local as local_mod  # noqa: E402
from depthdyn.nn.analysis.stacked import StackedOperator  # noqa: E402

torch.set_num_threads(1)
from shipped_models import full_jacobian as _jacobian  # noqa: E402
from shipped_models import library  # noqa: E402

TOKENS = (2, 5, 8)


def _model(make):
    tf = library("transformers")
    torch.manual_seed(0)
    if make == "gpt2":
        cfg = tf.GPT2Config(n_embd=32, n_layer=3, n_head=2, vocab_size=64, n_positions=16)
        return tf.GPT2Model(cfg).double().eval()
    cfg = tf.LlamaConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=3, num_attention_heads=4,
                         num_key_value_heads=2, vocab_size=64)
    return tf.LlamaModel(cfg).double().eval()


def _inputs():
    return {"input_ids": torch.randint(0, 64, (2, 9), generator=torch.Generator().manual_seed(1)),
            "use_cache": False}


def _dense_blocks(model, inputs):
    """Per layer, the diagonal Jacobian blocks D_t of the sampled tokens (token-major), by jacrev."""
    out = []
    for call in record(model, inputs).calls:
        J = _jacobian(call.function(), call.state)
        out.append(torch.stack([J[b, t, :, b, t, :] for t in TOKENS for b in range(2)]))
    return out


@pytest.mark.parametrize("make", ["gpt2", "llama"])
def test_stacked_layers_agree_with_dense_jacobian_blocks(make):
    model, inputs = _model(make), _inputs()
    # steps = d = 32: the whole space, so the figures are exact and any wrong product shows
    ins = inspect(model, inputs, k=3, tokens=list(TOKENS), dense_max=0, steps=32, tol=0, stack=3)
    assert all("with 2 other layers in one pass" in m for m in ins.methods)
    assert any("3 same-shaped token-local steps analysed together" in n for n in ins.notes)
    # LlamaRMSNorm computes in float32 whatever the model's dtype: J w (a second reverse pass)
    # and the rows J^T e_i of the reference agree to float32 rounding there
    rtol = 1e-9 if make == "gpt2" else 1e-6
    for layer, D in enumerate(_dense_blocks(model, inputs)):
        np.testing.assert_allclose(ins.top_singular_values[layer], torch.linalg.svdvals(D)[:, :3], rtol=rtol)
        rho = torch.linalg.eigvals(D).abs().amax(-1).numpy()
        np.testing.assert_allclose(ins.spectral_radius[layer], rho, rtol=rtol)
        tr = torch.diagonal(D, dim1=1, dim2=2).sum(-1).numpy()
        err = ins.accuracy["jacobian_trace"][layer]
        assert np.all(np.abs(ins.jacobian_trace[layer] - tr) <= 6 * err + 1e-9)


@pytest.mark.parametrize("make", ["gpt2", "llama"])
def test_stacked_iterations_agree_with_layers_one_by_one(make):
    # short of the whole space: each layer's values within the bounds of both runs
    model, inputs = _model(make), _inputs()
    opts = dict(k=3, tokens=list(TOKENS), dense_max=0, steps=4, tol=1e-6)  # 4 blocks of 4: half the space
    together, alone = inspect(model, inputs, stack=3, **opts), inspect(model, inputs, **opts)
    assert not any("other layers" in m for m in alone.methods)  # one by one: the default on a CPU
    acc = np.maximum(together.accuracy["singular_values"], alone.accuracy["singular_values"])
    gap = np.abs(together.top_singular_values - alone.top_singular_values)
    assert np.all(gap <= 2 * acc[:, None, None] + 1e-12) and acc.max() > 1e-6
    opts.update(steps=28, tol=1e-3)  # Arnoldi to its tolerance, short of the whole space
    together, alone = inspect(model, inputs, stack=3, **opts), inspect(model, inputs, **opts)
    rho = np.stack([torch.linalg.eigvals(D).abs().amax(-1).numpy() for D in _dense_blocks(model, inputs)])
    for ins in (together, alone):
        assert np.all(ins.accuracy["spectral_radius"] <= 1e-3 * ins.spectral_radius.max(axis=1))
        # a backward error of 1e-3 moves these mildly non-normal blocks' eigenvalues by less than 2e-3
        np.testing.assert_allclose(ins.spectral_radius, rho, rtol=2e-3)


def test_a_stack_that_mixes_up_layers_is_refused(monkeypatch):
    # the keys of the layers handed over in the wrong order: the stacked outputs no longer
    # reproduce each layer's recording, so every layer is analysed alone (and rightly)
    model, inputs = _model("gpt2"), _inputs()
    plain = local_mod.Stack.__init__

    def shuffled(self, specs):
        plain(self, specs)
        self.keys = self.keys.flip(0)

    monkeypatch.setattr(local_mod.Stack, "__init__", shuffled)
    ins = inspect(model, inputs, k=3, tokens=list(TOKENS), dense_max=0, steps=8, tol=1e-8, stack=3)
    assert not any("other layers" in m for m in ins.methods)
    assert not any("analysed together" in n for n in ins.notes)
    D = _dense_blocks(model, inputs)[2]
    sv = torch.linalg.svdvals(D)[:, :3].numpy()
    bound = ins.accuracy["singular_values"][2]
    assert np.all(np.abs(ins.top_singular_values[2] - sv) <= bound * (1 + 1e-9) + 1e-12)
    # and the check itself: the shuffled stack of the three operators is refused outright
    assert StackedOperator.of(list(ins.operators)) is None
    monkeypatch.setattr(local_mod.Stack, "__init__", plain)
    assert StackedOperator.of(list(ins.operators)) is not None


def test_layers_that_differ_do_not_stack():
    model, inputs = _model("gpt2"), _inputs()
    ins = inspect(model, inputs, k=2, tokens=list(TOKENS), dense_max=0, steps=4, tol=0)
    fns = [op.token_function(1) for op in ins.operators]
    assert local_mod.Stack.of(fns) is not None
    assert local_mod.Stack.of(fns[:1]) is None  # one layer: nothing to stack
    other = _model("llama")
    mixed = inspect(other, inputs, k=2, tokens=list(TOKENS), dense_max=0, steps=4, tol=0)
    assert local_mod.Stack.of([fns[0], mixed.operators[0].token_function(1)]) is None  # another class
    # an argument that is not a tensor and differs between layers
    spec = fns[1].spec
    flipped = {**spec.kwargs, "use_cache": not spec.kwargs.get("use_cache")}
    odd = local_mod.TokenLocalSpec(spec.module, flipped, spec.cache, spec.state, spec.keys, spec.values)
    fake = lambda e: e  # noqa: E731
    fake.spec = odd
    assert local_mod.Stack.of([fns[0], fake]) is None
    # a plain function (a token-wise step) has no spec
    assert local_mod.Stack.of([fns[0], lambda e: e]) is None


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_stack_must_be_a_positive_integer(bad):
    with pytest.raises(ParameterError, match="stack"):
        inspect(_model("gpt2"), _inputs(), stack=bad)


def test_a_stack_that_cannot_run_falls_back_to_one_by_one(monkeypatch):
    # vmap refusing an op of the layer (or weights on several devices) must not end the analysis
    def refuses(self, fns):
        raise RuntimeError("vmap: no batching rule")

    monkeypatch.setattr(local_mod.Stack, "function", refuses)
    model, inputs = _model("gpt2"), _inputs()
    ins = inspect(model, inputs, k=3, tokens=list(TOKENS), dense_max=0, steps=32, tol=0, stack=3)
    assert not any("other layers" in m for m in ins.methods)
    D = _dense_blocks(model, inputs)[1]
    np.testing.assert_allclose(ins.top_singular_values[1], torch.linalg.svdvals(D)[:, :3], rtol=1e-9)
