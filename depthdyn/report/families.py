"""The families of the report: which recurrence each section analyses, and what it says about it.

:func:`report_families` picks the registry's families of the five sources (and the multistep
methods, drawn too); :func:`family_recurrences` gives the instance each section analyses and
draws; :data:`NOTES` is the line a section opens with and :data:`MODELS` says, for each
family's figures, which recurrence they draw, from which source equation, and where it
differs from it.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["report_families", "family_recurrences", "NOTES", "MODELS"]


def report_families() -> dict:
    """The registry's families of the five sources (those of :mod:`depthdyn.families.sources`).

    The literature's families and the multistep methods are drawn by the docs gallery.
    """
    from ..families import FAMILIES

    sources = "depthdyn.families.sources"
    return {name: fam for name, fam in FAMILIES.items() if fam.factory.__module__ == sources}


def family_recurrences() -> dict[str, Callable]:
    """Family name -> a function building the instance its report section analyses and draws."""
    from .. import families as fam

    return {
        "residual": lambda: fam.residual(),
        "rezero": lambda: fam.rezero(),
        "weighted": lambda: fam.weighted(),
        "highway": lambda: fam.highway(),
        "momentum": lambda: fam.momentum(),
        "oscillator": lambda: fam.oscillator(),
        "smooth": lambda: fam.smooth(k=2),
        "dense": lambda: fam.dense(k=2),
        "entangled": lambda: fam.entangled(n=3),
        "hyper_connection": lambda: fam.hyper_connection(n=2, H_pre=[1, 0], H_post=[1, 1]),
        "general": lambda: fam.general(rho="r**2 - r", sigma="(3*r - 1)/2"),
        "adams_bashforth": lambda: fam.adams_bashforth(k=3),
        "adams_moulton": lambda: fam.adams_moulton(k=2),
        "bdf": lambda: fam.bdf(k=3),
        "nystrom": lambda: fam.nystrom(k=2),
        "milne_simpson": lambda: fam.milne_simpson(k=2),
        "lmm": lambda: fam.from_lmm(alpha=[-1, 1], beta=["1/2", "1/2"]),
    }


#: A note on the structural choices of the recurrence each family's section analyses.
NOTES = {
    "residual": "Plain residual block, `x[l+1] = (1 + lam) x[l]`.",
    "rezero": "ReZero gain `a` on the block.",
    "weighted": "Skip weight `a` on the identity path.",
    "highway": "Transform gate `g` in [0, 1].",
    "momentum": "Second-order momentum block (velocity carry `m`, forcing scale `eta`).",
    "oscillator": "Oscillator toy of 000 §3 in the block form (the explicit form as printed is drawn "
                  "beside it in the trajectory figure).",
    "smooth": "`C^2` smooth network (`k = 2`), step `h` symbolic below; the figures use `h = 1`.",
    "dense": "Dense network with `k = 2` lags, step `h` symbolic below; the figures use `h = 1`.",
    "entangled": "Uniform entanglement on `n = 3` features, `Gamma = (gamma/3) 1 1^T + (1 - gamma) I`.",
    "hyper_connection": "Two streams with `H_pre = [1, 0]`, `H_post = [1, 1]` and a doubly stochastic "
                        "`H_res = [[h, 1-h], [1-h, h]]`, `h = hres_1_1`.",
    "general": "The Adams–Bashforth 2 depth model: `rho(r) = r^2 - r`, `sigma(r) = (3 r - 1)/2`.",
    "adams_bashforth": "Adams–Bashforth with `k = 3` steps (`lam` stands for `z = h lam`).",
    "adams_moulton": "Adams–Moulton with `k = 2` steps (order 3).",
    "bdf": "BDF with `k = 3` steps.",
    "nystrom": "Nyström with `k = 2` steps: the leapfrog rule `x[l+2] = x[l] + 2 lam x[l+1]`.",
    "milne_simpson": "Milne–Simpson with `k = 2` steps (Simpson's rule).",
    "lmm": "A method given by its coefficients: `alpha = [-1, 1]`, `beta = [1/2, 1/2]` (the trapezoidal "
           "rule).",
}


#: For each family's figures: (the recurrence drawn, its source equation, where it differs from it).
MODELS = {
    "residual": ("x[l+1] = (1 + lam) x[l]", "004 y = F(x) + x; 000 §1; 002 eq. 2",
                 "the block linearised, F(x) = lam x (one eigenmode)"),
    "rezero": ("x[l+1] = (1 + a lam) x[l]", "004 alternatives table (ReZero)", "F linearised as lam x"),
    "weighted": ("x[l+1] = (a + lam) x[l]", "004 alternatives table (weighted residual)", "F linearised as lam x"),
    "highway": ("x[l+1] = (1 - g + g lam) x[l]", "004 alternatives table (highway networks)",
                "the learned gate T(x) is a fixed number g in [0, 1]; F linearised as lam x"),
    "momentum": ("x[l+2] = (1 + m + eta lam) x[l+1] - m x[l]", "000 §2 block, §6 characteristic equation",
                 "f(LN(x)) linearised as lam x with scalar m, eta (the post has per-channel vectors)"),
    "oscillator": ("x[l+2] = (2 - beta^2/L^2) x[l+1] - x[l]", "000 §3 toy, block form (its §2 update)",
                   "not the recurrence 000 §3 prints, x[l+1] - 2 x[l] + (1 + beta^2/L^2) x[l-1] = 0 (the "
                   "explicit form, drawn beside it in the trajectory figure); see claims 000-s3-*"),
    "smooth": ("(x[l+2] - 2 x[l+1] + x[l]) = h^2 lam x[l+1] (k = 2)", "002 eq. 4c (and its state space, eq. 7, 8)",
               "sigma linearised as lam x; k = 2, h = 1 in the figures"),
    "dense": ("x[l+2] = x[l] + h lam (x[l+1] + x[l]) (k = 2)", "002 eq. 9, its first row (n = 0) imposed at "
              "every layer", "not 002's eq. 9 system nor its state space eq. 14/15: imposing every row of "
              "eq. 9 makes eq. 15's matrix (1 + h lam) I for one linear sigma, the residual mode k times, "
              "while this row-0 recurrence adds k - 1 roots of unity (claim 002-eq15-recurrence)"),
    "entangled": ("x[l+1] = (Gamma + lam I) x[l], Gamma = (gamma/3) 1 1^T + (1 - gamma) I", "001 eq. 2, 4",
                  "f linearised as lam x on n = 3 features"),
    "hyper_connection": ("X[l+1] = (H_res + lam H_post^T H_pre) X[l]", "003 eq. (3), (10)",
                         "F linearised as lam; n = 2 streams with H_pre = [1, 0], H_post = [1, 1] fixed and "
                         "H_res doubly stochastic with one free entry"),
    "general": ("x[l+2] = (1 + 3 lam/2) x[l+1] - (lam/2) x[l]", "000 §7 (a p-th order depth model)",
                "no source gives this instance: Adams-Bashforth 2 chosen as an example of a general order-2 "
                "model"),
}
