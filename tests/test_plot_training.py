"""The figures of a training run: house style, typeset labels, vector PDFs, every format on the CLI."""

import re
import types

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from depthdyn.plot.training import PROFILE_LABELS, training_figures  # noqa: E402
from depthdyn.style import PALETTE, figure_bytes  # noqa: E402

MATH = re.compile(r"(?<!\\)\$.*?(?<!\\)\$")
ASCII_MATHS = re.compile(r"\|\||\bx_l\b|\[0\]|_\{?l|\bl\+1\b")  # x_l[0], ||x_l+1 - x_l|| as code
RASTER = re.compile(rb"/Subtype\s*/Image")


def untypeset(fig) -> list:
    """Visible texts whose maths is outside ``$...$``."""
    texts = [t.get_text() for t in fig.findobj(Text) if t.get_visible() and t.get_text()]
    return [t for t in texts if ASCII_MATHS.search(MATH.sub("", t))]


@pytest.fixture(scope="module")
def figs():
    rng = np.random.default_rng(0)
    L, B = 6, 40
    diag = types.SimpleNamespace(norms=np.linspace(1, 0.2, L + 1), update_cosine=rng.uniform(-1, 1, L - 1),
                                 perturbation=rng.uniform(0, 1, L), grad_norms=None)
    positions = np.cumsum(rng.normal(size=(L + 1, B, 1)), axis=0)
    labels = rng.integers(0, 2, B)
    return training_figures(np.exp(-np.arange(30) / 10), diag, positions=positions, labels=labels)


def test_the_figures_and_their_labels_are_typeset(figs):
    assert list(figs) == ["loss", "depth_profile", "trajectories"]
    for fig in figs.values():
        assert not untypeset(fig)
    prof = figs["depth_profile"].axes
    assert [ax.get_ylabel() for ax in prof if ax.axison] == [PROFILE_LABELS[k] for k in
                                                             ("norms", "update_cosine", "perturbation")]
    assert PROFILE_LABELS["perturbation"] == r"$\|x_{\ell+1} - x_\ell\| / \|x_\ell\|$"
    assert not prof[3].axison  # no gradient norms: a blank panel, not an empty frame
    traj, phase = figs["trajectories"].axes
    assert traj.get_ylabel() == r"$x_{\ell,0}$" and phase.get_xlabel() == r"position $x_\ell$"


def test_ascii_labels_would_be_caught():
    fig = Figure()
    ax = fig.add_subplot()
    ax.set_ylabel("x_l[0]")
    ax.set_xlabel("||x_l+1 - x_l||")
    assert len(untypeset(fig)) == 2


def test_house_style_and_colours(figs):
    for fig in figs.values():
        for ax in fig.axes:
            if ax.axison:
                assert not ax.spines["top"].get_visible() and not ax.spines["right"].get_visible()
    colours = {to_hex(ln.get_color()) for ln in figs["trajectories"].axes[0].get_lines()}
    assert colours == {PALETTE[0].lower(), PALETTE[1].lower()}  # one house colour per class
    assert to_hex(figs["loss"].axes[0].get_lines()[0].get_color()) == PALETTE[0].lower()
    assert figs["loss"].axes[0].get_yscale() == "log"


def test_pdfs_are_vector(figs):
    for stem, fig in figs.items():
        pdf = figure_bytes(fig, "pdf")
        assert pdf.startswith(b"%PDF-") and not RASTER.search(pdf), stem
        assert b"<svg" in figure_bytes(fig, "svg")[:2000]


def test_a_raster_in_a_pdf_would_be_caught(figs):
    fig = training_figures([1.0, -0.5])["loss"]  # a linear axis: the image below may sit at 0
    fig.axes[0].imshow(np.eye(3))
    assert RASTER.search(figure_bytes(fig, "pdf"))


def test_bad_input_is_refused():
    from depthdyn.errors import ShapeError

    with pytest.raises(ShapeError):
        training_figures([])
    with pytest.raises(ShapeError):
        training_figures([1.0], positions=np.zeros((3, 4, 1)), labels=[0, 1])


def test_train_writes_every_format_it_is_asked_for(tmp_path, capsys):
    pytest.importorskip("torch", reason="depthdyn train needs the optional torch extra")
    from depthdyn.cli import main

    out = tmp_path / "run"
    args = ["train", "momentum", "--task", "cubic", "--layers", "4", "--steps", "5", "--device", "cpu",
            "--out", str(out), "--format", "pdf", "--format", "svg", "-q"]
    assert main(args) == 0
    written = sorted(p.name for p in out.iterdir() if p.suffix in (".png", ".pdf", ".svg"))
    stems = ("depth_profile", "loss", "placement", "trajectories")
    assert written == sorted(f"{s}.{f}" for s in stems for f in ("pdf", "svg"))  # no PNG unless asked
    for stem in stems:
        pdf = (out / f"{stem}.pdf").read_bytes()
        assert pdf.startswith(b"%PDF-") and not RASTER.search(pdf), stem
    with pytest.raises(SystemExit) as exc:  # argparse refuses it, with the choices, before any work
        main(["train", "momentum", "--task", "cubic", "--out", str(tmp_path / "x"), "--format", "jpg"])
    assert exc.value.code == 2 and "choose from 'png', 'pdf', 'svg'" in capsys.readouterr().err
