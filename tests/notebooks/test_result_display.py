"""An action's result reads at a glance: one line with the element acted on and what changed, the
JSON one click away (real Chromium, the demo site)."""

from __future__ import annotations

import pytest

import ocnb
from ocnb.commands.demosite import DemoSite

pytestmark = pytest.mark.browser


def test_an_action_shows_one_line_with_the_element_and_what_changed(session: ocnb.Session, site: DemoSite) -> None:
    session.navigate(url=site.page("form.html"))
    filled = session.interact(action="fill", query="Full name", value="Ada Lovelace")
    plain = filled._repr_mimebundle_()["text/plain"]
    assert "\n" not in plain
    assert plain.startswith("interact: ok ") and "“Full name”" in plain and filled.data["element"]["ref"] in plain
    html = filled._repr_mimebundle_()["text/html"]
    assert "ocnb-acted" in html and "“Full name”" in html
    assert "<summary" in html and "&quot;frame_ordinal&quot;" in html  # the whole JSON, folded behind one click

    session.form_input(query="Email", value="ada@example.org")
    session.interact(action="click", query="I accept the terms")
    sent = session.interact(action="click", query="Sign up")
    line = str(sent)
    assert "button “Sign up”" in line and ("the page changed" in line or "navigated to" in line)
    assert len(sent.to_json(indent=2).splitlines()) > 5  # what used to fill the cell


def test_every_other_result_is_one_line_too(session: ocnb.Session, site: DemoSite) -> None:
    went = session.navigate(url=site.page("form.html"))
    html = went._repr_mimebundle_()["text/html"]
    head = html[: html.index("<details")]
    assert "ocnb-compact" in head and "form.html" in head and "\n" not in head
    assert "&quot;url&quot;" in html  # the whole JSON behind one click
