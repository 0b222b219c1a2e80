"""Hyper-connections: residual equivalence and gradients at init, Sinkhorn, linearisation, recurrence."""

import copy

import pytest

torch = pytest.importorskip("torch", reason="depthdyn.nn needs the optional torch extra")

import sympy as sp  # noqa: E402

from depthdyn.errors import DegreeTooLargeError, ParameterError, ShapeError  # noqa: E402
from depthdyn.nn import DepthStack, ResidualBlock, mlp  # noqa: E402
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
    A = sinkhorn(logits)  # 20 rounds: columns to rounding, rows within 3e-5 (docstring)
    assert (A >= 0).all()
    assert (A.sum(-2) - 1).abs().max() < 1e-14
    assert (A.sum(-1) - 1).abs().max() < 3e-5
    assert (sinkhorn(logits, 60).sum(-1) - 1).abs().max() < 1e-10
    rows = [(sinkhorn(logits, k).sum(-1) - 1).abs().max() for k in (1, 5, 10, 20)]
    assert rows == sorted(rows, reverse=True) and rows[0] > 1e-2  # converges, from far away
    A32 = sinkhorn(logits.float())
    assert (A32.sum(-2) - 1).abs().max() < 1e-6 and (A32.sum(-1) - 1).abs().max() < 3e-5


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
def test_sinkhorn_of_equal_logits_is_uniform(n):
    logits = torch.stack([torch.full((n, n), c, dtype=torch.float64) for c in (0.0, -3.0, 12.5)])
    for iters in (1, 20):
        A = sinkhorn(logits, iters)
        torch.testing.assert_close(A, torch.full_like(A, 1.0 / n), rtol=0, atol=2**-52)


def test_sinkhorn_bad_input_raises():
    for iters in (0, -1, 2.5, True, None):
        with pytest.raises(ParameterError):
            sinkhorn(torch.zeros(3, 3), iters)
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
