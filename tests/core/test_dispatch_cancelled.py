"""A call cancelled on the browser thread (any face: a caller's time-out, an MCP client's cancel) is
journaled once as CANCELLED, and the session goes on."""

from __future__ import annotations

import time

import pytest

import ocnb
from ocnb.audit.journal import read_journal
from ocnb.dispatch import dispatch_async

pytestmark = pytest.mark.browser


def test_a_cancelled_call_leaves_one_cancelled_journal_line(session: ocnb.Session) -> None:
    future = session.runtime.submit(
        dispatch_async(session, "wait_for", {"selector": "#never-there", "timeout_ms": 30000}, source="api")
    )
    time.sleep(0.5)
    assert future.cancel()
    deadline = time.monotonic() + 10
    lines: list[dict] = []
    while time.monotonic() < deadline and not lines:
        lines = [e for e in read_journal(session.home, session_id=session.id) if e.get("error_code") == "CANCELLED"]
        time.sleep(0.05)
    assert [(e["tool"], e["ok"], e["source"]) for e in lines] == [("wait_for", False, "api")]
    events = [e for e in session.trace_df().to_dict("records") if e.get("kind") == "tool_result"]
    assert events and events[-1]["tool"] == "wait_for"
    assert session.tabs_context().ok  # the lock was released
