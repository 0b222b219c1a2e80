"""Collection settings for the doctests of the package itself."""

import importlib.util

# Modules of optional extras are not collected without them (their tests skip with the reason).
collect_ignore = [path for module, path in (("torch", "depthdyn/nn"),
                                            ("anywidget", "depthdyn/explore/widget.py"))
                  if importlib.util.find_spec(module) is None]
