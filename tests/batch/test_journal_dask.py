"""A batch's journal by worker, by day and by column (ocnb.batch.dask.journal_df), and as a Dask DataFrame
(journal_ddf): written through the real Journal into several workers' homes over several days."""

from __future__ import annotations

import builtins
import io
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

pytest.importorskip("distributed")

from ocnb.audit.journal import Journal, journal_files  # noqa: E402 - after the skip
from ocnb.audit.telemetry import JOURNAL_COLUMNS  # noqa: E402
from ocnb.audit.telemetry import journal_df as one_journal  # noqa: E402
from ocnb.batch.dask import journal_ddf, journal_df, worker_home  # noqa: E402

WORKERS = ["tcp://127.0.0.1:4001", "tcp://127.0.0.1:4002", "tcp://127.0.0.1:4003"]
DAYS = [datetime(2026, 4, d, 23, 59, 58, tzinfo=UTC) for d in (1, 2, 3)]  # each day's last 2 s, and past


def _write(home: Path, session: str, start: datetime, n: int) -> None:
    now = [start]

    def clock() -> datetime:
        return now[0]

    j = Journal(home, session_id=session, clock=clock, max_age_days=100_000)
    for i in range(n):
        j.append({"tool": "navigate", "ok": i % 3 != 0, "args": {"i": i}, "duration_ms": i, "source": "replay"})
        now[0] += timedelta(milliseconds=700)  # the 4th line of a day falls on the next day
    j.close()


@pytest.fixture
def batch(tmp_path: Path) -> Path:
    """A batch home: 2 lines of its own, 5 lines per worker per day (3 workers × 3 days of start)."""
    _write(tmp_path, "caller", DAYS[0], 2)
    for w, address in enumerate(WORKERS):
        for day in DAYS:
            _write(worker_home(tmp_path, address), f"w{w}", day + timedelta(milliseconds=w), 5)
    return tmp_path


def _all(home: Path) -> pd.DataFrame:
    """Every line, by the plain reader (no filter): the reference."""
    frames = [one_journal(home=home).assign(worker=pd.NA)]
    for address in WORKERS:
        wh = worker_home(home, address)
        frames.append(one_journal(home=wh).assign(worker=wh.name))
    df = pd.concat(frames, ignore_index=True).astype({"worker": "string"})
    return df.sort_values("ts", kind="stable").reset_index(drop=True)


def test_no_filter_is_every_line_of_every_home_with_the_documented_dtypes(batch: Path) -> None:
    df = journal_df(batch)
    assert {k: str(v) for k, v in df.dtypes.items()} == {**JOURNAL_COLUMNS, "worker": "string"}
    assert len(df) == 2 + 3 * 3 * 5
    pd.testing.assert_frame_equal(df, _all(batch))
    assert df["ts"].is_monotonic_increasing
    # 4 day files per worker: each day's 5 lines spill into the next day
    assert [len(journal_files(worker_home(batch, a))) for a in WORKERS] == [4, 4, 4]


def test_filters_return_exactly_the_matching_rows(batch: Path) -> None:
    every = _all(batch)
    w1 = worker_home(batch, WORKERS[1]).name
    # by worker: its address or its folder name, one or a list; the caller's own lines are left out
    for worker in (WORKERS[1], w1, [w1]):
        pd.testing.assert_frame_equal(
            journal_df(batch, worker=worker), every[every["worker"] == w1].reset_index(drop=True)
        )
    two = journal_df(batch, worker=[WORKERS[0], WORKERS[2]])
    assert set(two["worker"]) == {worker_home(batch, WORKERS[0]).name, worker_home(batch, WORKERS[2]).name}
    assert len(two) == 30
    assert journal_df(batch, worker="tcp://nobody:1").empty
    # by time: since inclusive, until exclusive, a date is its midnight (UTC)
    since, until = pd.Timestamp("2026-04-02T00:00:00Z"), pd.Timestamp("2026-04-03T00:00:00.700Z")
    want = every[(every["ts"] >= since) & (every["ts"] < until)].reset_index(drop=True)
    got = journal_df(batch, since="2026-04-02", until="2026-04-03T00:00:00.700Z")
    pd.testing.assert_frame_equal(got, want)
    assert len(got) == 3 * (5 + 1)  # each worker: the 2nd's 5 lines (2 spilt from the 1st), 1 of the 3rd's
    day = journal_df(batch, since="2026-04-02", until=datetime(2026, 4, 3, tzinfo=UTC))
    assert (day["ts"].dt.strftime("%Y-%m-%d") == "2026-04-02").all() and len(day) == 15
    # by column: only those, in that order, same dtypes and values
    cols = journal_df(batch, worker=w1, columns=["worker", "ok", "duration_ms"])
    assert list(cols.columns) == ["worker", "ok", "duration_ms"]
    pd.testing.assert_frame_equal(
        cols, every.loc[every["worker"] == w1, ["worker", "ok", "duration_ms"]].reset_index(drop=True)
    )
    assert journal_df(batch, session_id="w2", columns="seq")["seq"].tolist() == [1, 2, 3, 4, 5] * 3
    with pytest.raises(ValueError, match="unknown"):
        journal_df(batch, columns=["nope"])
    with pytest.raises(ValueError, match="until"):
        journal_df(batch, until="yesterday")


