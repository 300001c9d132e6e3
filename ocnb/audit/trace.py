"""The trace: every event of one session, in order, under ``OCNB_HOME/traces/<session_id>/``.

The folder holds ``meta.json`` (written atomically at start, at each rotation and at close:
session id, started, ended, status ``running|closed|crashed``, bytes, files, pid — a ``running``
trace whose pid is gone was left by a crash) and ``events-0001.jsonl``, ``events-0002.jsonl``, … A file is
rotated when the next line would pass ``max_file_bytes``; the oldest files are deleted once the
folder passes ``max_total_bytes``. Each event is one ``write()`` of a whole line, so a writer killed
at any moment leaves at worst one trailing partial line, which :func:`read_events` skips.

A :class:`TraceEvent` line has the keys ``ts seq kind tool body`` in this order, plus ``intent``
only when one was given (absent, never null or empty).
"""

from __future__ import annotations

import itertools
import os
import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ocnb.audit.jsonl import Clock, dumps_line, iso_ms, iter_jsonl, loads, utc_now
from ocnb.audit.sanitize import sanitize_args
from ocnb.audit.secrets import SecretStore
from ocnb.files import atomic_write_json, open_append, private_dir, read_json

__all__ = [
    "EVENT_KINDS",
    "TraceEvent",
    "TraceWriter",
    "event_files",
    "read_events",
    "read_meta",
    "trace_dir",
]

#: The kinds ocnb itself emits; other kinds (identifiers) are accepted too.
EVENT_KINDS = (
    "tool_call",
    "tool_result",
    "navigation",
    "console",
    "dialog",
    "download",
    "screenshot",
    "replay_step",
    "human_handoff",
)
STATUSES = ("running", "closed", "crashed")
_KIND_RE = re.compile(r"^[a-z][a-z0-9_]*$")
_FILE_RE = re.compile(r"^events-(\d+)\.jsonl$")
_SESSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
#: Strings in event bodies longer than this are clipped (whole page texts stay out of traces).
MAX_BODY_STRING = 10_000


@dataclass(frozen=True)
class TraceEvent:
    """One trace event; :meth:`to_dict` omits ``intent`` when it was not given."""

    ts: str
    seq: int
    kind: str
    tool: str | None = None
    body: dict[str, Any] = field(default_factory=dict)
    intent: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ts": self.ts, "seq": self.seq, "kind": self.kind, "tool": self.tool, "body": self.body}
        if self.intent:
            out["intent"] = self.intent
        return out


def trace_dir(home: str | Path, session_id: str) -> Path:
    """``home/traces/<session_id>``; refuses ids that could leave that folder."""
    if not _SESSION_RE.match(session_id):
        raise ValueError(f"invalid session id for a trace folder: {session_id!r}")
    return Path(home) / "traces" / session_id


def event_files(folder: Path) -> list[Path]:
    """The event files of a trace folder, oldest first (numeric order, so 10000 follows 9999)."""
    if not folder.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := _FILE_RE.match(p.name))]
    return [p for _, p in sorted(found)]


def read_meta(home: str | Path, session_id: str) -> dict[str, Any] | None:
    """The trace's ``meta.json``, or None when there is no trace for that session."""
    return read_json(trace_dir(home, session_id) / "meta.json")


def read_events(home: str | Path, session_id: str) -> Iterator[dict[str, Any]]:
    """Every readable event of a session's trace, in order; partial and corrupt lines are skipped."""
    for path in event_files(trace_dir(home, session_id)):
        for event in iter_jsonl(path):
            if isinstance(event, dict):
                yield event


def _last_seq(path: Path) -> int:
    """The seq of the last complete line of ``path`` (0 if none)."""
    with path.open("rb") as fh:
        fh.seek(0, os.SEEK_END)
        fh.seek(max(0, fh.tell() - 65536))
        tail = fh.read()
    for line in reversed(tail.split(b"\n")[:-1]):
        try:
            seq = loads(line).get("seq")
        except (ValueError, AttributeError):
            continue
        if isinstance(seq, int):
            return seq
    return 0


