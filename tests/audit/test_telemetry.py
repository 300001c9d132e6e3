"""journal_df and trace_df: documented columns and dtypes, filters, empty frames, odd lines."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd

from ocnb.audit.journal import Journal, journal_files
from ocnb.audit.telemetry import JOURNAL_COLUMNS, TRACE_COLUMNS, journal_df, trace_df
from ocnb.audit.trace import TraceWriter, event_files, trace_dir


def dtypes(df: pd.DataFrame) -> dict[str, str]:
    return {k: str(v) for k, v in df.dtypes.items()}


def fill_journal(home: Path) -> None:
    now = [datetime(2026, 4, 1, 9, 0, 0, 123000, tzinfo=UTC)]

    def clock() -> datetime:
        return now[0]

    j = Journal(home, session_id="s1", clock=clock)
    j.append(
        {
            "tool": "navigate",
            "ok": True,
            "args": {"url": "http://127.0.0.1/"},
            "duration_ms": 12.25,
            "summary": "navigate: ok",
            "tab_id": "t1",
        }
    )
    now[0] += timedelta(seconds=1)
    j.append(
        {
            "tool": "interact",
            "ok": False,
            "error_code": "STALE_REF",
            "args": {"target": "ax_2"},
            "duration_ms": 3,
            "summary": "interact: STALE_REF",
            "intent": "press buy",
            "source": "mcp",
        }
    )
    now[0] += timedelta(seconds=1)
    Journal(home, session_id="s2", clock=clock).append({"tool": "read_page", "ok": True, "source": "magic"})


def test_journal_df_columns_dtypes_and_values(tmp_path: Path) -> None:
    fill_journal(tmp_path)
    df = journal_df(home=tmp_path)
    assert list(df.columns) == list(JOURNAL_COLUMNS)
    assert dtypes(df) == JOURNAL_COLUMNS
    assert len(df) == 3
    first, second = df.iloc[0], df.iloc[1]
    assert first["ts"] == pd.Timestamp("2026-04-01T09:00:00.123Z")
    assert first["seq"] == 1 and bool(first["ok"]) is True
    assert first["tab_id"] == "t1" and pd.isna(first["error_code"]) and pd.isna(first["intent"])
    assert first["duration_ms"] == 12.25 and first["args"] == {"url": "http://127.0.0.1/"}
    assert second["intent"] == "press buy" and second["error_code"] == "STALE_REF"
    assert second["source"] == "mcp" and pd.isna(second["tab_id"])
    assert df["ok"].tolist() == [True, False, True]


def test_journal_df_filters(tmp_path: Path) -> None:
    fill_journal(tmp_path)
    assert journal_df("s2", home=tmp_path)["tool"].tolist() == ["read_page"]
    assert journal_df("s1", since=1, home=tmp_path)["seq"].tolist() == [2]
    assert journal_df(since="2026-04-01T09:00:01.123Z", home=tmp_path)["tool"].tolist() == ["interact", "read_page"]


def test_journal_df_reads_ocnb_home_by_default(ocnb_home: Path) -> None:
    fill_journal(ocnb_home)
    assert len(journal_df()) == 3


def test_empty_and_missing_data_give_typed_empty_frames(tmp_path: Path) -> None:
    for df, cols in ((journal_df(home=tmp_path), JOURNAL_COLUMNS), (trace_df("none", home=tmp_path), TRACE_COLUMNS)):
        assert df.empty and list(df.columns) == list(cols) and dtypes(df) == cols
    fill_journal(tmp_path)
    filtered = journal_df("nobody", home=tmp_path)
    assert filtered.empty and dtypes(filtered) == JOURNAL_COLUMNS


def test_trace_df_columns_dtypes_and_absent_intent(tmp_path: Path) -> None:
    w = TraceWriter(tmp_path, "s1")
    w.emit("tool_call", tool="interact", body={"args": {"target": "ax_1"}}, intent="press buy")
    w.emit("navigation", body={"url": "http://127.0.0.1/next"})
    w.close()
    df = trace_df("s1", home=tmp_path)
    assert list(df.columns) == list(TRACE_COLUMNS) and dtypes(df) == TRACE_COLUMNS
    assert df["seq"].tolist() == [1, 2]
    assert df["kind"].tolist() == ["tool_call", "navigation"]
    assert df.loc[0, "intent"] == "press buy" and pd.isna(df.loc[1, "intent"])
    assert df.loc[0, "tool"] == "interact" and pd.isna(df.loc[1, "tool"])
    assert df.loc[1, "body"] == {"url": "http://127.0.0.1/next"}
    assert str(df["ts"].dt.tz) == "UTC"


def test_trace_df_skips_corrupt_and_partial_lines_and_coerces_types(tmp_path: Path) -> None:
    w = TraceWriter(tmp_path, "s1")
    w.emit("console", body={"n": 1})
    w.close()
    [path] = event_files(trace_dir(tmp_path, "s1"))
    with path.open("ab") as fh:
        fh.write(b"not json at all\n")
        fh.write(b'{"ts":"bad","seq":"7","kind":5,"tool":null,"body":{}}\n')
        fh.write(b'["a list, not an event"]\n')
        fh.write(b'{"ts":"2026-01-01T00:00:00.000Z","seq":3,"kind":"console","tool":null,"body":{}}\n')
        fh.write(b'{"ts":"2026-01-01T00:00:00.000Z","seq":4,"ki')
    df = trace_df("s1", home=tmp_path)
    assert dtypes(df) == TRACE_COLUMNS
    assert len(df) == 3
    # Wrong types: a bad timestamp is NaT, a seq that is not a number is <NA>, a number as text.
    assert pd.isna(df.loc[1, "ts"]) and pd.isna(df.loc[1, "seq"]) and df.loc[1, "kind"] == "5"
    assert df["seq"].tolist()[2] == 3


def test_journal_df_survives_a_corrupt_line(tmp_path: Path) -> None:
    fill_journal(tmp_path)
    with journal_files(tmp_path)[0].open("ab") as fh:
        fh.write(b"{garbage\n")
    assert len(journal_df(home=tmp_path)) == 3


def test_trace_df_spans_rotated_files_in_order(tmp_path: Path) -> None:
    w = TraceWriter(tmp_path, "s1", max_file_bytes=1500, max_total_bytes=10**6)
    for i in range(100):
        w.emit("console", tool=None if i % 2 else "read_page", body={"i": i}, intent="x" if i % 3 == 0 else None)
    w.close()
    assert len(event_files(trace_dir(tmp_path, "s1"))) > 3
    df = trace_df("s1", home=tmp_path)
    assert dtypes(df) == TRACE_COLUMNS
    assert df["seq"].tolist() == list(range(1, 101)) and df.index.tolist() == list(range(100))
    assert [b["i"] for b in df["body"]] == list(range(100))
    assert df["intent"].notna().sum() == 34 and df["tool"].isna().sum() == 50
