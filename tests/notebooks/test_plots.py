"""Plots from the journal, the token report and replay_df: what a person sees (a PNG with a bar per
call, failures in red and named), from a real session's journal."""

from __future__ import annotations

import io
from typing import Any

import pytest

import ocnb
from ocnb.commands.demosite import DemoSite

plots = pytest.importorskip("ocnb.widgets.plots")
pytest.importorskip("matplotlib")
pytestmark = pytest.mark.browser


def test_the_call_timeline_has_a_bar_per_call_and_names_failures(session: ocnb.Session, site: DemoSite) -> None:
    import matplotlib

    matplotlib.use("Agg")
    session.navigate(url=site.page("form.html"))
    session.interact(action="fill", query="Full name", value="Ada")
    session.call("navigate", url="file:///etc/passwd")  # refused: BLOCKED_URL
    journal = session.journal_df()
    fig = plots.call_timeline(journal)
    ax = fig.axes[0]
    bars = ax.patches
    assert len(bars) == len(journal)
    red = [b for b in bars if b.get_facecolor()[:3] == matplotlib.colors.to_rgb("#d33")]
    assert len(red) == int((~journal["ok"].astype(bool)).sum()) >= 1
    assert any(t.get_text() == "BLOCKED_URL" for t in ax.texts)
    assert [t.get_text() for t in ax.get_yticklabels()] == list(dict.fromkeys(journal["tool"]))
    png = io.BytesIO()
    fig.savefig(png, format="png")
    assert png.getvalue()[:4] == b"\x89PNG"


def test_tokens_by_tool_draws_the_largest_first() -> None:
    import matplotlib
    import pandas as pd

    matplotlib.use("Agg")
    table = pd.DataFrame({"tool": ["a", "b", "c"], "tokens": [5, 50, 20]})
    fig = plots.tokens_by_tool(table)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["b", "c", "a"]
    assert [round(b.get_width()) for b in fig.axes[0].patches] == [50, 20, 5]


def _journal(calls: list[tuple[str, str, str | None, float]]) -> Any:
    """A journal frame of ``(mm:ss on 2026-01-01, tool, error code or None, duration_ms)`` calls."""
    import pandas as pd

    return pd.DataFrame(
        {
            "ts": pd.to_datetime([f"2026-01-01T00:{t}Z" for t, *_ in calls], utc=True),
            "tool": [tool for _, tool, _, _ in calls],
            "ok": [code is None for _, _, code, _ in calls],
            "error_code": [code for _, _, code, _ in calls],
            "duration_ms": [ms for *_, ms in calls],
        }
    )


def test_the_timeline_starts_when_the_first_call_began() -> None:
    import matplotlib

    matplotlib.use("Agg")
    journal = _journal([("00:12", "navigate", None, 12000.0), ("00:13", "read_page", "TIMEOUT", 500.0)])
    bars = plots.call_timeline(journal).axes[0].patches
    assert [(round(b.get_x(), 1), round(b.get_width(), 1)) for b in bars] == [(0.0, 12.0), (12.5, 0.5)]


def test_replay_runs_side_by_side_are_told_apart_and_centred_on_their_step() -> None:
    import matplotlib
    import pandas as pd

    matplotlib.use("Agg")
    replay = pd.DataFrame(
        {
            "session_id": ["a", "a", "b", "b"],
            "step_index": [0, 1, 0, 1],
            "elapsed_ms": [30.0, 40.0, 35.0, 900.0],
            "ok": [True, True, True, False],
        }
    )
    ax = plots.replay_durations(replay).axes[0]
    bars = ax.patches
    colours = [matplotlib.colors.to_hex(b.get_facecolor()) for b in bars]
    assert colours[0] != colours[2]  # run a's step 0 and run b's step 0
    assert colours[3] == "#dd3333"  # the failed step
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["run 1: a", "run 2: b", "failed step"]
    centre = (bars[0].get_x() + bars[2].get_x() + bars[2].get_width()) / 2
    assert abs(centre - 0) < 1e-9 and list(ax.get_xticks()) == [0, 1]


def test_the_timeline_leaves_room_for_the_error_codes() -> None:
    import matplotlib

    matplotlib.use("Agg")
    journal = _journal([("00:10", "navigate", None, 10000.0), ("00:40", "wait_for", "TIMEOUT", 9000.0)])
    ax = plots.call_timeline(journal).axes[0]
    assert ax.get_xlim()[1] >= 40 * 1.15  # the last call ends at 40 s; its code is written after it
