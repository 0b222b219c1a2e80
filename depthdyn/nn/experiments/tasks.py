"""Small training tasks for the torch blocks, and the model that wraps a :class:`DepthStack`.

Each task is tiny and runs in seconds on one CPU thread. The first three reproduce
experiments of the sources:

``separation-1d``
    002 §4.1 (Fig. 3): one-dimensional data, 50% red in the middle, blue split evenly left
    and right. With one node per layer a first-order (``C^1``) network is a monotone map of
    the line (for ``h |w| < 1``), so a threshold on the final position gets at most 75%;
    a ``C^2`` network carries a velocity and can pass points over each other.
``separation-2d``
    002 §4.2 (Fig. 4): a red disk inside a blue annulus in the plane, for two-node
    ``tanh`` networks. A ``C^1`` flow is a homeomorphism of the plane, so the red disk stays
    enclosed and no line separates it; ``C^k`` with ``k > 1`` lives in ``2k`` dimensions.
``cubic``
    Regression ``x -> -x^3`` on ``[-1, 1]`` read straight off the final position (no head):
    an order-reversing map that no first-order flow with small steps (an increasing map of
    the line) represents, while a second-order (momentum) network can (000 §8; Sander et al.
    2021, Momentum Residual Neural Networks, §3).

``blobs`` (a vector task for hyper-connection and entangled blocks) and ``bars`` (an ``8 x 8``
vision task for convolutional entangled blocks, 001 eq. 7) are small controls.

:func:`build_model` assembles a :class:`DepthModel` (optional embedding -> stack -> head)
with sensible per-task defaults; :data:`TASKS` maps task names to factories.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import torch
from torch import nn

from ...errors import ParameterError, UnknownFamilyError
from ...families import suggest
from ..blocks import DepthBlock, mlp, tanh_layer
from ..blocks.stack import DepthStack, block_class, check_options

__all__ = [
    "Task",
    "TaskSpec",
    "TASKS",
    "UnknownTaskError",
    "make_task",
    "task_names",
    "DepthModel",
    "build_model",
]

_KINDS = ("classify", "regress")


class UnknownTaskError(UnknownFamilyError):
    """A task name is not in :data:`TASKS`."""


@dataclass(frozen=True, eq=False)
class Task:
    """A small supervised data set.

    Parameters
    ----------
    name : str
        Registry name (see :data:`TASKS`).
    kind : {"classify", "regress"}
        Classification (integer ``targets`` in ``0..n_outputs-1``, cross-entropy loss) or
        regression (float ``targets`` of shape ``(N, n_outputs)``, mean squared error).
    inputs : torch.Tensor
        ``(N, d_in)`` features, or ``(N, C, H, W)`` images for the vision task.
    targets : torch.Tensor
        ``(N,)`` class labels or ``(N, n_outputs)`` regression targets.
    n_outputs : int
        Number of classes or of regression outputs.
    description : str
        One paragraph on what the data are and what the task shows.
    source : str
        Where the task comes from (seed file and section).
    """

    name: str
    kind: str
    inputs: torch.Tensor
    targets: torch.Tensor
    n_outputs: int
    description: str = ""
    source: str = ""

    def __post_init__(self):
        if self.kind not in _KINDS:
            raise ParameterError(f"kind must be 'classify' or 'regress', got {self.kind!r}")
        if not isinstance(self.inputs, torch.Tensor) or not isinstance(self.targets, torch.Tensor):
            raise ParameterError("inputs and targets must be torch tensors")
        if self.inputs.dim() < 2 or self.inputs.shape[0] == 0:
            raise ParameterError(
                f"inputs must have shape (N, ...) with N >= 1, got {tuple(self.inputs.shape)}"
            )
        if self.targets.shape[0] != self.inputs.shape[0]:
            raise ParameterError(
                f"inputs and targets must have the same number of rows, got {self.inputs.shape[0]} "
                f"and {self.targets.shape[0]}"
            )
        for what, t in (("inputs", self.inputs), ("targets", self.targets)):
            if t.is_floating_point() and not bool(torch.isfinite(t).all()):
                row = int((~torch.isfinite(t)).reshape(t.shape[0], -1).any(1).nonzero()[0])
                raise ParameterError(
                    f"{what} contain NaN or infinite values (first in row {row}); "
                    "clean the data before training"
                )
        if isinstance(self.n_outputs, bool) or not isinstance(self.n_outputs, int) or self.n_outputs < 1:
            raise ParameterError(f"n_outputs must be a positive integer, got {self.n_outputs!r}")
        if self.kind == "classify":
            t = self.targets
            if t.dim() != 1 or t.dtype != torch.long or int(t.min()) < 0 or int(t.max()) >= self.n_outputs:
                raise ParameterError(
                    f"class targets must be a (N,) long tensor with values in 0..{self.n_outputs - 1}"
                )
        elif self.targets.dim() != 2 or self.targets.shape[1] != self.n_outputs:
            raise ParameterError(
                f"regression targets must have shape (N, {self.n_outputs}), got {tuple(self.targets.shape)}"
            )

    @property
    def size(self) -> int:
        """Number of samples ``N``."""
        return int(self.inputs.shape[0])

    @property
    def input_shape(self) -> tuple[int, ...]:
        """Shape of one input (``(d_in,)`` or ``(C, H, W)``)."""
        return tuple(self.inputs.shape[1:])

    def class_counts(self) -> tuple[int, ...]:
        """Samples per class (classification tasks only)."""
        if self.kind != "classify":
            raise ParameterError(f"task {self.name!r} is a regression task; it has no classes")
        return tuple(int(c) for c in torch.bincount(self.targets, minlength=self.n_outputs))

    def __repr__(self) -> str:
        return (
            f"Task({self.name!r}, kind={self.kind!r}, inputs={tuple(self.inputs.shape)}, "
            f"n_outputs={self.n_outputs}, source={self.source!r})"
        )


# -- factories ---------------------------------------------------------------------------
def _count(n, default: int, multiple: int, name: str) -> int:
    n = default if n is None else n
    if isinstance(n, bool) or not isinstance(n, int) or n < multiple or n % multiple:
        raise ParameterError(f"{name} needs n to be a positive multiple of {multiple}, got {n!r}")
    return n


def _generator(seed) -> torch.Generator:
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ParameterError(f"seed must be an integer, got {seed!r}")
    return torch.Generator().manual_seed(seed)


def separation_1d(*, seed: int = 0, n: int | None = None) -> Task:
    """002 §4.1: blue on ``[-2, -1)``, red on ``(-1, 1)``, blue on ``(1, 2]``.

    ``n`` (a multiple of 4, default 200) points at the midpoints of ``n`` equal cells of
    ``[-2, 2]``: exactly ``n/2`` red (label 1) and ``n/4`` blue (label 0) on each side.
    Deterministic: ``seed`` is accepted for a uniform interface and ignored.

    Examples
    --------
    >>> t = separation_1d(n=8)
    >>> t.inputs.flatten().tolist()
    [-1.75, -1.25, -0.75, -0.25, 0.25, 0.75, 1.25, 1.75]
    >>> t.targets.tolist()
    [0, 0, 1, 1, 1, 1, 0, 0]
    """
    _generator(seed)
    n = _count(n, 200, 4, "separation-1d")
    x = -2.0 + (torch.arange(n, dtype=torch.float64) + 0.5) * (4.0 / n)
    y = (x.abs() < 1).long()
    return Task(
        "separation-1d",
        "classify",
        x.to(torch.get_default_dtype())[:, None],
        y,
        2,
        "1-D points, red (1) in the middle half, blue (0) split evenly left and right; "
        "a threshold on a monotone image of the line gets at most 75%.",
        "002 §4.1, Fig. 3",
    )


def separation_2d(*, seed: int = 0, n: int | None = None) -> Task:
    """002 §4.2: a red disk ``r < 1`` inside a blue annulus ``1.5 < r < 2.25``.

    ``n`` (even, default 400) points, half of each class, uniform in area; ``seed`` draws
    them. Label 1 is red.
    """
    g = _generator(seed)
    n = _count(n, 400, 2, "separation-2d")
    half = n // 2
    u = torch.rand(n, generator=g, dtype=torch.float64)
    r_in = u[:half].sqrt()
    r_out = (1.5**2 + u[half:] * (2.25**2 - 1.5**2)).sqrt()
    r = torch.cat((r_in, r_out))
    theta = 2 * math.pi * torch.rand(n, generator=g, dtype=torch.float64)
    x = torch.stack((r * theta.cos(), r * theta.sin()), dim=1)
    y = torch.cat((torch.ones(half, dtype=torch.long), torch.zeros(half, dtype=torch.long)))
    return Task(
        "separation-2d",
        "classify",
        x.to(torch.get_default_dtype()),
        y,
        2,
        "A red (1) disk of radius 1 inside a blue (0) annulus 1.5 < r < 2.25; 002 argues a "
        "homeomorphism of the plane keeps the disk enclosed (a finite sample need not stay so).",
        "002 §4.2, Fig. 4",
    )


def cubic(*, seed: int = 0, n: int | None = None) -> Task:
    """Regression ``y = -x^3`` at ``n`` (default 100) midpoints of equal cells of ``[-1, 1]``.

    Order reversing: an increasing map of the line (a first-order flow with small steps)
    cannot fit it. Deterministic; ``seed`` is ignored.
    """
    _generator(seed)
    n = _count(n, 100, 1, "cubic")
    x = -1.0 + (torch.arange(n, dtype=torch.float64) + 0.5) * (2.0 / n)
    dt = torch.get_default_dtype()
    return Task(
        "cubic",
        "regress",
        x.to(dt)[:, None],
        (-(x**3)).to(dt)[:, None],
        1,
        "Fit x -> -x^3 on [-1, 1] with the final position itself as the output (no head).",
        "000 §8 (momentum residual); Sander et al. 2021, Momentum ResNets §3",
    )


def blobs(*, seed: int = 0, n: int | None = None) -> Task:
    """Gaussian blobs at the corners ``(+-1, +-1)`` of a square, labelled XOR-wise.

    ``n`` (a multiple of 4, default 400) points, ``n/4`` per corner, standard deviation
    0.35; label 1 where ``x_1 x_2 < 0`` at the blob centre. Not linearly separable: a
    vector control for hyper-connection and entangled blocks (003, 001 eq. 2).
    """
    g = _generator(seed)
    n = _count(n, 400, 4, "blobs")
    centres = torch.tensor([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]], dtype=torch.float64)
    labels = torch.tensor([0, 0, 1, 1])
    idx = torch.arange(n) % 4
    x = centres[idx] + 0.35 * torch.randn(n, 2, generator=g, dtype=torch.float64)
    return Task(
        "blobs",
        "classify",
        x.to(torch.get_default_dtype()),
        labels[idx],
        2,
        "Four Gaussian blobs (std 0.35) at (+-1, +-1), XOR labels; needs a nonlinear feature map.",
        "003 (hyper-connections), 001 eq. 2 (entangled): small vector control",
    )


def bars(*, seed: int = 0, n: int | None = None) -> Task:
    """``8 x 8`` single-channel images: one horizontal (label 0) or vertical (label 1) bar.

    ``n`` (even, default 256) images, half of each class; the bar sits in a random row or
    column (value 1) and Gaussian noise of standard deviation 0.3 is added. Inputs have
    shape ``(n, 1, 8, 8)``: a vision control for convolutional entangled blocks (001 eq. 7).
    """
    g = _generator(seed)
    n = _count(n, 256, 2, "bars")
    y = torch.arange(n) % 2
    where = torch.randint(0, 8, (n,), generator=g)
    img = torch.zeros(n, 8, 8, dtype=torch.float64)
    rows = torch.arange(n)
    horiz = y == 0
    img[rows[horiz], where[horiz], :] = 1.0
    img[rows[~horiz], :, where[~horiz]] = 1.0
    img += 0.3 * torch.randn(n, 8, 8, generator=g, dtype=torch.float64)
    return Task(
        "bars",
        "classify",
        img.to(torch.get_default_dtype())[:, None],
        y.long(),
        2,
        "8x8 noisy images of a horizontal (0) or vertical (1) bar at a random position.",
        "001 eq. 7 (convolutional entanglement): small vision control",
    )


@dataclass(frozen=True)
class TaskSpec:
    """Registry entry: the factory, a one-line summary and default training settings."""

    factory: Callable[..., Task]
    summary: str
    defaults: Mapping[str, object] = field(default_factory=dict)
    block_defaults: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    """Per-family block options used unless given (e.g. ``a_init`` of momentum on ``cubic``)."""


TASKS: Mapping[str, TaskSpec] = MappingProxyType(
    {
        "separation-1d": TaskSpec(
            separation_1d,
            "1-D blue|red|blue, one node per layer: C^1 <= 75%, C^2 separates (002 §4.1)",
            MappingProxyType({"family": "smooth", "layers": 30, "step": 0.1, "steps": 400, "lr": 0.05}),
        ),
        "separation-2d": TaskSpec(
            separation_2d,
            "red disk inside blue annulus, two nodes per layer: C^1 vs C^k, k > 1 (002 §4.2)",
            MappingProxyType({"family": "smooth", "layers": 30, "step": 0.1, "steps": 400, "lr": 0.05}),
        ),
        "cubic": TaskSpec(
            cubic,
            "regress x -> -x^3 off the final position: residual (order preserving) vs momentum",
            MappingProxyType({"family": "momentum", "layers": 20, "step": 0.05, "steps": 400, "lr": 0.02}),
            # m = sigmoid(2) = 0.88: with 000 §8's a << 0 (m ~ 0) the momentum block stays at the
            # order-preserving optimum (MSE 1/7), see depthdyn.nn.experiments
            MappingProxyType({"momentum": MappingProxyType({"a_init": 2.0})}),
        ),
        "blobs": TaskSpec(
            blobs,
            "XOR Gaussian blobs in 2-D, embedded to width 8 (hyper-connections, entangled)",
            MappingProxyType({"family": "residual", "layers": 8, "step": 0.25, "steps": 200, "lr": 0.02}),
        ),
        "bars": TaskSpec(
            bars,
            "8x8 noisy horizontal vs vertical bars (convolutional entangled blocks)",
            MappingProxyType({"family": "residual", "layers": 4, "step": 0.25, "steps": 100, "lr": 0.02}),
        ),
    }
)
"""Read-only registry: task name -> :class:`TaskSpec`."""


def task_names() -> tuple[str, ...]:
    """The registered task names, sorted."""
    return tuple(sorted(TASKS))


def _spec(name) -> TaskSpec:
    try:
        return TASKS[name]
    except (KeyError, TypeError):
        raise UnknownTaskError(
            f"unknown task {name!r}{suggest(name, TASKS)}; known: {', '.join(task_names())}"
        ) from None


def make_task(name: str, *, seed: int = 0, n: int | None = None) -> Task:
    """Build the task ``name`` (see :data:`TASKS`) with ``n`` samples drawn with ``seed``.

    Raises
    ------
    UnknownTaskError
        ``name`` is not registered (the message lists the names).

    Examples
    --------
    >>> make_task("separation-1d").class_counts()
    (100, 100)
    """
    return _spec(name).factory(seed=seed, n=n)


# -- model -------------------------------------------------------------------------------
class DepthModel(nn.Module):
    """``head(stack(embed(x)))``: an optional input embedding, a :class:`DepthStack`, a head.

    The stack returns the final position ``x_L`` (stream 0, first lag, ...), so a linear
    ``head`` is a hyperplane along the position dimensions only (002 §4.1).

    Parameters
    ----------
    stack : DepthStack
    embed, head : torch.nn.Module, optional
        Identity when omitted.
    task : str
        Name of the task the model was built for (informational).
    """

    def __init__(
        self,
        stack: DepthStack,
        *,
        embed: nn.Module | None = None,
        head: nn.Module | None = None,
        task: str = "",
    ):
        super().__init__()
        if not isinstance(stack, DepthStack):
            raise ParameterError(f"stack must be a DepthStack, got {type(stack).__name__}")
        self.embed = embed if embed is not None else nn.Identity()
        self.stack = stack
        self.head = head if head is not None else nn.Identity()
        self.task = task

    @property
    def family(self) -> str:
        return self.stack.family

    @property
    def layers(self) -> int:
        return self.stack.depth

    @property
    def step(self) -> float:
        return float(self.stack.blocks[0].step)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.stack(self.embed(x)))

    def trace(self, x: torch.Tensor, **kwargs):
        """:meth:`DepthStack.trace` of the embedded input."""
        return self.stack.trace(self.embed(x), **kwargs)


def _block_cls(family) -> type[DepthBlock]:
    if isinstance(family, type) and issubclass(family, DepthBlock):
        return family
    if not isinstance(family, str):
        raise ParameterError(f"family must be a family name or a DepthBlock subclass, got {family!r}")
    return block_class(family)


def _is_spatial(cls: type[DepthBlock]) -> bool:
    flag = getattr(cls, "spatial", None)
    return bool(flag) if flag is not None else cls.__name__.startswith("Conv")


def build_model(
    family,
    task: Task | str,
    *,
    layers: int | None = None,
    step: float | None = None,
    seed: int = 0,
    width: int | None = None,
    f: Callable[[int], nn.Module] | None = None,
    **block_options,
) -> DepthModel:
    """A :class:`DepthModel` of ``layers`` blocks of ``family`` shaped for ``task``.

    Per-task defaults (``layers`` and ``step`` default to ``TASKS[task].defaults``):

    * ``separation-1d``: ``d = 1``, no embedding, ``f = tanh(w x + b)`` (:func:`tanh_layer`,
      one node per layer, 002 §4.1), head ``Linear(1, 2)`` on the final position;
    * ``separation-2d``: the same with ``d = 2`` (two nodes per layer, 002 §4.2);
    * ``cubic``: ``d = 1``, ``f`` an MLP ``1 -> 16 -> 1``, the output is ``x_L`` (no head);
    * ``blobs``: ``Linear(2, width)`` embedding (width 8), the block's default ``f``,
      ``Linear(width, 2)`` head;
    * ``bars``: blocks on ``(B, C, H, W)`` (class name ``Conv...`` or ``spatial = True``) get
      a ``3 x 3`` convolution to ``width`` channels (4) and a global-average-pool head;
      other blocks see the flattened image through ``Linear(64, width)`` (width 16).

    ``norm`` defaults to ``False`` on the one- and two-node tasks. Parameters are
    initialised from ``torch.manual_seed(seed)`` inside a forked RNG (the global RNG is
    left as it was).

    Parameters
    ----------
    family : str or DepthBlock subclass
        A name known to :func:`~depthdyn.nn.blocks.stack.block_class`, or a block class.
    task : Task or str
    layers : int, optional
    step : float, optional
    seed : int
    width : int, optional
        Embedding width for ``blobs`` / ``bars``.
    f : callable, optional
        ``f(l)`` builds layer ``l``'s block function, replacing the per-task default.
    **block_options
        Passed to every block (``k=2``, ``a_init=-2``, ``n=4``, ...), over the task's
        ``block_defaults`` for the family.
    """
    name = task.name if isinstance(task, Task) else task
    spec = _spec(name)
    cls = _block_cls(family)
    layers = spec.defaults["layers"] if layers is None else layers
    if isinstance(layers, bool) or not isinstance(layers, int) or layers < 1:
        raise ParameterError(f"layers must be a positive integer, got {layers!r}")
    check_options(cls, block_options)
    block_options = {**spec.block_defaults.get(cls.family, {}), **block_options}
    block_options["step"] = spec.defaults["step"] if step is None else step
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ParameterError(f"seed must be an integer, got {seed!r}")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        embed = head = None
        if name in ("separation-1d", "separation-2d"):
            dim = 1 if name == "separation-1d" else 2
            block_options.setdefault("norm", False)
            f = f or (lambda _l: tanh_layer(dim))
            head = nn.Linear(dim, 2)
        elif name == "cubic":
            dim = 1
            block_options.setdefault("norm", False)
            f = f or (lambda _l: mlp(1, 16))
        elif name == "blobs":
            dim = 8 if width is None else width
            embed, head = nn.Linear(2, dim), nn.Linear(dim, 2)
        else:  # bars
            if _is_spatial(cls):
                dim = 4 if width is None else width
                embed = nn.Conv2d(1, dim, 3, padding=1)
                head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(dim, 2))
            else:
                dim = 16 if width is None else width
                embed = nn.Sequential(nn.Flatten(), nn.Linear(64, dim))
                head = nn.Linear(dim, 2)
        stack = DepthStack(cls(dim, f(i) if f is not None else None, **block_options) for i in range(layers))
        return DepthModel(stack, embed=embed, head=head, task=name)
