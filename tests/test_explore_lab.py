"""The explorer widget in a real JupyterLab, in a real browser.

A JupyterLab server (on a free localhost port, with a token, in a temporary root directory,
its settings and runtime files there too) serves a notebook that calls
``depthdyn.explore("momentum")``; headless Chromium (the system's, driven by playwright) opens
it, runs the cell, waits for the widget's view (its three canvases and its sliders), moves the
``lam`` slider with the keyboard (focus, then the arrow keys: the keyboard-accessibility check,
inside a notebook whose command mode binds arrow keys), and reads what the kernel then holds
from a later cell's printed output. The kernel's ``values``, ``verdict`` and ``roots`` are held
against the point the keys reached (derived here by exact arithmetic on the slider's step) and
against the quadratic formula for the momentum block, ``r^2 - (1 + m + eta lam) r + m``; the
view's verdict and spectral radius against the kernel's and against depthdyn's Python result
at the same point. A second view of the same widget labels its own sliders and follows the
first through the shared model; in JupyterLab's dark theme every text of the view keeps the WCAG
AA contrast. A notebook without the call and a widget whose module fails must make the view check
fail, and without the marker that keeps the notebook's shortcuts off the sliders the keyboard
check fails. Without Chromium the test fails unless ``DEPTHDYN_NO_BROWSER`` says why it is
missing (as in tests/test_explore_browser.py).
"""

from __future__ import annotations

import cmath
import io
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import urllib.request
from contextlib import contextmanager, suppress
from fractions import Fraction

import numpy as np
import pytest

pytest.importorskip("anywidget", reason="the explorer widget needs anywidget (the test and explore extras)")
pytest.importorskip("jupyterlab", reason="the JupyterLab test needs jupyterlab (the test extra)")
nbformat = pytest.importorskip("nbformat", reason="the notebook tests need nbformat (the test extra)")

pytestmark = pytest.mark.slow

AT = {"lam": -0.1, "m": 0.5, "eta": 1}
STEP = Fraction("0.02")  # the lam slider's step: its domain (-oo, oo) is shown as [-4, 1] in 250 steps
PRESSES = 10  # ArrowRight presses: lam from -1/10 to 1/10, out of the stable set (lam < 0 at m = 1/2)
WAIT_MS = 120_000  # for the browser to reach a state; a liveness bound, never a measured speed
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

WIDGET_CELL = ("import depthdyn\n"
               f"w = depthdyn.explore('momentum', at={AT!r})\n"
               "w")
SECOND_VIEW_CELL = "display(w)  # a second view of the same widget"
PRINT_CELL = ("import json\n"
              "print(json.dumps({'values': w.values, 'verdict': w.verdict, 'stable': w.stable, "
              "'roots': w.roots, 'error': w.error}))")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def jupyterlab_server(root):
    """A JupyterLab server serving ``root``; yields ``(base_url, token)`` and kills it at the end."""
    port, token = _free_port(), secrets.token_hex(16)
    private = {"JUPYTER_CONFIG_DIR": ".config", "JUPYTER_RUNTIME_DIR": ".runtime", "IPYTHONDIR": ".ipython",
               "JUPYTERLAB_SETTINGS_DIR": ".settings", "JUPYTERLAB_WORKSPACES_DIR": ".workspaces"}
    env = {**os.environ, **{k: str(root / v) for k, v in private.items()},
           # the kernel imports this checkout's depthdyn
           "PYTHONPATH": os.pathsep.join(filter(None, [os.path.dirname(os.path.dirname(__file__)),
                                                       os.environ.get("PYTHONPATH")]))}
    env.pop("MPLBACKEND", None)
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
           f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
           f"--ServerApp.root_dir={root}", "--ServerApp.allow_root=True",  # CI containers run as root
           # window.jupyterapp: the test selects and runs cells through the app's own commands
           "--LabApp.expose_app_in_browser=True",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    log = (root / "server.log").open("w")
    # its own process group: the kernels it starts go with it
    server = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root,
                              start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(1200):  # about two minutes of polls; fails at once if the server exits
            if server.poll() is not None:
                log_text = (root / "server.log").read_text()[-3000:]
                pytest.fail(f"jupyter lab exited ({server.returncode}):\n{log_text}")
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=5):
                    break
            except OSError:
                try:
                    server.wait(0.1)
                except subprocess.TimeoutExpired:
                    pass
        else:
            pytest.fail("jupyter lab did not answer on its port")
        yield url, token
    finally:
        server.terminate()  # the server shuts its kernels down
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            pass
        with suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)  # whatever of its group is left
        server.wait()
        log.close()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("lab")
    with jupyterlab_server(root) as (url, token):
        yield root, url, token


