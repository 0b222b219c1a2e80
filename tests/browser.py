"""The system's headless Chromium for the explorer's browser tests (never a downloaded one)."""

import os
import shutil

import pytest


def chromium() -> str:
    """Path of the system Chromium; skips with the reason ``.ci/run`` gives where it could not be
    installed (``DEPTHDYN_NO_BROWSER``), fails where it is simply missing."""
    for name in ("chromium", "chromium-browser"):
        exe = shutil.which(name)
        if exe:
            return exe
    reason = os.environ.get("DEPTHDYN_NO_BROWSER")
    if reason:
        pytest.skip(f"no headless browser: {reason}")
    pytest.fail("no chromium on PATH: install it (Debian: apt-get install chromium; .ci/run does) "
                "or set DEPTHDYN_NO_BROWSER=<why not>")
