"""A person's demonstration becomes a verified skill (issue 43).

The person is a second program: Playwright connected over DevTools to the very browser the ocnb
session attached to (``Session(cdp=…)``), moving the mouse and typing — trusted input, as a
person's. What is checked is what a user would see: the skill file's steps, every byte under
OCNB_HOME (no password), and replay on the same page, on a redesigned one, and refused on a
repurposed one.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ocnb
from ocnb.browser import launch_args
from tests.skills.helpers import page_states

pytestmark = pytest.mark.browser

PASSWORD = "Hunter2-Zebra!"  # typed by the person; must never reach the disk


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def chrome(tmp_path: Path) -> Iterator[str]:
    """A Chromium with an open DevTools port; its endpoint."""
    port = _free_port()
    exe = shutil.which("chromium") or shutil.which("google-chrome")
    assert exe, "no chromium"
    proc = subprocess.Popen(
        [
            exe,
            "--headless",
            f"--remote-debugging-port={port}",
            "--remote-debugging-address=127.0.0.1",
            f"--user-data-dir={tmp_path / 'profile'}",
            *launch_args(),
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 30
        while True:
            try:
                json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/version", timeout=1))
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.kill()
        proc.wait(10)


class Person:
    """The person at the keyboard: Playwright over DevTools on the same browser (trusted input)."""

    def __init__(self, endpoint: str) -> None:
        from playwright.sync_api import sync_playwright

        self._pw = sync_playwright().start()
        self.browser = self._pw.chromium.connect_over_cdp(endpoint)

    def page(self, url_part: str) -> Any:
        deadline = time.time() + 10
        while time.time() < deadline:
            for ctx in self.browser.contexts:
                for p in ctx.pages:
                    if url_part in p.url:
                        return p
            time.sleep(0.1)
        raise AssertionError(f"no page at {url_part}")

    def click(self, page: Any, css: str) -> None:
        box = page.locator(css).bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, steps=3)
        page.mouse.down()
        page.mouse.up()

    def close(self) -> None:
        self.browser.close()
        self._pw.stop()


def _session(endpoint: str, home: Path) -> ocnb.Session:
    return ocnb.Session(cdp=endpoint, home=home, caps=("record",))


def _demonstrate(s: ocnb.Session, person: Person, url: str) -> Any:
    """The person fills in account.html by hand while ocnb records."""
    assert s.navigate(url=url).ok
    started = s.record_start()
    assert started.ok, started
    page = person.page("account.html")
    person.click(page, "#email")  # a focus click: dropped
    page.keyboard.type("ada@example.com", delay=5)
    person.click(page, "#password")
    page.keyboard.type(PASSWORD, delay=5)
    person.click(page, "#plan")  # a choice, as the person makes it: open the list, one down, Enter
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    person.click(page, "label[for=news]")  # the checkbox, through its label
    person.click(page, "main")  # mouse noise: nothing there acts
    person.click(page, "#submit")
    page.wait_for_function("document.getElementById('result').textContent === 'Account created'")
    time.sleep(0.3)
    return page


def _no_password_under(home: Path) -> None:
    """No file under ``home`` holds the typed password in any common spelling."""
    from urllib.parse import quote, quote_plus

    spellings = {PASSWORD, PASSWORD.lower(), PASSWORD.upper(), quote(PASSWORD), quote_plus(PASSWORD)}
    spellings |= {json.dumps(PASSWORD), PASSWORD.encode().hex(), PASSWORD[::-1]}
    import base64

    spellings.add(base64.b64encode(PASSWORD.encode()).decode())
    files = [f for f in home.rglob("*") if f.is_file()]
    assert files
    for f in files:
        data = f.read_bytes()
        for sp in spellings:
            assert sp.encode() not in data, f"{sp!r} in {f}"


def _replay(s: ocnb.Session, skill_id: str, url: str, **extra: Any) -> Any:
    """Replay the skill's steps after its first (the navigation) on ``url`` (a variant of the page)."""
    assert s.navigate(url=url).ok
    return s.oc_skill_replay(
        skill_id=skill_id, params={"email": "grace@example.com"}, step_range={"from": 1}, step_timeout_ms=4000, **extra
    )


