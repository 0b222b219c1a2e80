"""Experimental claims checked by training (``depthdyn verify --trained``)."""

import dataclasses
import json

import pytest

torch = pytest.importorskip("torch", reason="depthdyn.nn needs the optional torch extra")

from depthdyn.claims import VERDICTS  # noqa: E402
from depthdyn.cli import main  # noqa: E402
from depthdyn.nn.experiments.claims import CLAIMS, run_trained_claims  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def results():
    return {r.id: r for r in run_trained_claims()}


def test_every_trained_claim_gets_a_verdict_with_its_measurement(results):
    assert set(results) == {c.id for c in CLAIMS}
    for res in results.values():
        assert res.verdict in VERDICTS
        assert res.computed  # the measured numbers, also for a failing claim
        if res.verdict != "holds":
            assert res.note, res.id  # a caveat or a failure says why
    # 002 §4.1 at the documented step: C^1 cannot beat 75% (up to one point), C^2 separates
    assert results["002-s4.1-c1-limit"].verdict in ("holds", "holds-with-caveat")
    assert results["002-s4.1-c2-separates"].verdict in ("holds", "holds-with-caveat")
    # doubly stochastic products stay at gain 1 after training (Sinkhorn tolerance)
    assert results["003-s5-trained-composite"].verdict == "holds"


def test_the_stated_value_is_an_input(results):
    by_id = {c.id: c for c in CLAIMS}
    stricter = dataclasses.replace(by_id["002-s4.1-c1-limit"], stated="0.5").run()  # cached runs
    assert stricter.verdict == "fails"
    impossible = dataclasses.replace(by_id["002-s4.1-c2-separates"], stated="1.5").run()
    assert impossible.verdict == "fails"


def test_verify_trained_from_the_command_line(results, capsys):
    assert main(["verify", "--source", "003", "--trained", "--json"]) == 0
    captured = capsys.readouterr()
    ids = [r["id"] for r in json.loads(captured.out)["claims"]]
    assert "[trained claims 0/" in captured.err and "] done" in captured.err  # progress on stderr
    assert "003-s5-trained-composite" in ids and all(i.startswith("003-") for i in ids)
    assert [r.id for r in run_trained_claims("post")] == [c.id for c in CLAIMS if c.id.startswith("000-")]


def test_progress_is_reported_per_claim_and_at_the_end(monkeypatch):
    import depthdyn.nn.experiments.claims as trained
    from depthdyn.claims.base import Claim, Outcome

    fake = tuple(Claim(f"000-fake-{i}", CLAIMS[0].source, "§0", "fake", "1", "none",
                       lambda cl: Outcome("1", "holds")) for i in range(3))
    monkeypatch.setattr(trained, "CLAIMS", fake)
    calls = []
    out = trained.run_trained_claims(progress=lambda *a: calls.append(a))
    assert [r.id for r in out] == [c.id for c in fake]
    assert [c[:3] for c in calls] == [(0, 3, "000-fake-0"), (1, 3, "000-fake-1"), (2, 3, "000-fake-2"), (3, 3, None)]
    assert all(c[3] >= 0 for c in calls) and calls[-1][3] >= calls[0][3]
