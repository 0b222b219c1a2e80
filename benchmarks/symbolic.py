"""Speed of the exact (symbolic) engine against a baseline revision, measured side by side.

Usage::

    python benchmarks/symbolic.py [--baseline REF] [--timeout SECONDS] [--only PREFIX]
                                  [--skip-baseline] [--json FILE]

The baseline's ``depthdyn`` package is extracted with ``git archive REF`` into a temporary
directory; every task then runs in a fresh interpreter for this checkout and for the
baseline, one right after the other, so both see the same machine load (on a shared
machine, compare the ratio, not the seconds). The time reported is measured inside the
interpreter after ``import depthdyn`` (import time excluded), except for the ``import``
task, which times ``import depthdyn`` itself. A run that does not finish within
``--timeout`` is reported as ``>TIMEOUT``; a task that ends with exit 2 (a part past its
budget) is marked ``budget``.

Tasks:

* ``import``: ``import depthdyn``;
* ``derive/...``: the CLI's ``derive`` at the sizes the exact core promises
  (``entangled`` n = 2..8, ``hyper_connection`` n = 2..4);
* ``stability/bdfK-complex``: ``stability_conditions(..., lam="complex")`` of BDF k = 3..6;
* ``check/...``: the CLI's ``check`` (20 samples) of every registered family at its
  default size, of ``smooth`` k = 4..6, of the multistep families at their highest
  documented orders, of ``general`` with the Adams-Bashforth 4 and 5 and BDF 3..6
  polynomials, and of ``entangled`` / ``hyper_connection`` with three streams.

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


def bdf(k: int) -> str:
    """rho of BDF-k from backward differences (sigma = r**k)."""
    return " + ".join(f"r**{k - j}*(r - 1)**{j}/{j}" for j in range(1, k + 1))


#: Adams-Bashforth k = 4, 5: rho = r**k - r**(k-1), sigma from the textbook coefficients.
AB = {4: "(55*r**3 - 59*r**2 + 37*r - 9)/24",
      5: "(1901*r**4 - 2774*r**3 + 2616*r**2 - 1274*r + 251)/720"}

_RUNNER = """
import contextlib, io, sys, time
t0 = time.perf_counter()
import depthdyn
args = sys.argv[1:]
if args[0] == "import":
    print(f"{time.perf_counter() - t0:.6f} 0")
    raise SystemExit
from depthdyn.cli import main
t0 = time.perf_counter()
if args[0] == "stability":
    from depthdyn.symbolic.stability import stability_conditions
    stability_conditions(depthdyn.general(rho=args[1], sigma=args[2]), lam="complex")
    code = 0
else:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = main(args)
print(f"{time.perf_counter() - t0:.6f} {code}")
"""


def tasks() -> list[tuple[str, list[str]]]:
    sys.path.insert(0, str(ROOT))
    from depthdyn import FAMILIES

    out = [("import", ["import"])]
    out += [(f"derive/entangled-n{n}", ["derive", "entangled", "-p", f"n={n}"]) for n in range(2, 9)]
    out += [(f"derive/hyper_connection-n{n}", ["derive", "hyper_connection", "-p", f"n={n}"]) for n in (2, 3, 4)]
    out += [(f"stability/bdf{k}-complex", ["stability", bdf(k), f"r**{k}"]) for k in (3, 4, 5, 6)]
    for name, fam in FAMILIES.items():
        extra = ["--rho", "r**3 - r**2/2 + r/3 - 1/5", "--sigma", "r**2"] if name == "general" else []
        if name == "lmm":  # needs its coefficients
            extra = [arg for key in ("alpha", "beta") for arg in ("-p", f"{key}={fam.example[key]}")]
        out.append((f"check/{name}", ["check", name, *extra]))
    sizes = [("smooth", "k", k) for k in (4, 5, 6)]
    sizes += [("adams_bashforth", "k", 5), ("adams_moulton", "k", 5), ("bdf", "k", 6),
              ("nystrom", "k", 4), ("milne_simpson", "k", 4), ("entangled", "n", 3),
              ("hyper_connection", "n", 3)]
    out += [(f"check/{name}-{key}{value}", ["check", name, "-p", f"{key}={value}"]) for name, key, value in sizes]
    lmm = {f"ab{k}": (f"r**{k} - r**{k - 1}", AB[k]) for k in (4, 5)}
    lmm |= {f"bdf{k}": (bdf(k), f"r**{k}") for k in (3, 4, 5, 6)}
    out += [(f"check/general-{key}", ["check", "general", "--rho", rho, "--sigma", sigma])
            for key, (rho, sigma) in lmm.items()]
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
    ap.add_argument("--skip-baseline", action="store_true", help="time this checkout only")
    ap.add_argument("--json", metavar="FILE", help="write the table as a JSON list")
    args = ap.parse_args(argv)
    rows = []
    fmt = lambda t: "-" if t == "skip" else f">{args.timeout:g}" if t is None else f"{t:.2f}"  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp:
        base = None if args.skip_baseline else extract(args.baseline, Path(tmp))
        print(f"{'task':<34}{'this':>10}{'baseline':>12}{'ratio':>9}  notes", flush=True)
        for name, cmd in tasks():
            if not name.startswith(args.only):
                continue
            new, new_code = run(ROOT, cmd, args.timeout)
            old, old_code = run(base, cmd, args.timeout) if base else ("skip", None)
            rows.append({"task": name, "this_s": new, "this_exit": new_code,
                         "baseline_s": None if old == "skip" else old, "baseline_exit": old_code,
                         "baseline": None if base is None else args.baseline})
            if old == "skip":
                ratio = "-"
            elif old and new:
                ratio = f"{old / new:.1f}x"
            else:
                ratio = "faster" if old is None and new else "-"
            notes = []
            if new_code == 2:
                notes.append("this: budget (exit 2)")
            elif new_code not in (0, None):
                notes.append(f"this: exit {new_code}")
            if old_code not in (0, None):
                notes.append(f"baseline exit {old_code}")
            print(f"{name:<34}{fmt(new):>10}{fmt(old):>12}{ratio:>9}  {'; '.join(notes)}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
