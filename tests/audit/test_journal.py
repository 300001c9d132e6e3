"""The journal: exact entry shape, day files and pruning, filters, summary, concurrency."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ocnb.audit.journal import ENTRY_FIELDS, Journal, journal_files, read_journal
from ocnb.audit.secrets import SecretStore

ROOT = Path(__file__).resolve().parents[2]
TS_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


class FakeClock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def tick(self, **kw: float) -> None:
        self.now += timedelta(**kw)


def call(tool: str = "navigate", ok: bool = True, **kw: Any) -> dict[str, Any]:
    entry = {"tool": tool, "ok": ok, "args": kw.pop("args", {"url": "http://127.0.0.1/"}), "duration_ms": 1.5}
    entry["summary"] = kw.pop("summary", f"{tool} done")
    entry.update(kw)
    return entry


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_entry_has_exactly_the_documented_keys(tmp_path: Path) -> None:
    j = Journal(tmp_path, session_id="s1")
    e = j.append(call(tab_id="t1", source="mcp"))
    assert list(e) == list(ENTRY_FIELDS)
    assert TS_RE.match(e["ts"]) and e["seq"] == 1 and e["session_id"] == "s1" and e["tab_id"] == "t1"
    assert e["error_code"] is None and e["duration_ms"] == 1.5 and e["source"] == "mcp"
    [path] = journal_files(tmp_path)
    assert path.name == f"journal-{e['ts'][:10].replace('-', '')}.jsonl"
    assert lines(path) == [e]


def test_intent_key_only_when_given(tmp_path: Path) -> None:
    j = Journal(tmp_path, session_id="s1")
    j.append(call())
    j.append(call(intent=None))
    j.append(call(intent=""))
    j.append(call(intent="open the pricing page"))
    on_disk = lines(journal_files(tmp_path)[0])
    assert ["intent" in e for e in on_disk] == [False, False, False, True]
    assert on_disk[3]["intent"] == "open the pricing page"
    assert '"intent"' not in "".join(json.dumps(e) for e in on_disk[:3])


def test_failed_call_and_one_line_summary(tmp_path: Path) -> None:
    j = Journal(tmp_path, session_id="s1")
    e = j.append(call("interact", ok=False, error_code="STALE_REF", summary="interact: STALE_REF:\n  gone\n"))
    assert e["ok"] is False and e["error_code"] == "STALE_REF"
    assert e["summary"] == "interact: STALE_REF: gone"


def test_bad_entries_are_refused(tmp_path: Path) -> None:
    j = Journal(tmp_path, session_id="s1")
    with pytest.raises(ValueError, match="source"):
        j.append(call(source="telepathy"))
    with pytest.raises(ValueError, match="tool"):
        j.append({"ok": True})
    with pytest.raises(ValueError, match="session_id"):
        Journal(tmp_path).append(call())
    assert j.entries == []


def test_args_are_sanitized_on_disk_and_in_memory(tmp_path: Path) -> None:
    secrets = SecretStore({"PW": "hunter2-xyz"})
    j = Journal(tmp_path, session_id="s1", secrets=secrets)
    j.append(
        call(
            "form_input",
            args={"target": "ax_3", "value": "hunter2-xyz", "password": "whatever", "text": "y" * 700},
            summary="typed hunter2-xyz",
            intent="log in with hunter2-xyz",
        )
    )
    raw = journal_files(tmp_path)[0].read_text()
    assert "hunter2-xyz" not in raw
    [e] = j.entries
    assert e["args"]["value"] == "${SECRET:PW}" and e["args"]["password"] == "[REDACTED]"
    assert e["args"]["text"].endswith("…[+200 chars]")
    assert e["summary"] == "typed ${SECRET:PW}" and e["intent"] == "log in with ${SECRET:PW}"


def test_one_file_per_utc_day_and_pruning_by_age(tmp_path: Path) -> None:
    clock = FakeClock(datetime(2026, 3, 1, 23, 59, 59, tzinfo=UTC))
    j = Journal(tmp_path, session_id="s1", clock=clock, max_age_days=14)
    j.append(call())
    clock.tick(seconds=2)
    j.append(call())
    assert [p.name for p in journal_files(tmp_path)] == ["journal-20260301.jsonl", "journal-20260302.jsonl"]
    j.close()
    # Twenty days on, a new journal prunes both files at start; a file 14 days old is kept.
    (tmp_path / "journal" / "journal-20260307.jsonl").write_text("")
    later = FakeClock(datetime(2026, 3, 21, 12, tzinfo=UTC))
    Journal(tmp_path, session_id="s2", clock=later, max_age_days=14)
    assert [p.name for p in journal_files(tmp_path)] == ["journal-20260307.jsonl"]


def test_memory_is_bounded_but_disk_keeps_everything(tmp_path: Path) -> None:
    j = Journal(tmp_path, session_id="s1", max_memory=5)
    for i in range(12):
        j.append(call(args={"i": i}))
    assert [e["seq"] for e in j.entries] == [8, 9, 10, 11, 12]
    assert len(read_journal(tmp_path, session_id="s1")) == 12
    # Asking for the session explicitly reads the complete disk copy.
    assert len(j.recent(100, session_id="s1")) == 12
    assert len(j.recent(100)) == 5


def test_recent_filters(tmp_path: Path) -> None:
    clock = FakeClock(datetime(2026, 5, 5, 10, tzinfo=UTC))
    j = Journal(tmp_path, session_id="s1", clock=clock)
    for i in range(10):
        j.append(call("navigate" if i % 2 else "read_page"))
        clock.tick(seconds=1)
    other = Journal(tmp_path, session_id="s2", clock=clock)
    other.append(call("tabs_list"))

    assert [e["seq"] for e in j.recent(3)] == [8, 9, 10]
    assert [e["seq"] for e in j.recent(10, tool="navigate")] == [2, 4, 6, 8, 10]
    assert [e["seq"] for e in j.recent(10, since=7)] == [8, 9, 10]
    assert [e["seq"] for e in j.recent(10, since="7")] == [8, 9, 10]
    assert [e["seq"] for e in j.recent(10, since="2026-05-05T10:00:07Z")] == [8, 9, 10]
    assert [e["seq"] for e in j.recent(10, since="2026-05-05T12:00:07+02:00")] == [8, 9, 10]
    assert [e["tool"] for e in j.recent(10, session_id="s2")] == ["tabs_list"]
    assert j.recent(10, session_id="nobody") == []
    with pytest.raises(ValueError, match="since"):
        j.recent(10, since="yesterday")


def test_summary_reports_counts_last_success_and_loops(tmp_path: Path) -> None:
    j = Journal(tmp_path, session_id="s1")
    j.append(call("navigate"))
    j.append(call("interact", intent="press buy", args={"target": "ax_1"}))
    for _ in range(3):  # a loop: same tool, args and code three times in a row
        j.append(call("interact", ok=False, error_code="STALE_REF", args={"target": "ax_9"}))
    j.append(call("interact", ok=False, error_code="STALE_REF", args={"target": "ax_8"}))  # other args
    j.append(call("read_page", ok=False, error_code="TIMEOUT"))
    j.append(call("read_page", ok=False, error_code="TIMEOUT"))
    j.append(call("read_page"))  # a success ends a run
    j.append(call("read_page", ok=False, error_code="TIMEOUT"))

    s = j.summary()
    assert s["calls"] == 10 and s["ok"] == 3 and s["failed"] == 7
    assert s["calls_per_tool"] == {"interact": 5, "read_page": 4, "navigate": 1}
    assert s["failures_by_code"] == {"STALE_REF": 4, "TIMEOUT": 3}
    assert s["last_success"]["seq"] == 9 and s["last_success"]["tool"] == "read_page"
    assert [
        (r["tool"], r["args"], r["error_code"], r["count"], r["first_seq"], r["last_seq"])
        for r in s["repeated_failures"]
    ] == [
        ("interact", {"target": "ax_9"}, "STALE_REF", 3, 3, 5),
        ("read_page", {"url": "http://127.0.0.1/"}, "TIMEOUT", 2, 7, 8),
    ]
    assert j.summary(tool="navigate")["calls_per_tool"] == {"navigate": 1}
    assert j.summary(since=8)["calls"] == 2
    empty = Journal(tmp_path / "other", session_id="s9").summary()
    assert empty["calls"] == 0 and empty["last_success"] is None and empty["repeated_failures"] == []


def test_last_success_carries_intent_when_given(tmp_path: Path) -> None:
    j = Journal(tmp_path, session_id="s1")
    j.append(call("interact", intent="press buy"))
    assert j.summary()["last_success"]["intent"] == "press buy"
    j.append(call("read_page"))
    assert "intent" not in j.summary()["last_success"]


WRITER = """
import sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from ocnb.audit.journal import Journal
j = Journal({home!r}, session_id="proc")
print("ready", flush=True)
go = Path({go!r})
while not go.exists():
    time.sleep(0.001)
