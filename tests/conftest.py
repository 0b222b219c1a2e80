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
