"""Logins that persist and downloads (issue 23: 2, 3), in real Chromium against the demo site.

``persist.html`` signs in with a cookie, a localStorage token and an IndexedDB profile; a second
Session starts signed in from a saved state and from a persistent profile. ``downloads.html`` offers
a CSV over HTTP (with Content-Length) and files made in the page (blob URLs, no length).
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

import ocnb
from ocnb.commands.demosite import site_root

pytestmark = pytest.mark.browser


def _shows(s: ocnb.Session, expected: str) -> bool:
    """Whether the page's own verdict becomes ``expected`` within 5 s (it reads IndexedDB asynchronously)."""
    deadline = time.monotonic() + 5
    while True:
        out = s.javascript_tool(expression="document.getElementById('status').textContent")
        text = str(out.data["result"]) if out.ok else repr(out.error)
        if text == expected or time.monotonic() > deadline:
            return text == expected
        time.sleep(0.1)


def _sign_in(s: ocnb.Session, site, user: str = "ada") -> None:
    assert s.navigate(url=site.page("persist.html")).ok
    assert _shows(s, "Signed out")
    assert s.fill_form(fields={"Username": user, "Password": "correct-horse"}).ok
    assert s.interact(query="Sign in", action="click").ok
    assert _shows(s, f"Signed in as {user}")


def _all_text(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())


def test_a_saved_state_starts_the_next_session_signed_in_and_stays_secret(site, ocnb_home) -> None:
    with ocnb.Session(home=ocnb_home, caps=["storage"]) as s:
        _sign_in(s, site)
        saved = s.storage_state(action="save", path="members")
        assert saved.ok, saved.error
        path = ocnb_home / "state" / "members.json"
        assert saved.data == {"action": "save", "path": str(path), "cookies": 1, "origins": 1, "indexed_db": 1}
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    state = json.loads(path.read_text())
    sid = next(c["value"] for c in state["cookies"] if c["name"] == "members_sid")

    with ocnb.Session(home=ocnb_home, storage_state="members") as again:
        assert again.navigate(url=site.page("persist.html")).ok
        assert _shows(again, "Signed in as ada")  # cookie, localStorage and IndexedDB all came back

    # The state file is a secret: its values reach neither the journal, the trace nor a result.
    logged = _all_text(ocnb_home / "journal") + _all_text(ocnb_home / "traces")
    assert "members_sid" not in logged and sid not in logged and "tok-" not in logged


def test_a_state_loads_into_a_running_session(site, ocnb_home) -> None:
    with ocnb.Session(home=ocnb_home, caps=["storage"]) as s:
        _sign_in(s, site, user="grace")
        assert s.storage_state(action="save", path="grace.json").ok
        assert s.interact(query="Sign out", action="click").ok
        assert _shows(s, "Signed out")
        _sign_in(s, site, user="hopper")  # the page's database (held open by it) now names hopper
        loaded = s.storage_state(action="load", path="grace")
        assert loaded.ok and loaded.data["cookies"] == 1 and loaded.data["origins"] == 1
        assert s.page_reload().ok
        assert _shows(s, "Signed in as grace")


def test_a_persistent_profile_keeps_the_login(site, ocnb_home, tmp_path) -> None:
    profile = tmp_path / "profile"
    with ocnb.Session(home=ocnb_home, user_data_dir=profile) as s:
        _sign_in(s, site, user="lin")
        assert s.tabs_context().data["tabs"][0]["tab_id"] == "t1"  # the profile's own first page
    assert stat.S_IMODE(profile.stat().st_mode) == 0o700
    with ocnb.Session(home=ocnb_home, user_data_dir=profile) as again:
        assert again.navigate(url=site.page("persist.html")).ok
        assert _shows(again, "Signed in as lin")


def test_a_state_file_outside_the_allowed_folders_changes_nothing(site, ocnb_home, tmp_path) -> None:
    outside = tmp_path.parent / "elsewhere.json"
    outside.write_text('{"cookies": [], "origins": []}')
    with ocnb.Session(home=ocnb_home, caps=["storage"]) as s:
        _sign_in(s, site, user="mo")
        before = s.cookies(action="get").data
        for args, code in [
            ({"action": "load", "path": str(outside)}, "FILE_NOT_ALLOWED"),
            ({"action": "load", "path": "../elsewhere"}, "FILE_NOT_ALLOWED"),
            ({"action": "save", "path": str(tmp_path / "mine.json")}, "FILE_NOT_ALLOWED"),
            ({"action": "save", "path": "./in-the-project.json"}, "FILE_NOT_ALLOWED"),  # readable there, never written
            ({"action": "save", "path": "bad name"}, "INVALID_ARGUMENT"),
        ]:
            r = s.storage_state(**args)
            assert not r.ok and r.error.code == code, (args, r.error)
        assert s.cookies(action="get").data == before and _shows(s, "Signed in as mo")
        assert not (tmp_path / "mine.json").exists() and not Path("in-the-project.json").exists()
        assert not (ocnb_home / "state").exists()

    # A session told to start from such a file refuses its first call and starts no browser.
    s = ocnb.Session(home=ocnb_home, storage_state=str(outside))
    try:
        r = s.navigate(url=site.page("persist.html"))
        assert not r.ok and r.error.code == "FILE_NOT_ALLOWED" and not s.started
    finally:
        s.close()


