"""Network: network_requests, network_request, network_route and network_conditions (group ``network``).

Requests come from :class:`~ocnb.browser.Tab`'s bounded ``network`` log; a body is read from the
Playwright response while the browser still holds it (the newest ``Settings.network_bodies``). Routes
and conditions are set on the browser context, so they apply to every tab, and live in
:class:`~ocnb.browser.NetworkControls`. Every body is masked before it is cut or written: no spelling of
a secret reaches a result or a file.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import mimetypes
import re
from typing import Any

from ..audit.secret_origins import check_origin
from ..browser.routes import Rule
from ..browser.tabs import RequestRecord, Tab
from ..contracts.assertions import REGEX_PREFIX, match_pattern
from ..dispatch import ToolContext
from ..errors import InvalidArgument, NotFound
from ..files import atomic_write_bytes
from ..registry import tool
from .console import LIMIT_SCHEMA, SINCE_SCHEMA, window

__all__ = ["network_conditions", "network_request", "network_requests", "network_route"]

URL_SCHEMA: dict[str, Any] = {"type": "string", "minLength": 1, "description": "URL glob (* any text) or re:regex."}
#: Body characters shown inline by default; ``max_chars`` raises it up to :data:`MAX_CHARS`.
BODY_CHARS = 2000
MAX_CHARS = 100_000
#: Seconds to wait for a body still loading (a fetch whose page never read the body may never finish).
BODY_WAIT_S = 3.0
#: Characters of a body shown as the summary of a body written to a file.
PREVIEW_CHARS = 160
URL_CHARS = 300
#: Chrome DevTools' presets: latency in ms, throughput in kbit/s.
THROTTLE_PRESETS: dict[str, dict[str, int] | None] = {
    "off": None,
    "slow-3g": {"latency_ms": 2000, "download_kbps": 400, "upload_kbps": 400},
    "fast-3g": {"latency_ms": 563, "download_kbps": 1440, "upload_kbps": 675},
}
#: An HTTP header name (RFC 9110 token) and a value without line breaks.
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_TEXT_TYPES = re.compile(r"^text/|json|xml|javascript|ecmascript|x-www-form-urlencoded|graphql|csv", re.I)


def check_pattern(pattern: str) -> str:
    """``pattern`` if it compiles (a ``re:`` regex), else ``INVALID_ARGUMENT``."""
    if pattern.startswith(REGEX_PREFIX):
        try:
            re.compile(pattern[len(REGEX_PREFIX) :])
        except re.error as exc:
            raise InvalidArgument(f"bad regex in {pattern[:80]!r}: {exc}") from None
    return pattern


def check_headers(headers: dict[str, str]) -> dict[str, str]:
    """``headers`` if every name is an HTTP token and no value breaks a line, else ``INVALID_ARGUMENT``."""
    for name, value in headers.items():
        if not _HEADER_NAME.match(name) or "\r" in value or "\n" in value or "\x00" in value:
            raise InvalidArgument(f"bad HTTP header {name[:60]!r}", details={"header": name[:60]})
    return headers


def _status_filter(value: Any) -> Any:
    """A predicate over records for ``status``: a code, a class (``4xx``), ``failed`` or ``pending``."""
    if isinstance(value, int):
        return lambda r: r.status == value
    text = str(value).strip().lower()
    if text in ("failed", "pending"):
        return lambda r: r.state == text or (text == "pending" and r.state == "responded")
    if re.fullmatch(r"[1-5]xx", text):
        low = int(text[0]) * 100
        return lambda r: r.status is not None and low <= r.status < low + 100
    if text.isdigit():
        return lambda r: r.status == int(text)
    raise InvalidArgument(f"status must be a code, a class like 4xx, failed or pending, not {text[:40]!r}")


def _summary(ctx: ToolContext, r: RequestRecord) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": r.id,
        "method": r.method,
        "url": ctx.session.secrets.clip_text(r.url, URL_CHARS),
        "type": r.resource_type,
    }
    if r.status is not None:
        out["status"] = r.status
    if r.failure is not None:
        out["failure"] = r.failure
        guard = ctx.browser.origin_guard
        rule = guard.rule_for(r.url, r.failure) if guard is not None else None
        if rule is not None:
            out["blocked"] = rule  # refused by the origin policy: it never left the browser
    elif r.state in ("pending", "responded"):
        out["state"] = r.state
    if r.duration_ms is not None:
        out["ms"] = r.duration_ms
    return out


@tool(
    name="network_requests",
    page_text=("requests",),
    examples=(
        "which requests did the page make",
        "list the API calls this page sent",
        "did any network request fail",
    ),
    category="network",
    group="network",
    description=(
        "List the tab's requests. "
        "status is a code, a class (4xx), failed or pending; type a resource type (fetch, xhr, document…). "
        "Newest `limit` by default; since=<mark> lists what came after, oldest first, with next."
    ),
    properties={
        "url": URL_SCHEMA,
        "method": {"type": "string", "minLength": 1},
        "status": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "type": {"type": "string", "minLength": 1},
        "since": SINCE_SCHEMA,
        "limit": LIMIT_SCHEMA,
    },
)
async def network_requests(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    tab = ctx.tab(args.get("tab_id"))
    tests = []
    if "url" in args:
        pattern = check_pattern(args["url"])
        tests.append(lambda r: match_pattern(pattern, r.url))
    if "method" in args:
        method = args["method"].upper()
        tests.append(lambda r: r.method == method)
    if "status" in args:
        tests.append(_status_filter(args["status"]))
    if "type" in args:
        kind = args["type"].lower()
        tests.append(lambda r: r.resource_type == kind)
    kept = [r for r in tab.network if all(t(r) for t in tests)]
    page, paging = window(kept, args, lambda r: r.id, ts=lambda r: r.ts)
    requests = [_summary(ctx, r) for r in page]
    return {
        "requests": requests,
        "count": len(requests),
        **paging,
        "dropped": tab.network.dropped,
        "mark": ctx.browser.last_seq,
    }


# -- one request -------------------------------------------------------------------------------


def _find(tab: Tab, request_id: int) -> RequestRecord:
    for rec in reversed(tab.network):
        if rec.id == request_id:
            return rec
    kept = f"ids {tab.network[0].id}-{tab.network[-1].id}" if tab.network else "none"
    if tab.network and request_id < tab.network[0].id:
        reason = f"request {request_id} rolled off tab {tab.id}'s buffer (last {tab.network.maxlen} kept: {kept})"
    else:
        reason = f"no request {request_id} in tab {tab.id} (kept: {kept})"
    raise NotFound(reason, details={"id": request_id, "tab_id": tab.id, "dropped": tab.network.dropped})


def _content_type(headers: dict[str, str]) -> str:
    for name, value in headers.items():
        if name.lower() == "content-type":
            return value
    return ""


def _decode(data: bytes, content_type: str) -> str | None:
    """``data`` as text, or None when it is binary (not UTF-8, or an image, audio, video or font)."""
    mime = content_type.split(";")[0].strip().lower()
    if mime.startswith(("image/", "audio/", "video/", "font/")) and not _TEXT_TYPES.search(mime):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _masked_bytes(ctx: ToolContext, data: bytes) -> bytes:
    """``data`` with every secret masked: as UTF-8 text, else byte for byte (latin-1)."""
    mask = ctx.session.secrets.mask_text
    try:
        return mask(data.decode("utf-8")).encode("utf-8")
    except UnicodeDecodeError:
        return mask(data.decode("latin-1")).encode("latin-1", errors="replace")


def _body(
    ctx: ToolContext, rec: RequestRecord, data: bytes, content_type: str, which: str, args: dict[str, Any]
) -> dict[str, Any]:
    """A body as a result shows it: text cut to ``max_chars``, or written to a file with a preview."""
    out: dict[str, Any] = {"bytes": len(data)}
    if args.get("to_file"):
        ext = mimetypes.guess_extension(content_type.split(";")[0].strip()) or ".bin"
        path = ctx.home / "network" / ctx.session.id / f"req-{rec.id}-{which}{ext}"
        atomic_write_bytes(path, _masked_bytes(ctx, data))  # 0600, in folders 0700
        out["path"] = str(path)
        text = _decode(data, content_type)
        if text is not None:
            out["preview"] = ctx.session.secrets.clip_text(text, PREVIEW_CHARS)
        return out
    limit = int(args.get("max_chars", BODY_CHARS))
    text = _decode(data, content_type)
    if text is None:
        out["binary"] = True
    elif limit:
        masked = ctx.session.secrets.mask_text(text)  # masked first: a cut never leaves part of a secret
        out["text"] = masked if len(masked) <= limit else ctx.session.secrets.mask_text(masked[:limit], truncated=True)
        if len(masked) > limit:
            out["truncated"] = True
    return out


async def _response_body(rec: RequestRecord) -> tuple[bytes | None, str | None]:
    """The response body, or None and why it cannot be had."""
    if rec.response is None:
        if rec.body_released:
            return None, "released: only the newest network_bodies responses keep their body"
        return None, "failed" if rec.failure else "no response yet"
    try:
        return await asyncio.wait_for(rec.response.body(), BODY_WAIT_S if rec.end_ts is None else 2 * BODY_WAIT_S), None
    except TimeoutError:
        return None, f"unavailable: not loaded within {BODY_WAIT_S:g} s (the page may not have read it)"
    except Exception as exc:  # noqa: BLE001 - a redirect, a navigated-away page, an evicted resource
        return None, "unavailable: " + (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]


def _timing(rec: RequestRecord) -> dict[str, Any]:
    out: dict[str, Any] = {"duration_ms": rec.duration_ms}
    try:
        timing = dict(rec.request.timing)
    except Exception:  # noqa: BLE001 - not available for every request
        return out
    for key in ("domainLookupStart", "connectStart", "requestStart", "responseStart", "responseEnd"):
        value = timing.get(key)
        if isinstance(value, int | float) and value >= 0:
            out[key] = round(float(value), 1)
    return out


@tool(
    name="network_request",
    page_text=("*",),
    examples=(
        "show the response body of that API call",
        "why did this request fail",
        "what headers did the request send",
    ),
    category="network",
    group="network",
    description=(
        "Show one request: headers, bodies, timing, failure. "
        "Bodies are cut to max_chars (default 2000; 0 leaves them out); to_file writes them under "
        "OCNB_HOME/network and returns paths with a preview. Secrets are masked everywhere."
    ),
    properties={
        "id": {"type": "integer", "minimum": 1},
        "max_chars": {"type": "integer", "minimum": 0, "maximum": MAX_CHARS},
        "to_file": {"type": "boolean"},
    },
    required=["id"],
)
async def network_request(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    tab = ctx.tab(args.get("tab_id"))
    rec = _find(tab, int(args["id"]))
    to_file = bool(args.get("to_file"))
    data, why = None, None
    if rec.status is not None and (to_file or args.get("max_chars", BODY_CHARS)):
        data, why = await _response_body(rec)
        if data is None and to_file:  # before any file is written: a refused call leaves nothing behind
            raise NotFound(f"the body of request {rec.id} cannot be written: {why}", details={"id": rec.id})
    headers = rec.headers
    with contextlib.suppress(Exception):  # the page may be gone; the headers seen at the time remain
        headers = await asyncio.wait_for(rec.request.all_headers(), BODY_WAIT_S)  # with cookies too
    out = _summary(ctx, rec)
    out["request"] = {"headers": headers}
    post = None
    with contextlib.suppress(Exception):
        post = rec.request.post_data_buffer
    if post:
        out["request"]["body"] = _body(ctx, rec, post, _content_type(headers), "request", args)
    if rec.status is not None:
        response: dict[str, Any] = {"status": rec.status, "status_text": rec.status_text}
        response["headers"] = rec.response_headers
        if data is not None:
            response["body"] = _body(ctx, rec, data, _content_type(rec.response_headers), "response", args)
        elif why is not None:
            response["body_unavailable"] = why
        out["response"] = response
    out["timing"] = _timing(rec)
    return out


# -- routes ------------------------------------------------------------------------------------


def _matcher(pattern: str) -> Any:
    return lambda url: match_pattern(pattern, url)


def _route_handler(entry: dict[str, Any], args: dict[str, Any]) -> Any:
    action = args["action"]
    if action == "block":

        async def block(route: Any) -> bool:
            entry["hits"] += 1
            with contextlib.suppress(Exception):  # the request may be gone (page closed) by now
                await route.abort("blockedbyclient")
            return True

        return block
    body = args.get("body", "")
    headers = dict(args.get("headers") or {})
    if not isinstance(body, str):
        body = json.dumps(body)
        headers.setdefault("content-type", "application/json")
    if not any(k.lower() == "content-type" for k in headers):
        headers["content-type"] = "text/plain; charset=utf-8"
    status = int(args.get("status", 200))

    async def mock(route: Any) -> bool:
        entry["hits"] += 1
        with contextlib.suppress(Exception):  # the request may be gone (page closed) by now
            await route.fulfill(status=status, body=body, headers=headers)
        return True

    return mock


def _routes(ctx: ToolContext) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "rule"} for r in ctx.browser.network.controls.routes]


async def _unroute(ctx: ToolContext, entries: list[dict[str, Any]]) -> None:
    for entry in entries:
        await ctx.browser.network.routes.remove(entry["rule"])
        ctx.browser.network.controls.routes.remove(entry)


@tool(
    name="network_route",
    examples=(
        "block all the ads and trackers",
        "mock the API response with my own JSON",
        "stop images from loading",
    ),
    category="network",
    group="network",
    side_effects=True,
    uses_page=False,
    description=(
        "Block or mock requests by URL pattern. "
        "Routes apply to every tab. mock answers with status (default 200), body (a string, or JSON) and headers; remove drops the "
        "route for url, or every route without url. Returns the routes and their hits; no arguments lists them."
    ),
    properties={
        "url": URL_SCHEMA,
        "action": {"type": "string", "enum": ["block", "mock", "remove"]},
        "status": {"type": "integer", "minimum": 200, "maximum": 599},
        "body": {
            "anyOf": [{"type": "string"}, {"type": "object"}],
            "description": "Text, or JSON sent as application/json.",
        },
        "headers": {"type": "object", "additionalProperties": {"type": "string"}},
    },
)
async def network_route(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    action = args.get("action")
    controls = ctx.browser.network.controls
    if action is None:
        if "url" in args or any(k in args for k in ("status", "body", "headers")):
            raise InvalidArgument("network_route needs action (block, mock or remove)")
        return {"routes": _routes(ctx)}
    if action != "mock" and any(k in args for k in ("status", "body", "headers")):
        raise InvalidArgument("status, body and headers go with action=mock")
    ctx.browser.live_context()
    if action == "remove":
        gone = [r for r in controls.routes if "url" not in args or r["url"] == args["url"]]
        if "url" in args and not gone:
            raise NotFound(f"no route for {args['url']!r}", details={"routes": _routes(ctx)})
        await _unroute(ctx, gone)
        return {"removed": len(gone), "routes": _routes(ctx)}
    if "url" not in args:
        raise InvalidArgument(f"action={action} needs url (a glob such as */api/* or re:regex)")
    pattern = check_pattern(args["url"])
    check_headers(args.get("headers") or {})
    await _unroute(ctx, [r for r in controls.routes if r["url"] == pattern])  # a new route replaces the old
    entry: dict[str, Any] = {"url": pattern, "action": action, "hits": 0}
    if action == "mock":
        entry["status"] = int(args.get("status", 200))
    entry["rule"] = Rule(f"network_route {pattern}", _matcher(pattern), _route_handler(entry, args))
    await ctx.browser.network.routes.add(entry["rule"])
    controls.routes.append(entry)
    return {"routes": _routes(ctx)}


# -- conditions --------------------------------------------------------------------------------


def _origin(url: str) -> str | None:
    m = re.match(r"^(https?://[^/?#]+)", url)
    return m.group(1).lower() if m else None


def _auth_origin(ctx: ToolContext, value: dict[str, Any]) -> str:
    """The origin HTTP credentials go to: ``value["origin"]``, or the active page's; checked."""
    if ":" in value["username"]:
        raise InvalidArgument("an HTTP Basic username cannot contain ':'")
    origin = value.get("origin")
    if origin is None:
        active = ctx.browser.tabs.get(ctx.browser.active_id or "")
        found = _origin(active.page.url) if active is not None else None
        if found is None:
            raise InvalidArgument("http_auth needs origin (the page is not on an http(s) origin)")
        return found
    if _origin(origin) != origin.rstrip("/").lower():
        raise InvalidArgument(f"http_auth origin must be scheme://host[:port], not {origin[:80]!r}")
    return str(origin).rstrip("/").lower()


