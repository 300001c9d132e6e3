"""The skill tools over dispatch: a bad artifact refused by oc_skill_record, replay beside a corrupt file."""

from __future__ import annotations

import pytest

from ocnb.skills.store import SkillStore
from tests.skills.helpers import art, click, fill, form_skill

pytestmark = pytest.mark.browser


def test_record_refuses_a_bad_artifact_naming_every_error_and_keeps_the_buffer(session, site, module_home) -> None:
    url = site.page("form.html")
    session.navigate(url=url, capture_artifact=True)
    bad_low = {**fill("Email", "#email", "x"), "kind": "teleport"}
    bad_low["selectors"] = [{"type": "psychic", "value": "Email"}]
    steps = [
        {"tool": "interact", "args": {}, "replay_artifact": {**art(url, bad_low), "schema_version": 99}},
        {"tool": "interact", "args": {}, "replay_artifact": art(url, click("button", "Sign up"))},
    ]
    r = session.oc_skill_record(name="bad", steps=steps)
    assert r.error.code == "INVALID_ARGUMENT"
    paths = {e["path"] for e in r.error.details["errors"]}
    assert {
        "$.steps[0].replay_artifact.schema_version",
        "$.steps[0].replay_artifact.steps[0].kind",
        "$.steps[0].replay_artifact.steps[0].selectors[0].type",
    } <= paths
    assert session.oc_skill_recall(name="bad").data["count"] == 0
    r = session.oc_skill_record(name="dots", domain="..")
    assert r.error.code == "INVALID_ARGUMENT" and "host name" in r.error.message
    ok = session.oc_skill_record(name="from the buffer")  # the refused calls left the capture buffer alone
    assert ok.ok and ok.data["steps"] == 1 and ok.data["with_artifacts"]


def test_replay_and_export_work_beside_a_corrupt_file_of_another_domain(session, site, module_home) -> None:
    sid = form_skill(site, module_home, "beside-corrupt")
    bad = SkillStore(module_home).path("broken.example")
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_text('{"schema_version": 2, "skills": {')
    try:
        r = session.oc_skill_replay(skill_id=sid, params={"who": "Ada"})
        assert r.ok, r
        assert session.oc_skill_export(skill_id=sid, path=str(module_home / "exports" / "beside.py"), overwrite=True).ok
        recall = session.oc_skill_recall(name="beside-corrupt").data
        assert recall["count"] == 1 and recall["problems"][0]["code"] == "CORRUPT_FILE"
        assert recall["problems"][0]["file"] == str(bad)
    finally:
        bad.unlink()
