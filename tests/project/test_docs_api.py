"""The API reference lists every public name: each package's ``__all__`` against docs/api/.

Each page ``docs/api/<page>.md`` renders one mkdocstrings entry ``::: <package>.<name>`` per
public name; a subpackage in ``__all__`` is linked to its own page instead. A name added to
``__all__`` without an entry (or an entry left behind by a removed name) fails here, before
``mkdocs build --strict`` would render an incomplete reference.

Also: the notebooks and public functions the docs' lists must name, and the docstrings free of
the reStructuredText that mkdocstrings shows raw (tests/project/test_docs_site.py checks the
built pages).
"""

from __future__ import annotations

import ast
import importlib
import re
import types
from pathlib import Path

import pytest
from helpers import ROOT

API = ROOT / "docs" / "api"
PAGES = {
    "spatialjax": "spatialjax.md",
    "spatialjax.multibody": "multibody.md",
    "spatialjax.identification": "identification.md",
    "spatialjax.io": "io.md",
    "spatialjax.interop": "interop.md",
}


@pytest.mark.parametrize("package", sorted(PAGES))
def test_api_page_lists_all(package):
    module = importlib.import_module(package)
    text = (API / PAGES[package]).read_text(encoding="utf-8")
    entries = []
    for name, shadowed in re.findall(
        rf"^::: {re.escape(package)}\.(\w+)(?:\.(\w+))?\s*$", text, re.M
    ):
        # ``::: pkg.rnea.rnea``: a function entered by its defining path because a submodule
        # of the same name would be rendered instead (griffe keeps the submodule).
        assert shadowed in ("", name), f"{PAGES[package]}: ::: {package}.{name}.{shadowed}"
        entries.append(name)
    assert len(entries) == len(set(entries)), f"{PAGES[package]}: a name is listed twice"
    documented = set(entries)
    for name in module.__all__:
        obj = getattr(module, name)
        if isinstance(obj, types.ModuleType):  # a subpackage: linked to its page
            page = PAGES.get(obj.__name__)
            assert page is not None and f"]({page})" in text, (
                f"{PAGES[package]} does not link the subpackage {obj.__name__} to its page"
            )
            documented.add(name)
    missing, stale = set(module.__all__) - documented, documented - set(module.__all__)
    assert not missing and not stale, (
        f"docs/api/{PAGES[package]} and {package}.__all__ differ: missing from the page "
        f"{sorted(missing)}, not in __all__ {sorted(stale)}"
    )


def test_every_package_has_a_page():
    """Each public subpackage of spatialjax (a folder without a leading underscore) has a page."""
    root = Path(importlib.import_module("spatialjax").__file__).parent
    packages = {
        f"spatialjax.{p.name}"
        for p in root.iterdir()
        if p.is_dir() and not p.name.startswith("_") and (p / "__init__.py").exists()
    }
    assert packages | {"spatialjax"} == set(PAGES)


# ---------------------------------------------------------------- the docs' lists
ROOT = API.parents[1]
NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("listing", ["docs/index.md", "README.md", "mkdocs.yml"])
def test_every_notebook_is_listed(listing):
    """Each notebook of notebooks/ is linked from the docs' start page, the README and the nav."""
    assert NOTEBOOKS, "no notebook found"
    text = (ROOT / listing).read_text(encoding="utf-8")
    listed = set(re.findall(r"notebooks/(\w+\.ipynb)", text))
    missing, stale = set(NOTEBOOKS) - listed, listed - set(NOTEBOOKS)
    assert not missing and not stale, (
        f"{listing}: notebooks not listed {sorted(missing)}, listed but absent {sorted(stale)}"
    )


@pytest.mark.parametrize("package", ["spatialjax.multibody", "spatialjax.identification"])
def test_start_page_names_every_function(package):
    """docs/index.md's "What is inside" table names each public function of the package."""
    text = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    section = text.split("## What is inside", 1)[1].split("\n## ", 1)[0]
    module = importlib.import_module(package)
    functions = [
        n
        for n in module.__all__
        if callable(getattr(module, n)) and not isinstance(getattr(module, n), type)
    ]
    missing = [n for n in functions if f"`{n}`" not in section]
    assert not missing, f"docs/index.md 'What is inside' does not name {package}'s {missing}"


# ---------------------------------------------------------------- docstrings in Markdown
# The API pages render the docstrings as Markdown (mkdocstrings): reStructuredText constructs
# show raw there. tools/docstring_xrefs.py converts them; these rules keep them out.
SPHINX_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|data|mod|attr|obj|exc|const):`")
RST_MATH = re.compile(r"^\s*\.\. math::", re.M)
EXAMPLE_HEADER = re.compile(r"^\s*Example:\s*\n\s+>>>", re.M)
ESCAPED_SPACE = re.compile(r"`\\ ")  # rst's ``x``\ s, shown as text by Markdown


def _docstrings():
    for path in sorted((ROOT / "spatialjax").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Expr)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                yield f"{path.relative_to(ROOT)}:{node.lineno}", node.value.value


def test_docstrings_have_no_restructuredtext():
    """No Sphinx role, ``.. math::``, singular ``Example:`` section or escaped space.

    Cross references are ``[`Plxb`][spatialjax.Plxb]`` (autorefs), display maths a ``$$`` block,
    doctests under ``Examples:``: the forms the API pages render.
    """
    found = []
    for where, doc in _docstrings():
        for rule, pattern in (
            ("Sphinx role", SPHINX_ROLE),
            (".. math::", RST_MATH),
            ("Example: (griffe renders Examples:)", EXAMPLE_HEADER),
            ("backslash-space after a literal", ESCAPED_SPACE),
        ):
            found += [f"{where}: {rule}: {m.group(0)!r}" for m in pattern.finditer(doc)]
    assert not found, "reStructuredText in docstrings (run tools/docstring_xrefs.py):\n" + (
        "\n".join(found[:40])
    )
