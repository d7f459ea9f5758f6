# SPDX-License-Identifier: GPL-2.0-or-later
"""Sphinx configuration of daskcl's documentation.

Build (the README's second set-up command and CI run these; warnings are errors):

    python3 -m sphinx -W --keep-going -b html docs docs/_build/html
    python3 -m sphinx -W -b doctest docs docs/_build/doctest

The function table, the list of functions and the figures are generated from the code when the
docs build (``_ext/daskcl_docs.py``); the doctest build runs every example of the pages and of
the docstrings on the bound device (PoCL on a CPU-only machine) and compares what daskcl prints.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))          # the checkout's daskcl
sys.path.insert(0, str(HERE / "_ext"))
# the examples run from the clone's root, as a reader runs them (workflows/..., README paths)
os.chdir(HERE.parent)

import daskcl  # noqa: E402

project = "daskcl"
author = "the daskcl authors"
copyright = "the daskcl authors, GPL-2.0-or-later"
release = version = daskcl.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "numpydoc",
    "daskcl_docs",
]

exclude_patterns = ["_build", "_generated"]
templates_path: list[str] = []
html_theme = "alabaster"
# the page follows the window (_static/daskcl.css): wide tables and code blocks fit
html_theme_options = {"page_width": "1180px", "sidebar_width": "230px", "body_max_width": "none"}
html_static_path = ["_static"]
html_css_files = ["daskcl.css"]

autodoc_default_options = {"members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# every example of the pages and docstrings runs; output must match exactly
doctest_test_doctest_blocks = "default"
doctest_global_setup = "import numpy as np"
