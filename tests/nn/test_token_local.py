"""Token-local products (depthdyn.nn.analysis.local): the sampled tokens of a causal layer as
one-token rows, through a cache of the recorded keys and values (Hugging Face decoders) or as a
token-wise step. Every block is cross-checked against dense ``torch.func.jacrev`` Jacobians of
the whole batch; candidates that do not reproduce the layer are shown to be refused."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="depthdyn.nn needs the optional torch extra")


from depthdyn.nn import inspect, record  # noqa: E402
from depthdyn.nn.analysis.operators import LayerOperator  # noqa: E402
from depthdyn.nn.analysis.steps import layer_steps  # noqa: E402

torch.set_num_threads(1)
from shipped_models import full_jacobian as _jacobian  # noqa: E402
from shipped_models import library  # noqa: E402

TOL = 1e-8


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def _gpt2(tf):
    cfg = tf.GPT2Config(n_embd=32, n_layer=2, n_head=2, vocab_size=64, n_positions=16)
    return tf.GPT2Model(cfg).double().eval()


def _llama(tf, kv_heads=2):
    cfg = tf.LlamaConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=kv_heads,
        vocab_size=64,
    )
    return tf.LlamaModel(cfg).double().eval()


def _blocks(J, tokens, B):
    """Diagonal blocks ``D_t`` of a whole-batch Jacobian ``(B, T, d, B, T, d)``, token-major."""
    return torch.stack([J[b, t, :, b, t, :] for t in tokens for b in range(B)])


@pytest.mark.parametrize("make", ["gpt2", "llama", "llama-gqa"])
def test_cached_attention_blocks_equal_the_jacobian_blocks(make):
    tf = library("transformers")
    model = _gpt2(tf) if make == "gpt2" else _llama(tf, kv_heads=1 if make == "llama-gqa" else 4)
    ids = torch.randint(0, 64, (2, 7))
    tokens = (0, 3, 6)
    inputs = {"input_ids": ids, "use_cache": False}
    ins = inspect(model, inputs, k=3, tokens=list(tokens), dense_max=64)
    rec = record(model, inputs)
    for layer in range(2):
        op = ins.operator(layer)
        assert op.token_local and not op.prefixed
        call = rec.calls[layer]
        D = _blocks(_jacobian(call.function(), call.state), tokens, 2)
        dense = op.dense()
        tol = TOL if make == "gpt2" else 1e-6  # LLaMA's RMSNorm computes in float32
        assert float((dense - D).abs().max()) < tol * float(D.abs().max())
        np.testing.assert_allclose(
            ins.top_singular_values[layer], torch.linalg.svdvals(D)[:, :3].numpy(), rtol=tol
        )
        # several vectors at once (copies of the rows) give each vector's own product
        W = torch.randn(5, op.problems, 32, dtype=torch.float64)
        ref = torch.einsum("pij,kpj->kpi", D, W)
        assert float((op.matvec(W) - ref).abs().max()) < tol * float(ref.abs().max())
        assert float((op.rmatvec(W) - torch.einsum("pji,kpj->kpi", D, W)).abs().max()) < tol * 10


def test_padding_mask_is_respected():
    tf = library("transformers")
    model = _gpt2(tf)
    ids = torch.randint(0, 64, (2, 6))
    mask = torch.ones(2, 6, dtype=torch.long)
    mask[1, :2] = 0  # left padding of the second sample
    inputs = {"input_ids": ids, "attention_mask": mask, "use_cache": False}
    ins = inspect(model, inputs, k=2, tokens=[2, 5], dense_max=64)
    call = record(model, inputs).calls[1]
    D = _blocks(_jacobian(call.function(), call.state), (2, 5), 2)
    op = ins.operator(1)
    assert float((op.dense() - D).abs().max()) < TOL * float(D.abs().max())


def test_split_steps_are_token_local():
    tf = library("transformers")
    model = _gpt2(tf)
    ids = torch.randint(0, 64, (1, 6))
    ins = inspect(model, {"input_ids": ids, "use_cache": False}, k=2, tokens=[1, 5], dense_max=64, split=True)
    assert ins.kinds == ("attention", "mlp") * 2
    assert all(op.token_local for op in ins._operators)
    layer = ins.layer_operator(0).dense()
    call = record(model, {"input_ids": ids, "use_cache": False}).calls[0]
    D = _blocks(_jacobian(call.function(), call.state), (1, 5), 1)
    assert float((layer - D).abs().max()) < TOL * float(D.abs().max())


def _operator_with(candidate_maker):
    tf = library("transformers")
    model = _gpt2(tf)
    ids = torch.randint(0, 64, (1, 6))
    st = layer_steps(record(model, {"input_ids": ids, "use_cache": False}).calls)[1]
    op = LayerOperator(st.function, st.state, tokens=(2, 5), local=candidate_maker(st))
    J = _jacobian(st.function, st.state)
    return op, _blocks(J, (2, 5), 1)


def test_a_candidate_without_the_other_tokens_is_refused():
    # the layer on one-token sequences alone: its outputs differ from the recording
    op, D = _operator_with(lambda st: lambda tokens: [st.function])
    assert not op.token_local and op.prefixed
    assert float((op.dense() - D).abs().max()) < TOL * float(D.abs().max())


def test_a_candidate_with_the_right_values_but_wrong_derivative_is_refused():
    def maker(st):
        good = st.local

        def wrong(tokens):
            f = good(tokens)[0]
            return [lambda rows: f(rows) + 1e-3 * (rows - rows.detach())]  # same values, J + 1e-3 I

        return wrong

    op, D = _operator_with(maker)
    assert not op.token_local
    assert float((op.dense() - D).abs().max()) < TOL * float(D.abs().max())
    # the genuine candidate is taken
    op_ok, _ = _operator_with(lambda st: st.local)
    assert op_ok.token_local


@pytest.mark.parametrize("entry", [0, 1], ids=["first", "last"])
def test_a_wrong_derivative_at_the_first_or_last_sampled_token_is_refused(entry):
    # the whole-sequence check runs at the first and the last sampled token (one backward pass
    # over the sequence each): a candidate wrong at either one alone is refused
    def maker(st):
        good = st.local

        def wrong(tokens):
            f = good(tokens)[0]

            def g(rows):
                bump = torch.zeros_like(rows)
                bump[:, entry :: len(tokens)] = 1e-3 * (rows - rows.detach())[:, entry :: len(tokens)]
                return f(rows) + bump

            return [g]

        return wrong

    op, D = _operator_with(maker)
    assert not op.token_local
    assert float((op.dense() - D).abs().max()) < TOL * float(D.abs().max())


def test_block_lanczos_on_token_local_blocks_against_dense():
    from depthdyn.nn.analysis.blockkrylov import block_singular_values

    tf = library("transformers")
    model = _gpt2(tf)
    ids = torch.randint(0, 64, (2, 9))
    inputs = {"input_ids": ids, "use_cache": False}
    ins = inspect(model, inputs, k=3, tokens=[2, 8], dense_max=0, steps=6, tol=1e-6)
    call = record(model, inputs).calls[0]
    D = _blocks(_jacobian(call.function(), call.state), (2, 8), 2)
    want = torch.linalg.svdvals(D)[:, :3].numpy()
    op = ins.operator(0)
    assert op.block == 4 and ins.methods[0].startswith("block Lanczos")
    # each value within the layer's largest bound of the true one
    sv, bound = ins.top_singular_values[0], ins.accuracy["singular_values"][0]
    assert np.all(np.abs(sv - want) <= bound * (1 + 1e-9) + 1e-12)
    # the whole space (8 steps of 4 = 32 = d): exact, bounds 0
    values, bounds, steps = block_singular_values(op, 3, 4, 8, 0.0, 0)
    np.testing.assert_allclose(values, want, rtol=1e-10)
    assert steps == 8 and np.all(bounds == 0)
    # short of it, the bound holds per value and shrinks as the space grows
    v2, b2, _ = block_singular_values(op, 3, 4, 2, 0.0, 0)
    v4, b4, _ = block_singular_values(op, 3, 4, 4, 0.0, 0)
    assert np.all(np.abs(v2 - want) <= b2 + 1e-12) and np.all(np.abs(v4 - want) <= b4 + 1e-12)
    assert b4.max() < b2.max() and np.all(v2 <= want + 1e-10)  # Ritz values from below


def test_arnoldi_rides_along_with_block_lanczos():
    # run together, block Lanczos and Arnoldi give what each gives alone (the same iterations),
    # and Arnoldi's J^T products share the passes of the Lanczos blocks
    from depthdyn.nn.analysis.krylov import (
        singular_values_and_radius,
        spectral_radius_estimate,
        top_singular_values,
    )

    tf = library("transformers")
    model = _gpt2(tf)
    ids = torch.randint(0, 64, (2, 9))
    inputs = {"input_ids": ids, "use_cache": False}
    ins = inspect(model, inputs, k=3, tokens=[2, 8], dense_max=0, steps=5, tol=0)
    op = ins.operator(1)
    assert op.block == 4
    calls = {"matvec": 0, "rmatvec": 0}

    def counted(name):
        plain = getattr(op, name)

        def wrapped(V):
            calls[name] += 1
            return plain(V)

        return wrapped

    op.matvec, op.rmatvec = counted("matvec"), counted("rmatvec")
    top, rho = singular_values_and_radius(op, 3, steps=5, tol=0)
    joint = dict(calls)
    alone_top = top_singular_values(op, 3, steps=5, tol=0)
    alone_rho = spectral_radius_estimate(op, steps=5, tol=0)
    np.testing.assert_allclose(top.values, alone_top.values, rtol=1e-12)
    np.testing.assert_allclose(top.accuracy, alone_top.accuracy, rtol=1e-6, atol=1e-14)
    np.testing.assert_allclose(rho.values, alone_rho.values, rtol=1e-12)
    np.testing.assert_allclose(rho.accuracy, alone_rho.accuracy, rtol=1e-6, atol=1e-14)
    assert top.method == alone_top.method and rho.method == alone_rho.method == "arnoldi (5 steps)"
    # 5 Lanczos steps (a J pass and a J^T pass each) carry the 5 Arnoldi steps: no pass of their own
    assert joint == {"matvec": 5, "rmatvec": 5}
    assert calls["rmatvec"] - joint["rmatvec"] == 10  # alone: 5 Lanczos + 5 Arnoldi passes
    # and the values are those of the Jacobian blocks: Ritz values from below, within their bounds
    call = record(model, inputs).calls[1]
    D = _blocks(_jacobian(call.function(), call.state), (2, 8), 2)
    want = torch.linalg.svdvals(D)[:, :3].numpy()
    assert np.all(np.abs(top.values - want) <= top.accuracy * (1 + 1e-9) + 1e-12)
    assert np.all(top.values <= want + 1e-10)
