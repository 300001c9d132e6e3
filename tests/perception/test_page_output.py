"""Page output, emulation and coordinates (issue 23: 4, 6, 7) in real Chromium against demo/device.html.

page_pdf (group pdf), element_screenshot and interact_at (group vision), emulate (group emulation):
each writes files or acts as the issue asks, and bad input changes nothing.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ocnb
from ocnb.registry import build_registry
from ocnb.tools.evidence import png_size

PIXEL_7 = {"width": 412, "height": 839, "dpr": 2.625}


@pytest.fixture(scope="module")
def shared(module_home: Path) -> Iterator[ocnb.Session]:
    s = ocnb.Session(headless=True, home=module_home, caps=["pdf", "vision", "emulation"])
    s.start()
    yield s
    s.close()


@pytest.fixture
def s(shared: ocnb.Session, site: Any) -> ocnb.Session:
    shared.call("emulate", reset=True)
    assert shared.call("navigate", url=site.page("device.html")).ok
    return shared


def js(s: ocnb.Session, expression: str) -> Any:
    r = s.call("javascript_tool", expression=expression)
    assert r.ok, r.error
    return r.data["result"]


def box_of(s: ocnb.Session, selector: str) -> dict[str, float]:
    x, y, w, h = js(
        s, f"(r => [r.left, r.top, r.width, r.height])(document.querySelector('{selector}').getBoundingClientRect())"
    )
    return {"x": x, "y": y, "width": w, "height": h}


def test_the_new_tools_are_opt_in_groups() -> None:
    default = build_registry().names()
    for name, group in [
        ("page_pdf", "pdf"),
        ("emulate", "emulation"),
        ("interact_at", "vision"),
        ("element_screenshot", "vision"),
    ]:
        assert name not in default
        assert name in build_registry(caps=[group]).names()


@pytest.mark.browser
def test_page_pdf_writes_a_private_pdf_file(s: ocnb.Session) -> None:
    r = s.call("page_pdf")
    assert r.ok, r.error
    path = Path(r.data["path"])
    assert path.read_bytes().startswith(b"%PDF")
    assert r.data["bytes"] == path.stat().st_size and r.data["pages"] >= 1
    assert r.data["title"] == "Device and points" and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert path.parent.parent.name == "pdfs"


@pytest.mark.browser
def test_an_element_screenshot_is_the_size_of_its_box(s: ocnb.Session) -> None:
    ref = s.call("query_dom", selector="#card").data["matches"][0]["ref"]
    r = s.call("element_screenshot", ref=ref)
    assert r.ok, r.error
    data = Path(r.data["path"]).read_bytes()
    box = box_of(s, "#card")
    assert png_size(data) == (r.data["width"], r.data["height"]) == (box["width"], box["height"]) == (240, 90)
    assert r.data["ref"] == ref
    # a query works too; a stale ref is refused and writes nothing
    by_query = s.call("element_screenshot", query="Stamp here").data  # at a fractional y: a pixel row more
    assert by_query["name"] == "Stamp here" and 0 <= by_query["height"] - box_of(s, "#stamp")["height"] <= 1
    before = sorted(Path(r.data["path"]).parent.iterdir())
    refused = s.call("element_screenshot", ref="ax_999")
    assert not refused.ok and refused.error.code == "UNKNOWN_REF"
    assert sorted(Path(r.data["path"]).parent.iterdir()) == before


@pytest.mark.browser
def test_a_coordinate_click_names_the_button_and_is_journaled(s: ocnb.Session) -> None:
    box = box_of(s, "#stamp")
    x, y = box["x"] + 30, box["y"] + 12
    expected = s.call("query_dom", selector=f"{x},{y}", method="point").data["matches"][0]
    r = s.call("interact_at", x=x, y=y, intent="stamp from the screenshot")
    assert r.ok, r.error
    assert (r.data["ref"], r.data["role"], r.data["name"]) == (expected["ref"], "button", "Stamp here")
    assert r.data["point"] == {"x": x, "y": y} and r.data["changes"]["dom_changed"] is True
    stamped = js(s, "document.getElementById('stamped').textContent")  # "Stamped 1 at 30,12": that very point
    assert stamped.startswith("Stamped 1 at ")
    at = [int(v) for v in stamped.rsplit(" ", 1)[1].split(",")]
    assert abs(at[0] - 30) <= 1 and abs(at[1] - 12) <= 1  # mouse events land on whole pixels
    last = s.journal_df().iloc[-2]  # the javascript_tool call came after it
    assert last["tool"] == "interact_at" and last["ok"] and last["intent"] == "stamp from the screenshot"
    assert f"ref={expected['ref']} role=button name=Stamp here" in last["summary"]
    assert last["args"]["x"] == x


@pytest.mark.browser
def test_a_coordinate_outside_the_viewport_changes_nothing(s: ocnb.Session) -> None:
    for x, y in [(5000, 10), (10, 900), (1280, 0)]:
        r = s.call("interact_at", x=x, y=y)
        assert not r.ok and r.error.code == "INVALID_ARGUMENT" and "outside the viewport" in r.error.message
    not_a_field = s.call(
        "interact_at", x=box_of(s, "#stamp")["x"] + 5, y=box_of(s, "#stamp")["y"] + 5, action="fill", value="x"
    )
    assert (
        not not_a_field.ok
        and not_a_field.error.code == "INVALID_ARGUMENT"
        and "not a field" in not_a_field.error.message
    )
    negative = s.call("interact_at", x=-1, y=10)
    assert not negative.ok and negative.error.code == "INVALID_ARGUMENT"
    assert js(s, "document.getElementById('stamped').textContent") == "Not stamped"


@pytest.mark.browser
def test_an_emulated_phone_is_what_the_page_sees(s: ocnb.Session) -> None:
    r = s.call("emulate", device="Pixel 7")
    assert r.ok, r.error
    ua = r.data["emulating"]["user_agent"]
    assert "Android" in ua and r.data["emulating"]["mobile"] is True
    seen = js(s, "deviceReport()")
    assert (seen["width"], seen["height"], seen["dpr"]) == tuple(PIXEL_7.values())
    assert seen["ua"] == ua and seen["touch"] > 0
    # the page's own requests carry it, a screenshot does not undo it, a navigation keeps it
    s.call("page_screenshot")
    s.call("navigate", url=s.call("tabs_context").data["tabs"][0]["url"])
    again = js(s, "deviceReport()")
    assert (again["width"], again["dpr"], again["ua"]) == (412, 2.625, ua)
    # nothing else was lost: the tab and its history are the same
    assert [t["tab_id"] for t in s.call("tabs_context").data["tabs"]] == ["t1"]
    reset = s.call("emulate", reset=True)
    assert reset.ok and reset.data["emulating"] == {} and reset.data["page_sees"]["width"] == 1280


@pytest.mark.browser
def test_viewport_locale_timezone_and_geolocation(s: ocnb.Session) -> None:
    r = s.call(
        "emulate",
        width=800,
        height=600,
        locale="de-DE",
        timezone="Asia/Tokyo",
        geolocation={"latitude": 48.8566, "longitude": 2.3522},
    )
    assert r.ok, r.error
    assert r.data["page_sees"]["width"] == 800 and r.data["page_sees"]["timezone"] == "Asia/Tokyo"
    seen = js(s, "deviceReport()")
    assert (seen["width"], seen["height"], seen["language"], seen["timezone"]) == (800, 600, "de-DE", "Asia/Tokyo")
    assert seen["localTime"] == "1.6.2024, 21:00:00"  # noon UTC, in Tokyo, written the German way
    s.call("interact", query="Locate me")
    assert s.call("wait_for", text="48.8566,2.3522").ok


@pytest.mark.browser
def test_bad_emulation_input_changes_nothing(s: ocnb.Session) -> None:
    before = js(s, "deviceReport()")
    for bad, word in [
        ({"device": "Nokia 3310"}, "unknown device"),
        ({"timezone": "Mars/Base"}, "unknown timezone"),
        ({"locale": "zz-bogus-123", "timezone": "Asia/Tokyo"}, "Invalid locale"),
        ({"device": "Pixel 7", "timezone": "Nowhere/Land"}, "unknown timezone"),
        ({}, "give device"),
    ]:
        r = s.call("emulate", **bad)
        assert not r.ok and r.error.code == "INVALID_ARGUMENT" and word in r.error.message, (bad, r.error)
    assert js(s, "deviceReport()") == before
    near = s.call("emulate", device="pixel 77").error.details["near"]
    assert "Pixel 7" in near


# -- a drag between two points (drag-points.html: a pointer slider and an HTML5 drop zone at fixed places) --


@pytest.fixture
def d(shared: ocnb.Session, site: Any) -> ocnb.Session:
    shared.call("emulate", reset=True)
    assert shared.call("navigate", url=site.page("drag-points.html")).ok
    return shared


def status_of(s: ocnb.Session) -> str:
    return str(js(s, "document.getElementById('status').textContent"))


def named_at(s: ocnb.Session, x: float, y: float) -> dict[str, Any]:
    match = s.call("query_dom", selector=f"{x},{y}", method="point").data["matches"][0]
    return {"ref": match["ref"], "role": match["role"], "name": match["name"]}


@pytest.mark.browser
def test_a_coordinate_drag_moves_a_pointer_slider_and_names_both_ends(d: ocnb.Session) -> None:
    thumb = box_of(d, "#thumb")
    x, y = thumb["x"] + thumb["width"] / 2, thumb["y"] + thumb["height"] / 2  # (40, 92): volume 0
    to = [x + 300, y]  # three quarters of the 400 px track
    drop = named_at(d, *to)  # the track, before the thumb gets there
    r = d.call("interact_at", x=x, y=y, action="drag", to=to, intent="turn the volume up")
    assert r.ok, r.error
    assert (r.data["role"], r.data["name"], r.data["action"]) == ("slider", "Volume", "drag")
    assert {k: r.data["target"][k] for k in ("ref", "role", "name")} == drop
    assert r.data["point"] == {"x": x, "y": y} and r.data["to"] == {"x": to[0], "y": to[1]}
    assert r.data["changes"]["dom_changed"] is True
    assert status_of(d) == "Volume 75; nothing dropped"
    assert js(d, "document.getElementById('thumb').getAttribute('aria-valuenow')") == "75"
    assert int(js(d, "document.getElementById('thumb').dataset.moves")) >= 2  # moved in steps, not a jump


@pytest.mark.browser
def test_a_coordinate_drag_drops_a_card_on_the_zone_and_is_journaled(d: ocnb.Session) -> None:
    card, zone = box_of(d, "#card"), box_of(d, "#zone")
    x, y = card["x"] + card["width"] / 2, card["y"] + card["height"] / 2
    to = [zone["x"] + zone["width"] / 2, zone["y"] + zone["height"] / 2]
    r = d.call("interact_at", x=x, y=y, action="drag", to=to, intent="deliver the parcel")
    assert r.ok, r.error
    assert r.data["name"] == "Parcel" and r.data["element"]["tag"] == "div"
    assert (r.data["target"]["role"], r.data["target"]["name"], r.data["target"]["tag"]) == (
        "region",
        "Drop zone",
        "section",
    )
    assert status_of(d) == f"Volume 0; dropped Parcel at {round(to[0])},{round(to[1])}"
    assert js(d, "document.getElementById('card').parentElement.id") == "zone"
    last = d.journal_df().iloc[-3]  # two javascript_tool calls came after it
    assert last["tool"] == "interact_at" and last["ok"] and last["intent"] == "deliver the parcel"
    assert f"ref={r.data['ref']}" in last["summary"] and "name=Parcel" in last["summary"]
    assert f"to ref={r.data['target']['ref']} role=region name=Drop zone" in last["summary"]
    assert last["args"]["to"] == to


@pytest.mark.browser
def test_a_drag_with_a_point_outside_the_viewport_or_without_to_changes_nothing(d: ocnb.Session) -> None:
    card = box_of(d, "#card")
    x, y = card["x"] + 20, card["y"] + 20
    for args in [
        {"x": x, "y": y, "to": [5000, 10]},  # the drop point is checked before the mouse moves
        {"x": 5000, "y": 10, "to": [x, y]},
    ]:
        r = d.call("interact_at", action="drag", **args)
        assert not r.ok and r.error.code == "INVALID_ARGUMENT" and "outside the viewport" in r.error.message, args
    for args in [
        {"x": x, "y": y, "action": "drag"},  # no to
        {"x": x, "y": y, "to": [300, 200]},  # to with a click
        {"x": x, "y": y, "action": "drag", "to": [300]},
        {"x": x, "y": y, "action": "drag", "to": [300, -1]},
    ]:
        r = d.call("interact_at", **args)
        assert not r.ok and r.error.code == "INVALID_ARGUMENT", args
    assert status_of(d) == "Volume 0; nothing dropped"
    assert js(d, "document.getElementById('card').parentElement.id") != "zone"
