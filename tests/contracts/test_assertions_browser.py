"""Assertions, evidence bundles and the signature evaluator against a real Chromium on a loopback page.

One Chromium for the module, plain Playwright async on an event loop this module owns. The page is
written to a temp folder and served by :mod:`ocnb.commands.demosite` (which adds ``/api/items`` and
``/status/<code>``); the observations are collected here the way the browser layer does per tab.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, BrowserContext, Page, Playwright

from ocnb.audit.secrets import SecretStore
from ocnb.commands.demosite import DemoSite, serve
from ocnb.contracts.assertions import PageObservations, evaluate
from ocnb.contracts.evaluator import CallInfo, evaluate_signature_on_page
from ocnb.contracts.evidence import MAX_ATTR_CHARS, create_bundle, read_bundle
from ocnb.contracts.signatures import parse_signature
from tests.conftest import PlaywrightBrowser

pytestmark = pytest.mark.browser

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Order — Café</title>
<style>body { font-family: sans-serif; }</style>
<script>var SCRIPT_ONLY_MARKER = "in-a-script";</script>
</head>
<body>
<h1>Your   order</h1>
<p id="total">Total:
   12.50 EUR</p>
<ul id="items"><li>Apple</li><li>Banana</li><li>Cherry</li></ul>
<button id="pay">Pay now</button>
<button id="ghost" style="display:none">Ghost</button>
<span id="invisible" style="visibility:hidden">Invisible</span>
<div id="account">account hunter2-secret</div>
<!-- COMMENT_MARKER -->
<img alt="big" src="data:image/png;base64,{blob}">
<button id="alert" onclick="alert('Are you sure?')">Alert me</button>
<script>
  Promise.allSettled([fetch('/api/items'), fetch('/status/404')]).then(() => {
    window.__ready = true;
    console.log('page ready');
  });
</script>
</body></html>
""".replace("{blob}", "A" * 5000)


@dataclass
class Env:
    loop: asyncio.AbstractEventLoop
    playwright: Playwright
    browser: Browser
    site: DemoSite

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)


@dataclass
class Loaded:
    env: Env
    context: BrowserContext
    page: Page
    obs: PageObservations

    def check(self, assertion: dict, obs: PageObservations | None = None):
        return self.env.run(evaluate(assertion, self.page, self.obs if obs is None else obs))


