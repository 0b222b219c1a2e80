"""The ``depthdyn report`` main job: every claim, a figure set and the modes of each family.

:func:`write_report` runs all claims of the source documents, draws a stability-region
figure and a trajectory figure for each family of the sources in :data:`~depthdyn.families.FAMILIES`
(plus a root locus where the region alone says little), derives each family's
characteristic polynomial, roots, modes and exact stability conditions, and writes

* ``report.md``: first the answer to "what can I trust?": a per-source table of source
  statements that hold, fail, hold with a caveat or are not checked (a statement with
  several readings counts once); then the statements that are false as printed, each with
  the correct value or a counterexample; the caveats; the full claims table; the table of
  statements not checked and why; and one section per family whose figures say which
  recurrence they draw, from which source equation, and where it differs from it;
* ``claims.json``: one JSON object per claim (as ``depthdyn verify --json``);
* ``figures/*.png``.

Every file is written atomically (a temporary file in the same directory, then
:func:`os.replace`); the previous ``report.md`` and ``claims.json`` are removed first and
written again last, so an interrupted run never leaves a stale pair. A directory the
report did not create (no ``.depthdyn-report`` marker) and that is not empty is refused
unless ``force=True``. Figures are drawn on
:class:`matplotlib.figure.Figure` objects, never through ``pyplot``.
"""

from __future__ import annotations

import io
import json
import math
import os
import tempfile
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import sympy as sp

from .errors import ParameterError

__all__ = ["ReportSummary", "write_report", "atomic_write", "claim_directory", "MARKER"]

#: Name of the marker file that says a directory was made by ``depthdyn report``.
MARKER = ".depthdyn-report"
_MARKER_TEXT = "This directory was written by `depthdyn report`; it may be overwritten by it.\n"
_DPI = 100
_SIZE = (6.4, 4.8)


# ------------------------------------------------------------------ files
def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path, data: bytes | str) -> Path:
    """Write ``data`` to ``path`` atomically: a temporary file in the same directory, then ``os.replace``.

    A reader sees either the old file or the complete new one; on any failure the
    temporary file is removed and ``path`` is left as it was.

    Parameters
    ----------
    path : str or Path
    data : bytes or str
        Text is written as UTF-8.

    Returns
    -------
    Path
    """
    path = Path(path)
    if not isinstance(data, (str, bytes, bytearray, memoryview)):
        raise TypeError(f"atomic_write needs bytes or str, got {type(data).__name__}")
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a report is an ordinary file
        os.replace(tmp, path)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return path


def claim_directory(
    out, marker: str, marker_text: str, force: bool = False, *, command: str = "depthdyn report"
) -> Path:
    """Create ``out`` or accept it (missing, empty, marked by ``marker``, or ``force``); mark it.

    A non-empty directory without the marker belongs to someone else and is refused, so
    a mistyped ``--out`` never scatters files into a foreign directory. Every problem
    (a file in the way, no permission, a name too long) is a :class:`ParameterError`.
    """
    out = Path(out)
    try:
        if out.exists() and not out.is_dir():
            raise ParameterError(f"{out} exists and is not a directory; choose another --out")
        with suppress(FileExistsError):
            out.mkdir(parents=True)
        if not out.is_dir():
            raise ParameterError(f"{out} exists and is not a directory; choose another --out")
        # race-free: the marker is the first entry any run creates (O_EXCL), so a directory
        # with entries but no marker was never claimed, and two runs into one new directory
        # both see it empty or marked
        if not (out / marker).is_file():
            with os.scandir(out) as entries:
                foreign = any(entry.name != marker for entry in entries)
            if foreign and not force:
                raise ParameterError(
                    f"{out} is not empty and was not written by {command}; "
                    "choose another --out or pass --force to write into it"
                )
            _create_marker(out / marker, marker_text)
    except OSError as exc:
        raise ParameterError(f"cannot write to {out}: {exc.strerror or exc}") from None
    return out


