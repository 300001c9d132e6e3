"""The person and the agent at one browser (issue 42), in a real kernel: ``%oc mcp start`` there, a real
MCP client over HTTP here, and a site that logs every request it receives (the witness).

The agent's "Pay now" waits at the approval desk — visible in ``session.approvals.pending()`` and in
the desk widget of the cell that started the server — and acts once when approved there; denied, or
unanswered, nothing reaches the site. The person's own click is not asked. Paused, the agent's calls
end ``PAUSED`` and the page stays where it was. A client whose own person answers late loses to the desk.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from ocnb.audit.fence import unfence
from tests.security.approval_site import ApprovalSite
from tests.security.approval_site import serve as serve_site

pytest.importorskip("ocnb.mcp")
pytestmark = pytest.mark.browser


def _run(kc: Any, code: str, timeout: float = 90) -> dict[str, Any]:
    """Execute ``code`` in the kernel; its stdout, error and status."""
    out: dict[str, Any] = {"stdout": "", "stderr": "", "error": None}

    def hook(msg: dict[str, Any]) -> None:
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            out[content["name"]] += content["text"]
        elif kind == "error":
            out["error"] = content

    reply = kc.execute_interactive(code, timeout=timeout, output_hook=hook)
    out["status"] = reply["content"]["status"]
    return out


def _ok(kc: Any, code: str) -> dict[str, Any]:
    res = _run(kc, code)
    assert res["status"] == "ok", res
    return res


def _value(kc: Any, expr: str) -> Any:
    res = _ok(kc, f"import json as _j; print(_j.dumps({expr}, default=str))")
    return json.loads(res["stdout"].strip().splitlines()[-1])


@pytest.fixture(scope="module")
def pay_site() -> Iterator[ApprovalSite]:
    with serve_site() as s:
        yield s


@pytest.fixture(scope="module")
def kernel(module_home: Path) -> Iterator[tuple[Any, dict[str, Any]]]:
    """A kernel that ran ``%oc mcp start`` (the agent's defaults: confirm=risky), and the server's url/token."""
    from jupyter_client.manager import start_new_kernel

    mp = pytest.MonkeyPatch()
    mp.setenv("OCNB_HOME", str(module_home))
    mp.delenv("OCNB_AGENT_CONFIRM", raising=False)
    km, kc = start_new_kernel(kernel_name="python3")
    mp.undo()
    try:
        _ok(kc, "import ocnb\n%load_ext ocnb.magics\n%config OcMagics.headless = True")
        _ok(kc, "%oc mcp start --approval-timeout 60")
        _ok(kc, "h = _\ns = ocnb.session()\ndesk = h.panel.desk")
        info = _value(kc, "{'url': h.url, 'token': h.token}")
        yield kc, info
    finally:
        _run(kc, "%oc mcp stop")
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def payload(result: types.CallToolResult) -> dict[str, Any]:
    return unfence([c.text for c in result.content if isinstance(c, types.TextContent)])


async def _agent(
    info: dict[str, Any], calls: list[tuple[str, dict[str, Any]]], progress: list[float], **client: Any
) -> list[dict[str, Any]]:
    headers = {"Authorization": f"Bearer {info['token']}"}
    out = []

    async def heard(done: float, total: float | None, message: str | None) -> None:
        progress.append(done)

    async with create_mcp_http_client(headers=headers) as http:
        async with Client(streamable_http_client(info["url"], http_client=http), mode="legacy", **client) as c:
            for name, args in calls:
                out.append(payload(await c.call_tool(name, args, progress_callback=heard)))
    return out


def agent(info: dict[str, Any], *calls: tuple[str, dict[str, Any]], **client: Any) -> tuple[Future[Any], list[float]]:
    """Run the agent's ``calls`` in a thread (they may wait for the person); their results' future."""
    done: Future[Any] = Future()
    progress: list[float] = []

    def run() -> None:
        try:
            done.set_result(asyncio.run(_agent(info, list(calls), progress, **client)))
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            done.set_exception(exc)

    threading.Thread(target=run, daemon=True).start()
    return done, progress


def pending(kc: Any, wait: float = 30.0) -> list[dict[str, Any]]:
    """The kernel's open requests, once there is one (or after ``wait``)."""
    deadline = time.monotonic() + wait
    while True:
        got = _value(kc, "s.approvals.pending()")
        if got or time.monotonic() > deadline:
            return got
        time.sleep(0.2)


def shown(kc: Any, expr: str, want: Any, wait: float = 5.0) -> Any:
    """``expr`` over the desk widget once it equals ``want`` (or after ``wait`` s): the widget redraws from
    the browser thread just after a request opens, a moment after ``pending`` can see it."""
    deadline = time.monotonic() + wait
    while (got := _value(kc, expr)) != want and time.monotonic() < deadline:
        time.sleep(0.05)
    return got


def received(pay_site: ApprovalSite, path: str, wait: float) -> list[dict[str, Any]]:
    deadline = time.monotonic() + wait
    while not (got := pay_site.received("POST", path)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return got


def journal(kc: Any, tool: str, since: int) -> list[dict[str, Any]]:
    return _value(
        kc,
        f"[{{k: e.get(k) for k in ('seq', 'tool', 'source', 'ok', 'error_code', 'summary')}} "
        f"for e in s.journal.entries if e.get('tool') == {tool!r} and e['seq'] > {since}]",
    )


def last_seq(kc: Any) -> int:
    return int(_value(kc, "max([e['seq'] for e in s.journal.entries] or [0])"))


def open_page(kc: Any, site: ApprovalSite) -> None:
    _ok(kc, f"%oc navigate {site.url}")
    site.log.clear()


def test_the_banner_states_the_agents_policy(kernel: tuple[Any, dict[str, Any]]) -> None:
    kc, _info = kernel
    shown = _value(kc, "h.panel._repr_mimebundle_()['text/plain']")
    assert "Agent policy: confirm=risky" in shown and "waits 60 s" in shown and "origins: any origin" in shown
    assert _value(kc, "[s.settings.confirm, s.settings.agent_confirm, s.approvals.attended]") == [
        "never",
        "risky",
        True,
    ]


def test_the_agents_payment_waits_for_the_desk_and_acts_once(
    kernel: tuple[Any, dict[str, Any]], pay_site: ApprovalSite
) -> None:
    kc, info = kernel
    open_page(kc, pay_site)
    since = last_seq(kc)
    future, progress = agent(info, ("interact", {"query": "Pay now", "action": "click", "intent": "pay the invoice"}))
    (request,) = pending(kc)
    assert (request["tool"], request["source"], request["waiting"]) == ("interact", "mcp", True)
    assert (request["element"]["role"], request["element"]["name"]) == ("button", "Pay now")
    assert (
        "Invoice 1001" in request["element"]["context"]
        and request["page"] == pay_site.url
        and request["intent"] == "pay the invoice"
    )
    assert "pay" in request["why"]
    # the desk widget under the %oc mcp start cell shows the same request, with its screenshot
    want = [[request["approval_id"], True]]
    assert shown(kc, "[(r['approval_id'], bool(r['screenshot'])) for r in desk.requests]", want) == want
    time.sleep(1.5)  # the call waits: nothing has reached the pay_site, and the client hears progress
    assert pay_site.received("POST", "/pay") == [] and not future.done()
    assert progress, "no progress notification while the call waited"
    _ok(kc, f"out = desk.approve({request['approval_id']!r})")  # the widget's Approve
    (result,) = future.result(timeout=30)
    assert result["ok"] is True, result
    assert len(received(pay_site, "/pay", 5.0)) == 1
    time.sleep(0.5)
    assert len(pay_site.received("POST", "/pay")) == 1  # exactly one payment
    lines = journal(kc, "interact", since)
    assert len(lines) == 1 and lines[0]["ok"] and lines[0]["source"] == "mcp"  # one act, one line
    assert "approval: approved by notebook" in lines[0]["summary"]
    assert _value(kc, "[s.approvals.pending(), desk.requests]") == [[], []]


def test_denied_with_the_magic_nothing_reaches_the_site(
    kernel: tuple[Any, dict[str, Any]], pay_site: ApprovalSite
) -> None:
    kc, info = kernel
    open_page(kc, pay_site)
    since = last_seq(kc)
    future, _ = agent(info, ("interact", {"query": "Pay now", "action": "click"}))
    (request,) = pending(kc)
    _ok(kc, f"%oc deny {request['approval_id']}")
    (result,) = future.result(timeout=30)
    assert result["error"]["code"] == "APPROVAL_DENIED" and result["error"]["details"]["decided_by"] == "notebook"
    assert received(pay_site, "/pay", 1.0) == [] and pay_site.log == []
    (line,) = journal(kc, "interact", since)
    assert line["error_code"] == "APPROVAL_DENIED" and "denied by notebook" in line["summary"]
    # a second answer to the closed request is refused, clearly
    res = _run(kc, f"%oc approve {request['approval_id']}")
    assert "no open approval request" in res["stderr"] + str(res["error"])  # a UsageError line


def test_unanswered_it_times_out_and_nothing_is_sent(
    kernel: tuple[Any, dict[str, Any]], pay_site: ApprovalSite
) -> None:
    kc, info = kernel
    open_page(kc, pay_site)
    _ok(kc, "s.configure(approval_timeout_s=2)")
    try:
        t0 = time.monotonic()
        future, _ = agent(info, ("interact", {"query": "Pay now", "action": "click"}))
        (result,) = future.result(timeout=60)
        assert result["error"]["code"] == "APPROVAL_TIMEOUT", result
        assert 2.0 <= time.monotonic() - t0 < 30
    finally:
        _ok(kc, "s.configure(approval_timeout_s=60)")
    assert received(pay_site, "/pay", 1.0) == [] and pay_site.log == []
    assert _value(kc, "s.approvals.pending()") == []


def test_the_persons_own_click_is_not_asked(kernel: tuple[Any, dict[str, Any]], pay_site: ApprovalSite) -> None:
    kc, _info = kernel
    open_page(kc, pay_site)
    res = _ok(kc, '%oc click "Pay now"')
    assert res["error"] is None
    assert len(received(pay_site, "/pay", 5.0)) == 1
    assert _value(kc, "s.approvals.pending()") == []


def test_paused_the_agent_does_nothing_and_the_person_goes_on(
    kernel: tuple[Any, dict[str, Any]], pay_site: ApprovalSite
) -> None:
    kc, info = kernel
    open_page(kc, pay_site)
    since = last_seq(kc)
    _ok(kc, "h.panel.pause_button.click()")  # the banner's Pause agent
    assert _value(kc, "[s.approvals.paused, h.panel.pause_button.description]") == [True, "Resume agent"]
    try:
        future, _ = agent(info, ("navigate", {"url": f"{pay_site.url}elsewhere"}))
        (result,) = future.result(timeout=30)
        assert result["error"]["code"] == "PAUSED" and "paused" in result["error"]["message"]
        assert pay_site.received("GET", "/elsewhere") == []
        assert _value(kc, "s.call('tabs_context').data['tabs'][0]['url']") == pay_site.url  # the page is unchanged
        (line,) = journal(kc, "navigate", since)
        assert (line["source"], line["error_code"]) == ("mcp", "PAUSED")  # journaled
        _ok(kc, f"%oc navigate {pay_site.url}mine")  # the person keeps working
        assert pay_site.received("GET", "/mine")
    finally:
        _ok(kc, "%oc mcp resume")
    future, _ = agent(info, ("navigate", {"url": f"{pay_site.url}elsewhere"}))
    (result,) = future.result(timeout=30)
    assert result["ok"] is True, result
    # the live feed in the banner shows the agent's calls only, newest first, as they land
    want = [["navigate", "mcp", None], ["navigate", "mcp", "PAUSED"]]
    deadline = time.monotonic() + 10
    while (feed := _value(kc, "[(r['tool'], r['source'], r['error_code']) for r in h.panel.feed.rows[:2]]")) != want:
        assert time.monotonic() < deadline, feed
        time.sleep(0.2)
    assert all(r == "mcp" for r in _value(kc, "[r['source'] for r in h.panel.feed.rows]"))


def test_a_late_client_answer_loses_to_the_desk(kernel: tuple[Any, dict[str, Any]], pay_site: ApprovalSite) -> None:
    kc, info = kernel
    open_page(kc, pay_site)
    asked: list[str] = []
    release = threading.Event()

    async def late_yes(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        await asyncio.to_thread(release.wait, 20)  # the client's person is slow...
        return types.ElicitResult(action="accept", content={"approve": True})  # ...and says yes too late

    since = last_seq(kc)
    future, _ = agent(info, ("interact", {"query": "Pay now", "action": "click"}), elicitation_callback=late_yes)
    (request,) = pending(kc)
    deadline = time.monotonic() + 10
    while not asked and time.monotonic() < deadline:  # offered to both at once
        time.sleep(0.05)
    assert asked and "Pay now" in asked[0]
    _ok(kc, f"desk.deny({request['approval_id']!r})")  # the desk answers first
    release.set()  # then the client's person says yes (the client's handler, blocked in a thread, returns)
    (result,) = future.result(timeout=30)
    assert result["error"]["code"] == "APPROVAL_DENIED" and result["error"]["details"]["decided_by"] == "notebook"
    time.sleep(1.0)  # the client's late yes changes nothing
    assert pay_site.received("POST", "/pay") == []
    (line,) = journal(kc, "interact", since)
    assert "denied by notebook" in line["summary"]


def test_the_person_keeps_working_while_the_agent_waits(
    kernel: tuple[Any, dict[str, Any]], pay_site: ApprovalSite
) -> None:
    """The waiting call lets the session's call lock go: the person's own call runs at once; approved
    afterwards, on the same page and element, the agent's call acts once."""
    kc, info = kernel
    open_page(kc, pay_site)
    since = last_seq(kc)
    future, _ = agent(info, ("interact", {"query": "Pay now", "action": "click"}))
    (request,) = pending(kc)
    t0 = time.monotonic()
    res = _ok(kc, "%oc read_page")
    took = time.monotonic() - t0
    assert res["error"] is None and took < 15, took  # before: blocked until the agent's call ended (60 s)
    assert "Pay now" in _value(kc, "str(s.call('read_page').data)")  # and again from Python
    assert not future.done() and pay_site.received("POST", "/pay") == []
    _ok(kc, f"%oc approve {request['approval_id']}")
    (result,) = future.result(timeout=30)
    assert result["ok"] is True, result
    assert len(received(pay_site, "/pay", 5.0)) == 1
    time.sleep(0.5)
    assert len(pay_site.received("POST", "/pay")) == 1
    (line,) = journal(kc, "interact", since)
    assert line["ok"] and "approved by notebook" in line["summary"]


def test_approved_after_the_person_navigated_away_nothing_is_done(
    kernel: tuple[Any, dict[str, Any]], pay_site: ApprovalSite
) -> None:
    """The person navigates while the agent's "Pay now" waits; the late yes acts on nothing."""
    kc, info = kernel
    open_page(kc, pay_site)
    since = last_seq(kc)
    future, _ = agent(info, ("interact", {"query": "Pay now", "action": "click"}))
    (request,) = pending(kc)
    t0 = time.monotonic()
    _ok(kc, f"%oc navigate {pay_site.url}mine")
    assert time.monotonic() - t0 < 15 and pay_site.received("GET", "/mine")
    _ok(kc, f"%oc approve {request['approval_id']}")
    (result,) = future.result(timeout=30)
    assert result["error"]["code"] == "TARGET_NAVIGATED_AWAY", result
    assert "nothing was done" in result["error"]["message"] and result["error"]["details"]["decided_by"] == "notebook"
    time.sleep(1.0)
    assert pay_site.received("POST", "/pay") == []  # the server never heard of a payment
    (line,) = journal(kc, "interact", since)
    assert line["error_code"] == "TARGET_NAVIGATED_AWAY" and "page changed meanwhile" in line["summary"]
    assert _value(kc, "s.call('tabs_context').data['tabs'][0]['url']") == f"{pay_site.url}mine"


def test_approved_after_the_element_changed_nothing_is_done(
    kernel: tuple[Any, dict[str, Any]], pay_site: ApprovalSite
) -> None:
    """While the agent's "Pay now" waits, the page re-labels that very button (its script, or the
    person): the yes was for "Pay now", so the call ends ``STALE_REF`` and nothing is sent."""
    kc, info = kernel
    open_page(kc, pay_site)
    since = last_seq(kc)
    future, _ = agent(info, ("interact", {"query": "Pay now", "action": "click"}))
    (request,) = pending(kc)
    relabel = "[...document.querySelectorAll('button')].find(b => b.textContent === 'Pay now').textContent = 'Pay 999 EUR now'"
    _ok(kc, f"s.run(s.state.tabs[s.state.active_id].page.evaluate({relabel!r}))")
    _ok(kc, f"desk.approve({request['approval_id']!r})")
    (result,) = future.result(timeout=30)
    assert result["error"]["code"] == "STALE_REF", result
    assert "Pay 999 EUR now" in result["error"]["message"] and "nothing was done" in result["error"]["message"]
    time.sleep(1.0)
    assert pay_site.received("POST", "/pay") == []
    (line,) = journal(kc, "interact", since)
    assert line["error_code"] == "STALE_REF" and "page changed meanwhile" in line["summary"]


def test_the_agents_hand_off_is_picked_at_the_desk_then_approved(
    kernel: tuple[Any, dict[str, Any]], pay_site: ApprovalSite
) -> None:
    """Hand-off on, the agent's ambiguous "Delete" (two rows) waits at the desk as a pick; the person
    picks the Globex row with ``%oc pick``; "Delete" is risky, so the act is then asked about and
    approved in the desk widget: exactly one delete reaches the site, of the picked row, in one line."""
    kc, info = kernel
    _ok(kc, "s.configure(handoff=True)")
    try:
        _ok(kc, f"%oc navigate {pay_site.url}invoices")
        pay_site.log.clear()
        since = last_seq(kc)
        future, _ = agent(info, ("interact", {"query": "Delete", "action": "click"}))
        (pick,) = pending(kc)
        assert (pick["kind"], pick["tool"], pick["source"]) == ("pick", "interact", "mcp")
        rows = [str(c.get("context")) for c in pick["candidates"]]
        assert len(rows) == 2 and "Acme" in rows[0] and "Globex" in rows[1], rows
        # the desk widget shows the candidates as buttons
        assert shown(kc, "[r['kind'] for r in desk.requests]", ["pick"]) == ["pick"]
        time.sleep(1.0)
        assert pay_site.log == [] and not future.done()
        res = _ok(kc, f"%oc pick {pick['approval_id']} 2")
        assert "picked" in res["stdout"]
        bad = _run(kc, f"%oc pick {pick['approval_id']} 1")  # the first answer won
        assert "INVALID_ARGUMENT" in bad["stderr"] + str(bad["error"])  # a UsageError line
        (ask,) = pending(kc)
        assert (ask["kind"], ask["element"]["name"], ask["element"]["ref"]) == (
            "approval",
            "Delete",
            pick["candidates"][1]["ref"],
        )
        assert pay_site.log == []
        _ok(kc, f"out = desk.approve({ask['approval_id']!r})")
        (result,) = future.result(timeout=30)
        assert result["ok"] is True, result
        assert [r["body"] for r in received(pay_site, "/delete-invoice", 5.0)] == ["id=1002"]
        time.sleep(0.5)
        assert len(pay_site.received("POST", "/delete-invoice")) == 1  # exactly one delete
        lines = journal(kc, "interact", since)
        assert len(lines) == 1 and lines[0]["ok"] and lines[0]["source"] == "mcp", lines  # one act, one line
        assert "picked by notebook" in lines[0]["summary"] and "approval: approved by notebook" in lines[0]["summary"]
    finally:
        _ok(kc, "s.configure(handoff=False)")
