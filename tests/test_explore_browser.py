"""The standalone explorer page in a real headless browser (Chromium from the system packages).

Each page is driven as a reader would: sliders moved (their value set and an ``input`` event
dispatched, and by the keyboard), then what the page shows (``window.depthdynExplorer.state()``)
is held against depthdyn in Python at the same exact point and against references derived
here: the roots against mpmath's roots of the exact characteristic polynomial (1e-9 relative),
the verdict and every condition exactly, the trajectory against an exact iteration of each
layer's own recurrence (1e-9 relative to the trajectory's largest entry). A page whose compiled
conditions are mutated must fail the same comparison. Without Chromium the tests fail unless
``DEPTHDYN_NO_BROWSER`` says why it is missing (``.ci/run`` sets it when apt cannot install it).
"""

from __future__ import annotations

import io
import re
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy as sp
from system_programs import chromium

from depthdyn import from_rule, momentum, periodic, residual, smooth, stability_conditions
from depthdyn.explore import evaluate, page

TOL = 1e-9


def _a_b():
    return sp.symbols("a b")


CASES = {
    "momentum": lambda: momentum(),
    "residual": lambda: residual(),
    "smooth_k3": lambda: smooth(k=3),
    # a 2-layer pattern of layers of different orders: momentum then residual, per-layer lam
    "periodic_2": lambda: periodic(momentum(lam=_a_b()[0], m="1/2", eta=1), residual(lam=_a_b()[1])),
    "from_rule": lambda: from_rule("v' = m*v + eta*f(x); x' = x + v'", params={"m": "[0,1)"}),
}


def _open(browser, html: str, tmp_path, name: str):
    path = tmp_path / f"{name}.html"
    path.write_text(html, encoding="utf-8")
    tab = browser.new_page(viewport={"width": 1100, "height": 900})
    errors = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.goto(path.as_uri())
    tab.wait_for_function("window.depthdynExplorer !== undefined", timeout=20000)
    return tab, errors


_MOVE = """([name, fraction]) => {
  const s = document.querySelector(`input[type=range][data-param="${name}"]`);
  const lo = Number(s.min), hi = Number(s.max);
  s.value = String(lo + fraction * (hi - lo));
  s.dispatchEvent(new Event("input", { bubbles: true }));
  return s.value;
}"""


def _values_in_page(tab) -> dict:
    """The exact point the page is at: each slider's value as the decimal its text says."""
    return tab.evaluate("""() => Object.fromEntries([...document.querySelectorAll('input[type=range]')]
        .map((s) => [s.dataset.param, s.value]))""")


# ------------------------------------------------------------------ references, derived here
def _layers(rec):
    return rec.layers if getattr(rec, "layers", ()) else (rec,)


def _by_name(expr, values):
    return expr.xreplace({s: values[s.name] for s in expr.free_symbols if s.name in values})


def reference_roots(rec, values) -> list:
    coeffs = [_by_name(c, values) for c in rec.charpoly_coeffs()]
    while coeffs and coeffs[0] == 0:
        coeffs.pop(0)
    with mpmath.workdps(40):
        found = mpmath.polyroots([mpmath.mpc(*(sp.Float(v, 45).as_real_imag())) for v in
                                  (sp.expand(c) for c in coeffs)], maxsteps=400, extraprec=200)
    return [complex(z) for z in found]


def reference_trajectory(rec, values, depth) -> np.ndarray:
    """x_0..x_depth from x_0 = x_{-1} = ... = 1, each layer its own recurrence, in exact fractions."""
    layers = [layer.subs({k: v for k, v in values.items() if k in layer.param_names})
              for layer in _layers(rec)]
    window, n = max(layer.order for layer in layers), layers[0].dim
    past = [sp.ones(n, 1) for _ in range(window)]  # x_{-window+1} .. x_0
    out = [past[-1]]
    for step in range(depth):
        layer = layers[step % len(layers)]
        A = layer.coeffs
        rhs = sum((A[j] * past[-j] for j in range(1, len(A))), sp.zeros(n, 1))
        past.append(-(A[0].inv() * rhs))
        out.append(past[-1])
    return np.array([[float(v) for v in x] for x in out])


