"""Draw the figures of docs/meanfield.md into docs/_static/meanfield/ (SVG).

Run from the repository root: ``python docs/meanfield_figures.py``. Every number in the
figures is computed here by depthdyn or by the small random networks simulated below;
nothing is typed in.
"""

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

import depthdyn as dd
from depthdyn import meanfield as mf
from depthdyn.plot.meanfield import plot_correlations, plot_critical_lines, plot_phase_diagram

OUT = Path(__file__).resolve().parent / "_static" / "meanfield"


def _save(ax, name: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    ax.figure.savefig(OUT / name, format="svg")


def _ax(size=(6.4, 4.6)):
    return Figure(figsize=size, layout="constrained").add_subplot()


def simulate_correlations(sw2, sb2, depth, *, width=1000, seeds=16, c0=0.5, q0=1.0):
    """c_l of two inputs through random tanh networks of the given width: (layers, mean, low, high)."""
    rng = np.random.default_rng(0)
    cs = np.empty((seeds, depth + 1))
    for s in range(seeds):
        # two inputs with variance q0 per unit and correlation c0
        z, _ = np.linalg.qr(rng.standard_normal((width, 2)))  # exactly variance 1 and correlation c0
        z1, z2 = np.sqrt(width) * z.T
        h = np.sqrt(q0) * np.stack([z1, c0 * z1 + np.sqrt(1 - c0 ** 2) * z2])
        cs[s, 0] = c0
        for layer in range(depth):
            W = rng.standard_normal((width, width)) * np.sqrt(sw2 / width)
            b = rng.standard_normal(width) * np.sqrt(sb2)
            h = np.tanh(h) @ W.T + b
            cs[s, layer + 1] = (h[0] @ h[1]) / np.sqrt((h[0] @ h[0]) * (h[1] @ h[1]))
    mean = cs.mean(axis=0)
    half = 1.96 * cs.std(axis=0, ddof=1) / np.sqrt(seeds)
    return np.arange(depth + 1), mean, mean - half, mean + half


def main() -> None:
    line = mf.critical_line("tanh")
    diagram = mf.phase_diagram("tanh")
    _save(plot_phase_diagram(diagram, line, ax=_ax(), depth=[30, 200]), "phase_tanh.svg")

    ax = plot_critical_lines([mf.critical_line(a) for a in ("tanh", "erf", "gelu", "relu")], ax=_ax())
    ax.set_xlim(0, 5)
    ax.set_ylim(0, 2)
    _save(ax, "critical_lines.svg")

    ax = _ax()
    for sw2, sb2 in ((1.2, 0.05), (2.5, 0.1)):
        it = mf.iterate("tanh", sw2, sb2, depth=30, q0=1.0, c0=0.5)
        plot_correlations(it, ax=ax, simulation=simulate_correlations(sw2, sb2, 30),
                          label=rf"mean field, $\sigma_w^2 = {sw2:g}$, $\sigma_b^2 = {sb2:g}$")
    ax.set_title("tanh: correlation of two inputs over depth")
    _save(ax, "correlations_tanh.svg")

    # the linear theory: near c* = 1, eps_l follows the first-order recurrence eps' = chi_c eps,
    # depthdyn's residual family with lam = chi_c - 1 (one root r = chi_c)
    fp = mf.fixed_point("tanh", 1.5, 0.05)
    root = complex(dd.roots(dd.residual(lam=fp.chi_c - 1))[0].value)
    it = mf.iterate("tanh", 1.5, 0.05, depth=60, q0=fp.q_star, eps0=1e-3)
    ax = _ax()
    layers = np.arange(61)
    ax.semilogy(layers, it.eps, "o", ms=3, label=r"$1 - c_l$ from the mean-field map")
    ax.semilogy(layers, 1e-3 * root.real ** layers, label=rf"$10^{{-3}} r^l$, $r = \chi_c = {root.real:.4f}$")
    ax.set_xlabel("layer $l$")
    ax.set_ylabel(r"$1 - c_l$")
    ax.set_title(r"the linearised map: residual recurrence with $\lambda = \chi_c - 1$")
    ax.legend(frameon=False)
    _save(ax, "linear_theory.svg")


if __name__ == "__main__":
    main()