def _credentials_setter(context: Any) -> Any:
    """The call that changes a live context's HTTP credentials, or ``None`` when this Playwright has none.

    Playwright's Python API sets them only when a context is created (``http_credentials``); its
    protocol changes them on a live context (``BrowserContext.setHTTPCredentials``, behind JavaScript's
    deprecated ``setHTTPCredentials``), reached through the context's channel. Chromium then answers an
    auth challenge of the origin in whatever scheme the server asks for (Basic, Digest, NTLM, Negotiate).
    """
    channel = getattr(getattr(context, "_impl_obj", None), "_channel", None)
    return getattr(channel, "setHTTPCredentials", None)


async def _set_http_auth(ctx: ToolContext, value: dict[str, Any] | None) -> None:
    """Answer the auth challenges of one origin with these credentials — and with ``send: always``
    also send Basic to it ahead of a challenge (a route that adds the header) — or stop both."""
    controls = ctx.browser.network.controls
    context = ctx.browser.context
    origin = _auth_origin(ctx, value) if value else None  # checked before anything changes
    if value:
        check_origin(ctx.session.secrets, value, origin, "the origin the credentials are scoped to")
    send = (value or {}).get("send", "unauthorized")
    setter = _credentials_setter(context)
    if setter is None and value and send != "always":
        raise InvalidArgument(
            "this Playwright cannot give a running browser HTTP credentials to answer auth challenges with; "
            "use send: always (Basic sent with every request to the origin), or a Playwright that can"
        )
    if controls.auth_route is not None:
        await context.unroute(*controls.auth_route)
        controls.auth_route = None
    controls.http_auth = None
    if setter is not None:
        await setter(httpCredentials=None)
    if not value or origin is None:
        return
    if setter is not None:
        await setter(httpCredentials=[{"username": value["username"], "password": value["password"], "origin": origin}])
    controls.http_auth = {"username": value["username"], "origin": origin, "send": send}
    if send != "always":
        return
    token = base64.b64encode(f"{value['username']}:{value['password']}".encode()).decode()

    def matcher(url: str) -> bool:
        return _origin(url) == origin

    async def handler(route: Any) -> None:
        try:
            headers = await route.request.all_headers()
        except Exception:  # noqa: BLE001 - the request's own copy lacks only cookies
            headers = dict(route.request.headers)
        with contextlib.suppress(Exception):  # the request may be gone (page closed) by now
            await route.fallback(headers={**headers, "authorization": f"Basic {token}"})

    await context.route(matcher, handler)
    controls.auth_route = (matcher, handler)


