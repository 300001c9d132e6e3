"""Acceptance (issue 16): a planted secret never reaches the disk, a result, a log or an MCP response.

One secret with spaces and ``&<>`` goes through a URL, a form field, console output that straddles the
2,000-character cut, an evidence bundle and a skill export, over the Python API and over MCP (the
SDK's own client over streamable HTTP). Then every file under OCNB_HOME is read whole, and every
result, log record, captured stdout/stderr and MCP response is searched for the literal and each of
its encoded spellings. The same walk checks that every file is 0600 and every folder 0700.
"""

from __future__ import annotations

import base64
import json
import logging
import stat
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_shim_helpers import http_client

import ocnb
from ocnb.audit.secrets import spellings
from ocnb.files import PRIVATE_DIR, PRIVATE_FILE
from ocnb.mcp import serve

pytestmark = pytest.mark.browser

SECRET = "s3cr3t pass & <b>word</b> 42"
PH = "${SECRET:PW}"
CUT = 2000  # console text is kept cut to this many characters


def needles() -> list[str]:
    """Every spelling to look for, and each as it appears inside a JSON string on disk."""
    found = spellings(SECRET)
    return list(dict.fromkeys(found + [json.dumps(s, ensure_ascii=True)[1:-1] for s in found]))


def leaks(text: str) -> list[str]:
    return [n for n in needles() if n in text]


def walk(home: Path) -> tuple[dict[str, list[str]], dict[str, str], set[str]]:
    """(file → spellings found, path → wrong mode, kinds of folders seen) for everything under ``home``."""
    found: dict[str, list[str]] = {}
    modes: dict[str, str] = {}
    for p in home.rglob("*"):
        rel = str(p.relative_to(home))
        mode = stat.S_IMODE(p.lstat().st_mode)
        if p.is_dir():
            if mode != PRIVATE_DIR:
                modes[rel] = oct(mode)
            continue
        if mode != PRIVATE_FILE:
            modes[rel] = oct(mode)
        data = p.read_bytes()
        text = data.decode("utf-8", errors="replace")
        hit = leaks(text) + [n for n in needles() if n.encode("latin-1", "ignore") in data and n not in text]
        if hit:
            found[rel] = hit
    kinds = {p.relative_to(home).parts[0] for p in home.rglob("*")}
    return found, modes, kinds


def payload(result: Any) -> dict[str, Any]:
    return json.loads(result.content[0].text)