def test_the_plain_journal_df_has_until(batch: Path) -> None:
    home = worker_home(batch, WORKERS[0])
    whole = one_journal(home=home)
    before = one_journal(home=home, until="2026-04-02T00:00:00.000Z")
    pd.testing.assert_frame_equal(before, whole[whole["ts"] < pd.Timestamp("2026-04-02", tz="UTC")])
    assert len(before) == 3 and len(one_journal(home=home, since=3, until="2026-04-02")) == 0


def test_day_files_outside_the_range_are_not_opened(batch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a day file out of the range made unreadable: reading it would raise
    out_of_range = worker_home(batch, WORKERS[0]) / "journal" / "journal-20260401.jsonl"
    out_of_range.chmod(0)
    opened: list[str] = []
    real_open = builtins.open
    real_io_open = io.open

    def spy(file: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(os.fspath(file) if isinstance(file, str | os.PathLike) else str(file))
        return real_open(file, *args, **kwargs)

    def io_spy(file: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(os.fspath(file) if isinstance(file, str | os.PathLike) else str(file))
        return real_io_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy)
    monkeypatch.setattr(io, "open", io_spy)
    df = journal_df(batch, since="2026-04-02", until="2026-04-03")
    one = one_journal(home=worker_home(batch, WORKERS[0]), since="2026-04-02T12:00:00Z", until="2026-04-03T12:00Z")
    monkeypatch.undo()
    assert len(df) == 15 and len(one) == 3 + 2
    assert sorted({Path(p).name for p in opened}) == ["journal-20260402.jsonl", "journal-20260403.jsonl"], opened
    assert sum(p.endswith("journal-20260402.jsonl") for p in opened) == 3 + 1  # 3 workers' + worker 0's
    if os.geteuid() != 0:  # root reads a 0-mode file all the same
        with pytest.raises(PermissionError):
            journal_df(batch)


def test_a_torn_last_line_is_skipped_as_journal_df_skips_it(batch: Path) -> None:
    day = worker_home(batch, WORKERS[2]) / "journal" / "journal-20260404.jsonl"
    with day.open("ab") as f:
        f.write(b'{"ts":"2026-04-04T00:00:09.000Z","seq":99,"session_id":"w2","tool":"navi')  # killed mid-line
    df = journal_df(batch)
    assert len(df) == 47 and 99 not in set(df["seq"])
    assert len(one_journal(home=worker_home(batch, WORKERS[2]))) == 15
    dd = pytest.importorskip("dask.dataframe")
    lazy = journal_ddf(batch)
    assert isinstance(lazy, dd.DataFrame)
    pd.testing.assert_frame_equal(_computed(lazy), df)


def _computed(lazy: Any) -> pd.DataFrame:
    return lazy.compute(scheduler="sync").sort_values("ts", kind="stable").reset_index(drop=True)


def test_journal_ddf_is_journal_df_one_partition_per_worker_day(batch: Path) -> None:
    pytest.importorskip("dask.dataframe")
    lazy = journal_ddf(batch)
    assert lazy.npartitions == 1 + 3 * 4  # the caller's day file, and 4 day files per worker
    assert {k: str(v) for k, v in lazy.dtypes.items()} == {**JOURNAL_COLUMNS, "worker": "string"}
    pd.testing.assert_frame_equal(_computed(lazy), journal_df(batch))
    by_worker = lazy.groupby("worker", dropna=False).ok.mean().compute(scheduler="sync")
    want = journal_df(batch).groupby("worker", dropna=False).ok.mean()
    pd.testing.assert_series_equal(by_worker.sort_index(), want.sort_index())
    # the filters, as journal_df's
    kw: dict[str, Any] = {
        "worker": WORKERS[:2],
        "since": "2026-04-02",
        "until": "2026-04-04",
        "columns": ["ts", "worker", "ok"],
    }
    part = journal_ddf(batch, **kw)
    assert part.npartitions == 2 * 2
    pd.testing.assert_frame_equal(_computed(part), journal_df(batch, **kw))
    empty = journal_ddf(batch, since="2030-01-01")
    pd.testing.assert_frame_equal(empty.compute(), journal_df(batch, since="2030-01-01"))
