"""interact, form_input, fill_form, drag_drop and file_upload on the demo site, in real Chromium."""

from __future__ import annotations

import os
from typing import Any

import pytest

import ocnb.tools.dom  # noqa: F401
import ocnb.tools.interact  # noqa: F401 - registers the tools


def js(session: Any, expression: str) -> Any:
    r = session.call("javascript_tool", expression=expression)
    assert r.ok, r.error
    return r.data.get("result", r.data) if isinstance(r.data, dict) else r.data


def text_of(session: Any, selector: str) -> str:
    return str(js(session, f"() => document.querySelector({selector!r}).textContent"))


def test_ambiguous_query_lists_candidates_and_does_not_act(session, site):
    session.call("navigate", url=site.page("ambiguous.html"))
    r = session.call("interact", query="Delete", action="click")
    assert not r.ok and r.error.code == "AMBIGUOUS_TARGET"
    cands = r.error.details["candidates"]
    assert len(cands) == 2 and {c["name"] for c in cands} == {"Delete"} and all(c["ref"] for c in cands)
    assert text_of(session, "#log") == ""
    # one of the candidates' refs acts on exactly that row
    assert session.call("interact", ref=cands[1]["ref"], action="click").ok
    assert text_of(session, "#log") == "Deleted Invoice 1002"


def test_not_found_gives_nearest_candidates_and_does_not_act(session, site):
    session.call("navigate", url=site.page("ambiguous.html"))
    r = session.call("interact", query="Archive everything", action="click")
    assert not r.ok and r.error.code == "ELEMENT_NOT_FOUND"
    assert r.error.details["nearest"][0]["name"] == "Archive all"
    assert text_of(session, "#log") == ""


def test_fill_form_resolves_every_field_and_reports_it(session, site):
    session.call("navigate", url=site.page("form.html"))
    fields = {
        "Full name": "Ada Lovelace",
        "email": "ada@example.com",
        "Country": "Japan",
        "I accept the terms": True,
        "Pro": True,
    }
    r = session.call("fill_form", fields=fields, capture_artifact=True)
    assert r.ok, r.error
    by_field = {f["field"]: f for f in r.data["fields"]}
    assert by_field["email"]["name"] == "Email" and by_field["email"]["via"] == "role+name"
    assert by_field["Country"]["role"] == "combobox" and by_field["Country"]["selector_chain"]
    values = js(session, "() => [...new FormData(document.getElementById('signup'))].map(([k, v]) => k + '=' + v)")
    assert "full_name=Ada Lovelace" in values and "email=ada@example.com" in values
    assert "country=Japan" in values and "terms=yes" in values and "plan=Pro" in values


def test_fill_form_fills_nothing_when_a_field_does_not_resolve(session, site):
    session.call("navigate", url=site.page("form.html"))
    r = session.call("fill_form", fields={"Full name": "Ada", "Shoe size": "42"})
    assert not r.ok and r.error.code == "ELEMENT_NOT_FOUND" and r.error.details["field"] == "Shoe size"
    assert js(session, "() => document.getElementById('full-name').value") == ""


def test_form_input_fires_input_and_change(session, site):
    session.call("navigate", url=site.page("form.html"))
    js(
        session,
        "() => { window.ev = []; for (const t of ['input', 'change']) "
        "document.addEventListener(t, e => window.ev.push(t + ':' + e.target.id), true); }",
    )
    assert session.call("form_input", query="Message", value="hi").ok
    assert session.call("form_input", query="Country", value="Brazil").ok
    r = session.call("form_input", query="I accept the terms", value=True, capture_artifact=True)
    assert r.ok and r.data["element"]["role"] == "checkbox" and r.data["selector_chain"][0]["type"] == "role_name"
    events = js(session, "() => window.ev")
    for ident in ("msg", "country", "terms"):
        assert f"input:{ident}" in events and f"change:{ident}" in events
    assert session.call("form_input", query="Free", value=False).error.code == "INVALID_ARGUMENT"
    # a word that is neither yes nor no is refused, never read as "uncheck" (the box stays checked)
    r = session.call("form_input", query="I accept the terms", value="maybe")
    assert r.error.code == "INVALID_ARGUMENT" and "not a checkbox value" in r.error.message
    assert js(session, "() => document.getElementById('terms').checked") is True
    assert session.call("form_input", query="I accept the terms", value="off").ok
    assert js(session, "() => document.getElementById('terms').checked") is False


def test_interact_actions_and_visible_changes(session, site):
    session.call("navigate", url=site.page("dynamic.html"))
    r = session.call("interact", query="Clicked 0 times", action="double_click", intent="count twice")
    assert r.ok and r.data["element"]["role"] == "button" and r.data["changes"]["dom_changed"]
    assert text_of(session, "#counter") == "Clicked 2 times"
    assert session.call("interact", query="Clicked 2 times", action="hover").ok
    assert session.call("interact", query="Load more", action="scroll_into_view").ok
    assert session.call("interact", query="Load more", action="fill").error.code == "INVALID_ARGUMENT"
    assert session.call("interact", query="Load more", action="click", intent="").error.code == "INVALID_INTENT"

    session.call("navigate", url=site.page("index.html"))
    r = session.call("interact", query="Sign-up form", action="click")
    assert r.ok and r.data["changes"]["navigated"] and r.data["changes"]["url"].endswith("form.html")
    r = session.call("interact", query="Email", action="type", value="a@b.c")
    assert r.ok and js(session, "() => document.getElementById('email').value") == "a@b.c"
    assert session.call("interact", query="Email", action="press", key="Control+A").ok


