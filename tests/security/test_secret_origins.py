"""Secrets bound to origins (issue 30 §2), tested from the attacker's side in real Chromium.

One loopback server answers as two origins — ``http://127.0.0.1:P`` (where ``PASS`` is bound) and
``http://localhost:P`` (the same server, another origin) — and logs every request it receives with
its ``Host`` and body. Each rule is checked by what the server received, not by what ocnb reports.
"""

from __future__ import annotations

import html
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import pytest

import ocnb

pytestmark = pytest.mark.browser

PASS = "Hunter2-bound!pw"
OTHER = "Plain0ld-unbound"
BOUND = "${SECRET:PASS}"


@dataclass
class Seen:
    method: str
    host: str
    path: str
    body: str
    headers: dict[str, str]


@dataclass
class TwoOrigins:
    """One server, two origins; ``seen`` is every request it received."""

    port: int = 0
    seen: list[Seen] = field(default_factory=list)

    @property
    def home(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def other(self) -> str:
        return f"http://localhost:{self.port}"

    def login(self, origin: str, action: str, formaction: str | None = None) -> str:
        url = f"{origin}/login?action={quote(action, safe='')}"
        return url + (f"&formaction={quote(formaction, safe='')}" if formaction else "")

    def posts(self, path: str = "/collect") -> list[Seen]:
        return [r for r in self.seen if r.method == "POST" and r.path.startswith(path)]

    def anywhere(self, text: str) -> list[Seen]:
        """Requests that carried ``text`` in their path, body or headers (any spelling a form gives it)."""
        spellings = {text, quote(text, safe=""), quote(text, safe="").replace("%20", "+")}
        return [
            r
            for r in self.seen
            if any(s in r.path or s in r.body or any(s in v for v in r.headers.values()) for s in spellings)
        ]


def _page(title: str, body: str) -> bytes:
    return f"<!doctype html><html><head><title>{title}</title></head><body>{body}</body></html>".encode()


def _handler(site: TwoOrigins) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _record(self, body: str) -> None:
            site.seen.append(Seen(self.command, self.headers.get("Host", ""), self.path, body, dict(self.headers)))

        def do_GET(self) -> None:
            self._record("")
            self._answer()

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self._record(self.rfile.read(length).decode("utf-8", "replace"))
            self._answer()

        def _answer(self) -> None:
            url = urlsplit(self.path)
            q = {k: v[0] for k, v in parse_qs(url.query).items()}
            if url.path == "/login":
                action = html.escape(q.get("action", ""))
                fa = q.get("formaction")
                button = f'<button formaction="{html.escape(fa)}">Log in</button>' if fa else "<button>Log in</button>"
                body = (
                    f'<h1>Sign in</h1><form method="post" action="{action}">'
                    '<label>Username <input name="u"></label>'
                    '<label>Password <input name="p" type="password"></label>'
                    f"{button}</form>"
                )
                data = _page("Sign in", body)
            elif url.path == "/framed":
                data = _page("Framed", f'<h1>Top</h1><iframe src="{html.escape(q.get("child", ""))}"></iframe>')
            elif url.path == "/collect":
                data = _page("Collected", "<h1>Collected</h1>")
            else:
                data = _page("Blank", "<h1>Blank</h1>")
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@pytest.fixture(scope="module")
def web() -> Iterator[TwoOrigins]:
    site = TwoOrigins()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(site))
    site.port = httpd.server_port
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield site
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def bound_session(web: TwoOrigins, module_home: Path) -> Iterator[ocnb.Session]:
    env = module_home / "secrets.env"
    env.write_text(f"PASS={PASS}\nOTHER={OTHER}\nPASS.origins=http://127.0.0.1:{web.port}; https://*.example.org\n")
    s = ocnb.Session(headless=True, home=module_home, secrets=env, caps=["network"])
    s.start()
    yield s
    s.close()


@pytest.fixture
def s(bound_session: ocnb.Session, web: TwoOrigins) -> Iterator[ocnb.Session]:
    s = bound_session
    for t in s.call("tabs_context").data["tabs"][1:]:
        s.call("tabs_close", tab_id=t["tab_id"])
    s.call("navigate", url="about:blank")
    s.call("network_conditions", headers={}, http_auth=None)
    web.seen.clear()
    yield s


