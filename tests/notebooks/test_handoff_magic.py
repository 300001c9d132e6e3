"""Hand-off from `%oc`: a call that needs a person shows the widget in the cell (a real InteractiveShell,
real Chromium), its candidates told apart by their row and marked on the screenshot; Resume acts."""

from __future__ import annotations

import re
from typing import Any

import pytest

import ocnb
from ocnb.commands.demosite import DemoSite

pytestmark = pytest.mark.browser


def test_a_needs_human_call_shows_the_handoff_widget_and_resume_acts(ip: Any, site: DemoSite) -> None:
    from ocnb.widgets.handoff import HumanHandoff

    ip.run_line_magic("config", "OcMagics.handoff = True")
    ip.run_line_magic("oc", f"navigate {site.page('ambiguous.html')}")
    cell = ip.run_cell('r = %oc click "Delete"\nr')
    assert cell.error_in_exec is None  # no UsageError: the widget instead
    widget = ip.user_ns["r"]
    assert isinstance(widget, HumanHandoff) and cell.result is widget

    labels = [label for label, _ in widget.picker.options]
    assert len(labels) == 2 and len(set(labels)) == 2
    assert "Acme Corp" in labels[0] and "Globex" in labels[1]  # the row each sits in
    assert labels[0].startswith("#1 ") and labels[1].startswith("#2 ")

    # each candidate marked on the screenshot, where it is: two boxes, one above the other
    assert [m["position"] for m in widget.marks] == [1, 2]
    first, second = (m["box"] for m in widget.marks)
    assert second["y"] > first["y"] + first["height"] / 2 and first["width"] > 0
    svg = widget.marked.value
    assert svg.startswith("<svg") and len(re.findall(r"<rect ", svg)) == 2 and ">1</text>" in svg and ">2</text>" in svg

    globex = widget.picker.options[1][1]
    result = widget.resume(globex)
    assert result.ok
    log = ocnb.session().call("javascript_tool", expression="document.getElementById('log').innerText")
    assert log.data["result"].split("\n") == ["Deleted Invoice 1002"]  # Globex's row, and only it


def test_without_handoff_the_call_fails_in_one_line(ip: Any, site: DemoSite) -> None:
    ip.run_line_magic("config", "OcMagics.handoff = False")
    ip.run_line_magic("oc", f"navigate {site.page('ambiguous.html')}")
    cell = ip.run_cell('%oc click "Delete"')
    assert cell.error_in_exec is not None and "AMBIGUOUS_TARGET" in str(cell.error_in_exec)


def test_a_risky_pick_asks_approve_or_deny_in_the_same_widget(ip: Any, site: DemoSite) -> None:
    """Issue 42 §3: hand-off and approval compose — no dead end, no second widget, no "asked by nobody"."""
    from ocnb.widgets.handoff import HumanHandoff

    s = ocnb.session()
    ip.run_line_magic("config", "OcMagics.handoff = True")
    ip.run_line_magic("config", "OcMagics.confirm = 'risky'")
    try:
        ip.run_line_magic("oc", f"navigate {site.page('ambiguous.html')}")
        widget = ip.run_line_magic("oc", 'click "Delete"')
        assert isinstance(widget, HumanHandoff)
        globex = widget.picker.options[1][1]
        held = widget.resume(globex)  # "Delete" is risky: the same widget now asks
        assert held.error is not None and held.error.code == "APPROVAL_REQUIRED"
        assert widget.approval["name"] == "Delete" and "delete" in widget.approval["reason"]
        assert widget.approve_button in widget.approval_bar.children and widget.approval_bar in widget.children
        assert widget.resume_button.disabled  # one way forward: Approve or Deny
        log = s.call("javascript_tool", expression="document.getElementById('log').innerText")
        assert log.data["result"] == ""  # nothing happened before the yes
        widget.approve_button.click()
        assert widget.result is not None and widget.result.ok, widget.result
        log = s.call("javascript_tool", expression="document.getElementById('log').innerText")
        assert log.data["result"].split("\n") == ["Deleted Invoice 1002"]
        assert "approved by you" in widget.asking.value and "done" in widget.outcome.value
        acted = [e for e in s.journal.entries if e.get("tool") == "interact"][-1]
        assert acted["ok"] and "approval: approved by widget" in acted["summary"]
        assert "by nobody" not in " ".join(str(e.get("summary")) for e in s.journal.entries[-3:])
    finally:
        ip.run_line_magic("config", "OcMagics.confirm = 'never'")
        ip.run_line_magic("config", "OcMagics.handoff = False")
