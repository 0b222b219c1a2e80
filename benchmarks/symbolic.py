"""Speed of the exact (symbolic) engine against a baseline revision, measured side by side.

Usage::

    python benchmarks/symbolic.py [--baseline REF] [--timeout SECONDS] [--only PREFIX] [--json FILE]

The baseline's ``depthdyn`` package is extracted with ``git archive REF`` into a temporary
directory; every task then runs in a fresh interpreter for the baseline and for this
checkout, alternately, so both see the same machine load. The time reported is measured
inside the interpreter after ``import depthdyn`` (import time excluded). A baseline that
does not finish within ``--timeout`` is reported as ``>TIMEOUT``; a task that ends with a
budget error (``derive`` exit 2) is marked ``budget``.

Tasks: ``derive/hyper_connection-n4``, ``derive/entangled-n8`` (the CLI's ``derive``),
``stability/bdf6-complex`` (``stability_conditions(..., lam="complex")`` of BDF 6) and
``check/FAMILY`` for every registered family (the CLI's ``check``, 20 samples).
Speed is never asserted; the test suite checks correctness only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BDF6 = " + ".join(f"r**{6 - j}*(r - 1)**{j}/{j}" for j in range(1, 7))

_RUNNER = """
import contextlib, io, sys, time
import depthdyn
from depthdyn.cli import main
args = sys.argv[1:]
t0 = time.perf_counter()
if args[0] == "stability":
    from depthdyn.symbolic.stability import stability_conditions
    stability_conditions(depthdyn.general(rho=args[1], sigma="r**6"), lam="complex")
    code = 0
else:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(args)
print(f"{time.perf_counter() - t0:.6f} {code}")
"""


def tasks() -> list[tuple[str, list[str]]]:
    sys.path.insert(0, str(ROOT))
    from depthdyn import FAMILIES

    out = [
        ("derive/hyper_connection-n4", ["derive", "hyper_connection", "-p", "n=4"]),
        ("derive/entangled-n8", ["derive", "entangled", "-p", "n=8"]),
        ("stability/bdf6-complex", ["stability", BDF6]),
    ]
    for name in FAMILIES:
        extra = ["--rho", "r**3 - r**2/2 + r/3 - 1/5", "--sigma", "r**2"] if name == "general" else []
        out.append((f"check/{name}", ["check", name, *extra]))
    return out


def extract(ref: str, into: Path) -> Path:
    data = subprocess.run(["git", "archive", ref, "depthdyn"], cwd=ROOT, check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into


def run(pythonpath: Path, args: list[str], timeout: float) -> tuple[float | None, int | None]:
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    try:
        # cwd = the package's parent: ``python -c`` puts the cwd first on sys.path
        done = subprocess.run([sys.executable, "-c", _RUNNER, *args], env=env, capture_output=True,
                              text=True, timeout=timeout, cwd=pythonpath)
    except subprocess.TimeoutExpired:
        return None, None
    try:
        seconds, code = done.stdout.split()[-2:]
        return float(seconds), int(code)
    except ValueError:
        return float("nan"), done.returncode


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", default="78ada83", help="git revision to compare with (default 78ada83)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per run (default 120)")
    ap.add_argument("--only", default="", help="run only tasks whose name starts with this")
    ap.add_argument("--json", metavar="FILE", help="write the table as a JSON list")
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        base = extract(args.baseline, Path(tmp))
        print(f"{'task':<28}{'this':>10}{'baseline':>12}{'ratio':>9}  notes", flush=True)
        for name, cmd in tasks():
            if not name.startswith(args.only):
                continue
            new, new_code = run(ROOT, cmd, args.timeout)
            old, old_code = run(base, cmd, args.timeout)
            rows.append({"task": name, "this_s": new, "this_exit": new_code, "baseline_s": old,
                         "baseline_exit": old_code, "baseline": args.baseline})
            fmt = lambda t: f">{args.timeout:g}" if t is None else f"{t:.2f}"  # noqa: E731
            ratio = f"{old / new:.1f}x" if old and new else ("faster" if old is None and new else "-")
            notes = []
            if new_code == 2:
                notes.append("this: a part past its budget (exit 2)")
            if old_code not in (0, None):
                notes.append(f"baseline exit {old_code}")
            print(f"{name:<28}{fmt(new):>10}{fmt(old):>12}{ratio:>9}  {'; '.join(notes)}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
