"""Linear multistep methods, kept importable under their former name.

They live in :mod:`depthdyn.families.multistep`; this module re-exports its public names
(``from depthdyn.multistep import bdf`` keeps working).
"""

from ..families.multistep import *  # noqa: F403 - the whole public list, kept in one place
from ..families.multistep import __all__  # noqa: F401
