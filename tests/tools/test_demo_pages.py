"""The demo pages really work in Chromium: their scripts do what later tests rely on.

One Chromium for the whole module, driven by plain Playwright async on one event loop owned by this
module; each test gets a fresh browser context (own cookies, storage and pages).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

import pytest
from playwright.async_api import Browser, Page, Playwright, expect

from ocnb.commands.demosite import DemoSite, serve
from tests.conftest import PlaywrightBrowser

pytestmark = pytest.mark.browser


@dataclass
class Env:
    loop: asyncio.AbstractEventLoop
    playwright: Playwright
    browser: Browser
    site: DemoSite

    def run(self, check: Callable[[Page], Awaitable[None]]) -> None:
        """Run ``check(page)`` in a fresh context on a fresh page, then close the context."""

        async def go() -> None:
            context = await self.browser.new_context()
            context.set_default_timeout(5_000)
            try:
                await check(await context.new_page())
            finally:
                await context.close()

        self.loop.run_until_complete(go())


@pytest.fixture(scope="module")
def env(playwright_browser: PlaywrightBrowser) -> Iterator[Env]:
    with serve() as site:
        yield Env(playwright_browser.loop, playwright_browser.playwright, playwright_browser.browser, site)


def labels_in_order(page: Page) -> Awaitable[list[str]]:
    return page.eval_on_selector_all("#signup label", "els => els.map(e => e.textContent.trim())")


def test_form_submit_shows_thanks(env: Env) -> None:
    async def check(page: Page) -> None:
        await page.goto(env.site.page("form.html"))
        await page.get_by_label("Full name").fill("Ada Lovelace")
        await page.get_by_label("Email").fill("ada@example.com")
        await page.get_by_label("Password").fill("correct horse")
        await page.get_by_label("Country").select_option("Japan")
        await page.get_by_label("Pro").check()
        await page.get_by_label("I accept the terms").check()
        await page.get_by_label("Message").fill("Hello")
        await page.get_by_role("button", name="Sign up").click()
        await expect(page.get_by_role("status")).to_have_text("Thanks, Ada Lovelace! Plan: Pro, Country: Japan")
        assert page.url == env.site.page("form.html")  # no navigation

    env.run(check)


def test_form_restyled_changes_classes_and_order_not_labels(env: Env) -> None:
    async def check(page: Page) -> None:
        await page.goto(env.site.page("form.html"))
        plain_labels = await labels_in_order(page)
        plain_classes = await page.eval_on_selector_all("[class]", "els => els.map(e => e.className)")
        plain_names = await page.eval_on_selector_all("[name]", "els => els.map(e => e.name).sort()")

        await page.goto(env.site.page("form.html?variant=restyled"))
        labels = await labels_in_order(page)
        classes = await page.eval_on_selector_all("[class]", "els => els.map(e => e.className)")
        names = await page.eval_on_selector_all("[name]", "els => els.map(e => e.name).sort()")

        assert sorted(labels) == sorted(plain_labels) and labels != plain_labels
        assert labels.index("Message") < labels.index("Full name")
        assert not set(" ".join(classes).split()) & set(" ".join(plain_classes).split())
        assert names == plain_names
        # Styles follow the new class names: the submit button is still blue.
        color = await page.get_by_role("button", name="Sign up").evaluate("b => getComputedStyle(b).backgroundColor")
        assert color == "rgb(29, 78, 216)"
        await page.get_by_label("Full name").fill("Grace")
        await page.get_by_role("button", name="Sign up").click()
        await expect(page.get_by_role("status")).to_have_text("Thanks, Grace! Plan: Free, Country: Norway")

    env.run(check)


def test_form_renamed_relabels_email(env: Env) -> None:
    async def check(page: Page) -> None:
        await page.goto(env.site.page("form.html?variant=renamed"))
        await expect(page.get_by_label("E-mail address")).to_have_attribute("placeholder", "you@example.com")
        await expect(page.get_by_label("Email", exact=True)).to_have_count(0)

    env.run(check)


def test_search_shows_results_after_a_delay(env: Env) -> None:
    async def check(page: Page) -> None:
        await page.goto(env.site.page("search.html"))
        await page.get_by_role("searchbox", name="Search").fill("owls")
        await page.get_by_role("button", name="Search").click()
        results = page.get_by_role("region", name="Results")
        await expect(results).to_contain_text('Results for "owls"')
        await expect(results.get_by_role("link")).to_have_count(3)

        await page.goto(env.site.page("search.html?q=foxes"))
        await expect(page.get_by_text('Results for "foxes"')).to_be_visible()
        await expect(page.get_by_role("searchbox")).to_have_value("foxes")

    env.run(check)


def test_login_refuses_short_password_then_welcomes(env: Env) -> None:
    async def check(page: Page) -> None:
        await page.goto(env.site.page("login.html"))
        await page.get_by_label("Username").fill("ada")
        await page.get_by_label("Password").fill("short")
        await page.get_by_role("button", name="Log in").click()
        await expect(page.get_by_role("alert")).to_have_text("Invalid credentials")
        await page.get_by_label("Password").fill("long enough")
        await page.get_by_role("button", name="Log in").click()
        await expect(page.get_by_text("Welcome, ada")).to_be_visible()
        await expect(page).to_have_title("Dashboard")

    env.run(check)


def test_dynamic_list_loads_removes_and_rerenders(env: Env) -> None:
    async def check(page: Page) -> None:
        await page.goto(env.site.page("dynamic.html"))
        items = page.get_by_role("list", name="Items").get_by_role("listitem")
        await expect(items).to_have_count(3)
        await page.get_by_role("button", name="Load more").click()
        await expect(items).to_have_count(6)
        await page.get_by_role("button", name="Remove item").click()
        await expect(items.first).to_have_text("Item 2")
        old = await page.query_selector("#items li")
        assert old is not None
        await page.get_by_role("button", name="Replace list").click()
        assert not await old.evaluate("el => el.isConnected")
        await expect(items).to_have_text([f"Item {i}" for i in range(2, 7)])
        await page.get_by_role("button", name="Clicked 0 times").click()
        await expect(page.get_by_role("button", name="Clicked 1 times")).to_be_visible()

    env.run(check)


def test_popup_opens_child_window(env: Env) -> None:
    async def check(page: Page) -> None:
        await page.goto(env.site.page("popup.html"))
        async with page.expect_popup() as info:
            await page.get_by_role("button", name="Open popup").click()
        popup = await info.value
        await expect(popup).to_have_title("Popup child")
        await expect(popup.get_by_text("Opened from: popup (has opener)")).to_be_visible()

        async with page.context.expect_page() as tab_info:
            await page.get_by_role("link", name="Open child in a new tab").click()
        tab = await tab_info.value
        await expect(tab.get_by_text("Opened from: link (no opener)")).to_be_visible()
        assert len(page.context.pages) == 3


def test_slow_fetch_reports_its_wait(env: Env) -> None:
    async def check(page: Page) -> None:
        await page.goto(env.site.page("slow.html"))
        await page.get_by_role("button", name="Fetch slowly").click()
        status = page.get_by_role("status")
        await expect(status).to_have_text("Loading…")
        await expect(status).to_have_text(re.compile(r"Loaded after \d+ ms"))
        assert int((await status.text_content() or "").split()[2]) >= 1000

    env.run(check)

    env.run(check)


def test_storage_buttons_set_and_show_values(env: Env) -> None:
    async def check(page: Page) -> None:
        await page.goto(env.site.page("storage.html"))
        await expect(page.locator("#local")).to_have_text("(empty)")
        for name in ("Set cookie", "Set localStorage", "Set sessionStorage"):
            await page.get_by_role("button", name=name).click()
        await expect(page.locator("#cookies")).to_have_text("demo_cookie=cookie-value")
        await expect(page.locator("#local")).to_have_text("demo_local=local-value")
        await expect(page.locator("#session")).to_have_text("demo_session=session-value")
        cookies = await page.context.cookies()
        assert {"name": "demo_cookie", "value": "cookie-value"}.items() <= cookies[0].items()

    env.run(check)


def test_frames_load_from_three_origins_and_work(env: Env) -> None:
    async def check(page: Page) -> None:
        await page.goto(env.site.page("frames.html"))
        frames = {
            env.site.url: page.frame_locator("#same-origin-frame"),
            env.site.cross_origin_url: page.frame_locator("#cross-origin-frame"),
            env.site.cross_site_url: page.frame_locator("#cross-site-frame"),
        }
        assert len({urlsplit(u).netloc for u in frames}) == 3
        for origin, frame in frames.items():
            await expect(frame.get_by_text("Origin: " + origin.rstrip("/"))).to_be_visible()
            await frame.get_by_role("button", name="Frame button").click()
            await expect(frame.get_by_role("status")).to_have_text("frame clicked")
        cross = frames[env.site.cross_origin_url]
        await cross.get_by_label("Frame input").fill("hi")
        await cross.get_by_role("button", name="Frame button").click()
        await expect(cross.get_by_role("status")).to_have_text("frame clicked: hi")
        # The other origins are out of the page's reach...
        reach = await page.evaluate(
            """() => ['#same-origin-frame', '#cross-origin-frame', '#cross-site-frame'].map(sel => {
                 try { return !!document.querySelector(sel).contentDocument; } catch (e) { return false; } })"""
        )
        assert reach == [True, False, False]
        # ...and only the cross-site one runs in its own renderer process (an out-of-process iframe).
        cdp = await page.context.browser.new_browser_cdp_session()  # type: ignore[union-attr]
        targets = (await cdp.send("Target.getTargets"))["targetInfos"]
        await cdp.detach()
        oopifs = [t["url"] for t in targets if t["type"] == "iframe"]
        assert len(oopifs) == 1 and oopifs[0].startswith(env.site.cross_site_url)


def test_shadow_button_writes_status(env: Env) -> None:
    async def check(page: Page) -> None:
        await page.goto(env.site.page("shadow.html"))
        assert await page.evaluate("() => document.querySelector('demo-widget').shadowRoot !== null")
        await page.get_by_role("button", name="Shadow button").click()
        await expect(page.locator("#shadow-status")).to_have_text("shadow clicked")
        await page.get_by_label("Shadow input").fill("deep")
        await page.get_by_role("button", name="Shadow button").click()
        await expect(page.locator("#shadow-status")).to_have_text("shadow clicked: deep")

    env.run(check)


def test_drag_card_into_done_column(env: Env) -> None:
    async def check(page: Page) -> None:
        await page.goto(env.site.page("dragdrop.html"))
        await page.get_by_text("Card A").drag_to(page.get_by_role("region", name="Done column"))
        await expect(page.get_by_role("status")).to_have_text("Dropped: Card A")
        await expect(page.get_by_role("region", name="Done column")).to_contain_text("Card A")

    env.run(check)


def test_upload_lists_chosen_files(env: Env) -> None:
    async def check(page: Page) -> None:
        await page.goto(env.site.page("upload.html"))
        await page.get_by_label("Attachment").set_input_files(
            [
                {"name": "notes.txt", "mimeType": "text/plain", "buffer": b"hello"},
                {"name": "data.csv", "mimeType": "text/csv", "buffer": b"a,b\n1,2\n"},
            ]
        )
        await expect(page.get_by_role("list", name="Chosen files").get_by_role("listitem")).to_have_text(
            ["notes.txt (5 bytes)", "data.csv (8 bytes)"]
        )
        await page.get_by_role("button", name="Upload").click()
        await expect(page.get_by_text("notes.txt (5 bytes)")).to_be_visible()  # echoed by the server
        assert page.url == env.site.page("echo")

    env.run(check)


def test_dialogs_write_their_outcome(env: Env) -> None:
    async def check(page: Page) -> None:
        answers: list[str] = []

        async def on_dialog(dialog) -> None:  # type: ignore[no-untyped-def]
            answers.append(dialog.type)
            if dialog.type == "prompt":
                await dialog.accept("Grace")
            else:
                await dialog.accept()

        page.on("dialog", on_dialog)
        await page.goto(env.site.page("dialogs.html"))
        result = page.locator("#dialog-result")
        await page.get_by_role("button", name="Show alert").click()
        await expect(result).to_have_text("alert: closed")
        await page.get_by_role("button", name="Show confirm").click()
        await expect(result).to_have_text("confirm: true")
        await page.get_by_role("button", name="Show prompt").click()
        await expect(result).to_have_text("prompt: Grace")
        assert answers == ["alert", "confirm", "prompt"]

        page.remove_listener("dialog", on_dialog)
        page.on("dialog", lambda d: asyncio.ensure_future(d.dismiss()))
        await page.get_by_role("button", name="Show prompt").click()
        await expect(result).to_have_text("prompt: null")

    env.run(check)


def test_ambiguous_and_checkout_buttons_log_their_effect(env: Env) -> None:
    async def check(page: Page) -> None:
        await page.goto(env.site.page("ambiguous.html"))
        await expect(page.get_by_role("button", name="Delete")).to_have_count(2)
        await page.get_by_role("listitem").filter(has_text="Invoice 1002").get_by_role("button").click()
        await page.get_by_role("button", name="Archive all").click()
        await expect(page.get_by_role("list", name="Log").get_by_role("listitem")).to_have_text(
            ["Deleted Invoice 1002", "Archived all"]
        )

        await page.goto(env.site.page("checkout.html"))
        await page.get_by_role("button", name="Cancel order").click()
        await expect(page.get_by_role("status")).to_have_text("Order cancelled")
        await page.get_by_role("button", name="Pay now").click()
        await expect(page.get_by_role("status")).to_have_text("Payment of $42.00 submitted")

    env.run(check)