class TraceWriter:
    """Writes one session's trace events; thread-safe within a process.

    ``clock`` (returns an aware datetime) and ``ids`` (an iterator of seq numbers) are injectable
    so a fixed call sequence produces byte-identical files. ``secrets`` masks secret values in
    bodies and intents; sensitive keys are redacted and strings clipped at ``max_string``.
    Reopening an existing session folder continues in a new file after the last seq found.
    """

    def __init__(
        self,
        home: str | Path,
        session_id: str,
        *,
        max_file_bytes: int = 8 * 1024 * 1024,
        max_total_bytes: int = 64 * 1024 * 1024,
        clock: Clock | None = None,
        ids: Iterator[int] | None = None,
        secrets: SecretStore | None = None,
        max_string: int | None = MAX_BODY_STRING,
    ) -> None:
        if max_file_bytes <= 0 or max_total_bytes < max_file_bytes:
            raise ValueError("need 0 < max_file_bytes <= max_total_bytes")
        self.session_id = session_id
        self.dir = trace_dir(home, session_id)
        self.max_file_bytes = max_file_bytes
        self.max_total_bytes = max_total_bytes
        self.secrets = secrets
        self.max_string = max_string
        self._clock = clock or utc_now
        self._lock = threading.Lock()
        self._closed = False
        private_dir(self.dir, tighten=True)
        existing = event_files(self.dir)
        start_seq = next((seq for p in reversed(existing) if (seq := _last_seq(p))), 0)
        self._ids = ids if ids is not None else itertools.count(start_seq + 1)
        self._files: list[tuple[Path, int]] = [(p, p.stat().st_size) for p in existing]
        last = _FILE_RE.match(existing[-1].name) if existing else None
        self._index = int(last.group(1)) if last else 0
        self._fd: int | None = None
        self._size = 0
        self.events = 0
        old = read_json(self.dir / "meta.json", default=None) if existing else None
        self.started = old.get("started") if isinstance(old, dict) and old.get("started") else iso_ms(self._clock())
        self.ended: str | None = None
        self.status = "running"
        self._open_next()
        self._write_meta()

    @property
    def bytes(self) -> int:
        """Bytes of event files currently kept on disk."""
        return sum(size for _, size in self._files)

    @property
    def closed(self) -> bool:
        return self._closed

    def _open_next(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
        self._index += 1
        path = self.dir / f"events-{self._index:04d}.jsonl"
        self._fd = open_append(path)  # 0600
        self._size = os.fstat(self._fd).st_size
        self._files.append((path, self._size))

    def _drop_oldest(self) -> None:
        while len(self._files) > 1 and self.bytes > self.max_total_bytes:
            path, _ = self._files.pop(0)
            path.unlink(missing_ok=True)

    def _write_meta(self) -> None:
        atomic_write_json(
            self.dir / "meta.json",
            {
                "schema_version": 1,
                "session_id": self.session_id,
                "started": self.started,
                "ended": self.ended,
                "status": self.status,
                "bytes": self.bytes,
                "files": len(self._files),
                "pid": os.getpid(),
            },
        )

    def emit(
        self,
        kind: str,
        *,
        tool: str | None = None,
        body: Mapping[str, Any] | None = None,
        intent: str | None = None,
    ) -> TraceEvent:
        """Append one event (one ``write()`` of a whole line) and return it as stored."""
        if not _KIND_RE.match(kind):
            raise ValueError(f"invalid trace event kind: {kind!r}")
        secrets = self.secrets
        clean_body = sanitize_args(dict(body or {}), secrets, max_len=self.max_string)
        if intent and secrets is not None:
            intent = secrets.mask_text(intent)
        with self._lock:
            if self._closed:
                raise ValueError(f"trace of session {self.session_id} is closed")
            event = TraceEvent(iso_ms(self._clock()), next(self._ids), kind, tool, clean_body, intent or None)
            line = dumps_line(event.to_dict())
            if self._size and self._size + len(line) > self.max_file_bytes:
                self._open_next()
                self._write_meta()
            assert self._fd is not None
            view = memoryview(line)
            while view:  # one write() of the whole line; the loop only covers a short write
                view = view[os.write(self._fd, view) :]
            self._size += len(line)
            self._files[-1] = (self._files[-1][0], self._size)
            self._drop_oldest()
            self.events += 1
        return event

    def close(self, status: str = "closed") -> None:
        """Finish the trace: close the file, record ``ended`` and ``status``. Idempotent."""
        if status not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}")
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            self.ended = iso_ms(self._clock())
            self.status = status
            self._write_meta()

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        self.close("crashed" if exc_type is not None else "closed")
