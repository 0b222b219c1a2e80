"""Torch blocks: init equivalences, agreement with the families' recurrences, typed errors."""

import copy
import math

import pytest

torch = pytest.importorskip("torch", reason="depthdyn.nn needs the optional torch extra")

import sympy as sp  # noqa: E402

from depthdyn.errors import ParameterError, UnknownFamilyError  # noqa: E402
from depthdyn.nn.blocks import (  # noqa: E402
    DenseBlock,
    DepthStack,
    HighwayBlock,
    MomentumBlock,
    ResidualBlock,
    ReZeroBlock,
    SmoothBlock,
    WeightedBlock,
    make_stack,
    mlp,
    pick_device,
)

torch.set_num_threads(1)


@pytest.mark.parametrize(
    "dtype, a_init, tol",
    # the default a = -20 leaves m = 2e-9: a 1e-6 match; a = -40 (m = 4e-18) matches in float64
    [(torch.float32, -20.0, 1e-6), (torch.float64, -20.0, 1e-6), (torch.float64, -40.0, 1e-12)],
)
def test_momentum_block_at_init_is_the_plain_prenorm_residual(dtype, a_init, tol):
    torch.manual_seed(0)
    d, L = 16, 8
    fs = [mlp(d) for _ in range(L)]
    plain = DepthStack(ResidualBlock(d, copy.deepcopy(f)) for f in fs).to(dtype)
    mom = DepthStack(MomentumBlock(d, copy.deepcopy(f), a_init=a_init) for f in fs).to(dtype)
    for p, q in zip(plain.blocks, mom.blocks, strict=True):
        q.norm.load_state_dict(p.norm.state_dict())
        with torch.no_grad():  # b = log(e - 1) rounded in this dtype, not first in float32
            q.b.fill_(math.log(math.e - 1))
    x = torch.randn(32, d, dtype=dtype)
    ref, out = plain(x), mom(x)
    assert ref.abs().max() > 0.1  # the branch does something
    assert (out - ref).abs().max() <= tol * ref.abs().max()
    # and it is a real difference once m is not ~0
    with torch.no_grad():
        for b in mom.blocks:
            b.a.fill_(0.0)
    assert (mom(x) - ref).abs().max() > 1e-2


def _linear(w):
    f = torch.nn.Linear(1, 1, bias=False).double()
    with torch.no_grad():
        f.weight.fill_(w)
    return f


W, H = -0.375, 0.25  # dyadic, so the float64 runs are close to exact


def _configured(name):
    """(block factory taking f, the lam of the linearised block)."""
    if name == "residual":
        return lambda f: ResidualBlock(1, f, step=H, norm=False), H * W
    if name == "rezero":

        def make(f):
            b = ReZeroBlock(1, f, step=H)
            with torch.no_grad():
                b.a.fill_(0.75)
            return b

        return make, H * W
    if name == "weighted":

        def make(f):
            b = WeightedBlock(1, f, step=H, skip=0.5)
            return b

        return make, H * W
    if name == "highway":

        def make(f):
            b = HighwayBlock(1, f, step=H, gate_bias=0.5)
            with torch.no_grad():
                b.gate.weight.zero_()  # a constant gate, as the family assumes
            return b

        return make, H * W
    if name == "momentum":

        def make(f):
            b = MomentumBlock(1, f, step=H, norm=False, a_init=0.3, b_init=-0.2)
            return b

        return make, H * W
    k = int(name[-1])
    cls = SmoothBlock if name.startswith("smooth") else DenseBlock
    return (lambda f: cls(1, f, k=k, step=H)), W


@pytest.mark.parametrize(
    "name",
    ["residual", "rezero", "weighted", "highway", "momentum", "smooth1", "smooth2", "smooth4", "dense3"],
)
def test_linear_stack_follows_its_family_recurrence(name):
    make, lam = _configured(name)
    L = 12
    stack = DepthStack(make(_linear(W)) for _ in range(L)).double()
    x0 = 0.8125
    got = stack.trace(torch.tensor([[x0]], dtype=torch.float64)).positions[:, 0, 0].tolist()
    rec = stack.blocks[0].recurrence(**({"channel": 0} if name in ("momentum", "highway") else {}), lam=lam)
    p = rec.order
    exact = rec.iterate([x0] * p, L + p - 1)[p - 1 :]  # x_{-p+1} = ... = x_0: zero differences
    assert len(exact) == L + 1
    for a, b in zip(got, exact, strict=True):
        assert a == pytest.approx(float(b), rel=1e-12, abs=1e-14)


