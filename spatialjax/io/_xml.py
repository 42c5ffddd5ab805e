"""A position-recording XML tree and byte-level splicing, for ``spatialjax check --fix``.

``XNode`` records where every element and attribute value lies in the original
bytes, so that one ``<inertial>`` can be rewritten and every other byte kept.
"""

from __future__ import annotations

import dataclasses
import xml.parsers.expat
from collections.abc import Iterator

from ._common import ModelFileError

Edit = tuple  # (start, end, replacement bytes)


@dataclasses.dataclass(eq=False)
class XNode:
    """An XML element with the byte spans it occupies in the source.

    Attributes:
      tag: element name as written (namespace prefix kept).
      attrib: attribute values (entities decoded).
      children: child elements in document order.
      parent: enclosing element (``None`` for the root).
      line: 1-based line of the start tag.
      start: byte offset of ``<`` of the start tag.
      head_end: byte offset just past the ``>`` of the start tag.
      inner_end: byte offset of ``</`` of the end tag (``None`` for ``<a/>``).
      end: byte offset just past the whole element.
      attr_spans: attribute name -> ``(start, end, name_start)``: byte span of
        its raw value (between the quotes) and the offset of its name.
      text: character data directly inside the element (children excluded).
    """

    tag: str
    attrib: dict
    parent: XNode | None
    line: int
    start: int
    head_end: int = -1
    inner_end: int | None = None
    end: int = -1
    attr_spans: dict = dataclasses.field(default_factory=dict)
    children: list = dataclasses.field(default_factory=list)
    text: str = ""

    def find(self, tag: str) -> XNode | None:
        """First direct child with this tag."""
        for c in self.children:
            if c.tag == tag:
                return c
        return None

    def findall(self, tag: str) -> list[XNode]:
        """All direct children with this tag."""
        return [c for c in self.children if c.tag == tag]

    def iter(self, tag: str | None = None) -> Iterator[XNode]:
        """This element and its descendants in document (pre-)order."""
        stack = [self]
        while stack:
            node = stack.pop()
            if tag is None or node.tag == tag:
                yield node
            stack.extend(reversed(node.children))

    @property
    def self_closing(self) -> bool:
        return self.inner_end is None

    def text_span(self) -> tuple[int, int] | None:
        """Byte span of the stripped text content (``None`` for ``<a/>``)."""
        if self.inner_end is None:
            return None
        return (self.head_end, self.inner_end)


_WS = b" \t\r\n"


def _scan_head(data: bytes, pos: int) -> tuple[int, dict, bool]:
    """Scan a start tag at ``data[pos] == '<'``: end offset, attribute value spans, ``<a/>``?"""
    n = len(data)
    i = pos + 1
    while i < n and data[i] not in _WS and data[i] not in b"/>":
        i += 1
    spans = {}
    while i < n:
        while i < n and data[i] in _WS:
            i += 1
        if i >= n:
            break
        c = data[i]
        if c == ord(">"):
            return i + 1, spans, False
        if c == ord("/") and i + 1 < n and data[i + 1] == ord(">"):
            return i + 2, spans, True
        j = i
        while j < n and data[j] not in _WS and data[j] not in b"=/>":
            j += 1
        name = data[i:j].decode("utf-8", "replace")
        while j < n and data[j] in _WS:
            j += 1
        if j >= n or data[j] != ord("="):
            raise ValueError(f"malformed attribute {name!r} at byte {i}")
        j += 1
        while j < n and data[j] in _WS:
            j += 1
        quote = data[j]
        k = data.index(bytes([quote]), j + 1)
        spans[name] = (j + 1, k, i)
        i = k + 1
    raise ValueError(f"unterminated start tag at byte {pos}")


def parse_xml(data: bytes, path) -> XNode:
    """Parse XML bytes into an ``XNode`` tree with byte positions.

    Raises:
      ModelFileError: the file is not well-formed XML (with expat's line and
        message), has an element produced by an entity expansion (whose bytes
        cannot be located for ``--fix``), or uses a non ASCII-compatible encoding (UTF-16/32), whose
        byte offsets could not be spliced safely.
    """
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or data[:4] in (b"\x00\x00\xfe\xff",):
        raise ModelFileError(path, "UTF-16/UTF-32 encoded files are not supported; use UTF-8")
    parser = xml.parsers.expat.ParserCreate()
    parser.buffer_text = True
    stack: list[XNode] = []
    root: list[XNode] = []

    def start(tag, attrs):
        pos = parser.CurrentByteIndex
        if data[pos : pos + 1] != b"<":
            # expat reports an element that an internal entity expanded to at the reference
            raise ModelFileError(
                path,
                f"element <{tag}> comes from the expansion of an XML entity (&name;); entities "
                "that expand to markup are not supported: write the element out",
                line=parser.CurrentLineNumber,
            )
        node = XNode(tag, dict(attrs), stack[-1] if stack else None, parser.CurrentLineNumber, pos)
        try:
            node.head_end, node.attr_spans, closed = _scan_head(data, pos)
        except ValueError as e:
            raise ModelFileError(
                path, f"cannot locate <{tag}> in the file: {e}", line=node.line
            ) from None
        if set(node.attr_spans) != set(attrs):
            raise ModelFileError(
                path,
                f"the attributes of <{tag}> differ from the file's bytes (a default attribute "
                "declared in a DTD?); not supported",
                line=node.line,
            )
        if closed:
            node.end = node.head_end
        if stack:
            stack[-1].children.append(node)
        else:
            root.append(node)
        stack.append(node)

    def end(tag):
        node = stack.pop()
        if node.end < 0:  # not <a/>: the handler fires at '</'
            pos = parser.CurrentByteIndex
            node.inner_end = pos
            node.end = data.index(b">", pos) + 1

    def chars(text):
        if stack:
            stack[-1].text += text

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    try:
        parser.Parse(data, True)
    except xml.parsers.expat.ExpatError as e:
        raise ModelFileError(
            path, f"not well-formed XML: {xml.parsers.expat.ErrorString(e.code)}", line=e.lineno
        ) from None
    return root[0]


