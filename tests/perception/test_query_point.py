"""query_dom(method="point"): the element a click at a point of the viewport lands on, in real Chromium.

The point is found as the screenshot shows it; the answer is a ref ``interact`` takes, with role, name
and the element's box, through shadow roots and into frames of other origins and sites.
"""

from __future__ import annotations

from typing import Any

import ocnb


def xy(session: ocnb.Session, expression: str) -> tuple[float, float]:
    r = session.call("javascript_tool", expression=expression)
    assert r.ok, r.error
    x, y = r.data["result"]
    return x, y


def at(session: ocnb.Session, selector: str) -> dict[str, Any] | None:
    r = session.call("query_dom", selector=selector, method="point")
    assert r.ok, r.error
    assert r.data["total"] == len(r.data["matches"]) <= 1
    return r.data["matches"][0] if r.data["matches"] else None


def center(selector_js: str) -> str:
    return (
        f"(el => {{ const r = el.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; }})"
        f"({selector_js})"
    )


def test_a_point_names_the_interactive_element_a_click_there_lands_on(session: ocnb.Session, site: Any) -> None:
    session.navigate(url=site.page("form.html"))
    x, y = xy(session, center("document.querySelector('button[type=submit]')"))
    hit = at(session, f"{x},{y}")
    assert hit is not None
    assert (hit["role"], hit["name"], hit["tag"], hit["frame_ordinal"]) == ("button", "Sign up", "button", 0)
    box = hit["rect"]
    assert box["x"] < x < box["x"] + box["width"] and box["y"] < y < box["y"] + box["height"]
    assert hit["viewport"] == {"width": 1280, "height": 800} and hit["point"] == {"x": x, "y": y}
    # the same ref read_page and query_dom give, and one interact takes
    assert session.call("query_dom", selector="button[type=submit]").data["matches"][0]["ref"] == hit["ref"]
    assert f"[{hit['ref']}]" in session.call("read_page").data["content"]
    # percentages of the viewport name the same element
    pct = at(session, f"{x / 12.8}%,{y / 8}%")
    assert pct is not None and pct["ref"] == hit["ref"]


def test_text_inside_a_control_reports_the_control_and_plain_text_itself(session: ocnb.Session, site: Any) -> None:
    session.navigate(url=site.page("dynamic.html"))
    session.call(
        "javascript_tool",
        expression="document.getElementById('counter').innerHTML = '<span id=inner>Clicked 0 times</span>'",
    )
    x, y = xy(session, center("document.getElementById('inner')"))
    hit = at(session, f"{x},{y}")
    assert hit is not None and (hit["role"], hit["name"]) == ("button", "Clicked 0 times")
    acted = session.call("interact", ref=hit["ref"], action="click")
    assert acted.ok and session.call("query_dom", selector="#counter").data["matches"][0]["name"] == "Clicked 1 times"
    x, y = xy(session, center("document.querySelector('h1')"))
    heading = at(session, f"{x},{y}")
    assert heading is not None and heading["role"] == "heading" and heading["ref"].startswith("ax_")


def test_a_point_reaches_into_shadow_roots(session: ocnb.Session, site: Any) -> None:
    session.navigate(url=site.page("shadow.html"))
    x, y = xy(session, center("document.querySelector('demo-widget').shadowRoot.querySelector('button')"))
    hit = at(session, f"{x},{y}")
    assert hit is not None and (hit["role"], hit["name"]) == ("button", "Shadow button")
    assert session.call("interact", ref=hit["ref"], action="click").ok
    assert "shadow clicked" in session.call("read_page", mode="text").data["content"]


def test_a_point_reaches_into_frames_of_other_origins_and_sites(session: ocnb.Session, site: Any) -> None:
    session.navigate(url=site.page("frames.html"))
    session.call("wait_for", selector="#cross-site-frame")
    for frame_id in ("same-origin-frame", "cross-origin-frame", "cross-site-frame"):
        # every frame shows the same child page: its button sits at the same offset in each
        x, y = xy(
            session,
            f"(() => {{ const f = document.getElementById('{frame_id}'); f.scrollIntoView({{block: 'center'}});"
            " const o = f.getBoundingClientRect(), b = document.getElementById('same-origin-frame')"
            ".contentDocument.getElementById('frame-button').getBoundingClientRect();"
            " return [o.left + f.clientLeft + b.left + b.width / 2, o.top + f.clientTop + b.top + b.height / 2]; })()",
        )
        hit = at(session, f"{x},{y}")
        assert hit is not None and (hit["role"], hit["name"]) == ("button", "Frame button"), frame_id
        assert hit["frame_ordinal"] > 0
        box = hit["rect"]  # in the top viewport's pixels, where the screenshot shows it
        assert box["x"] < x < box["x"] + box["width"] and box["y"] < y < box["y"] + box["height"], frame_id
        assert session.call("interact", ref=hit["ref"], action="click").ok
    assert session.call("read_page", mode="text").data["content"].count("frame clicked") == 3


def test_off_the_page_is_no_match_and_a_bad_point_is_invalid(session: ocnb.Session, site: Any) -> None:
    session.navigate(url=site.page("form.html"))
    assert at(session, "5000,10") is None
    assert at(session, "150%,10%") is None
    bad = session.call("query_dom", selector="#email", method="point")
    assert bad.error is not None and bad.error.code == "INVALID_ARGUMENT" and "640,400" in bad.error.message
