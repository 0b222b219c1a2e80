"""The literature's families, kept importable under their former name.

They live in :mod:`depthdyn.families.literature`; this module re-exports its public names
(``from depthdyn.literature import rk4`` keeps working).
"""

from ..families.literature import *  # noqa: F403 - the whole public list, kept in one place
from ..families.literature import __all__  # noqa: F401
