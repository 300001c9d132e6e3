"""A long call's progress in the notebook cell: what it waits for and for how long.

A call from ``%oc``, ``%%oc`` or the Python API that takes longer than :data:`SHOW_AFTER_S` shows one
line in its cell (an indeterminate bar, the tool, what it waits for, the seconds so far), updated in
place while the call runs; when the call ends the same output is replaced by one plain line
(``wait_for text='Saved': done after 4.2 s``), so the saved notebook keeps that line and nothing else.
A quicker call shows nothing. Outside a Jupyter kernel, or off the kernel's main thread (a pool's
workers), :func:`cell_progress` gives None and nothing is shown.
"""

from __future__ import annotations

import html
import threading
import time
from collections.abc import Callable
from typing import Any

from ..display import in_jupyter_kernel

__all__ = ["SHOW_AFTER_S", "CellProgress", "cell_progress", "describe"]

#: A call shows its progress once it has run this long, in seconds.
SHOW_AFTER_S = 1.0
#: The arguments that say what a call waits for or acts on (a typed ``value`` is never shown).
_SHOWN = ("text", "selector", "url", "query", "ref", "target", "load_state", "state", "timeout_ms")
_MAX_VALUE = 40
#: The line's look: small and grey, in the code font of the compact result display under it.
_STYLE = "font-family:var(--jp-code-font-family,monospace);font-size:12px;color:var(--jp-ui-font-color2,#666)"


def describe(tool: str, args: dict[str, Any]) -> str:
    """``tool`` and the arguments that say what it waits for: ``wait_for text='Saved' timeout_ms=30000``."""
    parts = [tool]
    for key in _SHOWN:
        value = args.get(key)
        if value is None or isinstance(value, (dict, list)):
            continue
        text = value if isinstance(value, str) else str(value)
        if len(text) > _MAX_VALUE:
            text = text[: _MAX_VALUE - 1] + "…"
        parts.append(f"{key}={text!r}" if isinstance(value, str) else f"{key}={text}")
    return " ".join(parts)


Show = Callable[[dict[str, str]], Any]


class CellProgress:
    """One call's progress line (a :class:`~ocnb.display.Waiting`): shown after ``show_after`` seconds,
    replaced by one line at the end.

    ``show(bundle)`` displays a MIME bundle and returns a handle with ``update(bundle)``; by default
    IPython's ``display(..., raw=True, display_id=True)``.
    """

    def __init__(self, tool: str, args: dict[str, Any], *, show_after: float = SHOW_AFTER_S, show: Show | None = None):
        self.what = describe(tool, args)
        self.show_after = show_after
        self._show = show or _ipython_show
        self._handle: Any = None
        self._shown_at = -1.0
        self._started = time.monotonic()

    @property
    def shown(self) -> bool:
        """Whether the call ran long enough to show its progress."""
        return self._handle is not None

    def tick(self, seconds: float) -> None:
        if seconds < self.show_after:
            return
        step = round(seconds, 1)
        if step - self._shown_at < 0.5:  # a new line twice a second is enough
            return
        self._shown_at = step
        text = f"⏳ {self.what}: {step:.1f} s"
        bar = '<progress style="width:6em;height:0.8em;vertical-align:middle"></progress>'
        body = f"{bar} {html.escape(self.what)}: {step:.1f} s"
        self._put({"text/plain": text, "text/html": f'<div class="ocnb-progress" style="{_STYLE}">{body}</div>'})

    def end(self, ok: bool | None) -> None:
        if self._handle is None:  # a quick call left nothing to replace
            return
        seconds = time.monotonic() - self._started
        word = "interrupted" if ok is None else "done" if ok else "failed"
        text = f"{self.what}: {word} after {seconds:.1f} s"
        self._put(
            {"text/plain": text, "text/html": f'<div class="ocnb-progress" style="{_STYLE}">{html.escape(text)}</div>'}
        )

    def _put(self, bundle: dict[str, str]) -> None:
        if self._handle is None:
            self._handle = self._show(bundle)
        else:
            self._handle.update(bundle, raw=True)


def _ipython_show(bundle: dict[str, str]) -> Any:
    from IPython.display import display

    return display(bundle, raw=True, display_id=True)


def in_kernel() -> bool:
    """True on the main thread of a Jupyter kernel (where a cell's output is shown and saved)."""
    return in_jupyter_kernel() and threading.current_thread() is threading.main_thread()


def cell_progress(tool: str, args: dict[str, Any]) -> CellProgress | None:
    """The progress line of a call made in a Jupyter kernel's cell, or None elsewhere."""
    return CellProgress(tool, args) if in_kernel() else None
