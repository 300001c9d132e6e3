"""execute_plan with task signatures and live guards on a session, against the demo search page."""

from __future__ import annotations

import threading

import pytest

from ocnb.dispatch import dispatch

pytestmark = pytest.mark.browser


def search_signature(**over) -> dict:
    sig = {
        "version": 1,
        "id": "search-task",
        "description": "Search the demo site and see results.",
        "inputs": {"q": {"type": "string", "required": True, "redaction": "none"}},
        "allowedTools": ["navigate", "interact", "wait_for", "read_page", "find"],
        "success": {"kind": "dom_text", "selector": "#results, main, body", "contains": "Results for"},
        "loopGuards": [{"kind": "max_observation_calls", "limit": 3}],
        "budgets": {"maxToolCalls": 30, "maxWallMs": 60000},
    }
    sig.update(over)
    return sig


def body_text(s) -> str:
    return s.javascript_tool(expression="document.body.innerText").data["result"]


def test_a_plan_types_a_query_and_succeeds_when_results_appear(session, site) -> None:
    steps = [
        {"tool": "navigate", "args": {"url": site.page("search.html")}},
        {"tool": "interact", "args": {"query": 'searchbox "Search"', "action": "fill", "value": "${q}"}},
        {"tool": "interact", "args": {"query": 'searchbox "Search"', "action": "press", "key": "Enter"}},
        {"tool": "wait_for", "args": {"text": "Results for", "timeout_ms": 5000}},
    ]
    r = session.execute_plan(steps=steps, params={"q": "chromium"}, signature=search_signature())
    assert r.ok, r
    assert r.data["taskSignature"]["status"] == "success"
    assert 'Results for "chromium"' in body_text(session)


def test_b_repeated_reads_without_progress_stop_on_the_observation_guard(session, site) -> None:
    session.navigate(url=site.page("search.html"))
    steps = [{"tool": "read_page", "args": {}} for _ in range(10)]
    r = session.execute_plan(steps=steps, params={"q": "x"}, signature=search_signature())
    assert r.data["taskSignature"]["status"] == "stop"
    assert any("max_observation_calls" in reason for reason in r.data["taskSignature"]["reasons"])
    assert r.data["steps_executed"] < 10


def test_c_disallowed_tool_fails_preflight_and_no_step_runs(session, site) -> None:
    session.navigate(url=site.page("search.html"))
    steps = [
        {"tool": "interact", "args": {"query": 'searchbox "Search"', "action": "fill", "value": "should not appear"}},
        {"tool": "javascript_tool", "args": {"expression": "document.title = 'hacked'"}},
    ]
    r = session.execute_plan(steps=steps, params={"q": "x"}, signature=search_signature())
    assert r.data["taskSignature"]["status"] == "failure"
    assert any("not allowed" in reason and "step 1" in reason for reason in r.data["taskSignature"]["reasons"])
    assert r.data["steps_executed"] == 0
    value = session.javascript_tool(expression="[document.title, document.querySelector('input').value]").data["result"]
    assert value[0] != "hacked" and value[1] == ""


def test_d_without_signature_there_is_no_task_signature_key(session, site) -> None:
    steps = [
        {"tool": "navigate", "args": {"url": site.page("search.html") + "?q=${q}"}},
        {"tool": "wait_for", "args": {"text": "Results for", "timeout_ms": 5000}},
    ]
    r = session.execute_plan(steps=steps, params={"q": "plain"})
    assert r.ok and "taskSignature" not in r.data and r.data["status"] == "completed"


def test_e_bound_signature_refuses_a_disallowed_call_from_another_face(session, site) -> None:
    session.navigate(url=site.page("search.html"))
    bound = session.oc_task_start(signature=search_signature(), inputs={"q": "x"})
    assert bound.ok
    try:
        out: dict = {}
        t = threading.Thread(
            target=lambda: out.setdefault(
                "r", dispatch(session, "javascript_tool", {"expression": "document.title = 'agent'"}, source="mcp")
            )
        )
        t.start()
        t.join(30)
        assert out["r"].error.code == "DISALLOWED_TOOL"
        status = session.workflow_status().data
        assert status["bound"] and status["refused"] == 1
    finally:
        session.oc_task_finish()
    assert session.javascript_tool(expression="document.title").data["result"] != "agent"


def test_budget_exhausted_refuses_further_calls(session, site) -> None:
    sig = search_signature(budgets={"maxToolCalls": 2, "maxWallMs": 60000}, loopGuards=[])
    session.oc_task_start(signature=sig, inputs={"q": "x"})
    try:
        assert session.navigate(url=site.page("search.html")).ok
        assert session.navigate(url=site.page("search.html")).ok
        third = session.navigate(url=site.page("index.html"))
        assert third.error.code == "BUDGET_EXHAUSTED"
    finally:
        session.oc_task_finish()


def test_secret_inputs_never_appear_in_results(session, site) -> None:
    sig = search_signature(inputs={"q": {"type": "string", "required": True, "redaction": "secret"}})
    steps = [
        {"tool": "navigate", "args": {"url": site.page("search.html")}},
        {"tool": "interact", "args": {"query": 'searchbox "Search"', "action": "fill", "value": "${q}"}},
        {"tool": "find", "args": {"query": "Search"}},
    ]
    r = session.execute_plan(
        steps=steps,
        params={"q": "hunter2-topsecret"},
        signature=search_signature(inputs=sig["inputs"], success={"kind": "title", "contains": "never"}),
    )
    assert "hunter2-topsecret" not in r.to_json()


def test_a_refused_fourth_read_makes_workflow_status_say_stop_until_progress(session, site) -> None:
    """docs/task-signatures.md's table, live: the 4th read_page is refused and the task reads `stop`."""
    session.navigate(url=site.page("search.html"))
    session.oc_task_start(signature=search_signature(), inputs={"q": "lamp"})
    try:
        assert all(session.read_page().ok for _ in range(3))
        assert session.workflow_status().data["status"] == "continue"
        fourth = session.read_page()
        assert fourth.error.code == "BUDGET_EXHAUSTED" and fourth.error.details["guard"] == "max_observation_calls"
        status = session.workflow_status().data
        assert status["status"] == "stop", status
        assert status["last_refusal"]["guard"] == "max_observation_calls"
        assert session.interact(query='searchbox "Search"', action="fill", value="lamp").ok
        assert session.interact(query='searchbox "Search"', action="press", key="Enter").ok
        assert session.wait_for(text="Results for").ok
        after = session.workflow_status().data
        assert after["status"] == "success" and after["last_refusal"] is None, after
    finally:
        session.oc_task_finish()


def test_a_spent_budget_makes_workflow_status_say_budget_exhausted(session, site) -> None:
    sig = search_signature(budgets={"maxToolCalls": 1, "maxWallMs": 60000}, loopGuards=[])
    session.oc_task_start(signature=sig, inputs={"q": "x"})
    try:
        assert session.navigate(url=site.page("search.html")).ok
        assert session.navigate(url=site.page("index.html")).error.code == "BUDGET_EXHAUSTED"
        assert session.workflow_status().data["status"] == "budget_exhausted"
    finally:
        session.oc_task_finish()
