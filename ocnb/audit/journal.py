"""The journal: one JSON line per dispatched call, from every face, kept on disk and in memory.

Files are ``OCNB_HOME/journal/journal-YYYYMMDD.jsonl``, one per UTC day, pruned by age when a
:class:`Journal` starts and when the day changes. Each entry is one ``write()`` of a whole line
to a file opened with ``O_APPEND``, under an inter-process lock (a blocking ``flock`` on POSIX,
:func:`ocnb.files.file_lock` elsewhere), so threads of one kernel,
an MCP server and a second process may all append at once without losing or interleaving lines.

An entry holds exactly these keys, in this order (``intent`` only when the caller gave one —
absent, never null or empty)::

    ts  seq  session_id  tab_id  tool  args  ok  error_code  duration_ms  summary  source  [intent]  [blocked]  [client]
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from collections import Counter, deque
from collections.abc import Iterable, Mapping
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from ..errors import InvalidArgument

if sys.platform != "win32":
    import fcntl

from ocnb.audit.jsonl import Clock, dumps_line, iso_ms, iter_jsonl, parse_ts, utc_now
from ocnb.audit.sanitize import clip, sanitize_args
from ocnb.audit.secrets import SecretStore
from ocnb.calls import SOURCES  # where a call came from: one definition of the faces
from ocnb.files import file_lock, open_append, private_dir

__all__ = [
    "ENTRY_FIELDS",
    "SOURCES",
    "Journal",
    "journal_files",
    "read_journal",
    "since_filter",
    "summarize",
    "until_filter",
]


#: The keys of every entry, in file order; ``intent`` follows only when given, then ``blocked``
#: (``[{"url", "rule"}]``, the requests the origin policy refused during the call) only when any was,
#: then ``client`` (the MCP client's ``clientInfo.name``) for a call from an MCP client that gave one.
ENTRY_FIELDS = (
    "ts",
    "seq",
    "session_id",
    "tab_id",
    "tool",
    "args",
    "ok",
    "error_code",
    "duration_ms",
    "summary",
    "source",
)
SUMMARY_MAX = 200
_FILE_RE = re.compile(r"^journal-(\d{8})\.jsonl$")


def journal_files(home: str | Path, *, since: str | int | None = None, until: Any = None) -> list[Path]:
    """The day files under ``home/journal``, oldest first; with ``since``/``until`` only those that can
    hold a matching entry.

    An entry goes to the file of its own timestamp's UTC day (:meth:`Journal.path_for`), so a file whose
    day ends before ``since`` (a timestamp; a seq number prunes nothing) or begins at or after ``until``
    is left out without being opened.
    """
    folder = Path(home) / "journal"
    if not folder.is_dir():
        return []
    first = since_filter(since)[1]
    last = until_filter(until)
    out = []
    for p in folder.iterdir():
        match = _FILE_RE.match(p.name)
        if match is None:
            continue
        day = match.group(1)
        start = f"{day[:4]}-{day[4:6]}-{day[6:]}"
        if first is not None and start < first[:10]:
            continue
        if last is not None and f"{start}T00:00:00.000Z" >= last:
            continue
        out.append(p)
    return sorted(out)


def since_filter(since: str | int | None) -> tuple[int | None, str | None]:
    """Split ``since`` into (seq, ts): an int (or digits) is a seq, anything else an ISO timestamp."""
    if since is None or since == "":
        return None, None
    if isinstance(since, bool):
        raise InvalidArgument("since must be an ISO timestamp or a seq number")
    if isinstance(since, int):
        return since, None
    text = str(since).strip()
    if text.isdigit():
        return int(text), None
    try:
        return None, iso_ms(parse_ts(text))
    except ValueError:
        raise InvalidArgument(f"since must be an ISO timestamp or a seq number, not {since!r}") from None


def until_filter(until: Any) -> str | None:
    """``until`` (an ISO timestamp, a ``datetime`` or a ``date``) as the journal's own ts text, or None."""
    if until is None or until == "":
        return None
    if isinstance(until, datetime):
        return iso_ms(until)
    if isinstance(until, date):
        return f"{until.isoformat()}T00:00:00.000Z"
    if not isinstance(until, str):
        raise InvalidArgument(f"until must be an ISO timestamp, not {until!r}")
    try:
        return iso_ms(parse_ts(until))
    except ValueError:
        raise InvalidArgument(f"until must be an ISO timestamp, not {until!r}") from None


