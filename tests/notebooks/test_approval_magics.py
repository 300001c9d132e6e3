"""Approval from the notebook face (issue 30 §4): ``%config OcMagics.confirm`` sets the session's mode
(default never: the person types the call), a held ``%oc`` call shows the hand-off widget with
Approve / Deny instead of an error line, and Approve makes the action reach the site."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError

import ocnb
from ocnb.magics import OcMagics
from ocnb.widgets import HumanHandoff
from tests.notebooks import magics_shell
from tests.security.approval_site import ApprovalSite, serve

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def approval_site() -> Iterator[ApprovalSite]:
    with serve() as s:
        yield s


@pytest.fixture(scope="module")
def ip(module_home: Path) -> Iterator[Any]:
    with magics_shell(module_home, from_magics=True) as shell:  # a session made from the magics' settings
        yield shell


def magics(shell: Any) -> OcMagics:
    return shell.magics_manager.registry["OcMagics"]


def test_confirm_through_traitlets_and_the_widget_asks(ip: Any, approval_site: ApprovalSite) -> None:
    m, s = magics(ip), ocnb.session()
    assert m.confirm == "never" and s.settings.confirm == "never"  # the magics' default
    ip.run_line_magic("config", "OcMagics.confirm = 'sometimes'")  # refused, nothing changes
    assert s.settings.confirm == "never"
    ip.run_line_magic("config", "OcMagics.risky_words = ['nuke']")
    assert s.settings.risky_words == ("nuke",)
    ip.run_line_magic("config", "OcMagics.confirm = 'risky'")
    assert s.settings.confirm == "risky"
    try:
        ip.run_line_magic("oc", f"navigate {approval_site.url}")
        approval_site.log.clear()
        # the cell's value is the widget itself (issue 42: no red APPROVAL_REQUIRED block above it)
        hand = ip.run_line_magic("oc", 'click "Delete account"')
        assert isinstance(hand, HumanHandoff) and hand.approval["name"] == "Delete account"
        time.sleep(0.3)
        assert approval_site.log == []
        nuke = ip.run_line_magic("oc", 'click "Nuke the archive"')  # risky by the person's own word
        assert isinstance(nuke, HumanHandoff) and "'nuke'" in nuke.approval["reason"]
        with pytest.raises(UsageError, match="ELEMENT_NOT_FOUND"):  # other failures keep their one line
            ip.run_line_magic("oc", 'click "No such button"')
        hand.approve_button.click()
        assert hand.result is not None and hand.result.ok, hand.result
        # once answered, the widget shows the outcome in place of the request
        assert "approved by you" in hand.header.value and "needs your approval" not in hand.header.value
        assert hand.approval_bar.layout.display == "none" and "done" in hand.outcome.value
        held = [e for e in s.journal.entries if e.get("error_code") == "APPROVAL_REQUIRED"]
        assert "held for the person's answer in the notebook" in held[-1]["summary"]
        assert "approved by widget" in s.journal.entries[-1]["summary"]
        deadline = time.monotonic() + 5
        while not approval_site.received("POST", "/delete") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(approval_site.received("POST", "/delete")) == 1
    finally:
        ip.run_line_magic("config", "OcMagics.confirm = 'never'")
        ip.run_line_magic("config", "OcMagics.risky_words = []")


def test_mcp_start_refuses_a_bad_policy_and_changes_nothing(ip: Any) -> None:
    s = ocnb.session()
    before = (s.settings.agent_confirm, s.settings.approval_timeout_s)
    for flags, word in (("--confirm sometimes", "--confirm"), ("--approval-timeout soon", "--approval-timeout")):
        with pytest.raises(UsageError, match=word):
            ip.run_line_magic("oc", f"mcp start {flags}")
        assert magics(ip)._mcp_server is None  # no server started
        assert (s.settings.agent_confirm, s.settings.approval_timeout_s) == before
    handle = ip.run_line_magic("oc", "mcp start --confirm acting --approval-timeout 9")
    try:
        assert (s.settings.agent_confirm, s.settings.approval_timeout_s) == ("acting", 9.0)
        assert "Agent policy: confirm=acting" in handle.panel.policy.value and s.approvals.attended
    finally:
        ip.run_line_magic("oc", "mcp stop")
        s.configure(agent_confirm=before[0], approval_timeout_s=before[1])
    assert not s.approvals.attended  # the desk is left with the server
