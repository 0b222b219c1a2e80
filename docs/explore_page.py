"""Write the explorer page that docs/explore.md embeds: docs/_static/explore/explorer-momentum.html.

``docs/conf.py`` runs :func:`write_explorer` at every build, so the embedded page always runs the
current front end, and ``html_extra_path`` copies it next to the HTML pages, where the page's
``<iframe>`` finds it (the folder is build output, not kept in git). By hand, from the repository root: ``python docs/explore_page.py``. The
page is what ``depthdyn explore momentum --at lam=-1/2 --at m=1/2 --at eta=1 --out PAGE`` writes
(named ``explorer-*``: the gallery draws ``momentum.png`` into the same build).
"""

from pathlib import Path

from depthdyn.explore import write_page

OUT = Path(__file__).resolve().parent / "_static" / "explore"
#: The page's file name, beside the built explore.html.
NAME = "explorer-momentum.html"
#: Where its sliders start: lam = -1/2, m = 1/2, eta = 1 (strictly stable, roots of modulus sqrt(1/2)).
AT = {"lam": "-1/2", "m": "1/2", "eta": 1}


def write_explorer(out: Path = OUT) -> Path:
    """Write the momentum explorer into ``out``; returns its path."""
    out.mkdir(parents=True, exist_ok=True)
    return write_page("momentum", out / NAME, at=AT)


if __name__ == "__main__":
    print(write_explorer())
