"""JSON Lines and UTC timestamps for the audit trail: one serializer, one tolerant reader.

Lines are written with the standard library (byte-stable output, so golden files do not depend
on what is installed) and read with ``msgspec`` (its ``decode_lines`` reads a whole file in one
call, into typed structs when asked: several times faster than ``json``).
A reader skips a trailing partial line (a writer killed mid-write) and any corrupt line, so one
crash never makes a whole file unreadable.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from ocnb.jsonsafe import strict_dumps

__all__ = [
    "Clock",
    "dumps_line",
    "iso_ms",
    "iter_jsonl",
    "decode_lines",
    "loads",
    "parse_ts",
    "utc_now",
]

#: A clock returns the current time as an aware UTC datetime (injectable for tests).
Clock = Callable[[], datetime]

loads: Callable[[bytes | str], Any] = msgspec.json.decode
#: The encoder of every line, made once: ``json.dumps`` with these options builds a new one per call.
_LINE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)
_DECODERS: dict[Any, Any] = {}


def utc_now() -> datetime:
    """The current time, aware, in UTC."""
    return datetime.now(UTC)


def iso_ms(dt: datetime) -> str:
    """ISO-8601 UTC with milliseconds and ``Z``: ``2026-11-22T01:43:33.123Z``."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    dt = dt.astimezone(UTC)
    return (
        f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}"
        f".{dt.microsecond // 1000:03d}Z"
    )


def parse_ts(text: str) -> datetime:
    """Parse an ISO-8601 timestamp; a naive one is taken as UTC."""
    dt = datetime.fromisoformat(text.strip())
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def dumps_line(obj: Any) -> bytes:
    """One compact, strict JSON line (UTF-8, ending in ``\\n``); non-JSON values become their ``str``.

    It cannot write anything but strict JSON, nor fail on a value: ``NaN``/``±Infinity`` are written
    as strings, lone surrogates as U+FFFD, levels nested too deep as ``"…"`` (:mod:`ocnb.jsonsafe`).
    """
    try:  # the common case: already strict JSON, encoded once (a lone surrogate fails in encode())
        return (_LINE.encode(obj) + "\n").encode("utf-8")
    except (ValueError, RecursionError, TypeError):  # UnicodeEncodeError is a ValueError
        text = strict_dumps(obj, ensure_ascii=False, separators=(",", ":"))
        return (text + "\n").encode("utf-8")


def decode_lines(data: bytes, type_: Any = None) -> list[Any]:
    """Decode the complete lines of ``data``; skip a trailing partial line and corrupt lines.

    With ``type_`` given (a ``msgspec.Struct``), lines become instances of it (lines that are not
    objects are skipped); otherwise they are plain JSON values.
    """
    end = data.rfind(b"\n")
    if end < 0:
        return []
    body = data[: end + 1]
    decoder = _DECODERS.get(type_)
    if decoder is None:
        decoder = _DECODERS[type_] = msgspec.json.Decoder(type_) if type_ is not None else msgspec.json.Decoder()
    try:  # fast path: the whole file in one call
        return decoder.decode_lines(body)
    except ValueError:  # msgspec's DecodeError and ValidationError are ValueErrors
        decode = decoder.decode
    out: list[Any] = []
    for line in body.split(b"\n"):
        if not line.strip():
            continue
        try:
            out.append(decode(line))
        except ValueError:  # msgspec's DecodeError and ValidationError are ValueErrors
            continue
    return out


def iter_jsonl(path: Path) -> Iterator[Any]:
    """Yield the decoded records of one JSONL file (missing file → nothing)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    yield from decode_lines(data)
