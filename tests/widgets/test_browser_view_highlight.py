"""The live view's highlight belongs to the page it was drawn on: a navigation clears it."""

from __future__ import annotations

from typing import Any

from ocnb.widgets.browser_view import BrowserView

from .test_browser_view import HIT, scripted


def test_the_highlight_is_cleared_when_the_page_changes() -> None:
    pages = ["http://127.0.0.1/x"]

    def tabs(_args: dict[str, Any]) -> dict[str, Any]:
        return {"tabs": [{"tab_id": "t1", "url": pages[-1], "title": "X", "active": True}]}

    caller = scripted(
        query_dom={"matches": [HIT], "total": 1}, interact={"element": {"ref": "ax_7"}}, tabs_context=tabs
    )
    view = BrowserView(caller=caller, auto_refresh=False, refresh_now=True)
    view.click_at(0.25, 0.22)  # a click that stays on the page: the element stays outlined
    assert view.screen.highlight["label"] == "button “Send” (ax_7)"
    pages.append("http://127.0.0.1/thanks")  # the next click navigates
    view.click_at(0.25, 0.22)
    assert view.screen.highlight == {} and view.last_hit is None and view.url == "http://127.0.0.1/thanks"
