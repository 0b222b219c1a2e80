"""No public entry point evaluates user text: injection payloads in every container type.

Each payload would create a file named ``pwned`` in the working directory if it were
evaluated (as ``sympy.sympify`` does with the strings inside a list). Every call must end
in a :class:`~depthdyn.errors.DepthdynError` or a normal return, and leave no file.
"""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
import sympy as sp

import depthdyn as dd
from depthdyn import plot
from depthdyn.claims.base import compare_exact, compare_rounded, show
from depthdyn.cli import build_from_cli
from depthdyn.errors import DepthdynError
from depthdyn.numeric import batch_coefficients, spectral_radius, stability_mask
from depthdyn.parse import as_sympy, parse_value

PAYLOADS = (
    "__import__('os').system('touch pwned')",
    "__import__('pathlib').Path('pwned').touch()",
    "exec(\"open('pwned', 'w')\")",
)


def _containers(p):
    return [
        p,
        [p],
        (p,),
        {p: p},
        {p},
        np.array([p]),
        np.array([[p, p], [p, p]]),
        [[p, "1"], ["0", p]],
        [1, [p]],
        {"m": [p]},
    ]


def _entry_points(c):
    """(name, call) for every public function that takes an expression or a value."""
    mom = dd.momentum()
    num = dd.momentum(m="1/2", eta=1)
    return [
        ("general rho", lambda: dd.general(rho=c)),
        ("general sigma", lambda: dd.general(rho="r - 1", sigma=c)),
        ("from_coefficients", lambda: dd.from_coefficients(c)),
        ("from_coefficients entry", lambda: dd.from_coefficients([1, c])),
        ("from_coefficients params", lambda: dd.from_coefficients([1, -1], params=c)),
        ("Recurrence", lambda: dd.Recurrence([1, c])),
        ("family value", lambda: dd.momentum(m=c)),
        ("build", lambda: dd.build("rezero", a=c)),
        ("entangled Gamma", lambda: dd.entangled(kind="matrix", Gamma=c)),
        ("hyper H_res", lambda: dd.hyper_connection(n=2, H_res=c)),
        ("hyper H_pre", lambda: dd.hyper_connection(n=2, H_pre=c)),
        ("subs keyword", lambda: mom.subs(m=c)),
        ("subs mapping", lambda: mom.subs({"eta": c})),
        ("to_exact", lambda: dd.to_exact(c)),
        ("iterate", lambda: num.subs(lam="-1/4").iterate(c, 2)),
        ("closed_form", lambda: dd.closed_form(num.subs(lam="-1/4"), c)),
        ("depth_limit", lambda: dd.depth_limit(dd.residual(scaled=True), c)),
        ("batch_coefficients", lambda: batch_coefficients(num, lam=c)),
        ("spectrum", lambda: dd.spectrum(num, lam=c)),
        ("spectral_radius", lambda: spectral_radius(num, lam=c)),
        ("stability_mask", lambda: stability_mask(num, lam=c)),
        ("stability_region", lambda: dd.stability_region(num, ("re(lam)", c, 1, 5), ("im(lam)", -1, 1, 5))),
        ("simulate initial", lambda: dd.simulate(num, c, 3, lam=-0.25)),
        ("simulate values", lambda: dd.simulate(num, [1.0, 0.0], 3, lam=c)),
        ("plot_trajectories", lambda: plot.plot_trajectories(num, c, 3, lam=-0.25)),
        ("plot_root_locus", lambda: plot.plot_root_locus(mom, "lam", c, m=0.5, eta=1)),
        ("plot_spectrum", lambda: plot.plot_spectrum(c)),
        ("compare_exact", lambda: compare_exact(c, sp.Integer(1))),
        ("compare_exact computed", lambda: compare_exact("1", c)),
        ("compare_rounded", lambda: compare_rounded("1.0", c)),
        ("show", lambda: show(c)),
        ("as_sympy", lambda: as_sympy(c)),
        ("parse_value", lambda: parse_value(c)),
    ]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_no_entry_point_evaluates_a_payload(payload, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    untyped = []
    for container in _containers(payload):
        for name, call in _entry_points(container):
            try:
                call()
            except DepthdynError:
                pass
            except Exception as exc:  # noqa: BLE001 - collected and reported below
                untyped.append(f"{name} with {type(container).__name__}: {type(exc).__name__}: {exc}")
            assert not (tmp_path / "pwned").exists(), f"{name} evaluated {container!r}"
    assert not untyped, "\n".join(untyped)


def test_the_container_payload_of_the_issue_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DepthdynError, match="rho"):
        dd.general(rho=["__import__('os').system('touch pwned')"])
    assert not (tmp_path / "pwned").exists()


def test_sympify_would_have_run_the_payload(tmp_path, monkeypatch):
    """The payload is live: the unsafe route (sympify of a list) does create the file."""
    monkeypatch.chdir(tmp_path)
    try:
        sp.sympify(["__import__('pathlib').Path('pwned').touch()"])
    except Exception:  # noqa: BLE001 - only the side effect matters
        pass
    assert (tmp_path / "pwned").exists()


def test_cli_values_are_parsed_safely(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for payload in PAYLOADS:
        with pytest.raises(DepthdynError):
            build_from_cli("momentum", [f"m={payload}"])
        with pytest.raises(DepthdynError):
            build_from_cli("general", [], rho=payload)
    assert not (tmp_path / "pwned").exists()


def test_containers_of_good_values_still_work():
    a = sp.Symbol("a")
    assert dd.general(rho=sp.Symbol("r") ** 2 - a).param_names == ("a",)
    rec = dd.from_coefficients(np.array([1, "-1/2"], dtype=object))
    assert rec.charpoly() == sp.Symbol("r") - sp.Rational(1, 2)
    assert dd.entangled(kind="matrix", Gamma=np.array([["1/2", "0"], ["0", "1/3"]])).dim == 2
    assert compare_exact(["1/2", "m"], [sp.Rational(1, 2), sp.Symbol("m", real=True)]).holds
    assert not compare_exact(["1/2", "m"], [sp.Rational(1, 3), sp.Symbol("m")]).holds
