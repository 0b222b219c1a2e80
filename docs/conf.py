"""Sphinx configuration for the depthdyn documentation."""

import os
import sys

sys.path.insert(0, os.path.abspath(".."))

project = "depthdyn"
author = "depthdyn contributors"
release = "0.1.0"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
myst_enable_extensions = ["dollarmath", "amsmath"]

numpydoc_show_class_members = False
autodoc_member_order = "bysource"

exclude_patterns = ["_build"]
html_theme = "alabaster"
