"""SkillRecorder: capture steps with selector chains, save, replay with per-step status, export."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, cast

import pytest

import ocnb
from ocnb.calls import CallContext
from ocnb.registry import build_registry
from ocnb.results import ToolResult
from ocnb.widgets import ScriptedCaller, SkillRecorder
from ocnb.widgets.skill_recorder import format_chain, replay_steps

REG = build_registry()
CHAIN = [
    {"type": "role_name", "role": "textbox", "name": "Email"},
    {"type": "css", "value": "#email"},
    {"type": "xpath", "value": "//input[@id='email']"},
]


def fake_call(tool: str, args: dict[str, Any], source: str = "api") -> CallContext:
    return CallContext(
        session=cast(Any, None),
        name=tool,
        args=dict(args),
        source=source,
        seq=0,
        tooldef=REG.get(tool),
        exec_args=dict(args),
    )


def test_recording_adds_capture_artifact_only_to_capable_calls_while_on() -> None:
    rec = SkillRecorder(caller=ScriptedCaller())
    off = fake_call("navigate", {"url": "http://127.0.0.1/"})
    rec._before(off)
    assert "capture_artifact" not in off.exec_args  # not recording yet
    rec.start_button.click()
    assert rec.recording and rec.stop_button.disabled is False
    nav = fake_call("navigate", {"url": "http://127.0.0.1/"})
    reload = fake_call("page_reload", {})
    replayed = fake_call("navigate", {"url": "http://127.0.0.1/"}, source="replay")
    for call in (nav, reload, replayed):
        rec._before(call)
    assert nav.exec_args["capture_artifact"] is True and nav.args["capture_artifact"] is True
    assert "capture_artifact" not in reload.exec_args  # page_reload cannot capture
    assert "capture_artifact" not in replayed.exec_args  # a replay is never re-recorded
    rec._after(nav, ToolResult.success("navigate", {"url": "http://127.0.0.1/", "tab_id": "t1"}))
    rec._after(reload, ToolResult.success("page_reload", {}))
    assert [(s["tool"], s["kind"]) for s in rec.steps] == [("navigate", "navigate")]
    rec.stop_button.click()
    assert not rec.recording and "1 step" in rec.status.value


def test_steps_show_their_selector_chains_one_per_field() -> None:
    rec = SkillRecorder(caller=ScriptedCaller())
    data = {
        "fields": [
            {"field": "Email", "role": "textbox", "name": "Email", "value": "a@b.co", "selector_chain": CHAIN},
            {"field": "Country", "role": "combobox", "name": "Country", "value": "Japan",
             "selector_chain": [{"type": "css", "value": "#country"}]},
        ]
    }  # fmt: skip
    steps = rec.observe_step(
        "fill_form", {"fields": {"Email": "a@b.co", "Country": "Japan"}}, ToolResult.success("fill_form", data)
    )
    assert [(s["index"], s["kind"]) for s in steps] == [(0, "fill"), (1, "select")]
    assert steps[0]["selectors"] == CHAIN
    rec.render()
    table = rec.steps_table.value
    assert "role=textbox “Email” → css=#email → xpath=//input[@id=&#x27;email&#x27;]" in table
    assert "css=#country" in table
    assert rec.observe_step("interact", {"query": "x"}, ToolResult.failure("interact", "ELEMENT_NOT_FOUND")) == []
    assert format_chain(CHAIN).startswith("role=textbox")


def test_save_replay_and_export_call_the_skill_tools(tmp_path: Path) -> None:
    script = tmp_path / "skill.py"
    script.write_text("print('replay me')\n")
    report = {
        "ok": False,
        "steps_executed": 1,
        "steps_total": 3,
        "failure": {"code": "ARTIFACT_RESOLUTION_FAILED", "step_index": 1, "detail": "no selector matched"},
        "step_results": [{"index": 0, "resolved_via": "role_name", "elapsed_ms": 12}],
    }
    caller = ScriptedCaller(
        {
            "oc_skill_record": {"skill_id": "sk_1", "domain": "127.0.0.1", "name": "signup", "steps": 3},
            "oc_skill_replay": ToolResult.failure(
                "oc_skill_replay", "ARTIFACT_RESOLUTION_FAILED", "step 1: no selector matched", report
            ),
            "oc_skill_export": {"path": str(script), "bytes": 20, "steps": 3},
        }
    )
    rec = SkillRecorder(caller=caller)
    rec.save_button.click()
    assert caller.calls == [] and "name" in rec.status.value  # nothing saved without a name
    rec.name_box.value = "signup"
    rec.save_button.click()
    assert caller.calls[-1].tool == "oc_skill_record" and caller.calls[-1].args == {"name": "signup"}
    assert rec.skill_id == "sk_1" and rec.replay_button.disabled is False
    rec.replay_button.click()
    assert caller.calls[-1].args == {"skill_id": "sk_1"}
    assert [s["status"] for s in rec.replay_status] == ["ok", "ARTIFACT_RESOLUTION_FAILED", "not run"]
    assert "ARTIFACT_RESOLUTION_FAILED" in rec.replay_table.value and "ARTIFACT_RESOLUTION_FAILED" in rec.status.value
    rec.export_button.click()
    assert caller.calls[-1].tool == "oc_skill_export"
    assert rec.script == "print('replay me')\n" == rec.script_box.value
    assert "overwrite" not in caller.calls[-1].args  # an existing file is kept unless asked
    rec.export(overwrite=True)
    assert caller.calls[-1].args == {"skill_id": "sk_1", "overwrite": True}
    assert all(not c.quiet for c in caller.calls)  # every skill action is journaled


def test_replay_steps_of_a_successful_report() -> None:
    ok = ToolResult.success(
        "oc_skill_replay",
        {"ok": True, "steps_executed": 2, "steps_total": 2,
         "step_results": [{"index": 0, "resolved_via": "css", "ok": True}, {"index": 1, "resolved_via": "role_name"}]},
    )  # fmt: skip
    assert [(s["status"], s["resolved_via"]) for s in replay_steps(ok)] == [("ok", "css"), ("ok", "role_name")]
    disabled = ToolResult.failure("oc_skill_replay", "DISABLED", "off")
    assert [s["status"] for s in replay_steps(disabled)] == ["DISABLED"]


@pytest.mark.browser
def test_record_save_replay_export_with_a_real_browser(journaled: ocnb.Session, site: Any) -> None:
    session = journaled
    rec = SkillRecorder(session, name="tour")
    try:
        rec.start_button.click()
        session.navigate(url=site.page("form.html"))  # calls from code are recorded too
        session.navigate(url=site.page("index.html"))
        rec.stop_button.click()
        session.navigate(url=site.page("login.html"))  # after Stop: not recorded
        assert [s["args"]["url"] for s in rec.steps] == [site.page("form.html"), site.page("index.html")]
        assert session.journal.entries[-2]["args"].get("capture_artifact") is True
        assert "capture_artifact" not in session.journal.entries[-1]["args"]
        assert rec.save().ok, rec.status.value
        assert rec.skill_id
        session.navigate(url=site.page("form.html"))
        replay = rec.replay()
        assert replay.ok, replay
        assert [s["status"] for s in rec.replay_status] == ["ok", "ok"]
        assert session.call("javascript_tool", expression="location.href").data["result"] == site.page("index.html")
        exported = rec.export()
        assert exported.ok, exported
        ast.parse(rec.script)
        assert "playwright" in rec.script and site.page("index.html") in rec.script
        sources = [(e["tool"], e["source"]) for e in session.journal.entries[-3:]]
        assert sources[-1] == ("oc_skill_export", "widget")
    finally:
        rec.close()


@pytest.mark.browser
def test_recorded_form_steps_carry_selector_chains_and_replay(journaled: ocnb.Session, site: Any) -> None:
    session = journaled
    if "interact" not in session.registry:
        pytest.skip("needs the interact tool")
    value = "document.getElementById('full-name').value + '|' + document.getElementById('terms').checked"
    rec = SkillRecorder(session, name="signup-start")
    try:
        rec.start()
        assert session.navigate(url=site.page("form.html")).ok
        assert session.call("interact", query="Full name", action="fill", value="Ada").ok
        assert session.call("interact", query="I accept the terms", action="check").ok
        rec.stop()
        assert [s["kind"] for s in rec.steps] == ["navigate", "fill", "click"]
        for step in rec.steps[1:]:
            assert step["selectors"], step  # each acting step shows its chain, most robust first
        assert "role=textbox “Full name”" in rec.steps_table.value
        assert rec.save().ok, rec.status.value
        session.navigate(url=site.page("index.html"))
        replay = rec.replay()
        assert replay.ok, replay
        assert [s["status"] for s in rec.replay_status] == ["ok", "ok", "ok"]
        assert session.call("javascript_tool", expression=value).data["result"] == "Ada|true"
    finally:
        rec.close()
