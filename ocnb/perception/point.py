"""The element at a point of the viewport: what a click there lands on, as a ref with its role and name.

:func:`element_at` asks the perception script (``js/find.js``, op ``hitTest``) for the deepest
element at the point, through open shadow roots, and reports its nearest interactive ancestor (the
element itself when none is, with its own role or ``generic``). A point over an ``<iframe>`` is asked
again of that frame, same- or cross-origin. Nothing is acted on; the ref it returns is an ordinary ref
(``interact`` takes it), so a click on a screenshot and an action at a coordinate name the same element
``read_page`` shows.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import InvalidArgument
from .refs import call, frame_ref, page_refs

__all__ = ["Point", "element_at", "parse_point"]

#: How many frames deep a point is followed (as deep as ``read_page`` reads).
MAX_FRAME_DEPTH = 8
_COORD = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(%?)\s*$")

#: ``(x, y, unit)``: CSS pixels of the top-level viewport (``"px"``) or percentages of it (``"%"``).
Point = tuple[float, float, str]


def parse_point(text: str) -> Point:
    """``"640,400"`` (CSS pixels of the viewport) or ``"50%,25%"`` (percentages of it) → ``(x, y, unit)``."""
    coords = [_COORD.match(part) for part in str(text).split(",")]
    if len(coords) != 2 or coords[0] is None or coords[1] is None or coords[0][2] != coords[1][2]:
        raise InvalidArgument(
            f"{text!r} is not a point: give x,y in CSS pixels of the viewport (640,400) or as percentages (50%,25%)",
            details={"selector": text},
        )
    return float(coords[0][1]), float(coords[1][1]), "%" if coords[0][2] else "px"


async def _child(page: Any, frame: Any, frame_id: int) -> Any:
    """The child frame of ``frame`` shown by the ``<iframe>`` whose ref number is ``frame_id``."""
    for kid in frame.child_frames:
        if await frame_ref(page, kid) == frame_id:
            return kid
    return None


async def element_at(page: Any, x: float, y: float, unit: str = "px") -> dict[str, Any] | None:
    """The element a click at (``x``, ``y``) of the viewport lands on, or ``None`` (outside the page).

    Returns ``{ref, role, name, name_source, tag, visible, rect, point, viewport, frame_ordinal}``:
    ``rect`` (``x, y, width, height``) and ``point`` are CSS pixels of the top-level viewport, whose
    size ``viewport`` gives; ``frame_ordinal`` indexes ``page.frames``. ``unit="%"`` reads ``x`` and
    ``y`` as percentages of the viewport. An ``<iframe>`` whose document cannot be read is itself the
    element.
    """
    if unit not in ("px", "%"):
        raise InvalidArgument("a point's unit is px or %", details={"unit": unit})
    state = page_refs(page)
    frame, dx, dy = page.main_frame, 0.0, 0.0
    async with state.lock:
        top = hit = await call(frame, page, {"op": "hitTest", "x": x, "y": y, "unit": unit})
        for _ in range(MAX_FRAME_DEPTH):
            if hit is None or hit.get("frame") is None:
                break
            child = await _child(page, frame, hit["frame"])
            if child is None:
                break
            origin = hit["content"]
            inner = {"op": "hitTest", "x": hit["point"]["x"] - origin["x"], "y": hit["point"]["y"] - origin["y"]}
            try:
                inner_hit = await call(child, page, inner)
            except Exception:  # noqa: BLE001 - a frame that went away: the <iframe> is what is there
                break
            if inner_hit is None:  # the frame's document does not cover that spot: the <iframe> it is
                break
            hit, frame, dx, dy = inner_hit, child, dx + origin["x"], dy + origin["y"]
    if hit is None or top is None:
        return None
    hit.pop("frame", None)
    hit.pop("content", None)
    rect = hit["rect"]
    hit["rect"] = {"x": rect["x"] + dx, "y": rect["y"] + dy, "width": rect["width"], "height": rect["height"]}
    hit["point"], hit["viewport"] = top["point"], top["viewport"]
    hit["frame_ordinal"] = _ordinal(page, frame)
    return hit


def _ordinal(page: Any, frame: Any) -> int:
    try:
        return list(page.frames).index(frame)
    except ValueError:
        return 0
