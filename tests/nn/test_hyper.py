"""Hyper-connections: residual equivalence and gradients at init, Sinkhorn, linearisation, recurrence."""

import copy
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="depthdyn.nn needs the optional torch extra")

import sympy as sp  # noqa: E402

from depthdyn.errors import DegreeTooLargeError, ParameterError, ShapeError  # noqa: E402
from depthdyn.nn.blocks import DepthStack, ResidualBlock, mlp  # noqa: E402
from depthdyn.nn.blocks.hyper import HyperConnectionBlock, sinkhorn  # noqa: E402

torch.set_num_threads(1)

VARIANTS = [("static", False), ("dynamic", True), ("sinkhorn", False), ("sinkhorn", True)]
MIXING_PARAMS = ("H_res", "res_logits", "H_pre", "H_post", "W_res", "w_pre", "w_post")


def _stacks(mixing, dynamic, n, dtype, d=8, L=6, seed=0):
    torch.manual_seed(seed)
    fs = [mlp(d) for _ in range(L)]
    plain = DepthStack(ResidualBlock(d, copy.deepcopy(f)) for f in fs)
    hyper = DepthStack(
        HyperConnectionBlock(d, copy.deepcopy(f), n=n, mixing=mixing, dynamic=dynamic) for f in fs
    )
    for p, q in zip(plain.blocks, hyper.blocks, strict=True):
        with torch.no_grad():  # non-trivial pre-norm weights, shared
            p.norm.weight.uniform_(0.5, 1.5)
            p.norm.bias.uniform_(-0.5, 0.5)
        q.norm.load_state_dict(p.norm.state_dict())
    plain, hyper = plain.to(dtype), hyper.to(dtype)
    for b in hyper.blocks:  # J/3 rounded in float32 at construction: re-set in this dtype
        b.reset_mixing()
    return plain, hyper


@pytest.mark.parametrize("mixing, dynamic", VARIANTS)
@pytest.mark.parametrize("n", [3, 4])
@pytest.mark.parametrize("dtype, tol", [(torch.float64, 1e-12), (torch.float32, 1e-6)])
def test_at_init_the_stack_is_the_plain_residual_net(mixing, dynamic, n, dtype, tol):
    plain, hyper = _stacks(mixing, dynamic, n, dtype)
    x = torch.randn(16, 8, dtype=dtype)
    ref, out = plain(x), hyper(x)
    assert (ref - x).abs().max() > 0.1  # the branches do something
    assert (out - ref).abs().max() <= tol * ref.abs().max()
    trace = hyper.trace(x)
    for layer, state in enumerate(trace.states):  # stream 0 and the stream mean both follow x_l
        assert (state.mean(dim=1) - state[:, 0]).abs().max() <= tol * ref.abs().max()
        if layer > 0:
            assert (state - state[:, :1]).abs().max() > 1e-2  # ... while the streams differ


def _mixing_grads(hyper, x):
    out = hyper(x)
    (out * torch.randn_like(out)).sum().backward()
    return {
        (i, name): p.grad
        for i, b in enumerate(hyper.blocks)
        for name, p in b.named_parameters(recurse=False)
        if name in MIXING_PARAMS
    }


@pytest.mark.parametrize("mixing, dynamic", VARIANTS)
@pytest.mark.parametrize("n", [3, 4])
def test_at_init_every_mixing_parameter_gets_a_gradient(mixing, dynamic, n):
    _, hyper = _stacks(mixing, dynamic, n, torch.float64)
    grads = _mixing_grads(hyper, torch.randn(16, 8, dtype=torch.float64))
    expected = {"H_pre", "H_post", "res_logits" if mixing == "sinkhorn" else "H_res"}
    expected |= {"W_res", "w_pre", "w_post"} if dynamic else set()
    assert {name for _, name in grads} == expected
    scale = max(g.norm() for g in grads.values())
    for key, g in grads.items():  # the traps below leave ~1e-17; these are >= 1e-4 * scale
        assert g.norm() > 1e-6 * scale, key
    if dynamic:  # the gains multiply tanh(rms(h) W) = 0: exactly zero gradient at init ...
        for b in hyper.blocks:
            assert b.alpha.grad == 0 and b.beta.grad == 0
        with torch.no_grad():  # ... and a non-zero one once the dynamic weights have moved
            for b in hyper.blocks:
                for w in (b.W_res, b.w_pre, b.w_post):
                    w.sub_(0.1 * w.grad)
        hyper.zero_grad()
        _mixing_grads(hyper, torch.randn(16, 8, dtype=torch.float64))
        assert all(b.alpha.grad != 0 and b.beta.grad != 0 for b in hyper.blocks)


