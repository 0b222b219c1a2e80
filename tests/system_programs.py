"""System programs the tests drive (Debian's, installed by ``.ci/run``): where one is missing, the
test skips with the reason ``.ci/run`` gives for not installing it, and fails otherwise."""

import os
import shutil

import pytest


def _program(names: tuple[str, ...], what: str, why_not: str, install: str) -> str:
    """The first of ``names`` on PATH; else skip with ``$why_not`` or fail saying how to install it."""
    for name in names:
        exe = shutil.which(name)
        if exe:
            return exe
    reason = os.environ.get(why_not)
    if reason:
        pytest.skip(f"no {what}: {reason}")
    pytest.fail(f"no {names[0]} on PATH: install it (Debian: apt-get install {install}; .ci/run does) "
                f"or set {why_not}=<why not>")


def chromium() -> str:
    """The system's headless Chromium for the explorer's browser tests (never a downloaded one)."""
    return _program(("chromium", "chromium-browser"), "headless browser", "DEPTHDYN_NO_BROWSER", "chromium")


def pdflatex() -> str:
    """pdflatex for the LaTeX compile test."""
    return _program(("pdflatex",), "pdflatex", "DEPTHDYN_NO_LATEX",
                    "texlive-latex-base texlive-latex-recommended")