def _create_marker(path: Path, text: str) -> None:
    """Create the marker exclusively (``O_CREAT | O_EXCL``); one already there is kept."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:
        return
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def _prepare_dir(out: Path, force: bool) -> None:
    """Claim ``out`` for the report and drop the previous report's set of files.

    ``report.md`` and ``claims.json`` are removed before anything new is written and come
    back last, so an interrupted run never leaves an old ``report.md`` beside a new
    ``claims.json``.
    """
    claim_directory(out, MARKER, _MARKER_TEXT, force)
    try:
        (out / "figures").mkdir(exist_ok=True)
        for name in ("report.md", "claims.json"):
            (out / name).unlink(missing_ok=True)
    except OSError as exc:
        raise ParameterError(f"cannot write to {out}: {exc.strerror or exc}") from None


# ------------------------------------------------------------------ figures
@dataclass(frozen=True)
class FigureSpec:
    """One figure: a file stem, a drawing function ``draw(fig)`` and its caption."""

    stem: str
    draw: Callable
    caption: str


def _fig():
    from matplotlib.figure import Figure

    return Figure(figsize=_SIZE, layout="constrained")


def _region(rec_fn, x, y, **fixed):
    def draw(fig):
        from .plot import plot_stability_region

        plot_stability_region(rec_fn(), ax=fig.add_subplot(), x=x, y=y, **fixed)  # complex plane: equal aspect

    return draw


def _traj(rec_fn, initial, L, param, values, yscale=None, **fixed):
    def draw(fig):
        from .plot import plot_trajectories

        plot_trajectories(rec_fn(), initial, L, ax=fig.add_subplot(), param=param, values=values,
                          scale=yscale or "linear", **fixed)

    return draw


def _locus(rec_fn, param, values, **fixed):
    def draw(fig):
        from .plot import plot_root_locus

        plot_root_locus(rec_fn(), param, values, ax=fig.add_subplot(), **fixed)

    return draw


def _oscillator_traj(fig):
    """Both discretisations of the oscillator toy from x_0 = x_1 = 1, with cos(beta l / L)."""
    from .families import oscillator
    from .plot import plot_trajectories

    beta, depth, layers = math.pi / 2, 16, 64
    ax = fig.add_subplot()
    for form in ("block", "explicit"):
        rec = oscillator(form=form, L=depth)
        plot_trajectories(rec, [1.0, 1.0], layers, ax=ax, param="beta", values=[beta])
    block, explicit = ax.get_lines()[:2]
    block.set_label(r"block form: $x_{l+1} - (2 - \beta^2/L^2)\,x_l + x_{l-1} = 0$")
    explicit.set_label(r"explicit form (as printed): $x_{l+1} - 2x_l + (1 + \beta^2/L^2)\,x_{l-1} = 0$")
    ll = np.linspace(0, layers, 400)
    ax.plot(ll, np.cos(beta * ll / depth), color="0.3", lw=1.0, ls="--", label=r"continuum $\cos(\beta l / L)$")
    ax.set_title(rf"oscillator toy: $x_l$ over depth ($\beta = \pi/2$, $L = {depth}$)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), fontsize="small", frameon=False)


def report_families() -> dict:
    """The registry's families of the five sources (those defined in :mod:`depthdyn.families`).

    The literature's families and the multistep methods are drawn by the docs gallery.
    """
    from .families import FAMILIES

    return {name: fam for name, fam in FAMILIES.items() if fam.factory.__module__ == "depthdyn.families"}


def _family_recs() -> dict[str, Callable]:
    from . import families as fam

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
_NOTES = {
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
_MODELS = {
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


def _specs() -> dict[str, list[FigureSpec]]:
    from . import families as fam

    R = _family_recs()
    osc_locus = np.linspace(0.0, 2.5, 126)
    return {
        "residual": [
            FigureSpec("residual-region",
                       _region(R["residual"], ("re(lam)", -3, 1, 301), ("im(lam)", -2, 2, 301)),
                       "Residual block in the complex `lam` plane: shaded points are strictly stable "
                       "(`|1 + lam| < 1`), the disc of radius 1 about `lam = -1`; the dashed curve is the "
                       "exact boundary locus `lam = e^{it} - 1`."),
            FigureSpec("residual-trajectories",
                       _traj(R["residual"], [1.0], 30, "lam", [0.05, -0.5, -1.5, -2.1], yscale="symlog"),
                       "Residual block, `x_l` over 30 layers from `x_0 = 1` (symmetric log scale) for real "
                       "`lam` = 0.05 (slow growth, "
                       "factor 1.05), -0.5 (monotone decay), -1.5 (alternating decay, factor -0.5) and -2.1 "
                       "(alternating growth, factor -1.1)."),
        ],
        "rezero": [
            FigureSpec("rezero-region", _region(R["rezero"], ("re(lam)", -3, 1, 301), ("a", 0, 3, 201)),
                       "ReZero over real `lam` and gain `a`: shaded points are strictly stable; the coloured "
                       "curves are the exact boundaries `a lam = 0` (`lam = 0`) and `a lam = -2` (a "
                       "hyperbola), "
                       "so at `a = 0` (the initialisation) no point is strictly stable: the block is the "
                       "identity."),
            FigureSpec("rezero-trajectories", _traj(R["rezero"], [1.0], 30, "a", [0.0, 0.5, 2.5], lam=-1),
                       "ReZero at `lam = -1`, `x_l` from `x_0 = 1` for `a` = 0 (identity: constant), 0.5 "
                       "(factor 0.5, decay) and 2.5 (factor -1.5, alternating growth)."),
        ],
        "weighted": [
            FigureSpec("weighted-region", _region(R["weighted"], ("re(lam)", -3, 2, 301), ("a", -2, 2, 201)),
                       "Weighted residual over real `lam` and skip weight `a`: strictly stable exactly on "
                       "the "
                       "diagonal band `-1 < a + lam < 1`, bounded by the two exact lines drawn."),
            FigureSpec("weighted-trajectories",
                       _traj(R["weighted"], [1.0], 30, "a", [0.5, 1.0, 1.2], lam=-0.1),
                       "Weighted residual at `lam = -0.1`, `x_l` from `x_0 = 1` for `a` = 0.5, 1.0, 1.2 "
                       "(factors 0.4, 0.9 and 1.1: fast decay, slow decay, growth)."),
        ],
        "highway": [
            FigureSpec("highway-region", _region(R["highway"], ("re(lam)", -3, 2, 301), ("g", 0, 1, 201)),
                       "Highway block over real `lam` and gate `g`: shaded points are strictly stable; the "
                       "exact "
                       "boundaries are `lam = 1` and `g (lam - 1) = -2`; at `g = 0` (gate closed) the block "
                       "is "
                       "the identity and nothing is strictly stable."),
            FigureSpec("highway-trajectories", _traj(R["highway"], [1.0], 30, "g", [0.0, 0.5, 1.0], lam=0.5),
                       "Highway block at `lam = 0.5`, `x_l` from `x_0 = 1` for gate `g` = 0, 0.5, 1 "
                       "(factors 1, 0.75, 0.5: the more open the gate, the faster the decay)."),
        ],
        "momentum": [
            FigureSpec("momentum-region",
                       _region(R["momentum"], ("re(lam)", -5, 1, 301), ("m", 0, 0.99, 200), eta=1),
                       "Momentum block at `eta = 1` over real `lam` and carry `m`: shaded points are "
                       "strictly "
                       "stable; the exact boundary is `lam = 0` and `lam = -2(1 + m)`, so momentum widens "
                       "the "
                       "stable interval from `(-2, 0)` at `m = 0` towards `(-4, 0)`."),
            FigureSpec("momentum-trajectories",
                       _traj(R["momentum"], [1.0, 1.0], 40, "m", [0.0, 0.5, 0.9], lam=-0.3, eta=1),
                       "Momentum block at `lam = -0.3`, `eta = 1`, `x_l` from `x_0 = x_1 = 1` for `m` = 0 "
                       "(plain residual, monotone decay), 0.5 and 0.9 (complex roots of modulus `sqrt(m)`: "
                       "damped oscillation, slower for larger `m`)."),
        ],
        "oscillator": [
            FigureSpec("oscillator-region",
                       _region(R["oscillator"], ("beta", 0, 6, 301), ("L", 0.25, 4, 200)),
                       "Oscillator toy (block form) over `beta` and `L`: no point is strictly stable (the "
                       "roots' product is 1, legend: exact 'never strictly stable'); the dark area is where "
                       "the root condition holds (two simple roots on the unit circle), `0 < beta < 2L`."),
            FigureSpec("oscillator-trajectories", _oscillator_traj,
                       "Oscillator toy at `beta = pi/2`, `L = 16`, 64 layers from `x_0 = x_1 = 1`: the block "
                       "form follows the continuum `cos(beta l / L)` (dashed) with constant amplitude, the "
                       "explicit form as printed in 000 §3 grows (root modulus `sqrt(1 + beta^2/L^2) > 1`)."),
            FigureSpec("oscillator-root-locus",
                       _locus(lambda: fam.oscillator(L=1), "beta", osc_locus),
                       "Roots of the block-form oscillator at `L = 1` as `beta` goes from 0 to 2.5: a double "
                       "root at `r = 1` for `beta = 0`, then a conjugate pair on the unit circle until "
                       "`beta = 2`, after which both roots are real and negative and one leaves the circle."),
        ],
        "smooth": [
            FigureSpec("smooth-region",
                       _region(R["smooth"], ("re(lam)", -4.5, 0.5, 301), ("im(lam)", -2.5, 2.5, 301), h=1),
                       "`C^2` smooth network (`h = 1`) in the complex `lam` plane: no `lam` is strictly "
                       "stable "
                       "(the product of the roots is 1); the boundary locus degenerates to the real segment "
                       "`[-4, 0]`, the only place where both roots lie on the unit circle."),
            FigureSpec("smooth-root-locus",
                       _locus(R["smooth"], "lam", np.linspace(-5.0, 1.0, 121), h=1),
                       "Roots of the `C^2` network (`h = 1`) as real `lam` moves from -5 to 1: a reciprocal "
                       "pair `r, 1/r`; on the unit circle for `-4 <= lam <= 0`, one root outside otherwise."),
            FigureSpec("smooth-trajectories",
                       _traj(R["smooth"], [1.0, 1.0], 30, "lam", [0.2, -1.0, -3.0, -4.5], yscale="symlog",
                             h=1),
                       "`C^2` network (`h = 1`), `x_l` from `x_0 = x_1 = 1` on a symmetric log scale for "
                       "`lam` = "
                       "-1 and -3 (bounded oscillation: roots on the unit circle), 0.2 (monotone growth) "
                       "and -4.5 "
                       "(alternating growth): outside `[-4, 0]` one root lies outside the circle."),
        ],
        "dense": [
            FigureSpec("dense-region",
                       _region(R["dense"], ("re(lam)", -3, 1, 301), ("im(lam)", -2, 2, 301), h=1),
                       "Dense network, `k = 2` lags, `h = 1`, in the complex `lam` plane: the root `r = -1` "
                       "is "
                       "always present, so nothing is strictly stable; the dark disc `|1 + lam| < 1` is "
                       "where "
                       "the root condition holds, bounded by the dashed boundary locus."),
            FigureSpec("dense-trajectories",
                       _traj(R["dense"], [1.0, 0.5], 30, "lam", [-0.5, -1.5, -2.5], yscale="symlog", h=1),
                       "Dense network (`k = 2`, `h = 1`), `x_l` from `x_0 = 1`, `x_1 = 0.5` on a symmetric "
                       "log "
                       "scale for `lam` = -0.5, "
                       "-1.5 (the residual mode `(1 + lam)^l` decays, the `(-1)^l` mode persists) and -2.5 "
                       "(the residual mode grows)."),
        ],
        "entangled": [
            FigureSpec("entangled-region",
                       _region(R["entangled"], ("re(lam)", -3, 1, 301), ("gamma", 0, 1, 201)),
                       "Entangled residual, uniform `Gamma`, `n = 3`, over real `lam` and `gamma`: strictly "
                       "stable where both eigenvalues `1 + lam` and `1 - gamma + lam` of the one-step map "
                       "lie in "
                       "`(-1, 1)`, i.e. `gamma - 2 < lam < 0`; lines are the exact Schur–Cohn boundaries."),
            FigureSpec("entangled-trajectories",
                       _traj(R["entangled"], [[1.0, 0.0, 0.0]], 20, "gamma", [0.0, 0.4, 0.8], yscale="log",
                             lam=-1.5),
                       "Entangled residual (`n = 3`) at `lam = -1.5`, `|x_l|` (log scale) from `x_0 = e_1` "
                       "for "
                       "`gamma` = 0, 0.4, 0.8: eigenvalue `-0.5 - gamma` has modulus 0.5, 0.9, 1.3, so "
                       "decay, "
                       "slow decay and growth."),
        ],
        "hyper_connection": [
            FigureSpec("hyper_connection-region",
                       _region(R["hyper_connection"], ("re(lam)", -3, 1, 301), ("hres_1_1", 0, 1, 201)),
                       "Hyper-connections, 2 streams, `H_pre = [1, 0]`, `H_post = [1, 1]`, over real `lam` "
                       "and "
                       "`h = hres_1_1`: the eigenvalues are `1 + lam` and `2h - 1`, so the strictly stable "
                       "set "
                       "is `-2 < lam < 0`, `0 < h < 1`; lines are the exact Schur–Cohn boundaries."),
            FigureSpec("hyper_connection-trajectories",
                       _traj(R["hyper_connection"], [[1.0, 0.0]], 20, "hres_1_1", [0.0, 0.25, 1.0], lam=-0.5),
                       "Hyper-connections (2 streams) at `lam = -0.5`, `|x_l|` from `x_0 = e_1` for `h` = 0, "
                       "0.25, 1. The eigenvalues are `1 + lam = 0.5` and `2h - 1`: at `h = 0` (swap) and `h "
                       "= 1` "
                       "(identity `H_res`) the second is -1 or 1 and `|x_l|` settles at a non-zero "
                       "constant; at "
                       "`h = 0.25` it is -0.5 and `x_l` decays to 0."),
        ],
        "general": [
            FigureSpec("general-region",
                       _region(R["general"], ("re(lam)", -1.5, 0.5, 301), ("im(lam)", -1, 1, 301)),
                       "Adams–Bashforth 2 depth model in the complex `lam` plane: the shaded points are "
                       "strictly "
                       "stable; the dashed curve is the exact boundary locus `lam = rho(e^{it}) / "
                       "sigma(e^{it})`; "
                       "on the real axis the interval is `(-1, 0)`."),
            FigureSpec("general-trajectories",
                       _traj(R["general"], [1.0, 1.0], 40, "lam", [-0.5, -0.9, -1.1], yscale="symlog"),
                       "Adams–Bashforth 2 model, `x_l` from `x_0 = x_1 = 1` (symmetric log scale) for real "
                       "`lam` = -0.5 (decay), "
                       "-0.9 (slow alternating decay) and -1.1 (outside `(-1, 0)`: alternating growth)."),
        ],
        **_multistep_specs(R),
    }


def _multistep_specs(R) -> dict[str, list[FigureSpec]]:
    """Region (with the exact intervals and A(alpha) sector marked) and trajectories per method."""
    marks = "thick segments mark the exact real and imaginary stability intervals of `depthdyn stability`"
    return {
        "adams_bashforth": [
            FigureSpec("adams_bashforth-region",
                       _region(R["adams_bashforth"], ("re(lam)", -1, 0.3, 201), ("im(lam)", -1, 1, 201),
                               numbers=True),
                       f"Adams–Bashforth 3 in the complex `z = lam` plane; {marks}: `(-6/11, 0)` on the real "
                       "axis and `i (-12 sqrt(11)/55, 12 sqrt(11)/55)` (about `+-0.7236 i`)."),
            FigureSpec("adams_bashforth-trajectories",
                       _traj(R["adams_bashforth"], [1.0, 1.0, 1.0], 40, "lam", [-0.3, -0.5, -0.6],
                             yscale="symlog"),
                       "Adams–Bashforth 3, `x_l` from `x_0 = x_1 = x_2 = 1` for real `lam` = -0.3, -0.5 "
                       "(inside `(-6/11, 0)`: decay) and -0.6 (outside: growth)."),
        ],
        "adams_moulton": [
            FigureSpec("adams_moulton-region",
                       _region(R["adams_moulton"], ("re(lam)", -7, 1, 201), ("im(lam)", -4, 4, 201)),
                       "Adams–Moulton 2 (order 3) in the complex `lam` plane: the dashed boundary locus meets "
                       "the real axis at -6 and 0 (`depthdyn stability adams_moulton -p k=2`)."),
            FigureSpec("adams_moulton-trajectories",
                       _traj(R["adams_moulton"], [1.0, 1.0], 40, "lam", [-1.0, -5.0, -6.5], yscale="symlog"),
                       "Adams–Moulton 2, `x_l` from `x_0 = x_1 = 1` for `lam` = -1, -5 (inside `(-6, 0)`) "
                       "and -6.5 (outside: alternating growth)."),
        ],
        "bdf": [
            FigureSpec("bdf-region",
                       _region(R["bdf"], ("re(lam)", -6, 12, 201), ("im(lam)", -9, 9, 201), numbers=True),
                       f"BDF 3 in the complex `lam` plane: stable outside the bounded curve; {marks}, and "
                       "the dash-dotted rays bound the A(alpha) sector, `alpha = 86.03` degrees exactly "
                       "`180 atan(329 sqrt(35)/135)/pi`."),
            FigureSpec("bdf-trajectories",
                       _traj(R["bdf"], [1.0, 1.0, 1.0], 40, "lam", [-0.5, -5.0, -50.0]),
                       "BDF 3, `x_l` from `x_0 = x_1 = x_2 = 1` for `lam` = -0.5, -5 and -50: decay for "
                       "every negative real `lam`."),
        ],
        "nystrom": [
            FigureSpec("nystrom-region",
                       _region(R["nystrom"], ("re(lam)", -1.5, 1.5, 201), ("im(lam)", -1.5, 1.5, 201)),
                       "Leapfrog (Nyström 2) in the complex `lam` plane: no point is strictly stable; the "
                       "root condition holds exactly on the segment `i (-1, 1)` (`marginal_conditions`), "
                       "drawn dark where the grid hits it."),
            FigureSpec("nystrom-trajectories",
                       _traj(R["nystrom"], [1.0, 1.0], 40, "lam", [-0.05, -0.2], yscale="symlog"),
                       "Leapfrog, `x_l` from `x_0 = x_1 = 1` for real `lam` = -0.05 and -0.2: the parasitic "
                       "root below -1 makes every negative real `lam` grow in alternation."),
        ],
        "milne_simpson": [
            FigureSpec("milne_simpson-region",
                       _region(R["milne_simpson"], ("re(lam)", -2, 2, 201), ("im(lam)", -2.5, 2.5, 201)),
                       "Milne–Simpson 2 in the complex `lam` plane: never strictly stable; the root "
                       "condition holds exactly on `i (-sqrt(3), sqrt(3))`."),
            FigureSpec("milne_simpson-trajectories",
                       _traj(R["milne_simpson"], [1.0, 1.0], 40, "lam", [-0.05, -0.5], yscale="symlog"),
                       "Milne–Simpson 2, `x_l` from `x_0 = x_1 = 1` for real `lam` = -0.05 and -0.5: slow "
                       "alternating growth from the parasitic root."),
        ],
        "lmm": [
            FigureSpec("lmm-region",
                       _region(R["lmm"], ("re(lam)", -4, 4, 201), ("im(lam)", -4, 4, 201)),
                       "The trapezoidal rule given as `alpha = [-1, 1]`, `beta = [1/2, 1/2]`: strictly stable "
                       "on the open left half-plane (A-stable); the boundary locus is the imaginary axis."),
            FigureSpec("lmm-trajectories",
                       _traj(R["lmm"], [1.0], 30, "lam", [-0.5, -3.0, 0.2], yscale="symlog"),
                       "Trapezoidal rule, `x_l` from `x_0 = 1` for `lam` = -0.5, -3 (decay, alternating for "
                       "`lam < -2`) and 0.2 (growth)."),
        ],
    }


# ------------------------------------------------------------------ modes
def _derive(rec) -> dict:
    from .symbolic.polynomial import charpoly, roots
    from .symbolic.solve import modes
    from .symbolic.stability import stability_conditions

    out = {"recurrence": rec.equation(), "charpoly": sp.sstr(charpoly(rec))}
    out["roots"] = [f"r = {sp.sstr(rt.value)}  (multiplicity {rt.multiplicity})" for rt in roots(rec)]
    out["modes"] = str(modes(rec))
    out["stability"] = str(stability_conditions(rec))
    return out


# ------------------------------------------------------------------ markdown
def _cell(text: str, width: int = 90) -> str:
    text = " ".join(str(text).split())
    if len(text) > width:
        text = text[: width - 1] + "…"
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("`", "'")


def _code(text: str, width: int = 90) -> str:
    cell = _cell(text, width)
    return f"`{cell}`" if cell else ""


def _summary_md(results) -> list[str]:
    """The first page: per source, how many of its statements hold, fail, hold with a caveat, are not checked."""
    from .claims import NOT_CHECKED, SOURCES, coverage, source_summary

    table, cov = source_summary(results), coverage(results)
    lines = ["## What can I trust? Statements of each source", "",
             "| source | statements | holds | fails (false as printed) | holds with a caveat | not checked |",
             "|---|---|---|---|---|---|"]
    for key, row in table.items():
        lines.append(f"| {key}: {_cell(SOURCES[key].title, 70)} | {row['total']} | {row['holds']} | "
                     f"**{row['fails']}** | {row['holds-with-caveat']} | {row['not checked']} |")
    tot = {k: sum(row[k] for row in table.values()) for k in next(iter(table.values()))}
    lines += [f"| **all** | {tot['total']} | {tot['holds']} | **{tot['fails']}** | {tot['holds-with-caveat']} | "
              f"{tot['not checked']} |", "",
              f"Counted per source statement: {cov['covered']} statements are checked by {len(results)} claims "
              "(an ambiguous statement gives one claim per reading, a compound one a claim per part, and counts "
              f"once), {len(NOT_CHECKED)} are listed below as not checked, with the reason.", "",
              "Verdict policy: **fails** means false under the plain reading of the sentence as printed (even "
              "where a charitable reading would make it true: the note gives that reading); **holds with a "
              "caveat** means true as printed only with a condition the source leaves unstated, or only in a "
              "limit it implies (the note names it); a statement whose readings disagree counts as a caveat. "
              "Every verdict is computed from the source's premises and changes when the stated value or a "
              "premise is changed (tests/test_claims_mutation.py).", ""]
    return lines


def _claims_md(results, counts) -> list[str]:
    from .claims import NOT_CHECKED, SOURCES

    fails = [r.to_json() for r in results if r.verdict == "fails"]
    lines = ["## False as printed", "",
             f"{len(fails)} claims are false under the plain reading; each with the correct value or a "
             "counterexample.", ""]
    for j in fails:
        lines += [f"* **{j['id']}** ({j['source'][:3]} {j['section']}): {' '.join(j['statement'].split())}",
                  f"  * as printed: `{_cell(j['stated'], 400)}`",
                  f"  * correct / counterexample: `{_cell(j['computed'], 400)}`"]
        if j["note"]:
            lines.append(f"  * note: {' '.join(j['note'].split())}")
    caveats = [r.to_json() for r in results if r.verdict == "holds-with-caveat"]
    lines += ["", "## True only with a caveat", ""]
    if not caveats:
        lines.append("None.")
    for j in caveats:
        note = " ".join(j["note"].split()) or "see claims.json"
        lines.append(f"* **{j['id']}** ({j['source'][:3]} {j['section']}): {' '.join(j['statement'].split())}. "
                     f"*Condition:* {note}")
    lines += ["", "## All claims", "",
              f"{counts['total']} claims, each checked by computation with depthdyn (`depthdyn verify` prints "
              "the same table; `claims.json` holds the full records, `statement_key` naming the source "
              "statement a reading belongs to). The experimental claims (002 §4, 000 §8, 003 §5) need "
              "trained networks: `depthdyn verify --trained` with the torch extra.", "",
              "| id | § | verdict | statement | stated | computed |", "|---|---|---|---|---|---|"]
    for res in results:
        j = res.to_json()
        lines.append(f"| {_cell(j['id'])} | {_cell(j['section'], 30)} | **{j['verdict']}** | "
                     f"{_cell(j['statement'], 140)} | {_code(j['stated'])} | {_code(j['computed'])} |")
    lines += ["", "## Not checked", "", "| source | § | statement | why not |", "|---|---|---|---|"]
    for u in NOT_CHECKED:
        lines.append(f"| {u.source} ({_cell(SOURCES[u.source].short)}) | {_cell(u.section, 30)} | "
                     f"{_cell(u.statement, 140)} | {_cell(u.reason, 240)} |")
    return lines


def _family_md(name, fam, rec, derived, figures) -> list[str]:
    lines = [f"### {name}", "", f"{fam.summary}. {_NOTES.get(name, '')}".rstrip(),
             "", f"Source: {rec.source or '—'}.", "", "```text",
             f"recurrence:     {derived['recurrence']}",
             f"charpoly:       {derived['charpoly']}", "roots:"]
    lines += [f"  {line}" for line in derived["roots"]]
    lines += [f"modes:          {derived['modes']}", "stability:"]
    lines += [f"  {line}" for line in derived["stability"].splitlines()]
    lines += ["```", ""]
    if not rec.is_scalar:
        lines += ["The modes are those of `det(r I - M)`; every component of `x_l` is a combination of them "
                  "(terms `l r^l` of a repeated eigenvalue vanish when the one-step map is "
                  "diagonalisable).", ""]
    drawn, equation, differs = _MODELS[name]
    for number, rel, caption in figures:
        alt = Path(rel).stem.replace("_", " ").replace("-", " ")
        lines += [f"![{alt}]({rel})", "", f"*Figure {number}.* {caption}", "",
                  f"*Recurrence drawn:* `{drawn}`. *Source equation:* {equation}. *Differs from the source:* "
                  f"{differs}.", ""]
    return lines


# ------------------------------------------------------------------ the job
@dataclass(frozen=True)
class ReportSummary:
    """What :func:`write_report` wrote: paths, verdict counts and the time taken."""

    out_dir: Path
    report: Path
    claims: Path
    figures: tuple[Path, ...]
    counts: dict = field(default_factory=dict)
    seconds: float = 0.0

    def __str__(self) -> str:
        c = self.counts
        return (f"{c.get('total', 0)} claims: {c.get('holds', 0)} hold, {c.get('fails', 0)} fail, "
                f"{c.get('holds-with-caveat', 0)} hold with a caveat\n"
                f"report:  {self.report}\nclaims:  {self.claims}\n"
                f"figures: {len(self.figures)} PNG files in {self.out_dir / 'figures'}\n"
                f"done in {self.seconds:.1f} s")


def _render(spec: FigureSpec, path: Path) -> None:
    fig = _fig()
    spec.draw(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI)
    atomic_write(path, buf.getvalue())


def write_report(out_dir="report", force: bool = False) -> ReportSummary:
    """Run every claim, draw every family's figures and write the report into ``out_dir``.

    Parameters
    ----------
    out_dir : str or Path
        Created if missing. An existing non-empty directory is accepted only when it holds
        the ``.depthdyn-report`` marker of an earlier report, or with ``force``.
    force : bool
        Write into a non-empty directory the report did not create (files of the same
        names are replaced; other files are left alone).

    Returns
    -------
    ReportSummary

    Raises
    ------
    ParameterError
        ``out_dir`` is a file, a non-empty foreign directory without ``force``, or unwritable.
    ClaimError
        A claim's check failed internally (a bug in depthdyn).
    """
    out = Path(out_dir)
    _prepare_dir(out, force)
    return _build(out)


def _build(out: Path) -> ReportSummary:
    """Run the claims, draw the figures and write every file into the prepared ``out``."""
    from .claims import run_claims, summary

    start = time.perf_counter()
    results = run_claims()
    counts = summary(results)

    specs, recs = _specs(), _family_recs()
    families = report_families()
    missing = [name for name in families if name not in specs]
    if missing:  # a new family needs its figures chosen here
        raise ParameterError(f"the report has no figures for the families {missing}")
    sections, written, number = [], [], 0
    for name, fam in families.items():
        rec = recs[name]()
        figures = []
        for spec in specs[name]:
            number += 1
            rel = f"figures/{spec.stem}.png"
            _render(spec, out / rel)
            written.append(out / rel)
            figures.append((number, rel, spec.caption))
        sections += _family_md(name, fam, rec, _derive(rec), figures)

    from . import __version__

    tally = (f"**{counts['holds']} hold**, **{counts['fails']} fail**, "
             f"**{counts['holds-with-caveat']} hold with a caveat**")
    head = [
        "# depthdyn report", "",
        f"Written by `depthdyn report` (depthdyn {__version__}). Re-run it with "
        f"`depthdyn report --out {out.as_posix()}`; every number below is computed, none is copied.", "",
        *_summary_md(results),
        "## Summary", "",
        f"* {counts['total']} claims from the five source documents and the literature: {tally}.",
        f"* {len(families)} families of the sources, each with its exact characteristic polynomial, roots, modes and "
        f"Schur–Cohn stability conditions, and {len(written)} figures.",
        "* Files: `claims.json` (one object per claim: id, source, section, statement, stated, computed, "
        "verdict, method, note) and `figures/*.png`.", "",
        "Each family's figures name the recurrence they draw, its source equation and where the two differ.",
        "",
        "Stability below means all characteristic roots strictly inside the unit circle (`lam` real unless "
        "the "
        "figure uses the complex `lam` plane). In the region figures the light fill marks strictly stable "
        "grid "
        "points, a darker fill marks points where only the root condition holds (simple roots on the unit "
        "circle), and the drawn curves are the exact boundaries (boundary locus dashed, each exact "
        "Schur–Cohn "
        "condition `expr = 0` as a coloured line).", "",
    ]
    body = head + _claims_md(results, counts) + ["", "## Families", ""] + sections
    # the pair is written last, claims first: report.md present means the set is complete
    atomic_write(out / "claims.json",
                 json.dumps([r.to_json() for r in results], ensure_ascii=False, indent=2) + "\n")
    report = atomic_write(out / "report.md", "\n".join(body).rstrip() + "\n")
    return ReportSummary(out, report, out / "claims.json", tuple(written), counts,
                         time.perf_counter() - start)
