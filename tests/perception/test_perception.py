"""read_page, refs, find, query_dom and selector chains on the demo site, in real Chromium."""

from __future__ import annotations

import re
from typing import Any

import ocnb.tools.dom  # noqa: F401
import ocnb.tools.interact  # noqa: F401 - registers the tools
from ocnb.perception.selectors import resolve_chain, selector_chain
from ocnb.perception.targets import resolve_target
from ocnb.tokens import count_text


def _ref(content: str, line_pattern: str) -> str:
    m = re.search(line_pattern + r".*?\[(ax_\d+)\]", content)
    assert m, f"{line_pattern!r} not in:\n{content}"
    return m.group(1)


def _read(session: Any, **kw: Any) -> dict[str, Any]:
    r = session.call("read_page", **kw)
    assert r.ok, r.error
    return r.data


def _page(session: Any) -> Any:
    async def get() -> Any:
        return await session.browser_state().page()

    return session.run(get())


def test_outline_shows_roles_names_states_and_refs(session, site):
    session.call("navigate", url=site.page("form.html"))
    data = _read(session)
    text = data["content"]
    assert data["title"] == "Sign up" and data["url"].endswith("form.html")
    assert '- heading "Create your account" [level=1]' in text
    assert re.search(r'- textbox "Email" \[ax_\d+\]', text)
    assert re.search(r'- combobox "Country" \[ax_\d+\] value="Norway" options: Norway \| Japan \| Brazil', text)
    assert re.search(r'- radio "Free" \[ax_\d+\] checked', text)
    assert re.search(r'- button "Sign up" \[ax_\d+\]', text)
    assert data["ref_count"] == 9
    assert "<script" not in text and "function" not in text  # scripts are not text


def test_refs_are_stable_across_reads_and_dom_changes(session, site):
    session.call("navigate", url=site.page("dynamic.html"))
    first = _read(session)["content"]
    load_more = _ref(first, r'button "Load more"')
    session.call("interact", ref=load_more, action="click")
    session.call("wait_for", text="Item 6")
    second = _read(session)["content"]
    assert _ref(second, r'button "Load more"') == load_more
    assert _ref(second, r'button "Replace list"') == _ref(first, r'button "Replace list"')
    assert "Item 6" in second


def test_stale_ref_after_navigation_does_nothing(session, site):
    session.call("navigate", url=site.page("dynamic.html"))
    counter = _ref(_read(session)["content"], r'button "Clicked 0 times"')
    session.call("navigate", url=site.page("dynamic.html"))
    r = session.call("interact", ref=counter, action="click")
    assert not r.ok and r.error.code == "STALE_REF"
    assert "Clicked 0 times" in _read(session)["content"]  # the new page's button was not clicked


def test_stale_ref_after_removal_does_nothing(session, site):
    session.call("navigate", url=site.page("dynamic.html"))
    counter = _ref(_read(session)["content"], r'button "Clicked 0 times"')
    clone = "() => { const b = document.getElementById('counter'); const c = b.cloneNode(true); b.replaceWith(c); }"
    assert session.call("javascript_tool", expression=clone).ok
    r = session.call("interact", ref=counter, action="click")
    assert not r.ok and r.error.code == "STALE_REF"
    assert "Clicked 0 times" in _read(session)["content"]
    assert session.call("read_page", ref_id=counter).error.code == "STALE_REF"


def test_frames_same_and_cross_origin_get_refs_and_act(session, site):
    session.call("navigate", url=site.page("frames.html"))
    session.call("wait_for", selector="#cross-origin-frame")
    text = _read(session)["content"]
    refs = re.findall(r'- button "Frame button" \[(ax_\d+)\]', text)
    inputs = re.findall(r'- textbox "Frame input" \[(ax_\d+)\]', text)
    assert len(refs) >= 2 and len(set(refs)) == len(refs)
    assert '- iframe "Cross-origin frame":' in text
    cross_in, cross_btn = inputs[1], refs[1]
    assert session.call("interact", ref=cross_in, action="fill", value="hello").ok
    r = session.call("interact", ref=cross_btn, action="click")
    assert r.ok and r.data["element"]["name"] == "Frame button" and r.data["frame_ordinal"] > 0
    after = _read(session)["content"]
    assert after.count("frame clicked: hello") == 1  # only the cross-origin frame was clicked


