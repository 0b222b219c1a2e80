"""The families' registry: suggestions for misspelt names, parameters and domains, help text,
``FAMILY:NAME=VALUE`` specifications, and the front ends that use it."""

import pytest
import sympy as sp

import depthdyn as dd
from depthdyn.cli import main
from depthdyn.families import registry
from depthdyn.families.registry import (
    FAMILIES,
    build_from_assignments,
    families_help,
    get_family,
    parse_spec,
    resolve_spec,
    suggest,
)


@pytest.mark.parametrize(("typed", "meant"), [("momentun", "momentum"), ("hamiltonain", "hamiltonian"),
                                              ("rk5", "rk4"), ("Residual", "residual")])
def test_a_misspelt_family_gets_the_nearest_name(typed, meant):
    with pytest.raises(dd.errors.UnknownFamilyError, match="choose one of") as info:
        get_family(typed)
    assert f"did you mean '{meant}'" in str(info.value)


def test_a_name_near_nothing_gets_no_suggestion():
    with pytest.raises(dd.errors.UnknownFamilyError) as info:
        get_family("zzzz")
    assert "did you mean" not in str(info.value)
    assert suggest("zzzz", FAMILIES) == ""
    with pytest.raises(dd.errors.UnknownFamilyError):
        get_family(["momentum"])  # unhashable: the same typed error, not a TypeError


def test_a_misspelt_parameter_gets_the_nearest_name():
    with pytest.raises(dd.errors.UnknownParameterError, match="did you mean 'm'") as info:
        build_from_assignments("momentum", ["mm=1/2"])
    assert "its parameters: lam, m, eta" in str(info.value)
    with pytest.raises(dd.errors.UnknownParameterError, match="did you mean 'k'"):
        build_from_assignments("smooth", ["kk=3"])  # structural names are suggested too
    # the right names build the same recurrence as the factory
    assert build_from_assignments("momentum", ["m=1/2"]) == dd.momentum(m=sp.Rational(1, 2))
    assert build_from_assignments("smooth", ["k=3", "h=1/2"]) == dd.smooth(k=3, h=sp.Rational(1, 2))


def test_parameters_carry_their_domains():
    fam = get_family("momentum")
    domains = {p.name: p.domain for p in fam.params()}
    assert domains == {p.name: p.domain for p in dd.momentum().params}
    assert sp.Rational(1, 2) in domains["m"] and 1 not in domains["m"]  # velocity carry 0 <= m < 1
    # structural arguments change the parameters: (n - 1)^2 free entries of H_res, n of H_pre, n of H_post
    hc = get_family("hyper_connection")
    assert [len(hc.params(n=n)) - 1 for n in (2, 3)] == [(n - 1) ** 2 + 2 * n for n in (2, 3)]


def test_help_text():
    text = families_help()
    lines = text.splitlines()
    assert len(lines) == len(FAMILIES)
    assert [line.split()[0] for line in lines] == list(FAMILIES)
    assert "[k=2]" in next(line for line in lines if line.startswith("smooth "))
    para = get_family("smooth").help()
    assert para.startswith("smooth: ") and "structural: k=2" in para and "h in Interval.open(0, oo)" in para


def test_specifications():
    assert parse_spec("momentum:m=1/2,eta=1") == ("momentum", ["m=1/2", "eta=1"])
    label, rec, filled = resolve_spec("momentum:m=1/4")
    assert label == "momentum:m=1/4" and filled == {"eta": 1}  # eta from the registry's example
    assert rec == dd.momentum(m=sp.Rational(1, 4), eta=1)
    with pytest.raises(dd.errors.ParameterError):
        parse_spec("  ")
    with pytest.raises(dd.errors.UnknownFamilyError, match="did you mean 'leapfrog'"):
        resolve_spec("leapfrgo:h=1")


def test_the_front_ends_share_the_registry(monkeypatch):
    import importlib

    cli, compare = (importlib.import_module(f"depthdyn.{m}") for m in ("cli", "compare"))  # not the function
    # the command line builds through the registry (imported on first use, for a light --help)
    monkeypatch.setattr(registry, "build_from_assignments", lambda *args: ("registry", args))
    assert cli.build_from_cli("momentum", ["m=1/2"]) == ("registry", ("momentum", ["m=1/2"], None, None))
    assert compare.parse_spec is registry.parse_spec and compare.resolve_spec is registry.resolve_spec
    assert dd.get_family is registry.get_family and dd.FAMILIES is registry.FAMILIES


def test_cli_suggests_and_exits_2(capsys):
    assert main(["derive", "momentum", "-p", "mm=1/2"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "did you mean 'm'" in err
    assert main(["derive", "--list"]) == 0
    assert capsys.readouterr().out == families_help()
