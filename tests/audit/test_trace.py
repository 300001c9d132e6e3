"""The trace: golden bytes, intent keys, rotation and size bound, meta.json, a killed writer."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ocnb.audit.secrets import SecretStore
from ocnb.audit.trace import TraceEvent, TraceWriter, event_files, read_events, read_meta, trace_dir

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden" / "trace_events.jsonl"


def stepping_clock(start: datetime = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)) -> Any:
    """A frozen clock that advances 250 ms per reading."""
    ticks = itertools.count()
    return lambda: start + timedelta(milliseconds=250 * next(ticks))


SEQUENCE: list[tuple[str, str | None, dict[str, Any], str | None]] = [
    ("tool_call", "navigate", {"args": {"url": "http://127.0.0.1:8000/login"}}, None),
    ("navigation", None, {"url": "http://127.0.0.1:8000/login", "status": 200}, None),
    ("tool_result", "navigate", {"ok": True, "data": {"title": "Log in"}}, None),
    ("tool_call", "form_input", {"args": {"target": "ax_3", "value": "alice"}}, "type the user name"),
    ("console", None, {"level": "warning", "text": "déjà vu ✓"}, None),
    ("tool_result", "form_input", {"ok": True, "data": {}}, "type the user name"),
    ("tool_call", "interact", {"args": {"target": "ax_7", "action": "click"}}, "submit the login form"),
    ("tool_result", "interact", {"ok": False, "error": {"code": "STALE_REF"}}, "submit the login form"),
]


def run_sequence(home: Path, *, with_intents: bool) -> bytes:
    w = TraceWriter(home, "golden", clock=stepping_clock(), ids=itertools.count(1))
    for kind, tool, body, intent in SEQUENCE:
        w.emit(kind, tool=tool, body=body, intent=intent if with_intents else None)
    w.close()
    return b"".join(p.read_bytes() for p in event_files(trace_dir(home, "golden")))


def test_golden_file_is_byte_identical(tmp_path: Path) -> None:
    # To refresh after an intended format change: write run_sequence(...) to GOLDEN and review the diff.
    assert run_sequence(tmp_path, with_intents=False) == GOLDEN.read_bytes()


def test_intents_only_add_keys(tmp_path: Path) -> None:
    plain = [json.loads(line) for line in run_sequence(tmp_path / "a", with_intents=False).splitlines()]
    labelled = [json.loads(line) for line in run_sequence(tmp_path / "b", with_intents=True).splitlines()]
    assert len(plain) == len(labelled) == len(SEQUENCE)
    for p, lab, (_, _, _, intent) in zip(plain, labelled, SEQUENCE, strict=True):
        assert "intent" not in p
        if intent is None:
            assert lab == p
        else:
            assert {k: v for k, v in lab.items() if k != "intent"} == p and lab["intent"] == intent
            assert list(lab) == ["ts", "seq", "kind", "tool", "body", "intent"]


def test_empty_intent_is_absent_not_empty(tmp_path: Path) -> None:
    w = TraceWriter(tmp_path, "s1")
    assert "intent" not in w.emit("tool_call", tool="interact", intent="").to_dict()
    assert TraceEvent("t", 1, "console").to_dict() == {"ts": "t", "seq": 1, "kind": "console", "tool": None, "body": {}}


def test_meta_json_tracks_status(tmp_path: Path) -> None:
    w = TraceWriter(tmp_path, "s1", clock=stepping_clock())
    meta = read_meta(tmp_path, "s1")
    assert meta is not None and meta["status"] == "running" and meta["ended"] is None
    assert meta["session_id"] == "s1" and meta["started"] == "2026-01-02T03:04:05.678Z"
    w.emit("console", body={"text": "hi"})
    w.close()
    w.close()  # idempotent
    meta = read_meta(tmp_path, "s1")
    assert meta["status"] == "closed" and meta["ended"] is not None
    assert meta["bytes"] == sum(p.stat().st_size for p in event_files(trace_dir(tmp_path, "s1")))
    with pytest.raises(ValueError, match="closed"):
        w.emit("console")
    with pytest.raises(RuntimeError), TraceWriter(tmp_path, "s2") as w2:
        w2.emit("console")
        raise RuntimeError("boom")
    assert read_meta(tmp_path, "s2")["status"] == "crashed"
    assert read_meta(tmp_path, "nobody") is None


def test_rotation_by_size_and_oldest_files_dropped(tmp_path: Path) -> None:
    w = TraceWriter(tmp_path, "s1", max_file_bytes=2000, max_total_bytes=6000)
    for i in range(200):
        w.emit("console", body={"i": i, "text": "x" * 50})
    w.close()
    files = event_files(trace_dir(tmp_path, "s1"))
    sizes = [p.stat().st_size for p in files]
    assert all(s <= 2000 for s in sizes)
    assert sum(sizes) <= 6000 and len(files) >= 3
    assert files[-1].name.startswith("events-") and int(files[-1].stem.split("-")[1]) > len(files)
    seqs = [e["seq"] for e in read_events(tmp_path, "s1")]
    assert seqs == list(range(seqs[0], 201)) and seqs[0] > 1  # the newest events, contiguous
    assert read_meta(tmp_path, "s1")["bytes"] == sum(sizes)


def test_reopening_a_session_continues_the_sequence(tmp_path: Path) -> None:
    w = TraceWriter(tmp_path, "s1")
    for _ in range(3):
        w.emit("console")
    w.close()
    w = TraceWriter(tmp_path, "s1")
    assert w.emit("console").seq == 4
    w.close()
    assert [e["seq"] for e in read_events(tmp_path, "s1")] == [1, 2, 3, 4]
    assert len(event_files(trace_dir(tmp_path, "s1"))) == 2


def test_secrets_masked_and_sensitive_keys_redacted(tmp_path: Path) -> None:
    w = TraceWriter(tmp_path, "s1", secrets=SecretStore({"PW": "hunter2-xyz"}))
    w.emit(
        "tool_call",
        tool="form_input",
        body={"args": {"value": "hunter2-xyz", "Authorization": "Bearer x"}},
        intent="use hunter2-xyz",
    )
    w.close()
    raw = b"".join(p.read_bytes() for p in event_files(trace_dir(tmp_path, "s1"))).decode()
    assert "hunter2-xyz" not in raw and "Bearer x" not in raw
    [e] = read_events(tmp_path, "s1")
    assert e["body"]["args"] == {"value": "${SECRET:PW}", "Authorization": "[REDACTED]"}
    assert e["intent"] == "use ${SECRET:PW}"


def test_bad_kind_and_session_id_are_refused(tmp_path: Path) -> None:
    w = TraceWriter(tmp_path, "s1")
    with pytest.raises(ValueError):
        w.emit("Tool Call")
    with pytest.raises(ValueError):
        TraceWriter(tmp_path, "../escape")


KILLED_WRITER = """
import sys
sys.path.insert(0, {root!r})
from ocnb.audit.trace import TraceWriter
w = TraceWriter({home!r}, "victim", max_file_bytes=20000)
i = 0
while True:
    i += 1
    w.emit("console", tool=None, body={{"i": i, "text": "z" * 120}})
    if i == 300:
        print("written", flush=True)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_a_killed_writer_leaves_a_readable_trace(tmp_path: Path) -> None:
    from ocnb.audit.telemetry import trace_df

    script = KILLED_WRITER.format(root=str(ROOT), home=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "written"
        time.sleep(0.05)  # let it write on, then kill it mid-stream
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        proc.kill()
    files = event_files(trace_dir(tmp_path, "victim"))
    # Simulate the worst case too: a torn write left half a line at the end of the last file.
    with files[-1].open("ab") as fh:
        fh.write(b'{"ts":"2026-01-01T00:00:00.000Z","seq":99999999,"kind":"cons')
    events = list(read_events(tmp_path, "victim"))
    assert len(events) >= 300
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert read_meta(tmp_path, "victim")["status"] == "running"  # never closed: a crash
    df = trace_df("victim", home=tmp_path)
    assert len(df) == len(events) and df["seq"].tolist() == list(range(1, len(events) + 1))
    # A new writer for the same session continues after the last complete event.
    w = TraceWriter(tmp_path, "victim")
    assert w.emit("console").seq == len(events) + 1
    w.close()
