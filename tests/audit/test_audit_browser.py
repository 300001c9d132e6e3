"""The audit trail end to end with real Chromium: secrets never on disk, intents, journal per face."""

from __future__ import annotations

import json
import multiprocessing
import threading
from pathlib import Path

import pytest

import ocnb
from ocnb.dispatch import dispatch

pytestmark = pytest.mark.browser

SECRET = "correct-horse-battery-staple-42"


def _all_text_under(root: Path) -> str:
    chunks = []
    for p in root.rglob("*"):
        if p.is_file():
            chunks.append(p.read_bytes().decode("utf-8", errors="replace"))
    return "\n".join(chunks)


def test_secret_fills_the_form_but_never_reaches_disk_or_results(site, ocnb_home, tmp_path) -> None:
    env = tmp_path / "secrets.env"
    env.write_text(f"# demo secrets\nDEMO_PASSWORD={SECRET}\n")
    results = []
    with ocnb.Session(home=ocnb_home, secrets=env) as s:
        results.append(s.navigate(url=site.page("login.html")))
        results.append(
            s.javascript_tool(
                expression="document.querySelector('input[type=password]').value = '${SECRET:DEMO_PASSWORD}'"
            )
        )
        results.append(s.javascript_tool(expression="document.querySelector('input[type=password]').value"))
        results.append(s.page_screenshot())
        results.append(s.oc_evidence_bundle(reason="secret check"))
        results.append(s.oc_journal(kind="recent"))
        assert results[2].data["result"] == "${SECRET:DEMO_PASSWORD}"  # the page had it; the result masks it
        assert s.call("javascript_tool", expression="'${SECRET:NOPE}'").error.code == "MISSING_SECRET"
        frames = [s.journal_df().to_json(date_format="iso"), s.trace_df().to_json(date_format="iso")]
    assert all(r.ok for r in results), [r for r in results if not r.ok]
    for r in results:
        assert SECRET not in r.to_json()
    assert SECRET not in "".join(frames)
    assert SECRET not in _all_text_under(ocnb_home)


def test_journal_entries_have_exact_fields_and_source(site, ocnb_home) -> None:
    with ocnb.Session(home=ocnb_home) as s:
        s.navigate(url=site.page("index.html"))
        dispatch(s, "tabs_context", {}, source="mcp")
        s.call("navigate", url="file:///etc/passwd")
        df = s.journal_df()
    assert list(df["tool"]) == ["navigate", "tabs_context", "navigate"]
    assert list(df["source"]) == ["api", "mcp", "api"]
    assert df["error_code"].isna().tolist() == [True, True, False]
    assert df.loc[2, "error_code"] == "BLOCKED_URL"
    assert str(df["ts"].dtype) == "datetime64[ns, UTC]" and str(df["intent"].dtype) == "string"
    files = list((ocnb_home / "journal").glob("*.jsonl"))
    entry = json.loads(files[0].read_text().splitlines()[0])
    assert set(entry) == {
        "ts",
        "seq",
        "session_id",
        "tab_id",
        "tool",
        "args",
        "ok",
        "error_code",
        "duration_ms",
        "summary",
        "source",
    }


def _child_writes(home: str, n: int) -> None:
    s = ocnb.Session(home=home)
    try:
        for _ in range(n):
            dispatch(s, "expand_tools", {"category": "tabs"}, source="api")
    finally:
        s.close()


