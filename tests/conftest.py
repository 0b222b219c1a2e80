import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _agg_backend(monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")


@pytest.fixture(scope="session")
def all_claim_results():
    """Every claim run once per test session (a tuple of frozen records, shared by the claims tests)."""
    from depthdyn.claims import run_claims

    return tuple(run_claims())


@pytest.fixture(scope="module")
def browser():
    """The system's headless Chromium through playwright (the explorer's page and JupyterLab tests)."""
    from system_programs import chromium

    exe = chromium()
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe, args=["--no-sandbox"])  # the system's, never a download
        yield b
        b.close()
