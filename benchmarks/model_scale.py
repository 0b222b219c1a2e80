"""Model-scale layer spectra: ``depthdyn.nn.inspect`` against today's dense ``linearise``.

Usage::

    python benchmarks/model_scale.py [--json FILE] [--threads N] [--steps S] [--tol T]

Cases (random weights, float32, each in a fresh subprocess so that its peak resident memory,
``ru_maxrss``, is its own):

* ``vector``: a pre-norm residual MLP stack of width 768 (hidden 3072), 12 layers, 64
  inputs; per layer and input the top-5 singular values and the spectral radius of the
  ``768 x 768`` layer Jacobian (Golub–Kahan–Lanczos / Arnoldi, at most ``S`` steps, stopped
  at the residual bound ``T`` relative), plus a Hutchinson trace.
* ``causal``: a GPT-2-style decoder of width 256, 6 layers, one sequence of 256 tokens; the
  same per sampled token block (8 tokens), where the whole-sequence Jacobian would be
  ``65536 x 65536``.
* ``dense-small`` vs ``inspect-small``: the baseline. Today's ``linearise`` builds dense
  per-sample Jacobians of a float64 copy of a ``DepthStack``; it fits only a reduced case
  (width 768, 12 layers, 4 inputs here). The same stack, the same inputs, run through
  ``inspect``, side by side.

* models as they ship (``transformers`` from its configuration objects, random weights, batch 1,
  the default analysis, float32): ``gpt2-256`` and ``gpt2-1024`` (GPT-2 small, 12 layers,
  d = 768, T = 256 / 1024; targets 60 s and 4 GB / 180 s), ``llama-256`` (a LLaMA of 8 layers
  at width 2048, T = 256; 120 s), ``bert-128`` (BERT-base, T = 128), ``vit-224`` (ViT-B/16 at
  224 pixels) and ``resnet50-224`` (60 s each); on a GPU, ``llama3-8b``: a random model of
  Llama-3-8B's shape (32 layers at width 4096, T = 256, float32; 20 s on an H100).
  ``sv_rel`` / ``rho_rel`` are the largest error bounds relative to the smallest value they
  bound: ``<= tol`` means the bounds were reached.

Each time is also given as a multiple of one plain forward pass of the same model on the same
inputs, on the same device (``--device``, default the CPU), timed in the same process: on a
shared machine the load changes the seconds, much less the ratio; with ``--threads 1`` the
multiple in CPU seconds (the analysis's over the forward pass's) is the one the load moves least.
With ``--device cuda`` the host's cores are all used (``--threads``): the small dense
eigenproblems of the Krylov tests run there, spread one matrix per thread.
Where the time goes is printed beside it: the seconds, calls and vectors of the Jacobian
products (``J^T v``, ``J w``), and the rest (recording, checks, dense and Ritz work).
The 60 s / 4 GB target of the model-scale cases is reported, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _cpu() -> float:
    """CPU seconds of this process (user + system): on a shared machine, with one thread, the
    wall time this work would take on an idle core."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


#: Real-size models from their libraries' configuration objects (random weights).
SHIPPED = ("gpt2-256", "gpt2-1024", "llama-256", "bert-128", "vit-224", "resnet50-224", "llama3-8b")


def _shipped(name: str, device: str = "cpu"):
    """(model, inputs, layers) of a real-size case: default configurations, random weights."""
    import torch
    import transformers as tf

    torch.manual_seed(0)
    layers = None
    if name == "llama3-8b":
        # Llama-3-8B's shape (32 layers, width 4096, GQA 32/8 heads): initialised on the device
        # itself, since 8e9 random numbers take minutes on a CPU
        cfg = tf.LlamaConfig(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                             num_attention_heads=32, num_key_value_heads=8, vocab_size=128256)
        with torch.device(device):
            model = tf.LlamaModel(cfg)
        inputs = {"input_ids": torch.randint(0, 128256, (1, 256)), "use_cache": False}
    elif name.startswith("gpt2"):
        model = tf.GPT2Model(tf.GPT2Config())
        inputs = {"input_ids": torch.randint(0, 50257, (1, int(name.split("-")[1]))), "use_cache": False}
    elif name == "llama-256":
        cfg = tf.LlamaConfig(hidden_size=2048, intermediate_size=5632, num_hidden_layers=8,
                             num_attention_heads=16,
                             num_key_value_heads=16, vocab_size=32000)
        model = tf.LlamaModel(cfg)
        inputs = {"input_ids": torch.randint(0, 32000, (1, 256)), "use_cache": False}
    elif name == "bert-128":
        model = tf.BertModel(tf.BertConfig())
        inputs = {"input_ids": torch.randint(0, 30522, (1, 128))}
    elif name == "vit-224":
        model = tf.ViTModel(tf.ViTConfig())
        inputs = {"pixel_values": torch.randn(1, 3, 224, 224)}
    else:
        model = tf.ResNetModel(tf.ResNetConfig())
        inputs = {"pixel_values": torch.randn(1, 3, 224, 224)}
        layers = "encoder.stages.*.layers.*"
    return model.eval(), inputs, layers