def refused(result: ocnb.ToolResult, origin: str | None) -> dict[str, Any]:
    assert not result.ok, result
    assert result.error is not None and result.error.code == "SECRET_NOT_ALLOWED", result.error
    details = result.error.details
    assert details["name"] == "PASS" and details["origin"] == origin
    assert details["allowed"][0].startswith("http://127.0.0.1:")
    assert PASS not in json.dumps(result.to_dict())
    return details


def field_value(s: ocnb.Session, name: str, frame: int = 0) -> str:
    js = f"() => (window.frames[{frame - 1}] || window).document.querySelector('[name={name}]').value"
    if frame == 0:
        js = f"() => document.querySelector('[name={name}]').value"
    return str(s.call("javascript_tool", expression=js).raise_for_error()["result"])


def journal_text(home: Path) -> str:
    return "".join(p.read_text() for p in sorted((home / "journal").glob("journal-*.jsonl")))


def test_a_form_that_posts_to_another_origin_never_receives_the_password(
    s: ocnb.Session, web: TwoOrigins, module_home: Path
) -> None:
    s.call("navigate", url=web.login(web.home, f"{web.other}/collect")).raise_for_error()
    s.call("form_input", query="Password", value=BOUND).raise_for_error()  # the frame is 127.0.0.1: allowed
    out = s.call("interact", query="Log in", action="click")
    details = refused(out, web.other)
    assert details["where"] == "the form's submission"
    assert web.posts() == [] and web.anywhere(PASS) == []
    assert not [r for r in web.seen if r.host.startswith("localhost")]
    # Enter in the password field submits the same form: refused too.
    refused(s.call("interact", query="Password", action="press", key="Enter"), web.other)
    refused(s.call("interact", query="Log in", action="press", key="Space"), web.other)  # Space on the button
    assert web.posts() == [] and web.anywhere(PASS) == []
    # The refusals are in the journal, the value never is (nor in the trace).
    text = journal_text(module_home)
    lines = [json.loads(line) for line in text.splitlines()]
    assert [e["error_code"] for e in lines if e["tool"] == "interact"][-3:] == ["SECRET_NOT_ALLOWED"] * 3
    trace = "".join(p.read_text() for p in (module_home / "traces").rglob("*") if p.is_file())
    assert "SECRET_NOT_ALLOWED" in trace
    for written in (text, trace):
        assert PASS not in written and quote(PASS, safe="") not in written


def test_the_same_form_posting_to_its_own_origin_works(s: ocnb.Session, web: TwoOrigins) -> None:
    s.call("navigate", url=web.login(web.home, "/collect")).raise_for_error()
    s.call("form_input", query="Username", value="ada").raise_for_error()
    s.call("form_input", query="Password", value=BOUND).raise_for_error()
    out = s.call("interact", query="Log in", action="click")
    assert out.ok, out
    posted = web.posts()
    assert len(posted) == 1 and posted[0].host == f"127.0.0.1:{web.port}"
    assert parse_qs(posted[0].body) == {"u": ["ada"], "p": [PASS]}
    assert PASS not in json.dumps(out.to_dict())


def test_a_button_formaction_to_another_origin_is_refused(s: ocnb.Session, web: TwoOrigins) -> None:
    s.call("navigate", url=web.login(web.home, "/collect", formaction=f"{web.other}/collect")).raise_for_error()
    s.call("form_input", query="Password", value=BOUND).raise_for_error()
    refused(s.call("interact", query="Log in", action="click"), web.other)
    assert web.posts() == [] and web.anywhere(PASS) == []


def test_form_input_on_another_origin_types_nothing(s: ocnb.Session, web: TwoOrigins) -> None:
    s.call("navigate", url=web.login(web.other, "/collect")).raise_for_error()
    details = refused(s.call("form_input", query="Password", value=BOUND), web.other)
    assert details["where"] == "the frame that holds the element"
    assert field_value(s, "p") == ""
    refused(s.call("interact", query="Password", action="type", value=BOUND), web.other)
    refused(s.call("fill_form", fields={"Username": "ada", "Password": BOUND}), web.other)
    assert field_value(s, "p") == "" and field_value(s, "u") == ""  # nothing filled, not even the first field
    s.call("interact", query="Log in", action="click").raise_for_error()
    assert web.anywhere(PASS) == []