def open_notebook(browser, lab, name: str, cells: list[str]):
    """Write a notebook of ``cells`` into the server's root, open it in JupyterLab and wait for its kernel."""
    root, url, token = lab
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, root / f"{name}.ipynb")
    tab = browser.new_page(viewport={"width": 1300, "height": 1100})
    errors = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.goto(f"{url}/lab/tree/{name}.ipynb?reset&token={token}")  # reset: not the last notebook's layout
    tab.wait_for_function("""(name) => {
        const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
        const kernel = panel && panel.sessionContext && panel.sessionContext.session
          && panel.sessionContext.session.kernel;
        return panel && panel.context.path === name && kernel && kernel.status === "idle"
          && panel.content.widgets.length > 0;
    }""", arg=f"{name}.ipynb", timeout=WAIT_MS)
    return tab, errors


def run_cell(tab, index: int) -> None:
    """Run cell ``index`` through JupyterLab's own command and wait until the kernel has answered."""
    tab.evaluate("""async (i) => {
        window.jupyterapp.shell.currentWidget.content.activeCellIndex = i;
        await window.jupyterapp.commands.execute("notebook:run-cell");
    }""", index)
    tab.wait_for_function("""(i) => {
        const panel = window.jupyterapp.shell.currentWidget;
        const cell = panel.content.widgets[i];
        return cell.model.executionCount !== null && !cell.node.querySelector(".jp-InputArea-prompt")
          .textContent.includes("*") && panel.sessionContext.session.kernel.status === "idle";
    }""", arg=index, timeout=WAIT_MS)


def _cell(tab, index: int):
    panel = tab.evaluate("window.jupyterapp.shell.currentWidget.id")  # this notebook's cells only
    return tab.locator(f"[id='{panel}'] .jp-Notebook .jp-Cell").nth(index)


def explorer_view(tab, index: int):
    """The explorer's view in cell ``index``'s output, once rendered (three canvases, a slider per
    parameter); AssertionError when the output holds no widget view or the view never renders."""
    kinds = tab.evaluate("""(i) => {
        const outputs = window.jupyterapp.shell.currentWidget.content.widgets[i].model.outputs;
        return Array.from({ length: outputs.length }, (_, j) => Object.keys(outputs.get(j).data));
    }""", index)
    shown = [j for j, mimes in enumerate(kinds) if WIDGET_VIEW in mimes]
    if not shown:
        raise AssertionError(f"no explorer in cell {index}: its output holds no widget view ({kinds})")
    view = _cell(tab, index).locator(".jp-OutputArea-output").nth(shown[0])
    # rendered, or something else shown in its place (an error)
    found = tab.wait_for_function("""(el) => el.querySelector(".dd-explorer input[type=range]") ? true
        : (el.textContent.trim() && !el.querySelector(".dd-explorer") && el.textContent)""",
                                  arg=view.element_handle(), timeout=WAIT_MS).json_value()
    if found is not True:
        shows = " ".join(str(found).split())[:300]
        raise AssertionError(f"no explorer in cell {index}: the widget view shows {shows!r}")
    explorer = view.locator(".dd-explorer")
    if explorer.locator("canvas").count() != 3 or explorer.locator("input[type=range]").count() != 3:
        raise AssertionError(f"the explorer in cell {index} lacks its canvases or sliders")
    return explorer


