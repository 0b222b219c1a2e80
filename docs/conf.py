"""Sphinx configuration for the depthdyn documentation."""

import os
import runpy
import sys

sys.path.insert(0, os.path.abspath(".."))
sys.path.insert(0, os.path.abspath("_ext"))

project = "depthdyn"
author = "depthdyn contributors"
release = "0.1.0"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "notebook_pages",
    "gallery_pages",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
myst_enable_extensions = ["dollarmath", "amsmath"]

numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
autodoc_member_order = "bysource"

# depthdyn.nn needs the optional torch extra; without it the API pages are built from mocks.
try:
    import torch  # noqa: F401
except ImportError:
    autodoc_mock_imports = ["torch"]

exclude_patterns = ["_build", "_ext"]
html_theme = "alabaster"

# explore.md embeds the live explorer in an <iframe>: the page is written from the current front
# end at every build (explore_page.py) and copied beside the HTML pages
runpy.run_path(os.path.abspath("explore_page.py"))["write_explorer"]()
html_extra_path = ["_static/explore"]
