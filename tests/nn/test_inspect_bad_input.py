"""``depthdyn inspect`` on input that used to crash or run away: one line and exit status 2."""

import json

import pytest

torch = pytest.importorskip("torch", reason="depthdyn inspect needs the optional torch extra")
transformers = pytest.importorskip("transformers", reason="transformers is not installed")

from depthdyn.cli import main  # noqa: E402
from depthdyn.limits import MAX_PARAMETERS  # noqa: E402


def _refused(argv, capsys, *words):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("depthdyn: error:")
    for word in words:
        assert word in err
    return err


def test_user_code_that_calls_sys_exit_is_bad_input(tmp_path, capsys):
    path = tmp_path / "exits.py"
    path.write_text("import sys\n\ndef make():\n    sys.exit(7)\n")
    _refused(["inspect", f"{path}:make", "--quiet"], capsys, "sys.exit(7)")
    at_import = tmp_path / "exits_at_import.py"
    at_import.write_text("import sys\nsys.exit(5)\n")
    _refused(["inspect", f"{at_import}:make", "--quiet"], capsys, "sys.exit(5)")


def test_a_config_nested_too_deeply_is_bad_input(tmp_path, capsys):
    path = tmp_path / "deep.json"
    path.write_text('{"model_type": "gpt2", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    _refused(["inspect", str(path), "--quiet"], capsys, "nested too deeply")
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    (ckpt / "config.json").write_text(path.read_text())
    _refused(["inspect", str(ckpt), "--quiet"], capsys, "nested too deeply")


def test_a_config_past_the_parameter_limit_is_refused_before_it_is_built(tmp_path, capsys):
    # GPT-2 blocks of width 768 hold 12 * 768^2 (about 7.1e6) weights each: 10^5 of them are 7e11
    path = tmp_path / "huge.json"
    path.write_text(json.dumps({"model_type": "gpt2", "n_layer": 100_000}))
    assert 100_000 * 12 * 768**2 > MAX_PARAMETERS
    _refused(["inspect", str(path), "--quiet"], capsys, "parameters")
    # past the bound of the exact count only: a wide vocabulary (the bound counts layers x width^2)
    wide = tmp_path / "wide.json"
    vocab = MAX_PARAMETERS // 64 + 1
    wide.write_text(json.dumps({"model_type": "gpt2", "n_layer": 1, "n_embd": 64, "n_head": 2,
                                "vocab_size": vocab}))
    _refused(["inspect", str(wide), "--quiet"], capsys, "parameters")


def test_a_composite_model_type_is_refused_in_one_line(capsys):
    _refused(["inspect", "clip", "--quiet"], capsys, "clip", "module:callable")
