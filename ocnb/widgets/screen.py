"""ScreenView: the anywidget that shows a page screenshot and reports where it was clicked."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

from .assets import asset

__all__ = ["ScreenView", "png_data_url"]


def png_data_url(data: bytes) -> str:
    """A ``data:image/png;base64,…`` URL for PNG bytes."""
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


class ScreenView(anywidget.AnyWidget):
    """A screenshot (``src``) with an optional outlined box (``highlight``).

    The front end (``widgets/screen.js``) sends ``{"type": "click", "fx", "fy"}`` with the click's
    position as fractions of the image; :meth:`on_click` registers a handler for it. Keys typed while it
    has focus come as ``{"type": "text", "text"}`` (a run of characters) or ``{"type": "key", "key"}``
    (Enter, Backspace, Control+A …); :meth:`on_keys` registers a handler. ``highlight``
    is ``{"x", "y", "w", "h"}`` as fractions of the image plus a ``label`` shown under the box.
    """

    _esm = asset("screen.js")
    _css = asset("screen.css")

    src = traitlets.Unicode("").tag(sync=True)
    highlight = traitlets.Dict({}).tag(sync=True)
    #: Size of the current screenshot in pixels (informational; the front end scales it).
    image_width = traitlets.Int(0).tag(sync=True)
    image_height = traitlets.Int(0).tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._click_handlers: list[Callable[[float, float], Any]] = []
        self._key_handlers: list[Callable[[str, str], Any]] = []
        self.on_msg(self._on_front_end_msg)

    def on_click(self, handler: Callable[[float, float], Any]) -> None:
        """Call ``handler(fx, fy)`` when the screenshot is clicked (fractions in [0, 1])."""
        self._click_handlers.append(handler)

    def click(self, fx: float, fy: float) -> None:
        """Act as if the front end reported a click at (``fx``, ``fy``)."""
        self._handle_custom_msg({"type": "click", "fx": fx, "fy": fy}, [])

    def on_keys(self, handler: Callable[[str, str], Any]) -> None:
        """Call ``handler(kind, value)`` for keys typed on the screen: ``("text", "abc")`` or ``("key", "Enter")``."""
        self._key_handlers.append(handler)

    def _on_front_end_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("type") in ("text", "key"):
            kind = str(content["type"])
            value = content.get("text" if kind == "text" else "key")
            if isinstance(value, str) and value and len(value) <= 10_000:
                for key_handler in list(self._key_handlers):
                    key_handler(kind, value)
            return
        if not isinstance(content, dict) or content.get("type") != "click":
            return
        try:
            fx = min(max(float(content["fx"]), 0.0), 1.0)
            fy = min(max(float(content["fy"]), 0.0), 1.0)
        except (KeyError, TypeError, ValueError):
            return
        for handler in list(self._click_handlers):
            handler(fx, fy)

    def show_png(self, data: bytes, width: int = 0, height: int = 0) -> None:
        """Show PNG bytes."""
        with self.hold_sync():
            self.src = png_data_url(data)
            self.image_width = width
            self.image_height = height