def test_downloads_are_saved_listed_limited_and_sanitised(site, ocnb_home) -> None:
    folder = ocnb_home / "downloads"
    with ocnb.Session(home=ocnb_home, caps=["downloads"], download_max_bytes=10_000) as s:
        assert s.navigate(url=site.page("downloads.html")).ok
        report = s.interact(query="Monthly report (CSV)", action="click")
        assert report.ok, report.error
        (got,) = report.data["changes"]["downloads"]  # reported by the call that caused it
        assert got["state"] == "saved" and got["name"] == "report.csv" and got["bytes"] == 3508
        assert Path(got["path"]) == folder / "report.csv"
        assert (folder / "report.csv").read_bytes() == (Path(site.root) / "files" / "report.csv").read_bytes()
        assert stat.S_IMODE((folder / "report.csv").stat().st_mode) == 0o600

        again = s.interact(query="Monthly report (CSV)", action="click").data["changes"]["downloads"][0]
        assert again["name"] == "report-2.csv"  # a taken name is never overwritten

        sneaky = s.interact(query="Sneaky name", action="click").data["changes"]["downloads"][0]
        assert sneaky["state"] == "saved"
        assert "/" not in sneaky["name"] and ".." not in sneaky["name"] and not sneaky["name"].startswith(".")
        assert Path(sneaky["path"]).parent == folder

        big = s.interact(query="Big file (2 MB)", action="click").data["changes"]["downloads"][0]
        assert big["state"] == "refused" and big["bytes"] == 2 * 1024 * 1024 and "limit" in big["reason"]
        assert "path" not in big

        # Opening a file's URL is a download too: the page stays, the call says what happened.
        nav = s.navigate(url=site.page("files/report.csv"))
        assert nav.ok, nav.error
        assert nav.data["url"] == site.page("downloads.html") and nav.data["downloads"][0]["name"] == "report-3.csv"
        s.configure(download_max_bytes=1000)  # over the limit by its Content-Length: cancelled at once
        early = s.navigate(url=site.page("files/report.csv")).data["downloads"][0]
        assert early["state"] == "refused" and "announced" in early["reason"]

        listed = s.downloads().data
        assert listed["folder"] == str(folder)
        assert [d["state"] for d in listed["downloads"]] == ["saved", "saved", "saved", "refused", "saved", "refused"]
        assert sorted(os.listdir(folder)) == sorted(["report.csv", "report-2.csv", "report-3.csv", sneaky["name"]])
        assert s.read_page(mode="text").ok  # the session goes on as before
    assert not [n for n in os.listdir(folder) if n.endswith(".part")]


def test_a_page_that_starts_a_download_as_it_loads_is_reached_not_waited_out(site, ocnb_home) -> None:
    """``download-begins.html`` sends its frame to a file as it loads ("your download will begin
    shortly"): the navigation becomes a download, the page stays, and Chromium never fires the page's
    load event. navigate and page_reload end once the page's document is complete, say why, and report
    the download (they waited for the event until TIMEOUT, 30 s)."""
    url = site.page("download-begins.html")
    report = (site_root() / "files" / "report.csv").read_bytes()
    with ocnb.Session(home=ocnb_home, caps=["downloads"]) as s:
        nav = s.navigate(url=url)
        assert nav.ok, nav.error
        assert (nav.data["url"], nav.data["title"], nav.data["status"]) == (url, "Your download", 200)
        assert "never fired its load event" in nav.data["note"], nav.data
        (got,) = nav.data["downloads"]
        assert got["state"] == "saved" and (ocnb_home / "downloads" / got["name"]).read_bytes() == report
        assert "will begin shortly" in s.read_page(mode="text").data["content"]  # the page is there to read
        again = s.call("page_reload")
        assert again.ok and "never fired" in again.data["note"] and again.data["status"] == 200, again
        assert [d["name"] for d in again.data["downloads"]] == ["report-2.csv"]
        plain = s.navigate(url=site.page("form.html"))  # a page that loads as usual says nothing more
        assert plain.ok and "note" not in plain.data and "downloads" not in plain.data, plain.data


def test_downloads_and_storage_are_opt_in_groups(site, ocnb_home) -> None:
    plain = ocnb.Session(home=ocnb_home)
    try:
        assert "downloads" not in plain.registry.names() and "storage_state" not in plain.registry.names()
    finally:
        plain.close()
