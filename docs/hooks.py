"""MkDocs hooks: pages that quote the package's own text instead of a copy of it.

`<!-- identify-report-schema -->` in a page is replaced by the report schema of
``spatialjax identify``, read from the module docstring of ``spatialjax/_cli/identify.py``
(the paragraph that starts "The report" and its list), with reStructuredText roles and
literals turned into Markdown code. One source: the docstring that documents the command.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

_MARKER = "<!-- identify-report-schema -->"
_SOURCE = Path(__file__).resolve().parents[1] / "spatialjax" / "_cli" / "identify.py"


def report_schema() -> str:
    """The report section of the identify command's module docstring, as Markdown."""
    doc = ast.get_docstring(ast.parse(_SOURCE.read_text(encoding="utf-8")), clean=True) or ""
    paragraphs = doc.split("\n\n")
    start = next((i for i, p in enumerate(paragraphs) if p.startswith("The report")), None)
    if start is None:
        raise ValueError(f"{_SOURCE}: no paragraph starting 'The report' in the module docstring")
    section = "\n\n".join(paragraphs[start : start + 2])
    section = re.sub(r":\w+:`~?([^`]+)`", r"``\1``", section)  # :func:`x` -> ``x``
    return section.replace("``", "`")


def on_page_markdown(markdown: str, **kwargs) -> str:
    if _MARKER in markdown:
        markdown = markdown.replace(_MARKER, report_schema())
    return markdown
