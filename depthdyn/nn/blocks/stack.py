"""A stack of ``L`` blocks of one family, and its per-layer trace recorded with hooks."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import torch
from torch import nn

from ...errors import ParameterError, UnknownFamilyError
from ...families import suggest
from .base import DepthBlock
from .entangled import EntangledBlock
from .hyper import HyperConnectionBlock
from .lag import DenseBlock, SmoothBlock
from .momentum import MomentumBlock
from .residual import HighwayBlock, ResidualBlock, ReZeroBlock, WeightedBlock

__all__ = [
    "BLOCKS", "DepthStack", "Trace", "make_stack", "pick_device", "block_class", "check_options",
    "check_stack",
]

#: The torch block of each depthdyn family, for vector features ``(B, d)``
#: (:class:`~depthdyn.nn.blocks.entangled.ConvEntangledBlock` is the feature-map variant).
BLOCKS: dict[str, type[DepthBlock]] = {
    cls.family: cls
    for cls in (
        ResidualBlock,
        ReZeroBlock,
        WeightedBlock,
        HighwayBlock,
        MomentumBlock,
        SmoothBlock,
        DenseBlock,
        EntangledBlock,
        HyperConnectionBlock,
    )
}


def pick_device(device=None) -> torch.device:
    """``None`` picks CUDA when available, else the CPU; ``"cuda"`` without a GPU is an error."""
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        raise ParameterError(f"unknown device {device!r}; use 'cpu', 'cuda' or 'cuda:N'") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ParameterError("device 'cuda' was asked for but no CUDA GPU is available; use --device cpu")
    if dev.type not in ("cpu", "cuda"):
        raise ParameterError(f"device must be 'cpu' or 'cuda', got {device!r}")
    return dev


@dataclass(frozen=True)
class Trace:
    """States of every layer of one forward pass.

    ``states[l]`` is the state entering layer ``l`` (``states[0]`` the initial state,
    ``states[L]`` the output state); ``positions[l]`` is ``x_l`` (shape ``(L+1, B, ...)``).
    """

    states: tuple[torch.Tensor, ...]
    positions: torch.Tensor

    @property
    def depth(self) -> int:
        return len(self.states) - 1

    @property
    def updates(self) -> torch.Tensor:
        """``x_{l+1} - x_l`` for ``l = 0..L-1`` (``u_l`` of a first-order block, ``v_{l+1}`` of momentum)."""
        return self.positions[1:] - self.positions[:-1]


class DepthStack(nn.Module):
    """``L`` blocks of one family applied in sequence.

    ``forward(x)`` returns ``x_L`` (the position of the final state); :meth:`trace`
    records every layer's state through forward hooks, so the blocks' own ``forward`` is
    what runs.
    """

    def __init__(self, blocks: Iterable[DepthBlock]):
        super().__init__()
        blocks = list(blocks)
        if not blocks:
            raise ParameterError("a DepthStack needs at least one block")
        for b in blocks:
            if not isinstance(b, DepthBlock):
                raise ParameterError(f"DepthStack takes DepthBlock modules, got {type(b).__name__}")
        kinds = {(type(b), b.slots, b.dim) for b in blocks}
        if len(kinds) > 1:
            raise ParameterError("all blocks of a DepthStack must share class, state slots and dim")
        self.blocks = nn.ModuleList(blocks)

    @property
    def family(self) -> str:
        return self.blocks[0].family

    @property
    def depth(self) -> int:
        return len(self.blocks)

    def initial_state(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks[0].initial_state(x)

    def position(self, state: torch.Tensor) -> torch.Tensor:
        return self.blocks[-1].position(state)

    def run(self, state: torch.Tensor) -> torch.Tensor:
        """Apply all blocks to a state; returns the final state."""
        for block in self.blocks:
            state = block(state)
        return state

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.position(self.run(self.initial_state(x)))

    def trace(self, x: torch.Tensor, *, keep_graph: bool = False) -> Trace:
        """Run ``x`` through the stack once and keep the state at every layer.

        Built on :func:`depthdyn.nn.analysis.record.record` (hooks during the stack's own
        forward). With ``keep_graph`` the states stay attached to the autograd graph (call
        ``retain_grad()`` on them before ``backward()`` to read per-layer gradients).
        """
        # the recorder lives in the analysis room; imported here, at call time, because the
        # analysis builds on the blocks
        from ..analysis.record import record

        rec = record(self, x, list(self.blocks), graph=keep_graph)
        states = tuple(s if keep_graph else s.detach() for s in rec.states)
        return Trace(states, torch.stack([self.blocks[0].position(s) for s in states]))


def check_stack(stack) -> DepthStack:
    """``stack`` itself if it is a :class:`DepthStack`, else a ``ParameterError``."""
    if not isinstance(stack, DepthStack):
        raise ParameterError(f"expected a DepthStack, got {type(stack).__name__}")
    return stack


def block_class(family: str) -> type[DepthBlock]:
    """The block class of a depthdyn family name."""
    try:
        return BLOCKS[family]
    except KeyError:
        raise UnknownFamilyError(
            f"no torch block for family {family!r}{suggest(family, BLOCKS)}; "
            f"known: {', '.join(sorted(BLOCKS))}"
        ) from None


def check_options(cls: type[DepthBlock], options: dict) -> None:
    """Refuse block options that ``cls`` does not take, naming the ones it does."""
    params = inspect.signature(cls.__init__).parameters
    known = [n for n, p in params.items() if p.kind is p.KEYWORD_ONLY]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ParameterError(
            f"{cls.__name__} ({cls.family}) takes no option {', '.join(unknown)}; it takes {', '.join(known)}"
        )


def make_stack(
    family: str,
    *,
    layers: int,
    dim: int,
    f: Callable[[int], nn.Module] | None = None,
    **options,
) -> DepthStack:
    """``layers`` blocks of ``family`` with ``dim`` features.

    ``f(l)`` builds the block function of layer ``l`` (the block's default otherwise);
    ``options`` go to every block (``step``, ``norm``, ``k``, ...).
    """
    cls = block_class(family)
    check_options(cls, options)
    if isinstance(layers, bool) or not isinstance(layers, int) or layers < 1:
        raise ParameterError(f"layers must be a positive integer, got {layers!r}")
    return DepthStack(cls(dim, f(layer) if f is not None else None, **options) for layer in range(layers))
