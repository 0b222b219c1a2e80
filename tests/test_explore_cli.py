"""``depthdyn explore``: the page it writes, its exit statuses and its one-line errors."""

from __future__ import annotations

import json
import re

import pytest

from depthdyn.cli import main


def _state(path) -> dict:
    text = path.read_text(encoding="utf-8")
    found = re.search(r'<script type="application/json" id="depthdyn-explorer-data">(.*?)</script>',
                      text, re.S)
    return json.loads(found.group(1))


def test_writes_one_self_contained_page(tmp_path, capsys):
    out = tmp_path / "m.html"
    assert main(["explore", "momentum", "-p", "eta=1", "--at", "m=1/4", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    # one file: no external script, style sheet, font or image, and nothing evaluated
    assert not re.search(r"<script[^>]+src=|<link |@import|https?://|url\(", text)
    assert not re.search(r"\beval\s*\(|new\s+Function|\bFunction\s*\(|setTimeout\s*\(\s*['\"]", text)
    state = _state(out)
    assert [p["name"] for p in state["spec"]["params"]] == ["lam", "m"]  # eta is fixed by -p
    assert state["values"] == {"lam": -0.5, "m": 0.25}
    assert "sliders for lam, m" in capsys.readouterr().out


def test_structural_arguments_and_patterns(tmp_path):
    out = tmp_path / "s.html"
    assert main(["explore", "smooth", "-p", "k=3", "--out", str(out), "-q"]) == 0
    assert _state(out)["spec"]["degree"] == 3
    assert main(["explore", "residual:lam=a", "residual:lam=b", "--out", str(out), "-q"]) == 0
    spec = _state(out)["spec"]
    assert spec["period"] == 2 and [p["name"] for p in spec["params"]] == ["a", "b"]
    assert main(["explore", "--rule", "x' = x + a*f(x)", "--out", str(out), "-q"]) == 0
    assert {p["name"] for p in _state(out)["spec"]["params"]} == {"a", "lam"}


def test_no_free_parameter_still_gives_a_page(tmp_path):
    out = tmp_path / "r.html"
    assert main(["explore", "residual", "-p", "lam=-1/2", "--out", str(out), "-q"]) == 0
    state = _state(out)
    assert state["spec"]["params"] == [] and state["spec"]["x"] is None and state["values"] == {}


@pytest.mark.parametrize("argv, words", [
    (["explore", "momentm"], ["unknown family 'momentm'", "did you mean 'momentum'"]),
    (["explore", "momentum", "-p", "mm=1/2"], ["no parameter 'mm'", "did you mean 'm'"]),
    (["explore", "momentum", "--at", "etta=1"], ["no free parameter 'etta'", "did you mean 'eta'"]),
    (["explore", "momentum", "--x", "lamm"], ["no free parameter 'lamm'", "did you mean 'lam'"]),
    (["explore", "momentum", "--at", "m=2"], ["m=2 is outside its domain"]),
    (["explore", "momentum", "--at", "m=__import__('os')"], ["m"]),
    (["explore", "momentum", "--x", "m", "--y", "m"], ["two different parameters"]),
    (["explore", "momentum", "--depth", "0"], ["depth must be an integer in 1..2000"]),
    (["explore", "momentum", "--out", "page.txt"], [".html"]),
    (["explore"], ["needs a FAMILY"]),
    (["explore", "residual", "momentum", "-p", "lam=1"], ["not -p"]),
])
def test_bad_input_is_one_line_with_status_2(tmp_path, monkeypatch, capsys, argv, words):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("depthdyn: error: ")
    for word in words:
        assert word in err
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_an_unwritable_path_is_status_2(tmp_path, capsys):
    assert main(["explore", "residual", "--out", str(tmp_path / "missing" / "x.html")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_an_internal_error_is_status_3(monkeypatch, capsys, tmp_path):
    import importlib

    page_module = importlib.import_module("depthdyn.explore.page")  # the package re-exports page()
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(page_module, "write_page", broken)
    assert main(["explore", "residual", "--out", str(tmp_path / "x.html")]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error" in err
