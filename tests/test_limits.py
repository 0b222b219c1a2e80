"""Every size limit lives in depthdyn.limits: no other module defines one, and each one is used.

The source is read with :mod:`ast` (nothing is imported but the limits themselves).
"""

import ast
from pathlib import Path

import pytest

import depthdyn.limits as limits

PACKAGE = Path(limits.__file__).resolve().parent


def defined_limits(source: str) -> list[str]:
    """Module-level names ``MAX_*`` (or ``*_TERMS``) that ``source`` assigns a literal number to
    (a value derived from a limit, ``MAX_DIGITS * log(10)``, is not a second limit)."""
    found = []
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        if node_value := getattr(node, "value", None):
            if any(isinstance(n, ast.Name) for n in ast.walk(node_value)):
                continue
        for t in targets:
            name = t.id.lstrip("_") if isinstance(t, ast.Name) else ""
            if name.startswith("MAX_") or name.endswith("_TERMS"):
                found.append(t.id)
    return found


def test_no_other_module_defines_a_limit():
    # the torch layer and the command line are other rooms with their own option caps
    others = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).as_posix()
        if rel == "depthdyn/limits.py" or rel.startswith(("depthdyn/nn/", "depthdyn/cli/")):
            continue
        if names := defined_limits(path.read_text(encoding="utf-8")):
            others[rel] = names
    assert others == {}


def test_every_limit_is_used_somewhere():
    sources = "\n".join(p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py") if p.name != "limits.py")
    unused = [name for name in limits.__all__ if name not in sources]
    assert unused == []
    assert all(isinstance(getattr(limits, name), (int, float)) and getattr(limits, name) > 0
               for name in limits.__all__)


@pytest.mark.parametrize("source, expected", [
    ("MAX_ORDER = 12\n", ["MAX_ORDER"]),
    ("_MAX_DEPTH = 60\nx = 1\n", ["_MAX_DEPTH"]),
    ("SIGN_TERMS: int = 300\n", ["SIGN_TERMS"]),
    ("MAX_BYTES = 8 * 2**30\n", ["MAX_BYTES"]),
    ("from .limits import MAX_ORDER\n\ndef f():\n    MAX_X = 3\n", []),  # imports and locals are fine
    ("_MAX_EXP_ARG = MAX_DIGITS * math.log(10)\n", []),  # derived from a limit
])
def test_the_scan_finds_a_limit_defined_elsewhere(source, expected):
    assert defined_limits(source) == expected
