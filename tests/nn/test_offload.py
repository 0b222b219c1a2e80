"""Models dispatched by accelerate (``device_map``): half the layers in CPU memory, half on disk,
inspected layer by layer with the result of the model in memory and without gathering its
weights; and layers given as module objects on a model analysed as a copy in another dtype."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="depthdyn inspect needs the optional torch extra")
transformers = pytest.importorskip("transformers", reason="transformers is not installed")

from depthdyn.errors import ParameterError  # noqa: E402
from depthdyn.nn import inspect  # noqa: E402

torch.set_num_threads(1)

FIELDS = ("top_singular_values", "spectral_radius", "jacobian_trace", "norms", "grad_norms", "perturbation")


def _config(width: int = 32, depth: int = 4):
    return transformers.GPT2Config(n_embd=width, n_layer=depth, n_head=2, vocab_size=64, n_positions=16,
                                   bos_token_id=0, eos_token_id=0)


def _half_on_disk(depth: int) -> dict:
    """The device map: embeddings, head and the first half of the layers on the CPU, the rest on disk."""
    dm = {f"transformer.{m}": "cpu" for m in ("wte", "wpe", "drop", "ln_f")} | {"lm_head": "cpu"}
    return dm | {f"transformer.h.{i}": "cpu" if i < depth // 2 else "disk" for i in range(depth)}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(_config()).double().eval()
    path = tmp_path_factory.mktemp("gpt2")
    model.save_pretrained(path)
    return path, model


def _dispatched(path, depth=4, dtype=torch.float64):
    pytest.importorskip("accelerate", reason="device_map needs accelerate")
    return transformers.GPT2LMHeadModel.from_pretrained(
        path, device_map=_half_on_disk(depth), offload_folder=str(path / "offload"), local_files_only=True,
        dtype=dtype,
    )


INPUTS = {"input_ids": torch.randint(0, 64, (2, 8), generator=torch.Generator().manual_seed(1)),
          "use_cache": False}


def test_offloaded_to_cpu_and_disk_gives_the_result_in_memory(saved):
    path, model = saved
    spread = _dispatched(path)
    on_disk = [n for n, p in spread.named_parameters() if p.device.type == "meta"]
    assert on_disk and all(".h.2." in n or ".h.3." in n for n in on_disk)  # half the layers wait on disk
    want = inspect(model, INPUTS, tokens=2)
    got = inspect(spread, INPUTS, tokens=2)
    # the same layers run on the same float64 numbers: equal to rounding (here bit for bit)
    for f in FIELDS:
        np.testing.assert_allclose(getattr(got, f), getattr(want, f), rtol=1e-12, atol=0, err_msg=f)
    assert got.device == "cpu, disk (device_map)" and any("dispatched by accelerate" in n for n in got.notes)
    # the disk half is still on the meta device afterwards, and the operators still work
    assert all(p.device.type == "meta" for n, p in spread.named_parameters() if n in on_disk)
    v = torch.randn(1, got.blocks.shape[0], 32, dtype=torch.float64)
    np.testing.assert_allclose(got.operator(3).rmatvec(v), want.operator(3).rmatvec(v), rtol=1e-12)


def test_split_steps_of_an_offloaded_model(saved):
    path, model = saved
    got = inspect(_dispatched(path), INPUTS, tokens=2, split=True)
    want = inspect(model, INPUTS, tokens=2, split=True)
    np.testing.assert_allclose(got.spectral_radius, want.spectral_radius, rtol=1e-12)


def test_dispatched_model_is_analysed_in_its_own_dtype(saved):
    path, _ = saved
    with pytest.raises(ParameterError, match="load it in the dtype to analyse"):
        inspect(_dispatched(path, dtype=torch.bfloat16), INPUTS, tokens=2)
    with pytest.raises(ParameterError, match="would load every weight"):
        inspect(_dispatched(path, dtype=torch.float32), INPUTS, tokens=2, dtype=torch.float64)


def test_cli_device_auto_offloads_and_matches(saved, capsys):
    from depthdyn.cli import main

    path, model = saved
    # max_memory leaves room on the CPU for part of the model only: the rest goes to disk
    argv = ["inspect", str(path), "--seq", "8", "--tokens", "2", "--dtype", "float64", "--device", "auto",
            "--max-memory", "cpu=250KB", "--json", "--quiet"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert "disk" in report["device"]
    ids = torch.randint(0, 64, (1, 8), generator=torch.Generator().manual_seed(0))
    want = inspect(model, {"input_ids": ids, "use_cache": False}, tokens=2)
    np.testing.assert_allclose(report["top_singular_values"], want.top_singular_values, rtol=1e-12)


MEMORY_SCRIPT = textwrap.dedent(
    """
    import contextlib, json, sys, threading, time
    from collections.abc import Mapping
    import torch, transformers
    torch.set_num_threads(1)
    from depthdyn.nn import inspect
    import depthdyn.nn.analysis.inspection as inspection

    path, depth, mutant = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "mutant"
    if mutant:  # the recording's graph keeps what it saved, weights included
        inspection.weights_by_reference = lambda model: contextlib.nullcontext()

    def anon():  # anonymous resident memory: tensors, not the memory-mapped checkpoint
        for line in open("/proc/self/status"):
            if line.startswith("RssAnon"):
                return int(line.split()[1]) * 1024

    class Copying(Mapping):
        # each load a fresh copy, as a load onto a GPU is: its lifetime is what is measured
        def __init__(self, source):
            self.source = source
        def __getitem__(self, key):
            return self.source[key].clone()
        def __iter__(self):
            return iter(self.source)
        def __len__(self):
            return len(self.source)

    dm = {f"transformer.{m}": "cpu" for m in ("wte", "wpe", "drop", "ln_f")} | {"lm_head": "cpu"}
    dm |= {f"transformer.h.{i}": "cpu" if i < depth // 2 else "disk" for i in range(depth)}
    model = transformers.GPT2LMHeadModel.from_pretrained(
        path, device_map=dm, offload_folder=path + "/offload", local_files_only=True, dtype=torch.float64)
    for m in model.modules():
        hook = getattr(m, "_hf_hook", None)
        if hook is not None and getattr(hook, "offload", False):
            hook.weights_map = Copying(hook.weights_map)
    ids = torch.randint(0, 64, (1, 8), generator=torch.Generator().manual_seed(0))
    opts = dict(tokens=1, k=1, steps=16, dense_max=0, probes=2)
    inspect(model, {"input_ids": ids[:, :4], "use_cache": False}, **opts)  # first-use allocations
    base, peak, done = anon(), [0], threading.Event()

    def poll():
        while not done.is_set():
            peak[0] = max(peak[0], anon())
            time.sleep(0.001)

    watcher = threading.Thread(target=poll)
    watcher.start()
    ins = inspect(model, {"input_ids": ids, "use_cache": False}, **opts)
    done.set()
    watcher.join()
    layer = sum(p.numel() * p.element_size() for p in model.transformer.h[0].parameters())
    sigma = ins.top_singular_values[:, 0, 0].tolist()
    print(json.dumps({"peak": max(peak[0], anon()) - base, "after": anon() - base, "layer": layer,
                      "disk": layer * (depth - depth // 2), "sigma": sigma}))
    """
)


def _measure(path, depth, mode) -> dict:
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="65536")  # freed tensors go back to the system
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-c", MEMORY_SCRIPT, str(path), str(depth), mode], env=env,
                         capture_output=True, text=True, timeout=600, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_offloaded_weights_are_never_gathered(tmp_path):
    """Peak memory of the analysis stays below the model's weights plus one layer's, and in fact
    below the offloaded half: the disk layers are in memory one at a time."""
    pytest.importorskip("accelerate", reason="device_map needs accelerate")
    if not os.path.exists("/proc/self/status"):
        pytest.skip("resident memory is read from /proc")
    depth = 8
    torch.manual_seed(0)
    transformers.GPT2LMHeadModel(_config(256, depth)).double().eval().save_pretrained(tmp_path)
    total = sum(p.numel() * 8 for p in transformers.GPT2LMHeadModel(_config(256, depth)).parameters())
    got = _measure(tmp_path, depth, "fixed")
    assert got["peak"] < total + got["layer"]  # the bound asked for
    assert got["peak"] < got["disk"] / 2  # stronger: the disk half is never all in memory
    assert got["after"] < got["disk"] / 4  # nothing of it kept by the result
    # the mutant's recording saves the offloaded weights themselves: while the analysis runs, most
    # of the disk half is in memory at once (the result keeps no graph, so it is freed after)
    bad = _measure(tmp_path, depth, "mutant")
    assert bad["peak"] > got["peak"] + bad["disk"] / 2
    assert not bad["peak"] < bad["disk"] / 2  # the stronger bound above catches it
    assert bad["sigma"] == got["sigma"]


# -- layers given as modules on an analysis copy (float64 of a float32 model, float32 of bfloat16) --


@pytest.mark.parametrize("model_dtype, dtype", [(torch.float32, torch.float64), (torch.bfloat16, None)])
def test_layers_as_modules_on_an_analysis_copy(model_dtype, dtype):
    torch.manual_seed(0)
    model = transformers.GPT2Model(_config()).to(model_dtype).eval()
    by_modules = inspect(model, INPUTS, list(model.h), tokens=2, dtype=dtype)
    by_name = inspect(model, INPUTS, "h.*", tokens=2, dtype=dtype)
    assert by_modules.names == by_name.names == ("h.0", "h.1", "h.2", "h.3")
    assert by_modules.dtype == ("float64" if dtype else "float32")
    for f in FIELDS:
        np.testing.assert_array_equal(getattr(by_modules, f), getattr(by_name, f), err_msg=f)
    # a subset
    picked = inspect(model, INPUTS, [model.h[1], model.h[3]], tokens=2, dtype=dtype)
    assert picked.names == ("h.1", "h.3")
    # a module of another model is still refused
    other = transformers.GPT2Model(_config())
    with pytest.raises(ParameterError, match="not submodules"):
        inspect(model, INPUTS, [other.h[0]], tokens=2, dtype=dtype)