def _filter(
    entries: Iterable[dict[str, Any]],
    *,
    tool: str | None = None,
    since: str | int | None = None,
    session_id: str | None = None,
    until: Any = None,
) -> list[dict[str, Any]]:
    """Entries matching every given filter: seq ``> since`` for a number, ts ``>= since`` for a time,
    ts ``< until``."""
    since_seq, since_ts = since_filter(since)
    until_ts = until_filter(until)
    out = []
    for e in entries:
        if tool is not None and e.get("tool") != tool:
            continue
        if session_id is not None and e.get("session_id") != session_id:
            continue
        if since_seq is not None and not (isinstance(e.get("seq"), int) and e["seq"] > since_seq):
            continue
        if since_ts is not None and not (isinstance(e.get("ts"), str) and e["ts"] >= since_ts):
            continue
        if until_ts is not None and not (isinstance(e.get("ts"), str) and e["ts"] < until_ts):
            continue
        out.append(e)
    return out


def read_journal(
    home: str | Path,
    *,
    session_id: str | None = None,
    since: str | int | None = None,
    tool: str | None = None,
    until: Any = None,
) -> list[dict[str, Any]]:
    """Every entry on disk (all days kept, all processes), in file order, filtered.

    ``until`` (an ISO timestamp, ``datetime`` or ``date``) keeps entries before it; day files outside
    ``since``/``until`` are not opened (:func:`journal_files`).
    """
    paths = journal_files(home, since=since, until=until)
    entries = (e for path in paths for e in iter_jsonl(path) if isinstance(e, dict))
    return _filter(entries, tool=tool, since=since, session_id=session_id, until=until)


def _brief(e: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: e.get(k) for k in ("seq", "ts", "session_id", "tool", "summary")}
    if "intent" in e:
        out["intent"] = e["intent"]
    return out


