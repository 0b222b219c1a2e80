"""Draw the figure of docs/inspect.md: ``docs/inspect_placement.png``.

Run from the repository root: ``python docs/inspect_figures.py`` (needs the torch extra). The
model, its inputs and the placements are those of the page's examples; the figure is drawn by
:func:`depthdyn.plot.placement.plot_placement` in the house style and written by
:func:`depthdyn.output.save_figure` (PNG at the house's 200 dpi). Every number is computed here.
"""

from pathlib import Path

import torch

from depthdyn.nn import inspect
from depthdyn.nn.experiments.zoo import GPT2Style
from depthdyn.output import save_figure
from depthdyn.plot.placement import plot_placement
from depthdyn.style import house_style, new_figure

OUT = Path(__file__).resolve().parent / "inspect_placement.png"
#: The window of both panels: the measured lam of the first steps, and the regions' edges near 0.
WINDOW = (-0.7, 0.4, -0.45, 0.45)


def placement_figure():
    """The measured lam of the first attention and MLP steps on the momentum and LM-ResNet regions."""
    torch.manual_seed(0)
    model = GPT2Style(dim=32, depth=4, heads=4).double().eval()
    ids = torch.randint(0, 50, (2, 16))  # as in the page: 2 sequences of 16 tokens
    steps = inspect(model, ids, tokens=4, split=True)
    with house_style():
        fig = new_figure((9, 3.8))
        a, b = fig.subplots(1, 2)
        plot_placement(steps.placement("momentum", m=0.9, eta=0.5), a, steps=[0, 1], window=WINDOW)
        plot_placement(steps.placement("lm_resnet", k=-0.5), b, steps=[0, 1], window=WINDOW)
    return fig


def main() -> None:
    save_figure(placement_figure(), OUT)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
