"""Draw the figures of docs/products.md into docs/_static/products/ (SVG).

Run from the repository root: ``python docs/products_figures.py``. Every number in the
figures is computed here by depthdyn; nothing is typed in.
"""

from pathlib import Path

import numpy as np
import sympy as sp
from matplotlib.figure import Figure

import depthdyn as dd
from depthdyn.products import hc_vs_mhc, stability_switches

OUT = Path(__file__).resolve().parent / "_static" / "products"


def _save(ax, name: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    ax.figure.savefig(OUT / name, format="svg")


def _ax(size=(6.4, 4.4)):
    return Figure(figsize=size, layout="constrained").add_subplot()


def main() -> None:
    a, b = sp.symbols("a b")
    half = sp.Rational(1, 2)
    # 1. residual with lam alternating a, b: |(1 + a)(1 + b)| < 1
    pattern = dd.periodic(dd.residual(lam=a), dd.residual(lam=b))
    _save(dd.plot.plot_stability_region(pattern, x=("a", -3.5, 1.5, 401), y=("b", -3.5, 1.5, 401), ax=_ax()),
          "residual_ab.svg")
    # 2. momentum (m = 1/2, eta = 1) with lam alternating: the period against the constant stack
    mom = dd.periodic(dd.momentum(lam=a, m=half, eta=1), dd.momentum(lam=b, m=half, eta=1))
    ax = dd.plot.plot_stability_region(mom, x=("a", -4.5, 1, 401), y=("b", -4.5, 1, 401), ax=_ax())
    sw = stability_switches(mom, {"a": np.linspace(-4, 1, 101), "b": np.linspace(-4, 1, 101)})
    point = sw["layers stable, period unstable"]
    if point is not None:
        (_, va), (_, vb) = point.values
        ax.plot([float(va)], [float(vb)], "r*", ms=12, label="layers stable, period unstable (grid search)")
        ax.legend(fontsize="small", loc="lower left")
    _save(ax, "momentum_ab.svg")
    # 3. Lyapunov exponents of a periodic pattern converging to log|mu| / p
    at = {"a": -0.25, "b": -1.5}
    pat = dd.periodic(dd.momentum(lam=a, m=half, eta=1), dd.momentum(lam=b, m=sp.Rational(1, 5), eta=1))
    C = pat.numeric_layers(at)
    mult = np.linalg.eigvals(np.array(pat.subs({k: sp.nsimplify(v) for k, v in at.items()}).monodromy,
                                      dtype=float))
    exact = sorted(np.log(np.abs(mult)) / 2, reverse=True)
    spec = dd.lyapunov(np.tile(C, (500, 1, 1)))
    _save(dd.plot.plot_exponents(spec, exact=exact, ax=_ax()), "lyapunov_periodic.svg")
    # 4. HC against mHC over 60 seeded layers
    _save(dd.plot.plot_composite_gains(hc_vs_mhc(layers=60, n=4, samples=8, seed=0), ax=_ax()), "hc_mhc.svg")


if __name__ == "__main__":
    main()