# --------------------------------------------------------------------------- splicing


def attr_value_edit(node: XNode, name: str, text: str) -> Edit:
    """Replace the raw value of attribute ``name`` (between its quotes)."""
    s, e, _ = node.attr_spans[name]
    return (s, e, text.encode("utf-8"))


def attr_insert_edit(node: XNode, name: str, text: str) -> Edit:
    """Add ``name="text"`` at the end of the start tag."""
    return attrs_insert_edit(node, [(name, text)])


def attrs_insert_edit(node: XNode, pairs) -> Edit:
    """Add ``name="text"`` for each ``(name, text)`` of ``pairs``, in order, at the end of the
    start tag (one edit: edits at one position would splice in reverse order)."""
    pos = node.head_end - (2 if node.self_closing else 1)
    return (pos, pos, "".join(f' {name}="{text}"' for name, text in pairs).encode())


def scalar_attribute_edits(node: XNode, changes) -> list[Edit]:
    """Edits writing scalar attributes of ``node``: ``changes`` is ``[(name, old, new)]``.

    An attribute the element has keeps its text where the number is unchanged and is
    rewritten otherwise (a vector's first token; the others kept). One it lacks (its value
    ``old`` comes from a default class or the format's default) is added, in order, when
    ``new != old``.
    """
    from ._common import format_number, updated_vector_text

    edits: list[Edit] = []
    inserts = []
    for name, old, new in changes:
        if name in node.attrib:
            tokens = node.attrib[name].split()
            text = updated_vector_text(tokens[0] if tokens else None, [old], [new])
            if text is not None:
                edits.append(attr_value_edit(node, name, " ".join([text] + tokens[1:])))
        elif new != old:
            inserts.append((name, format_number(new)))
    if inserts:
        edits.append(attrs_insert_edit(node, inserts))
    return edits


def attr_rename_edit(node: XNode, old: str, new: str, text: str) -> Edit:
    """Replace attribute ``old="..."`` by ``new="text"`` in place."""
    _, e, n0 = node.attr_spans[old]
    return (n0, e + 1, f'{new}="{text}"'.encode())


def text_edit(node: XNode, data: bytes, text: str) -> Edit:
    """Replace an element's text, keeping the whitespace around it."""
    span = node.text_span()
    if span is None:  # <a/>: nothing to replace (readers only edit elements with text)
        raise ValueError(f"text_edit: <{node.tag}> on line {node.line} is self-closing")
    s, e = span
    inner = data[s:e]
    if b"<" in inner:  # a comment or CDATA inside: replace the whole content
        return (s, e, text.encode("utf-8"))
    stripped = inner.strip()
    if not stripped:
        return (s, e, text.encode("utf-8"))
    lead = inner.index(stripped)
    return (s + lead, s + lead + len(stripped), text.encode("utf-8"))


def insert_child_edit(node: XNode, data: bytes, xml_text: str) -> Edit:
    """Insert ``xml_text`` as the first child, on its own line when the file uses lines."""
    pos = node.head_end
    nxt = node.children[0].start if node.children else node.inner_end
    between = data[pos:nxt] if nxt is not None else b""
    if b"\n" in between:
        indent = between[between.rindex(b"\n") + 1 :]
        indent = indent if indent.strip() == b"" else b""
        return (pos, pos, b"\n" + indent + xml_text.encode("utf-8"))
    return (pos, pos, xml_text.encode("utf-8"))


def apply_edits(data: bytes, edits) -> bytes:
    """Splice non-overlapping ``(start, end, replacement)`` edits into ``data``."""
    out = data
    last = None
    for s, e, rep in sorted(edits, key=lambda t: (t[0], t[1]), reverse=True):
        if last is not None and e > last:
            raise ValueError("overlapping edits")
        out = out[:s] + rep + out[e:]
        last = s
    return out
