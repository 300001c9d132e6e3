"""The exported script: data only as literals, no overwrite unless asked, and it runs in real Chromium."""

from __future__ import annotations

import ast
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ocnb.skills.export import script_data
from ocnb.skills.store import SkillStore
from tests.skills.helpers import LATE_REFUSAL_STEP_MS, art, click, fill, navigate

pytestmark = pytest.mark.browser

HOSTILE_NAME = 'Sign up """\nopen("PWNED", "w").close()\n"""  # {who} %(prog)s'
TRICKY_VALUE = '${who} "null" true/false """'

DRIVER = """
import importlib.util, json, os, sys
spec = importlib.util.spec_from_file_location("exported", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
from playwright.sync_api import sync_playwright
with sync_playwright() as p:
    args = ["--no-sandbox"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    b = p.chromium.launch(executable_path=os.environ.get("CHROMIUM") or None, args=args)
    page = b.new_page()
    m.run(page, {"who": sys.argv[2]})
    print(json.dumps(page.evaluate('''() => ({
        result: document.querySelector("#result").textContent,
        name: document.querySelector("#full-name").value,
        pw: document.querySelector("#pw").value,
        terms: document.querySelector("#terms").checked})''')))
    b.close()
"""


def _skill(site, home: Path) -> dict:
    url = site.page("form.html")
    country = {
        "kind": "select",
        "selectors": [{"type": "css", "value": 'select[name="country"]:not([aria-hidden="true"])'}],
        "frame_ordinal": 0,
        "args": {"action": "form_input", "value": "Japan"},
        "risky": False,
    }
    terms = {
        "kind": "fill",
        "selectors": [{"type": "xpath", "value": '//input[@type="checkbox" and @value="yes"]'}],
        "frame_ordinal": 0,
        "args": {"action": "form_input", "value": True},
        "risky": False,
    }
    steps = [
        {"tool": "navigate", "args": {"url": url}, "replay_artifact": art(url, navigate(url))},
        {"tool": "interact", "args": {}, "replay_artifact": art(url, fill("Full name", "#full-name", TRICKY_VALUE))},
        {"tool": "interact", "args": {}, "replay_artifact": art(url, fill("Email", "#email", "${who}@example.com"))},
        {"tool": "interact", "args": {}, "replay_artifact": art(url, fill("Password", "#pw", "${SECRET:SIGNUP_PW}"))},
        {"tool": "form_input", "args": {}, "replay_artifact": art(url, country)},
        {"tool": "form_input", "args": {}, "replay_artifact": art(url, terms)},
        {"tool": "interact", "args": {}, "replay_artifact": art(url, click("button", "Sign up"))},
    ]
    return SkillStore(home).record(url.split("/")[2], HOSTILE_NAME, steps)


def _env(**extra: str) -> dict[str, str]:
    return {"CHROMIUM": shutil.which("chromium") or "", "PATH": "/usr/bin:/bin", **extra}


def test_export_refuses_to_overwrite_unless_asked(session, site, module_home) -> None:
    sid = _skill(site, module_home)["id"]
    target = module_home / "exports" / "overwrite.py"
    assert session.oc_skill_export(skill_id=sid, path=str(target)).ok
    target.write_text("# my edits\n")
    r = session.oc_skill_export(skill_id=sid, path=str(target))
    assert r.error.code == "INVALID_ARGUMENT" and "overwrite" in r.error.message
    assert target.read_text() == "# my edits\n"
    assert session.oc_skill_export(skill_id=sid, path=str(target), overwrite=True).ok
    assert target.read_text().startswith("#!/usr/bin/env python3")
    assert session.oc_skill_export(skill_id=sid, path=str(module_home / "exports" / "x.txt")).error.code == (
        "INVALID_ARGUMENT"
    )


