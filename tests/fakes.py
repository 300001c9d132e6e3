"""The one stand-in for :class:`ocnb.Session` in tests that check the code above a session, not the browser.

It holds what such code reads from a session — its home, settings, registry and extensions — and, for a
test that patches ``dispatch`` (a batch row), the answers each dispatch gives, in order, and whether it was
closed. A test that needs a browser uses a real session (the ``session`` fixture in tests/conftest.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ocnb.calls import Extensions
from ocnb.registry import Registry
from ocnb.results import ToolResult
from ocnb.settings import Settings


class FakeSession:
    """What a tool or a batch row reads from a Session: ``home``, ``settings``, ``registry``, ``extensions``.

    ``replies`` are the results a test's patched ``dispatch`` pops, first one first; ``close()`` only
    records that it happened (``closed``).
    """

    def __init__(self, home: Path | None = None, *, replies: list[ToolResult] | None = None) -> None:
        self.home = home
        self.settings = Settings(home=home) if home is not None else None
        self.registry: Any = Registry()
        self.extensions = Extensions()
        self.replies: list[ToolResult] = [] if replies is None else replies
        self.closed = False

    @property
    def hooks(self) -> list[Any]:
        """The objects installed in ``extensions`` now (a batch row's commit hook while it replays)."""
        return list(self.extensions._items.values())

    def close(self) -> None:
        self.closed = True
