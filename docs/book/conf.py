# Sphinx + MyST-NB configuration of the spare-lab book (`make book`).
#
# The sources are staged by spare_lib.figures.book (README as the landing page, one page per
# notebook in reading order, executed copies of `make figures` when present); notebooks are never
# executed here. Everything the pages load is served from the site itself: the theme's assets and
# MathJax 2 (from the jupyter-server-mathjax package, copied into _static/mathjax by the staging
# step), so the site builds and reads offline.

project = "spare-lab"
author = "spare-lab contributors"
copyright = "spare-lab contributors"  # noqa: A001 - Sphinx's name
html_title = "spare-lab: the executable companion to SPARe"

extensions = ["myst_nb"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_static/**", "figures/**"]
master_doc = "index"

nb_execution_mode = "off"          # the book shows the outputs of `make figures`
nb_render_markdown_format = "myst"  # sympy derivations print Markdown with $$ ... $$
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3
suppress_warnings = ["myst.xref_missing", "myst.header", "mystnb.unknown_mime_type",
                     "misc.highlighting_failure"]

# MathJax 2, served locally (no CDN): the HTML-CSS output with the STIX web fonts it ships.
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
mathjax2_config = {
    # MyST marks prose sections "ignore" (no stray $) and the math nodes "math": process those.
    "tex2jax": {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]],
                "processEscapes": True, "ignoreClass": "tex2jax_ignore|mathjax_ignore",
                "processClass": "tex2jax_process|mathjax_process|math|output_area"},
    "HTML-CSS": {"availableFonts": [], "imageFont": None, "preferredFont": None,
                 "webFont": "STIX-Web"},
    "showMathMenu": False,
}
mathjax3_config = None

html_theme = "sphinx_book_theme"
html_static_path: list[str] = []  # the staged sources' _static/ (MathJax, CSS), added in setup()
html_css_files = ["spare-book.css"]
html_theme_options = {
    "show_toc_level": 2,
    "use_download_button": False,
    "use_fullscreen_button": False,
    "navigation_with_keys": False,
}
html_last_updated_fmt = None
html_copy_source = False
html_show_sourcelink = False


def setup(app):  # noqa: ANN001, ANN201 - Sphinx hook
    import os

    def add_static(app):  # noqa: ANN001, ANN202
        static = os.path.join(app.srcdir, "_static")
        if os.path.isdir(static):
            app.config.html_static_path.append(static)

    app.connect("builder-inited", add_static)
