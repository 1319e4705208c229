"""Sphinx configuration of fminspect's documentation (``sphinx-build -W docs docs/_build/html``;
``.ci/run`` builds it with warnings as errors)."""

from __future__ import annotations

import fminspect

project = "fminspect"
author = "the fminspect developers"
release = version = fminspect.__version__
copyright = "2026, the fminspect developers"

extensions = [
    "myst_parser",  # the pages are Markdown, readable on GitHub as they are
    "sphinx.ext.autodoc",
    "numpydoc",  # the docstrings are numpydoc's
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
myst_heading_anchors = 3  # [text](page.md#a-heading) links, as GitHub makes them
myst_enable_extensions = ["dollarmath"]

autodoc_typehints = "none"  # the numpydoc sections say the types
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

html_theme = "pydata_sphinx_theme"
html_title = f"fminspect {version}"
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}
html_sidebars = {"**": []}  # the pages are few: the top bar lists them, the text gets the width
