"""The same steps get the same arguments under execute_plan and under skill replay (ocnb.placeholders).

A ``"${n}"`` placeholder is filled with the param's JSON type — a number stays a number, a boolean a
boolean, a list a list — whichever face runs the steps. execute_plan's arguments are read from the
journal (one line per step); replay's from the trace (one ``replay_step`` event per step).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ocnb.skills.store import SkillStore

pytestmark = pytest.mark.browser

#: (label, placeholder) of each form_input step, in order.
FIELDS = (("Full name", "${n}"), ("I accept the terms", "${agree}"), ("Country", "${countries}"))
PARAM_SETS = [
    {"n": 3, "agree": False, "countries": ["Japan"]},
    {"n": 2.5, "agree": True, "countries": ["Brazil"]},
]
FORM_STATE = (
    "[document.querySelector('#full-name').value, document.querySelector('#terms').checked,"
    " document.querySelector('#country').value]"
)


def placeholder_skill(session: Any, site: Any, home: Any) -> str:
    """Record navigate + three form_input calls (capture_artifact), then put placeholders in their values."""
    url = site.page("form.html")
    assert session.navigate(url=url, capture_artifact=True).ok
    for (label, _), value in zip(FIELDS, ("Ada", True, "Norway"), strict=True):
        assert session.form_input(query=label, value=value, capture_artifact=True).ok
    rec = session.oc_skill_record(name="typed-params")
    assert rec.ok and rec.data["with_artifacts"], rec
    store = SkillStore(home)
    skill = store.get(rec.data["skill_id"])
    for step, (_, placeholder) in zip(skill["steps"][1:], FIELDS, strict=True):
        (low,) = step["replay_artifact"]["steps"]
        low["args"]["value"] = placeholder
    return store.record(skill["domain"], skill["name"], skill["steps"])["id"]


def form_state(session: Any) -> list[Any]:
    return session.javascript_tool(expression=FORM_STATE).data["result"]


def canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True)  # 3, 3.0, "3" and true stay apart


@pytest.mark.parametrize("params", PARAM_SETS, ids=["int-false-list", "float-true-list"])
def test_execute_plan_and_replay_give_the_tools_the_same_typed_arguments(session, site, module_home, params) -> None:
    sid = placeholder_skill(session, site, module_home)
    steps = [{"tool": "navigate", "args": {"url": site.page("form.html")}}] + [
        {"tool": "form_input", "args": {"query": label, "value": placeholder}} for label, placeholder in FIELDS
    ]

    seq = int(session.journal_df()["seq"].max())
    plan = session.execute_plan(steps=steps, params=params)
    assert plan.ok and plan.data["status"] == "completed", plan
    plan_state = form_state(session)
    journal = session.journal_df(since=seq)
    planned = journal[(journal["source"] == "plan") & (journal["tool"] == "form_input")]
    plan_values = [args["value"] for args in planned["args"]]

    events = len(session.trace_df())
    replay = session.oc_skill_replay(skill_id=sid, params=params)
    assert replay.ok, replay
    replay_state = form_state(session)
    trace = session.trace_df().iloc[events:]
    replayed = trace[trace["kind"] == "replay_step"]["body"]
    replay_values = [body["args"]["value"] for body in replayed if "value" in body["args"]]

    expected = [params["n"], params["agree"], params["countries"]]
    assert [canon(v) for v in plan_values] == [canon(v) for v in replay_values] == [canon(v) for v in expected]
    # ...and the page ends the same: a number typed as text, the box as the boolean says, the option chosen
    assert plan_state == replay_state == [str(params["n"]), params["agree"], params["countries"][0]]


def test_replay_interpolates_a_param_inside_a_string_as_execute_plan_does(session, site, module_home) -> None:
    sid = placeholder_skill(session, site, module_home)
    skill = SkillStore(module_home).get(sid)
    skill["steps"][1]["replay_artifact"]["steps"][0]["args"]["value"] = "id-${n}"
    SkillStore(module_home).record(skill["domain"], skill["name"], skill["steps"])
    params = {"n": 7, "agree": True, "countries": ["Japan"]}
    assert session.oc_skill_replay(skill_id=sid, params=params).ok
    replayed_name = form_state(session)[0]
    plan = session.execute_plan(
        steps=[
            {"tool": "navigate", "args": {"url": site.page("form.html")}},
            {"tool": "form_input", "args": {"query": "Full name", "value": "id-${n}"}},
        ],
        params=params,
    )
    assert plan.ok, plan
    assert replayed_name == form_state(session)[0] == "id-7"


def test_a_missing_param_is_refused_the_same_way_by_both(session, site, module_home) -> None:
    sid = placeholder_skill(session, site, module_home)
    steps = [{"tool": "form_input", "args": {"query": label, "value": ph}} for label, ph in FIELDS]
    plan = session.execute_plan(steps=steps, params={"n": 1})
    replay = session.oc_skill_replay(skill_id=sid, params={"n": 1})
    assert plan.error.code == replay.error.code == "INVALID_ARGUMENT"
    assert plan.error.details["missing"] == ["agree", "countries"]
    assert plan.error.message == replay.error.message


def test_a_secret_in_a_replayed_step_reaches_the_page_and_the_trace_keeps_its_placeholder(
    session, site, module_home, tmp_path
) -> None:
    sid = placeholder_skill(session, site, module_home)
    skill = SkillStore(module_home).get(sid)
    skill["steps"][1]["replay_artifact"]["steps"][0]["args"]["value"] = "${SECRET:TYPED_PW}"
    SkillStore(module_home).record(skill["domain"], skill["name"], skill["steps"])
    (tmp_path / "typed.env").write_text("TYPED_PW=typed-s3cret-value\n")
    session.load_secrets(tmp_path / "typed.env")
    events = len(session.trace_df())
    assert session.oc_skill_replay(skill_id=sid, params={"agree": True, "countries": ["Japan"]}).ok
    typed = "document.querySelector('#full-name').value"
    assert session.javascript_tool(expression=f"{typed}.length").data["result"] == len("typed-s3cret-value")
    assert session.javascript_tool(expression=f"{typed}.startsWith('$')").data["result"] is False
    bodies = list(session.trace_df().iloc[events:]["body"])
    steps = [b for b in bodies if "args" in b and "step_index" in b]
    assert steps[1]["args"]["value"] == "${SECRET:TYPED_PW}"
    assert "typed-s3cret-value" not in json.dumps(bodies)
