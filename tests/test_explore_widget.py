"""The explorer widget: its synced state in a real Jupyter kernel and in this process.

What it holds at a point (verdict, roots, trajectory) is checked against the quadratic formula
and the recurrence iterated by hand for the momentum block, ``r^2 - (1 + m + eta lam) r + m``.
"""

from __future__ import annotations

import cmath
import json
import os
import subprocess
import sys
import warnings

import pytest

pytest.importorskip("anywidget", reason="the explorer widget needs anywidget (the test and explore extras)")

import depthdyn  # noqa: E402


def momentum_roots(lam, m, eta) -> list[complex]:
    b = 1 + m + eta * lam
    d = cmath.sqrt(b * b - 4 * m)
    return [(b + d) / 2, (b - d) / 2]


def momentum_trajectory(lam, m, eta, depth) -> list[float]:
    x, prev, out = 1.0, 1.0, [1.0]  # x_0 = x_{-1} = 1
    for _ in range(depth):
        x, prev = (1 + m + eta * lam) * x - m * prev, x
        out.append(x)
    return out


def _close(got, want, tol=1e-12) -> bool:
    got = sorted((complex(*z) for z in got), key=lambda z: (z.real, z.imag))
    want = sorted(want, key=lambda z: (z.real, z.imag))
    if len(got) != len(want):
        return False
    return all(abs(a - b) <= tol * max(1, abs(b)) for a, b in zip(got, want, strict=True))


CELLS = [
    "import json\nimport depthdyn\n"
    "w = depthdyn.explore('momentum', at={'lam': -0.5, 'm': 0.5, 'eta': 1}, depth=6)\nw",
    "print(json.dumps({'values': w.values, 'stable': w.stable, 'roots': w.roots, "
    "'trajectory': w.trajectory, 'error': w.error}))",
    "w.values = {**w.values, 'lam': 0.25}  # as a slider would",
    "print(json.dumps({'values': w.values, 'stable': w.stable, 'roots': w.roots, "
    "'trajectory': w.trajectory, 'error': w.error}))",
    "w.values = {**w.values, 'm': 2}  # outside [0, 1): refused, the state says why\n"
    "print(json.dumps({'stable': w.stable, 'error': w.error}))",
]


@pytest.mark.slow
def test_widget_state_follows_a_parameter_change_in_a_real_kernel(tmp_path):
    nbclient = pytest.importorskip("nbclient", reason="the notebook tests need nbclient (the test extra)")
    nbformat = pytest.importorskip("nbformat", reason="the notebook tests need nbformat (the test extra)")
    pytest.importorskip("ipykernel", reason="the notebook tests need ipykernel (the test extra)")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=600,
                                     resources={"metadata": {"path": str(tmp_path)}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        client.execute(env={k: v for k, v in os.environ.items() if k != "MPLBACKEND"})
    outputs = [c["outputs"] for c in nb.cells]
    # the widget displays as a widget view (the front end renders it from its model)
    (shown,) = outputs[0]
    assert "application/vnd.jupyter.widget-view+json" in shown["data"]
    first, second, refused = (json.loads(o[0]["text"]) for o in (outputs[1], outputs[3], outputs[4]))

    assert first["values"] == {"lam": -0.5, "m": 0.5, "eta": 1.0} and first["error"] == ""
    assert _close(first["roots"], momentum_roots(-0.5, 0.5, 1))
    assert first["stable"] is True  # |r| = sqrt(m) < 1
    want = momentum_trajectory(-0.5, 0.5, 1, 6)
    assert [x for (x,) in first["trajectory"]] == pytest.approx(want, abs=1e-12)

    assert second["values"]["lam"] == 0.25
    assert _close(second["roots"], momentum_roots(0.25, 0.5, 1))
    assert second["stable"] is False  # a real root above 1
    assert max(abs(complex(*z)) for z in second["roots"]) > 1
    want = momentum_trajectory(0.25, 0.5, 1, 6)
    assert [x for (x,) in second["trajectory"]] == pytest.approx(want, rel=1e-12)

    assert refused["stable"] is None and "outside its domain" in refused["error"]


def test_widget_holds_the_front_end_and_compiled_functions():
    w = depthdyn.explore(depthdyn.momentum(), at={"lam": "-1/2"})
    assert "function mount(" in w._esm and "const COMPILED" in w._esm and "export default" in w._esm
    assert "eval(" not in w._esm and "new Function" not in w._esm
    assert w.spec["params"][0]["name"] == "lam" and (w.x, w.y) == ("lam", "m")
    assert w.verdict == "strictly stable"


@pytest.mark.parametrize("point, stable", [({"lam": -0.5}, True), ({"lam": -3.5}, False),
                                           ({"lam": 0.1}, False), ({"lam": -2.9}, True)])
def test_widget_verdict_against_the_roots(point, stable):
    w = depthdyn.explore("momentum:eta=1,m=1/2")  # two fixed: one slider
    w.values = point
    assert w.stable is stable and w.error == ""
    assert _close(w.roots, momentum_roots(point["lam"], 0.5, 1))
    assert (max(abs(r) for r in momentum_roots(point["lam"], 0.5, 1)) < 1) is stable


def test_widget_works_for_patterns_and_rules():
    import sympy as sp

    a, b = sp.symbols("a b")
    w = depthdyn.explore(depthdyn.periodic(depthdyn.residual(lam=a), depthdyn.residual(lam=b)))
    w.values = {"a": -0.5, "b": 1.0}  # (1 + a)(1 + b) = 1: on the boundary, not strictly stable
    assert w.stable is False and _close(w.roots, [1.0])
    w.values = {"a": -0.5, "b": 0.5}
    assert w.stable is True and _close(w.roots, [0.75])
    assert [x for (x,) in w.trajectory[:3]] == [1.0, 0.5, 0.75]  # layer by layer: (1 + a), then (1 + b)
    rule = depthdyn.explore(depthdyn.from_rule("x' = x + a*f(x)"), at={"lam": 1, "a": 1})
    assert rule.stable is False and _close(rule.roots, [2.0])  # r = 1 + a lam


def test_widget_refuses_bad_targets_and_names():
    from depthdyn.errors import UnknownFamilyError, UnknownParameterError

    with pytest.raises(UnknownFamilyError, match="did you mean 'momentum'"):
        depthdyn.explore("momentm")
    with pytest.raises(UnknownParameterError):
        depthdyn.explore("momentum", at={"mm": 1})
    with pytest.raises(depthdyn.errors.ParameterError):
        depthdyn.explore(42)
    w = depthdyn.explore("momentum")
    w.values = {"lam": -0.5}  # m and eta missing
    assert w.stable is None and "give values for m, eta" in w.error


def test_without_anywidget_a_typed_error_says_what_to_install():
    code = ("import sys; sys.modules['anywidget'] = None\n"
            "import depthdyn\n"
            "try:\n    depthdyn.explore('momentum')\n"
            "except ImportError as e:\n    print(type(e).__name__, e)\n"
            "print(len(depthdyn.explore.__doc__) > 0)\n"
            "from depthdyn.explore import page\nprint('COMPILED' in page('residual'))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "OptionalDependencyError" in proc.stdout and "depthdyn[explore]" in proc.stdout
    assert proc.stdout.rstrip().endswith("True\nTrue")  # the page needs no anywidget