def _match(got: list, want: list, normwise: bool = False) -> list[str]:
    """Each shown root against its nearest expected one: within 1e-9 of its modulus (a root that is
    exactly 0, as a lower-order layer on a wider window gives, within 1e-9 of the spectral radius);
    ``normwise``: within 1e-9 of the spectral radius, for float64 roots near 0."""
    bad, want = [], list(want)
    if len(got) != len(want):
        return [f"{len(got)} roots shown, {len(want)} expected"]
    radius = max(map(abs, want))
    for z in got:
        k = min(range(len(want)), key=lambda i: abs(want[i] - z))
        if abs(want[k] - z) > TOL * (radius if normwise or want[k] == 0 else abs(want[k])):
            bad.append(f"root {z} vs {want[k]}")
        want.pop(k)
    return bad


def compare(rec, state: dict, text_values: dict, sc) -> list[str]:
    """Every disagreement between what the page shows and depthdyn/the references at its point."""
    exact = {k: sp.Rational(Fraction(v)) for k, v in text_values.items()}
    bad = []
    roots = [complex(re_, im_) for re_, im_ in state["roots"]]
    want = reference_roots(rec, exact)
    bad += _match(roots, want)
    stable = sc.holds(exact)
    if state["stable"] is not stable:
        bad.append(f"verdict {state['stable']} vs exact {stable}")
    if stable is not (max(abs(z) for z in want) < 1):
        bad.append("exact verdict disagrees with the roots: pick points off the boundary")
    shown = state["conditions"]
    exact_conds = [bool(_by_name(c, exact)) for c in sc.conditions + sc.implied_by_domain]
    if shown != exact_conds:
        bad.append(f"conditions {shown} vs exact {exact_conds}")
    depth = len(state["trajectory"]) - 1
    ref = reference_trajectory(rec, exact, depth)
    got = np.array(state["trajectory"], dtype=float)
    scale = np.abs(ref).max()
    if got.shape != ref.shape or not np.all(np.abs(got - ref) <= TOL * scale):
        bad.append(f"trajectory off by {np.abs(got - ref).max() / scale:.3g} (relative)")
    py = evaluate(rec, exact, depth)  # the widget's Python state at the same point
    if py.stable is not state["stable"]:
        bad.append("the Python verdict differs")
    bad += [f"Python {m}" for m in _match(roots, list(py.roots), normwise=True)]
    return bad


def _sweep(tab, rec, sc, fractions=(0.13, 0.41, 0.77)) -> list[str]:
    bad = []
    for name in rec.param_names:
        for f in fractions:
            tab.evaluate(_MOVE, [name, f])
            values = _values_in_page(tab)
            state = tab.evaluate("window.depthdynExplorer.state()")
            bad += [f"{name} at {values}: {m}" for m in compare(rec, state, values, sc)]
    if not rec.param_names:
        bad += compare(rec, tab.evaluate("window.depthdynExplorer.state()"), {}, sc)
    return bad


def _variance(png: bytes) -> float:
    from PIL import Image

    return float(np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=float).var())


@pytest.mark.parametrize("case", list(CASES))
def test_page_agrees_with_depthdyn(browser, tmp_path, case):
    rec = CASES[case]()
    sc = stability_conditions(rec)
    tab, errors = _open(browser, page(rec), tmp_path, case)
    try:
        bad = _sweep(tab, rec, sc)
        assert bad == [], bad[:5]
        assert errors == []
        shot = tab.screenshot(full_page=True)
        assert _variance(shot) > 100  # text, fills and curves, not a blank page
        for i in range(3):  # every canvas view has drawn something
            assert _variance(tab.locator("canvas").nth(i).screenshot()) > 10
        (tmp_path / f"{case}.png").write_bytes(shot)
    finally:
        tab.close()