def test_two_threads_and_a_second_process_lose_no_entry(ocnb_home) -> None:
    n = 60
    with ocnb.Session(home=ocnb_home) as s:
        ctx = multiprocessing.get_context("spawn")
        proc = ctx.Process(target=_child_writes, args=(str(ocnb_home), n))
        proc.start()
        threads = [
            threading.Thread(target=lambda: [s.call("expand_tools", category="tabs") for _ in range(n)])
            for _ in range(2)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        proc.join(120)
        assert proc.exitcode == 0
    df = ocnb.journal_df(home=ocnb_home)
    assert len(df) == 3 * n
    assert df.groupby("session_id").size().sort_values().tolist() == [n, 2 * n]


def test_invalid_intent_leaves_no_trace_in_page_or_journal(session, site, module_home) -> None:
    session.navigate(url=site.page("form.html"))
    before = len(session.journal_df())
    for bad in ["", "x" * 121]:
        r = session.interact(query="Full name", action="fill", value="typed", intent=bad)
        assert r.error.code == "INVALID_INTENT"
    assert session.javascript_tool(expression="document.querySelector('#full-name').value").data["result"] == ""
    df = session.journal_df()
    assert len(df) == before + 1  # only the javascript_tool check above
    assert "interact" not in set(df["tool"])
    ok = session.interact(query="Full name", action="fill", value="Ada", intent="type the user's name")
    assert ok.ok
    last = session.journal_df().iloc[-1]
    assert last["intent"] == "type the user's name"
    events = session.trace_df()
    assert (events["intent"] == "type the user's name").sum() == 2  # tool_call and tool_result


def test_a_navigation_carries_its_intent_and_a_bad_one_goes_nowhere(session, site) -> None:
    """navigate takes ``intent`` like the other acting tools: the journal says why the page was opened,
    and a bad intent is refused before the browser moves (the page stays where it was, no journal line)."""
    session.navigate(url=site.page("form.html"))
    before = len(session.journal_df())
    for bad in ["", "x" * 121]:
        r = session.navigate(url=site.page("index.html"), intent=bad)
        assert r.error.code == "INVALID_INTENT"
    assert session.javascript_tool(expression="location.pathname").data["result"].endswith("/form.html")
    assert len(session.journal_df()) == before + 1  # only the javascript_tool check above
    ok = session.navigate(url=site.page("index.html"), intent="open the home page to find the menu")
    assert ok.ok
    last = session.journal_df().iloc[-1]
    assert last["tool"] == "navigate" and last["intent"] == "open the home page to find the menu"


def test_an_unrecorded_call_acts_but_leaves_no_journal_entry_or_trace_event(session, site) -> None:
    session.navigate(url=site.page("form.html"))
    journal, trace = len(session.journal_df()), len(session.trace_df())
    r = dispatch(session, "javascript_tool", {"expression": "document.title = 'seen'"}, record=False)
    assert r.ok
    assert session.javascript_tool(expression="document.title").data["result"] == "seen"
    assert len(session.journal_df()) == journal + 1  # the check above, not the unrecorded call
    assert "document.title = 'seen'" not in session.trace_df().astype(str).to_string()
    assert len(session.trace_df()) > trace


def test_human_handoff_payload_and_resume(site, ocnb_home) -> None:
    with ocnb.Session(home=ocnb_home, handoff=True) as s:
        s.navigate(url=site.page("ambiguous.html"))
        r = s.interact(query="Delete", action="click", intent="remove the second invoice")
        assert r.error.code == "NEEDS_HUMAN"
        payload = r.error.details
        assert payload["tool"] == "interact" and payload["target"] == {"query": "Delete"}
        assert payload["intent"] == "remove the second invoice"
        assert len(payload["candidates"]) >= 2 and Path(payload["screenshot"]).is_file()
        log = "document.body.innerText"
        assert "Deleted" not in s.javascript_tool(expression=log).data["result"]
        chosen = payload["candidates"][1]["ref"]
        done = s.resume_handoff(payload["handoff_id"], chosen)
        assert done.ok, done
        assert "Deleted Invoice 1002" in s.javascript_tool(expression=log).data["result"]
        assert list(s.journal_df()["tool"]).count("interact") == 2


def test_secrets_load_tool_returns_names_only(tmp_path, ocnb_home, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    env = tmp_path / "agent.env"
    env.write_text(f"API_TOKEN={SECRET}\n")
    with ocnb.Session(home=ocnb_home, upload_root=tmp_path) as s:
        r = s.oc_secrets_load(path=str(env))
        assert r.ok and r.data["loaded"] == ["API_TOKEN"] and SECRET not in r.to_json()
        assert s.oc_secrets_load(path="/etc/hostname").error.code == "FILE_NOT_ALLOWED"
        assert s.javascript_tool(expression="'${SECRET:API_TOKEN}'.length").data["result"] == len(SECRET)
