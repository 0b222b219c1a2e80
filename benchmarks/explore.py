"""The stability explorer's page: its size, and the time of a slider move in headless Chromium.

Usage::

    python benchmarks/explore.py [--moves N]

For each page (a family with 4 free parameters among them, target < 1 MB) the script prints the
page's size and, in the system's headless Chromium (playwright, never a downloaded browser), the
median and the 90th percentile over ``N`` moves of one slider of the time from setting its value
and dispatching the ``input`` event to the end of the redraw of every view (measured inside the
page with ``performance.now()``; target < 50 ms), and its ratio to the momentum page's move timed
in the same run (the baseline: three parameters, a quadratic). ``redraw`` is the explorer's own
measure of one update (recomputation and drawing of every view). The load average is printed
before and after; on a shared machine compare the ratios.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from depthdyn.explore import page  # noqa: E402

PAGES = {
    # 4 free parameters: lam, H^res_11, H^post_1, H^post_2 (the H^pre fixed)
    "hyper_connection (4 free)": "hyper_connection:hpre_1=1/2,hpre_2=1/2",
    "hyper_connection (6 free)": "hyper_connection",
    "momentum (3 free)": "momentum",
    "kromhc (3 free, 4 streams)": "kromhc",
}

_TIME_MOVES = """([name, n]) => {
  const s = document.querySelector(`input[type=range][data-param="${name}"]`);
  const lo = Number(s.min), hi = Number(s.max);
  const moves = [], compute = [];
  for (let i = 0; i < n; i++) {
    const v = String(lo + ((i * 0.618034) % 1) * (hi - lo));
    const t0 = performance.now();
    s.value = v; s.dispatchEvent(new Event("input", { bubbles: true }));
    moves.push(performance.now() - t0);
    compute.push(window.depthdynExplorer.state().milliseconds);
  }
  return { moves, compute };
}"""


def _q(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=60)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        sys.exit("no chromium on PATH (Debian: apt-get install chromium)")
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        for label, spec in PAGES.items():
            html = page(spec)
            path = Path(tmp) / "page.html"
            path.write_text(html, encoding="utf-8")
            tab = browser.new_page(viewport={"width": 1100, "height": 900})
            tab.goto(path.as_uri())
            tab.wait_for_function("window.depthdynExplorer !== undefined")
            first = tab.evaluate("document.querySelector('input[type=range]').dataset.param")
            tab.evaluate(_TIME_MOVES, [first, 5])  # warm the JIT
            out = tab.evaluate(_TIME_MOVES, [first, args.moves])
            tab.close()
            rows.append((label, len(html.encode()), statistics.median(out["moves"]), _q(out["moves"], 0.9),
                         statistics.median(out["compute"])))
        browser.close()
    base = next(med for label, _, med, _, _ in rows if label.startswith("momentum"))
    print(f"{'page':28} {'size':>9} {'move median':>12} {'p90':>8} {'x momentum':>11} {'redraw':>8}")
    for label, size, med, p90, redraw in rows:
        print(f"{label:28} {size / 1024:7.1f}kB {med:10.2f}ms {p90:6.2f}ms {med / base:11.2f} "
              f"{redraw:6.2f}ms")
    print("targets: size < 1024 kB; a slider move < 50 ms")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