def test_equal_streams_starve_the_sinkhorn_logits():
    # the trap: streams all equal (expansion 1 x, H_post = 1) is also the plain residual net
    # at init, but a doubly stochastic perturbation of J/n cannot change equal streams
    plain, hyper = _stacks("sinkhorn", False, 4, torch.float64)
    for b in hyper.blocks:
        b.expansion.fill_(1.0)
        with torch.no_grad():
            b.H_post.fill_(1.0)
    x = torch.randn(16, 8, dtype=torch.float64)
    assert (hyper(x) - plain(x)).abs().max() < 1e-12
    grads = _mixing_grads(hyper, x)
    post = max(grads[i, "H_post"].norm() for i in range(6))
    assert post > 0.1
    assert max(grads[i, "res_logits"].norm() for i in range(6)) < 1e-12 * post
    # (H_pre starves too: every stream is x_l, and the pre-norm is blind to d(input) ~ x_l)
    assert max(grads[i, "H_pre"].norm() for i in range(6)) < 1e-3 * post


def test_shifted_expansion_feeds_layer_zero_h_pre_through_the_prenorm():
    # with streams c_i x (all collinear) layer 0's H_pre sees the loss only through the
    # LayerNorm eps; the cyclic shift P in the expansion makes the streams non-collinear
    plain, hyper = _stacks("static", False, 4, torch.float64)
    x = torch.randn(16, 8, dtype=torch.float64)
    grads = []
    for state in (hyper.initial_state(x), hyper.blocks[0].expansion[:, None] * x[:, None, :]):
        hyper.zero_grad()
        out = hyper.position(hyper.run(state))
        torch.testing.assert_close(out, plain(x), rtol=0, atol=1e-12)
        (out * torch.sin(torch.arange(8.0, dtype=torch.float64))).sum().backward()
        grads.append(hyper.blocks[0].H_pre.grad.norm())
    assert grads[0] > 0.1 and grads[1] < 1e-3 * grads[0]


def test_two_streams_cannot_avoid_the_trap():
    plain, hyper = _stacks("sinkhorn", False, 2, torch.float64)
    x = torch.randn(16, 8, dtype=torch.float64)
    assert (hyper(x) - plain(x)).abs().max() < 1e-12
    grads = _mixing_grads(hyper, x)
    assert max(grads[i, "res_logits"].norm() for i in range(6)) < 1e-12


# -- Sinkhorn --------------------------------------------------------------------------


def test_sinkhorn_is_doubly_stochastic_within_the_stated_tolerance():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(50, 4, 4, generator=g, dtype=torch.float64)
    A = sinkhorn(logits, 20)  # 20 rounds: columns to rounding, rows within 3e-5 (docs/nn.md)
    assert (A >= 0).all()
    assert (A.sum(-2) - 1).abs().max() < 1e-14
    assert (A.sum(-1) - 1).abs().max() < 3e-5
    assert (sinkhorn(logits, 60).sum(-1) - 1).abs().max() < 1e-10
    rows = [(sinkhorn(logits, k).sum(-1) - 1).abs().max() for k in (1, 5, 10, 20)]
    assert rows == sorted(rows, reverse=True) and rows[0] > 1e-2  # converges, from far away
    A32 = sinkhorn(logits.float(), 20)
    assert (A32.sum(-2) - 1).abs().max() < 1e-6 and (A32.sum(-1) - 1).abs().max() < 3e-5


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
def test_sinkhorn_of_equal_logits_is_uniform(n):
    logits = torch.stack([torch.full((n, n), c, dtype=torch.float64) for c in (0.0, -3.0, 12.5)])
    for iters in (1, 20):
        A = sinkhorn(logits, iters)
        torch.testing.assert_close(A, torch.full_like(A, 1.0 / n), rtol=0, atol=2**-52)


