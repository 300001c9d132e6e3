"""Console and network as tools (capability group ``network``), in real Chromium on the demo page network.html."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import ocnb
from ocnb.audit.secrets import spellings
from ocnb.errors import InvalidArgument

pytestmark = pytest.mark.browser

#: A secret with characters that URLs, JSON and Basic credentials each spell their own way.
SECRET = "Tok3n/s3cr3t+v@lue"
PLACEHOLDER = "${SECRET:API_TOKEN}"


@pytest.fixture(scope="module")
def net_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("net-home")


@pytest.fixture(scope="module")
def net_session(net_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ocnb.Session]:
    env = tmp_path_factory.mktemp("net-secrets") / "secrets.env"
    env.write_text(f"API_TOKEN={SECRET}\n")
    s = ocnb.Session(headless=True, home=net_home, caps=["network"], secrets=env)
    s.start()
    yield s
    s.close()


@pytest.fixture
def s(net_session: ocnb.Session, site) -> Iterator[ocnb.Session]:
    """The module's session on network.html in a new tab (empty logs); routes and conditions cleared afterwards."""
    old = [t["tab_id"] for t in net_session.call("tabs_context").raise_for_error()["tabs"]]
    net_session.call("tabs_create", url=site.page("network.html")).raise_for_error()
    for tab_id in old:
        net_session.call("tabs_close", tab_id=tab_id).raise_for_error()
    net_session.call("wait_for", text="Network and console").raise_for_error()
    yield net_session
    net_session.call("network_route", action="remove").raise_for_error()
    net_session.call("network_conditions", offline=False, throttle="off", headers={}, http_auth=None).raise_for_error()


def result_text(s: ocnb.Session) -> str:
    r = s.call("javascript_tool", expression="document.getElementById('network-result').textContent")
    return str(r.raise_for_error()["result"])


def click(s: ocnb.Session, name: str, then: str) -> None:
    """Click a button of the page and wait until the result line contains ``then``."""
    s.call("interact", query=name, action="click").raise_for_error()
    s.call("wait_for", selector=f"#network-result:has-text({json.dumps(then)})", timeout_ms=10_000).raise_for_error()


def request_named(s: ocnb.Session, **filters) -> dict:
    [found] = s.call("network_requests", **filters).raise_for_error()["requests"]
    return found


def test_the_tools_come_with_the_network_group_only(fresh_session: ocnb.Session) -> None:
    names = {"console_messages", "network_requests", "network_request", "network_route", "network_conditions"}
    assert not names & set(fresh_session.registry.names())
    assert fresh_session.call("network_requests").error.code == "UNKNOWN_TOOL"
    fresh_session.configure(caps=["network"])
    assert names <= set(fresh_session.registry.names())


def test_console_lists_levels_and_what_came_after_a_mark(s: ocnb.Session) -> None:
    s.call("wait_for", time_ms=200)
    listed = s.call("console_messages").raise_for_error()
    texts = [(m["type"], m["text"]) for m in listed["messages"]]
    assert texts[-4:] == [
        ("log", "network page ready"),
        ("warning", "quota almost used"),
        ("error", "widget failed to load"),
        ("pageerror", "Error: uncaught in timer"),
    ]
    assert listed["messages"][-2]["url"].endswith("network.html:30")  # where it was logged
    errors = s.call("console_messages", level="error")["messages"]
    assert {m["type"] for m in errors} == {"error", "pageerror"}
    assert [m["type"] for m in s.call("console_messages", level="warning")["messages"][-3:]] == [
        "warning",
        "error",
        "pageerror",
    ]

    mark = s.call("console_messages", limit=0).raise_for_error()
    assert mark["messages"] == [] and mark["mark"] >= listed["messages"][-1]["id"]
    click(s, "Send JSON", "json: 201")
    after = s.call("console_messages", since=mark["mark"])["messages"]
    assert [m["text"] for m in after] == [f"sending order with token {''}"]  # the token field is empty
    # The same mark says "after this" to the request list too.
    assert [r["method"] for r in s.call("network_requests", since=mark["mark"])["requests"]] == ["POST"]