def test_demonstration_records_replays_and_refuses(drift, ocnb_home, chrome, tmp_path) -> None:
    s = _session(chrome, ocnb_home)
    url = drift.page("account.html")
    assert s.navigate(url=url).ok
    person = Person(chrome)
    try:
        _demonstrate(s, person, url)
        stop = s.record_stop(name="create account", params={"email": "email"}, labels={"5": "create the account"})
    finally:
        person.close()
    try:
        assert stop.ok, stop
        assert stop.data["signature"] == {"params": ["email"], "secrets": ["PASSWORD"]}
        skill = s.oc_skill_recall(name="create account").data["skills"][0]
        low = [st["replay_artifact"]["steps"][0] for st in skill["steps"]]
        assert [(st["kind"], st["args"].get("action")) for st in low] == [
            ("navigate", None),
            ("fill", "fill"),
            ("fill", "fill"),
            ("select", "select"),
            ("click", "check"),
            ("click", "click"),
        ]
        assert [st["args"].get("value") for st in low[1:4]] == ["${email}", "${SECRET:PASSWORD}", "Pro"]
        assert [st["description"] for st in skill["steps"]][1:] == [
            'fill textbox "Email"',
            'fill textbox "Password"',
            "choose 'Pro' in combobox \"Plan\"",
            'check checkbox "Keep me posted"',
            "create the account",
        ]
        for st in low[1:]:  # the chain and fingerprint of a recorded interact
            assert st["selectors"][0]["type"] == "role_name" and any(e["type"] == "css" for e in st["selectors"])
            assert st["fingerprint"]["tag"] and st["fingerprint"]["frame"] == {"ordinal": 0}
        assert low[2]["fingerprint"]["type"] == "password"

        # replay asks for the secret
        missing = s.oc_skill_replay(skill_id=skill["id"], params={"email": "x@example.com"})
        assert not missing.ok and missing.error.code == "MISSING_SECRET", missing
        env = tmp_path / "secrets.env"
        env.write_text("PASSWORD=Other-Pass-1\n")
        s.load_secrets(env)

        # the same page, then a redesign with new ids, classes and order
        for variant in ("", "?v=ids,classes,order"):
            r = _replay(s, skill["id"], url + variant)
            assert r.ok, (variant, r)
            state = page_states(s)["account.html"]
            assert state["log"] == ["submit"]
            assert state["values"] == {
                "email": "grace@example.com",
                "password": "Other-Pass-1",
                "plan": "pro",
                "news": True,
            }
        # a repurposed button, a field that changed meaning: refused before acting
        deleted = _replay(s, skill["id"], url + "?v=delete")
        assert deleted.error.code == "ARTIFACT_RESOLUTION_FAILED", deleted
        assert deleted.data["failure"]["step_index"] == 5
        assert page_states(s)["account.html"]["log"] == []
        phone = _replay(s, skill["id"], url + "?v=phone")
        assert phone.error.code == "ARTIFACT_RESOLUTION_FAILED" and phone.data["failure"]["step_index"] == 1
        assert page_states(s)["account.html"]["values"]["phone"] == ""
    finally:
        s.close()
    _no_password_under(ocnb_home)