def test_new_tab_is_reported(session, site):
    session.call("navigate", url=site.page("popup.html"))
    r = session.call("interact", query="Open child in a new tab", action="click")
    assert r.ok and r.data["changes"]["new_tab"]


@pytest.mark.parametrize(
    ("button", "kind", "shown"),
    [
        ("Show alert", "alert", "alert: closed"),
        ("Show confirm", "confirm", "confirm: true"),
        ("Show prompt", "prompt", "prompt: Ada"),
    ],
)
def test_dialogs_are_handled_and_reported(session, site, button, kind, shown):
    session.call("navigate", url=site.page("dialogs.html"))
    r = session.call("interact", query=button, action="click")
    assert r.ok, r.error
    assert r.data["changes"]["dialogs"][0]["type"] == kind
    assert r.data["changes"]["dialogs"][0]["action"] == "accepted"
    assert text_of(session, "#dialog-result") == shown


def test_drag_drop_by_query(session, site):
    session.call("navigate", url=site.page("dragdrop.html"))
    r = session.call("drag_drop", source="Card A", target="Done column")
    assert r.ok, r.error
    assert r.data["target"]["name"] == "Done column"
    assert text_of(session, "#drop-status") == "Dropped: Card A"


def test_file_upload_only_under_the_upload_root(session, site, tmp_path, tmp_path_factory):
    root = tmp_path / "uploads"
    root.mkdir()
    (root / "ok.txt").write_text("hello")
    outside = tmp_path_factory.mktemp("outside") / "secret.txt"
    outside.write_text("secret")
    os.symlink(outside, root / "link.txt")
    old = session.config.upload_root
    session.configure(upload_root=root)
    try:
        session.call("navigate", url=site.page("upload.html"))
        for bad in (str(outside), "link.txt", "../outside.txt", str(root / ".." / "x")):
            r = session.call("file_upload", query="Attachment", paths=[str(root / "ok.txt"), bad])
            assert not r.ok and r.error.code == "FILE_NOT_ALLOWED", (bad, r.error)
        assert text_of(session, "#file-count") == "No files chosen"
        r = session.call("file_upload", query="Attachment", paths=["ok.txt"])
        assert r.ok and r.data["files"] == ["ok.txt"]
        assert text_of(session, "#file-count") == "1 file(s) chosen"
    finally:
        session.configure(upload_root=old)


KEYS_PAGE = (  # focused by its script: Chromium applies `autofocus` a frame later, after navigate may return
    "data:text/html,<input id=q aria-label=Search autofocus>"
    "<script>q.focus();window.keys=[];addEventListener('keydown',e=>keys.push(e.key),true)</script>"
)


def test_press_without_an_element_goes_to_the_focused_one_and_names_it(session, site):
    """Like a person at the keyboard (Playwright MCP's press_key): the key goes to whatever has focus,
    and the result and the journal say which element that was."""
    session.call("navigate", url=KEYS_PAGE)
    r = session.call("interact", action="press", key="Escape", intent="close the suggestions")
    assert r.ok, r.error
    assert r.data["element"]["role"] == "textbox" and r.data["element"]["name"] == "Search"
    assert r.data["via"] == "focus" and js(session, "keys") == ["Escape"]
    line = session.call("oc_journal", limit=2, tool="interact").data["entries"][-1]
    assert line["intent"] == "close the suggestions" and "Search" in line["summary"], line
    # the ref it reports is an ordinary ref: the next call can act on it
    assert session.call("interact", ref=r.data["element"]["ref"], action="fill", value="ocnb").ok
    # nothing focused: the key goes to the page (PageDown scrolls it), and the result says so
    session.call("navigate", url=site.page("long.html"))
    r = session.call("interact", action="press", key="PageDown")
    assert r.ok and r.data["element"] is None and r.data["via"] == "page", r
    assert js(session, "window.scrollY") > 0


def test_an_unknown_key_is_refused_before_anything_is_pressed(session, site):
    session.call("navigate", url=KEYS_PAGE)
    for key in ("Control+Foo", "Shift+Ctrl", "é", "Enter+"):
        for target in ({}, {"query": "Search"}):
            r = session.call("interact", action="press", key=key, **target)
            assert not r.ok and r.error.code == "INVALID_ARGUMENT" and "unknown key" in r.error.message, (key, r)
    assert js(session, "keys") == []  # not even the Control of Control+Foo reached the page
    assert session.call("interact", action="press", key="Shift++", query="Search").ok  # "+" is a key too
    assert js(session, "keys") == ["Shift", "+"]
    assert session.call("interact", action="press", key="x", capture_artifact=True).error.code == "INVALID_ARGUMENT"
