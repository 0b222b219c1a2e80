"""The blocks room: one ``torch.nn`` module per residual family, and the stack that runs them.

* :mod:`.base`: :class:`DepthBlock` (state handling, skip operator, learned coefficients,
  the block's :class:`~depthdyn.Recurrence`), the default block functions.
* :mod:`.residual` (plain / pre-norm, ReZero, weighted, highway), :mod:`.momentum`,
  :mod:`.lag` (``C^k`` smooth and ``k``-lag dense), :mod:`.entangled` (matrix and
  convolutional skips), :mod:`.hyper` (hyper-connections and Sinkhorn).
* :mod:`.stack`: :class:`DepthStack`, its :class:`Trace`, the family registry ``BLOCKS``.
"""

from .base import DepthBlock, mlp, tanh_layer
from .entangled import ConvEntangledBlock, EntangledBlock, circular_conv2d
from .hyper import HyperConnectionBlock, sinkhorn
from .lag import DenseBlock, SmoothBlock
from .momentum import MomentumBlock
from .residual import HighwayBlock, ResidualBlock, ReZeroBlock, WeightedBlock
from .stack import BLOCKS, DepthStack, Trace, block_class, check_options, make_stack, pick_device

__all__ = [
    "DepthBlock",
    "mlp",
    "tanh_layer",
    "ResidualBlock",
    "ReZeroBlock",
    "WeightedBlock",
    "HighwayBlock",
    "MomentumBlock",
    "SmoothBlock",
    "DenseBlock",
    "EntangledBlock",
    "ConvEntangledBlock",
    "circular_conv2d",
    "HyperConnectionBlock",
    "sinkhorn",
    "BLOCKS",
    "DepthStack",
    "Trace",
    "block_class",
    "check_options",
    "make_stack",
    "pick_device",
]