def printed(tab, index: int) -> dict:
    """The JSON line cell ``index`` printed."""
    text = _cell(tab, index).locator(".jp-OutputArea-output pre").last.text_content()
    return json.loads(text)


def kernel_state(tab, index: int, lam: float, tries: int = 30) -> dict:
    """What the kernel holds once it holds ``lam`` and has stopped changing: the printing cell is
    run until two runs in a row print the same state. The front end may still be sending the
    slider's value when the cell first runs, and the kernel handles the widget's messages while a
    cell runs, so one print may catch ``values`` updated and the roots not yet recomputed."""
    last = None
    for _ in range(tries):
        run_cell(tab, index)
        state = printed(tab, index)
        if state == last and state["values"]["lam"] == lam:
            return state
        last = state
    raise AssertionError(f"the kernel never settled at lam = {lam}: {last}")


# The WCAG contrast ratio of each text of the explorer against the first opaque background behind
# it; the texts below 4.5 (the WCAG AA level for normal text).
CONTRAST = """(root) => {
  const rgba = (text) => (text.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const c = [r, g, b].map((v) => (v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  const behind = (node) => {
    for (let n = node; n; n = n.parentElement) {
      const c = rgba(getComputedStyle(n).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0)) return c;
    }
    return [255, 255, 255];
  };
  const low = [];
  const texts = "h2, .dd-sub, label, .dd-domain, .dd-axes, figcaption, .dd-conditions li";
  for (const node of root.querySelectorAll(texts)) {
    const fg = lum(rgba(getComputedStyle(node).color)), bg = lum(behind(node));
    const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
    if (ratio < 4.5) low.push(`${node.tagName.toLowerCase()}.${node.className}: ${ratio.toFixed(2)}`);
  }
  return low;
}"""


# ------------------------------------------------------------------ references, derived here
def momentum_roots(lam, m, eta) -> list[complex]:
    b = 1 + m + eta * lam
    d = cmath.sqrt(b * b - 4 * m)
    return [(b + d) / 2, (b - d) / 2]


def _same_roots(got, want, tol=1e-12) -> bool:
    got = sorted((complex(*z) for z in got), key=lambda z: (z.real, z.imag))
    want = sorted(want, key=lambda z: (z.real, z.imag))
    return len(got) == len(want) and all(abs(a - b) <= tol * max(1, abs(b))
                                         for a, b in zip(got, want, strict=True))


def _variance(png: bytes) -> float:
    from PIL import Image

    return float(np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=float).var())


