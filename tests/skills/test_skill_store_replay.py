"""Skill store and replay with hand-written artifacts (no perception needed): the failure codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import ocnb
from ocnb.skills.store import SkillStore, skill_id_for
from tests.skills.helpers import LATE_REFUSAL_STEP_MS, art, click, fill, form_skill

pytestmark = pytest.mark.browser


def result_text(s: ocnb.Session) -> str:
    return s.javascript_tool(expression="document.querySelector('#result').textContent").data["result"]


def test_replay_ok_with_params_and_trace(session, site, module_home) -> None:
    sid = form_skill(site, module_home)
    r = session.oc_skill_replay(skill_id=sid, params={"who": "Ada"})
    assert r.ok, r
    assert r.data["steps_executed"] == r.data["steps_total"] == 4
    assert [x["resolved_via"] for x in r.data["step_results"]][1:] == ["role_name", "role_name", "role_name"]
    assert "Thanks, Ada!" in result_text(session)


def test_missing_param_is_refused_before_any_step(session, site, module_home) -> None:
    sid = form_skill(site, module_home)
    session.navigate(url="about:blank")
    r = session.oc_skill_replay(skill_id=sid)
    assert r.error.code == "INVALID_ARGUMENT" and "who" in r.error.message
    assert session.tabs_context().data["tabs"][0]["url"] == "about:blank"


def test_resolution_failure_stops_at_the_step_with_evidence(session, site, module_home) -> None:
    url = site.page("form.html")
    steps = [
        {"tool": "interact", "args": {}, "replay_artifact": art(url, fill("Full name", "#full-name", "Grace"))},
        {
            "tool": "interact",
            "args": {},
            "replay_artifact": art(
                url,
                {
                    **fill("Email", "#nope", "x"),
                    "selectors": [
                        {"type": "role_name", "role": "textbox", "name": "Email"},
                        {"type": "accessible_name", "value": "Email"},
                    ],
                },
            ),
        },
    ]
    sid = SkillStore(module_home).record(url.split("/")[2], "renamed", steps)["id"]
    session.navigate(url=url + "?variant=renamed")
    r = session.oc_skill_replay(skill_id=sid, step_timeout_ms=LATE_REFUSAL_STEP_MS)
    assert r.error.code == "ARTIFACT_RESOLUTION_FAILED"
    report = r.error.details
    assert report["failure"]["step_index"] == 1 and report["steps_executed"] == 1
    bundle = Path(report["failure"]["evidence_bundle_path"])
    assert (bundle / "screenshot.png").is_file()
    assert session.javascript_tool(expression="document.querySelector('#full-name').value").data["result"] == "Grace"


def test_page_mismatch_before_the_first_step(session, site, module_home) -> None:
    url = site.page("form.html")
    sid = SkillStore(module_home).record(
        url.split("/")[2],
        "no-nav",
        [{"tool": "interact", "args": {}, "replay_artifact": art(url, fill("Full name", "#full-name", "X"))}],
    )["id"]
    session.navigate(url=site.page("login.html"))
    r = session.oc_skill_replay(skill_id=sid)
    assert r.error.code == "PAGE_MISMATCH" and r.error.details["steps_executed"] == 0


def test_risky_step_blocked_before_step_zero(session, site, module_home) -> None:
    url = site.page("checkout.html")
    steps = [
        {
            "tool": "navigate",
            "args": {},
            "replay_artifact": art(
                url, {"kind": "navigate", "selectors": [], "frame_ordinal": 0, "args": {"url": url}, "risky": False}
            ),
        },
        {"tool": "interact", "args": {}, "replay_artifact": art(url, click("button", "Pay now", risky=True))},
    ]
    sid = SkillStore(module_home).record(url.split("/")[2], "pay", steps)["id"]
    session.navigate(url="about:blank")
    r = session.oc_skill_replay(skill_id=sid)
    assert r.error.code == "RISKY_STEP_BLOCKED" and r.error.details["failure"]["step_index"] == 1
    assert session.tabs_context().data["tabs"][0]["url"] == "about:blank"  # step 0 did not run
    ok = session.oc_skill_replay(skill_id=sid, allow_risky=True)
    assert (
        ok.ok
        and "Payment of $42.00 submitted"
        in session.javascript_tool(expression="document.body.innerText").data["result"]
    )


def test_v1_file_is_artifact_missing_and_left_unchanged(session, site, module_home) -> None:
    domain = "legacy.example"
    path = SkillStore(module_home).path(domain)
    path.parent.mkdir(parents=True, exist_ok=True)
    v1 = {
        "schema_version": 1,
        "skills": [{"name": "old", "steps": [{"tool": "navigate", "args": {"url": "https://legacy.example/"}}]}],
    }
    path.write_text(json.dumps(v1))
    before = path.read_bytes()
    recalled = session.oc_skill_recall(domain=domain).data["skills"]
    assert recalled[0]["steps"][0]["replay_artifact"] is None
    r = session.oc_skill_replay(skill_id=skill_id_for(domain, "old"))
    assert r.error.code == "ARTIFACT_MISSING" and r.error.details["steps_executed"] == 0
    assert path.read_bytes() == before
    # re-recording upgrades in place, keeping the old skill
    SkillStore(module_home).record(domain, "new", [{"tool": "navigate", "args": {}, "replay_artifact": None}])
    data = json.loads(path.read_text())
    assert data["schema_version"] == 2 and {s["name"] for s in data["skills"].values()} == {"old", "new"}


def test_kill_switch_keeps_tool_listed(site, ocnb_home, monkeypatch) -> None:
    monkeypatch.setenv("OCNB_SKILL_REPLAY", "0")
    with ocnb.Session(home=ocnb_home) as s:
        assert "oc_skill_replay" in s.registry
        assert s.oc_skill_replay(skill_id="sk_any").error.code == "DISABLED"


def test_record_is_idempotent_on_domain_and_name(module_home, site) -> None:
    a = form_skill(site, module_home, "same")
    b = form_skill(site, module_home, "same")
    assert a == b and len(SkillStore(module_home).recall(name="same")) == 1


def test_exported_script_runs_and_fills_the_form(site, module_home, tmp_path, session) -> None:
    sid = form_skill(site, module_home, "exported")
    assert session.oc_skill_export(skill_id=sid, path=str(tmp_path / "signup.py")).error.code == "FILE_NOT_ALLOWED"
    assert not (tmp_path / "signup.py").exists()
    r = session.oc_skill_export(skill_id=sid, path=str(module_home / "exports" / "signup.py"))
    assert r.ok
    script = Path(r.data["path"])
    text = script.read_text()
    import re

    assert not re.search(r"^\s*(import|from)\s+ocnb", text, re.M)
    code = text.replace(
        'print("done:", page.url, "|", page.title())', 'print("done:", page.locator("#result").text_content())'
    )
    script.write_text(code)
    import shutil

    env = {"CHROMIUM": shutil.which("chromium") or "", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, str(script), "--who", "Linus"], capture_output=True, text=True, timeout=120, env=env
    )
    assert out.returncode == 0, out.stderr
    assert "Thanks, Linus!" in out.stdout
