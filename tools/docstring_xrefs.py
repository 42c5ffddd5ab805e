"""Rewrite the docstrings under ``spatialjax/`` for mkdocstrings, the renderer of the API pages.

Run from the repository root (the package is imported, so use the project's environment)::

    python tools/docstring_xrefs.py              # rewrite in place, print the counts
    python tools/docstring_xrefs.py --check      # change nothing; exit 1 if a file would change
    python tools/docstring_xrefs.py -v           # also list every conversion
    python tools/docstring_xrefs.py --inventory site/objects.inv   # reuse a built site

What it changes, in docstrings only (every string statement: module, class, function and
attribute docstrings), and nothing that it has changed once (running it again is a no-op):

* **Sphinx roles** (``:class:``, ``:func:``, ``:meth:``, ``:data:``, ``:mod:``, ``:attr:``,
  ``:obj:``, ``:exc:``, ``:const:``, with or without ``py:``), which mkdocstrings shows raw.
  A role whose target is rendered in the API reference becomes an autorefs cross reference
  ``[`Plxb`][spatialjax.Plxb]``; any other (a private helper, a module, another library's
  name) becomes plain code ``Plxb``. "Rendered" means listed in the ``objects.inv`` that
  mkdocstrings writes for the site: the objects of ``docs/api/*.md``'s ``:::`` entries and
  their rendered members, under the public path the page shows them at (the inventory maps
  the defining path, ``spatialjax.multibody._model.Model``, to it, ``spatialjax.multibody.Model``).
  A target is resolved as Sphinx would: as written, then in the enclosing class and the
  module's namespace (``:func:`mv``` in ``_smallmat.py`` is ``spatialjax._smallmat.mv``),
  following imports to the object's defining path; failing that, as a public name of the
  module's package or of ``spatialjax`` (private modules that name their package's API
  without importing it). ``~`` shows the last component, an explicit title
  (``:func:`text <target>```) shows the text. Lines that links make longer than ruff's 100
  columns are cut at a space outside any link or code span, the rest carried into the same
  paragraph or item; a summary line (the first) is never cut: there the roles become code.
* **``.. math::``** directives, which Markdown shows as text, become ``$$`` blocks, typeset by
  ``pymdownx.arithmatex`` and MathJax (see ``mkdocs.yml``).
* **``Example:``** section headers become ``Examples:``: Google-style ``Example`` is only an
  admonition to griffe (its ``>>>`` lines render as nested quotes run together), ``Examples``
  is the section whose ``>>>`` lines render as code. A ``>>>`` block written at the
  docstring's own indentation, outside any section, is put under an ``Examples:`` header
  (indented two spaces, as the package's sections) for the same reason. Doctests run the same
  either way.
* **reStructuredText literal-block markers** (a paragraph ending in ``::`` before an indented
  block) lose one colon: the indented block is already a code block in Markdown; and a
  backslash-space right after a literal (rst's "no space here", as in a plural of a literal)
  goes, which Markdown would show as text.

Without ``--inventory`` the site is built once, not strictly, into a temporary folder
(``mkdocs build``, about 20 s) to read its inventory. The counts printed are those of this run:
on a tree already converted they are all zero.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import os
import re
import subprocess
import sys
import tempfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "spatialjax"
#: ruff's line-length (pyproject.toml): lines that cross references lengthen are cut to it.
LIMIT = 100

#: A Python-domain Sphinx role: ``:func:`~a.b```, ``:py:class:`Title <a.B>```.
ROLE = re.compile(
    r":(?:py:)?(?P<kind>class|func|meth|data|mod|attr|obj|exc|const):`(?P<body>[^`\n]+)`"
)
_TITLED = re.compile(r"^(?P<title>.*?)\s*<(?P<target>[^<>]+)>$")
_MATH = re.compile(r"^(?P<indent>[ \t]*)\.\. math::[ \t]*(?P<rest>.*)$")
_EXAMPLE = re.compile(r"^(?P<indent>[ \t]*)Example:[ \t]*$")
_LITERAL = re.compile(r"^(?P<head>[ \t]*(?!\.\. )\S.*?[^:\s])::[ \t]*$")
#: rst's escaped space after a literal (``x``\ s) in a raw docstring's source, in a cooked one's.
_ESCAPED_SPACE = re.compile(r"(?<=`)\\ ")
_ESCAPED_SPACE_COOKED = re.compile(r"(?<=`)\\{1,2} ")
_QUOTES = re.compile(r"^(?P<prefix>[rRuU]{0,2})(?P<q>\"\"\"|'''|\"|')", re.S)


# ----------------------------------------------------------------------------- inventory
def read_inventory(path: Path) -> dict[str, str]:
    """``objects.inv`` (Sphinx inventory v2) as {name: the rendered path it points to}."""
    raw = path.read_bytes()
    header_end = 0
    for _ in range(4):
        header_end = raw.index(b"\n", header_end) + 1
    if not raw.startswith(b"# Sphinx inventory version 2"):
        raise SystemExit(f"{path}: not a Sphinx inventory version 2")
    out: dict[str, str] = {}
    for line in zlib.decompress(raw[header_end:]).decode("utf-8").splitlines():
        m = re.match(r"(?P<name>\S+)\s+\S+:\S+\s+-?\d+\s+(?P<uri>\S*)\s+.*$", line)
        if not m:
            continue
        name, uri = m.group("name"), m.group("uri")
        anchor = uri.split("#", 1)[1] if "#" in uri else "$"
        out[name] = name if anchor in ("$", "") else anchor.replace("$", name)
    return out


def build_inventory() -> dict[str, str]:
    """Build the site once (not strictly) into a temporary folder and read its inventory."""
    with tempfile.TemporaryDirectory(prefix="docstring_xrefs_") as tmp:
        env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        cmd = [sys.executable, "-m", "mkdocs", "build", "--quiet", "--no-strict", "--site-dir", tmp]
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        inv = Path(tmp) / "objects.inv"
        if done.returncode != 0 or not inv.exists():
            raise SystemExit(f"mkdocs build failed ({done.returncode}):\n{done.stderr[-3000:]}")
        return read_inventory(inv)


# ----------------------------------------------------------------------------- resolution
def _canonical(obj) -> str | None:
    """The defining dotted path of a module, class, function, method or property."""
    if inspect.ismodule(obj):
        return obj.__name__
    if isinstance(obj, property) and obj.fget is not None:
        obj = obj.fget
    obj = getattr(obj, "__func__", obj)  # bound and class methods
    try:
        obj = inspect.unwrap(obj)
    except ValueError:
        pass
    mod, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if isinstance(mod, str) and isinstance(qual, str) and "<" not in qual:
        return f"{mod}.{qual}"
    return None


def _walk(base, parts: list[str]):
    """``getattr`` along ``parts`` from ``base``; raises AttributeError."""
    obj = base
    for p in parts:
        obj = getattr(obj, p)
    return obj


def _import_prefix(dotted: str):
    """The object a fully qualified dotted path names at run time.

    Attributes first, as Python resolves ``spatialjax.multibody.rnea`` (the function that
    ``multibody/__init__.py`` imports over its submodule); submodules not yet imported are
    imported. Raises (AttributeError, ImportError) where nothing has that path.
    """
    parts = dotted.split(".")
    obj = importlib.import_module(parts[0])
    for i in range(1, len(parts)):
        try:
            obj = getattr(obj, parts[i])
        except AttributeError:
            obj = importlib.import_module(".".join(parts[: i + 1]))
    return obj


@dataclass
class Resolver:
    inventory: dict[str, str]
    _by_id: dict[int, str] | None = None
    _modules: dict[str, object] = field(default_factory=dict)

    def module(self, name: str):
        if name not in self._modules:
            try:
                self._modules[name] = (
                    None if name.endswith("__main__") else importlib.import_module(name)
                )
            except Exception:  # noqa: BLE001 - an optional dependency: resolve by name only
                self._modules[name] = None
        return self._modules[name]

    def by_identity(self) -> dict[int, str]:
        """id() of each rendered object (under its rendered path) -> that path."""
        if self._by_id is None:
            self._by_id = {}
            for name, path in self.inventory.items():
                if name != path:
                    continue
                try:
                    obj = _import_prefix(name)
                except Exception:  # noqa: BLE001
                    continue
                if isinstance(obj, (str, int, float, bool, type(None))):
                    continue  # interned values are no identity
                self._by_id.setdefault(id(obj), path)
        return self._by_id

    def lookup(self, dotted: str | None) -> str | None:
        return self.inventory.get(dotted) if dotted else None

    def resolve(
        self, target: str, module: str, classes: list[str], kind: str = "obj"
    ) -> str | None:
        """The rendered path of ``target`` written in ``module`` (inside ``classes``), or None."""
        target = target.lstrip(".")
        if kind == "mod":  # a module: rendered only if the inventory lists it by that name
            return self.lookup(target)
        contexts = [f"{module}.{'.'.join(classes[: i + 1])}" for i in reversed(range(len(classes)))]
        contexts.append(module)
        # As written, then relative to the enclosing classes and the module.
        for name in [target, *(f"{c}.{target}" for c in contexts)]:
            if found := self.lookup(name):
                return found
        # Through the module's namespace (imports followed to the defining path).
        mod = self.module(module)
        head, *rest = target.split(".")
        bases = []
        if mod is not None:
            for c in contexts[:-1]:
                try:
                    bases.append(_walk(mod, c[len(module) + 1 :].split(".")))
                except AttributeError:
                    pass
            bases.append(mod)
        for base in bases:
            try:
                obj = _walk(base, [head, *rest])
            except AttributeError:
                # A dataclass field or an attribute with no class-level value: by name.
                try:
                    owner = _walk(base, [head, *rest[:-1]]) if rest else None
                except AttributeError:
                    continue
                if owner is not None and (found := self.lookup(f"{_canonical(owner)}.{rest[-1]}")):
                    return found
                continue
            if found := self.lookup(_canonical(obj)):
                return found
            if not isinstance(obj, (str, int, float, bool, type(None))):
                if found := self.by_identity().get(id(getattr(obj, "__func__", obj))):
                    return found
        try:
            obj = _import_prefix(target)
        except Exception:  # noqa: BLE001
            # A private module naming its package's public API without importing it
            # (``:func:`fit_torques``` in ``identification/pipeline/``, import cycles).
            parts = module.split(".")
            for i in range(len(parts) - 1, 0, -1):
                if found := self.lookup(f"{'.'.join(parts[:i])}.{target}"):
                    return found
            return None
        return self.lookup(_canonical(obj)) or (
            None
            if isinstance(obj, (str, int, float, bool, type(None)))
            else self.by_identity().get(id(obj))
        )


# ----------------------------------------------------------------------------- rewriting
@dataclass
class Counts:
    links: int = 0
    code: int = 0
    code_width: int = 0
    reflowed: int = 0
    math: int = 0
    examples: int = 0
    literal: int = 0
    log: list[str] = field(default_factory=list)


def convert_roles(
    text: str,
    where: str,
    module: str,
    classes: list[str],
    res: Resolver,
    n: Counts,
    links: bool = True,
) -> str:
    """Each role as a cross reference (rendered target, ``links``) or as code ``name``."""

    def sub(m: re.Match) -> str:
        body = m.group("body").strip()
        titled = _TITLED.match(body)
        if titled:
            title, target = titled.group("title"), titled.group("target").strip()
        else:
            target = body
            title = None
        short = target.startswith("~")
        target = target.lstrip("~")
        shown = title or (target.rsplit(".", 1)[-1] if short else target.lstrip("."))
        path = res.resolve(target, module, classes, m.group("kind"))
        if path is None:
            n.code += 1
            n.log.append(f"{where}: {m.group(0)} -> ``{shown}`` (not rendered)")
            return f"``{shown}``"
        if not links:
            n.code_width += 1
            n.log.append(f"{where}: {m.group(0)} -> ``{shown}`` (summary line too long for a link)")
            return f"``{shown}``"
        n.links += 1
        n.log.append(f"{where}: {m.group(0)} -> [`{shown}`][{path}]")
        return f"[`{shown}`][{path}]"

    return ROLE.sub(sub, text)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def convert_blocks(text: str, where: str, n: Counts) -> str:
    """``.. math::`` -> ``$$`` blocks; ``Example:`` -> ``Examples:``; ``text::`` -> ``text:``."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _MATH.match(line)
        if m:
            ind = m.group("indent")
            first = m.group("rest").strip()
            j = i + 1
            body: list[str] = []
            while j < len(lines):
                nxt = lines[j]
                if nxt.strip() == "":
                    k = j
                    while k < len(lines) and lines[k].strip() == "":
                        k += 1
                    if body or first:  # a blank line after content ends the block...
                        if k >= len(lines) or _indent(lines[k]) <= len(ind):
                            break
                    j = k  # ...unless the directive continues (rst allows blank lines)
                    continue
                if _indent(nxt) <= len(ind):
                    break
                body.append(nxt)
                j += 1
            base = min((_indent(b) for b in body), default=0)
            hang = "    " if first else ""
            math = [ind + first] if first else []
            math += [ind + hang + b[base:].rstrip() for b in body]
            if out and out[-1].strip():
                out.append("")
            out += [ind + "$$", *math, ind + "$$"]
            if j < len(lines) and lines[j].strip():
                out.append("")
            n.math += 1
            n.log.append(f"{where}: .. math:: -> $$ block ({len(math)} lines)")
            i = j
            continue
        nxt_line = next((x for x in lines[i + 1 :] if x.strip()), None)
        more_indented = nxt_line is not None and _indent(nxt_line) > _indent(line)
        # a section header: its first item on the very next line, indented further
        header = i + 1 < len(lines) and lines[i + 1].strip() != "" and more_indented
        lit = _LITERAL.match(line)
        if lit and more_indented and i + 1 < len(lines) and not lines[i + 1].strip():
            line = lit.group("head") + ":"
            n.literal += 1
            n.log.append(f"{where}: literal-block '::' -> ':'")
        ex = _EXAMPLE.match(line)
        if ex and header:
            line = ex.group("indent") + "Examples:"
            n.examples += 1
            n.log.append(f"{where}: Example: -> Examples:")
        out.append(line)
        i += 1
    return "\n".join(out)


