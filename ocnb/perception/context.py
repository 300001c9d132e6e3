"""Telling candidates apart for a person: the row, card or form each sits in, and where it is.

Two buttons named "Delete" read the same in a list of candidates; the text of the row around each
("Invoice 1001 — Acme Corp") and its place on the screenshot do not. :func:`place_candidates` adds
``context`` (the nearest container's own text, without the element's) and ``box`` (its bounding box
in CSS pixels of the viewport, as the screenshot shows it) to each candidate of a hand-off. Nothing
is acted on; a ref that went stale keeps its candidate as it was.
"""

from __future__ import annotations

import contextlib
from typing import Any

from .refs import resolve_ref

__all__ = ["CONTEXT_MAX_CHARS", "place_candidates"]

#: How much of a container's text a candidate's ``context`` keeps.
CONTEXT_MAX_CHARS = 80

#: The container's text around an element: the nearest row, list item, card, fieldset, form or
#: section whose text says more than the element's own, with the element's own text left out.
_CONTEXT_JS = """(el) => {
  const own = (el.innerText || el.value || "").trim();
  const pick = "tr, li, [role=row], [role=listitem], article, fieldset, form, section, .card, [class*=card], [class*=row]";
  let box = el.parentElement ? el.parentElement.closest(pick) : null;
  let text = "";
  while (box) {
    text = (box.innerText || "").replace(own, " ").replace(/\\s+/g, " ").trim();
    if (text) break;
    box = box.parentElement ? box.parentElement.closest(pick) : null;
  }
  if (!text) {
    const prev = el.previousElementSibling;
    text = prev ? (prev.innerText || "").replace(/\\s+/g, " ").trim() : "";
  }
  const r = el.getBoundingClientRect();
  return {context: text, box: {x: r.x, y: r.y, width: r.width, height: r.height}};
}"""


async def place_candidates(page: Any, candidates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of ``candidates`` with ``context`` (unless they have one), ``box`` and ``position`` (1, 2 …)."""
    out: list[dict[str, Any]] = []
    for i, c in enumerate(candidates, 1):
        c = {**c, "position": i}
        ref = c.get("ref")
        if isinstance(ref, str):
            with contextlib.suppress(Exception):  # stale, or its frame went away: keep what we have
                frame, el = await resolve_ref(page, ref)
                seen = await el.evaluate(_CONTEXT_JS)
                if frame is not page.main_frame:  # the screenshot is of the viewport: offset by the frame
                    owner = await frame.frame_element()
                    outer = await owner.bounding_box()
                    if outer:
                        seen["box"]["x"] += outer["x"]
                        seen["box"]["y"] += outer["y"]
                text = str(seen.get("context") or "")
                if not c.get("context") and text:
                    c["context"] = text if len(text) <= CONTEXT_MAX_CHARS else text[: CONTEXT_MAX_CHARS - 1] + "…"
                c["box"] = {k: round(float(v), 1) for k, v in seen["box"].items()}
        out.append(c)
    return out