def test_the_widget_runs_in_jupyterlab_and_its_keyboard_slider_moves_the_kernel(browser, lab):
    from depthdyn import momentum
    from depthdyn.explore import evaluate

    tab, errors = open_notebook(browser, lab, "explore", [WIDGET_CELL, PRINT_CELL, SECOND_VIEW_CELL])
    try:
        run_cell(tab, 0)
        view = explorer_view(tab, 0)
        first = kernel_state(tab, 1, AT["lam"])
        assert first["values"] == {"lam": -0.1, "m": 0.5, "eta": 1.0} and first["error"] == ""
        assert first["verdict"] == "strictly stable"  # complex pair, |r| = sqrt(m) < 1
        assert view.locator(".dd-verdict").text_content() == "strictly stable"

        slider = view.locator('input[type=range][data-param="lam"]')
        slider.focus()
        for _ in range(PRESSES):
            tab.keyboard.press("ArrowRight")
        # ArrowUp/ArrowDown are the notebook's command-mode keys: on a slider they move the slider
        tab.keyboard.press("ArrowDown")
        tab.keyboard.press("ArrowUp")
        lam = Fraction("-1/10") + PRESSES * STEP
        assert Fraction(slider.input_value()) == lam == Fraction(1, 10)
        assert tab.evaluate("document.activeElement.dataset.param") == "lam"  # the focus stayed

        second = kernel_state(tab, 1, float(lam))
        assert second["values"] == {"lam": 0.1, "m": 0.5, "eta": 1.0} and second["error"] == ""
        want = momentum_roots(0.1, 0.5, 1)  # real roots (1.6 +- sqrt(0.56)) / 2, one above 1
        assert _same_roots(second["roots"], want)
        assert second["stable"] is False and second["verdict"] == "not strictly stable"
        assert max(map(abs, want)) > 1

        # the view shows what the kernel holds and what depthdyn computes at the same point
        py = evaluate(momentum(), second["values"])
        assert py.stable is False
        assert view.locator(".dd-verdict").text_content() == second["verdict"]
        assert view.get_attribute("data-stable") == "false"
        radius = float(view.get_attribute("data-radius"))
        assert radius == pytest.approx(max(map(abs, want)), rel=1e-9)
        assert radius == pytest.approx(max(abs(z) for z in py.roots), rel=1e-9)
        assert view.locator(".dd-conditions li[data-holds=false]").count() >= 1

        shot = view.screenshot()
        assert _variance(shot) > 100  # text, fills and curves, not a blank view
        for i in range(3):
            assert _variance(view.locator("canvas").nth(i).screenshot()) > 10

        # a second view of the same widget: it starts where the first is, each label names its own
        # view's slider, and a key in one view moves the other through the shared model
        run_cell(tab, 2)
        other = explorer_view(tab, 2)
        other_slider = other.locator('input[type=range][data-param="lam"]')
        assert Fraction(other_slider.input_value()) == lam
        owns = "(el) => [...el.querySelectorAll('label')].every((l) => l.control && el.contains(l.control))"
        assert view.evaluate(owns) and other.evaluate(owns)
        ids = tab.evaluate("[...document.querySelectorAll('.dd-explorer [id]')].map((n) => n.id)")
        assert len(ids) == len(set(ids)) == 6, ids
        other_slider.focus()
        tab.keyboard.press("ArrowLeft")
        assert Fraction(slider.input_value()) == lam - STEP
        assert errors == []

        # in JupyterLab's dark theme the explorer's text still reads against what lies behind it
        tab.evaluate("window.jupyterapp.commands.execute('apputils:change-theme', "
                     "{theme: 'JupyterLab Dark'})")
        tab.wait_for_function("document.body.dataset.jpThemeLight === 'false'", timeout=WAIT_MS)
        low = view.evaluate(CONTRAST)
        assert low == [], low

        # the marker that keeps JupyterLab's shortcuts off the slider is what lets the keys through:
        # without it the notebook takes them and the keyboard check above fails
        tab.evaluate("(el) => el.removeAttribute('data-lm-suppress-shortcuts')", slider.element_handle())
        slider.focus()
        tab.keyboard.press("ArrowRight")
        assert Fraction(slider.input_value()) == lam - STEP
    finally:
        tab.close()


BROKEN_CELL = ("import depthdyn\n"
               "from depthdyn.explore import widget\n"
               "widget.front_end = lambda: 'this is not JavaScript ('  # the widget's module fails\n"
               "depthdyn.explore('momentum')")


def test_the_view_check_fails_without_the_explorer(browser, lab):
    """A notebook without the call, and a widget whose module fails to load, fail the view check."""
    tab, _ = open_notebook(browser, lab, "without", ["print('no explorer here')", BROKEN_CELL])
    try:
        run_cell(tab, 0)
        with pytest.raises(AssertionError, match="no explorer in cell 0: its output holds no widget view"):
            explorer_view(tab, 0)
        run_cell(tab, 1)
        with pytest.raises(AssertionError, match="no explorer in cell 1: the widget view shows .*error"):
            explorer_view(tab, 1)
    finally:
        tab.close()