@tool(
    name="network_conditions",
    examples=(
        "simulate a slow 3G connection",
        "go offline to test the app",
        "add an authorization header to every request",
        "log in to a page behind HTTP basic or digest auth",
    ),
    category="network",
    group="network",
    side_effects=True,
    uses_page=False,
    description=(
        "Set offline, throttling, extra headers or HTTP auth. "
        "They apply to every tab. throttle is off, slow-3g, fast-3g or {latency_ms, download_kbps, upload_kbps}; headers replace the "
        "extra headers ({} clears); http_auth {username, password, origin?} answers one origin's auth challenges "
        "(Basic, Digest, NTLM; default origin: the page's; send always: Basic unasked too; null clears). "
        "Returns the conditions in force; no arguments reads them."
    ),
    properties={
        "offline": {"type": "boolean"},
        "throttle": {
            "anyOf": [
                {"type": "string", "enum": list(THROTTLE_PRESETS)},
                {
                    "type": "object",
                    "properties": {
                        "latency_ms": {"type": "integer", "minimum": 0, "maximum": 60_000},
                        "download_kbps": {"type": "integer", "minimum": 0},
                        "upload_kbps": {"type": "integer", "minimum": 0},
                    },
                    "additionalProperties": False,
                },
            ]
        },
        "headers": {"type": "object", "additionalProperties": {"type": "string"}},
        "http_auth": {
            "anyOf": [
                {
                    "type": "object",
                    "properties": {
                        "username": {"type": "string"},
                        "password": {"type": "string"},
                        "origin": {"type": "string"},
                        "send": {"enum": ["unauthorized", "always"]},
                    },
                    "required": ["username", "password"],
                    "additionalProperties": False,
                },
                {"type": "null"},
            ]
        },
    },
)
async def network_conditions(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    state = ctx.browser
    state.live_context()
    controls = state.network.controls
    check_headers(args.get("headers") or {})
    if "http_auth" in args:
        await _set_http_auth(ctx, args["http_auth"])
    if "headers" in args:
        await state.context.set_extra_http_headers(args["headers"])
        controls.headers = dict(args["headers"])
    if "offline" in args and args["offline"] != controls.offline:
        await state.context.set_offline(args["offline"])
        controls.offline = args["offline"]
    if "throttle" in args:
        throttle = args["throttle"]
        controls.throttle = THROTTLE_PRESETS[throttle] if isinstance(throttle, str) else (dict(throttle) or None)
    if "throttle" in args or ("offline" in args and controls.throttle is not None):
        # Playwright's offline switch resets CDP throttling: send both again to every tab.
        for tab in list(state.tabs.values()):
            await state.network.apply_throttle(tab.page)
    return {
        "offline": controls.offline,
        "throttle": controls.throttle,
        "headers": controls.headers,
        "http_auth": controls.http_auth,
    }
