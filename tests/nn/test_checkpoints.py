"""Trained checkpoints on disk: ``depthdyn inspect DIR`` and ``PATH --model`` give the numbers of
the API on the model in memory; bad checkpoints end in one line and exit status 2."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="depthdyn inspect needs the optional torch extra")
transformers = pytest.importorskip("transformers", reason="transformers is not installed")

from depthdyn.cli import main  # noqa: E402
from depthdyn.errors import ParameterError  # noqa: E402
from depthdyn.nn import inspect  # noqa: E402
from depthdyn.nn.analysis.checkpoint import load_checkpoint, pick_device  # noqa: E402

torch.set_num_threads(1)

FIELDS = ("top_singular_values", "spectral_radius", "jacobian_trace", "norms", "grad_norms")

GPT2 = dict(n_embd=32, n_layer=2, n_head=2, vocab_size=64, n_positions=16, bos_token_id=0, eos_token_id=0)
VIT = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, image_size=16,
           patch_size=8, num_labels=3)


def _train(model, batch, steps: int = 4):
    """A few AdamW steps on random data: weights that differ from the initialisation."""
    before = {k: v.clone() for k, v in model.state_dict().items()}
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    model.train()
    for _ in range(steps):
        loss = model(**batch()).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    moved = [k for k, v in model.state_dict().items() if not torch.equal(v, before[k])]
    assert len(moved) > len(before) // 2  # trained: most tensors moved
    return model.eval()


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(**GPT2))
    init = transformers.GPT2LMHeadModel(transformers.GPT2Config(**GPT2)).eval()
    init.load_state_dict(model.state_dict())

    def batch():
        ids = torch.randint(0, 64, (4, 12))
        return {"input_ids": ids, "labels": ids}

    _train(model, batch)
    path = tmp_path_factory.mktemp("gpt2")
    model.save_pretrained(path)
    return path, model, init


@pytest.fixture(scope="module")
def vit_dir(tmp_path_factory):
    torch.manual_seed(1)
    model = transformers.ViTForImageClassification(transformers.ViTConfig(**VIT))

    def batch():
        return {"pixel_values": torch.randn(4, 3, 16, 16), "labels": torch.randint(0, 3, (4,))}

    _train(model, batch)
    path = tmp_path_factory.mktemp("vit")
    model.save_pretrained(path)
    return path, model


def _cli(capsys, *argv) -> dict:
    assert main(["inspect", *map(str, argv), "--json", "--quiet"]) == 0
    return json.loads(capsys.readouterr().out)


def _same(report: dict, ins) -> None:
    for f in FIELDS:
        want = np.where(np.isfinite(getattr(ins, f)), getattr(ins, f), np.nan)
        np.testing.assert_array_equal(np.array(report[f], dtype=float), want, err_msg=f)


def _ids(seq: int = 8):
    """The CLI's example batch, drawn here the same way (seed 0)."""
    return torch.randint(0, 64, (1, seq), generator=torch.Generator().manual_seed(0))


def test_save_pretrained_gpt2_matches_the_api(gpt2_dir, capsys):
    path, model, init = gpt2_dir
    report = _cli(capsys, path, "--seq", 8, "--tokens", 2, "--device", "cpu")
    ins = inspect(model, {"input_ids": _ids(), "use_cache": False}, tokens=2)
    assert report["names"] == ["transformer.h.0", "transformer.h.1"] and report["device"] == "cpu"
    _same(report, ins)
    # the trained weights are what was analysed: the initial ones give other numbers
    before = inspect(init, {"input_ids": _ids(), "use_cache": False}, tokens=2)
    assert not np.allclose(before.top_singular_values, np.array(report["top_singular_values"]))


def test_save_pretrained_vit_matches_the_api(vit_dir, capsys):
    path, model = vit_dir
    report = _cli(capsys, path, "--device", "cpu")
    x = torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(0))
    ins = inspect(model, {"pixel_values": x})
    # found in the base model (vit.layers or vit.encoder.layer, by the transformers version)
    assert report["names"] == list(ins.names) and len(ins.names) == 2 and ins.names[0].startswith("vit.")
    assert report["causal"] is False
    _same(report, ins)


USER_CODE = """
import torch, transformers

def make():
    cfg = transformers.GPT2Config({cfg})
    ids = torch.randint(0, 64, (2, 8), generator=torch.Generator().manual_seed(3))
    return transformers.GPT2LMHeadModel(cfg).eval(), {{"input_ids": ids, "use_cache": False}}
"""