@pytest.mark.parametrize(
    "make",
    [
        lambda f: WeightedBlock(3, f, skip=0.7),
        lambda f: HighwayBlock(3, f),
        lambda f: MomentumBlock(3, f, norm=False, a_init=0.4),
        lambda f: SmoothBlock(3, f, k=3),
        lambda f: DenseBlock(3, f, k=2),
    ],
)
def test_skip_operator_is_the_block_jacobian_when_f_vanishes(make):
    f = torch.nn.Linear(3, 3)
    with torch.no_grad():
        f.weight.zero_()
        f.bias.zero_()
    block = make(f).double()
    state = block.initial_state(torch.randn(2, 3, dtype=torch.float64))
    if isinstance(block, HighwayBlock):
        with torch.no_grad():
            block.gate.weight.zero_()
    shape = state.shape[1:]

    def one(s):
        return block(s.reshape(1, *shape)).reshape(-1)

    J = torch.func.jacrev(one)(state[0].reshape(-1))
    assert torch.allclose(J, block.skip_operator().double(), atol=1e-12)


def test_recurrence_with_learned_numbers_has_the_exact_charpoly():
    b = MomentumBlock(2, norm=False, a_init=0.0, b_init=0.0)
    rec = b.recurrence(channel=1)
    r, lam = sp.symbols("r lam")
    m, eta = sp.Rational(1, 2), sp.log(2)  # sigmoid(0), softplus(0)
    poly = rec.charpoly().subs(sp.Symbol("lam"), lam)
    expected = r**2 - (1 + m + eta * lam) * r + m
    diff = sp.expand(poly.subs({s: sp.Symbol(s.name) for s in poly.free_symbols}) - expected)
    assert abs(float(diff.subs({lam: 1, r: 1}))) < 1e-7
    with pytest.raises(ParameterError, match="channel"):
        b.recurrence()
    with pytest.raises(ParameterError, match="channel"):
        b.recurrence(channel=5)


def test_trace_is_recorded_by_hooks_and_leaves_none_behind():
    torch.manual_seed(1)
    stack = make_stack("smooth", layers=5, dim=2, k=2, step=0.3)
    x = torch.randn(4, 2)
    t = stack.trace(x)
    state, manual = stack.initial_state(x), [x]
    for b in stack.blocks:
        state = b(state)
        manual.append(b.position(state))
    assert torch.allclose(t.positions, torch.stack(manual))
    assert t.depth == 5 and t.updates.shape == (5, 4, 2)
    assert all(not b._forward_hooks and not b._forward_pre_hooks for b in stack.blocks)
    assert torch.equal(stack(x), t.positions[-1])


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: ResidualBlock(1), ParameterError, "norm=True needs dim >= 2"),
        (lambda: SmoothBlock(2, k=0), ParameterError, "k must be a positive integer"),
        (lambda: ResidualBlock(2, step=float("nan")), ParameterError, "step"),
        (lambda: ResidualBlock(2, f=lambda x: x), ParameterError, "torch.nn.Module"),
        (lambda: make_stack("lstm", layers=2, dim=2), UnknownFamilyError, "known:"),
        (lambda: make_stack("residual", layers=0, dim=2), ParameterError, "layers"),
        (lambda: DepthStack([]), ParameterError, "at least one"),
        (lambda: DepthStack([ResidualBlock(2), ResidualBlock(3)]), ParameterError, "share"),
        (lambda: DepthStack([ResidualBlock(3)])(torch.zeros(2, 4)), ParameterError, r"shape \(B, 3\)"),
        (lambda: pick_device("tpu"), ParameterError, "device"),
    ],
)
def test_bad_input_raises_typed_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_cuda_is_refused_clearly_without_a_gpu():
    if torch.cuda.is_available():
        assert pick_device(None).type == "cuda"
    else:
        assert pick_device(None).type == "cpu"
        with pytest.raises(ParameterError, match="no CUDA"):
            pick_device("cuda")
