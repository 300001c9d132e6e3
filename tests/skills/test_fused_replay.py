"""Replay resolves, verifies and acts in one Playwright call (the ``ocnb-verified`` selector engine) when
the chain's first entry singles out an agreeing element; otherwise, and in a document older than the
engine's registration, the engine declines before acting and the step goes through ``resolve()``."""

from __future__ import annotations

import time

import pytest

from ocnb.perception.selectors import engine_declined, verified_locator
from ocnb.skills.store import SkillStore
from tests.skills.helpers import LATE_REFUSAL_STEP_MS
from tests.skills.test_recorded_flow import record_signup

pytestmark = pytest.mark.browser


def _value(session, selector: str) -> str:
    return session.javascript_tool(expression=f"document.querySelector({selector!r}).value").data["result"]


def test_an_older_document_falls_back_then_steps_are_fused(fresh_session, site) -> None:
    s = fresh_session
    sid = record_signup(s, site)
    s.navigate(url=site.page("form.html"))
    assert s.interact(query="Full name", action="fill", value="x").ok  # Playwright's script is in this document
    r = s.oc_skill_replay(skill_id=sid, params={"who": "Ada"}, step_range={"from": 1, "to": 2})
    assert r.ok, r
    assert [(st["fused"], st["resolved_via"], st["verified"]) for st in r.data["step_results"]] == [
        (False, "role_name", True)
    ] * 2
    assert (_value(s, "#full-name"), _value(s, "#email")) == ("Ada", "Ada@example.com")

    r = s.oc_skill_replay(skill_id=sid, params={"who": "Grace"})  # navigates: a document with the engine
    assert r.ok, r
    steps = r.data["step_results"][1:]
    assert [(st["fused"], st["resolved_via"], st["verified"]) for st in steps] == [(True, "role_name", True)] * 3
    assert all(st["resolve_ms"] is None for st in steps)
    assert (
        "Thanks, Grace!" in s.javascript_tool(expression="document.querySelector('#result').textContent").data["result"]
    )


def test_the_engine_declines_a_disagreeing_element_at_once_and_acts_on_nothing(session, site, module_home) -> None:
    sid = record_signup(session, site)
    assert session.oc_skill_replay(skill_id=sid, params={"who": "Ada"}).ok  # the engine is registered
    email = SkillStore(module_home).get(sid)["steps"][2]["replay_artifact"]["steps"][0]
    session.navigate(url=site.page("form.html") + "?variant=renamed")

    async def fill() -> tuple[bool, float]:
        page = await session.browser_state().page()
        locator = verified_locator(page, email["selectors"], email["fingerprint"])
        assert locator is not None
        t0 = time.monotonic()
        try:
            await locator.fill("intruder@example.com", timeout=5000)
        except Exception as exc:  # noqa: BLE001 - the point of the test
            return engine_declined(exc), time.monotonic() - t0
        return False, time.monotonic() - t0

    declined, elapsed = session.run(fill())
    assert declined and elapsed < 2.0
    assert _value(session, "#email") == ""

    r = session.oc_skill_replay(
        skill_id=sid, params={"who": "Bo"}, step_range={"from": 1, "to": 3}, step_timeout_ms=LATE_REFUSAL_STEP_MS
    )
    assert r.error.code == "ARTIFACT_RESOLUTION_FAILED"
    assert r.data["failure"]["step_index"] == 2 and r.data["step_results"][0]["fused"] is True
    assert _value(session, "#email") == ""