def test_keyboard_moves_a_slider_and_the_views_follow(browser, tmp_path):
    rec = momentum()
    tab, errors = _open(browser, page(rec, at={"lam": "-1/2"}), tmp_path, "keys")
    try:
        slider = tab.locator('input[type=range][data-param="lam"]')
        slider.focus()
        for _ in range(5):
            tab.keyboard.press("ArrowLeft")
        values = _values_in_page(tab)
        assert Fraction(values["lam"]) == Fraction("-0.6")  # five steps of 0.02 down from -0.5
        state = tab.evaluate("window.depthdynExplorer.state()")
        assert compare(rec, state, values, stability_conditions(rec)) == []
        # the box beside it shows the value; a typed fraction moves the slider
        box = tab.locator('input.dd-box[data-param="m"]')
        box.fill("1/3")
        box.press("Enter")
        assert tab.evaluate("window.depthdynExplorer.state().values.m") == pytest.approx(1 / 3, rel=1e-15)
        box.fill("2")  # outside [0, 1): refused, marked
        box.press("Enter")
        assert "dd-invalid" in box.get_attribute("class")
        assert tab.evaluate("window.depthdynExplorer.state().values.m") == pytest.approx(1 / 3, rel=1e-15)
        assert errors == []
    finally:
        tab.close()


def _mutate(html: str) -> str:
    """Flip the first inequality of the compiled conditions."""
    start = html.index("  conditions(p) {")
    head, body = html[:start], html[start:]
    flipped, count = re.subn(r"\) > 0,", ") < 0,", body, count=1)
    assert count == 1
    return head + flipped


def test_mutated_conditions_fail_the_comparison(browser, tmp_path):
    rec = momentum()
    sc = stability_conditions(rec)
    tab, _ = _open(browser, _mutate(page(rec)), tmp_path, "mutant")
    try:
        bad = _sweep(tab, rec, sc)
    finally:
        tab.close()
    assert any("verdict" in m for m in bad) and any("conditions" in m for m in bad)


def test_a_recurrence_with_no_free_parameter_still_shows_its_views(browser, tmp_path):
    rec = residual(lam="-1/2")
    tab, errors = _open(browser, page(rec), tmp_path, "fixed")
    try:
        assert tab.locator("input[type=range]").count() == 0
        state = tab.evaluate("window.depthdynExplorer.state()")
        assert compare(rec, state, {}, stability_conditions(rec)) == []
        assert state["stable"] is True and state["trajectory"][2] == [0.25]
        assert _variance(tab.locator("canvas").nth(1).screenshot()) > 10
        assert errors == []
    finally:
        tab.close()