def test_sinkhorn_is_the_torch_twin_of_the_numpy_one():
    from depthdyn.mixing import sinkhorn as numpy_sinkhorn

    g = torch.Generator().manual_seed(1)
    logits = 2.0 * torch.randn(6, 4, 4, generator=g, dtype=torch.float64)
    for rounds in (1, 3, 20, None):
        want = numpy_sinkhorn(logits.numpy(), rounds)
        np.testing.assert_allclose(sinkhorn(logits, rounds).numpy(), want, rtol=1e-13, atol=1e-15)
    # until converged: rows and columns within tol; the same tolerance stops both at the same round
    A = sinkhorn(logits, tol=1e-12)
    assert (A.sum(-1) - 1).abs().max() <= 1e-12 and (A.sum(-2) - 1).abs().max() < 1e-14
    np.testing.assert_allclose(A.numpy(), numpy_sinkhorn(logits.numpy(), tol=1e-12), rtol=1e-13, atol=1e-15)
    # a fixed count is not converged where the rows have not caught up (the check can fail)
    assert (sinkhorn(logits, 1).sum(-1) - 1).abs().max() > 1e-3


def test_sinkhorn_bad_input_raises():
    for iters in (0, -1, 2.5, True):
        with pytest.raises(ParameterError):
            sinkhorn(torch.zeros(3, 3), iters)
    for tol in (0, -1e-3, True, "1e-9"):
        with pytest.raises(ParameterError):
            sinkhorn(torch.zeros(3, 3), tol=tol)
    with pytest.raises(ShapeError):
        sinkhorn(torch.zeros(3, 4))
    with pytest.raises(ShapeError):
        sinkhorn(torch.zeros(4))
    with pytest.raises(ParameterError):
        sinkhorn(torch.tensor([[0.0, float("nan")], [0.0, 0.0]]))
    with pytest.raises(ParameterError):
        sinkhorn(torch.zeros(2, 2, dtype=torch.int64))
    with pytest.raises(ParameterError):
        sinkhorn([[0.0, 1.0], [1.0, 0.0]])


def test_sinkhorn_gradient_is_correct():
    logits = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda m: sinkhorn(m, 5), (logits,))


# -- linearisation and recurrence ------------------------------------------------------


def _randomised(mixing, dynamic, n=3, d=2, step=0.5, seed=1):
    torch.manual_seed(seed)
    f = torch.nn.Linear(d, d, bias=False)
    block = HyperConnectionBlock(d, f, n=n, mixing=mixing, dynamic=dynamic, step=step, norm=False).double()
    with torch.no_grad():  # learned-looking numbers, so that no entry is special
        for name in ("H_res", "res_logits", "H_pre", "H_post"):
            if hasattr(block, name):
                getattr(block, name).copy_(torch.randn(getattr(block, name).shape))
    return block


