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


def _pins(path: Path) -> dict[str, str]:
    """``name -> version`` of the ``name==version`` lines of a constraints file."""
    out = {}
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            out[name.strip().lower()] = version.strip()
    return out


def _unpinned(requirements, pins: dict[str, str]) -> list[str]:
    from packaging.requirements import Requirement

    return [r for r in requirements if Requirement(r).name.lower() not in pins]


def test_the_models_setup_pins_torchvision_with_its_torch():
    """The second test set-up (``.[test,models]`` under constraints-models.txt, the second stage of
    .ci/run): every requirement of the models extra pinned, torch with the torchvision built for
    it, and the libraries it shares with the main set-up at the same versions."""
    pytest.importorskip("packaging", reason="packaging reads the requirements")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    models = _pins(ROOT / "constraints-models.txt")
    ci = _pins(ROOT / "constraints-ci.txt")
    assert _unpinned(extras["models"], models) == []
    assert _unpinned(["torchvision>=0.1", "not-a-pinned-package>=1"], models) == ["not-a-pinned-package>=1"]
    assert (models["torch"], models["torchvision"]) == ("2.14.1", "0.29.1")
    shared = sorted(set(models) & set(ci) - {"torch"})
    assert {"transformers", "timm", "momentumnet"} <= set(shared)
    assert [n for n in shared if models[n] != ci[n]] == []
    run = (ROOT / ".ci" / "run").read_text()
    assert 'pip install -e ".[test,models]" -c constraints-models.txt' in run
    assert "tests/nn/test_inspect_vision.py" in run and "tests/nn/test_inspect_shipped.py" in run
