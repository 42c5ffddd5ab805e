"""Every Python block of the README and of the documentation pages runs, as a user would paste it.

Each ```` ```python ```` block is executed in a fresh namespace, in a temporary working directory
(so a block that writes files leaves nothing behind). A block that raises fails the test with
its file and first line in the test id. A docs block identical to a README block runs once.
The blocks of the identification pages each compile a fit: they are `slow` (the README's tour,
which identifies a robot too, stays in the quick tests).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import ROOT

README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
SLOW_PAGES = {"identification.md", "identification-python.md"}
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _blocks(path: Path) -> list[tuple[int, str]]:
    text = path.read_text(encoding="utf-8")
    out = []
    for m in _BLOCK.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        out.append((line, m.group(1)))
    return out


README_BLOCKS = _blocks(README)
_seen = {code for _, code in README_BLOCKS}
BLOCKS = [(README, line, code) for line, code in README_BLOCKS]
for _page in DOCS:
    for _line, _code in _blocks(_page):
        if _code not in _seen:
            _seen.add(_code)
            BLOCKS.append((_page, _line, _code))


def test_readme_has_python_examples():
    assert len(README_BLOCKS) >= 1, "the README lost its runnable tour"
    assert len(BLOCKS) >= len(README_BLOCKS) + 5, "the documentation pages lost their examples"


@pytest.mark.parametrize(
    ("path", "line", "code"),
    [
        pytest.param(
            path,
            line,
            code,
            id=f"{path.relative_to(ROOT)}:{line}",
            marks=pytest.mark.slow if path.name in SLOW_PAGES else (),
        )
        for path, line, code in BLOCKS
    ],
)
def test_block_runs(path, line, code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # pad so that tracebacks point at the page's own line numbers
    exec(compile("\n" * line + code, str(path), "exec"), {"__name__": "__readme__"})