@pytest.mark.parametrize("mixing, dynamic", VARIANTS)
def test_jacobian_is_kron_of_the_mixing_matrices(mixing, dynamic):
    n, d, step = 3, 2, 0.5
    block = _randomised(mixing, dynamic, n, d, step)
    co = block.coefficients()
    assert co["H_res"].shape == (n, n) and co["H_pre"].shape == (n,) and co["H_post"].shape == (n,)
    point = torch.randn(n * d, dtype=torch.float64)
    J = torch.func.jacrev(lambda s: block(s.reshape(1, n, d)).reshape(-1))(point)
    W = block.f.weight.detach()
    expected = torch.kron(co["H_res"], torch.eye(d, dtype=torch.float64))
    expected += torch.kron(torch.outer(co["H_post"], co["H_pre"]), step * W)
    torch.testing.assert_close(J, expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(block.skip_operator(), co["H_res"], rtol=0, atol=0)
    if mixing == "sinkhorn":
        assert (co["H_res"].sum(0) - 1).abs().max() < 1e-12


@pytest.mark.parametrize("mixing, dynamic", VARIANTS)
def test_recurrence_charpoly_is_det_of_r_minus_hres_minus_lam_post_pre(mixing, dynamic):
    n = 3
    block = _randomised(mixing, dynamic, n)
    co = {k: v.tolist() for k, v in block.coefficients().items()}
    r, lam = sp.symbols("r lam")
    Hres = sp.Matrix(n, n, [sp.Rational(v) for row in co["H_res"] for v in row])
    post = sp.Matrix(n, 1, [sp.Rational(v) for v in co["H_post"]])
    pre = sp.Matrix(1, n, [sp.Rational(v) for v in co["H_pre"]])
    reference = sp.Poly((r * sp.eye(n) - Hres - lam * post * pre).det(), r, lam).as_dict()
    rec = block.recurrence()
    P = rec.charpoly()
    got = sp.Poly(P.subs({s: {"r": r, "lam": lam}[s.name] for s in P.free_symbols}), r, lam).as_dict()
    assert set(got) == set(reference)
    for k, v in reference.items():
        assert abs(float(got[k]) - float(v)) <= 1e-12 * max(1.0, abs(float(v))), k
    assert rec.name == "hyper_connection"
    assert block.recurrence(channel=1).charpoly() == P  # shared by every channel


def test_recurrence_size_limit():
    with pytest.raises(DegreeTooLargeError):
        HyperConnectionBlock(2, n=9, norm=False).recurrence()


def test_bad_hyper_parameters_raise():
    for kwargs in (
        {"mixing": "free"},
        {"n": 0},
        {"n": 2.0},
        {"sinkhorn_iters": 0},
        {"mixing": "static", "dynamic": True},
        {"dynamic": "yes", "mixing": "sinkhorn"},
        {"step": 0.0},
    ):
        with pytest.raises(ParameterError):
            HyperConnectionBlock(4, **kwargs)
    block = HyperConnectionBlock(4, n=3)
    for bad in (torch.randn(2, 4, 4), torch.randn(2, 3, 5), torch.randn(2, 12)):
        with pytest.raises(ParameterError):
            block(bad)
    for bad in (torch.randn(2, 5), torch.randn(2, 3, 4)):
        with pytest.raises(ParameterError):
            block.initial_state(bad)
    with pytest.raises(ParameterError):
        block.recurrence(channel=4)


# -- lucidrains hyper-connections as shipped: H_res read with no user glue ---------------
#
# The reference for a layer's H_res is the Jacobian of the library's own forward with the
# branch replaced by zero (what is left is the residual mixing path), taken by reverse mode
# on the recorded state. With static mixing that is the plain forward; with dynamic mixing
# the mixing weights depend on the state through the layer's norm, so the reference detaches
# the norm's input (the weights stay those of the state, their derivative is dropped). The
# Jacobian is laid out by einops patterns of the library's documented layouts and must be
# H_res (x) I on each token and zero between tokens and between features.


def _hc_library():
    try:
        import hyper_connections
        import hyper_connections.mHCv2 as v2
    except Exception as exc:  # noqa: BLE001 - any failure to import is a skip, said why
        pytest.skip(f"hyper-connections is not importable here: {type(exc).__name__}: {str(exc)[:120]}")
    return hyper_connections, v2


class _Zero(torch.nn.Module):
    def forward(self, x, *args, **kwargs):
        return torch.zeros_like(x)


class _LibraryNet(torch.nn.Module):
    def __init__(self, kind, streams, dim, depth, conv=False, **kw):
        super().__init__()
        hc, v2 = _hc_library()
        make = {
            "hc": hc.get_init_and_expand_reduce_stream_functions,
            "mhc": hc.mc_get_init_and_expand_reduce_stream_functions,
            "mhcv2": v2.get_init_and_expand_reduce_stream_functions,
        }[kind]
        init, self.expand, self.reduce = make(streams, num_fracs=kw.pop("num_fracs", 1), disable=False)

        def branch():
            if conv:
                return torch.nn.Sequential(torch.nn.Conv2d(dim, dim, 1), torch.nn.Tanh())
            return torch.nn.Sequential(torch.nn.Linear(dim, dim), torch.nn.Tanh())

        self.layers = torch.nn.ModuleList(
            init(dim=dim, branch=branch(), layer_index=i, **kw) for i in range(depth)
        )

    def forward(self, x):
        x = self.expand(x)
        for layer in self.layers:
            x = layer(x)
        return self.reduce(x)


def _library_net(kind, dynamic, streams=3, dim=4, depth=3, seed=0, **kw):
    torch.manual_seed(seed)
    net = _LibraryNet(kind, streams, dim, depth, **kw).double().eval()
    with torch.no_grad():  # away from the initialisation: real mixing, real dynamic weights
        for name, p in net.named_parameters():
            p.add_(0.5 * torch.randn_like(p))
            if "dynamic_alpha_fn" in name and not dynamic:
                p.zero_()  # the dynamic part of the mixing weights is then exactly zero
    return net


def _mixing_jacobian(layer, state, freeze):
    """The library's forward with a zero branch, differentiated at ``state``."""
    zero = copy.deepcopy(layer)
    zero.branch = _Zero()
    if freeze:
        zero.norm.register_forward_pre_hook(lambda module, args: (args[0].detach(),))
    return torch.func.jacrev(zero)(state.detach()).detach()


def _per_token(J, shape, pattern, **sizes):
    """``J`` ``(*shape, *shape)`` as ``(N, m, w, N, m, w)`` (tokens, streams, features)."""
    import einops

    numel = int(torch.tensor(shape).prod())
    idx = einops.rearrange(torch.arange(numel).reshape(shape), pattern, **sizes)
    flat = J.reshape(numel, numel)
    return flat[idx[:, :, :, None, None, None], idx[None, None, None]]


LIBRARY_CASES = [  # kind, dynamic, layer options, input shape, state pattern (to tokens, streams, features)
    ("hc", False, {}, (2, 3, 4), "(b s) t d -> (b t) s d"),
    ("hc", True, {}, (2, 3, 4), "(b s) t d -> (b t) s d"),
    ("hc", True, {}, (5, 4), "(b s) d -> b s d"),
    ("hc", True, {"num_fracs": 2}, (2, 2, 4), "(b s) t (f d) -> (b t) (f s) d"),
    ("hc", True, {"channel_first": True, "conv": True}, (2, 4, 2, 3), "(b s) d h w -> (b h w) s d"),
    ("mhc", False, {}, (2, 3, 4), "(b s) t d -> (b t) s d"),
    ("mhc", True, {}, (2, 3, 4), "(b s) t d -> (b t) s d"),
    ("mhc", True, {"num_fracs": 2}, (2, 2, 4), "(b s) t (f d) -> (b t) (f s) d"),
    ("mhcv2", True, {}, (2, 3, 4), "b t s d -> (b t) s d"),
    ("mhcv2", True, {"num_fracs": 2}, (2, 2, 4), "b t s (f d) -> (b t) (f s) d"),
]


def _hc(model, x, layers=None, **options):
    """``hc_profile`` of one recording at the given layers, or at the model's hyper-connection layers."""
    from depthdyn.nn.analysis import hc_layers, hc_profile, record

    return hc_profile(record(model, x, layers if layers is not None else hc_layers(model)), **options)


@pytest.mark.parametrize("kind, dynamic, options, shape, pattern", LIBRARY_CASES)
def test_library_h_res_is_the_jacobian_of_the_zero_branch_mixing_path(kind, dynamic, options, shape, pattern):
    from depthdyn.nn.analysis import record
    from depthdyn.nn.analysis.hclib import library_mixing

    net = _library_net(kind, dynamic, **options)
    x = torch.randn(*shape, dtype=torch.float64)
    prof = _hc(net, x)
    rec = record(net, x)
    fracs = options.get("num_fracs", 1)
    sizes = {"f": fracs} if fracs > 1 else {}
    sizes |= {"s": 3} if kind != "mhcv2" else {}
    P = None
    for layer, call in enumerate(rec.calls):
        state = call.state.detach()
        J = _per_token(_mixing_jacobian(call.module, state, dynamic), state.shape, pattern, **sizes)
        N, m, w = J.shape[:3]
        R = J[torch.arange(N), :, 0, torch.arange(N), :, 0]  # token i, feature 0 -> 0: H_res of i
        eye_N, eye_w = torch.eye(N, dtype=R.dtype), torch.eye(w, dtype=R.dtype)
        expected = torch.einsum("iac,ij,pq->iapjcq", R, eye_N, eye_w)
        assert (J - expected).abs().max() <= 1e-10  # nothing between tokens or features
        H = library_mixing(call.module, state)
        assert H.shape == (N, m, m) == (prof.products.shape[1], 3 * fracs, 3 * fracs)
        assert (H - R).abs().max() <= 1e-10
        P = R if P is None else R @ P
        assert float(np.abs(prof.products[layer] - P.numpy()).max()) <= 1e-10
        # the mixing varies over tokens, and its derivative is not in H_res (Sinkhorn layers
        # from layer 1 on: into layer 0 every stream is the input, so the dynamic logits add
        # a constant to each column, which Sinkhorn's normalisation removes)
        if dynamic and (kind == "hc" or layer > 0):
            assert float((R - R[:1]).abs().max()) > 1e-3
            full = _per_token(_mixing_jacobian(call.module, state, False), state.shape, pattern, **sizes)
            assert (full - expected).abs().max() > 1e-3
        if kind == "hc" and not dynamic:  # the paper's static H_res: alpha's residual columns, transposed
            static = call.module.static_alpha.detach()[:, 1:].T
            assert (H - static).abs().max() <= 1e-12
    # Sinkhorn (in float32 inside the library): doubly stochastic, gains 1. Not so for mHC (v1)
    # with fractions: its weights' last axis is split into fractions with the branch-input
    # columns inside, so the Sinkhorn-normalised block is not the one that mixes the streams
    # (the Jacobian reference above agrees with what the layer computes either way).
    if kind == "mhcv2" or (kind == "mhc" and fracs == 1):
        np.testing.assert_allclose(prof.products.sum(axis=-2), 1, atol=1e-5)
        np.testing.assert_allclose(prof.forward_gain, 1, atol=1e-4)
    elif kind == "hc":
        assert prof.max_forward_gain > 1.1  # free mixing grows some stream


def test_library_vit_transformer_is_profiled_at_its_hyper_connection_layers():
    _hc_library()
    from hyper_connections.vit import Transformer

    from depthdyn.nn.analysis import record
    from depthdyn.nn.analysis.hclib import library_layers

    torch.manual_seed(1)
    model = (
        Transformer(dim=8, depth=2, heads=2, dim_head=4, mlp_dim=16, num_residual_streams=3).double().eval()
    )
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.5 * torch.randn_like(p))
    x = torch.randn(2, 3, 8, dtype=torch.float64)
    prof = _hc(model, x)  # layers=None: the attention and feed-forward HC layers, in order
    names = [n for n, _ in library_layers(model)]
    assert names == ["layers.0.0", "layers.0.1", "layers.1.0", "layers.1.1"]
    assert prof.products.shape == (4, 6, 3, 3)
    rec = record(model, x, [m for _, m in library_layers(model)])
    P = None
    for layer, call in enumerate(rec.calls):
        J = _per_token(
            _mixing_jacobian(call.module, call.state, True), call.state.shape, "b t s d -> (b t) s d"
        )
        R = J[torch.arange(6), :, 0, torch.arange(6), :, 0]
        P = R if P is None else R @ P
        assert float(np.abs(prof.products[layer] - P.numpy()).max()) <= 1e-10
    np.testing.assert_allclose(prof.backward_gain, 1, atol=1e-5)
    assert prof.homogenisation[-1].max() < prof.homogenisation[0].max()  # the streams mix