def convert_bare_doctests(text: str, where: str, n: Counts) -> str:
    """A ``>>>`` block at the docstring's own indentation, outside any section, goes under an
    ``Examples:`` header (indented two spaces): Markdown shows it as nested quotes otherwise."""
    lines = text.split("\n")
    body = [ln for ln in lines[1:] if ln.strip()]
    if not body:
        return text
    base = min(_indent(ln) for ln in body)
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if i > 0 and line.strip().startswith(">>>") and _indent(line) == base:
            j = i
            while j < len(lines):  # the block: doctest paragraphs, blank lines between them
                if lines[j].strip() == "":
                    k = j
                    while k < len(lines) and lines[k].strip() == "":
                        k += 1
                    if (
                        k < len(lines)
                        and lines[k].strip().startswith(">>>")
                        and _indent(lines[k]) == base
                    ):
                        j = k
                        continue
                    break
                if _indent(lines[j]) < base:
                    break
                j += 1
            if out and out[-1].strip():
                out.append("")
            out.append(" " * base + "Examples:")
            out += [("  " + ln) if ln.strip() else "" for ln in lines[i:j]]
            n.examples += 1
            n.log.append(f"{where}: bare >>> block -> under Examples:")
            i = j
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


_PROTECTED = re.compile(r"\[[^\]\n]*\]\[[^\]\n]*\]\S*|``.*?``\S*|`[^`]*`\S*")
_ITEM = re.compile(r"^\s*(?:[-*+] |\d+\. |[\w*\\]+(?: \([^)]*\))?: |[\w, ]+: )")
_XREF = re.compile(r"\[`[^`\n]+`\]\[[\w.]+\]")


