"""The batch ledger (ocnb.batch.ledger): claims, records, and what a rerun decides from the files."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from ocnb.batch.ledger import LEDGER_DIR, Ledger, batch_dir, read, remove, rerun_decision, unknown_row
from ocnb.batch.row import UNKNOWN_OUTCOME


def _result(row: int, outcome: str = "done") -> dict[str, object]:
    return {"row": row, "ok": outcome == "done", "outcome": outcome, "failure_code": None, "worker": "tcp://a:1"}


def test_a_claim_succeeds_once_per_task(tmp_path: Path) -> None:
    with (
        Ledger(batch_dir(tmp_path, "b1"), "tcp://a:1") as first,
        Ledger(batch_dir(tmp_path, "b1"), "tcp://b:2") as second,
    ):
        assert first.claim("task-0")
        assert not second.claim("task-0")  # another process, the same task: a rerun
        assert second.claim("task-1")
    with Ledger(batch_dir(tmp_path, "b2"), "tcp://a:1") as other_batch:
        assert other_batch.claim("task-0")  # a claim belongs to one batch


def test_a_first_run_writes_one_file_per_process_and_reads_nothing(tmp_path: Path) -> None:
    with Ledger(batch_dir(tmp_path, "b"), "tcp://127.0.0.1:4001") as book:
        assert book.claim("t")
        book.committed("t", 3, 2)
        book.finished("t", _result(3))
        book.finished("t", _result(4, "failed"))  # never reached its commit step
    files = list((tmp_path / LEDGER_DIR / "b").glob("*.jsonl"))
    assert [f.name for f in files] == [f"tcp_127.0.0.1_4001-{os.getpid()}.jsonl"]
    lines = [json.loads(x) for x in files[0].read_text().splitlines()]
    assert [(x["row"], x["ev"]) for x in lines] == [(3, "commit"), (3, "done"), (4, "done")]


def test_rerun_decisions(tmp_path: Path) -> None:
    with Ledger(batch_dir(tmp_path, "b"), "tcp://dead:1") as dead:
        dead.claim("t")
        dead.committed("t", 0, 2)
        dead.finished("t", _result(0))  # finished: returned as recorded
        dead.committed("t", 1, 2)  # caught at its commit step: unknown
        dead.committed("u", 2, 2)  # another task's row: not this task's business
        dead.finished("t", _result(5, "failed"))  # failed before its commit step: returned as recorded
    records = read(tmp_path / LEDGER_DIR / "b", "t")
    assert sorted(records) == [0, 1, 5]
    assert rerun_decision(records.get(0), 0) == _result(0)
    unknown = rerun_decision(records.get(1), 1)
    assert unknown is not None
    assert (unknown["outcome"], unknown["failure_code"], unknown["worker"], unknown["ok"]) == (
        "unknown",
        UNKNOWN_OUTCOME,
        "tcp://dead:1",
        False,
    )
    assert unknown == unknown_row(1, records[1])
    assert rerun_decision(records.get(1), 1, idempotent=True) is None  # the site dedupes: replay it
    assert rerun_decision(records.get(2), 2) is None  # no record: replayed
    assert rerun_decision(records.get(5), 5)["outcome"] == "failed"  # type: ignore[index]


def test_a_row_finished_by_a_second_run_is_done_whatever_the_file_order(tmp_path: Path) -> None:
    """The row committed in one process and finished in a later one (idempotent replay): done wins."""
    with Ledger(batch_dir(tmp_path, "b"), "tcp://z:9") as first:
        first.committed("t", 0, 1)
    with Ledger(batch_dir(tmp_path, "b"), "tcp://a:1") as later:
        later.path = later.dir / "a-later.jsonl"  # sorts before the first one's file
        later.finished("t", _result(0))
    decided = rerun_decision(read(tmp_path / LEDGER_DIR / "b", "t").get(0), 0)
    assert decided is not None and decided["outcome"] == "done"


def test_a_torn_last_line_is_skipped(tmp_path: Path) -> None:
    with Ledger(batch_dir(tmp_path, "b"), "tcp://dead:1") as dead:
        dead.committed("t", 0, 2)
        dead.finished("t", _result(0))
        dead.committed("t", 1, 2)
    with open(dead.path, "ab") as fh:  # killed mid-write of row 1's done record
        fh.write(b'{"t":"t","row":1,"ev":"done","result":{"row":1,"ok":tr')
    with open(tmp_path / LEDGER_DIR / "b" / "garbage.jsonl", "wb") as fh:
        fh.write(b"\x00\xff not json\n[1, 2]\n{}\n")
    records = read(tmp_path / LEDGER_DIR / "b", "t")
    assert rerun_decision(records.get(0), 0) == _result(0)
    assert rerun_decision(records.get(1), 1)["outcome"] == "unknown"  # type: ignore[index]


def test_recording_costs_little(tmp_path: Path) -> None:
    """A committed row costs two fsync'd appends; printed for docs/scale.md (a loose bound only)."""
    n = 200
    with Ledger(batch_dir(tmp_path, "b"), "tcp://a:1") as book:
        book.claim("t")
        t0 = time.perf_counter()
        for i in range(n):
            book.committed("t", i, 2)
            book.finished("t", _result(i))
        per_row = (time.perf_counter() - t0) / n * 1000
    print(f"\nledger: {per_row:.3f} ms per committed row (commit + done, both fsync'd)")
    assert per_row < 50


def test_remove_leaves_what_is_not_the_ledgers(tmp_path: Path) -> None:
    with Ledger(batch_dir(tmp_path, "b"), "w") as book:
        book.claim("t")
        book.committed("t", 0, 1)
    remove(batch_dir(tmp_path, "b"))
    assert not batch_dir(tmp_path, "b").exists()
    mine = tmp_path / "mine"
    with Ledger(mine, "local") as book:
        book.committed("t", 0, 1)
    (mine / "notes.txt").write_text("the caller's")
    remove(mine)
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]
