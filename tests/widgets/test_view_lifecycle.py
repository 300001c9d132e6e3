"""A live view whose session closes says so, and follows the notebook's next session (real Chromium)."""

from __future__ import annotations

from typing import Any

import pytest

import ocnb
from ocnb.widgets import BrowserView, watcher_for

pytestmark = pytest.mark.browser


def test_a_view_of_a_closed_session_says_so_and_follows_the_next_one(ocnb_home: Any, site: Any) -> None:
    ocnb.session().close()  # start from a new default session, as a notebook does
    first = ocnb.session()
    first.navigate(url=site.page("form.html"))
    view = BrowserView(first, interval=0.1)
    try:
        assert view.attached and view.session_id == first.id and view.url == site.page("form.html")
        first.close()  # what %oc close does
        assert not view.attached
        assert f"session {first.id} closed" in view.status.value and "follows the next session" in view.status.value
        refreshes = view.refreshes
        view.refresh()  # nothing to show: no call on the closed session, no error
        assert view.refreshes == refreshes and "SESSION_CLOSED" not in view.status.value

        second = ocnb.session()  # the next %oc line creates it
        assert view.attached and view.session is second and view.session_id == second.id
        assert f"now showing session {second.id}" in view.status.value
        second.navigate(url=site.page("index.html"))
        assert watcher_for(second).wait_idle(10)
        assert view.url == site.page("index.html")  # refreshed from the new session's browser
        view.back_button.click()  # its buttons act on the new session
        assert view.last_result is not None and view.last_result.ok
        assert second.journal_df()["source"].tolist()[-1] == "widget"
    finally:
        view.close()
        ocnb.session().close()


def test_a_view_of_a_session_that_is_not_the_default_only_says_so(ocnb_home: Any, site: Any) -> None:
    with ocnb.Session() as mine:
        mine.navigate(url=site.page("form.html"))
        view = BrowserView(mine, auto_refresh=False)
    try:
        assert not view.attached and f"session {mine.id} closed" in view.status.value
        assert "follows" not in view.status.value
        other = ocnb.session()
        assert view.session is mine  # not the notebook's session: it does not follow it
        other.close()
    finally:
        view.close()