def summarize(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Calls per tool, failures by code, the last successful step and repeated identical failures.

    A repeated failure is a run of ≥ 2 consecutive entries that failed with the same tool, the
    same arguments and the same error code — the sign of an agent stuck in a loop.
    """
    per_tool = Counter(e.get("tool") for e in entries)
    failures = Counter(e.get("error_code") or "UNKNOWN" for e in entries if not e.get("ok"))
    last_ok = next((e for e in reversed(entries) if e.get("ok")), None)
    repeated: list[dict[str, Any]] = []
    run_key: tuple[Any, ...] | None = None
    run: list[dict[str, Any]] = []

    def close_run() -> None:
        if len(run) >= 2:
            first = run[0]
            repeated.append(
                {
                    "tool": first.get("tool"),
                    "args": first.get("args"),
                    "error_code": first.get("error_code"),
                    "count": len(run),
                    "first_seq": first.get("seq"),
                    "last_seq": run[-1].get("seq"),
                }
            )

    for e in entries:
        key = None
        if not e.get("ok"):
            args = json.dumps(e.get("args"), sort_keys=True, default=str)
            key = (e.get("session_id"), e.get("tool"), args, e.get("error_code"))
        if key is not None and key == run_key:
            run.append(e)
            continue
        close_run()
        run_key, run = key, ([e] if key is not None else [])
    close_run()
    return {
        "calls": len(entries),
        "ok": sum(1 for e in entries if e.get("ok")),
        "failed": sum(failures.values()),
        "first_ts": entries[0].get("ts") if entries else None,
        "last_ts": entries[-1].get("ts") if entries else None,
        "calls_per_tool": dict(sorted(per_tool.items(), key=lambda kv: (-kv[1], str(kv[0])))),
        "failures_by_code": dict(sorted(failures.items(), key=lambda kv: (-kv[1], kv[0]))),
        "last_success": _brief(last_ok) if last_ok is not None else None,
        "repeated_failures": repeated,
    }


def _write_all(fd: int, line: bytes) -> None:
    """One ``write()`` of the whole line (the loop only covers a short write)."""
    view = memoryview(line)
    while view:
        view = view[os.write(fd, view) :]


class Journal:
    """Appends entries to today's JSONL file and to a bounded in-memory deque.

    ``secrets`` (a :class:`SecretStore`, may be filled later) masks secret values in ``args``,
    ``summary`` and ``intent``; ``clock`` is injectable for tests. ``session_id`` is the default
    for entries that do not name one. Sequence numbers are assigned per session, from 1.
    """

    def __init__(
        self,
        home: str | Path,
        *,
        max_memory: int = 2000,
        max_age_days: int = 14,
        secrets: SecretStore | None = None,
        session_id: str | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.home = Path(home)
        self.dir = self.home / "journal"
        self.max_age_days = max_age_days
        self.secrets = secrets
        self.session_id = session_id
        self._clock = clock or utc_now
        self._memory: deque[dict[str, Any]] = deque(maxlen=max_memory)
        self._last_seq: dict[str, int] = {}
        self._lock = threading.Lock()
        private_dir(self.dir, tighten=True)
        self._day: str | None = None
        self._fd: int | None = None
        self.prune()

    # -- writing ---------------------------------------------------------------------------

    def prune(self) -> list[Path]:
        """Delete day files older than ``max_age_days``; return what was deleted."""
        cutoff = (self._clock() - timedelta(days=self.max_age_days)).strftime("%Y%m%d")
        removed = []
        for path in journal_files(self.home):
            match = _FILE_RE.match(path.name)  # journal_files lists only names that match
            if match is not None and match.group(1) < cutoff:
                path.unlink(missing_ok=True)
                removed.append(path)
        return removed

    def path_for(self, ts: str) -> Path:
        """The day file an entry with timestamp ``ts`` goes to."""
        return self.dir / f"journal-{ts[:10].replace('-', '')}.jsonl"

    def _normalize(self, entry: Mapping[str, Any]) -> dict[str, Any]:
        tool = entry.get("tool")
        if not isinstance(tool, str) or not tool:
            raise ValueError("a journal entry needs a tool name")
        source = entry.get("source", "api")
        if source not in SOURCES:
            raise ValueError(f"source must be one of {', '.join(SOURCES)}, not {source!r}")
        session_id = entry.get("session_id") or self.session_id
        if not isinstance(session_id, str) or not session_id:
            raise ValueError("a journal entry needs a session_id")
        secrets = self.secrets
        summary = " ".join(str(entry.get("summary") or "").split())
        if secrets is not None:
            summary = secrets.mask_text(summary)
        duration = entry.get("duration_ms")
        out: dict[str, Any] = {
            "ts": entry.get("ts"),
            "seq": entry.get("seq"),
            "session_id": session_id,
            "tab_id": entry.get("tab_id"),
            "tool": tool,
            "args": sanitize_args(dict(entry.get("args") or {}), secrets),
            "ok": bool(entry.get("ok")),
            "error_code": entry.get("error_code") or None,
            "duration_ms": round(float(duration), 3) if duration is not None else 0.0,
            "summary": clip(summary, SUMMARY_MAX),
            "source": source,
        }
        intent = entry.get("intent")
        if isinstance(intent, str) and intent:
            out["intent"] = secrets.mask_text(intent) if secrets is not None else intent
        blocked = entry.get("blocked")
        if isinstance(blocked, list) and blocked:  # requests the origin policy refused during the call
            mask = secrets.mask_text if secrets is not None else str
            out["blocked"] = [
                {"url": clip(mask(str(b.get("url", ""))), 300), "rule": str(b.get("rule", ""))}
                for b in blocked
                if isinstance(b, Mapping)
            ]
        client = entry.get("client")
        if isinstance(client, str) and client:  # the MCP client's own name for itself
            out["client"] = clip(secrets.mask_text(client) if secrets is not None else client, 100)
        return out

    def append(self, entry: Mapping[str, Any]) -> dict[str, Any]:
        """Sanitize, number, timestamp and write one entry; return it exactly as stored.

        ``entry`` needs ``tool`` and ``ok``; ``ts`` and ``seq`` are filled in when absent (``seq``
        = the session's last + 1; dispatch may pass its own), ``source`` defaults to ``"api"``,
        ``session_id`` to the journal's own. Raises ``ValueError`` for a malformed entry and
        ``OSError`` when the disk refuses the line (then nothing is kept in memory either).
        """
        out = self._normalize(entry)
        with self._lock:
            if out["ts"] is None:
                out["ts"] = iso_ms(self._clock())
            last = self._last_seq.get(out["session_id"], 0)
            if not isinstance(out["seq"], int):
                out["seq"] = last + 1
            self._last_seq[out["session_id"]] = max(last, out["seq"])
            self._write(out["ts"], dumps_line(out))
            self._memory.append(out)
        return out

    def _write(self, ts: str, line: bytes) -> None:
        day = ts[:10]
        if day != self._day:
            self._close_fd()
            if self._day is not None:
                self.prune()
            self._day = day
        if self._fd is None:
            self._fd = open_append(self.path_for(ts))  # 0600
        if sys.platform != "win32":
            # A blocking flock on the day file itself: waiters wake at once (no polling).
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                st = os.fstat(self._fd)  # one fstat: is the file still there, and how long is it
                if st.st_nlink == 0:  # the day file was deleted under us: start it again
                    fcntl.flock(self._fd, fcntl.LOCK_UN)
                    self._close_fd()
                    self._fd = open_append(self.path_for(ts))
                    fcntl.flock(self._fd, fcntl.LOCK_EX)
                    st = os.fstat(self._fd)
                _write_all(self._fd, self._after_torn_line(ts, line, st.st_size))
            finally:
                if self._fd is not None:
                    fcntl.flock(self._fd, fcntl.LOCK_UN)
        else:  # pragma: no cover - Windows
            with file_lock(self.dir / "journal"):
                if os.fstat(self._fd).st_nlink == 0:
                    self._close_fd()
                    self._fd = open_append(self.path_for(ts))
                _write_all(self._fd, self._after_torn_line(ts, line, os.fstat(self._fd).st_size))

    def _after_torn_line(self, ts: str, line: bytes, size: int) -> bytes:
        """``line``, after a newline when the file (``size`` bytes long) does not end with one (a
        writer killed mid-line).

        Under the lock. Only a file that changed since our own last write is read (its last byte).
        """
        torn = False
        if size and size != getattr(self, "_size", None):
            fd = os.open(self.path_for(ts), os.O_RDONLY | getattr(os, "O_BINARY", 0))
            try:
                os.lseek(fd, size - 1, os.SEEK_SET)
                torn = os.read(fd, 1) != b"\n"
            finally:
                os.close(fd)
        if torn:
            line = b"\n" + line
        self._size = size + len(line)
        return line

    def _close_fd(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def close(self) -> None:
        """Close the open day file (appending again reopens it)."""
        with self._lock:
            self._close_fd()
            self._day = None

    # -- reading ---------------------------------------------------------------------------

    @property
    def entries(self) -> list[dict[str, Any]]:
        """The entries kept in memory (the most recent ``max_memory`` of this journal), oldest first."""
        with self._lock:
            return list(self._memory)

    def _select(self, tool: str | None, since: str | int | None, session_id: str | None) -> list[dict[str, Any]]:
        if session_id is None:
            return _filter(self.entries, tool=tool, since=since)
        return read_journal(self.home, session_id=session_id, since=since, tool=tool)

    def recent(
        self,
        limit: int = 20,
        tool: str | None = None,
        since: str | int | None = None,
        session_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """The last ``limit`` matching entries, oldest first.

        Without ``session_id`` this reads memory (this journal's recent calls); with one it reads
        every day file on disk, so earlier sessions and other processes are included. ``since``
        is a seq number (entries after it) or an ISO timestamp (entries at or after it).
        """
        entries = self._select(tool, since, session_id)
        return entries[-limit:] if limit > 0 else []

    def summary(
        self,
        limit: int | None = None,
        tool: str | None = None,
        since: str | int | None = None,
        session_id: str | None = None,
    ) -> dict[str, Any]:
        """:func:`summarize` over the matching entries (the last ``limit`` of them when given)."""
        entries = self._select(tool, since, session_id)
        if limit is not None:
            entries = entries[-limit:] if limit > 0 else []
        return summarize(entries)