def test_requests_listed_filtered_and_shown_in_detail(s: ocnb.Session, net_home: Path) -> None:
    click(s, "Send JSON", "json: 201")
    click(s, "Send XHR", "xhr: 200")
    click(s, "Load missing", "missing: 404")
    click(s, "Load server error", "server error: 500")

    listed = s.call("network_requests").raise_for_error()
    assert [r["url"].split("/", 3)[3] for r in listed["requests"]][-5:] == [
        "network.html",
        "api/items?token=",
        "api/items?via=xhr",
        "status/404",
        "status/500",
    ]
    assert listed["dropped"] == 0 and listed["mark"] >= listed["requests"][-1]["id"]
    post = request_named(s, method="post")
    assert (post["status"], post["type"]) == (201, "fetch") and post["ms"] > 0
    assert request_named(s, type="xhr")["url"].endswith("/api/items?via=xhr")
    assert request_named(s, status="4xx")["status"] == 404
    assert request_named(s, status=500)["url"].endswith("/status/500")
    assert request_named(s, url="*/api/items?via=*")["type"] == "xhr"
    assert request_named(s, url="re:status/5\\d\\d$")["status"] == 500
    assert s.call("network_requests", type="document")["requests"][0]["url"].endswith("network.html")

    detail = s.call("network_request", id=post["id"]).raise_for_error()
    request, response = detail["request"], detail["response"]
    assert request["headers"]["content-type"] == "application/json"
    assert json.loads(request["body"]["text"]) == {"name": "Durian", "price": 9.5, "token": ""}
    assert response["status"] == 201 and response["headers"]["content-type"] == "application/json"
    assert json.loads(response["body"]["text"])["received"]["name"] == "Durian"
    assert response["body"]["bytes"] == len(response["body"]["text"].encode())
    assert detail["timing"]["duration_ms"] > 0 and "responseEnd" in detail["timing"]

    cut = s.call("network_request", id=post["id"], max_chars=10)["response"]["body"]
    assert len(cut["text"]) == 10 and cut["truncated"] is True
    assert "body" not in s.call("network_request", id=post["id"], max_chars=0)["response"]

    # to_file: a path under OCNB_HOME and a short summary instead of the body.
    filed = s.call("network_request", id=post["id"], to_file=True).raise_for_error()["response"]["body"]
    path = Path(filed["path"])
    assert path.is_relative_to(net_home / "network") and path.suffix == ".json"
    assert "text" not in filed and filed["preview"].startswith('{"received"')
    assert json.loads(path.read_text())["received"]["name"] == "Durian" and filed["bytes"] == path.stat().st_size
    assert path.stat().st_mode & 0o777 == 0o600


def test_a_planted_secret_is_masked_in_every_field_and_file(s: ocnb.Session, net_home: Path) -> None:
    s.call("interact", query="API token", action="fill", value=PLACEHOLDER).raise_for_error()
    click(s, "Send JSON", "json: 201")
    post = request_named(s, method="POST")
    detail = s.call("network_request", id=post["id"]).raise_for_error()
    filed = s.call("network_request", id=post["id"], to_file=True).raise_for_error()
    console = s.call("console_messages", level="info").raise_for_error()

    # Where the page put it: the URL (percent-encoded), a header, the JSON body, the echo, the console.
    assert detail["url"].endswith("?token=" + PLACEHOLDER) or PLACEHOLDER in detail["url"]
    assert detail["request"]["headers"]["x-api-token"] == PLACEHOLDER
    assert json.loads(detail["request"]["body"]["text"])["token"] == PLACEHOLDER
    assert json.loads(detail["response"]["body"]["text"])["received"]["token"] == PLACEHOLDER
    assert console["messages"][-1]["text"] == f"sending order with token {PLACEHOLDER}"

    seen = json.dumps([detail.to_dict(), filed.to_dict(), console.to_dict(), s.call("network_requests").to_dict()])
    files = [p for p in net_home.rglob("*") if p.is_file()]
    assert any(p.parent.name == s.id and p.parent.parent.name == "network" for p in files)
    written = "\n".join(p.read_bytes().decode("utf-8", "replace") for p in files)
    for spelling in [*spellings(SECRET), base64.b64encode(SECRET.encode()).decode()]:
        assert spelling not in seen, spelling
        assert spelling not in written, spelling


