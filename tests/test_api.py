"""Public API hygiene: documented, importable without heavy optional packages."""

import inspect
import subprocess
import sys

import depthdyn


def test_every_public_callable_is_documented():
    for name in depthdyn.__all__:
        obj = getattr(depthdyn, name)
        if callable(obj) and not isinstance(obj, type(depthdyn)):
            assert inspect.getdoc(obj), f"{name} has no docstring"


def test_public_functions_reject_unknown_keywords():
    for func in (depthdyn.momentum, depthdyn.smooth, depthdyn.entangled, depthdyn.hyper_connection):
        try:
            func(no_such_argument=1)
        except depthdyn.UnknownParameterError:
            continue
        raise AssertionError(f"{func.__name__} accepted an unknown keyword")


def test_import_is_light():
    heavy = "('matplotlib', 'torch', 'dask', 'tqdm')"
    code = f"import sys, depthdyn; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=str(__import__("pathlib").Path(depthdyn.__file__).parents[1]),
    )
    assert out.stdout.strip() == "[]"
