"""Telemetry as pandas DataFrames: the journal and a session's trace, with fixed columns and dtypes.

A notebook user never parses JSONL by hand. Empty or missing data gives an empty frame with the
same columns and dtypes, so code written against a full frame works on an empty one too.
pandas is imported only here, and only when a frame is built.

Speed (a million trace events in a few seconds): each event file is decoded in one call
(msgspec ``decode_lines`` into slotted structs), turned into typed
columns while it is still in the CPU cache, and the per-file columns are concatenated at the end;
the cyclic garbage collector is paused meanwhile, since it would rescan millions of new objects.
"""

from __future__ import annotations

import contextlib
import functools
import gc
from collections.abc import Callable, Iterator, Sequence
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ocnb.audit.journal import journal_files, since_filter, until_filter
from ocnb.audit.jsonl import decode_lines
from ocnb.audit.trace import event_files, trace_dir
from ocnb.files import ocnb_home

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["JOURNAL_COLUMNS", "REPLAY_COLUMNS", "TRACE_COLUMNS", "journal_df", "replay_df", "trace_df"]

#: Column → dtype of :func:`journal_df`.
JOURNAL_COLUMNS: dict[str, str] = {
    "ts": "datetime64[ns, UTC]",
    "seq": "Int64",
    "session_id": "string",
    "tab_id": "string",
    "tool": "string",
    "ok": "boolean",
    "error_code": "string",
    "duration_ms": "Float64",
    "summary": "string",
    "source": "string",
    "intent": "string",
    "client": "string",
    "args": "object",
}

#: Column → dtype of :func:`trace_df`.
TRACE_COLUMNS: dict[str, str] = {
    "ts": "datetime64[ns, UTC]",
    "seq": "Int64",
    "kind": "string",
    "tool": "string",
    "intent": "string",
    "body": "object",
}


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """Pause the cyclic GC while millions of acyclic dicts are built (it would rescan them often)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _column(name: str, dtype: str, values: Any) -> Any:
    """One column (from an object array) with its exact dtype; values of the wrong type become missing."""
    import pandas as pd

    if name == "ts":
        return pd.to_datetime(values, format="ISO8601", utc=True, errors="coerce", cache=False).as_unit("ns")
    if dtype == "object":
        return values
    try:  # fast path: the writer's own types
        return pd.array(values, dtype=dtype)
    except (TypeError, ValueError):
        pass
    if dtype in ("Int64", "Float64"):
        values = [v if isinstance(v, int | float) and not isinstance(v, bool) else None for v in values]
    elif dtype == "boolean":
        values = [v if isinstance(v, bool) else None for v in values]
    else:
        values = [v if isinstance(v, str) else None for v in values]
    return pd.array(values, dtype=dtype)


def _frame(parts: dict[str, list[Any]], dtypes: dict[str, str]) -> pd.DataFrame:
    """A frame with exactly ``dtypes``' columns, in order, from per-chunk typed arrays."""
    import pandas as pd

    data: dict[str, Any] = {}
    for name in dtypes:
        chunks = parts[name]
        if len(chunks) == 1:
            data[name] = chunks[0]
        elif chunks:
            data[name] = pd.concat([pd.Series(c, copy=False) for c in chunks], ignore_index=True)
    frame = pd.DataFrame(data, columns=list(dtypes), copy=False)
    if frame.empty:
        frame = frame.astype(dtypes)
    return frame


def _add_chunk(
    records: Sequence[Any], dtypes: dict[str, str], parts: dict[str, list[Any]], get: Callable[[str], Any]
) -> None:
    """Convert one chunk of records into one typed array per column (while it is cache-warm)."""
    if not records:
        return
    import numpy as np

    for name, dtype in dtypes.items():
        getter = get(name)
        try:  # straight into an object array: no intermediate list
            values = np.fromiter(map(getter, records), dtype=object, count=len(records))
        except KeyError:  # an optional key (intent) missing from a dict record
            values = np.fromiter((r.get(name) for r in records), dtype=object, count=len(records))
        parts[name].append(_column(name, dtype, values))


class _TraceRow(msgspec.Struct, gc=False):
    """One trace line as decoded for :func:`trace_df` (unknown keys ignored, all optional)."""

    ts: Any = None
    seq: Any = None
    kind: Any = None
    tool: Any = None
    body: Any = None
    intent: Any = None


def journal_df(
    session_id: str | None = None,
    since: str | int | None = None,
    home: str | Path | None = None,
    until: Any = None,
) -> pd.DataFrame:
    """The journal on disk (every day kept, every process) as a DataFrame, one row per call.

    Filters: ``session_id``; ``since`` = an ISO timestamp (rows at or after it) or a seq number
    (rows after it); ``until`` = an ISO timestamp, ``datetime`` or ``date`` (rows before it: ``since=
    "2026-11-22", until="2026-11-23"`` is that UTC day). Day files outside ``since``/``until`` are not
    opened. ``home`` defaults to ``OCNB_HOME``.

    Columns (dtype):

    - ``ts`` (datetime64[ns, UTC]) — when the call ended
    - ``seq`` (Int64) — call number within its session
    - ``session_id`` (string)
    - ``tab_id`` (string, may be <NA>)
    - ``tool`` (string)
    - ``ok`` (boolean)
    - ``error_code`` (string, <NA> on success)
    - ``duration_ms`` (Float64)
    - ``summary`` (string) — one line of what happened
    - ``source`` (string) — api, magic, widget, mcp, plan or replay
    - ``intent`` (string, <NA> when the caller gave none)
    - ``client`` (string, <NA> unless the call came from an MCP client) — the name it gave for itself
    - ``args`` (object: dict) — the arguments, sanitized
    """
    root = ocnb_home(home)
    paths = journal_files(root, since=since, until=until)
    return journal_frame(paths, session_id=session_id, since=since, until=until)