def test_offline_makes_a_fetch_fail_until_it_is_switched_off(s: ocnb.Session) -> None:
    state = s.call("network_conditions", offline=True).raise_for_error()
    assert state["offline"] is True
    click(s, "Load missing", "missing failed")
    assert "Failed to fetch" in result_text(s)
    failed = request_named(s, status="failed")
    assert failed["failure"] == "net::ERR_INTERNET_DISCONNECTED" and "status" not in failed
    detail = s.call("network_request", id=failed["id"]).raise_for_error()
    assert detail["failure"] == "net::ERR_INTERNET_DISCONNECTED" and "response" not in detail.data

    assert s.call("network_conditions").raise_for_error()["offline"] is True  # no arguments: read
    s.call("network_conditions", offline=False).raise_for_error()
    click(s, "Load missing", "missing: 404")


def test_throttling_delays_a_request_in_every_tab(s: ocnb.Session, site) -> None:
    state = s.call("network_conditions", throttle={"latency_ms": 800}).raise_for_error()
    assert state["throttle"] == {"latency_ms": 800}
    click(s, "Send XHR", "xhr: 200")
    assert request_named(s, type="xhr")["ms"] >= 700
    s.call("tabs_create", url=site.page("network.html")).raise_for_error()  # a new tab is throttled too
    click(s, "Send XHR", "xhr: 200")
    assert request_named(s, type="xhr")["ms"] >= 700
    assert s.call("network_conditions", throttle="off")["throttle"] is None
    click(s, "Send XHR", "xhr: 200")
    assert s.call("network_requests", type="xhr", limit=1)["requests"][0]["ms"] < 700


def test_a_mocked_response_is_what_the_page_sees_and_a_blocked_request_fails(s: ocnb.Session) -> None:
    routes = s.call("network_route", url="*/api/quote", action="mock", body={"quote": "mocked"}).raise_for_error()
    assert routes["routes"] == [{"url": "*/api/quote", "action": "mock", "hits": 0, "status": 200}]
    click(s, "Fetch quote", "quote: 200")
    assert result_text(s) == 'quote: 200 {"quote": "mocked"}'
    quote = request_named(s, url="*/api/quote")
    assert s.call("network_request", id=quote["id"])["response"]["headers"]["content-type"] == "application/json"

    s.call("network_route", url="*/api/quote", action="mock", status=418, body="teapot").raise_for_error()
    click(s, "Fetch quote", "quote: 418")  # a route for the same pattern replaces the old one
    assert result_text(s) == "quote: 418 teapot"

    s.call("network_route", url="*/api/items?via=*", action="block").raise_for_error()
    click(s, "Send XHR", "xhr failed")
    assert request_named(s, type="xhr")["failure"].startswith("net::ERR_BLOCKED_BY_CLIENT")
    listed = s.call("network_route").raise_for_error()["routes"]
    assert [(r["url"], r["action"], r["hits"]) for r in listed] == [
        ("*/api/quote", "mock", 1),
        ("*/api/items?via=*", "block", 1),
    ]
    assert s.call("network_route", url="*/api/quote", action="remove")["removed"] == 1
    click(s, "Fetch quote", "quote: 404")  # the real server again


def test_extra_headers_and_http_auth_reach_the_server(s: ocnb.Session, site) -> None:
    state = s.call(
        "network_conditions",
        headers={"X-Extra": "yes"},
        http_auth={"username": "ada", "password": PLACEHOLDER, "send": "always"},  # Basic without a challenge
    ).raise_for_error()
    origin = site.page("").rstrip("/")
    assert state["headers"] == {"X-Extra": "yes"}
    assert state["http_auth"] == {"username": "ada", "origin": origin, "send": "always"}
    click(s, "Load missing", "missing: 404")
    headers = s.call("network_request", id=request_named(s, url="*/status/404")["id"])["request"]["headers"]
    assert headers["x-extra"] == "yes"
    assert headers["authorization"].startswith("Basic ") and SECRET not in json.dumps(headers)
    assert base64.b64encode(f"ada:{SECRET}".encode()).decode() not in json.dumps(headers)

    s.call("network_conditions", headers={}, http_auth=None).raise_for_error()
    s.call("navigate", url=site.page("network.html")).raise_for_error()
    click(s, "Load missing", "missing: 404")
    headers = s.call("network_request", id=request_named(s, url="*/status/404", limit=1)["id"])["request"]["headers"]
    assert "authorization" not in headers and "x-extra" not in headers