def test_library_layers_that_are_not_read_raise_with_what_to_do(monkeypatch):
    hc, _ = _hc_library()
    from depthdyn.nn.analysis.hclib import library_mixing

    x = torch.randn(2, 4, dtype=torch.float64)
    # wrong layouts: a batch that is no multiple of the streams, streams not on the second-to-last axis
    folded = _library_net("hc", True).layers[0]
    with pytest.raises(ShapeError, match=r"\(b s\) \.\.\. d.*not a multiple of 3"):
        library_mixing(folded, torch.randn(5, 4, dtype=torch.float64))
    with pytest.raises(ShapeError, match=r"\.\.\. s d"):
        library_mixing(_library_net("mhcv2", True).layers[0], torch.randn(2, 4, 4, dtype=torch.float64))
    with pytest.raises(ShapeError, match="fractions"):
        library_mixing(
            _library_net("hc", True, num_fracs=2).layers[0], torch.randn(6, 5, dtype=torch.float64)
        )
    # skips that are not a mixing of the streams
    init, _, _ = hc.mc_get_init_and_expand_reduce_stream_functions(3, disable=False)
    with pytest.raises(ParameterError, match="residual_transform"):
        library_mixing(init(dim=4, residual_transform=torch.nn.Linear(4, 4)), torch.randn(6, 4))
    with pytest.raises(ParameterError, match="add_branch_out_to_residual"):
        library_mixing(init(dim=4, add_branch_out_to_residual=False), torch.randn(6, 4))
    # layers with different stream counts in one model: no product over depth
    net = _library_net("hc", True, streams=3, depth=2)
    net.layers[1] = _library_net("hc", True, streams=2, depth=1).layers[0]
    net(x)  # the model itself runs: 6 rows are 3 samples of 2 streams to the second layer
    with pytest.raises(ShapeError, match="same tokens and streams"):
        _hc(net, x)

    # a model holding HC layers inside the layers given: say where they are
    class Block(torch.nn.Module):
        def __init__(self, hc_layer):
            super().__init__()
            self.hc = hc_layer

        def forward(self, z):
            return self.hc(z)

    net = _library_net("hc", True)
    net.layers = torch.nn.ModuleList(Block(layer) for layer in net.layers)
    assert _hc(net, x).products.shape[0] == 3  # found by their class
    with pytest.raises(ParameterError, match=r"holds the hyper-connection layers \['hc'\].*hc_layers"):
        _hc(net, x, layers=net.layers)
    # a residual model that is no hyper-connection model, and the library's classes not loaded
    with pytest.raises(ParameterError, match="mixing=lambda layer, state: H_res"):
        _hc(DepthStack(ResidualBlock(4, mlp(4)) for _ in range(2)).double(), x)
    net = _library_net("hc", True)
    for name in (
        "hyper_connections.hyper_connections",
        "hyper_connections.manifold_constrained_hyper_connections",
        "hyper_connections.mHCv2",
    ):
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(ParameterError, match="HyperConnections.*mixing="):
        _hc(net, x, layers=net.layers)
    # user glue still takes precedence, on the state as recorded ((b s) d: one "token" of 6 rows)
    eye = _hc(net, x, layers=net.layers, mixing=lambda layer, state: torch.eye(state.shape[-2]))
    assert eye.products.shape == (3, 1, 6, 6) and np.array_equal(eye.products[-1, 0], np.eye(6))