def test_a_secret_with_spaces_and_markup_is_never_written_in_any_spelling(
    site: Any, ocnb_home: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    env = tmp_path / "secrets.env"
    env.write_text(f"PW='{SECRET}'\n")
    results: list[ocnb.ToolResult] = []
    mcp_texts: list[str] = []
    padding = "x" * (CUT - 9)  # the secret starts 9 characters before the console cut

    with ocnb.Session(home=ocnb_home, secrets=env) as s:

        def call(tool: str, **args: Any) -> ocnb.ToolResult:
            r = s.call(tool, **args)
            results.append(r)
            return r

        # A URL: the secret unencoded in the argument, percent-encoded by the browser.
        assert call("navigate", url=site.page("echo") + "?q=${SECRET:PW}&n=1").ok
        assert call("read_page").ok
        # A form field, recorded as a skill, then posted to the echo page (HTML-escaped in its DOM).
        assert call("navigate", url=site.page("form.html"), capture_artifact=True).ok
        assert call("form_input", query="Password", value="${SECRET:PW}", capture_artifact=True).ok
        assert call("form_input", query="Full name", value="A ${SECRET:PW} B", capture_artifact=True).ok
        rec = call("oc_skill_record", name="signup with secret")
        assert rec.ok, rec
        url = site.page("echo") + "?pw=${SECRET:PW}"  # explicit steps: the handler sees them substituted
        nav = {"kind": "navigate", "selectors": [], "frame_ordinal": 0, "args": {"url": url}, "risky": False}
        artifact = {"schema_version": 1, "recorded_at": "2026-11-23T00:00:00Z", "url": url, "steps": [nav]}
        artifact["recorder"] = {"ocnb_version": ocnb.__version__}
        steps = [{"tool": "navigate", "args": {"url": url}, "replay_artifact": artifact}]
        explicit = call("oc_skill_record", name="explicit steps", steps=steps, description="uses ${SECRET:PW}")
        assert explicit.ok, explicit
        for r in (rec, explicit):
            assert call("oc_skill_export", skill_id=r.data["skill_id"]).ok
        assert call("javascript_tool", expression="document.getElementById('signup').submit()").ok
        assert call("wait_for", text="Received").ok
        echoed = call("javascript_tool", expression="document.body.innerHTML")
        assert PH in echoed.data["result"]  # the page holds it HTML-escaped; the result is masked
        # Console output straddling the cut, as written and URL-encoded.
        for expr in (
            f"console.log('{padding}' + '${{SECRET:PW}}')",
            f"console.log('{padding[:-6]}' + encodeURIComponent('${{SECRET:PW}}'))",
            f"console.error('{padding}' + JSON.stringify({{pw: '${{SECRET:PW}}'}}))",
        ):
            assert call("javascript_tool", expression=expr).ok
        # Transforms the page computes, which javascript_tool results must not give back.
        for expr in (
            "btoa('${SECRET:PW}')",
            "'${SECRET:PW}'.split('').reverse().join('')",
            "'${SECRET:PW}'.toUpperCase()",
            "'${SECRET:PW}'.toLowerCase()",
            "encodeURIComponent('${SECRET:PW}')",
            "JSON.stringify('${SECRET:PW}')",
            "btoa('user:${SECRET:PW}')",
        ):
            r = call("javascript_tool", expression=expr)
            assert r.ok and PH in r.data["result"], (expr, r)
        # A contract that names the secret: stored as the placeholder, substituted when checked.
        secret_shown = {"kind": "dom_text", "selector": "#fields", "contains": "${SECRET:PW}"}
        assert call("oc_contract_define", contract_id="secret-shown", assertion=secret_shown).ok
        assert call("oc_assert", contract_id="secret-shown").data["verdict"] == "pass"
        # An evidence bundle of the echo page (URL, DOM, console) and a screenshot.
        bundle = call("oc_evidence_bundle", reason="secret check ${SECRET:PW}")
        assert bundle.ok, bundle
        assert call("page_screenshot").ok
        assert call("oc_journal", kind="recent", limit=50).ok

        # The same through MCP: the SDK client over streamable HTTP.
        handle = serve(s, quiet=True)

        async def over_mcp() -> None:
            async with http_client(handle) as client:
                for name, args in (
                    ("navigate", {"url": site.page("echo") + "?q=${SECRET:PW}"}),
                    ("read_page", {}),
                    ("javascript_tool", {"expression": "location.href"}),
                    ("javascript_tool", {"expression": f"console.log('{padding}' + '${{SECRET:PW}}')"}),
                    ("javascript_tool", {"expression": "btoa('${SECRET:PW}')"}),
                    ("form_input", {"query": "nothing like this", "value": "${SECRET:PW}"}),
                    ("oc_evidence_bundle", {"reason": "over MCP"}),
                    ("oc_journal", {"kind": "recent", "limit": 50}),
                ):
                    result = await client.call_tool(name, args)
                    mcp_texts.extend(c.text for c in result.content if hasattr(c, "text"))
                    if name != "form_input":
                        assert payload(result)["ok"], (name, payload(result))

        try:
            anyio.run(over_mcp)
        finally:
            handle.stop()
        frames = [s.journal_df().to_json(date_format="iso"), s.trace_df().to_json(date_format="iso")]

    # Each path was taken: the placeholder stands where the secret was, in its encoded spellings too.
    assert PH in (Path(bundle.data["path"]) / "dom.html").read_text()  # it was HTML-escaped there
    assert PH in (Path(bundle.data["path"]) / "bundle.json").read_text()  # the URL, percent-encoded
    skills = "".join(p.read_text() for p in (ocnb_home / "skill-memory").rglob("skills.json"))
    assert skills.count(PH) >= 3 and PH in (ocnb_home / "contracts" / "secret-shown.json").read_text()

    in_results = {r.tool: leaks(r.to_json()) for r in results if leaks(r.to_json())}
    assert not in_results, in_results
    in_mcp = [leaks(t) for t in mcp_texts if leaks(t)]
    assert not in_mcp, in_mcp
    assert not leaks("".join(frames))
    logged = "\n".join(f"{r.name} {r.getMessage()} {r.args!r}" for r in caplog.records)
    assert not leaks(logged)
    out, err = capfd.readouterr()
    assert not leaks(out) and not leaks(err)

    found, modes, kinds = walk(ocnb_home)
    assert not found, found
    assert not modes, modes  # every file 0600, every folder 0700
    assert {"journal", "traces", "evidence", "screenshots", "skill-memory", "exports", "contracts"} <= kinds, kinds
    # Console text was masked before it was cut: the trace holds the placeholder, not half a secret.
    console = [
        json.loads(line)["body"]["text"]
        for p in (ocnb_home / "traces").rglob("events-*.jsonl")
        for line in p.read_text().splitlines()
        if '"kind":"console"' in line
    ]
    assert console and all(len(t) <= CUT for t in console)
    assert any(t.startswith(padding) and t[len(padding) :].startswith("${SE") for t in console), console


def test_encoded_needles_are_real() -> None:
    """The spellings searched for include the ones a browser and a server produce."""
    found = needles()
    assert "s3cr3t%20pass%20%26%20%3Cb%3Eword%3C%2Fb%3E%2042" in found  # encodeURIComponent
    assert "s3cr3t+pass+%26+%3Cb%3Eword%3C%2Fb%3E+42" in found  # a form body
    assert "s3cr3t pass &amp; &lt;b&gt;word&lt;/b&gt; 42" in found  # the DOM
    assert base64.b64encode(SECRET.encode()).decode() in found


def test_a_contract_that_names_a_secret_is_stored_as_its_placeholder_and_still_checks(
    site: Any, ocnb_home: Path, tmp_path: Path
) -> None:
    env = tmp_path / "secrets.env"
    env.write_text("PIN='pin 4711 secret'\n")
    url = site.page("echo") + "?pin=${SECRET:PIN}"
    nav = {"kind": "navigate", "selectors": [], "frame_ordinal": 0, "args": {"url": url}, "risky": False}
    artifact = {"schema_version": 1, "recorded_at": "2026-11-23T00:00:00Z", "url": url, "steps": [nav]}
    artifact["recorder"] = {"ocnb_version": ocnb.__version__}
    shown = {"kind": "dom_text", "selector": "#fields", "contains": "pin: ${SECRET:PIN}"}
    with ocnb.Session(home=ocnb_home, secrets=env) as s:
        assert s.oc_contract_define(contract_id="pin-shown", assertion=shown).ok
        rec = s.oc_skill_record(
            name="pin",
            steps=[{"tool": "navigate", "args": {"url": url}, "replay_artifact": artifact}],
            contract_id="pin-shown",
        )
        assert rec.ok, rec
        replay = s.oc_skill_replay(skill_id=rec.data["skill_id"])
        assert replay.ok and replay.data["ok"], replay  # the placeholder was filled in to check
        assert s.oc_assert(contract_id="pin-shown").data["verdict"] == "pass"
        assert s.oc_assert(contract_id="pin-shown").data["summary"].count("${SECRET:PIN}") == 1
    stored = "".join(p.read_text() for p in ocnb_home.rglob("*.json"))
    assert "${SECRET:PIN}" in stored and "4711" not in stored


@pytest.mark.anyio
async def test_the_stdio_server_writes_no_spelling_and_only_private_files(
    site: Any, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The stand-alone server (`ocnb mcp --secrets`): responses, its stderr and its OCNB_HOME."""
    from mcp.client import Client
    from mcp_shim_helpers import server_params

    home = tmp_path / "home"
    env = tmp_path / "secrets.env"
    env.write_text(f"PW='{SECRET}'\n")
    padding = "x" * (CUT - 9)
    texts: list[str] = []
    async with Client(server_params(home, "--secrets", str(env)), mode="legacy") as client:
        for name, args in (
            ("navigate", {"url": site.page("echo") + "?q=${SECRET:PW}"}),
            ("javascript_tool", {"expression": f"console.log('{padding}' + '${{SECRET:PW}}')"}),
            ("javascript_tool", {"expression": "encodeURIComponent('${SECRET:PW}')"}),
            ("javascript_tool", {"expression": "btoa('${SECRET:PW}')"}),
            ("oc_evidence_bundle", {"reason": "stdio"}),
            ("page_screenshot", {}),
            ("oc_journal", {"kind": "recent"}),
        ):
            result = await client.call_tool(name, args)
            texts.extend(c.text for c in result.content if hasattr(c, "text"))
            assert payload(result)["ok"], (name, payload(result))
    assert not [leaks(t) for t in texts if leaks(t)]
    out, err = capfd.readouterr()
    assert not leaks(out) and not leaks(err)
    found, modes, kinds = walk(home)
    assert not found, found
    assert not modes, modes
    assert {"journal", "traces", "evidence", "screenshots"} <= kinds, kinds