def test_demonstration_across_frames_shadow_roots_keys_navigations_and_tabs(drift, ocnb_home, chrome) -> None:
    s = _session(chrome, ocnb_home)
    url = drift.page("widgets.html")
    assert s.navigate(url=url).ok
    person = Person(chrome)
    try:
        assert s.record_start().ok
        page = person.page("widgets.html")
        person.click(page, "star-button button")  # inside an open shadow root
        frame = page.frame_locator("iframe")
        note = frame.locator("#note")
        note.click()
        page.keyboard.type("hello there", delay=5)
        frame.locator("#save").click()
        person.click(page, "#q")
        page.keyboard.type("zebra", delay=5)
        page.keyboard.press("Enter")  # submits: the navigation it causes is not a step of its own
        page.wait_for_url("**/index.html?q=zebra")
        # a page script calling the recorder's binding itself, with a made-up nonce: refused
        forged = page.evaluate(
            """() => { const k = Object.keys(window).find((n) => n.startsWith("__ocnb_rec_"));
                 if (!k) return "none";
                 window[k]({type: "click", nonce: "0".repeat(32), id: 1,
                            chain: [{type: "css", value: "#evil"}], fingerprint: {role: "button"}});
                 return k; }"""
        )
        assert forged.startswith("__ocnb_rec_")
        page.goto(drift.page("account.html?v=synthetic"))  # an address typed by the person
        page.wait_for_function("window.__synthetic === true")  # the page clicked and typed by itself
        tab = page.context.new_page()  # a new tab, with an address typed in it
        tab.goto(drift.page("index.html"))
        time.sleep(0.5)
        status = s.record_status().data
        stop = s.record_stop(name="widgets tour")
    finally:
        person.close()
    try:
        assert stop.ok, stop
        assert status["refused"] >= 1
        steps = stop.data["steps"]
        assert [(st["action"], st.get("target", {}).get("name") or st.get("url")) for st in steps] == [
            ("navigate", url),
            ("click", "Star this page"),
            ("fill", "Note"),
            ("click", "Save note"),
            ("fill", "Search"),
            ("press", "Search"),
            ("navigate", drift.page("account.html?v=synthetic")),
            ("navigate", drift.page("index.html")),
        ], [(st["action"], st.get("target", {}).get("name") or st.get("url")) for st in steps]
        assert steps[2]["value"] == "hello there" and steps[5]["key"] == "Enter"
        skill = s.oc_skill_recall(name="widgets tour").data["skills"][0]
        tools = [st["tool"] for st in skill["steps"]]
        assert tools[-1] == "tabs_create" and tools[-2] == "navigate"
        framed = skill["steps"][2]["replay_artifact"]["steps"][0]
        assert framed["fingerprint"]["frame"]["ordinal"] == 1
        assert framed["fingerprint"]["frame"]["url"].endswith("/note.html")
        assert drift.cross_site_url.rstrip("/") in framed["fingerprint"]["frame"]["url"]  # another site: an OOPIF
        # the steps in the shadow root and the cross-origin frame replay
        r = s.oc_skill_replay(skill_id=skill["id"], step_range={"from": 0, "to": 3})
        assert r.ok, r
        assert page_states(s)["widgets.html"]["log"] == ["star"]
        assert page_states(s)["note.html"]["log"] == ["save:hello there"]
    finally:
        s.close()


def _fractions(s: ocnb.Session, css: str) -> tuple[float, float]:
    """Where ``css`` sits on the screenshot, as fractions of the viewport (what a click on it sends)."""
    js = f"""(() => {{ const r = document.querySelector({json.dumps(css)}).getBoundingClientRect();
        return [(r.left + r.width / 2) / innerWidth, (r.top + r.height / 2) / innerHeight]; }})()"""
    fx, fy = s.call("javascript_tool", expression=js).data["result"]
    return fx, fy


def test_a_demonstration_through_the_live_view(drift, ocnb_home) -> None:
    from ocnb.widgets import BrowserView

    s = ocnb.Session(home=ocnb_home, caps=("record",))
    try:
        url = drift.page("account.html")
        assert s.navigate(url=url).ok
        view = BrowserView(s, auto_refresh=False)
        assert s.record_start().ok
        assert view.click_at(*_fractions(s, "#email")).ok
        view.screen._handle_custom_msg({"type": "text", "text": "ada@"}, [])  # what the front end sends
        assert view.type("example.com").ok
        assert view.click_at(*_fractions(s, "#password")).ok
        typed = view.type(PASSWORD)  # a password field: typed as a secret of the session
        assert typed.ok and typed.data["element"]["name"] == "Password"
        view.screen._handle_custom_msg({"type": "key", "key": "Enter"}, [])
        assert page_states(s)["account.html"]["log"] == ["submit"]
        assert page_states(s)["account.html"]["values"]["password"] == PASSWORD
        stop = s.record_stop(name="account via the view")
        assert stop.ok, stop
        assert [(st["action"], st.get("value") or st.get("key")) for st in stop.data["steps"]] == [
            ("navigate", None),
            ("fill", "ada@example.com"),
            ("fill", "${SECRET:PASSWORD}"),
            ("press", "Enter"),
        ]
        journal = s.journal_df()
        typed_rows = journal[journal["tool"] == "interact"]
        assert list(typed_rows["source"]) == ["widget"] * 6  # every act of the view is journaled
        assert "${SECRET:TYPED_1}" in str(list(typed_rows["args"]))
        view.close()
    finally:
        s.close()
    _no_password_under(ocnb_home)


