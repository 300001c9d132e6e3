"""The capture buffer: steps recorded by ``capture_artifact: true``, per tab, at most 100.

A pipeline after-hook (:func:`capture_hook`) turns each successful capturing call into one replay
step with its selector chain and the element's fingerprint (both taken before the call acted, by
:func:`ocnb.perception.selectors.capture_element`) and appends it to the tab's buffer. ``oc_skill_record`` takes the
buffer (and clears it); closing the tab drops it. The buffer is the skills layer's slot of the tab
(:class:`CaptureBuffer`, :func:`capture_buffer`).
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from .._version import __version__
from ..audit.approval import risky_word
from ..browser.tabs import Tab
from ..calls import CallContext
from ..perception.selectors import stored_chain
from ..results import ToolResult

__all__ = [
    "CAPTURING_TOOLS",
    "CaptureBuffer",
    "artifact_for",
    "capture_buffer",
    "capture_hook",
    "is_risky",
    "to_skill_steps",
]

#: Tools that accept ``capture_artifact``.
CAPTURING_TOOLS = ("interact", "form_input", "fill_form", "navigate", "tabs_create")

_ACTION_KIND = {
    "click": "click",
    "double_click": "click",
    "check": "click",
    "uncheck": "click",
    "hover": "click",
    "fill": "fill",
    "type": "fill",
    "press": "press",
    "select": "select",
    "scroll_into_view": "scroll",
}


class CaptureBuffer(deque[dict[str, Any]]):
    """The steps captured on one tab, oldest first, at most :attr:`SIZE` (the skills layer's slot of the tab)."""

    SIZE = 100

    def __init__(self) -> None:
        super().__init__((), self.SIZE)


def capture_buffer(tab: Tab) -> CaptureBuffer:
    """The tab's capture buffer (``oc_skill_record`` reads and clears it)."""
    return tab.slot(CaptureBuffer)


def is_risky(name: str | None, kind: str, words: tuple[str, ...] = ()) -> bool:
    """A step that pays, deletes or sends (its element's name holds a word of the one risky vocabulary,
    :func:`ocnb.audit.approval.risky_word`, plus ``words``, ``Settings.risky_words``)."""
    return kind in ("click", "submit", "press") and risky_word(name, words) is not None


def artifact_for(
    tool: str, args: dict[str, Any], data: dict[str, Any], words: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    """Low-level replay steps for one successful capturing call (several for fill_form); ``words``
    are the person's additions to the risky vocabulary."""
    if tool in ("navigate", "tabs_create"):
        url = data.get("url") or args.get("url")
        return [
            {
                "kind": "navigate",
                "selectors": [],
                "frame_ordinal": 0,
                "args": {"url": args.get("url", url)},
                "risky": False,
            }
        ]
    if tool == "fill_form":
        steps = []
        fields = data.get("fields") or []
        for f in fields:
            chain = stored_chain(f.get("selector_chain"))
            value = f.get("value")
            key = f.get("field") or f.get("key")
            if key is not None and isinstance(args.get("fields"), dict) and key in args["fields"]:
                value = args["fields"][key]  # keep ${SECRET:…} / ${var} placeholders as given
            steps.append(
                {
                    "kind": "select" if f.get("role") in ("combobox", "listbox") else "fill",
                    "selectors": chain,
                    "frame_ordinal": int(f.get("frame_ordinal", 0) or 0),
                    "args": {"action": "form_input", "value": value},
                    "risky": False,
                    "target": {"role": f.get("role"), "name": f.get("name")},
                    **_fingerprint(f),
                }
            )
        return steps
    target = data.get("element") or data.get("target") or {}
    chain = stored_chain(data.get("selector_chain"))
    if tool == "form_input":
        action = "form_input"
        kind = "select" if target.get("role") in ("combobox", "listbox") else "fill"
    else:
        action = args.get("action", "click")
        kind = _ACTION_KIND.get(action, "click")
    step_args: dict[str, Any] = {"action": action}
    for key in ("value", "key"):
        if key in args:
            step_args[key] = args[key]
    name = target.get("name")
    return [
        {
            "kind": kind,
            "selectors": chain,
            "frame_ordinal": int(data.get("frame_ordinal", 0) or 0),
            "args": step_args,
            "risky": is_risky(name, kind, words),
            "target": {"role": target.get("role"), "name": name},
            **_fingerprint(data),
        }
    ]


def _fingerprint(data: dict[str, Any]) -> dict[str, Any]:
    """``{"fingerprint": …}`` when the call captured one (see :func:`ocnb.perception.selectors.capture_element`)."""
    fp = data.get("fingerprint")
    return {"fingerprint": fp} if isinstance(fp, dict) and fp else {}


def capture_hook(call: CallContext, result: ToolResult) -> None:
    """After-hook: append a successful capturing call to its tab's buffer (the buffers live on the tabs)."""
    if not result.ok or call.name not in CAPTURING_TOOLS or not call.args.get("capture_artifact"):
        return
    state = call.session.state
    if state is None:
        return
    data = result.data if isinstance(result.data, dict) else {}
    tab_id = data.get("tab_id") or call.tab_id or state.active_id
    tab = state.tabs.get(tab_id)
    if tab is None:
        return
    args = {k: v for k, v in call.args.items() if k not in ("capture_artifact", "tab_id", "intent")}
    capture_buffer(tab).append(
        {
            "tool": call.name,
            "args": args,
            "intent": call.intent,
            "url": tab.page.url,
            "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "steps": artifact_for(call.name, args, data, call.session.config.risky_words),
        }
    )


def to_skill_steps(buffer: list[dict[str, Any]], *, artifacts: bool = True) -> list[dict[str, Any]]:
    """Captured entries as skill steps, each with its replay artifact (``None`` with replay switched off)."""
    out = []
    for entry in buffer:
        out.append(
            {
                "tool": entry["tool"],
                "args": entry["args"],
                "description": entry.get("intent") or f"{entry['tool']} {entry['args'].get('action', '')}".strip(),
                "replay_artifact": None
                if not artifacts
                else {
                    "schema_version": 2,  # 2: steps carry the element's fingerprint
                    "recorded_at": entry["recorded_at"],
                    "recorder": {"ocnb_version": __version__},
                    "url": entry["url"],
                    "steps": entry["steps"],
                },
            }
        )
    return out
