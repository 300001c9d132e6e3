"""A kernel lives for days: what a session keeps per call stays within its bound (docs/memory.md)."""

from __future__ import annotations

import gc

import pytest

import ocnb
from ocnb.commands.demosite import DemoSite
from ocnb.perception import refs as refs_mod
from ocnb.skills.capture import capture_buffer

pytestmark = pytest.mark.browser


def _live(kind: str) -> int:
    return sum(1 for o in gc.get_objects() if type(o).__name__ == kind)


def test_refs_and_element_handles_stay_bounded_over_many_calls(
    session: ocnb.Session, site: DemoSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(refs_mod, "REFS_KEPT", 40)
    monkeypatch.setattr(refs_mod, "HANDLES_KEPT", 6)
    url = site.page("form.html")

    def round_trip(i: int) -> str:
        assert session.navigate(url=url).ok
        page_text = session.read_page().data
        assert session.form_input(query="Full name", value=f"Ada {i}").ok
        assert session.interact(action="fill", query="Email", value=f"ada{i}@example.com").ok
        return str(page_text)

    first = round_trip(0)
    old_ref = next(w for w in first.replace("[", " ").replace("]", " ").split() if w.startswith("ax_"))
    round_trip(1)
    gc.collect()
    handles_before = _live("ElementHandle")
    js_before = _live("JSHandle")
    for i in range(2, 14):
        round_trip(i)
    gc.collect()
    page = session.run(session.state.page())
    state = refs_mod.page_refs(page)
    assert len(state.frames) <= 40 and len(state.handles) <= 6
    # each call resolved one element: without the bound, 24 more handles would be alive
    assert _live("ElementHandle") - handles_before <= 6
    assert _live("JSHandle") - js_before <= 6
    # a forgotten ref reads as stale (never another element); a fresh one still acts
    stale = session.interact(action="click", ref=old_ref)
    assert not stale.ok and stale.error.code == "STALE_REF"
    fresh = session.interact(action="fill", query="Full name", value="Grace")
    assert fresh.ok
    assert session.javascript_tool(expression="document.querySelector('#full-name').value").data["result"] == "Grace"


def test_every_tab_buffer_has_its_configured_bound(session: ocnb.Session, site: DemoSite) -> None:
    session.navigate(url=site.page("form.html"))
    tab = session.state.tab()
    assert tab.console.maxlen == session.config.console_buffer
    assert tab.network.maxlen == session.config.network_buffer
    assert capture_buffer(tab).maxlen == 100


def _live_playwright(kind: str) -> int:
    return sum(
        1 for o in gc.get_objects() if type(o).__name__ == kind and type(o).__module__ == "playwright._impl.network"
    )


def test_a_closed_tab_lets_go_of_its_requests_and_responses(session: ocnb.Session, site: DemoSite) -> None:
    """The driver disposes a closed page's requests; ocnb's ring of that tab no longer keeps them alive."""
    url = site.page("form.html")
    gc.collect()
    before = _live_playwright("Request"), _live_playwright("Response")
    tab_id = session.tabs_create().data["tab_id"]
    assert session.tabs_activate(tab_id=tab_id).ok
    for _ in range(40):
        assert session.navigate(url=url).ok
    gc.collect()
    assert _live_playwright("Request") - before[0] >= 40  # one per navigation while the tab is open
    assert session.tabs_close(tab_id=tab_id).ok
    session.tabs_context()  # one more round trip: the driver's dispose messages have arrived
    gc.collect()
    assert _live_playwright("Request") - before[0] <= 2
    assert _live_playwright("Response") - before[1] <= 2
