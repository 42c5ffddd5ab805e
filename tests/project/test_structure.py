"""The package's structure stays readable: no private names across packages, no long functions.

The figures are those of ``python tools/code_metrics.py`` (the same measuring function,
loaded from the file):

* a module must not import an underscore *name* from another package of spatialjax (a
  package is a directory with an ``__init__.py``; the top-level modules form the package
  ``spatialjax``). Importing a private *module* as a whole (``from ..io import _xml``) or a
  public name from one (``from .._util import x64``) is allowed: a helper two packages need
  is a public name in a private module (``spatialjax/_util.py``);
* no function body in ``spatialjax/`` is longer than 100 lines, docstrings aside.
"""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest
from helpers import ROOT

LIMIT = 100

#: Bodies over LIMIT lines being split by an open branch; nothing may join it without an
#: issue saying why. Remove a name once it is short: a listed name that no longer exceeds
#: LIMIT fails the test too, so the list only shrinks. Empty since issue 33 was done.
KNOWN_LONG: frozenset[str] = frozenset()


def _code_metrics():
    spec = importlib.util.spec_from_file_location(
        "code_metrics", ROOT / "tools" / "code_metrics.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def metrics():
    return _code_metrics()


@pytest.fixture(scope="module")
def measured(metrics):
    return metrics.measure()


def test_no_underscore_name_imported_across_packages(measured):
    rows = measured["cross_package_underscore_imports"]
    found = "\n".join(
        f"  {r['module']}:{r['line']}  from {r['from']} import {r['name']}" for r in rows
    )
    assert not rows, (
        "private names imported from another package of spatialjax:\n"
        f"{found}\nmake the helper a public name in a private module (spatialjax/_util.py, or "
        "the package's own) and import that"
    )


def test_no_function_body_over_the_limit(measured):
    long_ = {f["function"]: f["lines"] for f in measured["functions"] if f["lines"] > LIMIT}
    new = {name: n for name, n in long_.items() if name not in KNOWN_LONG}
    assert not new, (
        f"function bodies over {LIMIT} lines (docstrings aside): "
        + ", ".join(f"{name} ({n})" for name, n in sorted(new.items()))
        + "; split them into named steps"
    )
    fixed = sorted(KNOWN_LONG - set(long_))
    assert not fixed, f"no longer over {LIMIT} lines, remove from KNOWN_LONG: {fixed}"


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root / "spatialjax"


def test_the_measure_finds_what_the_rules_forbid(metrics, tmp_path):
    # a tiny package tree with one violation of each kind next to the allowed forms
    long_body = "".join(f"    x{i} = {i}\n" for i in range(LIMIT + 1))
    pkg = _write(
        tmp_path,
        {
            "spatialjax/__init__.py": "",
            "spatialjax/_util.py": "def helper():\n    return 1\n",
            "spatialjax/_top.py": "def _private():\n    return 1\n",
            "spatialjax/a/__init__.py": "",
            "spatialjax/a/_x.py": "def _h():\n    return 1\n\ndef shared():\n    return 2\n",
            "spatialjax/a/user.py": "from ._x import _h\n",  # within a package: allowed
            "spatialjax/b/__init__.py": "",
            "spatialjax/b/m.py": (
                "from ..a import _x\n"  # a private module as a whole: allowed
                "from ..a._x import shared\n"  # a public name of a private module: allowed
                "from .._util import helper as _helper\n"  # a public name, aliased: allowed
                "from ..a._x import _h\n"  # a private name from another package: forbidden
                "from spatialjax._top import _private\n"  # from the top-level package: too
                '\ndef long():\n    """Docstrings do not count."""\n' + long_body
            ),
        },
    )
    m = metrics.measure(pkg)
    cross = {(r["module"], r["from"], r["name"]) for r in m["cross_package_underscore_imports"]}
    assert cross == {
        ("spatialjax.b.m", "spatialjax.a._x", "_h"),
        ("spatialjax.b.m", "spatialjax._top", "_private"),
    }
    within = {(r["module"], r["name"]) for r in m["within_package_underscore_imports"]}
    assert within == {("spatialjax.a.user", "_h")}
    lengths = {f["function"]: f["lines"] for f in m["functions"]}
    assert lengths["spatialjax.b.m.long"] == LIMIT + 1
    assert lengths["spatialjax._util.helper"] == 1


def _spatialjax_imports(path: Path):
    """``(line, module, name)`` of each ``from spatialjax... import name`` in a script."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "spatialjax" or node.module.startswith("spatialjax."):
                for alias in node.names:
                    yield node.lineno, node.module, alias.name


@pytest.mark.parametrize(
    "script",
    sorted(
        p.relative_to(ROOT).as_posix()
        for d in ("benchmarks", "tools")
        for p in (ROOT / d).rglob("*.py")
    ),  # fmt: skip
)
def test_scripts_import_names_that_exist(script):
    """The benchmark and tool scripts run outside the test suite: a module moved or a name
    renamed in the package must not leave them importing what is gone."""
    import importlib

    missing = []
    for line, module, name in _spatialjax_imports(ROOT / script):
        try:
            mod = importlib.import_module(module)
        except ImportError as e:
            missing.append(f"{script}:{line}: {module} ({e})")
            continue
        if name != "*" and not hasattr(mod, name):
            try:
                importlib.import_module(f"{module}.{name}")
            except ImportError:
                missing.append(f"{script}:{line}: {module} has no {name}")
    assert not missing, "\n".join(missing)


def test_test_modules_import_no_other_test_module():
    """Shared test code lives in tests/helpers.py (or conftest.py): a test module importing
    another runs that module's imports and skips, and hides what is shared."""
    import ast

    found = []
    for path in sorted((ROOT / "tests").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for name in names:
                if name.split(".")[0].startswith("test_") or name.startswith("tests.test_"):
                    found.append(f"tests/{path.name}:{node.lineno}: {name}")
    assert not found, "test modules importing test modules (move the helper to helpers.py):\n" + (
        "\n".join(found)
    )
