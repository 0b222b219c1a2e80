"""The package is citable: a license, its URLs and authors, CITATION.cff and py.typed."""

import re
import tomllib
from pathlib import Path

from depthdyn.version import __version__

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_license_file_matches_the_declared_license():
    text = (ROOT / "LICENSE").read_text()
    assert PROJECT["license"] == "BSD-3-Clause" and PROJECT["license-files"] == ["LICENSE"]
    # the three clauses of BSD-3-Clause, the third the one BSD-2-Clause lacks
    assert text.startswith("BSD 3-Clause License") and re.search(r"^3\. Neither the name", text, re.M)


def test_urls_authors_and_typing_marker():
    urls = PROJECT["urls"]
    assert {"Homepage", "Source", "Issues", "Documentation"} <= set(urls)
    assert all(u.startswith("https://") for u in urls.values())
    assert PROJECT["authors"] and (ROOT / "depthdyn" / "py.typed").is_file()


def test_citation_file_agrees_with_the_package():
    fields = dict(re.findall(r"^([a-z-]+): *\"?([^\"\n]*)\"?$", (ROOT / "CITATION.cff").read_text(), re.M))
    assert fields["cff-version"] == "1.2.0" and fields["type"] == "software"
    assert fields["version"] == __version__ and fields["license"] == PROJECT["license"]
    assert fields["repository-code"] == PROJECT["urls"]["Source"]


def test_notebook_test_requirements_are_in_the_test_extra_and_pinned():
    extra = " ".join(PROJECT["optional-dependencies"]["test"])
    pins = dict(line.split("==") for line in (ROOT / "constraints-ci.txt").read_text().splitlines()
                if "==" in line and not line.startswith("#"))
    for name in ("nbclient", "nbformat", "ipykernel"):
        assert name in extra and name in pins, name