@pytest.fixture
def builder(tmp_path):
    path = tmp_path / "arch.py"
    path.write_text(USER_CODE.format(cfg=", ".join(f"{k}={v!r}" for k, v in GPT2.items())))
    return f"{path}:make"


@pytest.mark.parametrize("form", ["pt", "safetensors", "nested"])
def test_state_dict_with_model_callable_matches_the_api(gpt2_dir, builder, tmp_path, capsys, form):
    _, model, _ = gpt2_dir
    state = model.state_dict()
    if form == "safetensors":  # tied weights stored once (lm_head is wte), as safetensors requires
        from safetensors.torch import save_file

        file = tmp_path / "w.safetensors"
        save_file({k: v.contiguous() for k, v in state.items() if k != "lm_head.weight"}, str(file))
    else:
        file = tmp_path / "w.pt"
        # a training script's checkpoint: nested, keys prefixed by DistributedDataParallel
        saved = {"state_dict": {f"module.{k}": v for k, v in state.items()}} if form == "nested" else state
        torch.save(saved, file)
    report = _cli(capsys, file, "--model", builder, "--tokens", 2, "--device", "cpu")
    ids = torch.randint(0, 64, (2, 8), generator=torch.Generator().manual_seed(3))
    _same(report, inspect(model, {"input_ids": ids, "use_cache": False}, tokens=2))


def _fail(capsys, *argv) -> str:
    assert main(["inspect", *map(str, argv), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("depthdyn: error:")
    return err


def test_bad_checkpoints_are_one_line_and_exit_2(gpt2_dir, builder, tmp_path, capsys):
    path, model, _ = gpt2_dir
    assert "no such checkpoint" in _fail(capsys, tmp_path / "nothing.safetensors")
    # a truncated weight file
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text((path / "config.json").read_text())
    data = (path / "model.safetensors").read_bytes()
    (broken / "model.safetensors").write_bytes(data[: len(data) // 2])
    assert "missing or corrupt" in _fail(capsys, broken)
    # a config with no weights
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "config.json").write_text((path / "config.json").read_text())
    assert "no weights" in _fail(capsys, bare)
    # an architecture transformers does not know
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / "config.json").write_text(json.dumps({"model_type": "no_such_architecture"}))
    (odd / "model.safetensors").write_bytes(data)
    assert "unknown architecture" in _fail(capsys, odd)
    # a directory that is no checkpoint, a state dict without its architecture, one that does not fit
    assert "no config.json" in _fail(capsys, tmp_path)
    sd = tmp_path / "w.pt"
    torch.save(model.state_dict(), sd)
    assert "--model module:callable" in _fail(capsys, sd)
    small = {k: v for k, v in model.state_dict().items() if ".h.1." not in k}
    torch.save(small, tmp_path / "small.pt")
    assert "missing keys" in _fail(capsys, tmp_path / "small.pt", "--model", builder)
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    assert "corrupt" in _fail(capsys, tmp_path / "junk.pt", "--model", builder)
    # device options that do not fit
    assert "needs a save_pretrained directory" in _fail(capsys, builder, "--device", "auto")
    assert "go with --device auto" in _fail(capsys, path, "--max-memory", "cpu=1GiB")
    assert "unknown device" in _fail(capsys, path, "--device", "tpu")
    if not torch.cuda.is_available():
        assert "CUDA is not available" in _fail(capsys, path, "--device", "cuda")


def test_device_default_is_the_models_else_cuda_when_available():
    assert pick_device("cpu") == torch.device("cpu")
    assert pick_device(None, torch.nn.Linear(2, 2)) == torch.device("cpu")
    want = "cuda" if torch.cuda.is_available() else "cpu"
    assert pick_device(None).type == want
    with pytest.raises(ParameterError, match="unknown device"):
        pick_device("gpu0")


def test_load_checkpoint_returns_the_trained_model_in_eval_mode(gpt2_dir):
    path, model, _ = gpt2_dir
    loaded = load_checkpoint(path, device="cpu")
    assert not loaded.training
    for (k, a), (_, b) in zip(loaded.state_dict().items(), model.state_dict().items(), strict=True):
        assert torch.equal(a, b), k
    wide = load_checkpoint(path, device="cpu", dtype=torch.float64)
    assert wide.transformer.h[0].attn.c_attn.weight.dtype == torch.float64
