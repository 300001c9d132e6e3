"""The approval desk in a real JupyterLab (issue 42): a notebook runs ``%oc mcp start``, an MCP client
(started from the notebook) asks to click "Pay now", the desk under the server's cell shows the request
with the element marked on a screenshot, and a click on its *Approve* button in JupyterLab lets the
agent's call act — once, as the site's own request log shows."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.approval_site import ApprovalSite
from tests.security.approval_site import serve as serve_site

from .test_jupyterlab import ARGS, CHROMIUM, _digest, _notebook, jupyterlab, open_and_run_all

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.timeout(300)]

AGENT = """import asyncio, threading
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
h = get_ipython().magics_manager.registry["OcMagics"]._mcp_server
answers = []

async def agent():
    async with create_mcp_http_client(headers=h.headers) as http:
        async with Client(streamable_http_client(h.url, http_client=http), mode="legacy") as c:
            r = await c.call_tool("interact", {"query": "Pay now", "intent": "pay invoice 1001"})
            answers.append(r.content[0].text)

threading.Thread(target=lambda: asyncio.run(agent()), daemon=True).start()
print("AGENT_STARTED")"""


@pytest.fixture
def pay_site() -> Iterator[ApprovalSite]:
    with serve_site() as s:
        yield s


def test_the_desk_in_jupyterlab_shows_the_agents_request_and_approve_acts_once(
    pay_site: ApprovalSite, tmp_path: Path
) -> None:
    from playwright.sync_api import expect, sync_playwright

    work = tmp_path / "nb"
    work.mkdir()
    name = "agent_desk.ipynb"
    cells = ["import ocnb\n%load_ext ocnb.magics", f"%oc navigate {pay_site.url}", "%oc mcp start", AGENT]
    (work / name).write_text(json.dumps(_notebook(cells)))
    with jupyterlab(tmp_path, work, name) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        try:
            open_and_run_all(page, url)
            panel = page.locator(".ocnb-agent-panel").first
            expect(panel).to_contain_text("Agent policy: confirm=risky", timeout=90_000)
            request = panel.locator(".ocnb-desk-request").first
            expect(request).to_contain_text("Pay now", timeout=90_000)
            expect(request).to_contain_text("Invoice 1001")
            expect(request).to_contain_text("pay invoice 1001")
            expect(request.locator("svg.ocnb-handoff-marks rect")).to_have_count(1)  # the element, marked
            time.sleep(1.0)
            assert pay_site.received("POST", "/pay") == []  # waiting: nothing sent yet
            request.scroll_into_view_if_needed()
            panel.screenshot(path=str(tmp_path / "approval-desk.png"))
            print(f"desk screenshot: {tmp_path / 'approval-desk.png'}")
            request.locator("button", has_text="Approve").click()  # the person, in JupyterLab
            deadline = time.monotonic() + 60
            while not pay_site.received("POST", "/pay") and time.monotonic() < deadline:
                time.sleep(0.1)
            assert len(pay_site.received("POST", "/pay")) == 1
            expect(panel).to_contain_text("nothing waiting", timeout=30_000)
            feed = panel.locator("table.ocnb-journal tr.ocnb-row", has_text="interact").filter(has_text="mcp")
            expect(feed.first).to_contain_text("approved by notebook", timeout=30_000)
            time.sleep(0.5)
            assert len(pay_site.received("POST", "/pay")) == 1  # once
        except Exception as exc:
            raise AssertionError(f"{exc}\n{_digest(page, tmp_path)}") from exc
        finally:
            browser.close()
