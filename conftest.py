"""Collection settings for the doctests of the package itself."""

import importlib.util

# depthdyn.nn needs the optional torch extra; without it its modules are not collected
# (tests/nn skips itself with the reason).
collect_ignore = [] if importlib.util.find_spec("torch") else ["depthdyn/nn"]