for i in range(500):
    j.append({{"tool": "navigate", "ok": True, "args": {{"i": i, "pad": "p" * 200}}, "summary": "x", "source": "mcp"}})
    if i % 50 == 0:
        time.sleep(0.001)  # give the other writers a turn
"""


def test_two_threads_and_a_second_process_lose_nothing(tmp_path: Path) -> None:
    go = tmp_path / "go"
    script = WRITER.format(root=str(ROOT), home=str(tmp_path), go=str(go))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        j = Journal(tmp_path, session_id="kernel")
        barrier = threading.Barrier(2)

        def work(name: str) -> None:
            barrier.wait()
            for i in range(500):
                j.append({"tool": "interact", "ok": True, "args": {"t": name, "i": i, "pad": "q" * 200}})
                if i % 50 == 0:
                    time.sleep(0.001)

        threads = [threading.Thread(target=work, args=(n,)) for n in ("a", "b")]
        for t in threads:
            t.start()
        go.touch()
        for t in threads:
            t.join()
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
    raw = b"".join(p.read_bytes() for p in journal_files(tmp_path))
    text_lines = raw.decode().splitlines()
    assert len(text_lines) == 1500 and raw.endswith(b"\n")
    entries = [json.loads(line) for line in text_lines]  # every line is whole JSON
    kernel = [e for e in entries if e["session_id"] == "kernel"]
    other = [e for e in entries if e["session_id"] == "proc"]
    assert sorted(e["seq"] for e in kernel) == list(range(1, 1001))
    assert sorted((e["args"]["t"], e["args"]["i"]) for e in kernel) == sorted((t, i) for t in "ab" for i in range(500))
    assert [e["seq"] for e in other] == list(range(1, 501))
    assert [e["args"]["i"] for e in other] == list(range(500))
    # The writers really overlapped: some of the process's lines sit between the threads' lines.
    switches = sum(1 for a, b in zip(entries, entries[1:], strict=False) if a["session_id"] != b["session_id"])
    assert switches >= 2, switches


def test_oc_journal_tool_reads_recent_and_summary(tmp_path: Path) -> None:
    from ocnb.tools.observability import oc_journal

    j = Journal(tmp_path, session_id="s1")
    for i in range(4):
        j.append(call("navigate", ok=i != 2, error_code=None if i != 2 else "TIMEOUT"))
    ctx = SimpleNamespace(session=SimpleNamespace(id="s1", journal=j))
    recent = asyncio.run(oc_journal(ctx, {"kind": "recent", "limit": 2}))
    assert recent["count"] == 2 and [e["seq"] for e in recent["entries"]] == [3, 4]
    assert recent["session_id"] == "s1"
    summary = asyncio.run(oc_journal(ctx, {"kind": "summary"}))
    assert summary["failures_by_code"] == {"TIMEOUT": 1} and summary["last_success"]["seq"] == 4
    other = asyncio.run(oc_journal(ctx, {"session_id": "s1", "since": 3}))
    assert [e["seq"] for e in other["entries"]] == [4]


def test_oc_journal_refuses_bad_since(tmp_path: Path) -> None:
    from ocnb.errors import InvalidArgument
    from ocnb.tools.observability import oc_journal

    ctx = SimpleNamespace(session=SimpleNamespace(id="s1", journal=Journal(tmp_path, session_id="s1")))
    with pytest.raises(InvalidArgument):
        asyncio.run(oc_journal(ctx, {"since": "last tuesday"}))


def test_a_deleted_day_file_is_started_again(tmp_path: Path) -> None:
    j = Journal(tmp_path, session_id="s1")
    j.append(call())
    journal_files(tmp_path)[0].unlink()
    j.append(call())
    assert [e["seq"] for e in read_journal(tmp_path)] == [2]


def test_oc_journal_summary_window(tmp_path: Path) -> None:
    from ocnb.tools.observability import oc_journal

    j = Journal(tmp_path, session_id="s1")
    for _ in range(30):
        j.append(call("navigate"))
    ctx = SimpleNamespace(session=SimpleNamespace(id="s1", journal=j))
    assert asyncio.run(oc_journal(ctx, {"kind": "summary"}))["calls"] == 30
    assert asyncio.run(oc_journal(ctx, {"kind": "summary", "limit": 5}))["calls"] == 5
