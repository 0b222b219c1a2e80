"""The Monte-Carlo harness itself: reproducible, its two samplers agree, its bands mean what they say."""

from __future__ import annotations

import json

import numpy as np
import pytest

from depthdyn.errors import ParameterError, UnknownFamilyError
from depthdyn.meanfield.kernels import iterate_family

torch = pytest.importorskip("torch")
from depthdyn.meanfield.montecarlo import simulate_kernel  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


RUN = dict(depth=12, width=128, seeds=4, q0=1.0, c0=0.4, family="residual", every=4)


@pytest.mark.parametrize("method", ["weights", "gaussian"])
def test_same_seed_same_numbers(method):
    a = simulate_kernel("erf", 1.0, 0.1, method=method, seed=5, **RUN)
    b = simulate_kernel("erf", 1.0, 0.1, method=method, seed=5, **RUN)
    c = simulate_kernel("erf", 1.0, 0.1, method=method, seed=6, **RUN)
    assert np.array_equal(a.q_seeds, b.q_seeds) and np.array_equal(a.c_seeds, b.c_seeds)
    assert not np.array_equal(a.q_seeds, c.q_seeds)
    assert list(a.layers) == [0, 4, 8, 12]


def test_layer_zero_is_the_inputs_exactly():
    sim = simulate_kernel("relu", 1.0, 0.0, method="gaussian", q0=2.5, c0=-0.3, depth=3, width=64, seeds=3)
    assert np.allclose(sim.q_seeds[:, 0], 2.5, rtol=1e-12)
    assert np.allclose(sim.c_seeds[:, 0], -0.3, atol=1e-12)


def test_the_two_samplers_agree_in_distribution():
    # weight matrices through depthdyn's blocks vs Gaussian conditioning: same mean within
    # the bands of both (momentum with LayerNorm exercises state, norm and the vmap path)
    kw = dict(RUN, family="momentum", m=0.5, norm="pre", width=256, seeds=8, depth=16)
    w = simulate_kernel("erf", 1.2, 0.05, method="weights", seed=1, level=0.999, **kw)
    g = simulate_kernel("erf", 1.2, 0.05, method="gaussian", seed=2, level=0.999, **kw)
    half = (w.q_band[1] - w.q_band[0] + g.q_band[1] - g.q_band[0]) / 2
    assert np.all(np.abs(w.q - g.q) <= half)


def test_band_is_a_student_t_interval():
    from scipy.stats import t

    sim = simulate_kernel("erf", 1.0, 0.1, method="gaussian", level=0.9, **RUN)
    half = t.ppf(0.95, RUN["seeds"] - 1) * sim.q_seeds.std(axis=0, ddof=1) / np.sqrt(RUN["seeds"])
    assert np.allclose(sim.q_band[1] - sim.q, half) and np.allclose(sim.q - sim.q_band[0], half)


def test_covers_and_the_record():
    sim = simulate_kernel("erf", 1.0, 0.1, method="gaussian", **RUN)
    theory = iterate_family("erf", 1.0, 0.1, depth=12, q0=1.0, c0=0.4, family="residual")
    inside_q, inside_c = sim.covers(theory)
    assert inside_q.shape == (4,) and inside_c.shape == (4,)
    assert "residual" in str(sim) and json.dumps(sim.to_json())
    short = iterate_family("erf", 1.0, 0.1, depth=5, q0=1.0, c0=0.4, family="residual")
    with pytest.raises(ParameterError):
        sim.covers(short)


def test_exploding_networks_are_reported():
    with pytest.raises(ParameterError, match="exploding"):
        simulate_kernel("relu", 50.0, 0.0, method="gaussian", depth=300, width=64, seeds=2, family="residual")


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"seeds": 1}, ParameterError),
        ({"method": "exact"}, ParameterError),
        ({"family": "resnet"}, UnknownFamilyError),
        ({"width": 0}, ParameterError),
        ({"level": 1.0}, ParameterError),
        ({"seed": 1.5}, ParameterError),
        ({"device": "tpu"}, ParameterError),
        ({"c0": 2.0}, ParameterError),
    ],
)
def test_bad_input(kwargs, error):
    args = {**RUN, **kwargs}
    with pytest.raises(error):
        simulate_kernel("erf", 1.0, 0.1, **args)


def test_device_none_runs_where_torch_can():
    sim = simulate_kernel("erf", 1.0, 0.1, method="gaussian", device=None, **RUN)
    assert np.all(np.isfinite(sim.q))