def test_without_chromium_the_tests_skip_only_with_a_reason(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no browser on this PATH
    monkeypatch.setenv("DEPTHDYN_NO_BROWSER", "apt-get install chromium failed")
    with pytest.raises(pytest.skip.Exception, match="apt-get install chromium failed"):
        chromium()
    monkeypatch.delenv("DEPTHDYN_NO_BROWSER")
    with pytest.raises(pytest.fail.Exception, match="DEPTHDYN_NO_BROWSER"):
        chromium()


def test_ci_installs_chromium_or_says_why_not():
    from pathlib import Path

    ci = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text()
    assert "browser_pkgs=(chromium)" in ci and "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1" in ci
    assert ci.count('export DEPTHDYN_NO_BROWSER="') == 2  # apt failed / apt not usable: the skip reason
    assert "the browser tests skip" in ci and "the browser tests run" in ci


def test_every_registered_family_opens_and_agrees_at_its_start(browser, tmp_path):
    """Each family of the catalogue (at its example's structural arguments): the page runs without
    an error and shows depthdyn's verdict and roots at the point its sliders start from."""
    from depthdyn import FAMILIES

    tab = browser.new_page(viewport={"width": 1100, "height": 900})
    errors = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    bad = []
    try:
        for name, fam in FAMILIES.items():
            rec = fam(**fam.example_structural())
            path = tmp_path / f"{name}.html"
            path.write_text(page(rec), encoding="utf-8")
            tab.goto(path.as_uri())
            tab.wait_for_function("window.depthdynExplorer !== undefined", timeout=20000)
            state = tab.evaluate("window.depthdynExplorer.state()")
            py = evaluate(rec, state["values"], len(state["trajectory"]) - 1)
            if py.stable is not state["stable"]:
                bad.append(f"{name}: verdict {state['stable']} vs {py.stable}")
            roots = [complex(a, b) for a, b in state["roots"]]
            bad += [f"{name}: {m}" for m in _match(roots, list(py.roots), normwise=True)]
    finally:
        tab.close()
    assert errors == [] and bad == [], (errors, bad)


def test_the_docs_page_runs_and_agrees_with_depthdyn(browser, tmp_path):
    """The page the docs embed, written as their build writes it (docs/explore_page.py)."""
    import runpy
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "docs" / "explore_page.py"
    written = runpy.run_path(str(script))["write_explorer"](tmp_path / "docs-build")
    tab, errors = _open(browser, written.read_text(encoding="utf-8"), tmp_path, "docs")
    try:
        rec = momentum()
        assert _sweep(tab, rec, stability_conditions(rec), fractions=(0.3, 0.7)) == []
        assert errors == []
    finally:
        tab.close()


_RENDER_WIDGET = """async ([esm, state]) => {
  // anywidget's side of the contract: import the widget's module, call render({model, el})
  const handlers = {}, data = { ...state }, sent = [];
  const model = {
    get: (k) => data[k],
    set(k, v) { data[k] = v; for (const f of handlers[`change:${k}`] || []) f(); },
    on(e, f) { (handlers[e] = handlers[e] || []).push(f); },
    off(e, f) { handlers[e] = (handlers[e] || []).filter((g) => g !== f); },
    save_changes() { sent.push(JSON.stringify(data.values)); },
  };
  const url = URL.createObjectURL(new Blob([esm], { type: "text/javascript" }));
  const mod = await import(url);
  const el = document.createElement("div");
  document.body.appendChild(el);
  const cleanup = mod.default.render({ model, el });
  const first = el.querySelector(".dd-explorer").dataset.stable;
  model.set("values", { ...data.values, lam: 0.25 });  // the kernel moves lam
  const second = el.querySelector(".dd-explorer").dataset.stable;
  const slider = el.querySelector('input[type=range][data-param="lam"]');
  slider.value = "-1"; slider.dispatchEvent(new Event("input", { bubbles: true }));  // the reader moves it
  const third = el.querySelector(".dd-explorer").dataset.stable;
  cleanup();
  return { first, second, third, sent, listeners: Object.values(handlers).flat().length };
}"""


def test_the_widget_module_renders_through_anywidgets_api(browser, tmp_path):
    pytest.importorskip("anywidget", reason="the widget needs anywidget (the test and explore extras)")
    import depthdyn

    w = depthdyn.explore("momentum", at={"lam": -0.5, "m": 0.5, "eta": 1})
    state = {k: getattr(w, k) for k in ("spec", "values", "x", "y", "depth")}
    tab, errors = _open(browser, page("residual"), tmp_path, "host")  # any page: a module host
    try:
        out = tab.evaluate(_RENDER_WIDGET, [w._esm, state])
    finally:
        tab.close()
    assert (out["first"], out["second"], out["third"]) == ("true", "false", "true")
    assert out["sent"] == ['{"lam":-1,"m":0.5,"eta":1}']  # the slider's value goes back to the kernel
    assert out["listeners"] == 0 and errors == []