def test_the_skill_recorder_toggle_records_what_i_do(drift, ocnb_home) -> None:
    from ocnb.widgets import SkillRecorder

    s = ocnb.Session(home=ocnb_home)  # the toggle offers the record group itself
    try:
        url = drift.page("account.html")
        assert s.navigate(url=url).ok
        rec = SkillRecorder(s)
        rec.demo_toggle.value = True  # "Record what I do"
        assert rec.demonstrating, rec.status.value
        # the person's input, through ocnb's own trusted keyboard and mouse
        assert s.interact(query="Email", action="fill", value="ada@example.com").ok
        assert s.interact(query='combobox "Plan"').ok  # a list is chosen from as a person does: keys
        for key in ("ArrowDown", "ArrowDown", "Enter"):
            assert s.interact(action="press", key=key).ok
        assert s.interact(query='button "Create account"').ok
        rec.demo_toggle.value = False
        assert [st["action"] for st in rec.demo_steps] == ["navigate", "fill", "select", "click"]
        assert [b.value for b in rec._label_boxes][1] == 'fill textbox "Email"'
        rec._label_boxes[1].value = "enter the email address"  # edited before saving
        rec.params_box.value = "email=email, plan=plan"
        rec.name_box.value = "account from the widget"
        rec.save_button.click()
        assert rec.skill_id, rec.status.value
        skill = s.oc_skill_recall(name="account from the widget").data["skills"][0]
        assert [st["description"] for st in skill["steps"]][1] == "enter the email address"
        assert [st["args"].get("value") for st in skill["steps"]][1:3] == ["${email}", "${plan}"]
        assert rec.demo_steps == [] and "saved" in rec.status.value
        assert s.navigate(url=url).ok
        replayed = rec.replay(params={"email": "lin@example.com", "plan": "Pro"}, step_range={"from": 1})
        assert replayed.ok, replayed
        assert page_states(s)["account.html"]["values"]["plan"] == "pro"
        assert page_states(s)["account.html"]["log"] == ["submit"]
        rec.close()
    finally:
        s.close()