def _timed_products(info: dict):
    """Count and time the Jacobian products (``J^T v``, ``J w``) of every operator (one layer's,
    or several layers' stacked): where the time of an analysis goes, beside the recording, the
    checks and the small dense work."""
    from depthdyn.nn.analysis.operators import LayerOperator
    from depthdyn.nn.analysis.stacked import StackedOperator

    for method in ("rmatvec", "matvec"):
        info[f"{method}_calls"] = info[f"{method}_vectors"] = 0
        info[f"{method}_seconds"] = 0.0
        for cls in (LayerOperator, StackedOperator):
            plain = getattr(cls, method)

            def timed(self, V, plain=plain, method=method):
                t = time.perf_counter()
                out = plain(self, V)
                info[f"{method}_seconds"] += time.perf_counter() - t
                info[f"{method}_calls"] += 1
                info[f"{method}_vectors"] += V.shape[0]
                return out

            setattr(cls, method, timed)


def _case(name: str, steps: int, tol: float, device: str = "cpu", stack: int | None = None,
          profile: Path | None = None) -> dict:
    import cProfile
    import pstats

    import numpy as np
    import torch

    from depthdyn.nn.analysis import inspect, linearise
    from depthdyn.nn.blocks import DepthStack, ResidualBlock, mlp
    from depthdyn.nn.experiments.zoo import GPT2Style, ResidualMLP

    torch.manual_seed(0)
    info: dict = {"case": name, "device": device, "load_start": os.getloadavg()[0], "stack": stack}
    _timed_products(info)
    dev = torch.device(device)

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    def forward_time(model, inputs) -> float:
        """Median of plain forward passes on the same device: the baseline, timed in the same
        process (the model and its inputs are moved to ``device`` here). 3 on the CPU; 25 after
        3 more to warm up on a GPU, where a pass takes milliseconds and single passes of GPT-2
        small varied from 5 to 12 ms between runs."""
        model.to(dev)
        if isinstance(inputs, dict):
            inputs.update({k: v.to(dev) for k, v in inputs.items() if isinstance(v, torch.Tensor)})
            call = lambda: model(**inputs)  # noqa: E731
        else:
            x = inputs.to(dev)
            call = lambda: model(x)  # noqa: E731
        with torch.no_grad():
            for _ in range(1 if dev.type == "cpu" else 3):
                call()
            times, cpus = [], []
            for _ in range(3 if dev.type == "cpu" else 25):
                sync()
                t, c = time.perf_counter(), _cpu()
                call()
                sync()
                times.append(time.perf_counter() - t)
                cpus.append(_cpu() - c)
        # on the CPU with one thread, CPU seconds are the work: the multiple that the load moves least
        info["forward_cpu_seconds"] = sorted(cpus)[len(cpus) // 2]
        return sorted(times)[len(times) // 2]

    if name == "vector":
        model = ResidualMLP(dim=768, depth=12).eval()
        x = torch.randn(64, 768)
        info["forward_seconds"] = forward_time(model, x)
        t0, c0 = time.perf_counter(), _cpu()
        ins = inspect(model, x, k=5, steps=steps, tol=tol, dense_max=0)
    elif name == "causal":
        model = GPT2Style(dim=256, depth=6, heads=4, vocab=512, context=256).eval()
        ids = torch.randint(0, 512, (1, 256))
        info["forward_seconds"] = forward_time(model, ids)
        t0, c0 = time.perf_counter(), _cpu()
        ins = inspect(model, ids, k=5, tokens=8, steps=steps, tol=tol, dense_max=0)
    elif name in ("dense-small", "inspect-small"):
        stack = DepthStack(ResidualBlock(768, mlp(768)) for _ in range(12))
        x = torch.randn(4, 768)
        info["forward_seconds"] = forward_time(stack, x)
        t0, c0 = time.perf_counter(), _cpu()
        if name == "dense-small":
            lin = linearise(stack, x)
            sj = torch.from_numpy(lin.state_jacobians)
            sv = torch.linalg.svdvals(sj)[..., :5].numpy()
            rho = torch.linalg.eigvals(sj).abs().amax(-1).numpy()
            info["sigma"] = sv.tolist()
            info["rho"] = rho.tolist()
        else:
            ins = inspect(stack, x, k=5, steps=steps, tol=tol, dense_max=0)
    elif name in SHIPPED:
        model, inputs, layers = _shipped(name, device)
        info["forward_seconds"] = forward_time(model, inputs)
        t0, c0 = time.perf_counter(), _cpu()
        prof = cProfile.Profile()
        if profile:
            prof.enable()
        ins = inspect(model, inputs, layers, k=5, steps=steps, tol=tol, stack=stack)
        prof.disable()
        if profile:  # where the analysis's time goes, in its costliest calls
            with profile.open("w") as fh:
                for key in ("cumulative", "tottime"):
                    pstats.Stats(prof, stream=fh).sort_stats(key).print_stats(45)
                pstats.Stats(prof, stream=fh).sort_stats("cumulative").print_stats("depthdyn", 60)
    else:
        raise SystemExit(f"unknown case {name}")
    info["seconds"] = time.perf_counter() - t0
    info["cpu_seconds"] = _cpu() - c0
    if name != "dense-small":
        info["sigma"] = ins.top_singular_values.tolist()
        info["methods"] = sorted(set(ins.methods))
        info["rho"] = ins.spectral_radius.tolist()
        info["sv_bound_max"] = float(np.max(ins.accuracy["singular_values"]))
        info["rho_bound_max"] = float(np.max(ins.accuracy["spectral_radius"]))
        info["shape"] = list(ins.top_singular_values.shape)
        low = np.nanmin(ins.top_singular_values, axis=(1, 2))
        info["sv_rel"] = float(np.max(ins.accuracy["singular_values"] / low))
        rho = np.nanmin(ins.spectral_radius, axis=1)
        info["rho_rel"] = float(np.nanmax(np.where(np.isnan(rho), 0, ins.accuracy["spectral_radius"] / rho)))
        info["estimate_seconds"] = ins.estimate_seconds
        info["stacked"] = [n for n in ins.notes if "analysed together" in n]
        # the steps whose Krylov iterations stopped at the step cap short of the tolerance, by how much
        sv_step = ins.accuracy["singular_values"] / np.nanmin(ins.top_singular_values, axis=(1, 2))
        with np.errstate(invalid="ignore"):
            rho_step = ins.accuracy["spectral_radius"] / np.nanmin(ins.spectral_radius, axis=1)
        # an iteration stopped at the cap only where its method says it took all ``steps``: the
        # bound over value above is the step's largest bound over its smallest value, which can
        # pass tol when every problem met it (each against its own value)
        capped = [re.search(rf"(arnoldi|Lanczos) \({steps} steps", m) is not None for m in ins.methods]
        info["short_of_tol"] = [
            [ins.names[i], float(sv_step[i]), float(np.nan_to_num(rho_step[i]))]
            for i in range(len(ins.names))
            if capped[i] and (sv_step[i] > tol or np.nan_to_num(rho_step[i]) > tol)
        ]
    info["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if dev.type == "cuda":
        info["gpu_peak_mb"] = torch.cuda.max_memory_allocated(dev) / 2**20
    info["load_end"] = os.getloadavg()[0]
    return info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--threads", type=int,
                        help="torch CPU threads (default 2 on the CPU, all the host's cores with a GPU)")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--tol", type=float, default=1e-3)
    parser.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (the forward pass timed there)")
    parser.add_argument("--stack", type=int, help="inspect's stack (default: layers together on a GPU)")
    parser.add_argument("--case")
    parser.add_argument("--profile", type=Path,
                        help="with --case and a model as it ships: write the analysis's costliest calls "
                             "(cProfile) to this file")
    parser.add_argument("--only", nargs="*", default=["vector", "causal", "dense-small", "inspect-small"])
    args = parser.parse_args()
    if args.threads is None:  # a GPU's host does the small dense work: its cores are part of the machine
        args.threads = 2 if args.device == "cpu" else os.cpu_count() or 1
    if args.case:
        import torch

        torch.set_num_threads(args.threads)
        print(json.dumps(_case(args.case, args.steps, args.tol, args.device, args.stack, args.profile)))
        return
    rows = []
    for name in args.only:
        cmd = [
            sys.executable,
            __file__,
            "--case",
            name,
            "--threads",
            str(args.threads),
            "--steps",
            str(args.steps),
            "--tol",
            str(args.tol),
            "--device",
            args.device,
        ] + (["--stack", str(args.stack)] if args.stack else [])
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode:
            why = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode
            print(f"{name:<14} failed: {why}")
            continue
        rows.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        r = rows[-1]
        extra = (
            f"  shape {r['shape']}  bounds sv {r['sv_bound_max']:.2g} rho {r['rho_bound_max']:.2g}"
            f" (relative {r['sv_rel']:.2g} / {r['rho_rel']:.2g}; estimate {r['estimate_seconds']:.0f} s)"
            f"  {'; '.join(r['methods'])}"
            if "shape" in r
            else ""
        )
        fw = r["seconds"] / r["forward_seconds"]
        fw_cpu = r["cpu_seconds"] / r["forward_cpu_seconds"]
        products = r["rmatvec_seconds"] + r["matvec_seconds"]
        print(
            f"{name:<14} {r['seconds']:8.1f} s (cpu {r['cpu_seconds']:7.1f} s) = {fw:8.0f} forward passes"
            f" (in CPU time {fw_cpu:.0f}) on {r['device']}  peak {r['peak_rss_mb']:6.0f} MB{extra}\n"
            f"{'':<14} {'; '.join(r.get('stacked') or ['layers one by one'])}"
            f"{'; GPU peak {:.0f} MB'.format(r['gpu_peak_mb']) if 'gpu_peak_mb' in r else ''}\n"
            f"{'':<14} time in products: J^T v {r['rmatvec_seconds']:.1f} s ({r['rmatvec_calls']} calls, "
            f"{r['rmatvec_vectors']} vectors), J w {r['matvec_seconds']:.1f} s ({r['matvec_calls']} calls, "
            f"{r['matvec_vectors']} vectors); recording, checks, dense and Ritz work "
            f"{r['seconds'] - products:.1f} s; load average {r['load_start']:.1f} at the start, "
            f"{r['load_end']:.1f} at the end",
            flush=True,
        )
        for step, sv_rel, rho_rel in r.get("short_of_tol", []):
            print(f"{'':<14} short of tol at the step cap: {step} "
                  f"(bound / value: sv {sv_rel:.2g}, rho {rho_rel:.2g})")
    by = {r["case"]: r for r in rows}
    if "dense-small" in by and "inspect-small" in by:
        import numpy as np

        d, i = by["dense-small"], by["inspect-small"]
        rel = np.abs(np.array(i["rho"]) - np.array(d["rho"])) / np.array(d["rho"])
        rel5 = np.abs(np.array(i["sigma"]) - np.array(d["sigma"])) / np.array(d["sigma"])
        print(
            f"reduced case (768 x 12 layers x 4 inputs): inspect / dense linearise time "
            f"{i['seconds'] / d['seconds']:.3f} (cpu {i['cpu_seconds'] / d['cpu_seconds']:.3f}), "
            f"peak memory {i['peak_rss_mb'] / d['peak_rss_mb']:.3f}; "
            f"max relative difference top-5 sigma {rel5.max():.2e}, rho {rel.max():.2e}"
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
