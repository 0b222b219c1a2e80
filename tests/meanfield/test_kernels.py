"""Every family's kernel recurrence against simulation, closed forms and its linearisation.

References are a second method written here: Monte-Carlo runs of wide random networks
(width 1024, 16 seeds, depth 50, every 10th layer inside the 99% band), closed forms of the
ReLU and linear maps derived below, a convergence slope for the continuum limit and the
decay rate measured from the iterates for the linearisation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from depthdyn.errors import DomainError, ParameterError, ShapeError, UnknownFamilyError, UnknownParameterError
from depthdyn.meanfield.kernel_analysis import (
    continuum_limit,
    depth_scales,
    kernel_fixed_point,
    linearise_kernel,
)
from depthdyn.meanfield.kernels import KERNEL_FAMILIES, iterate_family, kernel_spec, resolve_activation

torch = pytest.importorskip("torch")
from depthdyn.meanfield.montecarlo import simulate_kernel  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


HC = {
    "n": 3,
    "H_res": [[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]],
    "H_pre": [0.5, 0.5, 0.0],
    "H_post": [1.0, 0.0, 1.0],
}
#: (family, parameters, sw2 for tanh, sw2 for ReLU); sb2 = 0.05 throughout.
CASES = [
    ("plain", {}, 1.5, 1.8),
    ("residual", {}, 1.5, 0.5),
    ("residual", {"norm": "pre"}, 1.5, 1.0),
    ("residual", {"norm": "post"}, 1.5, 1.0),
    ("full_residual", {"sv2": 0.8}, 1.5, 0.5),
    ("weighted", {"a": 0.8}, 1.5, 1.0),
    ("rezero", {"a": 0.5}, 1.5, 1.0),
    ("scaled_residual", {}, 1.5, 1.0),
    ("highway", {"g": 0.3}, 1.5, 1.0),
    ("momentum", {"m": 0.5, "h": 0.5}, 1.5, 0.5),
    ("momentum", {"m": 0.5, "norm": "pre"}, 1.5, 1.0),
    ("smooth", {"k": 2, "h": 0.3}, 1.5, 0.5),
    ("smooth", {"k": 3, "h": 0.3}, 1.5, 0.5),
    ("dense", {"k": 2, "h": 0.5}, 1.5, 0.5),
    ("hyper_connection", {"n": 4}, 1.5, 0.5),
    ("hyper_connection", HC, 1.5, 1.0),
]
SB2 = 0.05
#: 99% simultaneously for the 12 checks of one network (q and c at layers 0, 10, ..., 50):
#: Bonferroni, so that one test fails by chance with probability <= 1% (at 99% per check, a
#: suite of ~400 checks would fail a few by chance whatever the seeds).
LEVEL = 1 - 0.01 / 12


def _ids(case):
    family, params, *_ = case
    return family + "".join(f"-{k}={v}" for k, v in params.items() if k in ("norm", "k", "n"))


def _runs():
    for case in CASES:
        for act in ("tanh", "relu"):
            yield pytest.param(case, act, id=f"{_ids(case)}-{act}")


@pytest.mark.parametrize("case, act", list(_runs()))
def test_family_kernel_matches_wide_networks(case, act):
    family, params, sw2_tanh, sw2_relu = case
    sw2 = sw2_tanh if act == "tanh" else sw2_relu
    theory = iterate_family(act, sw2, SB2, depth=50, q0=1.0, c0=0.3, family=family, **params)
    assert theory.stopped_at is None
    sim = simulate_kernel(
        act,
        sw2,
        SB2,
        depth=50,
        width=1024,
        seeds=16,
        q0=1.0,
        c0=0.3,
        family=family,
        method="gaussian",
        every=10,
        seed=CASES.index(case),
        level=LEVEL,
        **params,
    )
    inside_q, inside_c = sim.covers(theory)
    assert inside_q.all(), (sim.layers[~inside_q], theory.q[sim.layers], sim.q_band)
    assert inside_c.all(), (sim.layers[~inside_c], theory.c[sim.layers], sim.c_band)


MUTANTS = [
    # (what is wrong, simulated family and parameters, theory family and parameters, sw2 factor)
    ("wrong variance", ("residual", {}), ("residual", {}), 1.25),
    ("missing 1/sqrt(L)", ("scaled_residual", {}), ("residual", {}), 1.0),
    ("wrong gate", ("highway", {"g": 0.3}), ("highway", {"g": 0.4}), 1.0),
    ("wrong momentum", ("momentum", {"m": 0.5, "h": 0.5}), ("momentum", {"m": 0.4, "h": 0.5}), 1.0),
    ("wrong number of lags", ("dense", {"k": 3, "h": 0.5}), ("dense", {"k": 2, "h": 0.5}), 1.0),
    ("no LayerNorm", ("residual", {"norm": "pre"}), ("residual", {}), 1.0),
    ("identity mixing", ("hyper_connection", HC), ("hyper_connection", {**HC, "H_res": np.eye(3)}), 1.0),
]


@pytest.mark.parametrize("act", ["erf", "relu"])  # closed-form moments: the mutants cost little
@pytest.mark.parametrize("mutant", MUTANTS, ids=[m[0] for m in MUTANTS])
def test_wrong_kernel_leaves_the_band(mutant, act):
    _, (fam, params), (wrong_fam, wrong_params), factor = mutant
    sw2 = 1.0 if act == "erf" else 0.5
    run = dict(depth=50, q0=1.0, c0=0.3)
    sim = simulate_kernel(
        act,
        sw2,
        SB2,
        width=1024,
        seeds=16,
        family=fam,
        method="gaussian",
        every=10,
        seed=7,
        level=LEVEL,
        **run,
        **params,
    )
    theory = iterate_family(act, sw2, SB2, family=fam, **run, **params)
    assert all(x.all() for x in sim.covers(theory))  # the right kernel passes this very band
    wrong = iterate_family(act, sw2 * factor, SB2, family=wrong_fam, **run, **wrong_params)
    inside_q, inside_c = sim.covers(wrong)
    assert not (inside_q.all() and inside_c.all())


@pytest.mark.parametrize(
    "family, params",
    [
        ("residual", {"norm": "pre"}),
        ("momentum", {"m": 0.5, "h": 0.5}),
        ("dense", {"k": 2, "h": 0.5}),
        ("highway", {"g": 0.3}),
        ("hyper_connection", HC),
        ("residual", {"norm": "post"}),
        ("full_residual", {}),
    ],
)
def test_depthdyn_blocks_agree(family, params):
    # the same networks drawn as weight matrices and run through depthdyn's torch blocks
    theory = iterate_family("erf", 1.5, SB2, depth=20, q0=1.0, c0=0.3, family=family, **params)
    sim = simulate_kernel(
        "erf",
        1.5,
        SB2,
        depth=20,
        width=256,
        seeds=8,
        q0=1.0,
        c0=0.3,
        family=family,
        method="weights",
        every=5,
        seed=3,
        level=LEVEL,
        **params,
    )
    inside_q, inside_c = sim.covers(theory)
    assert inside_q.all() and inside_c.all(), (
        sim.q_band,
        theory.q[sim.layers],
        sim.c_band,
        theory.c[sim.layers],
    )


# ----------------------------------------------------------------- closed forms
def test_relu_residual_closed_form():
    # ReLU: E[phi(u)^2] = q/2, so q' = (1 + h^2 sw2/2) q + h^2 sb2 and, with the arc-cosine
    # kernel, k' = k + h^2 (sw2 q (sin t + (pi - t) cos t) / (2 pi) + sb2), cos t = k/q.
    sw2, sb2, h, L = 0.7, 0.1, 0.6, 30
    traj = iterate_family("relu", sw2, sb2, depth=L, q0=2.0, c0=0.2, family="residual", h=h)
    a = 1 + h * h * sw2 / 2
    s = h * h * sb2 / (a - 1)
    layers = np.arange(L + 1)
    assert np.allclose(traj.q, a**layers * (2.0 + s) - s, rtol=1e-12)
    q, k = 2.0, 0.4
    for layer in range(1, L + 1):
        t = math.acos(k / q)
        k += h * h * (sw2 * q * (math.sin(t) + (math.pi - t) * math.cos(t)) / (2 * math.pi) + sb2)
        q = a * q + h * h * sb2
        assert traj.c[layer] == pytest.approx(k / q, rel=1e-9)
    wrong = iterate_family("relu", sw2, sb2, depth=L, q0=2.0, c0=0.2, family="residual", h=h * 1.01)
    assert not np.allclose(wrong.q, a**layers * (2.0 + s) - s, rtol=1e-6)


def test_momentum_linear_activation_closed_form():
    # phi(u) = u, sb2 = 0: the network is linear; x_l = sum of the v's, and the covariances
    # obey the exact 2 x 2 recursion written out by hand here.
    m, eta, sw2, L = 0.6, 0.8, 0.5, 25
    traj = iterate_family("linear", sw2, 0.0, depth=L, q0=1.0, c0=0.5, family="momentum", m=m, eta=eta)
    xx, xv, vv = 1.0, 0.0, 0.0
    for layer in range(1, L + 1):
        f = eta * eta * sw2 * xx
        xx, xv, vv = xx + 2 * m * xv + m * m * vv + f, m * xv + m * m * vv + f, m * m * vv + f
        assert traj.q[layer] == pytest.approx(xx, rel=1e-10)
        assert traj.P[layer][0, 1] == pytest.approx(xv, rel=1e-10)
        assert traj.c[layer] == pytest.approx(0.5, rel=1e-10)  # linear maps keep c


def test_smooth_k1_and_dense_k1_are_the_residual_kernel():
    base = iterate_family("erf", 1.3, SB2, depth=40, q0=1.0, c0=0.1, family="residual", h=0.7)
    for fam in ("smooth", "dense"):
        other = iterate_family("erf", 1.3, SB2, depth=40, q0=1.0, c0=0.1, family=fam, k=1, h=0.7)
        assert np.allclose(other.q, base.q, rtol=1e-12) and np.allclose(other.eps, base.eps, rtol=1e-10)
    # and the default hyper-connection initialisation is the plain residual network
    hc = iterate_family("erf", 1.3, SB2, depth=40, q0=1.0, c0=0.1, family="hyper_connection", n=4, h=0.7)
    assert np.allclose(hc.q, base.q, rtol=1e-10) and np.allclose(hc.c, base.c, rtol=1e-9)


def test_eps_is_kept_near_c_equal_one():
    # ReLU residual, sb2 = 0: D' = D + h^2 sw2 (M(P) - M(S)) is linear in eps near 0 up to
    # O(eps^1.5), so the ratio of two runs started at eps0 = 1e-200 and 1e-100 is 1e-100 at
    # every layer; 1 - c computed from c would be 0 for both.
    a = iterate_family("relu", 1.0, 0.0, depth=30, q0=1.0, eps0=1e-200, family="residual")
    b = iterate_family("relu", 1.0, 0.0, depth=30, q0=1.0, eps0=1e-100, family="residual")
    assert np.all(a.eps > 0)
    assert np.allclose(a.eps / b.eps, 1e-100, rtol=1e-8)
    assert np.all(a.c == 1.0)


def test_continuum_limit_of_the_scaled_residual_kernel():
    q_inf, c_inf = continuum_limit("erf", 1.2, SB2, t=[1.0], q0=1.0, c0=0.3)
    errors = []
    for L in (50, 100, 200, 400):
        traj = iterate_family("erf", 1.2, SB2, depth=L, q0=1.0, c0=0.3, family="scaled_residual")
        errors.append(abs(traj.q[-1] - q_inf[0]) + abs(traj.c[-1] - c_inf[0]))
    slope = np.polyfit(np.log([50, 100, 200, 400]), np.log(errors), 1)[0]
    assert slope == pytest.approx(-1.0, abs=0.05)  # Euler scheme: O(1/L)
    # the unscaled residual network does not converge to it
    far = iterate_family("erf", 1.2, SB2, depth=400, q0=1.0, c0=0.3, family="residual")
    assert abs(far.q[-1] - q_inf[0]) > 100 * errors[-1]


# ----------------------------------------------------------------- the linearisation
@pytest.mark.parametrize(
    "family, params, sw2",
    [
        ("plain", {}, 0.8),
        ("plain", {}, 2.5),
        ("highway", {"g": 0.3}, 1.5),
        ("weighted", {"a": 0.5}, 1.0),
        (
            "hyper_connection",
            {"n": 2, "H_res": [[0.5, 0.3], [0.3, 0.5]], "H_pre": [1, 0], "H_post": [1, 1]},
            1.0,
        ),
    ],
)
def test_linearisation_roots_give_the_measured_depth_scale(family, params, sw2):
    rec = linearise_kernel("erf", sw2, SB2, family=family, c0=0.3, **params)
    r_max = depth_scales(rec)[0, 0]
    P, D = kernel_fixed_point("erf", sw2, SB2, family=family, c0=0.3, **params)
    # start on the variance's fixed point, so that only the cross-covariance moves; measure
    # where the deviation has shrunk to ~1e-7 (nonlinear terms below the tolerance)
    at = int(math.log(1e-7) / math.log(r_max))
    traj = iterate_family("erf", sw2, SB2, depth=at + 2, q0=P[0, 0], c0=0.3, family=family, **params)
    if D[0, 0] < 1e-12 * P[0, 0]:  # c* = 1: the difference D itself shrinks like r_max^l
        size = np.linalg.norm(traj.D.reshape(traj.D.shape[0], -1), axis=1)
        measured = size[at] / size[at - 1]
    else:  # c* < 1: the steps of S do
        steps = np.linalg.norm(np.diff(traj.S.reshape(traj.S.shape[0], -1), axis=0), axis=1)
        measured = steps[at] / steps[at - 1]
    assert measured == pytest.approx(r_max, rel=1e-4)
    wrong = depth_scales(linearise_kernel("erf", sw2 * 1.1, SB2, family=family, c0=0.3, **params))[0, 0]
    assert measured != pytest.approx(wrong, rel=1e-3)


def test_linearisation_is_a_recurrence_every_verb_takes():
    import depthdyn

    rec = linearise_kernel("relu", 0.3, 0.0, family="momentum", at="zero", m=0.5)
    assert rec.order == 1 and rec.dim == 3
    radius = float(depthdyn.spectral_radius(rec))
    assert radius == pytest.approx(depth_scales(rec)[0, 0], rel=1e-10)
    # ReLU with sb2 = 0: the variance map is exactly this linear map, so q grows at its rate
    traj = iterate_family("relu", 0.3, 0.0, depth=40, q0=1.0, c0=0.0, family="momentum", m=0.5)
    assert traj.q[40] / traj.q[39] == pytest.approx(radius, rel=1e-6)
    wrong = iterate_family("relu", 0.3, 0.0, depth=40, q0=1.0, c0=0.0, family="momentum", m=0.4)
    assert wrong.q[40] / wrong.q[39] != pytest.approx(radius, rel=1e-3)
    plain = linearise_kernel("erf", 0.8, SB2, family="plain")
    assert depthdyn.roots(plain) is not None


def test_residual_kernel_has_no_fixed_point():
    with pytest.raises(DomainError, match="at='zero'"):
        linearise_kernel("erf", 1.0, SB2, family="residual", max_layers=2000)


# ----------------------------------------------------------------- bad input, exploding phase
def test_exploding_phase_is_reported_not_nan():
    traj = iterate_family("relu", 10.0, 0.0, depth=200, q0=1.0, c0=0.2, family="residual")
    assert traj.stopped_at is not None and "exploding" in traj.reason
    assert np.all(np.isfinite(traj.q)) and np.all(np.isfinite(traj.c))
    assert len(traj.q) == traj.stopped_at + 1
    assert "exploding" in str(traj)


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"family": "resnet"}, UnknownFamilyError),
        ({"family": "residual", "m": 0.5}, UnknownParameterError),
        ({"family": "momentum", "m": 1.0}, DomainError),
        ({"family": "highway", "g": 1.5}, DomainError),
        ({"family": "momentum", "norm": "post"}, ParameterError),
        ({"family": "residual", "norm": "middle"}, ParameterError),
        ({"family": "smooth", "k": 0}, ParameterError),
        ({"family": "hyper_connection", "H_res": [[1, 0, 0], [0, 1, 0]]}, ShapeError),
        ({"family": "residual", "h": float("nan")}, ParameterError),
        ({"family": "residual", "c0": 1.5}, DomainError),
        ({"family": "residual", "q0": 0.0}, DomainError),
        ({"family": "residual", "depth": -1}, ParameterError),
        ({"family": "residual", "depth": True}, ParameterError),
        ({"family": "residual", "c0": 0.5, "eps0": 0.5}, ParameterError),
    ],
)
def test_bad_input_raises_typed_errors(kwargs, error):
    args = {"depth": 5, "q0": 1.0, **kwargs}
    with pytest.raises(error):
        iterate_family("erf", 1.0, 0.1, **args)


def test_bad_variances():
    with pytest.raises(DomainError):
        iterate_family("tanh", -1.0, 0.1, depth=3, family="residual")
    with pytest.raises(DomainError):
        iterate_family("tanh", 1.0, -0.1, depth=3, family="residual")
    with pytest.raises(ParameterError):
        iterate_family("tanh", "abc", 0.1, depth=3, family="residual")


def test_depth_zero_is_the_input():
    traj = iterate_family("erf", 1.0, 0.1, depth=0, q0=2.0, c0=0.25, family="momentum", m=0.5)
    assert traj.q.tolist() == [2.0] and traj.c.tolist() == [0.25]


def test_every_family_has_a_spec_and_a_trajectory_record():
    for family in KERNEL_FAMILIES:
        spec = kernel_spec(family, depth=10)
        assert spec.C.shape == (spec.k, spec.k) and spec.R.shape[1] == spec.k
        traj = iterate_family(resolve_activation("erf"), 1.0, 0.1, depth=10, q0=1.0, c0=0.5, family=family)
        assert traj.q.shape == (11,) and family in str(traj)
        assert set(traj.to_json()) >= {"q", "c", "eps"}


@pytest.mark.parametrize(
    "family, params, block, kwargs",
    [
        ("residual", {}, "ResidualBlock", {}),
        ("momentum", {"m": 0.5}, "MomentumBlock", {}),
        ("smooth", {"k": 3}, "SmoothBlock", {"k": 3}),
        ("dense", {"k": 4}, "DenseBlock", {"k": 4}),
        ("hyper_connection", {"n": 4}, "HyperConnectionBlock", {"n": 4, "mixing": "static"}),
        ("hyper_connection", {"n": 3, "expansion": [1.0, 0.5, 3.0]}, "HyperConnectionBlock",
         {"n": 3, "mixing": "static"}),
    ],
)
def test_the_spec_builds_layer_zero_as_the_blocks_do(family, params, block, kwargs):
    """``KernelSpec.inputs`` (what the kernels start from and the Monte-Carlo harness builds its
    state with) is the blocks' own ``initial_state``: the input and, for hyper-connections, the
    input shifted by one feature (an independent field of its variance)."""
    from depthdyn.nn import blocks

    d = 12
    spec = kernel_spec(family, **params)
    net = getattr(blocks, block)(d, **kwargs)
    if "expansion" in params:
        with torch.no_grad():
            net.expansion.copy_(torch.tensor(params["expansion"]))
    x = torch.randn(5, d, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    state = net.initial_state(x).double().reshape(5, spec.k, d)
    fields = torch.stack([torch.roll(x, b, dims=-1) for b in range(spec.inputs.shape[1])], dim=1)
    built = torch.einsum("kb,sbn->skn", torch.as_tensor(spec.inputs), fields)
    torch.testing.assert_close(built, state, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(spec.P0, spec.inputs @ spec.inputs.T)
    # another expansion is another state: the comparison can fail
    if family == "hyper_connection":
        other = kernel_spec(family, n=spec.k, expansion=[2.0] + [1.0] * (spec.k - 1))
        moved = torch.einsum("kb,sbn->skn", torch.as_tensor(other.inputs), fields)
        assert (moved - state).abs().max() > 0.1