def test_exported_script_keeps_every_string_and_runs_in_chromium(session, site, module_home, tmp_path) -> None:
    skill = _skill(site, module_home)
    r = session.oc_skill_export(skill_id=skill["id"], path=str(module_home / "exports" / "hostile.py"))
    assert r.ok and r.data["steps"] == 7
    script = Path(r.data["path"])
    text = script.read_text()
    tree = ast.parse(text)
    data = {
        n.targets[0].id: ast.literal_eval(n.value)
        for n in tree.body
        if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name) and n.targets[0].id in script_data(skill)
    }
    assert data == script_data(skill) and data["SKILL"]["name"] == HOSTILE_NAME and data["PARAMS"] == ["who"]
    assert data["STEPS"][4]["selectors"][0]["value"] == 'select[name="country"]:not([aria-hidden="true"])'
    assert data["STEPS"][5]["args"]["value"] is True and data["STEPS"][1]["args"]["value"] == TRICKY_VALUE
    assert "PWNED" not in (ast.get_docstring(tree) or "")

    help_out = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=60, cwd=tmp_path, env=_env()
    )
    assert help_out.returncode == 0 and "--who VALUE" in help_out.stdout, help_out.stderr

    out = subprocess.run(
        [sys.executable, str(script), "--who", "Ada"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=_env(SIGNUP_PW="s3cret!"),
    )
    assert out.returncode == 0, out.stderr
    assert "done: " + site.page("form.html") in out.stdout and HOSTILE_NAME in out.stdout

    out = subprocess.run(
        [sys.executable, "-c", DRIVER, str(script), "Ada"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=_env(SIGNUP_PW="s3cret!"),
    )
    assert out.returncode == 0, out.stderr
    page = json.loads(out.stdout.strip().splitlines()[-1])
    assert page["name"] == 'Ada "null" true/false """'  # not None/True/False, not cut at the quotes
    assert page["result"] == 'Thanks, Ada "null" true/false """! Plan: Free, Country: Japan'
    assert page["pw"] == "s3cret!" and page["terms"] is True
    assert not list(tmp_path.glob("PWNED")) and not list(script.parent.glob("PWNED"))


def test_a_missing_secret_stops_the_script_with_its_name(site, module_home, tmp_path, monkeypatch) -> None:
    from ocnb.skills.export import export_script

    path = tmp_path / "s.py"
    path.write_text(export_script(_skill(site, module_home)))
    spec = importlib.util.spec_from_file_location("exported_s", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.delenv("SIGNUP_PW", raising=False)
    with pytest.raises(SystemExit, match="SIGNUP_PW"):
        module.fill_in({"value": "${SECRET:SIGNUP_PW}"}, {})
    monkeypatch.setenv("SIGNUP_PW", "x")
    assert module.fill_in(["${who}-${SECRET:SIGNUP_PW}", 3], {"who": "A"}) == ["A-x", 3]


VERIFY_DRIVER = """
import importlib.util, json, os, sys
spec = importlib.util.spec_from_file_location("exported", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
from playwright.sync_api import sync_playwright
out = {}
with sync_playwright() as p:
    args = ["--no-sandbox"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    b = p.chromium.launch(executable_path=os.environ.get("CHROMIUM") or None, args=args)
    for label, tolerate in (("strict", ()), ("tolerant", ("name",))):
        page = b.new_page()
        try:
            m.run(page, {}, tolerate, timeout_s=1.0)
            out[label] = {"exit": None}
        except SystemExit as exc:
            out[label] = {"exit": str(exc)}
        out[label]["email"] = page.evaluate("() => document.querySelector('#email').value")
        page.close()
    b.close()
print(json.dumps(out))
"""


def test_exported_script_refuses_an_element_it_cannot_vouch_for(session, site, module_home, tmp_path) -> None:
    from ocnb.skills.export import export_script

    url = site.page("form.html") + "?variant=renamed"  # the Email label now reads "E-mail address"
    email = fill("Email", "#email", "ada@example.com")
    email["fingerprint"] = {  # as capture records it
        "role": "textbox",
        "name": "Email",
        "tag": "input",
        "type": "email",
        "name_attr": "email",
        "autocomplete": "email",
        "label": "Email",
        "frame": {"ordinal": 0},
    }
    steps = [
        {"tool": "navigate", "args": {"url": url}, "replay_artifact": art(url, navigate(url))},
        {"tool": "interact", "args": {}, "replay_artifact": art(url, email)},
    ]
    skill = SkillStore(module_home).record(url.split("/")[2], "verify-export", steps)
    script = tmp_path / "verify.py"
    script.write_text(export_script(skill))
    out = subprocess.run(
        [sys.executable, "-c", VERIFY_DRIVER, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=_env(),
    )
    assert out.returncode == 0, out.stderr
    runs = json.loads(out.stdout.strip().splitlines()[-1])
    strict, tolerant = runs["strict"], runs["tolerant"]
    assert strict["exit"].startswith("step 1 (fill): refused textbox 'E-mail address'"), strict
    assert "name is 'E-mail address', recorded 'Email'" in strict["exit"] and strict["email"] == ""
    assert tolerant == {"exit": None, "email": "ada@example.com"}
    # the same decisions as oc_skill_replay: one engine
    refused = session.oc_skill_replay(skill_id=skill["id"], step_timeout_ms=LATE_REFUSAL_STEP_MS)
    assert refused.error.code == "ARTIFACT_RESOLUTION_FAILED" and refused.error.details["failure"]["step_index"] == 1
    assert session.oc_skill_replay(skill_id=skill["id"], tolerate=["name"]).ok
