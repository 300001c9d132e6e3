"""What a scripted solver of ``bench_agent_tasks`` sees: a tool result's page outline, parsed.

Both servers answer with an ARIA outline in the same YAML-like shape (``- role "name" [ref] …``);
only the ref syntax differs (``[ax_12]`` for ocnb, ``[ref=e12]`` for Playwright MCP). This module reads
either into :class:`Node` objects, so that one solver finds its targets by role, name and text the same
way on both servers. It knows nothing of the DOM: what the outline does not show, a solver cannot use.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

_REF = re.compile(r"\[ref=([^\]\s]+)\]|\[(ax_\d+)\]")
_FLAG = re.compile(r"\[([a-z]+)(?:=([^\]]*))?\]")
_NAME = re.compile(r'^"((?:[^"\\]|\\.)*)"')
_VALUE = re.compile(r'value="((?:[^"\\]|\\.)*)"')
#: ocnb's inline control inside running text: ``see [the docs](ax_9 → /docs) now``.
_INLINE = re.compile(r"\[((?:[^\[\]\\]|\\.)*)\]\((ax_\d+)[^)]*\)")
_WORD_FLAGS = (
    "checked", "selected", "expanded", "collapsed", "disabled", "readonly", "pressed", "multiline", "haspopup", "required",
)  # fmt: skip


def norm(text: str) -> str:
    """Compare texts by their words, case aside."""
    return " ".join(text.lower().split())


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        inner = text[1:-1]
        return inner.replace('\\"', '"').replace("''", "'") if text[0] == '"' else inner.replace("''", "'")
    return text


@dataclass
class Node:
    """One line of the outline: a role with its name, ref, state flags and text, or a plain text line."""

    indent: int
    role: str
    name: str = ""
    ref: str | None = None
    text: str = ""
    value: str = ""
    flags: set[str] = field(default_factory=set)
    parent: Node | None = None
    children: list[Node] = field(default_factory=list)
    index: int = 0

    @property
    def label(self) -> str:
        """The name, else the text after the colon (a plain line's text)."""
        return self.name or self.text

    def walk(self) -> Iterator[Node]:
        yield self
        for c in self.children:
            yield from c.walk()

    def all_text(self) -> str:
        """Every name and text in this subtree, in order."""
        return " ".join(x for n in self.walk() for x in (n.name, n.text) if x)

    def acting_ref(self) -> str | None:
        """This node's ref, else the nearest ancestor's (a text inside a clickable row)."""
        node: Node | None = self
        while node is not None:
            if node.ref:
                return node.ref
            node = node.parent
        return None

    def state(self) -> str:
        """What the field holds: the value shown (ocnb's ``value=…``, Playwright MCP's ``: text``)."""
        return self.value or (self.text if self.role in ("textbox", "combobox", "spinbutton", "slider") else "")


class Outline:
    """A parsed tool result: every outline line as a :class:`Node`, in document order."""

    def __init__(self, text: str) -> None:
        self.raw = text
        self.nodes: list[Node] = []
        m = re.search(r"```yaml\n(.*?)```", text, re.S)
        body = m.group(1) if m else text
        stack: list[Node] = []
        for line in body.splitlines():
            if not line.strip() or line.lstrip().startswith(("{", "###", "```")):
                continue
            node = self._parse(line)
            if node is None:
                continue
            while stack and stack[-1].indent >= node.indent:
                stack.pop()
            if stack:
                node.parent = stack[-1]
                stack[-1].children.append(node)
            node.index = len(self.nodes)
            self.nodes.append(node)
            stack.append(node)
            self._inline(node)

    def _inline(self, node: Node) -> None:
        """ocnb's links inside a text line (``… [In](ax_226) cursus …``) as link nodes beneath it;
        the line's text keeps their words (Playwright MCP puts each link on a line of its own)."""
        if "](ax_" not in node.text:
            return
        for m in _INLINE.finditer(node.text):
            name = re.sub(r"\\(.)", r"\1", m.group(1))
            link = Node(node.indent + 1, "link", name=name, ref=m.group(2), parent=node, index=len(self.nodes))
            node.children.append(link)
            self.nodes.append(link)
        node.text = " ".join(_INLINE.sub(lambda m: re.sub(r"\\(.)", r"\1", m.group(1)), node.text).split())

    @staticmethod
    def _parse(line: str) -> Node | None:
        indent = len(line) - len(line.lstrip())
        body = line.strip()
        if not body.startswith("- "):
            return Node(indent, "text", text=body)  # a plain text line (ocnb)
        body = _unquote(body[2:])
        if body.startswith("/url:"):
            return None
        head, sep, tail = body, "", ""
        # the trailing ": text" (outside quotes and brackets)
        depth, quote = 0, False
        for i, ch in enumerate(body):
            if ch == '"' and (i == 0 or body[i - 1] != "\\"):
                quote = not quote
            elif not quote and ch == "[":
                depth += 1
            elif not quote and ch == "]":
                depth -= 1
            elif not quote and depth == 0 and ch == ":" and (i + 1 == len(body) or body[i + 1] == " "):
                head, sep, tail = body[:i], ":", body[i + 1 :]
                break
        role, _, rest = head.partition(" ")
        node = Node(indent, role)
        m = _NAME.match(rest.strip())
        if m:
            node.name = m.group(1).replace('\\"', '"')
            rest = rest.strip()[m.end() :]
        r = _REF.search(rest)
        if r:
            node.ref = r.group(1) or r.group(2)
        v = _VALUE.search(rest)
        if v:
            node.value = v.group(1).replace('\\"', '"')
            rest = rest[: v.start()] + rest[v.end() :]
        for f in _FLAG.finditer(rest):
            if not f.group(1).startswith("ax"):
                node.flags.add(f.group(1))
        words = _FLAG.sub(" ", rest).split()
        node.flags.update(w for w in words if w in _WORD_FLAGS)
        if sep:
            node.text = _unquote(tail)
        if role == "text" and not node.name:
            node.text = node.text or _unquote(rest)
        return node

    # -- finding things ---------------------------------------------------------------------------
    def find_all(
        self, role: str | None = None, name: str | None = None, pred: Callable[[Node], bool] | None = None
    ) -> list[Node]:
        out = []
        for n in self.nodes:
            if role is not None and n.role != role:
                continue
            if name is not None and norm(n.name) != norm(name):
                continue
            if pred is not None and not pred(n):
                continue
            out.append(n)
        return out

    def first(
        self, role: str | None = None, name: str | None = None, pred: Callable[[Node], bool] | None = None
    ) -> Node | None:
        found = self.find_all(role, name, pred)
        return found[0] if found else None

    def with_label(self, text: str, *, contains: bool = False) -> list[Node]:
        """Nodes whose name or text is ``text`` (or contains it)."""
        want = norm(text)
        return [n for n in self.nodes if (want in norm(n.label) if contains else norm(n.label) == want) and n.label]

    def ref_for(self, text: str, *, contains: bool = False) -> str | None:
        """A ref to act on the element showing ``text``: its own, else its nearest ancestor's."""
        for n in self.with_label(text, contains=contains):
            ref = n.acting_ref()
            if ref:
                return ref
        return None

    def after(self, node: Node) -> list[Node]:
        return self.nodes[node.index + 1 :]

    def texts(self) -> list[str]:
        return [n.label for n in self.nodes if n.label]