def test_bad_input_gets_a_clear_code_and_changes_nothing(s: ocnb.Session) -> None:
    before = s.call("network_route", url="*/x", action="block").raise_for_error()["routes"]
    for args, code in [
        ({"url": "re:(", "action": "block"}, "INVALID_ARGUMENT"),
        ({"url": "*/nothing", "action": "remove"}, "NOT_FOUND"),
        ({"action": "mock"}, "INVALID_ARGUMENT"),
        ({"url": "*/y", "action": "block", "status": 200}, "INVALID_ARGUMENT"),
    ]:
        r = s.call("network_route", **args)
        assert r.error is not None and r.error.code == code, (args, r)
    assert s.call("network_route")["routes"] == before
    assert s.call("network_requests", status="teapot").error.code == "INVALID_ARGUMENT"
    assert s.call("console_messages", since="yesterday").error.code == "INVALID_ARGUMENT"
    assert s.call("network_conditions", throttle="dial-up").error.code == "INVALID_ARGUMENT"
    s.call("network_conditions", headers={"X-Kept": "1"}, http_auth={"username": "ada", "password": "pw"})
    conditions = s.call("network_conditions").raise_for_error().data
    for args in [
        {"headers": {"Bad Name": "x"}, "offline": True},
        {"headers": {"X-Split": "a\r\nInjected: 1"}},
        {"http_auth": {"username": "a:b", "password": "x"}, "offline": True},
        {"http_auth": {"username": "a", "password": "x", "origin": "http://h/path"}},
        {"http_auth": {"username": "a"}},
    ]:
        r = s.call("network_conditions", **args)
        assert r.error is not None and r.error.code == "INVALID_ARGUMENT", (args, r)
    assert s.call("network_conditions").data == conditions
    assert s.call("network_route", url="*/z", action="mock", headers={"Bad Name": "x"}).error.code == "INVALID_ARGUMENT"
    assert s.call("network_route")["routes"] == before


def test_a_body_that_rolled_off_the_buffer_is_not_found(ocnb_home: Path, site) -> None:
    with ocnb.Session(home=ocnb_home, caps=["network"], network_buffer=3, network_bodies=1, console_buffer=2) as s:
        s.call("navigate", url=site.page("network.html")).raise_for_error()
        first = s.call("network_requests", limit=1)["requests"][0]
        for name, then in [("Send JSON", "json: 201"), ("Send XHR", "xhr: 200"), ("Load missing", "missing: 404")]:
            click(s, name, then)
        listed = s.call("network_requests").raise_for_error()
        assert len(listed["requests"]) == 3 and listed["dropped"] >= 1
        gone = s.call("network_request", id=first["id"])
        assert gone.error is not None and gone.error.code == "NOT_FOUND" and "rolled off" in gone.error.message
        assert s.call("network_requests").data == listed.data  # nothing changed
        unknown = s.call("network_request", id=listed["mark"] + 100)
        assert unknown.error.code == "NOT_FOUND" and "no request" in unknown.error.message

        # Only the newest network_bodies responses keep their body; older ones say why.
        post = listed["requests"][0]
        assert post["method"] == "POST"
        older = s.call("network_request", id=post["id"]).raise_for_error()
        assert "body" not in older["response"] and older["response"]["body_unavailable"].startswith("released")
        assert json.loads(older["request"]["body"]["text"])["name"] == "Durian"  # the request's own body remains
        assert s.call("network_request", id=post["id"], to_file=True).error.code == "NOT_FOUND"
        assert not (ocnb_home / "network").exists()  # refused before writing anything

        console = s.call("console_messages").raise_for_error()
        assert len(console["messages"]) == 2 and console["dropped"] >= 3
        page = s.call("console_messages", since=0, limit=1).raise_for_error()
        assert len(page["messages"]) == 1 and page["next"] == page["messages"][0]["id"]
        rest = s.call("console_messages", since=page["next"], limit=5)
        assert "next" not in rest.data and rest["messages"] == console["messages"][1:]


def test_an_unknown_group_is_refused_and_changes_nothing(fresh_session: ocnb.Session) -> None:
    with pytest.raises(InvalidArgument, match="unknown capability group 'nosuch'"):
        ocnb.Session(caps=["network", "nosuch"])
    fresh_session.configure(caps=["network"])
    with pytest.raises(InvalidArgument) as err:
        fresh_session.configure(caps=["nosuch"])
    assert err.value.code == "INVALID_ARGUMENT" and "network" in err.value.details["groups"]
    assert fresh_session.settings.caps == ("network",) and "network_route" in fresh_session.registry
