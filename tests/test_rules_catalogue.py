"""Every built-in family, re-derived from its paper's update rule, equals its hand-derived recurrence.

The rule engine (:func:`depthdyn.from_rule`) and the families share no code: the families build
coefficients or block matrices by hand, the engine solves the rule's equations. A mutated rule
(one extra term) and a mutated domain must fail the same comparison.
"""

import re

import pytest

import depthdyn as dd
from depthdyn.families import FAMILIES
from depthdyn.families.registry import paper_rule, rule_arguments, rule_recurrence
from depthdyn.rules.check import differences

CASES = [(name, case) for name, entry in FAMILIES.items() for case in entry.cases]


def _id(item):
    name, case = item
    return name + ("" if not case else ":" + ",".join(f"{k}={v}" for k, v in case.items()))


def test_every_registered_family_has_a_rule():
    # one catalogue entry per family carries its rule, citation and rule arguments
    assert dd.FAMILIES is FAMILIES
    assert all(fam.rule and fam.citation and fam.arguments for fam in FAMILIES.values())
    assert all(paper_rule(name) for name in dd.FAMILIES)
    assert paper_rule("no_such_family") == ""  # a recurrence from from_rule has no paper rule


def test_structural_families_are_tested_at_several_values():
    for name, fam in dd.FAMILIES.items():
        if {"k", "n", "factors"} & set(fam.structural):
            assert len(FAMILIES[name].cases) >= 2, name


@pytest.mark.parametrize("item", CASES, ids=[_id(c) for c in CASES])
def test_rule_derived_equals_hand_derived(item):
    name, case = item
    derived = rule_recurrence(name, **case)
    hand = dd.FAMILIES[name](**case)
    assert differences(derived, hand) == []
    assert derived.rule  # the rule is kept for display and citation


def _mutated(rule: str) -> str:
    """The rule with ``+ 1/7*s`` added to its last equation, ``s`` the state that equation updates."""
    last = rule.split(";")[-1]
    state = re.search(r"[A-Za-z_]\w*", last.split("=")[0]).group(0)
    return rule + f" + 1/7*{state}"


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_a_mutated_rule_fails_the_comparison(name):
    case = FAMILIES[name].cases[0]
    text = rule_arguments(name, **case)["rule"]
    mutant = rule_recurrence(name, rule=_mutated(text), **case)
    assert differences(mutant, dd.FAMILIES[name](**case))


def test_a_mutated_domain_fails_the_comparison():
    args = rule_arguments("momentum")
    args["params"] = {**args["params"], "m": "[0, 1]"}  # closed at 1: not the family's domain
    diff = differences(dd.from_rule(**args), dd.momentum())
    assert diff == ["parameter domains differ: m: Interval(0, 1) != Interval.Ropen(0, 1)"]


def test_a_dropped_lag_fails_the_comparison():
    # dense k=2 without its lag is the residual block: one dimension short
    diff = differences(dd.from_rule("x[l+1] = x[l] + h*f(x[l])", params={"h": "positive"}), dd.dense(k=2))
    assert any("realisation dimension" in d for d in diff)


def test_the_rules_package_imports_only_lower_layers():
    """depthdyn.rules builds on the core (recurrence, parse, errors, limits, mixing); nothing above
    it, and not the families whose hand derivations it is checked against."""
    import ast
    from pathlib import Path

    package = Path(dd.__file__).parent / "rules"
    allowed = {"depthdyn.errors", "depthdyn.limits", "depthdyn.mixing", "depthdyn.parse", "depthdyn.recurrence"}
    for path in sorted(package.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                target = "depthdyn." + ("rules." if node.level == 1 else "") + (node.module or "")
                assert target.startswith("depthdyn.rules") or target in allowed, f"{path.name}: {target}"
            elif isinstance(node, ast.ImportFrom | ast.Import):
                names = [node.module] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                assert not any(n and n.startswith("depthdyn") for n in names), f"{path.name}: {names}"
