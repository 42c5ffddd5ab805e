"""The API reference lists every public name: each package's ``__all__`` against docs/api/.

Each page ``docs/api/<page>.md`` renders one mkdocstrings entry ``::: <package>.<name>`` per
public name; a subpackage in ``__all__`` is linked to its own page instead. A name added to
``__all__`` without an entry (or an entry left behind by a removed name) fails here, before
``mkdocs build --strict`` would render an incomplete reference.
"""

from __future__ import annotations

import importlib
import re
import types
from pathlib import Path

import pytest

API = Path(__file__).resolve().parents[1] / "docs" / "api"
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
    entries = re.findall(rf"^::: {re.escape(package)}\.(\w+)\s*$", text, re.M)
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
