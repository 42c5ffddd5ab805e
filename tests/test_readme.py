"""Every Python code block of the README runs, as a user would paste it.

Each ```` ```python ```` block is executed in a fresh namespace, in order, in a
temporary working directory (so a block that writes files leaves nothing behind).
A block that raises fails the test with the block's first line in the test id.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _blocks() -> list[tuple[int, str]]:
    text = README.read_text(encoding="utf-8")
    out = []
    for m in _BLOCK.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        out.append((line, m.group(1)))
    return out


BLOCKS = _blocks()


def test_readme_has_python_examples():
    assert len(BLOCKS) >= 3, "the README lost its runnable examples"


@pytest.mark.parametrize(
    "code", [c for _, c in BLOCKS], ids=[f"README.md:{line}" for line, _ in BLOCKS]
)
def test_readme_block_runs(code, tmp_path, monkeypatch, request):
    monkeypatch.chdir(tmp_path)
    line = int(request.node.callspec.id.rsplit(":", 1)[1])
    # pad so that tracebacks point at the README's own line numbers
    exec(compile("\n" * line + code, str(README), "exec"), {"__name__": "__readme__"})
