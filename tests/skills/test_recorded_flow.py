"""A skill recorded through capture_artifact (the real path) replays deterministically."""

from __future__ import annotations

import pytest

from tests.skills.helpers import LATE_REFUSAL_STEP_MS

pytestmark = pytest.mark.browser


def record_signup(session, site) -> str:
    url = site.page("form.html")
    session.navigate(url=url, capture_artifact=True)
    assert session.interact(query="Full name", action="fill", value="${who}", capture_artifact=True).ok
    assert session.interact(query="Email", action="fill", value="${who}@example.com", capture_artifact=True).ok
    r = session.interact(query='button "Sign up"', action="click", capture_artifact=True)
    assert r.ok and r.data["selector_chain"], r
    rec = session.oc_skill_record(name="signup", description="Sign up on the demo form")
    assert rec.ok and rec.data["steps"] == 4 and rec.data["with_artifacts"], rec
    return rec.data["skill_id"]


def test_a_record_reload_replay_without_reading_the_page(session, site) -> None:
    sid = record_signup(session, site)
    assert session.tabs_context().ok
    session.page_reload()
    before = len(session.journal_df())
    session.javascript_tool(expression="performance.clearResourceTimings()")
    r = session.oc_skill_replay(skill_id=sid, params={"who": "Ada"})
    assert r.ok, r
    assert r.data["steps_executed"] == r.data["steps_total"] == 4
    vias = [s["resolved_via"] for s in r.data["step_results"]]
    assert "text" not in vias and vias[0] is None  # step 0 is the navigation
    during = session.journal_df().iloc[before:]
    assert not set(during["tool"]) & {"read_page", "find", "query_dom"}
    body = session.javascript_tool(expression="document.querySelector('#result').textContent").data["result"]
    assert "Thanks, Ada!" in body


def test_c_restyled_and_reordered_page_still_replays(session, site) -> None:
    sid = record_signup(session, site)
    session.navigate(url=site.page("form.html") + "?variant=restyled")
    assert session.javascript_tool(expression="document.body.dataset.variant").data["result"] == "restyled"
    r = session.oc_skill_replay(skill_id=sid, params={"who": "Grace"}, step_range={"from": 1, "to": 3})
    assert r.ok, r
    assert (
        "Thanks, Grace!"
        in session.javascript_tool(expression="document.querySelector('#result').textContent").data["result"]
    )


def test_b_renamed_label_fails_at_that_step_with_evidence(session, site, module_home) -> None:
    import json
    from pathlib import Path

    from ocnb.skills.store import SkillStore

    sid = record_signup(session, site)
    store = SkillStore(module_home)
    skill = store.get(sid)
    email = skill["steps"][2]["replay_artifact"]["steps"][0]
    email["selectors"] = [
        s for s in email["selectors"] if s["type"] in ("role_name", "accessible_name")
    ]  # a chain that depends on the label
    store.record(skill["domain"], skill["name"], skill["steps"])
    session.navigate(url=site.page("form.html") + "?variant=renamed")
    r = session.oc_skill_replay(
        skill_id=sid, params={"who": "Linus"}, step_range={"from": 1, "to": 3}, step_timeout_ms=LATE_REFUSAL_STEP_MS
    )
    assert r.error.code == "ARTIFACT_RESOLUTION_FAILED"
    assert r.error.details["failure"]["step_index"] == 2 and r.error.details["steps_executed"] == 1
    bundle = Path(r.error.details["failure"]["evidence_bundle_path"])
    assert json.loads((bundle / "bundle.json").read_text())["url"].endswith("variant=renamed")


def test_g_replay_makes_no_request_outside_loopback(session, site) -> None:
    sid = record_signup(session, site)
    state = session._state
    state.network.requests.clear()
    assert session.oc_skill_replay(skill_id=sid, params={"who": "Ken"}).ok
    urls = [r["url"] for r in state.network.requests]
    assert urls, "the replay loads the form page"
    assert all(u.startswith(("http://127.0.0.1", "http://localhost", "data:", "about:")) for u in urls), urls
