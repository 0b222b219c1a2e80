"""Every verdict can go every way: the whole catalogue under its mutants.

Each claim names a mutant (:attr:`depthdyn.claims.Claim.mutant`): a changed stated value or
premise under which its verdict must differ from the verdict of the claim as printed. A claim
that ignores its stated value, or whose computed side cannot change, survives its mutant and
fails here. A second mutation replaces every value-like stated input by a wrong one and checks
that the verdict moves or the check refuses the input.
"""

import dataclasses

import pytest

from depthdyn.claims import NOT_CHECKED, ClaimError, claims, coverage, source_summary
from depthdyn.claims.base import wrong_value

#: Claims allowed to keep their verdict under their mutant, with the reason. Empty: none is.
EXEMPT: dict[str, str] = {}


@pytest.fixture(scope="module")
def originals(all_claim_results):
    return {res.id: res for res in all_claim_results}


def test_every_claim_has_a_mutant_or_a_listed_exemption():
    missing = [c.id for c in claims() if c.mutant is None and c.id not in EXEMPT]
    assert not missing
    assert set(EXEMPT) <= {c.id for c in claims()}, "an exemption names no claim"


def test_every_verdict_changes_under_its_mutant(originals):
    survivors = []
    for cl in claims():
        if cl.id in EXEMPT:
            continue
        mutated = cl.mutated().run()
        if mutated.verdict == originals[cl.id].verdict:
            survivors.append(f"{cl.id}: {mutated.verdict} under {dict(cl.mutant)}")
    assert not survivors


def test_value_mutations_of_holding_claims(originals):
    """A stated number or formula moved by ``wrong_value`` turns a holding claim into a failing one."""
    moved = 0
    for cl in claims():
        wrong = wrong_value(cl.stated)
        if wrong is None or originals[cl.id].verdict != "holds":
            continue
        if cl.mutant == {"stated": wrong}:
            moved += 1  # the same mutation as above
            continue
        try:
            verdict = dataclasses.replace(cl, stated=wrong).run().verdict
        except ClaimError:
            continue  # the check refuses a malformed input: also a change
        moved += 1
        assert verdict != "holds", cl.id
    assert moved >= 30


def test_mutated_keeps_the_other_premises():
    (cl,) = [c for c in claims("000") if c.id == "000-s3-bounded-block"]
    mutated = cl.mutated()
    assert mutated.premises["form"] == "block" and len(mutated.premises["beta_over_L"]) == 5
    assert cl.premises["beta_over_L"] != mutated.premises["beta_over_L"]


def test_mutated_without_a_mutant_raises():
    cl = dataclasses.replace(claims("004")[0], mutant=None)
    with pytest.raises(ClaimError, match="no mutant"):
        cl.mutated()


def test_catalogue_counts(originals):
    results = list(originals.values())
    cov = coverage(results)
    assert cov["statements"] == cov["covered"] + cov["not_checked"]
    table = source_summary(results)
    assert sum(row["total"] for row in table.values()) == cov["statements"]
    assert sum(row["not checked"] for row in table.values()) == len(NOT_CHECKED)
    # the four readings of 000 §3's solution statement count once
    keys = {r.statement_key for r in results if r.id.startswith("000-s3-solution")}
    assert keys == {"000-s3-solution"}


def test_coverage_refuses_a_statement_both_checked_and_unchecked(originals):
    results = list(originals.values())
    clash = dataclasses.replace(NOT_CHECKED[0], key=results[0].statement_key)
    with pytest.raises(ClaimError, match="both checked"):
        coverage(results, (*NOT_CHECKED, clash))
