"""Write the explorer page of docs/explore.md and its picture into docs/_static/explore/ (named
``explorer-*``: the gallery draws ``momentum.png`` into the same image folder of the build).

Run from the repository root: ``python docs/explore_page.py``. The page is what
``depthdyn explore momentum --out momentum.html`` writes; the picture is that page in headless
Chromium (the system's, driven by playwright), after moving the ``lam`` slider as a reader would.
"""

import shutil
from pathlib import Path

from depthdyn.explore import write_page

OUT = Path(__file__).resolve().parent / "_static" / "explore"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    page = write_page("momentum", OUT / "explorer-momentum.html", at={"lam": "-1/2", "m": "1/2", "eta": 1})
    from playwright.sync_api import sync_playwright

    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        tab = browser.new_page(viewport={"width": 1000, "height": 700})
        tab.goto(page.as_uri())
        tab.wait_for_function("window.depthdynExplorer !== undefined")
        tab.screenshot(path=str(OUT / "explorer-momentum.png"), full_page=True)
        browser.close()


if __name__ == "__main__":
    main()