def test_a_cross_origin_iframe_of_the_right_page_is_its_own_origin(s: ocnb.Session, web: TwoOrigins) -> None:
    child = web.login(web.other, "/collect")
    s.call("navigate", url=f"{web.home}/framed?child={quote(child, safe='')}").raise_for_error()
    refused(s.call("form_input", query="Password", value=BOUND), web.other)
    s.call("form_input", query="Password", value="not a secret").raise_for_error()  # the field is there
    s.call("interact", query="Log in", action="click").raise_for_error()
    assert web.anywhere(PASS) == []
    assert [r.body for r in web.posts()] == ["u=&p=not+a+secret"]  # the iframe's form posted, no password


def test_navigate_with_the_secret_in_the_url(s: ocnb.Session, web: TwoOrigins) -> None:
    details = refused(s.call("navigate", url=f"{web.other}/collect?p={BOUND}"), web.other)
    assert details["where"] == "the destination"
    refused(s.call("tabs_create", url=f"{web.other}/collect?p={BOUND}"), web.other)
    assert web.seen == [] and len(s.call("tabs_context").data["tabs"]) == 1
    s.call("navigate", url=f"{web.home}/collect?p={BOUND}").raise_for_error()
    assert [r.host for r in web.anywhere(PASS)] == [f"127.0.0.1:{web.port}"]


def test_a_plan_step_is_checked_like_a_call(s: ocnb.Session, web: TwoOrigins) -> None:
    steps = [
        {"tool": "navigate", "args": {"url": web.login(web.other, "/collect")}},
        {"tool": "form_input", "args": {"query": "Password", "value": BOUND}},
    ]
    out = s.call("execute_plan", steps=steps)
    assert out.data["steps"][1]["ok"] is False
    assert "SECRET_NOT_ALLOWED" in json.dumps(out.data["steps"][1])
    assert field_value(s, "p") == ""


def test_javascript_on_another_origin_is_refused(s: ocnb.Session, web: TwoOrigins) -> None:
    beacon = f"fetch('/collect', {{method: 'POST', body: '{BOUND}'}}).then(() => 1)"
    s.call("navigate", url=f"{web.other}/blank").raise_for_error()
    refused(s.call("javascript_tool", expression=beacon), web.other)
    refused(s.call("storage", action="set", key="k", value=BOUND), web.other)
    refused(s.call("cookies", action="set", name="k", value=BOUND), web.other)
    assert web.posts() == [] and web.anywhere(PASS) == []
    s.call("navigate", url=f"{web.home}/blank").raise_for_error()
    assert s.call("javascript_tool", expression=beacon).ok
    assert [r.host for r in web.posts()] == [f"127.0.0.1:{web.port}"] and web.posts()[0].body == PASS


def test_headers_and_credentials_scoped_wrongly_are_refused(s: ocnb.Session, web: TwoOrigins) -> None:
    s.call("navigate", url=f"{web.home}/blank").raise_for_error()
    details = refused(s.call("network_conditions", headers={"X-Token": BOUND}), None)
    assert "every origin" in details["where"]
    refused(
        s.call("network_conditions", http_auth={"username": "ada", "password": BOUND, "origin": web.other}), web.other
    )
    s.call("navigate", url=f"{web.other}/blank").raise_for_error()
    s.call("navigate", url=f"{web.home}/blank").raise_for_error()
    assert web.anywhere(PASS) == []
    # Scoped to the bound origin, the credentials are sent there (Basic, ahead of any challenge).
    auth = {"username": "ada", "password": BOUND, "origin": web.home, "send": "always"}
    s.call("network_conditions", http_auth=auth).raise_for_error()
    web.seen.clear()
    s.call("navigate", url=f"{web.home}/blank").raise_for_error()
    s.call("navigate", url=f"{web.other}/blank").raise_for_error()
    sent = [r.host for r in web.seen if any(k.lower() == "authorization" for k in r.headers)]
    assert sent == [f"127.0.0.1:{web.port}"]


def test_an_unbound_secret_goes_where_it_is_asked(s: ocnb.Session, web: TwoOrigins) -> None:
    s.call("navigate", url=web.login(web.home, f"{web.other}/collect")).raise_for_error()
    s.call("form_input", query="Password", value="${SECRET:OTHER}").raise_for_error()
    s.call("interact", query="Log in", action="click").raise_for_error()
    posted = web.posts()
    assert [r.host for r in posted] == [f"localhost:{web.port}"] and parse_qs(posted[0].body)["p"] == [OTHER]


