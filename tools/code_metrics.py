"""Structure figures of the package, for reviews and for issue-style before/after notes.

Run from the repository root::

    python tools/code_metrics.py            # the summary
    python tools/code_metrics.py --json     # the same as JSON
    python tools/code_metrics.py --top 20   # the 20 longest function bodies

It reads the source with :mod:`ast` (nothing is imported) and reports:

* **long functions**: function and method bodies longer than ``--limit`` lines (default 100),
  docstrings excluded, counted from the first statement after the docstring to the last line
  of the body (comments and blank lines inside count, as a reader scrolls them);
* **underscore imports across packages**: ``from X import _name`` (or ``import X._mod`` used
  as a module) where the importing module and ``X`` lie in different packages of
  ``spatialjax`` (a package is a directory with an ``__init__.py``; the top-level modules form
  the package ``spatialjax``). A private module imported as a whole (``from . import _sweep``)
  is not counted; an underscore *name* taken from another package's module is;
* **underscore imports within a package**: the same, where both modules lie in one package
  (``multibody.rnea`` taking ``_sweep._x``): allowed by the rule "private means private to its
  package", listed because a module that needs many of another's private names usually wants
  them public in a private module (MJX's ``scan.body_tree``);
* **names defined more than once**: top-level functions and classes with the same name in
  two or more modules (``__init__``-style re-exports are imports, not definitions), listed
  with their modules; dunder names, ``main`` and the command protocol every ``_cli`` module
  implements (``add_arguments``, ``run``) are ignored.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "spatialjax"
#: Names every command module defines by design (the ``spatialjax`` subcommand protocol).
_PROTOCOL = ("main", "add_arguments", "run")


def _modules(pkg: Path) -> dict[str, Path]:
    out = {}
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _package_of(module: str, modules: dict[str, Path]) -> str:
    """The package a module belongs to (itself, if it is a package)."""
    path = modules[module]
    if path.name == "__init__.py":
        return module
    return module.rsplit(".", 1)[0]


def _resolve(module: str, modules: dict[str, Path], level: int, target: str | None) -> str:
    """The absolute module name of a (possibly relative) import in ``module``."""
    if level == 0:
        return target or ""
    base = _package_of(module, modules).split(".")
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _body_length(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    body = fn.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    if not body:
        return 0
    start = body[0].lineno
    if getattr(body[0], "decorator_list", None):
        start = min([start] + [d.lineno for d in body[0].decorator_list])
    end = max(getattr(n, "end_lineno", n.lineno) or n.lineno for n in body)
    return end - start + 1


def measure(pkg: Path = PKG) -> dict:
    modules = _modules(pkg)
    functions = []
    imports = []
    within = []
    defined: dict[str, list[str]] = defaultdict(list)
    for mod, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if not (node.name.startswith("__") or node.name in _PROTOCOL):
                    defined[node.name].append(mod)
        stack: list[tuple[ast.AST, str]] = [(tree, "")]
        while stack:
            node, prefix = stack.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    name = f"{prefix}{child.name}"
                    functions.append(
                        {
                            "function": f"{mod}.{name}",
                            "lines": _body_length(child),
                            "line": child.lineno,
                        }
                    )
                    stack.append((child, name + "."))
                elif isinstance(child, ast.ClassDef):
                    stack.append((child, f"{prefix}{child.name}."))
                else:
                    stack.append((child, prefix))
        here = _package_of(mod, modules)
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            src = _resolve(mod, modules, node.level, node.module)
            if not src.startswith("spatialjax"):
                continue
            for alias in node.names:
                full = f"{src}.{alias.name}"
                if full in modules:  # a module imported as a whole
                    continue
                if not alias.name.startswith("_") or alias.name.startswith("__"):
                    continue
                there = _package_of(src, modules) if src in modules else src
                row = {"module": mod, "line": node.lineno, "from": src, "name": alias.name}
                (imports if there != here else within).append(row)
    functions.sort(key=lambda f: -f["lines"])
    dups = {k: v for k, v in sorted(defined.items()) if len(v) > 1}
    return {
        "functions": functions,
        "cross_package_underscore_imports": imports,
        "within_package_underscore_imports": within,
        "duplicates": dups,
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--limit", type=int, default=100, help="body length that counts as long")
    p.add_argument("--top", type=int, default=10, help="how many of the longest bodies to list")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    a = p.parse_args(argv)
    m = measure()
    long_ = [f for f in m["functions"] if f["lines"] > a.limit]
    if a.json:
        json.dump({**m, "limit": a.limit, "long_functions": long_}, sys.stdout, indent=1)
        print()
        return 0
    print(f"function bodies over {a.limit} lines (docstrings aside): {len(long_)}")
    for f in m["functions"][: max(a.top, len(long_))]:
        print(f"  {f['lines']:5d}  {f['function']} (line {f['line']})")
    imps = m["cross_package_underscore_imports"]
    print(f"underscore names imported across packages: {len(imps)}")
    for i in imps:
        print(f"  {i['module']}:{i['line']}  from {i['from']} import {i['name']}")
    w = m["within_package_underscore_imports"]
    pairs: dict[tuple[str, str], int] = defaultdict(int)
    for i in w:
        pairs[(i["module"], i["from"])] += 1
    print(f"underscore names imported within a package: {len(w)} (in {len(pairs)} module pairs)")
    for (a_, b_), n in sorted(pairs.items(), key=lambda kv: -kv[1]):
        print(f"  {n:3d}  {a_} <- {b_}")
    d = m["duplicates"]
    print(f"top-level names defined in more than one module: {len(d)}")
    for k, v in d.items():
        print(f"  {k}: {', '.join(v)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