def test_a_demonstrated_skill_exports_and_runs_over_rows(drift, ocnb_home, tmp_path) -> None:
    import subprocess
    import sys

    from ocnb.batch.pool import Pool

    env_file = tmp_path / "secrets.env"
    env_file.write_text(f"PW={PASSWORD}\n")
    url = drift.page("account.html")
    s = ocnb.Session(home=ocnb_home, caps=("record",), secrets=env_file)
    try:
        assert s.navigate(url=url).ok
        assert s.record_start().ok
        assert s.interact(query="Email", action="fill", value="ada@example.com").ok
        assert s.interact(query="Password", action="fill", value="${SECRET:PW}").ok  # the person's password
        assert s.interact(query='button "Create account"').ok
        stop = s.record_stop(name="account rows", params={"email": "email"})
        assert stop.ok and stop.data["signature"] == {"params": ["email"], "secrets": ["PASSWORD"]}, stop
        sid = stop.data["skill_id"]
        script = s.oc_skill_export(skill_id=sid, path=str(ocnb_home / "exports" / "account.py"))
        assert script.ok, script
    finally:
        s.close()
    env = {"CHROMIUM": shutil.which("chromium") or "", "PATH": "/usr/bin:/bin", "PASSWORD": "From-Env-9"}
    out = subprocess.run(
        [sys.executable, str(ocnb_home / "exports" / "account.py"), "--email", "eve@example.com"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert "done: " + url in out.stdout
    rows = [{"email": f"row{i}@example.com"} for i in range(3)]
    rows_env = tmp_path / "rows.env"
    rows_env.write_text("PASSWORD=Rows-Pass-3\n")
    with Pool(size=2, home=ocnb_home, secrets=rows_env) as pool:
        df = pool.replay(sid, rows, progress=False)
    assert df["ok"].all(), df.to_string()
    assert len(df) == 3
    _no_password_under(ocnb_home)


def test_a_file_chosen_by_the_person_replays_from_a_path_parameter(site, ocnb_home, chrome, tmp_path) -> None:
    """The person picks a file through the page's file chooser (the page sees only its name): the step
    is a file_upload whose paths are ``${file_attachment}``; replay needs that parameter, takes only
    files under the upload root, and the server receives the file given at replay."""
    chosen = tmp_path / "person" / "cv-by-hand.txt"
    chosen.parent.mkdir()
    chosen.write_bytes(b"typed by a person")
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    (uploads / "report.csv").write_bytes(b"a,b\n1,2\n3,4\n")
    (tmp_path / "outside.txt").write_bytes(b"not for the page")
    s = ocnb.Session(cdp=chrome, home=ocnb_home, caps=("record",), upload_root=uploads)
    url = site.page("upload.html")
    assert s.navigate(url=url).ok
    person = Person(chrome)
    try:
        assert s.record_start().ok
        page = person.page("upload.html")
        trusted = page.evaluate_handle(
            """() => { const seen = []; document.getElementById("attachment")
                 .addEventListener("change", (e) => seen.push(e.isTrusted)); return seen; }"""
        )
        # The person picks the file in the browser's chooser: the chooser the click opens is taken
        # over on the DevTools side (Page.fileChooserOpened) and answered with DOM.setFileInputFiles, as
        # the real dialog answers (trusted input and change events). Playwright's own set_files
        # (page.expect_file_chooser) dispatches untrusted events from a script: the recorder ignores them.
        cdp = page.context.new_cdp_session(page)
        opened: list[dict[str, Any]] = []
        cdp.on("Page.fileChooserOpened", lambda event: opened.append(event))
        cdp.send("Page.enable")
        cdp.send("Page.setInterceptFileChooserDialog", {"enabled": True})
        person.click(page, "#attachment")  # the person's click opens the chooser
        deadline = time.time() + 5
        while not opened and time.time() < deadline:
            page.wait_for_timeout(50)
        assert opened, "no file chooser opened"
        cdp.send("DOM.setFileInputFiles", {"files": [str(chosen)], "backendNodeId": opened[0]["backendNodeId"]})
        page.wait_for_function("document.getElementById('file-count').textContent === '1 file(s) chosen'")
        assert trusted.json_value() == [True]  # what the page saw: a trusted change
        person.click(page, "button[type=submit]")
        page.wait_for_url("**/echo")
        time.sleep(0.3)
        stop = s.record_stop(name="send a file")
    finally:
        person.close()
    try:
        assert stop.ok, stop
        steps = stop.data["steps"]
        assert [st["action"] for st in steps] == ["navigate", "upload", "click"], steps
        assert steps[1]["files"] == ["cv-by-hand.txt"] and steps[1]["param"] == "file_attachment"
        assert stop.data["signature"] == {"params": ["file_attachment"], "secrets": []}
        skill = s.oc_skill_recall(name="send a file").data["skills"][0]
        assert skill["steps"][1]["tool"] == "file_upload"
        low = skill["steps"][1]["replay_artifact"]["steps"][0]
        assert low["kind"] == "upload" and low["args"]["paths"] == "${file_attachment}"
        assert any(e["type"] == "css" for e in low["selectors"]) and low["fingerprint"]["type"] == "file"
        assert str(chosen.parent) not in json.dumps(skill)  # the page never saw the path; neither does the skill

        def replay(params: dict[str, Any]) -> Any:
            assert s.navigate(url=url).ok
            return s.oc_skill_replay(skill_id=skill["id"], params=params, step_range={"from": 1}, step_timeout_ms=4000)

        missing = replay({})
        assert not missing.ok and missing.error.code == "INVALID_ARGUMENT", missing
        assert "file_attachment" in missing.error.message
        outside = replay({"file_attachment": str(tmp_path / "outside.txt")})
        assert not outside.ok and outside.error.code == "FILE_NOT_ALLOWED", outside
        escape = replay({"file_attachment": "../outside.txt"})
        assert not escape.ok and escape.error.code == "FILE_NOT_ALLOWED", escape
        assert s.call("javascript_tool", expression="location.pathname").data["result"] == "/upload.html"
        done = replay({"file_attachment": "report.csv"})  # relative: under the upload root
        assert done.ok, done
        echoed = s.call("javascript_tool", expression="document.getElementById('fields').innerText").data["result"]
        assert "report.csv (12 bytes)" in echoed, echoed  # what the server received
        assert "cv-by-hand" not in echoed
    finally:
        s.close()


def test_dialogs_the_person_answers_replay_answered_the_same_way(site, ocnb_home, chrome) -> None:
    """While recording, a dialog is the person's to answer (ocnb's policy, "accept" here, holds off):
    the person dismisses a confirm and types into a prompt in their own driver; headless, a prompt is
    answered through dialog_answer. Replay answers each dialog as recorded — the confirm dismissed,
    although the session's policy would accept it — and a prompt's text can be a parameter."""
    s = ocnb.Session(cdp=chrome, home=ocnb_home, caps=("record", "dialogs"))
    url = site.page("dialogs.html")
    assert s.navigate(url=url).ok
    person = Person(chrome)
    result = "document.getElementById('dialog-result').textContent"
    try:
        assert s.record_start().ok
        page = person.page("dialogs.html")
        answers = {"confirm": None, "prompt": "Grace"}  # None: dismiss
        page.on("dialog", lambda d: d.dismiss() if answers[d.type] is None else d.accept(answers[d.type]))
        person.click(page, "#show-confirm")
        page.wait_for_function(f"{result} === 'confirm: false'")
        person.click(page, "#show-prompt")
        page.wait_for_function(f"{result} === 'prompt: Grace'")
    finally:
        person.close()  # from here no other driver answers: ocnb's dialog_answer does (the headless way)
    try:
        opened = s.interact(query='button "Show prompt"')
        assert opened.ok and opened.data["completed"] is False, opened  # held for the person
        assert opened.data["pending_dialog"]["type"] == "prompt"
        answered = s.call("dialog_answer", text="Hopper")
        assert answered.ok and answered.data.get("action") == "accepted", answered
        assert s.call("javascript_tool", expression=result).data["result"] == "prompt: Hopper"
        status = s.record_status()
        assert status.ok, status
        stop = s.record_stop(name="answer dialogs", params={"prompt": "name"})
        assert stop.ok, stop
        steps = stop.data["steps"]
        assert [(st["action"], st.get("dialog")) for st in steps] == [
            ("navigate", None),
            ("click", {"type": "confirm", "message": "Do you want to continue?", "accept": False}),
            ("click", {"type": "prompt", "message": "What is your name?", "accept": True, "text": "Grace"}),
            ("click", {"type": "prompt", "message": "What is your name?", "accept": True, "text": "Hopper"}),
        ], steps
        assert stop.data["signature"] == {"params": ["name"], "secrets": []}
        skill = s.oc_skill_recall(name="answer dialogs").data["skills"][0]
        low = [st["replay_artifact"]["steps"][0] for st in skill["steps"]]
        assert [st["args"].get("dialog", {}).get("text") for st in low] == [None, None, "${name}", "${name}"]
        # after the recording the session's policy ("accept") is back: a confirm is accepted at once
        assert s.interact(query='button "Show confirm"').ok
        assert s.call("javascript_tool", expression=result).data["result"] == "confirm: true"

        assert s.navigate(url=url).ok
        r = s.oc_skill_replay(skill_id=skill["id"], step_range={"from": 1, "to": 1}, step_timeout_ms=4000)
        assert r.ok, r
        assert r.data["step_results"][0]["dialog"] == "answered"
        assert s.call("javascript_tool", expression=result).data["result"] == "confirm: false"
        missing = s.oc_skill_replay(skill_id=skill["id"], step_range={"from": 2})
        assert not missing.ok and missing.error.code == "INVALID_ARGUMENT" and "name" in missing.error.message
        r = s.oc_skill_replay(
            skill_id=skill["id"], params={"name": "Lin"}, step_range={"from": 2, "to": 2}, step_timeout_ms=4000
        )
        assert r.ok, r
        assert s.call("javascript_tool", expression=result).data["result"] == "prompt: Lin"
        assert [d["action"] for d in s.state.tab().dialogs][-2:] == ["dismissed", "accepted"]
    finally:
        s.close()
