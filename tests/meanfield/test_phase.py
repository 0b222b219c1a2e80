"""The order-to-chaos line and the xi_c heat map, against reference quadrature and the single-point solver."""

from __future__ import annotations

import math

import numpy as np
import pytest
from reference_quadrature import expect1

from depthdyn.errors import DomainError
from depthdyn.meanfield import critical_line, fixed_point, phase_diagram

SQRT2PI = math.sqrt(2 * math.pi)
PHI = {
    "tanh": (math.tanh, lambda u: 1 - math.tanh(u) ** 2),
    "erf": (math.erf, lambda u: 2 / math.sqrt(math.pi) * math.exp(-u * u)),
    "gelu": (lambda u: u * 0.5 * math.erfc(-u / math.sqrt(2)),
             lambda u: 0.5 * math.erfc(-u / math.sqrt(2)) + u * math.exp(-u * u / 2) / SQRT2PI),
}


def _residuals(name, sw2, sb2, q):
    """The two equations of the boundary, evaluated by adaptive quadrature."""
    phi, dphi = PHI[name]
    return (sw2 * expect1(lambda u: phi(u) ** 2, q) + sb2 - q, sw2 * expect1(lambda u: dphi(u) ** 2, q) - 1)


@pytest.mark.parametrize("name", ["tanh", "erf", "gelu"])
def test_every_point_of_the_line_solves_the_boundary_equations(name):
    line = critical_line(name, q=np.array([0.0, 0.01, 0.3, 2.0, 15.0]))
    for sw2, sb2, q, e1, e2 in zip(line.sw2, line.sb2, line.q, line.sw2_error, line.sb2_error, strict=True):
        fixed, slope = _residuals(name, sw2, sb2, q)
        # the certified errors bound the residuals (plus the reference's own 1e-14)
        assert abs(fixed) <= e2 + e1 * q + 1e-13 * max(1, q) and abs(slope) <= e1 / sw2 + 1e-13
        # the mutant: a point moved by 1e-7 in sw2 is off the line
        assert abs(_residuals(name, sw2 * (1 + 1e-7), sb2, q)[1]) > 1e-8


def test_erf_line_is_exact_and_gelu_line_turns_back():
    erf = critical_line("erf", points=50)
    assert erf.exact and np.all(erf.sw2_error < 1e-12)
    gelu = critical_line("gelu", q=np.geomspace(0.1, 1000, 200))
    d = np.diff(gelu.sw2)
    # sw2(q) falls, then rises: the branch is followed through the turn
    assert (d < 0).any() and (d > 0).any()
    assert np.all(np.diff(gelu.sb2) > 0)
    assert not gelu.attracting[0] and gelu.attracting[-1]  # small q*: the variance fixed point repels


def test_relu_line_is_vertical():
    line = critical_line("relu", points=5, sb2_max=2.0)
    assert np.all(line.sw2 == 2.0) and line.sb2.tolist() == [0.0, 0.5, 1.0, 1.5, 2.0]


def test_heat_map_agrees_with_the_single_point_solver():
    diagram = phase_diagram("tanh", sw2=[1.2, 2.0, 3.0], sb2=[0.05, 0.4])
    for i, sb2 in enumerate(diagram.sb2):
        for j, sw2 in enumerate(diagram.sw2):
            fp = fixed_point("tanh", sw2, sb2)
            assert diagram.phase[i, j] == {"ordered": 0, "chaotic": 1}[fp.phase]
            assert abs(diagram.q_star[i, j] - fp.q_star) <= 1e-10 * fp.q_star
            assert abs(diagram.xi_c[i, j] - fp.xi_c) <= 1e-3 * fp.xi_c  # the figure's accuracy
    erf = phase_diagram("erf", sw2=[1.0, 2.5], sb2=[0.1])
    for j, sw2 in enumerate(erf.sw2):
        assert abs(erf.xi_c[0, j] - fixed_point("erf", sw2, 0.1).xi_c) <= 1e-6 * erf.xi_c[0, j]


def test_heat_map_marks_the_exploding_phase():
    diagram = phase_diagram("relu", sw2=[1.0, 1.9, 2.1, 3.0], sb2=[0.1, 0.5])
    assert diagram.phase.tolist() == [[0, 0, 2, 2], [0, 0, 2, 2]]
    assert np.all(np.isinf(diagram.xi_c[:, 2:])) and not np.any(np.isnan(diagram.xi_c))
    with pytest.raises(DomainError):
        phase_diagram("relu", sw2=[0.0, 1.0], sb2=[0.1])


def test_plot_phase_diagram_draws_the_line_and_the_trainable_depth():
    from matplotlib.axes import Axes

    from depthdyn.plot.meanfield import plot_critical_lines, plot_phase_diagram

    diagram = phase_diagram("erf", sw2=(0.5, 3.0, 12), sb2=(0.0, 1.0, 6))
    ax = plot_phase_diagram(diagram, critical_line("erf"), depth=50)
    assert isinstance(ax, Axes) and ax.get_xlabel() == r"$\sigma_w^2$"
    assert any(line.get_gid() == "critical line" for line in ax.lines)
    assert "trainable" in " ".join(t.get_text() for t in ax.get_legend().get_texts())
    ax2 = plot_critical_lines([critical_line("tanh"), critical_line("gelu")])
    assert len(ax2.lines) >= 3
