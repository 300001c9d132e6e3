"""Issue 16 (8): a torn last line (writer killed mid-write) does not swallow the next entry."""

from __future__ import annotations

import json
from pathlib import Path

from ocnb.audit.journal import Journal, read_journal


def _entry(seq: int) -> dict:
    return {"seq": seq, "session_id": "s-torn", "tool": "navigate", "ok": True, "summary": "ok", "source": "api"}


def test_entry_after_a_torn_line_starts_on_a_new_line(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    first = journal.append(_entry(1))
    path = journal.path_for(first["ts"])
    with open(path, "ab") as f:  # another writer, killed in the middle of its line
        f.write(b'{"ts":"2026-01-01T00:00:00.000Z","seq":99,"session_id":"s-other","tool":"nav')
    journal.append(_entry(2))
    journal.append(_entry(3))
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""  # ends with a newline
    parsed = []
    for line in lines[:-1]:
        try:
            parsed.append(json.loads(line))
        except ValueError:
            parsed.append(None)
    assert [p and p["seq"] for p in parsed] == [1, None, 2, 3]
    seqs = [e["seq"] for e in read_journal(tmp_path, session_id="s-torn")]
    assert seqs == [1, 2, 3]


def test_a_fresh_journal_after_a_torn_line(tmp_path: Path) -> None:
    first = Journal(tmp_path).append(_entry(1))
    path = Journal(tmp_path).path_for(first["ts"])
    with open(path, "ab") as f:
        f.write(b'{"torn":')
    again = Journal(tmp_path)  # a new process: it knows nothing of the file's last write
    again.append(_entry(2))
    assert [e["seq"] for e in read_journal(tmp_path, session_id="s-torn")] == [1, 2]
    assert path.read_bytes().count(b"\n") == 3
