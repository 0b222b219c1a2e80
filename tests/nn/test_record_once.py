"""Record once, analyse many times: one forward per diagnosis, one profile for inspect and diagnose."""

import dataclasses
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="depthdyn.nn needs the optional torch extra")

from depthdyn.nn.analysis import (  # noqa: E402
    DepthProfile,
    depth_profile,
    diagnose,
    hc_profile,
    inspect,
    jacobian_spectra,
    record,
)
from depthdyn.nn.analysis import diagnostics as diagnostics_module  # noqa: E402
from depthdyn.nn.blocks import (  # noqa: E402
    DepthStack,
    HyperConnectionBlock,
    MomentumBlock,
    ResidualBlock,
    mlp,
)

torch.set_num_threads(1)


class Counter:
    """Counts the calls of a module's forward (a pre-hook: every call, whatever it returns)."""

    def __init__(self, module):
        self.calls = 0
        self.handle = module.register_forward_pre_hook(self._count)

    def _count(self, module, args):
        self.calls += 1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.handle.remove()


def _stacks():
    torch.manual_seed(3)
    yield "momentum", DepthStack(MomentumBlock(3, mlp(3, 8), step=0.5) for _ in range(4)).double()
    yield "residual", DepthStack(ResidualBlock(3, mlp(3, 8), step=0.5) for _ in range(3)).double()
    yield "hyper", DepthStack(
        HyperConnectionBlock(3, mlp(3, 8), n=2, mixing="sinkhorn", dynamic=True) for _ in range(3)
    ).double()


STACKS = dict(_stacks())


def _loss(out):
    return (out**2).mean()


@pytest.mark.parametrize("name", sorted(STACKS))
def test_diagnose_runs_the_stack_forward_once(name):
    stack = STACKS[name]
    x = torch.randn(5, 3, dtype=torch.float64)
    with Counter(stack) as forward:
        diag = diagnose(stack, x, loss_fn=_loss)
    assert forward.calls == 1
    assert diag.grad_norms is not None and np.isfinite(diag.grad_norms).all()
    assert (diag.hc is not None) == (name == "hyper")
    # the counter sees every forward: a trace before the diagnosis is a second one
    with Counter(stack) as forward:
        stack.trace(x)
        diagnose(stack, x)
    assert forward.calls == 2


def test_the_forward_counter_catches_an_analysis_that_runs_the_model_again(monkeypatch):
    stack = STACKS["hyper"]
    x = torch.randn(4, 3, dtype=torch.float64)
    honest = diagnostics_module.jacobian_spectra

    def retracing(recording, sample=0):  # what jacobian_spectra(stack, x) did: run the model again
        return honest(record(stack, x[:1]), sample)

    monkeypatch.setattr(diagnostics_module, "jacobian_spectra", retracing)
    with Counter(stack) as forward:
        diagnose(stack, x, loss_fn=_loss)
    assert forward.calls == 2


def test_analyses_of_one_recording_run_no_forward():
    stack = STACKS["hyper"]
    x = torch.randn(4, 3, dtype=torch.float64)
    rec = record(stack, x)
    with Counter(stack) as forward:
        jacobian_spectra(rec)
        hc_profile(rec)
    assert forward.calls == 0


def _same(a: DepthProfile, b: DepthProfile) -> None:
    for field in dataclasses.fields(DepthProfile):
        np.testing.assert_array_equal(getattr(a, field.name), getattr(b, field.name), err_msg=field.name)


@pytest.mark.parametrize("name", sorted(STACKS))
def test_inspect_and_diagnose_give_the_same_profile(name):
    stack = STACKS[name]
    x = torch.randn(6, 3, dtype=torch.float64)
    x[0] = 0.0  # a zero input where the residual stack starts: perturbation at x_l = 0
    diag = diagnose(stack, x, loss_fn=_loss)
    ins = inspect(stack, x, loss_fn=_loss)
    _same(diag.profile, ins.profile)
    np.testing.assert_array_equal(diag.norms, ins.norms.mean(axis=1))
    # a loss that does not depend on the output: no gradient reaches any state, NaN in both
    free = torch.zeros((), dtype=torch.float64, requires_grad=True)
    untouched = lambda out: free * 1.0  # noqa: E731
    a, b = diagnose(stack, x, loss_fn=untouched).profile, inspect(stack, x, loss_fn=untouched).profile
    assert np.isnan(a.grad_norms).all()
    _same(a, b)
    # the comparison sees a different convention (0 for "no gradient") and a different input
    with pytest.raises(AssertionError):
        _same(a, dataclasses.replace(b, grad_norms=np.nan_to_num(b.grad_norms)))
    with pytest.raises(AssertionError):
        _same(diag.profile, inspect(stack, x + 1e-3, loss_fn=_loss).profile)


def test_profile_conventions_from_a_hand_made_trajectory():
    # x_0 = 0 -> 0 (no update: 0), 0 -> (3, 4) (a zero state moves: inf), then a change of shape
    positions = [torch.zeros(1, 2), torch.zeros(1, 2), torch.tensor([[3.0, 4.0]]), torch.ones(1, 3)]
    prof = depth_profile(positions, np.array([1.0, np.nan, 2.0, 3.0]))
    np.testing.assert_array_equal(prof.norms[:, 0], [0.0, 0.0, 5.0, math.sqrt(3)])
    np.testing.assert_array_equal(prof.perturbation[:, 0], [0.0, np.inf, np.nan])
    assert prof.update_cosine[0, 0] == 0.0 and np.isnan(prof.update_cosine[1, 0])
    assert np.isnan(prof.grad_norms[1])


def test_the_analysis_records_print_as_text_latex_and_json():
    import json

    import sympy as sp

    from depthdyn.nn.analysis import linearise, place, response_agreement, top_singular_values
    from depthdyn.records import Record

    stack = STACKS["momentum"]
    x = torch.randn(3, 3, dtype=torch.float64)
    lin = linearise(stack, x)
    ins = inspect(stack, x)
    records = [
        diagnose(stack, x, loss_fn=_loss), diagnose(STACKS["hyper"], x).hc, ins, ins.profile, lin,
        place(lin), ins.placement(), response_agreement(stack, x, lin=lin),
        top_singular_values(ins.operator(0), 2),
    ]
    for rec in records:
        assert isinstance(rec, Record), type(rec).__name__
        assert str(rec) and rec._repr_latex_().startswith("$") and sp.latex(rec)
        json.dumps(rec.to_json(), allow_nan=True)
