"""Messages a newcomer meets in a notebook name a next step (issue 44 §7/§8), read as they are shown:
through the real ``%oc`` line parser in an IPython shell, against real pages.
"""

from __future__ import annotations

from typing import Any

import pytest
from IPython.core.error import UsageError

import ocnb
from ocnb.commands.demosite import DemoSite

pytestmark = pytest.mark.browser


def oc(shell: Any, line: str) -> Any:
    return shell.run_line_magic("oc", line)


def said(shell: Any, line: str) -> str:
    """The one line a notebook shows for a failed ``%oc`` line."""
    with pytest.raises(UsageError) as caught:
        oc(shell, line)
    return str(caught.value)


def page_says(element_id: str) -> str:
    r = ocnb.session().call("javascript_tool", expression=f"() => document.getElementById('{element_id}').textContent")
    return str(r.raise_for_error().data["result"])


def test_click_takes_its_ref_as_a_flag_too(ip: Any, site: DemoSite) -> None:
    oc(ip, f"navigate {site.page('checkout.html')}")
    ref = ocnb.session().call("find", query="Cancel order").data["candidates"][0]["ref"]
    assert oc(ip, f"click --ref {ref}").ok
    assert page_says("checkout-result") == "Order cancelled"
    pay = ocnb.session().call("find", query="Pay now").data["candidates"][0]["ref"]
    assert oc(ip, f"click {pay}").ok  # the positional form, unchanged
    assert page_says("checkout-result") == "Payment of $42.00 submitted"
    assert "give the target once" in said(ip, f"click {ref} --ref {pay}")


def test_nothing_matches_names_the_nearest_and_what_to_do(ip: Any, site: DemoSite) -> None:
    oc(ip, f"navigate {site.page('checkout.html')}")
    text = said(ip, 'click "Cancel the order now"')
    assert "ELEMENT_NOT_FOUND: nothing matches 'Cancel the order now'" in text
    assert "nearest: ax_" in text and "'Cancel order'" in text
    assert "next: act on one of those by ref, try find with fewer or other words, or read_page" in text


def test_extract_finding_nothing_says_what_to_try(ip: Any, site: DemoSite) -> None:
    oc(ip, f"navigate {site.page('login.html')}")
    text = said(ip, "extract")
    assert "NOT_FOUND: no table on the page" in text and "next: try kind='items'" in text
    items = said(ip, "extract --kind items")
    assert "NOT_FOUND: no repeated items" in items and "next: read_page" in items and "item (a CSS selector" in items


def test_a_value_with_spaces_says_to_quote_it(ip: Any) -> None:
    text = said(ip, "navigate https://example.test/a b")
    assert "navigate takes url positionally, but the line has 2 words there" in text
    assert 'quote a value with spaces to keep it one argument, e.g. "https://example.test/a b"' in text
    text = said(ip, "fill Name John Smith")
    assert "usage: %oc fill TARGET VALUE" in text and 'e.g. Name "John Smith"' in text


def test_an_unquoted_json_object_says_to_quote_it_whole(ip: Any) -> None:
    text = said(ip, 'extract --fields {"title": "h2"}')
    assert "extract takes no value positionally" in text
    assert "a JSON object or list is one argument only when quoted whole" in text
    assert """--fields '{"title": "h2"}'""" in text
    text = said(ip, 'extract {"title": "h2"}')
    assert "quoted whole" in text


def test_a_date_that_does_not_exist_says_so(ip: Any, perception_site: DemoSite) -> None:
    oc(ip, f"navigate {perception_site.page('refusals.html')}")
    text = said(ip, "fill Birthday 31/02/2024")
    assert "INVALID_VALUE: '31/02/2024' is a date that does not exist: February 2024 has 29 days" in text
    assert "the field holds ''" not in text
