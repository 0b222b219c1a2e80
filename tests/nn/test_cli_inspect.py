"""``depthdyn inspect``: a module:callable (the user's code, run) and a Hugging Face config file,
--json that parses, a figure, and one-line errors with exit status 2."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="depthdyn inspect needs the optional torch extra")

from depthdyn.cli import main  # noqa: E402

torch.set_num_threads(1)

USER_CODE = """
import torch
from depthdyn.nn.experiments.zoo import ResidualMLP

def make():
    torch.manual_seed(0)
    return ResidualMLP(dim=8, depth=3).double().eval(), torch.randn(2, 8, dtype=torch.float64)
"""


@pytest.fixture
def user_file(tmp_path):
    path = tmp_path / "mymodel.py"
    path.write_text(USER_CODE)
    return path


def test_module_callable_json_matches_the_library_call(user_file, capsys):
    assert (
        main(
            [
                "inspect",
                f"{user_file}:make",
                "--json",
                "--quiet",
                "--family",
                "momentum",
                "-p",
                "m=0.9",
                "-p",
                "eta=0.5",
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    from depthdyn.nn.analysis import inspect
    from depthdyn.nn.experiments.zoo import ResidualMLP

    torch.manual_seed(0)
    model, x = ResidualMLP(dim=8, depth=3).double().eval(), torch.randn(2, 8, dtype=torch.float64)
    ins = inspect(model, x)
    assert report["names"] == ["layers.0", "layers.1", "layers.2"]
    assert report["top_singular_values"] == ins.top_singular_values.tolist()
    want = ins.placement("momentum", m=0.9, eta=0.5).fraction_inside
    assert report["placement"]["fraction_inside"] == pytest.approx(want)
    assert report["placement"]["params"][0] == {"eta": 0.5, "m": 0.9}


def test_figure_is_written(user_file, tmp_path, capsys):
    out = tmp_path / "placement.svg"
    assert main(["inspect", f"{user_file}:make", "--quiet", "--out", str(out)]) == 0
    assert out.read_text().lstrip().startswith("<?xml") and "inside" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["inspect", "no_such_module_here:make"], "importing no_such_module_here failed"),
        (["inspect", "os:getcwd"], "must return (model, example_input)"),
        (["inspect", "{file}:make", "--family", "momentum", "-p", "m=x"], "NAME=NUMBER"),
        (["inspect", "{file}:make", "--family", "momentum", "-p", "m=0.9"], "missing"),
        (["inspect", "{file}:make", "--out", "fig.txt"], ".png, .svg or .pdf"),
        (["inspect", "{file}:make", "--steps", "0"], "--steps"),
        (["inspect", "{file}:make", "--stack", "0"], "stack"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(user_file, capsys, argv, message):
    argv = [a.replace("{file}", str(user_file)) for a in argv]
    assert main(argv + ["--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and err.startswith("depthdyn: error:")


def test_hugging_face_config_file_with_random_weights(tmp_path, capsys):
    pytest.importorskip("transformers", reason="transformers is not installed")
    cfg = tmp_path / "gpt2.json"
    cfg.write_text(
        json.dumps(
            {
                "model_type": "gpt2",
                "n_embd": 32,
                "n_layer": 2,
                "n_head": 2,
                "vocab_size": 64,
                "n_positions": 16,
                "bos_token_id": 0,
                "eos_token_id": 0,
            }
        )
    )
    assert main(["inspect", str(cfg), "--seq", "6", "--tokens", "2", "--split", "--json", "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["names"] == ["h.0.attention", "h.0.mlp", "h.1.attention", "h.1.mlp"]
    assert report["causal"] is True and len(report["blocks"]) == 2
    # the two layers in one pass (--stack 2): the note says so, the figures are the same to their bounds
    argv = ["inspect", str(cfg), "--seq", "6", "--tokens", "2", "--dense-max", "0", "--steps", "4", "--json",
            "--quiet"]
    assert main(argv) == 0
    alone = json.loads(capsys.readouterr().out)
    assert main(argv + ["--stack", "2"]) == 0
    together = json.loads(capsys.readouterr().out)
    assert any("2 same-shaped token-local steps analysed together" in n for n in together["notes"])
    assert not any("analysed together" in n for n in alone["notes"])
    gap = np.abs(np.array(together["top_singular_values"]) - np.array(alone["top_singular_values"]))
    bound = np.maximum(together["accuracy"]["singular_values"], alone["accuracy"]["singular_values"])
    assert np.all(gap <= 2 * np.array(bound)[:, None, None] + 1e-12)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"n_layer": 2}))
    assert main(["inspect", str(bad), "--quiet"]) == 2
    assert "no model_type" in capsys.readouterr().err