def _break_at(line: str, width: int) -> int | None:
    """Index of the last space before ``width`` outside a link or code span (None: none)."""
    protected = [(m.start(), m.end()) for m in _PROTECTED.finditer(line)]
    start = _indent(line)
    best = None
    for k in range(start + 1, min(len(line), width + 1)):
        if line[k] == " " and line[k - 1] != " " and not any(a < k < b for a, b in protected):
            best = k
    return best


def reflow(text: str, last_extra: int, limit: int, where: str, n: Counts) -> str:
    """Break the lines that cross references made longer than ``limit`` columns.

    A line over the limit that holds a cross reference is cut at its last space outside a link
    or code span; the rest goes to the front of the next line when that line continues the same
    paragraph or item (which may push it over in turn), else onto a new line, indented as the
    item's continuation lines (two more than an ``Args``-style item, a list bullet). The first
    line (the summary) is not cut, nor doctest, code and ``$$`` lines.
    """
    lines = text.split("\n")
    rest_lines = [ln for ln in lines[1:] if ln.strip()]
    base = min((_indent(ln) for ln in rest_lines), default=0)

    def is_item(ln: str) -> bool:  # a list bullet, or ``name: ...`` inside a section
        if re.match(r"^\s*(?:[-*+] |\d+\. )", ln):
            return True
        return _indent(ln) > base and bool(_ITEM.match(ln))

    carried: set[int] = set()
    in_math = False
    i = 1
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped == "$$":
            in_math = not in_math
        extra = last_extra if i == len(lines) - 1 else 0
        too_long = len(line) + extra > limit
        if in_math or stripped.startswith((">>>", "...")) or not too_long:
            i += 1
            continue
        if i not in carried and not _XREF.search(line):
            i += 1
            continue
        k = _break_at(line, limit - extra)
        if k is None:  # a cross reference longer than the line: show its last component
            short = re.sub(r"\[`[\w.]+\.(\w+)`\](\[[\w.]+\])", r"[`\1`]\2", line)
            if short != line:
                lines[i] = short
                n.log.append(f"{where}: line {i + 1}: a cross reference shows its last component")
                continue
            i += 1
            continue
        head, rest = line[:k].rstrip(), line[k + 1 :].lstrip()
        ind = _indent(line)
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        nxt_ind = _indent(nxt)
        item = is_item(line) and i not in carried
        joins = (
            nxt.strip() != ""
            and not nxt.strip().startswith((">>>", "$$", "- ", "* ", "+ "))
            and not re.match(r"^\s*\d+\. ", nxt)
            and (
                (item and nxt_ind > ind)
                or (not item and nxt_ind == ind and not is_item(nxt))
                or (not item and nxt_ind > ind and i in carried)
            )
        )
        if joins:
            lines[i + 1] = " " * nxt_ind + rest + " " + nxt.strip()
        else:
            cont = ind + (2 if item else 0)
            if item and nxt.strip() and nxt_ind > ind:
                cont = nxt_ind
            lines.insert(i + 1, " " * cont + rest)
        lines[i] = head
        carried.add(i + 1)
        n.reflowed += 1
        n.log.append(f"{where}: line {i + 1} of the docstring cut at column {len(head)}")
        i += 1
    return "\n".join(lines)


