"""The check verb: symbolic against numeric at random points, for every family."""

from __future__ import annotations

import json

import numpy as np
import pytest

from depthdyn import FAMILIES, build, general, momentum, rezero, smooth
from depthdyn.errors import ParameterError
from depthdyn.numeric import check as check_module
from depthdyn.numeric import simulate as simulate_module
from depthdyn.numeric import spectra
from depthdyn.numeric.check import CheckReport, check
from depthdyn.symbolic import stability as stability_module

#: Structural arguments the task fixes; every other family is built with its defaults.
STRUCTURAL = {"smooth": {"k": 3}, "dense": {"k": 3}, "general": {"rho": "r**2 - r", "sigma": "r"},
              "kromhc": {"factors": 1},  # two symbolic 2x2 factors make a slow quartic
              "lmm": {"alpha": [-1, 0, 1], "beta": [0, 2, 0]}}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_family_passes(name):
    rec = build(name, **STRUCTURAL.get(name, {}))
    report = check(rec, samples=12, seed=1)
    assert report.passed, str(report)
    names = [row.name for row in report.rows]
    assert names[0] == "roots" and "closed form" in names
    assert any(n.startswith("stability") for n in names)
    assert "realisation companion" in names and "realisation difference" in names
    for native in rec.native:
        assert f"realisation {native.name}" in names
    assert all(row.compared > 0 for row in report.rows if not row.note.startswith("skipped"))
    degree = rec.order * rec.dim
    assert report.rows[0].compared == 12 * degree  # every root of every sample was compared


def test_stability_row_sees_both_verdicts():
    # momentum: lam in (-2, 2), m in [0, 1), eta in [0, 2]: stable and unstable points both occur
    report = check(momentum(), samples=20)
    rows = {row.name: row for row in report.rows}
    real = rows["stability (real lam)"]
    stable = int(real.note.split()[0])
    assert 0 < stable < real.compared


def test_report_prints_a_table_and_json():
    report = check(smooth(k=2), samples=4)
    text = str(report)
    assert text.splitlines()[0] == "check smooth (4 samples, seed 0): passed"
    assert "max error" in text and "realisation hauser" in text
    data = json.loads(json.dumps(report.to_json()))
    assert data["passed"] is True and data["recurrence"] == "smooth"
    assert {"name", "compared", "max_error", "tolerance", "passed", "note"} <= set(data["rows"][0])
    assert isinstance(report, CheckReport)


def test_reproducible_and_seeded():
    a, b = check(rezero(), samples=5, seed=3), check(rezero(), samples=5, seed=3)
    assert a.to_json() == b.to_json()
    assert check(rezero(), samples=5, seed=4).to_json() != a.to_json()


def test_numeric_recurrence_and_repeated_roots():
    # (r - 1/2)^2: float roots of a double root are good to sqrt(eps) only; the tolerance says so
    report = check(general(rho="r**2 - r + 1/4"), samples=3)
    assert report.passed, str(report)
    assert report.rows[0].compared == 6


# ------------------------------------------------------------- checks can fail
def test_wrong_numeric_roots_fail(monkeypatch):
    true_roots = spectra.roots
    def wrong(coeffs, matrix=False):
        return true_roots(coeffs, matrix=matrix) * (1 + 1e-6)

    monkeypatch.setattr(spectra, "roots", wrong)
    report = check(momentum(), samples=6)
    rows = {row.name: row for row in report.rows}
    assert not report.passed and not rows["roots"].passed
    assert rows["roots"].max_error > 1e-7
    assert rows["realisation companion"].passed  # the realisations were not tampered with
    assert "FAIL" in str(report) and "FAILED" in str(report).splitlines()[0]


def test_wrong_stability_conditions_fail(monkeypatch):
    holds = stability_module.StabilityConditions.holds
    def negated(self, *args, **kwargs):
        return not holds(self, *args, **kwargs)

    monkeypatch.setattr(stability_module.StabilityConditions, "holds", negated)
    report = check(momentum(), samples=6)
    assert not report.passed
    assert not [row for row in report.rows if row.name.startswith("stability")][0].passed


def test_wrong_schur_cohn_mask_fails(monkeypatch):
    masks = pytest.importorskip("depthdyn.numeric.masks")
    true_mask = masks.schur_cohn

    def inverted(coeffs, **kwargs):
        strict, marginal = true_mask(coeffs, **kwargs)
        return ~strict, marginal

    monkeypatch.setattr(masks, "schur_cohn", inverted)
    report = check(momentum(), samples=6)
    rows = {row.name: row for row in report.rows}
    assert not rows["stability Schur-Cohn mask (real lam)"].passed
    assert rows["stability (real lam)"].passed  # the root-based verdict is untouched


def test_wrong_simulation_fails(monkeypatch):
    true_trajectory = simulate_module.trajectory

    def drifting(*args, **kwargs):
        out = true_trajectory(*args, **kwargs)
        return out * (1 + 1e-8 * np.arange(out.shape[0]).reshape((-1,) + (1,) * (out.ndim - 1)))

    monkeypatch.setattr(simulate_module, "trajectory", drifting)
    report = check(momentum(), samples=4)
    assert not {row.name: row for row in report.rows}["closed form"].passed


def test_wrong_exact_roots_fail(monkeypatch):
    exact = check_module._exact_roots

    def shifted(sub):
        found, note = exact(sub)
        return [(z + 1e-3, m) for z, m in found], note

    monkeypatch.setattr(check_module, "_exact_roots", shifted)
    report = check(momentum(), samples=4)
    rows = {row.name: row for row in report.rows}
    assert not rows["roots"].passed and not rows["realisation block"].passed


def test_bad_samples():
    with pytest.raises(ParameterError, match="samples"):
        check(momentum(), samples=0)
