"""Replay failures read the same everywhere: {ok: false, failure: {code, step_index, detail, …}} as data.

STEP_TIMEOUT, TARGET_NAVIGATED_AWAY, DISABLED (and the kill switch's ``replay_artifact: null``), and
the skill-replay seed's Scenario 2 driven over MCP and checked with its jq-style paths.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ocnb
from ocnb.mcp import McpHandle, serve
from tests.skills.helpers import LATE_REFUSAL_STEP_MS, page_states, record_flow

pytestmark = pytest.mark.browser

PARAMS = {"first": "Ada", "email": "ada@example.com"}
RANGE = {"from": 1, "to": 5}


@pytest.fixture(scope="module")
def signup(shared_session: Any, drift: Any) -> str:
    return record_flow(shared_session, drift.page("signup.html"), "failures-signup")


def test_step_timeout_when_the_element_never_becomes_actionable(session, drift, signup) -> None:
    session.navigate(url=drift.page("signup.html") + "?v=disabled")
    r = session.oc_skill_replay(skill_id=signup, params=PARAMS, step_range=RANGE, step_timeout_ms=LATE_REFUSAL_STEP_MS)
    assert r.error.code == "STEP_TIMEOUT" and r.data["failure"]["code"] == "STEP_TIMEOUT"
    assert r.data["failure"]["step_index"] == 5 and r.data["steps_executed"] == 4
    state = page_states(session)["signup.html"]
    assert state["log"] == ["cookies"] and state["values"]["terms"] is True  # steps 1–4 ran, no submit


def test_target_navigated_away_when_a_step_leaves_the_skills_origins(session, drift, signup) -> None:
    session.navigate(url=drift.page("signup.html") + "?v=offsite")
    r = session.oc_skill_replay(skill_id=signup, params=PARAMS, step_range=RANGE, step_timeout_ms=2000)
    assert r.error.code == "TARGET_NAVIGATED_AWAY", r
    f = r.data["failure"]
    assert f["step_index"] == 5 and drift.cross_origin_url.rstrip("/") in f["detail"]
    assert r.data["steps_executed"] == 4


def test_disabled_carries_the_envelope_and_capture_stores_no_artifact(drift, ocnb_home, monkeypatch) -> None:
    monkeypatch.setenv("OCNB_SKILL_REPLAY", "0")
    with ocnb.Session(home=ocnb_home) as s:
        r = s.oc_skill_replay(skill_id="sk_0123456789abcdef")
        assert r.error.code == "DISABLED"
        assert r.data == {
            "ok": False,
            "failure": {"code": "DISABLED", "step_index": None, "detail": r.error.message},
            "steps_executed": 0,
            "step_results": [],
            "skill_id": "sk_0123456789abcdef",
        }
        assert s.navigate(url=drift.page("signup.html"), capture_artifact=True).ok
        assert s.interact(query="First name", action="fill", value="x", capture_artifact=True).ok
        rec = s.oc_skill_record(name="no-artifacts")
        assert rec.ok and rec.data["with_artifacts"] is False
        skill = s.oc_skill_recall(name="no-artifacts").data["skills"][0]
        assert [st["replay_artifact"] for st in skill["steps"]] == [None, None]


def test_unknown_skill_and_bad_arguments_carry_the_envelope(session) -> None:
    for args in ({"skill_id": "sk_ffffffffffffffff"}, {"skill_id": "x", "step_timeout_ms": 1}):
        r = session.oc_skill_replay(**args)
        assert not r.ok and r.data["ok"] is False and r.data["failure"]["code"] == r.error.code


# ---- the seed's Scenario 2, over MCP ---------------------------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def mcp(shared_session: ocnb.Session) -> Iterator[McpHandle]:
    handle = serve(shared_session, quiet=True)
    yield handle
    handle.stop()


def jq(doc: Any, path: str) -> Any:
    """A jq-style path such as ``.failure.code`` or ``.step_results[1].ok`` applied to ``doc``."""
    out = doc
    for part in path.lstrip(".").replace("[", ".[").split("."):
        if not part:
            continue
        out = out[int(part[1:-1])] if part.startswith("[") else out[part]
    return out


@pytest.mark.anyio
async def test_seed_scenario_2_renamed_captcha_label_over_mcp(mcp: McpHandle, drift: Any) -> None:
    from tests.mcp.mcp_shim_helpers import http_client, payload

    url = drift.page("login.html")
    async with http_client(mcp) as client:
        assert not (await client.call_tool("navigate", {"url": url})).is_error
        for args in (
            {"query": "Username", "action": "fill", "value": "ada"},
            {"query": "Password", "action": "fill", "value": "hunter22"},
            {"query": "Captcha", "action": "fill", "value": "x7k2"},
            {"query": 'button "Log in"', "action": "click"},
        ):
            r = await client.call_tool("interact", {**args, "capture_artifact": True})
            assert not r.is_error, r
        rec = payload(await client.call_tool("oc_skill_record", {"name": "login"}))
        assert rec["ok"] and rec["data"]["steps"] == 4, rec
        await client.call_tool("navigate", {"url": url + "?v=renamed"})
        result = await client.call_tool(
            "oc_skill_replay", {"skill_id": rec["data"]["skill_id"], "step_timeout_ms": 1000}
        )
        state = json.loads(
            payload(await client.call_tool("javascript_tool", {"expression": "JSON.stringify(window.__state())"}))[
                "data"
            ]["result"]
        )
    assert result.is_error is True
    top = payload(result)
    data = top["data"]
    assert jq(top, ".ok") is False and jq(data, ".ok") is False
    assert jq(data, ".failure.code") == "ARTIFACT_RESOLUTION_FAILED"
    assert jq(data, ".failure.step_index") == 2
    assert jq(data, ".steps_executed") == 2 and jq(data, ".step_results[0].ok") and jq(data, ".step_results[1].ok")
    assert Path(jq(data, ".failure.evidence_bundle_path"), "screenshot.png").is_file()
    assert jq(data, ".failure.refused.name") == "Verification code" and "Verification code" in data["failure"]["detail"]
    assert state["values"] == {"user": "ada", "pass": "hunter22", "captcha": ""} and state["log"] == []
