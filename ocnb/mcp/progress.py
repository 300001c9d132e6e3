"""``notifications/progress`` for one ``tools/call``: the browser thread reports, the server's loop sends, in order."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

__all__ = ["Progress", "progress_token"]

log = logging.getLogger("ocnb.mcp")


def progress_token(ctx: Any) -> Any:
    """The ``progressToken`` a request carries in its ``_meta``, or None (then no progress is sent)."""
    meta = getattr(ctx, "meta", None)
    if isinstance(meta, dict):
        return meta.get("progress_token", meta.get("progressToken"))
    return getattr(meta, "progress_token", None)


class Progress:
    """One call's ``notifications/progress``, sent in order from the browser thread's reports."""

    def __init__(self, peer: Any) -> None:
        self.peer = peer
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue[tuple[float, float | None, str | None] | None] = asyncio.Queue()
        self.task = self.loop.create_task(self._pump())
        self.last = -1.0

    def report(self, done: float, total: float | None, message: str | None) -> None:
        """The :data:`~ocnb.calls.ProgressFn` the call gets (any thread)."""
        with contextlib.suppress(RuntimeError):  # the loop is closed
            self.loop.call_soon_threadsafe(self.queue.put_nowait, (done, total, message))

    async def _pump(self) -> None:
        while (item := await self.queue.get()) is not None:
            await self._send(*item)

    async def _send(self, done: float, total: float | None, message: str | None) -> None:
        if done <= self.last:  # the spec wants progress to increase
            return
        self.last = done
        try:
            await self.peer.report_progress(done, total, message)
        except Exception:  # noqa: BLE001 - progress is a courtesy
            log.debug("could not send progress", exc_info=True)

    async def close(self) -> None:
        """Send what is queued (before the call's result goes out), then stop; a cancelled call sends no more."""
        self.queue.put_nowait(None)
        try:
            await asyncio.wait_for(self.task, 5)
        except BaseException:  # noqa: BLE001 - cancelled (the call was), or a client that stopped reading
            self.task.cancel()
