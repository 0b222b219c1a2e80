"""Products over depth: periodic patterns (exact Floquet analysis), Lyapunov exponents,
HC/mHC composite gains and end-to-end singular values of layer stacks.

Nothing here imports torch or matplotlib at import time.
"""

from .periodic import MAX_PERIOD, MAX_STATE, Periodic, Switch, layer_matrix, periodic, stability_switches

__all__ = ["Periodic", "periodic", "layer_matrix", "MAX_PERIOD", "MAX_STATE", "Switch", "stability_switches"]