def test_oc_secrets_load_reads_the_bindings(s: ocnb.Session, module_home: Path, web: TwoOrigins) -> None:
    bad = module_home / "bad.env"
    bad.write_text("LATE=late-value-1\nLATE.origins=http://localhost:*\nGHOST.origins=https://a.com\n")
    out = s.call("oc_secrets_load", path=str(bad))
    assert out.error is not None and out.error.code == "INVALID_ARGUMENT" and "GHOST" in out.error.message
    assert "LATE" not in s.secrets  # nothing of the file was loaded
    good = module_home / "late.env"
    good.write_text("LATE=late-value-1\nLATE.origins=http://localhost:*\n")
    out = s.call("oc_secrets_load", path=str(good)).raise_for_error()
    assert out["bound"]["LATE"] == ["http://localhost:*"] and out["bound"]["PASS"][0] == web.home
    s.call("navigate", url=web.login(web.home, "/collect")).raise_for_error()
    late = s.call("form_input", query="Password", value="${SECRET:LATE}")
    assert late.error is not None and late.error.code == "SECRET_NOT_ALLOWED"
    assert late.error.details == {
        "name": "LATE",
        "origin": web.home,
        "allowed": ["http://localhost:*"],
        "where": "the frame that holds the element",
    }
    assert field_value(s, "p") == ""


def test_a_replayed_skill_is_checked_like_live_calls(s: ocnb.Session, web: TwoOrigins) -> None:
    s.call("navigate", url=web.login(web.home, "/collect")).raise_for_error()
    s.call("interact", query="Password", action="fill", value=BOUND, capture_artifact=True).raise_for_error()
    s.call("interact", query="Log in", action="click", capture_artifact=True).raise_for_error()
    skill = s.call("oc_skill_record", name="bound-login", description="log in").raise_for_error()
    # The same page, now posting elsewhere: the replayed click must not send the password there.
    s.call("navigate", url=web.login(web.home, f"{web.other}/collect")).raise_for_error()
    web.seen.clear()
    out = s.call("oc_skill_replay", skill_id=skill["skill_id"])
    assert out.error is not None and out.error.code == "SECRET_NOT_ALLOWED", out
    assert out.error.details["origin"] == web.other and out.error.details["where"] == "the form's submission"
    assert web.posts() == [] and web.anywhere(PASS) == []
    # On the page as recorded it replays and logs in.
    s.call("navigate", url=web.login(web.home, "/collect")).raise_for_error()
    s.call("oc_skill_replay", skill_id=skill["skill_id"]).raise_for_error()
    assert [parse_qs(r.body)["p"] for r in web.posts()] == [[PASS]]


def test_over_mcp_the_agent_gets_the_refusal_and_the_other_origin_gets_nothing(web: TwoOrigins, tmp_path: Path) -> None:
    """The stand-alone server (``ocnb mcp --secrets``) driven by the MCP SDK's own client over stdio."""
    import os
    import sys

    import anyio
    from mcp import StdioServerParameters
    from mcp.client import Client

    env = tmp_path / "secrets.env"
    env.write_text(f"PASS={PASS}\nPASS.origins=http://127.0.0.1:{web.port}\n")
    server_env = {"OCNB_HOME": str(tmp_path / "home")}
    for key in ("OCNB_CHROMIUM", "PYTHONPATH"):  # the same browser and the same ocnb as this test
        if os.environ.get(key):
            server_env[key] = os.environ[key]
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "ocnb.mcp.cli", "--secrets", str(env)], env=server_env
    )
    answers: list[dict[str, Any]] = []

    async def agent() -> None:
        async with Client(params, mode="legacy") as client:
            for name, args in (
                ("navigate", {"url": web.login(web.home, f"{web.other}/collect")}),
                ("form_input", {"query": "Password", "value": BOUND}),
                ("interact", {"query": "Log in", "action": "click"}),
            ):
                result = await client.call_tool(name, args)
                answers.append(json.loads(result.content[0].text))

    web.seen.clear()
    anyio.run(agent)
    assert [a["ok"] for a in answers] == [True, True, False]
    error = answers[2]["error"]
    assert error["code"] == "SECRET_NOT_ALLOWED" and error["details"]["origin"] == web.other
    assert "PASS" in error["message"] and PASS not in json.dumps(answers)
    assert web.posts() == [] and web.anywhere(PASS) == []
