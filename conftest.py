"""Collection settings for the doctests of the package itself."""

try:  # depthdyn.nn needs the optional torch extra
    import torch  # noqa: F401
except ImportError:
    # without it the package's torch modules are not collected (tests/nn skips with the reason)
    collect_ignore = ["depthdyn/nn"]
