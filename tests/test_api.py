"""Public API hygiene: documented, importable without heavy optional packages."""

import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

import depthdyn

API_PAGE = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def test_every_public_callable_is_documented():
    for name in depthdyn.__all__:
        obj = getattr(depthdyn, name)
        if callable(obj) and not isinstance(obj, type(depthdyn)):
            assert inspect.getdoc(obj), f"{name} has no docstring"


def test_public_functions_reject_unknown_keywords():
    for func in (depthdyn.momentum, depthdyn.smooth, depthdyn.entangled, depthdyn.hyper_connection):
        try:
            func(no_such_argument=1)
        except depthdyn.errors.UnknownParameterError:
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


# ------------------------------------------------------------------ the front door
def front_door_table(text: str) -> dict[str, str]:
    """``name -> module`` from the table of the API page's "The front door" section."""
    section = text.split("## The front door", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `(\w+)` \| `([\w.]+)` \|", section, flags=re.M))


def test_the_front_door_is_small_and_has_no_duplicates():
    assert len(depthdyn.__all__) <= 61
    assert len(set(depthdyn.__all__)) == len(depthdyn.__all__)
    # one table: the lazy table is __all__, no second list to drift from it
    assert depthdyn.__all__ == list(depthdyn._PUBLIC)


def test_every_front_door_name_resolves_to_where_it_is_defined():
    for name in depthdyn.__all__:
        obj = getattr(depthdyn, name)
        module = obj.__name__ if inspect.ismodule(obj) else getattr(obj, "__module__", None)
        if module is not None:  # FAMILIES is a mapping: no module of its own
            assert module.startswith("depthdyn"), name


def test_every_front_door_name_is_in_the_api_reference():
    table = front_door_table(API_PAGE.read_text(encoding="utf-8"))
    assert set(table) == set(depthdyn.__all__)
    for name, module in table.items():
        obj = getattr(depthdyn, name)
        where = obj.__name__ if inspect.ismodule(obj) else getattr(obj, "__module__", module)
        assert where == module, f"{name}: the API page says {module}, it is defined in {where}"


def test_the_api_table_check_can_fail():
    page = API_PAGE.read_text(encoding="utf-8")
    dropped = page.replace("| `vieta` |", "| `vieta_` |")
    assert "vieta" not in front_door_table(dropped) and "vieta_" in front_door_table(dropped)
    assert set(front_door_table(dropped)) != set(depthdyn.__all__)


@pytest.mark.parametrize("name", ["ParameterError", "plot_root_locus", "rk4", "r", "char_poly", "derive_report"])
def test_names_off_the_front_door_are_not_attributes(name):
    with pytest.raises(AttributeError, match="no attribute"):
        getattr(depthdyn, name)


def test_names_off_the_front_door_stay_importable_from_their_modules():
    from depthdyn.errors import DepthdynError, ParameterError
    from depthdyn.families import adams_bashforth, rk4
    from depthdyn.plot import plot_comparison, plot_exponents, plot_root_locus
    from depthdyn.recurrence import r

    assert issubclass(ParameterError, DepthdynError) and issubclass(ParameterError, ValueError)
    assert depthdyn.errors.ParameterError is ParameterError
    assert depthdyn.plot.plot_root_locus is plot_root_locus
    assert callable(rk4) and callable(adams_bashforth) and str(r) == "r"
    assert callable(plot_comparison) and callable(plot_exponents)


def test_a_submodule_import_keeps_the_function_of_the_same_name():
    import depthdyn.budget
    import depthdyn.compare

    assert callable(depthdyn.compare) and callable(depthdyn.budget)
    assert inspect.ismodule(depthdyn.errors) and inspect.ismodule(depthdyn.plot)