def test_shadow_dom_elements_are_read_and_acted_on(session, site):
    session.call("navigate", url=site.page("shadow.html"))
    text = _read(session)["content"]
    assert re.search(r'- textbox "Shadow input" \[ax_\d+\]', text)
    assert session.call("interact", query="Shadow input", action="fill", value="x").ok
    r = session.call("interact", query="Shadow button", action="click")
    assert r.ok and r.data["via"] == "role+name" and r.data["changes"]["dom_changed"]
    assert "shadow clicked: x" in _read(session)["content"]


def test_filter_depth_ref_id_and_max_tokens(session, site):
    session.call("navigate", url=site.page("long.html"))
    full = _read(session)["content"]
    inter = _read(session, filter="interactive")["content"]
    assert all("[ax_" in line for line in inter.splitlines())
    capped = _read(session, max_tokens=60)
    assert capped["truncated"] and count_text(capped["content"]) <= 60
    assert re.search(r"… \[truncated: \d+ more lines; use ref_id or depth\]$", capped["content"])
    assert not _read(session, max_tokens=100_000)["truncated"]
    assert len(_read(session, depth=0)["content"]) <= len(full)
    session.call("navigate", url=site.page("form.html"))
    form_ref = session.call("query_dom", selector="#signup").data["matches"][0]["ref"]
    sub = _read(session, ref_id=form_ref)["content"]
    assert "Sign up" in sub and "Create your account" not in sub


def test_text_and_dom_modes(session, site):
    session.call("navigate", url=site.page("form.html"))
    text = _read(session, mode="text")
    assert "Create your account" in text["content"] and "[ax_" not in text["content"]
    dom = _read(session, mode="dom")["content"]
    assert re.search(r'- input#email .*data-testid="email-input".*\[ax_\d+\]', dom)


def test_find_ranks_plain_words_and_query_dom_gives_refs(session, site):
    session.call("navigate", url=site.page("form.html"))
    found = session.call("find", query="the email field", limit=3).data["candidates"]
    assert found[0]["name"] == "Email" and found[0]["role"] == "textbox" and "why" in found[0]
    q = session.call("query_dom", selector="//button", method="xpath").data
    assert q["total"] == 1 and q["matches"][0]["name"] == "Sign up"
    assert session.call("query_dom", selector="input[").error.code == "INVALID_ARGUMENT"
    # the ref from query_dom is the same one read_page shows
    assert f"[{q['matches'][0]['ref']}]" in _read(session)["content"]


def test_selector_chain_survives_restyle_and_reorder(session, site):
    session.call("navigate", url=site.page("form.html"))
    page = _page(session)

    async def chain_of(query: str) -> list[dict[str, Any]]:
        r = await resolve_target(page, query=query)
        return await selector_chain(page, r.element, r.frame)

    chain = session.run(chain_of("Email"))
    kinds = [e["type"] for e in chain]
    assert kinds[0] == "role_name" and "css" in kinds and "xpath" in kinds
    assert not any("form-input" in str(e) for e in chain)  # never class names

    session.call("navigate", url=site.page("form.html") + "?variant=restyled")

    async def resolve() -> tuple[Any, int | None, int, str]:
        el, index, attempts = await resolve_chain(page, chain)
        ident = await el.evaluate("e => e.id") if el else ""
        return el, index, attempts, ident

    el, index, attempts, ident = session.run(resolve())
    assert el is not None and ident == "email" and index == 0 and attempts == 1
    # a chain whose first entries no longer match falls through to the next robust one
    broken = [{"type": "role_name", "role": "textbox", "name": "E-mail address"}, *chain[2:]]
    el, index, attempts, ident = session.run(_resolve_with(page, broken))
    assert ident == "email" and index == 1 and attempts == 2


async def _resolve_with(page: Any, chain: list[dict[str, Any]]) -> tuple[Any, int | None, int, str]:
    el, index, attempts = await resolve_chain(page, chain)
    return el, index, attempts, (await el.evaluate("e => e.id") if el else "")
