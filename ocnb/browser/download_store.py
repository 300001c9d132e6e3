"""Downloads: every file a page downloads is kept under ``OCNB_HOME/downloads/`` — or refused.

The browser layer hands each Playwright ``download`` to :meth:`Downloads.start`; saving runs in the
background on the browser loop, so a download never blocks or breaks the call (or the MCP connection)
that caused it. The name the page suggests is never trusted (:func:`safe_filename`: no folders, no
``..``, no control characters); a name already taken gets ``-2``, ``-3``… A download larger than
``Settings.download_max_bytes`` is refused: cancelled at once when its ``Content-Length`` says so,
else deleted once finished; either way it is listed with ``state: "refused"`` and a reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import re
import time
import unicodedata
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..files import PRIVATE_FILE, private_dir

__all__ = ["DOWNLOADS_DIR", "DownloadRecord", "Downloads", "safe_filename"]

#: The folder under ``OCNB_HOME`` that holds downloaded files.
DOWNLOADS_DIR = "downloads"
MAX_NAME = 120
#: How long a call's ``changes`` wait for a download it started to finish.
SETTLE_S = 10.0
_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]+')
_DOTS = re.compile(r"\.{2,}")


def safe_filename(name: str | None) -> str:
    """A file name that stays in its folder: path separators, control and reserved characters become
    ``_``, runs of dots one dot, no leading dot or space, at most :data:`MAX_NAME` characters (the
    extension kept); ``download`` when nothing is left."""
    text = unicodedata.normalize("NFC", name or "")
    text = "".join("_" if unicodedata.category(c).startswith("C") else c for c in text)
    text = _DOTS.sub(".", _UNSAFE.sub("_", text)).strip(" .")
    if len(text) > MAX_NAME:
        stem, dot, ext = text.rpartition(".")
        ext = ext[:16] if dot and stem else ""
        text = (text if not ext else stem)[: MAX_NAME - len(ext) - 1].rstrip(" .") + (f".{ext}" if ext else "")
    return text or "download"


@dataclass
class DownloadRecord:
    """One download: ``state`` is ``saving``, ``saved``, ``refused`` or ``failed``."""

    id: str
    ts: float
    tab_id: str
    url: str
    suggested: str
    state: str = "saving"
    name: str | None = None
    path: str | None = None
    bytes: int | None = None
    reason: str | None = None

    def describe(self) -> dict[str, Any]:
        """The record as results show it (``None`` fields left out; ``suggested`` only when it differs)."""
        out = {k: v for k, v in asdict(self).items() if v is not None and k != "ts"}
        if self.name == self.suggested:
            out.pop("suggested", None)
        return out


class Downloads:
    """The downloads of one browser: where they go, the size limit, and the last 200 records."""

    def __init__(
        self, folder: Path, max_bytes: int, on_event: Callable[[str, dict[str, Any]], None] | None = None
    ) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        self.on_event = on_event or (lambda kind, body: None)
        self.records: deque[DownloadRecord] = deque(maxlen=200)
        self._tasks: dict[str, asyncio.Future[Any]] = {}
        self._ids = itertools.count(1)

    def start(self, tab_id: str, download: Any, request: Any = None) -> DownloadRecord:
        """Take over a Playwright download (on the browser loop); saving goes on in the background.

        ``request`` is the tab's record of the download's request when there is one (an http(s) URL):
        its response headers (``response_headers``, once ``status`` is set) may announce the size.
        """
        suggested = ""
        with contextlib.suppress(Exception):
            suggested = str(download.suggested_filename)
        rec = DownloadRecord(
            id=f"d{next(self._ids)}", ts=time.time(), tab_id=tab_id, url=str(download.url), suggested=suggested
        )
        self.records.append(rec)
        task = asyncio.ensure_future(self._save(rec, download, request))
        self._tasks[rec.id] = task
        task.add_done_callback(self._done)
        return rec

    def _done(self, task: asyncio.Future[Any]) -> None:
        self._tasks = {k: t for k, t in self._tasks.items() if t is not task}
        if not task.cancelled():
            task.exception()  # retrieved: _save reports its own failures

    async def _save(self, rec: DownloadRecord, download: Any, request: Any) -> None:
        try:
            announced = await _announced_size(request)
            if announced is not None and announced > self.max_bytes:
                rec.bytes = announced
                self._refuse(rec, f"{announced} bytes announced, over the limit of {self.max_bytes}")
                with contextlib.suppress(Exception):
                    await download.cancel()
                return
            folder = private_dir(self.folder)
            part = folder / f".{rec.id}-{os.getpid()}-{int(rec.ts * 1000)}.part"
            try:
                await download.save_as(part)
                size = part.stat().st_size
                if size > self.max_bytes:
                    rec.bytes = size
                    self._refuse(rec, f"{size} bytes, over the limit of {self.max_bytes}")
                    return
                final = _claim(folder, safe_filename(rec.suggested), part)
                os.chmod(final, PRIVATE_FILE)
                rec.name, rec.path, rec.bytes, rec.state = final.name, str(final), size, "saved"
            finally:
                with contextlib.suppress(OSError):
                    part.unlink()
        except Exception as exc:  # noqa: BLE001 - a failed download is a record, never a broken session
            if rec.state == "saving":
                rec.state, rec.reason = "failed", (str(exc).splitlines() or ["failed"])[0][:200]
        finally:
            with contextlib.suppress(Exception):
                await download.delete()  # Playwright's own temporary copy
        self.on_event("download_done", {"id": rec.id, "tab_id": rec.tab_id, **_event(rec)})

    def _refuse(self, rec: DownloadRecord, reason: str) -> None:
        rec.state, rec.reason = "refused", reason

    def describe(self) -> list[dict[str, Any]]:
        """Every kept record, oldest first."""
        return [r.describe() for r in self.records]

    async def since(self, ts: float, wait_s: float = SETTLE_S, *, expect: bool = False) -> list[dict[str, Any]]:
        """Downloads that began at or after ``ts``, waiting up to ``wait_s`` for those still saving
        (``expect``: one is known to be starting; wait up to 2 s for its event too)."""
        deadline = time.monotonic() + 2.0
        while expect and not any(r.ts >= ts for r in self.records) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        recent = [r for r in self.records if r.ts >= ts]
        pending = [self._tasks[r.id] for r in recent if r.id in self._tasks]
        if pending:
            await asyncio.wait(pending, timeout=wait_s)
        return [r.describe() for r in recent]


async def _announced_size(request: Any, wait_s: float = 1.0) -> int | None:
    """The ``Content-Length`` of a download's response, waiting up to ``wait_s`` for its headers."""
    if request is None:
        return None
    deadline = time.monotonic() + wait_s
    while getattr(request, "status", None) is None and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    value = str((getattr(request, "response_headers", None) or {}).get("content-length", "")).strip()
    return int(value) if value.isdigit() else None


def _event(rec: DownloadRecord) -> dict[str, Any]:
    return {k: v for k, v in (("state", rec.state), ("name", rec.name), ("bytes", rec.bytes)) if v is not None}


def _claim(folder: Path, name: str, source: Path) -> Path:
    """Link ``source`` into ``folder`` under ``name``, or ``stem-2.ext``… if taken; never overwrites."""
    stem, dot, ext = name.rpartition(".")
    if not stem:
        stem, dot, ext = name, "", ""
    for n in range(1, 10_000):
        candidate = folder / (name if n == 1 else f"{stem}-{n}{dot}{ext}")
        try:
            os.link(source, candidate)
        except FileExistsError:
            continue
        except OSError:  # no hard links here: the same, less strictly
            if candidate.exists():
                continue
            os.replace(source, candidate)
        return candidate
    raise FileExistsError(f"no free name for {name} in {folder}")