def _docstring_nodes(tree: ast.Module):
    """(string constant node, enclosing class names) for every string statement."""
    stack: list[tuple[ast.AST, list[str]]] = [(tree, [])]
    while stack:
        node, classes = stack.pop()
        for child in ast.iter_child_nodes(node):
            if (
                isinstance(child, ast.Expr)
                and isinstance(child.value, ast.Constant)
                and isinstance(child.value.value, str)
            ):
                yield child.value, classes
            elif isinstance(child, ast.ClassDef):
                stack.append((child, [*classes, child.name]))
            else:  # functions too: a method's roles resolve in its class
                stack.append((child, classes))


def _offset(line_starts: list[int], lines_b: list[bytes], lineno: int, col_b: int) -> int:
    """Character offset in the file of (1-based line, UTF-8 byte column)."""
    return line_starts[lineno - 1] + len(lines_b[lineno - 1][:col_b].decode("utf-8"))


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def rewrite_file(path: Path, res: Resolver, n: Counts) -> str | None:
    """The file's new text, or None if nothing changes."""
    src = path.read_text(encoding="utf-8")
    tree = ast.parse(src)
    lines = src.split("\n")
    line_starts, pos = [], 0
    for ln in lines:
        line_starts.append(pos)
        pos += len(ln) + 1
    lines_b = [ln.encode("utf-8") for ln in lines]
    module = module_name(path)
    edits = []
    for node, classes in _docstring_nodes(tree):
        assert node.end_lineno is not None and node.end_col_offset is not None
        start = _offset(line_starts, lines_b, node.lineno, node.col_offset)
        end = _offset(line_starts, lines_b, node.end_lineno, node.end_col_offset)
        literal = src[start:end]
        q = _QUOTES.match(literal)
        if not q or not literal.endswith(q.group("q")):
            continue  # implicit concatenation or a bytes literal: left alone
        head = q.end()
        inner = literal[head : len(literal) - len(q.group("q"))]
        where = f"{path.relative_to(ROOT)}:{node.lineno}"
        col = len(src[src.rfind("\n", 0, start) + 1 : start]) + head  # the text's first column
        first, sep, rest = inner.partition("\n")
        trial = Counts()
        first_new = convert_roles(first, where, module, classes, res, trial)
        one_line_extra = 0 if sep else len(q.group("q"))
        if col + len(first_new) + one_line_extra > LIMIT and trial.links:
            # the summary line stays one line: its roles become code
            first_new = convert_roles(first, where, module, classes, res, n, links=False)
        else:
            n.links, n.code = n.links + trial.links, n.code + trial.code
            n.log += trial.log
        new = first_new + sep + convert_roles(rest, where, module, classes, res, n)
        escaped = _ESCAPED_SPACE if "r" in q.group("prefix").lower() else _ESCAPED_SPACE_COOKED
        new, k = escaped.subn("", new)
        if k:
            n.literal += k
            n.log.append(f"{where}: {k} escaped space(s) after a literal removed")
        if len(q.group("q")) == 3:
            new = convert_blocks(new, where, n)
            new = convert_bare_doctests(new, where, n)
        if new != inner and sep:
            new = reflow(new, len(q.group("q")), LIMIT, where, n)
        if new != inner:
            edits.append((start + head, start + head + len(inner), new))
    if not edits:
        return None
    for a, b, new in sorted(edits, reverse=True):
        src = src[:a] + new + src[b:]
    ast.parse(src)  # still Python
    return src


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file would")
    ap.add_argument("--inventory", type=Path, help="objects.inv of a built site (else built now)")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every conversion")
    ap.add_argument("paths", nargs="*", type=Path, help="files to rewrite (default: spatialjax/)")
    args = ap.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    inventory = read_inventory(args.inventory) if args.inventory else build_inventory()
    res = Resolver(inventory)
    n = Counts()
    files = [p.resolve() for p in args.paths] or sorted(PKG.rglob("*.py"))
    changed = []
    for path in files:
        new = rewrite_file(path, res, n)
        if new is not None:
            changed.append(path.relative_to(ROOT))
            if not args.check:
                path.write_text(new, encoding="utf-8")
    if args.verbose:
        print("\n".join(n.log))
    print(
        f"roles -> cross references: {n.links}; roles -> plain code: {n.code} (target not "
        f"rendered) + {n.code_width} (in a summary line a link would make too long); "
        f".. math:: -> $$: {n.math}; Examples: sections: {n.examples}; rst '::' and '\\ ': "
        f"{n.literal}; lines cut: {n.reflowed}; files {'to change' if args.check else 'changed'}: "
        f"{len(changed)}"
    )
    for p in changed:
        print(f"  {p}")
    return 1 if (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