@functools.lru_cache(maxsize=64)
def _row_type(fields: tuple[str, ...]) -> Any:
    """A struct decoding only ``fields`` of a journal line (the others are skipped, not built)."""
    return msgspec.defstruct("_JournalRow", [(name, Any, None) for name in fields], gc=False)


def journal_frame(
    paths: Sequence[Path],
    *,
    session_id: str | None = None,
    since: str | int | None = None,
    until: Any = None,
    columns: Sequence[str] | None = None,
) -> pd.DataFrame:
    """The entries of these journal day files (in order), filtered as :func:`journal_df` filters, as a
    frame of :data:`JOURNAL_COLUMNS` (or only ``columns``, in that order, with the same dtypes).

    File by file, so only one file's entries are alive at a time; only the fields the columns and the
    filters need are decoded. A trailing partial line and corrupt lines are skipped.
    """
    dtypes = {name: JOURNAL_COLUMNS[name] for name in (columns if columns is not None else JOURNAL_COLUMNS)}
    since_seq, since_ts = since_filter(since)
    until_ts = until_filter(until)
    needed = set(dtypes)
    if session_id is not None:
        needed.add("session_id")
    if since_seq is not None:
        needed.add("seq")
    if since_ts is not None or until_ts is not None:
        needed.add("ts")
    row_type = _row_type(tuple(name for name in JOURNAL_COLUMNS if name in needed))
    parts: dict[str, list[Any]] = {name: [] for name in dtypes}
    with _no_gc():
        for path in paths:
            try:
                data = path.read_bytes()
            except FileNotFoundError:  # pruned while we read
                continue
            rows = decode_lines(data, row_type)
            del data
            if session_id is not None:
                rows = [r for r in rows if r.session_id == session_id]
            if since_seq is not None:
                rows = [r for r in rows if isinstance(r.seq, int) and r.seq > since_seq]
            if since_ts is not None:
                rows = [r for r in rows if isinstance(r.ts, str) and r.ts >= since_ts]
            if until_ts is not None:
                rows = [r for r in rows if isinstance(r.ts, str) and r.ts < until_ts]
            _add_chunk(rows, dtypes, parts, attrgetter)
            del rows
        return _frame(parts, dtypes)


def trace_df(session_id: str, home: str | Path | None = None) -> pd.DataFrame:
    """One session's trace as a DataFrame, one row per event, in order.

    A trailing partial line (a writer killed mid-write) and corrupt lines are skipped. A missing
    trace gives an empty frame. ``home`` defaults to ``OCNB_HOME``.

    Columns (dtype):

    - ``ts`` (datetime64[ns, UTC])
    - ``seq`` (Int64) — event number within the session
    - ``kind`` (string) — tool_call, tool_result, navigation, console, dialog, download, …
    - ``tool`` (string, <NA> for events not tied to a tool)
    - ``intent`` (string, <NA> when none was given)
    - ``body`` (object: dict) — the event's payload
    """
    parts: dict[str, list[Any]] = {name: [] for name in TRACE_COLUMNS}
    with _no_gc():
        # File by file: only one file's rows are alive at a time (their bodies are kept).
        for path in event_files(trace_dir(ocnb_home(home), session_id)):
            try:
                data = path.read_bytes()
            except FileNotFoundError:  # dropped by rotation while we read
                continue
            rows = decode_lines(data, _TraceRow)
            del data
            _add_chunk(rows, TRACE_COLUMNS, parts, attrgetter)
            del rows
        return _frame(parts, TRACE_COLUMNS)


#: Columns of :func:`replay_df`.
REPLAY_COLUMNS: dict[str, str] = {
    "ts": "datetime64[ns, UTC]",
    "session_id": "string",
    "skill_id": "string",
    "step_index": "Int64",
    "resolved_via": "string",
    "selector_attempts": "Int64",
    "elapsed_ms": "Float64",
    "ok": "boolean",
}


def replay_df(skill_id: str | None = None, home: str | Path | None = None) -> pd.DataFrame:
    """One row per replayed skill step, from every session's trace (``replay_step`` events).

    Columns (dtype): ``ts`` (datetime64[ns, UTC]), ``session_id`` (string), ``skill_id`` (string),
    ``step_index`` (Int64), ``resolved_via`` (string: role_name, css, … or <NA> for navigate steps),
    ``selector_attempts`` (Int64), ``elapsed_ms`` (Float64), ``ok`` (boolean).
    """
    import pandas as pd

    root = ocnb_home(home) / "traces"
    rows: list[dict[str, Any]] = []
    folders = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    for folder in folders:
        frame = trace_df(folder.name, home=home)
        if frame.empty:
            continue
        steps = frame[frame["kind"] == "replay_step"]
        for ts, body in zip(steps["ts"], steps["body"], strict=True):
            if skill_id is not None and body.get("skill_id") != skill_id:
                continue
            rows.append({"ts": ts, "session_id": folder.name, **{k: body.get(k) for k in list(REPLAY_COLUMNS)[2:]}})
    df = pd.DataFrame(rows, columns=list(REPLAY_COLUMNS))
    if df.empty:
        df["ts"] = pd.to_datetime(df["ts"], utc=True)
    return df.astype(REPLAY_COLUMNS).sort_values(["ts"]).reset_index(drop=True)
