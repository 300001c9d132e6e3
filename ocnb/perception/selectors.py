"""Selector chains: several ways to find one element again, most robust first.

A chain is a list of entries, each ``{"kind": …}`` plus its data:

- ``role_name`` (``role``, ``name``): the accessible role and name;
- ``accessible_name`` (``name``): the name alone;
- ``css`` (``selector``): ``[data-testid=…]``, ``#id`` or ``tag[name=…]`` — never generated class
  names, and only when it matches exactly one element;
- ``xpath`` (``selector``): positional, anchored at the nearest stable id;
- ``text`` (``text``): the element's visible text.

:func:`resolve_chain` tries the entries in order and takes the first that matches exactly one
element; skill replay builds on it. Entries in the stored form ``{"type", "value"}`` are accepted too.
"""

from __future__ import annotations

from typing import Any

from .refs import call, call_handle, page_refs

__all__ = ["resolve_chain", "selector_chain"]


async def selector_chain(page: Any, element: Any, frame: Any | None = None) -> list[dict[str, Any]]:
    """The selector chain of ``element`` (an ElementHandle in ``frame``, default: main frame)."""
    frame = frame or page.main_frame
    chain = await call(frame, page, {"op": "chain", "el": element})
    if frame is not page.main_frame:
        ordinal = page.frames.index(frame) if frame in page.frames else 0
        for entry in chain:
            entry["frame_ordinal"] = ordinal
    return list(chain)


def _entry(entry: dict[str, Any]) -> dict[str, Any]:
    """Accept both our form (kind/selector/name/text) and the stored form (type/value)."""
    kind = entry.get("kind") or entry.get("type")
    value = entry.get("value")
    out: dict[str, Any] = {"kind": kind}
    if kind == "role_name":
        out["role"], out["name"] = entry.get("role"), entry.get("name", "")
    elif kind == "accessible_name":
        out["name"] = entry.get("name", value)
    elif kind in ("css", "xpath"):
        out["selector"] = entry.get("selector", value)
    elif kind == "text":
        out["text"] = entry.get("text", value)
    return out


async def resolve_chain(page: Any, chain: list[dict[str, Any]]) -> tuple[Any, int | None, int]:
    """``(element, matched_entry_index, attempts)``: the first entry matching exactly one element.

    Each entry is tried in every frame (its recorded frame first); an entry matching several
    elements does not count. ``(None, None, attempts)`` when no entry resolves.
    """
    attempts = 0
    state = page_refs(page)
    for index, raw in enumerate(chain):
        entry = _entry(raw)
        if not entry.get("kind"):
            continue
        attempts += 1
        frames = list(page.frames)
        ordinal = raw.get("frame_ordinal")
        if isinstance(ordinal, int) and 0 <= ordinal < len(frames):
            frames.insert(0, frames.pop(ordinal))
        found: list[Any] = []
        async with state.lock:
            for frame in frames:
                try:
                    n = int(await call(frame, page, {"op": "matchChain", "entry": entry}))
                except Exception:  # noqa: BLE001 - a frame that went away
                    continue
                if n:
                    found.append((frame, n))
            if len(found) == 1 and found[0][1] == 1:
                el = await call_handle(found[0][0], page, {"op": "matchChainEl", "entry": entry})
                if el is not None:
                    return el, index, attempts
    return None, None, attempts
