"""%oc record start|status|stop: a demonstration recorded from a notebook (issue 43)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.error import UsageError

import ocnb
from ocnb.commands.demosite import DemoSite, serve
from ocnb.notebook.lines import parse_record
from tests.skills.helpers import DRIFT

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def drift() -> Iterator[DemoSite]:
    with serve(root=DRIFT) as s:
        yield s


def oc(shell: Any, line: str) -> Any:
    return shell.run_line_magic("oc", line)


def test_record_lines_parse_into_the_record_tools() -> None:
    call = parse_record("stop --name 'create account' --params email=email plan=tier --secrets pin=PIN --discard")
    assert call.tool == "record_stop"
    assert call.args == {
        "name": "create account",
        "params": {"email": "email", "plan": "tier"},
        "secrets": {"pin": "PIN"},
        "discard": True,
    }
    assert parse_record("start --secret-fields pin code").args == {"secret_fields": ["pin", "code"]}
    assert parse_record("stop --name x --contract-id done").args == {"name": "x", "contract_id": "done"}
    for bad in ("", "pause", "stop --name x --params email", "start --name x", "stop --name x y"):
        with pytest.raises(UsageError):
            parse_record(bad)


def test_record_start_and_stop_from_magic_lines(ip: Any, drift: DemoSite) -> None:
    s = ocnb.session()
    assert "record" not in s.registry.caps
    oc(ip, f"navigate {drift.page('account.html')}")
    started = oc(ip, "record start")  # offers the opt-in group on first use
    assert started.ok and "record" in s.registry.caps
    # the person's input here is ocnb's own (trusted, as the live view's): typing and a click
    oc(ip, "fill Email ada@example.com")
    oc(ip, "click 'Create account'")
    status = oc(ip, "record status")
    assert [st["action"] for st in status.data["steps"]] == ["navigate", "fill", "click"]
    with pytest.raises(UsageError, match="NOT_FOUND|no contract"):
        oc(ip, "record stop --name magic-account --contract-id nope")  # refused before anything stops
    with pytest.raises(UsageError, match="no recorded field is called 'phone'"):
        oc(ip, "record stop --name magic-account --params phone=phone")
    assert oc(ip, "record status").data["recording"]  # refused: nothing stopped
    stop = oc(ip, "record stop --name magic-account --description 'made in a cell' --params Email=email")
    assert stop.ok and stop.data["signature"] == {"params": ["email"], "secrets": []}
    skill = s.oc_skill_recall(name="magic-account").data["skills"][0]
    assert skill["description"] == "made in a cell"
    assert skill["steps"][1]["args"]["value"] == "${email}"
    with pytest.raises(UsageError, match="no demonstration is being recorded"):
        oc(ip, "record stop --name again")
    # a second demonstration in the same document: its own recorder; the first one stays silent
    assert oc(ip, "record start").ok
    oc(ip, "click 'Create account'")
    again = oc(ip, "record stop --discard")
    assert [st["action"] for st in again.data["steps"]] == ["navigate", "click"] and again.data["discarded"]
    assert oc(ip, "record status").data["steps"] == []