@pytest.fixture(scope="module")
def env(playwright_browser: PlaywrightBrowser, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    root = tmp_path_factory.mktemp("contract-site")
    (root / "order.html").write_text(PAGE, encoding="utf-8")
    with serve(root=root) as site:
        yield Env(playwright_browser.loop, playwright_browser.playwright, playwright_browser.browser, site)


async def _open(env: Env) -> Loaded:
    context = await env.browser.new_context(viewport={"width": 800, "height": 600})
    context.set_default_timeout(5_000)
    page = await context.new_page()
    obs = PageObservations()
    page.on("response", lambda r: obs.responses.append({"ts": time.time(), "url": r.url, "status": r.status}))
    page.on("console", lambda m: obs.console.append({"ts": time.time(), "type": m.type, "text": m.text}))

    async def on_dialog(d: Any) -> None:
        obs.dialogs.append({"ts": time.time(), "type": d.type, "message": d.message})
        await d.accept()

    page.on("dialog", on_dialog)
    await page.goto(env.site.page("order.html"))
    await page.wait_for_function("window.__ready === true")
    for _ in range(50):  # the response events arrive on their own schedule
        if len(obs.responses) >= 3 and obs.console:
            break
        await asyncio.sleep(0.02)
    return Loaded(env, context, page, obs)


@pytest.fixture(scope="module")
def loaded(env: Env) -> Iterator[Loaded]:
    state = env.run(_open(env))
    yield state
    env.run(state.context.close())


@pytest.fixture
def fresh(env: Env) -> Iterator[Loaded]:
    state = env.run(_open(env))
    yield state
    env.run(state.context.close())


# (assertion, passes, expected actual) — each kind passes once and fails once
CASES: list[tuple[dict, bool, Any]] = [
    ({"kind": "url", "pattern": "http://127.0.0.1:*/order.html"}, True, None),
    ({"kind": "url", "pattern": "re:/checkout$"}, False, "{url}"),
    ({"kind": "title", "equals": "Order — Café"}, True, None),
    ({"kind": "title", "contains": "Basket"}, False, "Order — Café"),
    ({"kind": "title", "pattern": "re:^Order"}, True, None),
    ({"kind": "dom_text", "selector": "#total", "contains": "Total: 12.50 EUR"}, True, None),
    ({"kind": "dom_text", "selector": "#total", "contains": "99.00"}, False, "Total: 12.50 EUR"),
    ({"kind": "dom_text", "selector": "#missing", "contains": "x"}, False, "no element matches '#missing'"),
    ({"kind": "dom_text", "contains": "Banana"}, True, None),
    ({"kind": "dom_text", "selector": "#ghost", "contains": "Ghost"}, False, "1 match, none visible"),
    ({"kind": "dom_text", "selector": "#invisible", "contains": "Invisible"}, False, "1 match, none visible"),
    ({"kind": "dom_count", "selector": "#items li", "op": "eq", "value": 3}, True, None),
    ({"kind": "dom_count", "selector": "#items li", "op": "gte", "value": 4}, False, 3),
    ({"kind": "dom_count", "selector": "#items li", "op": "lte", "value": 2}, False, 3),
    ({"kind": "element_visible", "selector": "#pay"}, True, None),
    ({"kind": "element_visible", "selector": "#ghost"}, False, "1 match, none visible"),
    ({"kind": "element_visible", "selector": "#invisible"}, False, "1 match, none visible"),
    ({"kind": "element_visible", "role": "button", "name": "Pay now"}, True, None),
    ({"kind": "element_visible", "role": "button", "name": "Pay"}, False, "no element matches button named 'Pay'"),
    ({"kind": "no_dialog"}, True, None),
    ({"kind": "network", "url_pattern": "*/api/items", "status_in": [200]}, True, None),
    ({"kind": "network", "url_pattern": "*/status/404", "status_in": [200, 201]}, False, "404"),
    ({"kind": "network", "url_pattern": "*/api/orders"}, False, "no response matched '*/api/orders'"),
]


@pytest.mark.parametrize(("assertion", "passes", "actual"), CASES, ids=[f"{c[0]['kind']}-{c[1]}" for c in CASES])
def test_each_assertion_kind_passes_and_fails_with_expected_and_actual(
    loaded: Loaded, assertion: dict, passes: bool, actual: Any
) -> None:
    outcome = loaded.check(assertion)
    assert outcome.passed is passes, outcome.failures
    if passes:
        assert outcome.failures == []
        return
    [failure] = outcome.failures
    assert failure["path"] == "$" and failure["kind"] == assertion["kind"]
    assert failure["expected"]
    if actual == "{url}":
        assert failure["actual"] == loaded.page.url
    elif actual == "404":
        assert [r["status"] for r in failure["actual"]] == [404]
    elif isinstance(actual, str) and actual.startswith("no response"):
        assert failure["actual"].startswith(actual)
    else:
        assert failure["actual"] == actual


def test_combinators_report_every_failing_leaf_with_its_path(loaded: Loaded) -> None:
    doc = {
        "kind": "and",
        "children": [
            {"kind": "title", "contains": "Order"},
            {"kind": "dom_count", "selector": "#items li", "op": "eq", "value": 5},
            {"kind": "or", "children": [{"kind": "url", "pattern": "*/a"}, {"kind": "url", "pattern": "*/b"}]},
            {"kind": "not", "child": {"kind": "element_visible", "selector": "#pay"}},
        ],
    }
    outcome = loaded.check(doc)
    assert not outcome.passed
    assert [(f["path"], f["kind"]) for f in outcome.failures] == [
        ("$.children[1]", "dom_count"),
        ("$.children[2]", "or"),
        ("$.children[2].children[0]", "url"),
        ("$.children[2].children[1]", "url"),
        ("$.children[3]", "not"),
    ]
    assert outcome.failures[0]["actual"] == 5 - 2
    assert outcome.failures[4]["actual"] == "visible"
    assert loaded.check({"kind": "not", "child": {"kind": "title", "equals": "x"}}).passed
    assert loaded.check({"kind": "or", "children": [{"kind": "no_dialog"}, {"kind": "title", "equals": "x"}]}).passed


def test_a_page_error_is_a_failed_check_not_an_exception(loaded: Loaded) -> None:
    outcome = loaded.check({"kind": "dom_count", "selector": "[[[", "op": "eq", "value": 1})
    assert not outcome.passed
    assert outcome.failures[0]["actual"].startswith("error: ")


def test_no_dialog_fails_after_a_dialog_and_since_scopes_it(fresh: Loaded) -> None:
    before = time.time()
    fresh.env.run(fresh.page.click("#alert"))
    outcome = fresh.check({"kind": "no_dialog"})
    assert not outcome.passed
    assert outcome.failures[0]["actual"] == [{"type": "alert", "message": "Are you sure?"}]
    assert fresh.check({"kind": "no_dialog"}, fresh.obs.since(time.time() + 1)).passed
    assert not fresh.check({"kind": "no_dialog"}, fresh.obs.since(before)).passed


def test_evidence_bundle_on_disk_with_every_file_and_secrets_masked(loaded: Loaded, ocnb_home: Path) -> None:
    store = SecretStore({"ACCOUNT_PW": "hunter2-secret"})
    folder = loaded.env.run(
        create_bundle(
            loaded.page,
            loaded.obs,
            home=ocnb_home,
            reason="contract order-paid failed",
            secrets=store,
            extra={"typed": "hunter2-secret"},
        )
    )
    assert folder.parent == ocnb_home / "evidence"
    assert sorted(p.name for p in folder.iterdir()) == ["bundle.json", "dom.html", "screenshot.png"]
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]  # no temp folder left behind
    assert (folder / "screenshot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    meta = json.loads((folder / "bundle.json").read_text())
    assert meta == read_bundle(folder.name, home=ocnb_home)
    assert meta["bundle_id"] == folder.name and meta["schema_version"] == 1
    assert meta["url"] == loaded.page.url and meta["title"] == "Order — Café"
    assert meta["reason"] == "contract order-paid failed"
    assert meta["created"].endswith("Z") and meta["capture_errors"] == []
    assert {"dom": "dom.html", "screenshot": "screenshot.png"} == meta["files"]
    assert any(c["text"] == "page ready" for c in meta["console"])
    assert {(r["url"].rsplit("/", 2)[-2:][-1], r["status"]) for r in meta["responses"]} >= {
        ("items", 200),
        ("404", 404),
    }
    assert meta["extra"] == {"typed": "${SECRET:ACCOUNT_PW}"}

    dom = (folder / "dom.html").read_text()
    assert dom.startswith("<!DOCTYPE html><html")
    assert "account ${SECRET:ACCOUNT_PW}" in dom and "hunter2-secret" not in dom
    for gone in ("<script", "SCRIPT_ONLY_MARKER", "<style", "COMMENT_MARKER", "onclick", "\n"):
        assert gone not in dom
    assert "Total: 12.50 EUR" in dom and len(dom) < 3000
    assert "A" * (MAX_ATTR_CHARS + 1) not in dom  # the inline image was cut
    assert "hunter2-secret" not in (folder / "bundle.json").read_text()


def test_evidence_of_a_closed_page_lists_what_could_not_be_captured(env: Env, ocnb_home: Path) -> None:
    async def go() -> Path:
        context = await env.browser.new_context()
        page = await context.new_page()
        await page.goto(env.site.page("order.html"))
        await page.close()
        try:
            return await create_bundle(page, None, home=ocnb_home, reason="page closed")
        finally:
            await context.close()

    folder = env.run(go())
    meta = read_bundle(folder)
    assert [e.split(":")[0] for e in meta["capture_errors"]] == ["title", "dom", "screenshot"]
    assert sorted(p.name for p in folder.iterdir()) == ["bundle.json"]


def test_signature_evaluated_on_the_live_page(loaded: Loaded) -> None:
    doc = {
        "version": 1,
        "id": "order",
        "description": "Open the order page.",
        "inputs": {},
        "allowedTools": ["navigate", "read_page"],
        "success": {"kind": "dom_text", "selector": "#total", "contains": "12.50"},
        "failureWhen": [{"kind": "network", "url_pattern": "*/api/*", "status_in": [500]}],
        "budgets": {"maxToolCalls": 5, "maxWallMs": 60_000},
    }
    calls = [CallInfo("navigate", url_before="about:blank", url_after=loaded.page.url)]
    ev = loaded.env.run(
        evaluate_signature_on_page(parse_signature(doc), loaded.page, loaded.obs, calls=calls, elapsed_ms=50)
    )
    assert ev.to_dict()["status"] == "success" and ev.evidence["url"] == loaded.page.url
    doc["success"] = {"kind": "dom_text", "selector": "#total", "contains": "99"}
    ev = loaded.env.run(
        evaluate_signature_on_page(parse_signature(doc), loaded.page, loaded.obs, calls=calls, elapsed_ms=50)
    )
    assert ev.status == "continue" and "got 'Total: 12.50 EUR'" in ev.reasons[0]
