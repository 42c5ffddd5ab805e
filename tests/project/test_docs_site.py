"""The API reference as a reader sees it: checks on the HTML that ``mkdocs build --strict`` writes.

The API pages (docs/api/*.md) are generated from the docstrings by mkdocstrings, which renders
them as Markdown. What reads wrong there is invisible in the source, so the site is built once
(about 15-20 s on 2 cores, hence ``slow``) and each API page is checked for

* raw Sphinx roles (``:class:`` ... shown as text instead of a link);
* ``Returns`` tables with more than one row: a Returns section is one entry (mkdocs.yml sets
  ``returns_multiple_items: false``; a tuple is described in that one entry), so a second row
  is a description split at a line break, each piece under the same type;
* reStructuredText maths (``.. math::``) or a ``$$`` block that arithmatex did not take;
* doctests rendered as nested quotes (``>>>`` outside an ``Examples:`` section);
* a submodule rendered in place of a function of the same name (griffe keeps the submodule:
  ``::: spatialjax.multibody.rnea`` would render the module);
* the dataclasses' fields in an ``Attributes`` table, one row per field;
* cross references left as text (autorefs' ``[x][path]`` unresolved).
"""

from __future__ import annotations

import dataclasses
import html
import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

pytest.importorskip("mkdocstrings", reason="the docs tools (pip install -e '.[docs]')")

PAGES = ("spatialjax", "multibody", "identification", "io", "interop")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stderr[-4000:]}"
    return out


def _page(site: Path, name: str) -> str:
    return (site / "api" / name / "index.html").read_text(encoding="utf-8")


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def _objects(page: str):
    """(identifier, html) of each documented object's own block (nested members cut out)."""
    heads = list(re.finditer(r'<h\d id="(spatialjax[\w.]*)" class="doc doc-heading">', page))
    for k, m in enumerate(heads):
        end = heads[k + 1].start() if k + 1 < len(heads) else len(page)
        yield m.group(1), page[m.start() : end]


def _section_tables(fragment: str, title: str) -> list[str]:
    pattern = rf'doc-section-title">{title}:</span></p>\s*<table>(.*?)</table>'
    return re.findall(pattern, fragment, re.S)


def _rows(table: str) -> list[str]:
    return re.findall(r'<tr class="doc-section-item">(.*?)</tr>', table, re.S)


@pytest.mark.parametrize("name", PAGES)
def test_no_raw_restructuredtext(site, name):
    text = _text(_page(site, name))
    roles = re.findall(r".{30}:(?:class|func|meth|data|mod|attr|obj|exc|const):.{30}", text)
    assert not roles, f"api/{name}: raw Sphinx roles: {roles[:5]}"
    assert ".. math::" not in text, f"api/{name}: a '.. math::' directive shown as text"
    assert "$$" not in text, f"api/{name}: a '$$' block not typeset (blank lines around it?)"
    refs = re.findall(r"\[[^\]]*\]\[spatialjax[\w.]*\]", text)
    assert not refs, f"api/{name}: cross references left as text: {refs[:5]}"


def test_returns_one_row_each(site):
    split, tables = [], 0
    for name in PAGES:
        for ident, block in _objects(_page(site, name)):
            for table in _section_tables(block, "Returns"):
                tables += 1
                rows = _rows(table)
                if len(rows) > 1:
                    pieces = " | ".join(_text(r).split("\n")[-4].strip()[:40] for r in rows)
                    split.append(f"{ident}: {len(rows)} rows: {pieces}")
    assert tables >= 40, f"only {tables} Returns tables found: has the page layout changed?"
    assert not split, "Returns sections split into rows:\n" + "\n".join(split)


@pytest.mark.parametrize("name", PAGES)
def test_doctests_render_as_code(site, name):
    page = _page(site, name)
    quoted = [i for i, b in _objects(page) if "<blockquote>" in b]
    assert not quoted, f"api/{name}: '>>>' rendered as nested quotes in {quoted}"


@pytest.mark.parametrize("name", PAGES)
def test_no_submodule_in_place_of_a_function(site, name):
    page = _page(site, name)
    modules = re.findall(r'doc-object doc-module">\s*<h\d id="([\w.]+)"', page)
    assert "doc-object doc-module" not in page, f"api/{name}: a module is rendered: {modules}"


def test_dataclass_fields_in_attribute_tables(site):
    """Every field of each documented dataclass is a row of its Attributes table."""
    missing, checked = [], 0
    for name in PAGES:
        for ident, block in _objects(_page(site, name)):
            module, _, attr = ident.rpartition(".")
            try:
                obj = getattr(importlib.import_module(module), attr)
            except (ImportError, AttributeError):
                continue  # a method or property
            if not (isinstance(obj, type) and dataclasses.is_dataclass(obj)):
                continue
            checked += 1
            rows = [r for t in _section_tables(block, "Attributes") for r in _rows(t)]
            names = {_text(r).split()[0] for r in rows if _text(r).split()}
            lost = [f.name for f in dataclasses.fields(obj) if f.name not in names]
            if lost:
                missing.append(f"{ident}: {lost}")
    assert checked >= 20, f"only {checked} dataclasses found: has the page layout changed?"
    assert not missing, "dataclass fields without an Attributes row:\n" + "\n".join(missing)
