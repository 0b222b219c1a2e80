"""depthdyn installs next to a researcher's torch and imports with and without it."""

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# A meta-path finder that refuses torch, as on a machine where it is not installed.
BLOCK_TORCH = """
import sys
class NoTorch:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError("No module named 'torch'", name="torch")
        return None
sys.meta_path.insert(0, NoTorch)
"""


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)


def _torch_requirement() -> str:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    (req,) = [r for r in extras["torch"] if r.startswith("torch")]
    return req


def test_imports_without_torch():
    proc = _run(
        BLOCK_TORCH
        + "import depthdyn\n"
        + "assert 'torch' not in sys.modules\n"
        + "print(depthdyn.charpoly(depthdyn.momentum()))\n"
        + "try:\n    import depthdyn.nn\nexcept ImportError as e:\n    print('NN:', type(e).__name__, e)\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert "m + r**2" in proc.stdout
    assert "NN: OptionalDependencyError" in proc.stdout and 'pip install "depthdyn[torch]"' in proc.stdout


def test_imports_with_torch():
    pytest.importorskip("torch", reason="the torch extra is not installed")
    proc = _run(
        "import depthdyn, sys\nassert 'torch' not in sys.modules\n"
        "import depthdyn.nn\nprint(depthdyn.nn.inspect)"
    )
    assert proc.returncode == 0, proc.stderr
    assert "function inspect" in proc.stdout
    # the blocker really blocks: the same import fails under it
    assert _run(BLOCK_TORCH + "import torch").returncode != 0


def test_torch_extra_accepts_current_releases():
    from packaging.requirements import Requirement

    spec = Requirement(_torch_requirement()).specifier
    for version in ("2.13.0", "2.14.1", "2.20.0", "3.0.0"):
        assert spec.contains(version), version
    assert not spec.contains("1.13.1")


def test_the_test_setup_pins_the_cpu_build():
    pins = (ROOT / "constraints-ci.txt").read_text().split()
    assert "torch==2.13.0" in pins
    assert "-c constraints-ci.txt" in (ROOT / "README.md").read_text()


def test_installing_the_extra_keeps_an_installed_torch():
    """``pip install --dry-run`` of the extra's torch requirement, offline, next to the installed
    torch: pip's default strategy (only-if-needed) installs nothing. A newer torch than the
    one here cannot be fetched offline; the specifier test above shows it would satisfy too."""
    torch = pytest.importorskip("torch", reason="the torch extra is not installed")
    cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--quiet", "--report", "-"]
    proc = subprocess.run([*cmd, _torch_requirement()], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        pytest.skip(f"pip cannot resolve offline here: {proc.stderr.strip()[-200:]}")
    names = [i["metadata"]["name"].lower() for i in json.loads(proc.stdout)["install"]]
    assert "torch" not in names, names
    # and the check can fail: a requirement the installed torch does not meet would install one
    major, minor = (int(p) for p in torch.__version__.split(".")[:2])
    proc = subprocess.run([*cmd, f"torch>{major}.{minor + 50}"], capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 or "torch" in proc.stdout
