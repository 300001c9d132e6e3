"""Golden bytes of the audit trail through dispatch itself: journal and trace for calls with and
without ``intent``, a refused intent (no line), invalid and non-finite arguments (strict JSON).

The handlers are stand-ins (no browser); everything else — validation, intent check, hooks, journal
and trace writers — is the real pipeline. Clocks and durations are stepped so the bytes are stable.
To refresh after an intended format change: set OCNB_GOLDEN_UPDATE=1, run, and review the diff.
"""

from __future__ import annotations

import dataclasses
import importlib
import itertools
import json
import math
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import ocnb
import ocnb.audit.journal
import ocnb.audit.trace
from ocnb.audit.trace import event_files, trace_dir

GOLDEN = Path(__file__).parent / "golden"
DISPATCH = importlib.import_module("ocnb.dispatch")  # the module (ocnb.dispatch is also the function)

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("interact", {"ref": "ax_1", "intent": "open the account menu"}),
    ("interact", {"ref": "ax_2"}),
    ("interact", {"ref": "ax_3", "intent": ""}),  # INVALID_INTENT: no journal line, no trace event
    ("interact", {"ref": "ax_3", "intent": "x" * 121}),  # likewise
    ("form_input", {"ref": "ax_4", "value": "alice", "intent": "type the user name"}),
    ("form_input", {"ref": 5, "intent": "a ref that is not a string"}),  # INVALID_ARGUMENT, labelled
    ("form_input", {"ref": "ax_4", "value": math.nan}),  # INVALID_ARGUMENT, written as "NaN"
    ("drag_drop", {"source": "ax_5", "target": "ax_6", "intent": "déjà vu ✓ \ud800"}),  # lone surrogate
    ("no_such_tool", {}),
]


def stepping_clock(start: datetime = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)) -> Any:
    ticks = itertools.count()
    return lambda: start + timedelta(milliseconds=250 * next(ticks))


async def _fake_handler(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
    return {"done": ctx.call.name, "target": args.get("ref") or args.get("source"), "tab_id": "t1"}


async def _no_browser() -> None:
    return None


def run_calls(home: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[bytes, bytes, list[Any]]:
    monkeypatch.setattr(ocnb.audit.journal, "utc_now", stepping_clock())
    monkeypatch.setattr(ocnb.audit.trace, "utc_now", stepping_clock())
    ticks = itertools.count()
    monkeypatch.setattr(DISPATCH, "time", SimpleNamespace(perf_counter=lambda: next(ticks) * 0.0125))
    s = ocnb.Session(home=home, session_id="golden")
    try:
        s.ensure_browser = _no_browser  # type: ignore[method-assign]
        for name in ("interact", "form_input", "drag_drop"):
            s.registry._tools[name] = dataclasses.replace(s.registry._tools[name], handler=_fake_handler)
        results = [s.call(tool, args) for tool, args in CALLS]
    finally:
        s.close()
    journal = b"".join(p.read_bytes() for p in sorted((home / "journal").glob("*.jsonl")))
    trace = b"".join(p.read_bytes() for p in event_files(trace_dir(home, "golden")))
    return journal, trace, results


def test_dispatch_audit_trail_is_byte_identical(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    journal, trace, results = run_calls(tmp_path, monkeypatch)
    codes = [r.error.code if r.error else "ok" for r in results]
    assert codes == [
        "ok",
        "ok",
        "INVALID_INTENT",
        "INVALID_INTENT",
        "ok",
        "INVALID_ARGUMENT",
        "INVALID_ARGUMENT",
        "INVALID_ARGUMENT",
        "UNKNOWN_TOOL",
    ]
    if os.environ.get("OCNB_GOLDEN_UPDATE") == "1":
        (GOLDEN / "dispatch_journal.jsonl").write_bytes(journal)
        (GOLDEN / "dispatch_trace.jsonl").write_bytes(trace)
    assert journal == (GOLDEN / "dispatch_journal.jsonl").read_bytes()
    assert trace == (GOLDEN / "dispatch_trace.jsonl").read_bytes()


def test_golden_lines_are_strict_and_intent_only_adds_a_key() -> None:
    def strict(line: bytes) -> Any:
        return json.loads(line.decode("utf-8"), parse_constant=lambda c: pytest.fail(f"non-strict {c}"))

    entries = [strict(line) for line in (GOLDEN / "dispatch_journal.jsonl").read_bytes().splitlines()]
    events = [strict(line) for line in (GOLDEN / "dispatch_trace.jsonl").read_bytes().splitlines()]
    # Two refused intents leave nothing: 9 calls, 7 lines, seq 3 and 4 missing.
    assert [e["seq"] for e in entries] == [1, 2, 5, 6, 7, 8, 9]
    assert len(events) == 2 * len(entries)
    fields = list(ocnb.audit.journal.ENTRY_FIELDS)
    for e in entries:
        assert list(e) == (fields + ["intent"] if "intent" in e else fields)
    labelled = {e["seq"]: e["intent"] for e in entries if "intent" in e}
    assert labelled == {
        1: "open the account menu",
        5: "type the user name",
        6: "a ref that is not a string",
        8: "déjà vu ✓ \ufffd",
    }
    assert entries[4]["args"] == {"ref": "ax_4", "value": "NaN"} and entries[4]["error_code"] == "INVALID_ARGUMENT"
    for ev in events:
        assert ("intent" in ev) == (ev["body"]["call_seq"] in labelled)
