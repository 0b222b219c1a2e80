"""The family gallery and the executed ``depthdyn compare`` example, generated at build time.

At ``builder-inited`` every family of :data:`depthdyn.families.FAMILIES` is compared on its
own (:func:`depthdyn.compare` with the registry's example arguments) and its region figure is
written to ``docs/_gallery/<name>.png``; the marker ``<!-- family-gallery -->`` in
``docs/gallery.md`` becomes one section per family (summary, update rule from the factory's
docstring, source, example arguments, characteristic polynomial, numbers, figure). A family
added to the registry appears without any edit here. The marker ``<!-- compare-example -->``
in ``docs/compare.md`` becomes the output of the command it names, run through
:func:`depthdyn.cli.main`, and the overlay it writes. A family that cannot be drawn stops
the build (except the families without a block eigenvalue ``lam``, which say so).
"""

from __future__ import annotations

import contextlib
import inspect
import io
import shlex
import shutil
from pathlib import Path

GENERATED = "_gallery"
GALLERY = "<!-- family-gallery -->"
EXAMPLE = "<!-- compare-example -->"
PICTURE = "<!-- stability-picture -->"
#: The documented example (docs/compare.md shows this exact command and its output).
COMMAND = "depthdyn compare residual momentum:m=1/2 lm_resnet leapfrog rk4 --json --out {out}"


def _fence(text: str, lang: str) -> str:
    return f"```{lang}\n{text.rstrip()}\n```\n"


def _rule(doc: str) -> str:
    """The factory docstring up to its first numpydoc section, dedented."""
    body = inspect.cleandoc(doc or "")
    for stop in ("\nExamples\n", "\nParameters\n", "\nReturns\n"):
        body = body.split(stop)[0]
    return body.strip()


def _section(name, fam, row, png: str | None, note: str = "") -> str:
    from depthdyn.compare import ComparisonTable

    parts = [f"## `{name}`\n", f"{fam.summary}.\n"]
    parts.append("```{eval-rst}\n" + _rule(fam.factory.__doc__) + "\n```\n")
    if row is None:
        return "\n".join(parts + [f"*{note}*\n"])
    rec = row.recurrence
    example = ", ".join(f"`{k}={v}`" for k, v in fam.example.items()) or "none needed"
    parts += [f"**Source:** {rec.source or '—'}. **Example arguments:** {example}.\n",
              _fence(f"{rec.equation()}\ncharacteristic polynomial: {rec.charpoly()}", "text")]
    table = ComparisonTable((row,), row.region.extent, len(row.region.x), row.numbers.get("method", ""))
    parts.append(table.to_markdown())
    parts.append(f"![stability region of {name}]({GENERATED}/{png})\n")
    return "\n".join(parts)


def _gallery(out_dir: Path) -> str:
    from matplotlib.figure import Figure

    from depthdyn import compare
    from depthdyn.compare import resolve_spec
    from depthdyn.errors import ParameterError
    from depthdyn.families import FAMILIES
    from depthdyn.plot import plot_comparison
    from depthdyn.style import family_label, figure_bytes

    sections = []
    for name, fam in FAMILIES.items():
        if not resolve_spec(name)[1].lam:
            sections.append(_section(name, fam, None, None, "No block eigenvalue lam: no region in the lam plane."))
            continue
        try:
            table = compare(name, n=151)
        except ParameterError as exc:
            raise RuntimeError(f"gallery: family {name!r} cannot be compared with its example: {exc}") from exc
        fig = Figure(figsize=(4.2, 3.9), layout="constrained")
        plot_comparison(table, ax=fig.add_subplot()).set_title(f"{family_label(name)}: strictly stable (filled)")
        png = f"{name}.png"
        (out_dir / png).write_bytes(figure_bytes(fig, "png"))
        sections.append(_section(name, fam, table.rows[0], png))
    return "\n".join(sections)


def _example(out_dir: Path) -> str:
    from depthdyn.cli import main

    argv = shlex.split(COMMAND.format(out="compare.png"))[1:]
    buf = io.StringIO()
    with contextlib.chdir(out_dir), contextlib.redirect_stdout(buf):  # the figure lands next to the page's images
        status = main(argv)
    if status != 0:
        raise RuntimeError(f"the documented example exited with {status}")
    shown = COMMAND.format(out="compare.png")
    return (_fence(f"$ {shown}\n{buf.getvalue()}", "text")
            + f"\n![the five regions overlaid]({GENERATED}/compare.png)\n")


def _picture(out_dir: Path) -> str:
    """The stability how-to's picture: BDF3's region with its intervals and A(alpha) sector marked."""
    from depthdyn.families import bdf
    from depthdyn.plot import plot_stability_region
    from depthdyn.style import figure_bytes

    ax = plot_stability_region(bdf(k=3), x=("re(lam)", -6, 12, 201), y=("im(lam)", -9, 9, 201), numbers=True)
    (out_dir / "stability-bdf3.png").write_bytes(figure_bytes(ax.figure, "png"))
    return (f"![BDF3: stable outside the closed curve, intervals and A(alpha) sector marked]"
            f"({GENERATED}/stability-bdf3.png)\n")


def _generate(app) -> None:
    out_dir = Path(app.srcdir) / GENERATED
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir()
    app.env.depthdyn_generated = {"gallery": _gallery(out_dir), "compare": _example(out_dir),
                                  "stability": _picture(out_dir)}


def _fill(app, docname, source) -> None:
    generated = getattr(app.env, "depthdyn_generated", {})
    for doc, marker in (("gallery", GALLERY), ("compare", EXAMPLE), ("stability", PICTURE)):
        if docname == doc and marker in source[0]:
            source[0] = source[0].replace(marker, generated[doc])


def setup(app):
    app.connect("builder-inited", _generate)
    app.connect("source-read", _fill)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
