"""JournalView: the journal as a live table, newest first, filtered by tool and by outcome."""

from __future__ import annotations

from typing import Any

import pytest

import ocnb
from ocnb.widgets import BrowserView, JournalView, watcher_for
from ocnb.widgets.journal_view import ALL

ENTRIES = [
    {"seq": 1, "ts": "2026-01-01T10:00:00.000Z", "tool": "navigate", "ok": True, "source": "api", "duration_ms": 12.0,
     "summary": "ok url=http://a"},
    {"seq": 2, "ts": "2026-01-01T10:00:01.000Z", "tool": "interact", "ok": False, "error_code": "AMBIGUOUS_TARGET",
     "source": "magic", "summary": "AMBIGUOUS_TARGET: 2 matches", "intent": "pay the invoice"},
    {"seq": 3, "ts": "2026-01-01T10:00:02.000Z", "tool": "navigate", "ok": False, "error_code": "BLOCKED_URL",
     "source": "widget", "summary": "BLOCKED_URL: file:"},
    {"seq": 4, "ts": "2026-01-01T10:00:03.000Z", "tool": "read_page", "ok": True, "source": "mcp", "summary": "ok"},
]  # fmt: skip


def seqs(view: JournalView) -> list[int]:
    return [r["seq"] for r in view.rows]


def test_rows_are_newest_first_and_rendered_as_a_table() -> None:
    view = JournalView(entries=lambda: ENTRIES, auto_refresh=False)
    assert seqs(view) == [4, 3, 2, 1]
    html = view.table.value
    assert html.count('class="ocnb-row') == 4 and 'class="ocnb-row ocnb-failed"' in html
    assert html.index('data-seq="4"') < html.index('data-seq="1"')
    assert "AMBIGUOUS_TARGET" in html and "pay the invoice" in html
    assert view.count.value == "4 of 4 calls"


def test_filters_by_tool_and_outcome() -> None:
    view = JournalView(entries=lambda: ENTRIES, auto_refresh=False)
    assert list(view.tool_filter.options) == [ALL, "interact", "navigate", "read_page"]
    view.tool_filter.value = "navigate"
    assert seqs(view) == [3, 1]
    view.status_filter.value = "failed"
    assert seqs(view) == [3]
    view.tool_filter.value = ALL
    assert seqs(view) == [3, 2]
    view.status_filter.value = "ok"
    assert seqs(view) == [4, 1]


def test_limit_keeps_the_newest_and_new_entries_appear_on_refresh() -> None:
    log = list(ENTRIES[:2])
    view = JournalView(entries=lambda: log, limit=2, auto_refresh=False)
    assert seqs(view) == [2, 1]
    log.extend(ENTRIES[2:])
    view.refresh_button.click()
    assert seqs(view) == [4, 3]
    assert "read_page" in view.tool_filter.options


def test_empty_journal_says_so() -> None:
    view = JournalView(entries=list, auto_refresh=False)
    assert view.rows == [] and "no calls yet" in view.table.value


@pytest.mark.browser
def test_live_table_follows_calls_from_code_and_widgets(journaled: ocnb.Session, site: Any) -> None:
    session = journaled
    journal = JournalView(session, interval=0.2)
    browser = BrowserView(session, auto_refresh=True, interval=0.2)
    watcher = watcher_for(session)
    try:
        start = max([e["seq"] for e in session.journal.entries] or [0])
        session.navigate(url=site.page("form.html"))
        session.navigate(url="file:///etc/passwd")  # refused: a failed row
        browser.reload_button.click()  # a widget action
        assert watcher.wait_idle(20)
        mine = [r for r in journal.rows if r["seq"] > start]
        assert [(r["tool"], r["source"], r["ok"]) for r in mine] == [
            ("page_reload", "widget", True),
            ("navigate", "api", False),
            ("navigate", "api", True),
        ]
        assert mine[1]["error_code"] == "BLOCKED_URL"
        # the view's own screenshots and tab lists never reach the journal
        widget_tools = {r["tool"] for r in journal.rows if r["source"] == "widget"}
        assert widget_tools == {"page_reload"}
        journal.status_filter.value = "failed"
        assert all(not r["ok"] for r in journal.rows) and journal.rows
    finally:
        journal.close()
        browser.close()
