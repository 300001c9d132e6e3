"""HTML rendering of tool results for notebooks (``text/plain`` is always produced as well).

- a failed call: a compact red box with its code and message (details folded away);
- a page read (``read_page``: data with a ``content`` string): a collapsible outline that follows the
  indentation of the text, with refs highlighted;
- a screenshot (data with a ``.png`` ``path``): the image inline (or its path when
  ``options.inline_images`` is off, e.g. ``%config OcMagics.show_screenshots = False``);
- a discovery result (``results`` with ``relevance``): a ranked table with per-tier token counts;
- an action on an element (data with an ``element``: ``interact``, ``form_input`` …): one line — the
  element acted on and what changed — with the JSON one click away;
- anything else: the data as a folded JSON block.
"""

from __future__ import annotations

import base64
import html
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

__all__ = ["DisplayOptions", "Waiting", "acted_summary", "in_jupyter_kernel", "options", "render_html"]

_MAX_INLINE_IMAGE = 4 * 1024 * 1024
_REF = re.compile(r"\b(ax_\d+)\b")
_BOX = "font-family:var(--jp-code-font-family,monospace);font-size:12px"


class Waiting(Protocol):
    """A long call's progress where a person waits for it (a notebook cell): ``tick`` while the call
    runs, ``end`` once (``ok`` None: interrupted)."""

    def tick(self, seconds: float) -> None: ...
    def end(self, ok: bool | None) -> None: ...


@dataclass
class DisplayOptions:
    """Switches for notebook rendering (the magics' settings write these)."""

    #: Embed screenshots as images (else show their path).
    inline_images: bool = True
    #: Outlines longer than this many lines are shown as one scrollable block, not a tree.
    outline_tree_max_lines: int = 1500
    #: JSON blocks longer than this many lines start folded (their keys stay visible).
    fold_json_over_lines: int = 40
    #: ``progress(tool, args)``: the :class:`Waiting` display of one call made from code or a magic, or
    #: None to show nothing (``import ocnb`` sets the notebook cell's: ``ocnb.widgets.progress``).
    progress: Callable[[str, dict[str, Any]], Waiting | None] | None = None


options = DisplayOptions()


