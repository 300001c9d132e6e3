"""Front-end assets are found in a source checkout, and the screen widget loads them."""

from __future__ import annotations

from pathlib import Path

import pytest

import ocnb
from ocnb.widgets import ScreenView, assets_dir
from ocnb.widgets.assets import asset

ROOT = Path(__file__).resolve().parents[2]


def test_source_checkout_reads_the_repo_widgets_folder() -> None:
    assert assets_dir() == ROOT / "widgets"
    screen = ScreenView()
    assert screen._esm == (ROOT / "widgets" / "screen.js").read_text(encoding="utf-8")
    assert screen._css == (ROOT / "widgets" / "screen.css").read_text(encoding="utf-8")
    with pytest.raises(FileNotFoundError, match="nope.js"):
        asset("nope.js")


def test_clicks_from_the_front_end_reach_python_clamped() -> None:
    screen = ScreenView()
    seen: list[tuple[float, float]] = []
    screen.on_click(lambda fx, fy: seen.append((fx, fy)))
    screen._handle_custom_msg({"type": "click", "fx": 0.25, "fy": 1.5}, [])
    screen._handle_custom_msg({"type": "hover", "fx": 0.1, "fy": 0.1}, [])  # not a click
    screen._handle_custom_msg({"type": "click", "fx": "x"}, [])  # malformed: ignored
    assert seen == [(0.25, 1.0)]


@pytest.mark.browser
def test_quiet_calls_leave_no_journal_entry_or_trace_event(journaled: ocnb.Session) -> None:
    from ocnb.audit.trace import read_events
    from ocnb.widgets import SessionCaller

    session = journaled

    def traced() -> list[str]:
        return [e["kind"] for e in read_events(session.home, session.id) if e.get("tool") == "tabs_context"]

    call = SessionCaller(session)
    entries, events = len(session.journal.entries), traced()
    assert call("tabs_context", quiet=True).ok
    assert len(session.journal.entries) == entries and traced() == events
    assert call("tabs_context").ok  # the same call, not quiet: journaled as a widget call and traced
    assert session.journal.entries[-1]["tool"] == "tabs_context" and session.journal.entries[-1]["source"] == "widget"
    assert traced() == [*events, "tool_call", "tool_result"]
