"""Initialisation recipes, checked on the networks they are applied to (autograd, forward passes)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from depthdyn.errors import DomainError, ParameterError
from depthdyn.meanfield import get_activation
from depthdyn.meanfield.isometry import isometry_score

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from depthdyn.meanfield.recipes import apply_recipe, init_recipe  # noqa: E402
from depthdyn.nn.blocks import make_stack  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


class Erf(nn.Module):
    def forward(self, x):
        return torch.erf(x)


def _plain(width, depth):
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.Tanh()]
    return nn.Sequential(*layers[:-1]).double()  # ends on the pre-activation h_L


def _input_gradient(model, width, q, seeds, gen):
    ratios = []
    for _ in range(seeds):
        x = (torch.randn(1, width, generator=gen, dtype=torch.float64) * math.sqrt(q)).requires_grad_(True)
        out = model(x)
        u = torch.randn(out.shape, generator=gen, dtype=torch.float64)
        (g,) = torch.autograd.grad((u * out).sum(), x)
        ratios.append(float((g**2).sum() / (u**2).sum()))
    return np.array(ratios)


def test_plain_recipe_is_critical_on_an_nn_sequential():
    width, depth, gen = 512, 20, torch.Generator().manual_seed(0)
    recipe = init_recipe("tanh", depth=depth, family="plain", sb2=0.05)
    act = get_activation("tanh")
    # chi_1 = sw2 E[phi'(h)^2] at q* = 1, checked here by independent quadrature
    z, w = np.polynomial.hermite_e.hermegauss(150)
    chi = recipe.sw2 * np.sum(w * act.dphi(math.sqrt(recipe.q_star) * z) ** 2) / math.sqrt(2 * math.pi)
    assert chi == pytest.approx(1.0, rel=1e-8)
    ratios = []
    for seed in range(6):
        model = apply_recipe(_plain(width, depth), recipe, generator=torch.Generator().manual_seed(seed))
        ratios.append(_input_gradient(model, width, recipe.q_star, 1, gen)[0])
    assert 0.6 < np.mean(ratios) < 1.6  # neither vanishing nor exploding over 20 layers
    hot = init_recipe("tanh", depth=depth, family="plain", sb2=0.05)
    hot = type(hot)(**{**hot.__dict__, "sw2": hot.sw2 * 2})  # mutant: twice the weight variance
    model = apply_recipe(_plain(width, depth), hot, generator=torch.Generator().manual_seed(9))
    assert _input_gradient(model, width, recipe.q_star, 3, gen).mean() > 20


def test_isometry_target_picks_orthogonal_weights():
    recipe = init_recipe("tanh", depth=10, family="plain", sb2=0.05)
    # E[phi'^2k] at q* by an independent quadrature
    z, w = np.polynomial.hermite_e.hermegauss(150)
    d2 = get_activation("tanh").dphi(math.sqrt(recipe.q_star) * z) ** 2
    mu = [float(np.sum(w * d2**k) / math.sqrt(2 * math.pi)) for k in (1, 2)]
    gaussian = isometry_score(mu, recipe.sw2, depth=10, weights="gaussian")
    orthogonal = isometry_score(mu, recipe.sw2, depth=10, weights="orthogonal")
    assert orthogonal < gaussian
    chosen = init_recipe("tanh", depth=10, family="plain", sb2=0.05, isometry=(orthogonal + gaussian) / 2)
    assert chosen.weights == "orthogonal" and chosen.isometry == pytest.approx(orthogonal)
    model = apply_recipe(_plain(64, 3), chosen, generator=torch.Generator().manual_seed(1))
    W = model[0].weight.detach()
    assert torch.allclose(W @ W.T, chosen.sw2 * torch.eye(64, dtype=W.dtype), atol=1e-10)
    with pytest.raises(DomainError):
        init_recipe("tanh", depth=10, family="plain", sb2=0.05, isometry=orthogonal / 2)


def test_residual_recipe_bounds_the_gradient_of_a_depthdyn_stack():
    width, depth, bound = 256, 30, 3.0
    # erf (closed-form moments) keeps the 40 bisection steps of the branch scale cheap
    recipe = init_recipe("erf", depth=depth, family="residual", sb2=0.05, gradient_bound=bound)
    assert recipe.h < 1 and recipe.gradient_norm == pytest.approx(bound, rel=1e-6)
    gen = torch.Generator().manual_seed(2)

    def stack():
        return make_stack(
            "residual",
            layers=depth,
            dim=width,
            norm=False,
            f=lambda _: nn.Sequential(nn.Tanh(), nn.Linear(width, width)),
        ).double()

    ratios = []
    for seed in range(8):
        model = apply_recipe(stack(), recipe, generator=torch.Generator().manual_seed(seed))
        assert all(block.step == recipe.h for block in model.blocks)
        ratios.append(_input_gradient(model, width, 1.0, 1, gen)[0])
    assert np.mean(ratios) == pytest.approx(bound, rel=0.15)
    unscaled = type(recipe)(**{**recipe.__dict__, "h": 1.0})  # mutant: no branch scale
    model = apply_recipe(stack(), unscaled, generator=torch.Generator().manual_seed(3))
    assert _input_gradient(model, width, 1.0, 2, gen).mean() > 2 * bound


def test_bad_input():
    with pytest.raises(ParameterError):
        init_recipe("tanh", depth=5, family="residual", h=0.5)
    with pytest.raises(ParameterError):
        init_recipe("tanh", depth=5, family="plain", m=0.5)
    with pytest.raises(ParameterError):
        init_recipe("tanh", depth=5, family="residual", gradient_bound=0.5)
    recipe = init_recipe("tanh", depth=5, family="plain", sb2=0.05)
    with pytest.raises(ParameterError):
        apply_recipe(nn.Tanh(), recipe)
    with pytest.raises(ParameterError):
        apply_recipe(_plain(8, 2), {"sw2": 1.0})
