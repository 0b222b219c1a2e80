"""Gradient norms against autograd through wide networks and closed forms; asymptotic classes
against sequences whose class is known by construction and against exact rates."""

from __future__ import annotations

import math

import numpy as np
import pytest

from depthdyn.errors import ParameterError
from depthdyn.meanfield import get_activation, iterate
from depthdyn.meanfield.asymptotics import classify, gradient_norms, kernel_asymptotics

torch = pytest.importorskip("torch")
from depthdyn.meanfield.montecarlo import simulate_gradient_norm  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


HC = {
    "n": 3,
    "H_res": [[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]],
    "H_pre": [0.5, 0.5, 0],
    "H_post": [1, 0, 1],
}


@pytest.mark.parametrize(
    "family, params",
    [
        ("residual", {}),
        ("momentum", {"m": 0.5, "h": 0.5}),
        ("residual", {"norm": "pre"}),
        ("dense", {"k": 2, "h": 0.5}),
        ("hyper_connection", HC),
        ("residual", {"norm": "post"}),
        ("smooth", {"k": 2, "h": 0.5}),
    ],
)
def test_gradient_norm_against_autograd_through_depthdyn_blocks(family, params):
    theory = gradient_norms("erf", 1.0, 0.05, depth=10, family=family, **params)[0]
    mean, band, _ = simulate_gradient_norm(
        "erf", 1.0, 0.05, depth=10, width=256, seeds=8, family=family, level=0.999, seed=4, **params
    )
    assert band[0] <= theory <= band[1], (theory, mean, band)


def test_gradient_norm_mutant_fails():
    mean, band, _ = simulate_gradient_norm(
        "erf", 1.0, 0.05, depth=10, width=256, seeds=8, family="momentum", m=0.5, h=0.5, level=0.999, seed=4
    )
    wrong = gradient_norms("erf", 1.0, 0.05, depth=10, family="momentum", m=0.7, h=0.5)[0]
    assert not band[0] <= wrong <= band[1]


def test_relu_residual_gradient_closed_form():
    # E[phi'^2] = 1/2 at every q, so each layer multiplies the gradient's square by 1 + h^2 sw2 / 2
    g = gradient_norms("relu", 0.8, 0.1, depth=25, family="residual", h=0.7)
    assert np.allclose(g, (1 + 0.49 * 0.8 / 2) ** (25 - np.arange(26)), rtol=1e-12)


def test_plain_chain_gradient_is_the_product_of_chi():
    # the plain chain: prod_l sw2 E[phi'(sqrt(q_l) z)^2] along the plain q-map of depthdyn.meanfield
    act, sw2, sb2, L = get_activation("erf"), 1.3, 0.05, 20
    q = iterate(act, sw2, sb2, depth=L, q0=1.0, c0=0.5).q
    chi = sw2 * np.array([float(act.derivative_second_moment(v)) for v in q[:L]])
    assert gradient_norms(act, sw2, sb2, depth=L, family="plain")[0] == pytest.approx(np.prod(chi), rel=1e-10)


def test_classify_known_sequences():
    layers = np.arange(0, 2001, dtype=float)
    assert classify(np.exp(0.05 * layers)).kind == "exponential"
    assert classify(np.exp(0.05 * layers)).rate == pytest.approx(0.05, rel=1e-9)
    poly = classify((layers + 1) ** 1.5)
    assert poly.kind == "polynomial" and poly.rate == pytest.approx(1.5, rel=1e-6)
    stretched = classify(np.exp(2 * np.sqrt(layers)))
    assert stretched.kind == "stretched" and stretched.rate == pytest.approx(2, rel=1e-6)
    assert classify(3 + np.exp(-layers)).kind == "convergent"
    with pytest.raises(ParameterError):
        classify([1.0, -1.0] * 5)


def test_kernel_asymptotics_of_residual_networks():
    # ReLU residual, sb2 = 0: q multiplies by exactly 1 + sw2/2 per layer (exact rate)
    relu = kernel_asymptotics("relu", 0.5, 0.0, family="residual", depth=60)
    assert relu.q.kind == "exponential" and relu.q.rate == pytest.approx(math.log(1.25), rel=1e-9)
    assert relu.q.exact == pytest.approx(math.log(1.25), rel=1e-9)
    # a bounded activation: q grows linearly (each layer adds at most sw2 + sb2) and the
    # gradient like exp(a sqrt(L)) (E[phi'^2] ~ 1/sqrt(q))
    erf = kernel_asymptotics("erf", 1.0, 0.05, family="residual", depth=1000)
    assert erf.q.kind == "polynomial" and erf.q.rate == pytest.approx(1.0, abs=0.05)
    assert erf.gradient.kind == "stretched"
    # plain chain in the ordered phase: 1 - c_L decays exponentially at the linearised rate
    plain = kernel_asymptotics("erf", 0.8, 0.05, family="plain", depth=300)
    assert plain.eps.kind == "exponential" and plain.eps.rate == pytest.approx(plain.eps.exact, rel=1e-3)
    assert plain.q.kind == "convergent"
    assert "gradient norm" in str(erf)
    with pytest.raises(ParameterError):
        kernel_asymptotics("erf", 1.0, 0.05, family="scaled_residual", depth=100)