class _Error(Protocol):
    @property
    def code(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def details(self) -> dict[str, Any]: ...


class Renderable(Protocol):
    """What rendering reads of a result: a :class:`~ocnb.results.ToolResult` (which imports this module)."""

    @property
    def ok(self) -> bool: ...
    @property
    def tool(self) -> str: ...
    @property
    def data(self) -> Any: ...
    @property
    def error(self) -> _Error | None: ...


def _esc(value: Any) -> str:
    return html.escape(str(value))


def _error_box(result: Renderable) -> str:
    assert result.error is not None
    details = ""
    if result.error.details:
        details = (
            "<details><summary>details</summary><pre>"
            + _esc(json.dumps(result.error.details, ensure_ascii=False, indent=2, default=str))
            + "</pre></details>"
        )
    return (
        f'<div class="ocnb-error" style="border-left:4px solid #d33;background:#fdecea;color:#611;'
        f'padding:4px 8px;{_BOX}">'
        f"<b>{_esc(result.error.code)}</b> {_esc(result.tool)}: {_esc(result.error.message)}{details}</div>"
    )


def _line_html(text: str) -> str:
    """One outline line, escaped, with refs set off as code."""
    return _REF.sub(r'<code class="ocnb-ref" style="color:#0550ae">\1</code>', _esc(text))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def outline_tree(content: str) -> str:
    """Nested ``<details>`` following the indentation of ``content``; each parent line folds its children."""
    lines = [ln.rstrip() for ln in content.splitlines() if ln.strip()]
    out: list[str] = []
    stack: list[int] = []  # indents of the open <details>
    for i, line in enumerate(lines):
        ind = _indent(line)
        while stack and ind <= stack[-1]:
            stack.pop()
            out.append("</div></details>")
        nxt = _indent(lines[i + 1]) if i + 1 < len(lines) else -1
        pad = f"padding-left:{min(ind, 40) * 0.5}em"
        if nxt > ind:
            out.append(f'<details open><summary style="{pad}">{_line_html(line.strip())}</summary><div>')
            stack.append(ind)
        else:
            out.append(f'<div style="{pad};margin-left:1.1em">{_line_html(line.strip())}</div>')
    out.extend("</div></details>" for _ in stack)
    return "".join(out)


def _outline(content: str, head: dict[str, Any]) -> str:
    title = _esc(head.get("title", ""))
    url = _esc(head.get("url", ""))
    extra = []
    for key, label in (("mode", "mode"), ("ref_count", "refs"), ("tokens", "tokens"), ("truncated", "truncated")):
        if key in head and head[key] not in (None, False):
            extra.append(f"{label}: {_esc(head[key])}")
    meta = f' <span style="color:#666">({", ".join(extra)})</span>' if extra else ""
    n_lines = content.count("\n") + 1
    if n_lines <= options.outline_tree_max_lines:
        body = f'<div style="max-height:32em;overflow:auto;{_BOX}">{outline_tree(content)}</div>'
    else:
        body = f'<pre style="max-height:32em;overflow:auto">{_esc(content)}</pre>'
    return (
        f'<details open class="ocnb-outline"><summary><b>{title}</b> <code>{url}</code>{meta}</summary>{body}</details>'
    )


def _image(path: str, data: dict[str, Any]) -> str:
    p = Path(path)
    caption = f'<div style="color:#666;{_BOX}">{_esc(data.get("url", ""))} <code>{_esc(path)}</code></div>'
    if not options.inline_images or not p.is_file() or p.stat().st_size > _MAX_INLINE_IMAGE:
        return f'<div class="ocnb-screenshot">screenshot {caption}</div>'
    b64 = base64.b64encode(p.read_bytes()).decode()
    return (
        f'<div class="ocnb-screenshot"><img src="data:image/png;base64,{b64}" '
        f'style="max-width:100%;border:1px solid #ccc"/>{caption}</div>'
    )


def _discovery(data: dict[str, Any]) -> str:
    rows = "".join(
        f"<tr><td>{i}</td><td><code>{_esc(r.get('id', r.get('name', '')))}</code></td>"
        f"<td>{_esc(r.get('summary', r.get('description', '')))}</td>"
        f"<td>{float(r.get('relevance', 0)):.3f}</td></tr>"
        for i, r in enumerate(data.get("results", []), 1)
    )
    tokens = data.get("tokens") or {}
    tok = ", ".join(f"{_esc(k)}: {_esc(v)}" for k, v in tokens.items())
    ranker = _esc(data.get("retriever") or "")
    return (
        f'<div class="ocnb-discovery"><b>discover</b> <i>{_esc(data.get("query", ""))}</i>'
        f"{f' <span style=color:#666>(tokens {tok})</span>' if tok else ''}"
        f"{f' <span style=color:#666>ranked by {ranker}</span>' if ranker else ''}"
        "<table><thead><tr><th>#</th><th>capability</th><th>summary</th><th>relevance</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></div>"
    )


def _json_block(result: Renderable) -> str:
    text = json.dumps(result.data, ensure_ascii=False, indent=2, default=str)
    body = f"<pre style='max-height:32em;overflow:auto;{_BOX}'>{_esc(text)}</pre>"
    if isinstance(result.data, dict) and result.data:  # one line of what it holds; the JSON a click away
        head = f'<span style="color:#1a7f37">✓</span> <b>{_esc(result.tool)}</b> {_esc(fields_summary(result.data))}'
        return (
            f'<div class="ocnb-result ocnb-compact" style="{_BOX}">{head} '
            f'<details style="display:inline"><summary style="display:inline;cursor:pointer;color:#666">JSON</summary>'
            f"{body}</details></div>"
        )
    head = f"<b>{_esc(result.tool)}</b> ok"
    if text.count("\n") + 1 > options.fold_json_over_lines:
        head += f' <span style="color:#666;{_BOX}">{_esc(type(result.data).__name__)}</span>'
        return f'<details class="ocnb-result"><summary>{head}</summary>{body}</details>'
    return f'<div class="ocnb-result">{head}{body}</div>'


def fields_summary(data: dict[str, Any], most: int = 5, width: int = 80) -> str:
    """``url http://…/form.html · title “Form” · status 200``: a result's first plain fields in one line.

    Strings are cut at ``width`` characters, a list says how many items it holds, a nested object is
    ``{…}``; after ``most`` fields the rest are counted.
    """
    parts: list[str] = []
    for key, value in data.items():
        if len(parts) == most:
            parts.append(f"+{len(data) - most} more")
            break
        if isinstance(value, str):
            shown = value if len(value) <= width else value[: width - 1] + "…"
            parts.append(f"{key} “{shown}”")
        elif isinstance(value, list):
            parts.append(f"{key} [{len(value)} item{'' if len(value) == 1 else 's'}]")
        elif isinstance(value, dict):
            parts.append(f"{key} {{…}}")
        else:
            parts.append(f"{key} {json.dumps(value, default=str)}")
    return " · ".join(parts)


def acted_summary(data: dict[str, Any]) -> str:
    """``click button “Sign up” (ax_5) → navigated to http://…/thanks``: an action in one line of text."""
    el: dict[str, Any] = data["element"] if isinstance(data.get("element"), dict) else {}
    what = str(data.get("action") or "")
    target = f"{el.get('role') or 'element'} “{el.get('name') or ''}” ({el.get('ref')})"
    changes: dict[str, Any] = data["changes"] if isinstance(data.get("changes"), dict) else {}
    told = []
    if changes.get("navigated"):
        told.append(f"navigated to {changes.get('url') or 'a new page'}")
    elif changes.get("dom_changed"):
        told.append("the page changed")
    if changes.get("new_tab"):
        tab = changes["new_tab"]
        told.append(f"opened tab {tab.get('tab_id') if isinstance(tab, dict) else tab}")
    for d in changes.get("dialogs") or []:
        told.append(f"{d.get('type')} dialog {d.get('action') or ''}".strip())
    if changes.get("downloads"):
        told.append(f"{len(changes['downloads'])} download(s)")
    if "value" in data and not isinstance(data["value"], dict | list):
        told.append(f"value {data['value']!r}")
    if not told and what in ("click", "dblclick", "hover", "press"):  # a value set is its own change
        told.append("no visible change")
    return f"{what} {target}".strip() + (" → " + ", ".join(told) if told else "")


def _acted(result: Renderable, data: dict[str, Any]) -> str:
    text = json.dumps(data, ensure_ascii=False, indent=2, default=str)
    head = f'<span style="color:#1a7f37">✓</span> <b>{_esc(result.tool)}</b> {_esc(acted_summary(data))}'
    body = f"<pre style='max-height:32em;overflow:auto;{_BOX}'>{_esc(text)}</pre>"
    return (
        f'<div class="ocnb-result ocnb-acted" style="{_BOX}">{head} '
        f'<details style="display:inline"><summary style="display:inline;cursor:pointer;color:#666">JSON</summary>'
        f"{body}</details></div>"
    )


def render_html(result: Renderable) -> str:
    """Render a :class:`~ocnb.results.ToolResult` as compact HTML: error box, outline, image, ranking, or JSON."""
    if not result.ok:
        return _error_box(result)
    data = result.data
    if isinstance(data, dict):
        if isinstance(data.get("content"), str):
            return _outline(data["content"], data)
        if isinstance(data.get("path"), str) and data["path"].endswith(".png"):
            return _image(data["path"], data)
        results = data.get("results")
        if isinstance(results, list) and all(isinstance(r, dict) and "relevance" in r for r in results):
            return _discovery(data)
        if isinstance(data.get("element"), dict) and "ref" in data["element"]:
            return _acted(result, data)
    return _json_block(result)


def in_jupyter_kernel() -> bool:
    """True in a Jupyter kernel, whose cells' output is shown there and saved in the ``.ipynb``."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None  # type: ignore[attr-defined]
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"
