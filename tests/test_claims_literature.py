"""Claims of the literature: every verdict runs, and changes when the stated value is wrong."""

import dataclasses

import pytest

from depthdyn.claims import SOURCES, VERDICTS, claims, run_claims

#: claim id -> a wrong stated value, and the verdict it must then get
MUTATIONS = {
    "lit-lu2018-modified-equation": ("(1 - k)*u1 + (1 - k)*dt/2*u2", "fails"),
    "lit-gomez2017-reversible": ("1 + lam", "fails"),
    "lit-sander2021-invertible": ("1 - gamma", "fails"),
    "lit-sander2021-gamma0-resnet": ("1/2", "fails"),
    "lit-chang2018-leapfrog-stable": ("(-5, 0)", "fails"),
    "lit-chang2019-euler-unstable": ("1/2", "fails"),
    "lit-yang2026-exact-birkhoff": ("1 + 1/10**20", "fails"),
    "lit-zhou2026-kronecker": ("2", "fails"),
    "lit-xie2025-sinkhorn": ("2000", "holds"),  # enough iterations close the gap at 60 digits
    "lit-zhu2025-prenorm": ("[[0, 1], [1, 0]]", "fails"),
}


@pytest.fixture(scope="module")
def results():
    return {res.id: res for res in run_claims("lit")}


def test_every_literature_claim_is_covered_and_valid(results):
    assert SOURCES["lit"].short == "literature"
    assert set(results) == set(MUTATIONS) == {c.id for c in claims("literature")}
    for res in results.values():
        assert res.verdict in VERDICTS and res.source == "literature"
        assert res.section.split()[0][0].isupper()  # the paper's first author
        if res.verdict == "holds-with-caveat":
            assert res.note


def test_verdicts_as_computed(results):
    caveats = {k for k, v in results.items() if v.verdict == "holds-with-caveat"}
    assert caveats == {"lit-sander2021-invertible", "lit-chang2018-leapfrog-stable", "lit-xie2025-sinkhorn"}
    assert all(v.verdict == "holds" for k, v in results.items() if k not in caveats)


@pytest.mark.parametrize("cid", sorted(MUTATIONS))
def test_a_wrong_stated_value_changes_the_verdict(cid, results):
    (claim,) = [c for c in claims("lit") if c.id == cid]
    wrong, expected = MUTATIONS[cid]
    mutated = dataclasses.replace(claim, stated=wrong).run()
    assert mutated.verdict == expected != results[cid].verdict
