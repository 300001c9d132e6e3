"""The MCP server over streamable HTTP, on uvicorn in a daemon thread (for a notebook kernel).

``handle = ocnb.mcp.serve(session)`` starts it on ``127.0.0.1`` (a free port by default) and prints the
URL, the bearer token generated at start and ready-to-paste client configuration. Agent calls run on
the session's browser thread, so they proceed while a notebook cell is busy and are serialized with
the cell's own calls. ``handle.status()`` reports, ``handle.stop()`` shuts down and frees the port.

The token is new at every start unless one is given: ``token=`` (or the ``OCNB_MCP_TOKEN``
environment variable), or ``token_file=PATH`` — the file's token is reused when the file exists, else
a new one is written there (mode 0600, atomically), so a saved client configuration survives restarts
(see :func:`load_or_create_token`).

Security: every request needs ``Authorization: Bearer <token>`` (401 otherwise); ``Host`` must name
this server and a browser ``Origin`` must be this server's own (DNS-rebinding protection: 421/403);
bodies over ``max_body_bytes`` get 413. OAuth discovery (``/.well-known/*``, and the ``/authorize``,
``/token``, ``/register`` fallbacks) answers 404 with or without the token: there is no authorization
server, so an OAuth-capable client finds nothing to register with and asks for the bearer token. A
request the client cancelled gets no response: its SSE stream ends without one. A non-loopback bind
address is refused (:class:`McpRemoteBindError`) unless ``allow_remote=True``; that, or ``auth=False``,
is an explicit choice that emits :class:`McpSecurityWarning`.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import functools
import ipaddress
import json
import logging
import os
import secrets
import socket
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mcp_types as types
import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import ValidationError
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..files import atomic_write_text
from .listing import Listing, listed
from .server import McpBridge, refusal

if TYPE_CHECKING:
    from ..session import Session

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "MCP_PATH",
    "TOKEN_ENV",
    "McpHandle",
    "McpRemoteBindError",
    "McpSecurityWarning",
    "McpTokenError",
    "load_or_create_token",
    "remote_bind_refusal",
    "serve",
]

log = logging.getLogger("ocnb.mcp")

MCP_PATH = "/mcp"
DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
_LOOPBACK_NAMES = {"localhost"}


def tools_line(session: Any, listing: bool | Listing) -> str:
    """How many tools a client sees, for a start-up banner, under ``listing`` (``True``: discovery
    mode, ``False``: every tool, as before listings had names)."""
    if isinstance(listing, bool):
        listing = "discovery" if listing else "all"
    n = len(session.registry)
    if listing == "all":
        return f"{n} tools"
    start = [t.name for t in listed(session.registry, listing)]
    if listing == "essentials":
        return (
            f"tools/list shows {len(start)} essential tools of {n}; discover_capabilities lists the others "
            "when a task needs them (--all-tools: every tool)"
        )
    return (
        f"discovery mode: tools/list starts with {len(start)} tool{'' if len(start) == 1 else 's'} of {n}, "
        f"{', '.join(start)}, and grows with what it finds"
    )


class McpSecurityWarning(UserWarning):
    """A deliberate weakening of the MCP server's defaults (no auth, non-loopback bind)."""


class McpRemoteBindError(ValueError):
    """A non-loopback bind address without ``allow_remote=True`` (``--allow-remote``)."""


#: Environment variable that gives the bearer token itself (instead of a new one at every start).
TOKEN_ENV = "OCNB_MCP_TOKEN"
_MIN_TOKEN = 16
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=")


class McpTokenError(ValueError):
    """A bearer token (given, or read from a token file) that cannot be used; the file is left as it is."""


def _check_token(token: str, where: str) -> str:
    if len(token) < _MIN_TOKEN or not set(token) <= _TOKEN_CHARS:
        raise McpTokenError(
            f"the bearer token from {where} must be at least {_MIN_TOKEN} characters of A-Z a-z 0-9 - . _ ~ + / = "
            f"(it is {len(token)} characters)"
        )
    return token


def load_or_create_token(path: str | os.PathLike[str], token: str | None = None) -> str:
    """The bearer token kept in ``path``: read when the file exists, else created there.

    A new file holds ``token`` if given, else a fresh random one (``secrets.token_urlsafe(32)``). It is
    written with mode 0600 by :func:`~ocnb.files.atomic_write_text` without overwriting, so another
    process starting at the same moment either sees the whole file or creates its own first and both
    use that one.
    An existing file that is empty or holds something that is not a token raises
    :class:`McpTokenError` and is never overwritten; one readable by other users gets a
    :class:`McpSecurityWarning`. Given both a ``token`` and a file holding another, the file wins only
    if they agree: otherwise :class:`McpTokenError`.
    """
    path = Path(path).expanduser()
    if token is not None:
        _check_token(token, f"the given token (or ${TOKEN_ENV})")
    for _ in range(2):
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise McpTokenError(f"cannot read the MCP token file {path}: {exc}") from exc
        else:
            found = _check_token(text.strip(), f"the token file {path}")
            if token is not None and token != found:
                raise McpTokenError(
                    f"the given token (or ${TOKEN_ENV}) differs from the one in {path}; drop one or make them agree"
                )
            if os.name == "posix" and path.stat().st_mode & 0o077:
                warnings.warn(
                    f"the MCP token file {path} is readable by other users; run: chmod 600 {path}",
                    McpSecurityWarning,
                    stacklevel=2,
                )
            return found
        new = token if token is not None else secrets.token_urlsafe(32)
        try:
            atomic_write_text(path, new + "\n", overwrite=False)  # 0600, never replaces another's file
        except FileExistsError:
            continue  # someone else was first: read theirs
        return new
    raise McpTokenError(f"the MCP token file {path} keeps changing; try again")


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback IP addresses (127.0.0.0/8, ::1)."""
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def remote_bind_refusal(host: str) -> str:
    """Why a non-loopback ``host`` is refused, and how to bind it anyway."""
    return (
        f"refusing to bind the MCP server to {host!r}: it is not a loopback address, so other machines "
        "could reach the browser; use 127.0.0.1 (the default), or pass --allow-remote "
        "(allow_remote=True) if that is what you want"
    )


def _host_for_url(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


#: OAuth endpoints a client looks for on a server without authorization metadata (MCP 2025-03-26's
#: fallbacks): answered 404 like ``/.well-known/*``, so nothing suggests a registration could work.
_OAUTH_FALLBACKS = frozenset({"/authorize", "/token", "/register"})


def _oauth_discovery(path: str) -> bool:
    """Whether ``path`` is where an OAuth-capable client looks for authorization metadata
    (``/.well-known/oauth-protected-resource``, ``/.well-known/oauth-authorization-server``,
    ``/.well-known/openid-configuration``, with or without a path suffix, or in front of one)."""
    return "/.well-known/" in path or path.rstrip("/") in _OAUTH_FALLBACKS


class _Guard:
    """ASGI middleware in front of the MCP app: Host, then Origin, then OAuth discovery (404: ocnb has
    no authorization server, only a bearer token), then the bearer token, then the message's shape
    (a POST body that is JSON but no JSON-RPC message: -32600)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str | None,
        hosts: set[str],
        origins: set[str],
        stats: dict[str, int],
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    ) -> None:
        self.app = app
        self.token = token
        self.hosts = {h.lower() for h in hosts}
        self.origins = {o.lower() for o in origins}
        self.stats = stats
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.stats["requests"] += 1
        headers = Headers(scope=scope)
        refusal = self._refusal(headers, scope.get("path", ""))
        if refusal is not None:
            self.stats["refused"] += 1
            await refusal(scope, receive, send)
            return
        if scope.get("method") == "POST" and scope.get("path") == MCP_PATH:
            await _check_message(self.app, self.max_body_bytes, scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _refusal(self, headers: Headers, path: str = "") -> PlainTextResponse | None:
        if headers.get("host", "").lower() not in self.hosts:
            return PlainTextResponse("Invalid Host header", status_code=421)
        origin = headers.get("origin")
        if origin is not None and origin.lower() not in self.origins:
            return PlainTextResponse("Origin not allowed", status_code=403)
        if _oauth_discovery(path):
            return PlainTextResponse(
                "Not Found: this server has no OAuth authorization; send the bearer token it printed at start "
                "(Authorization: Bearer <token>)",
                status_code=404,
            )
        if self.token is not None:
            scheme, _, given = headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not secrets.compare_digest(given.strip().encode(), self.token.encode()):
                return PlainTextResponse(
                    "Missing or wrong bearer token",
                    status_code=401,
                    headers={"WWW-Authenticate": 'Bearer realm="ocnb"'},
                )
        return None


async def _check_message(app: ASGIApp, limit: int, scope: Scope, receive: Receive, send: Send) -> None:
    """Pass a POST to ``app`` unless its body is JSON but not one JSON-RPC message (a batch, an object
    without ``method``…): that is answered here, 400 with a short invalid-request error (-32600), where
    the SDK would answer -32602 with its validator's whole report. Bodies over ``limit``, bodies that
    are not JSON and non-JSON content types are the SDK's to answer (413, -32700, 400)."""
    headers = Headers(scope=scope)
    content_type, declared = headers.get("content-type", ""), headers.get("content-length", "")
    if content_type.split(";")[0].strip().lower() != "application/json" or (
        declared.isdigit() and int(declared) > limit
    ):
        await app(scope, receive, send)
        return
    body = bytearray()
    read: list[Message] = []
    while True:
        message = await receive()
        read.append(message)
        if message["type"] != "http.request":
            break
        body.extend(message.get("body", b""))
        if len(body) > limit or not message.get("more_body", False):
            break

    async def replay() -> Message:
        return read.pop(0) if read else await receive()

    complete = bool(read) and read[-1]["type"] == "http.request" and not read[-1].get("more_body", False)
    if complete and len(body) <= limit:
        try:
            types.jsonrpc_message_adapter.validate_json(bytes(body), by_name=False)
        except ValidationError as exc:
            reply = refusal(exc)
            if reply is not None and reply.error.code == types.INVALID_REQUEST:
                response = Response(
                    reply.model_dump_json(by_alias=True, exclude_unset=True),
                    status_code=400,
                    media_type="application/json",
                )
                await response(scope, replay, send)
                return
    await app(scope, replay, send)


def _silence_cancelled_requests(server: Any) -> None:
    """Make the 2025-era streamable HTTP transport send nothing for a request the client cancelled.

    The spec's cancellation utility: the receiver of ``notifications/cancelled`` SHOULD NOT send a
    response for the request. The SDK's dispatcher writes none, but its 2025-era HTTP transport then
    ends the request's SSE stream with an error it makes up (-32800, "Request cancelled"); here each new
    session's transport instead just ends that stream (what was queued for the request still goes out
    first). Sessions answering with JSON bodies (not ocnb's) keep the SDK's way: a body must hold a
    response.
    """
    manager = getattr(server, "_session_manager", None)
    admit = getattr(manager, "_admit_session", None)
    if manager is None or admit is None:  # another SDK layout: the cancelled request gets -32800
        log.warning("cannot keep cancelled MCP requests unanswered with this mcp SDK")
        return

    def admitting(requestor: Any) -> Any:
        transport = admit(requestor)
        if transport is not None and not transport.is_json_response_enabled:
            transport._terminate_unanswered_request = functools.partial(_end_unanswered, transport)
        return transport

    manager._admit_session = admitting


async def _end_unanswered(transport: Any, request_id: Any) -> None:
    """End the SSE stream of a cancelled request without a JSON-RPC message for it."""
    streams = getattr(transport, "_request_streams", {}).get(str(request_id))
    if streams is not None:
        streams[0].close()  # the stream's writer sends what is queued, then the HTTP response ends


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY only on sockets that say so, and without it
    # every keep-alive response waits ~40 ms for a delayed ACK (Nagle).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.setblocking(False)
    return sock


def _host_names(host: str) -> set[str]:
    """Names a client may put in ``Host`` for a server bound to ``host``."""
    names = {host, "127.0.0.1", "localhost", "[::1]"} if is_loopback(host) else {host}
    if host in ("0.0.0.0", "::", ""):
        names.add(socket.gethostname())
        names.add(socket.getfqdn())
        with_addresses = set()
        for name in list(names):
            try:
                with_addresses.update(socket.gethostbyname_ex(name)[2])
            except OSError:
                pass
        names |= with_addresses
        names |= {"127.0.0.1", "localhost", "[::1]"}
    return {_host_for_url(n) for n in names if n}


@dataclass
class McpHandle:
    """A running MCP HTTP server: ``url``, ``token``, :meth:`status`, :meth:`stop` (idempotent)."""

    url: str
    token: str | None = field(repr=False)  # never in a repr: a notebook saves what it shows
    host: str
    port: int
    bridge: McpBridge
    _server: uvicorn.Server = field(repr=False)
    _thread: threading.Thread = field(repr=False)
    _sock: socket.socket = field(repr=False)
    _stats: dict[str, int] = field(repr=False)
    started_at: float = field(default_factory=time.time)
    _stopped: bool = field(default=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: Cancels the stop this server is registered for when its session closes.
    _cancel_on_close: Callable[[], None] = field(default=lambda: None, repr=False)
    #: Where the token is kept across restarts (``token_file=``), or ``None`` for a per-start token.
    token_file: Path | None = None

    @property
    def session(self) -> Session:
        return self.bridge.session

    @property
    def running(self) -> bool:
        return not self._stopped and self._thread.is_alive()

    @property
    def headers(self) -> dict[str, str]:
        """HTTP headers a client must send (the bearer token), empty without auth."""
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def claude_code_command(self) -> str:
        """The ``claude mcp add`` line that registers this server with Claude Code."""
        header = f' --header "Authorization: Bearer {self.token}"' if self.token else ""
        return f"claude mcp add --transport http ocnb {self.url}{header}"

    def client_config(self) -> dict[str, Any]:
        """``mcpServers`` JSON for clients that speak streamable HTTP (Cursor, VS Code, .mcp.json)."""
        entry: dict[str, Any] = {"type": "http", "url": self.url}
        if self.token:
            entry["headers"] = self.headers
        return {"mcpServers": {"ocnb": entry}}

    def desktop_config(self) -> dict[str, Any]:
        """``mcpServers`` JSON for Claude Desktop, which reaches HTTP servers through ``mcp-remote``."""
        args = ["-y", "mcp-remote", self.url]
        entry: dict[str, Any] = {"command": "npx", "args": args}
        if self.token:
            args += ["--header", "Authorization:${OCNB_MCP_AUTH}"]
            entry["env"] = {"OCNB_MCP_AUTH": f"Bearer {self.token}"}
        return {"mcpServers": {"ocnb": entry}}

    def banner(self) -> str:
        """What :func:`serve` prints: URL, token and client configuration."""
        lines = [
            f"ocnb MCP server: {self.url}  (session {self.session.id}, {tools_line(self.session, self.bridge.listing)})"
        ]
        if not self.token:
            lines.append("Auth: OFF (anyone who can reach the port)")
        elif self.token_file is not None:
            lines.append(f"Bearer token: {self.token}  (kept in {self.token_file}; the same after a restart)")
        else:
            lines.append(f"Bearer token: {self.token}  (new at every start; --token-file PATH keeps one)")
        if self.token:
            lines.append("Clients send it as the HTTP header  Authorization: Bearer <token>")
        lines += ["", "Claude Code:", f"  {self.claude_code_command()}", ""]
        lines += ["Cursor / VS Code / .mcp.json:", json.dumps(self.client_config(), indent=2), ""]
        lines += ["Claude Desktop (claude_desktop_config.json, via mcp-remote):"]
        lines.append(json.dumps(self.desktop_config(), indent=2))
        return "\n".join(lines)

    def masked_token(self) -> str:
        """The token's first characters only (``abcd…``): enough to tell two tokens apart."""
        return f"{self.token[:4]}… ({len(self.token)} characters)" if self.token else "none (auth off)"

    def safe_banner(self) -> str:
        """The banner without the token itself, for output that is saved (a notebook's cell).

        The token is named by its 0600 file (``$(cat FILE)`` in a shell) or, without one, by
        ``handle.token``; the client configurations say where to put it.
        """
        lines = [
            f"ocnb MCP server: {self.url}  (session {self.session.id}, {tools_line(self.session, self.bridge.discovery)})"
        ]
        if not self.token:
            lines.append("Auth: OFF (anyone who can reach the port)")
            lines += ["", "Claude Code:", f"  {self.claude_code_command()}"]
            return "\n".join(lines)
        where = f"the file {self.token_file} (mode 0600)" if self.token_file is not None else "handle.token"
        lines.append(f"Bearer token: {self.masked_token()}, in {where}; not shown here, so a saved notebook holds none")
        source = f"$(cat {self.token_file})" if self.token_file is not None else "<handle.token>"
        stand_in = f"<the token in {self.token_file}>" if self.token_file is not None else "<handle.token>"
        header = f' --header "Authorization: Bearer {source}"'
        lines += ["", "Claude Code:", f"  claude mcp add --transport http ocnb {self.url}{header}", ""]
        client = {
            "mcpServers": {
                "ocnb": {"type": "http", "url": self.url, "headers": {"Authorization": f"Bearer {stand_in}"}}
            }
        }
        lines += ["Cursor / VS Code / .mcp.json:", json.dumps(client, indent=2), ""]
        desktop = self.desktop_config()
        desktop["mcpServers"]["ocnb"]["env"] = {"OCNB_MCP_AUTH": f"Bearer {stand_in}"}
        lines += ["Claude Desktop (claude_desktop_config.json, via mcp-remote):", json.dumps(desktop, indent=2)]
        return "\n".join(lines)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.safe_banner() if not cycle else f"McpHandle({self.url!r})")

    def status(self) -> dict[str, Any]:
        """A JSON-able snapshot: running, url, port, auth, session, tools, traffic, uptime."""
        return {
            "running": self.running,
            "url": self.url,
            "host": self.host,
            "port": self.port,
            "auth": self.token is not None,
            "token_file": str(self.token_file) if self.token_file is not None else None,
            "session_id": self.session.id,
            "tools": len(self.session.registry),
            "tools_listed": len(self.bridge.visible_tools()),
            "discovery": self.bridge.discovery,
            "listing": self.bridge.listing,
            "caps": sorted(self.session.registry.caps),
            "connections": self.bridge.connections,
            "tool_calls": self.bridge.calls,
            "requests": self._stats["requests"],
            "refused": self._stats["refused"],
            "started_at": _dt.datetime.fromtimestamp(self.started_at, _dt.UTC).isoformat(),
            "uptime_s": round(time.time() - self.started_at, 1) if self.running else 0.0,
        }

    def stop(self, timeout: float = 10.0) -> None:
        """Shut the server down, close client streams and release the port. Idempotent."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        loop = self.bridge.loop
        if loop is not None and self._thread.is_alive() and threading.current_thread() is not self._thread:
            try:
                asyncio.run_coroutine_threadsafe(self.bridge.close_streams(), loop).result(timeout / 4)
            except Exception:  # noqa: BLE001 - the loop is gone or slow; shut down regardless
                pass
        self._server.should_exit = True
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout / 2)
            if self._thread.is_alive():
                self._server.force_exit = True
                self._thread.join(timeout / 2)
        self._sock.close()
        self._cancel_on_close()
        self.bridge.release()

    def __enter__(self) -> McpHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<ocnb.mcp server {self.url} {state}, auth {'on' if self.token else 'OFF'}>"


def serve(
    session: Session | None = None,
    port: int = 0,
    *,
    auth: bool = True,
    host: str = "127.0.0.1",
    allowed_hosts: Iterable[str] = (),
    allowed_origins: Iterable[str] = (),
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    quiet: bool = False,
    startup_timeout: float = 15.0,
    discovery: bool = False,
    all_tools: bool = False,
    token: str | None = None,
    token_file: str | os.PathLike[str] | None = None,
    allow_remote: bool = False,
) -> McpHandle:
    """Serve ``session``'s tools over streamable HTTP at ``http://host:port/mcp`` from a daemon thread.

    Args:
        session: the session to drive (default: the notebook's shared :func:`ocnb.session`).
        port: TCP port; 0 picks a free one.
        auth: require the bearer token generated now. ``False`` warns (anyone on the host may drive
            the browser).
        host: bind address; loopback by default. Anything else is refused unless ``allow_remote``.
        allow_remote: bind a non-loopback ``host`` anyway (warns): every machine that can reach the
            address and holds the token can drive the browser, read its pages and the journal.
        allowed_hosts / allowed_origins: extra ``Host`` values / browser origins to accept.
        max_body_bytes: larger request bodies are refused with 413.
        quiet: do not print the banner (URL, token, client configuration).
        discovery: discovery mode — ``tools/list`` starts with ``discover_capabilities`` only and
            grows with what discovery finds, so an agent starts with a few hundred tokens of tools.
        all_tools: list every tool in ``tools/list``. By default it lists the essentials
            (:data:`ocnb.mcp.listing.ESSENTIALS`) and ``discover_capabilities``, whose results add the
            tools they found; every tool is callable either way.
        token: the bearer token to require (default: ``$OCNB_MCP_TOKEN`` if set, else a new one).
        token_file: keep the token in this file: reused when it exists, else created with mode 0600
            (see :func:`load_or_create_token`), so client configurations survive a restart.

    Raises:
        McpTokenError: the given token, ``$OCNB_MCP_TOKEN`` or the token file's content is unusable.
        McpRemoteBindError: ``host`` is not a loopback address and ``allow_remote`` is false.
    """
    if session is None:
        from ..session import session as default_session

        session = default_session()
    if not is_loopback(host):
        if not allow_remote:
            raise McpRemoteBindError(remote_bind_refusal(host))
        warnings.warn(
            f"the MCP server binds to {host!r}, not loopback: other machines can reach it"
            + ("" if auth else " and, with auth off, drive the browser"),
            McpSecurityWarning,
            stacklevel=2,
        )
    if not auth:
        warnings.warn(
            "MCP auth is OFF: any local process (or web page, via a permitted origin) can drive the browser",
            McpSecurityWarning,
            stacklevel=2,
        )
    if auth:
        where = "token="
        if token is None and session.settings.mcp_token:
            token, where = session.settings.mcp_token, f"${TOKEN_ENV}"
        if token_file is not None:
            token = load_or_create_token(token_file, token)
        elif token is not None:
            _check_token(token, where)
        else:
            token = secrets.token_urlsafe(32)
    else:
        token = None
    sock = _bind(host, port)
    bound_port = int(sock.getsockname()[1])
    url_host = _host_for_url(host if host not in ("0.0.0.0", "::") else "127.0.0.1")
    url = f"http://{url_host}:{bound_port}{MCP_PATH}"

    names = _host_names(host) | set(allowed_hosts)
    hosts = {f"{n}:{bound_port}" for n in names}
    origins = {f"http://{n}:{bound_port}" for n in names} | set(allowed_origins)
    if discovery and all_tools:
        raise ValueError("discovery and all_tools contradict each other")
    bridge = McpBridge(session, listing="discovery" if discovery else "all" if all_tools else "essentials")
    app = bridge.server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=host,
        max_request_body_size=max_body_bytes,
        transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=sorted(hosts), allowed_origins=sorted(origins)
        ),
    )
    _silence_cancelled_requests(bridge.server)
    stats = {"requests": 0, "refused": 0}
    guarded = _Guard(app, token=token, hosts=hosts, origins=origins, stats=stats, max_body_bytes=max_body_bytes)
    config = uvicorn.Config(
        guarded,
        log_level="warning",
        access_log=False,
        lifespan="on",
        loop="asyncio",
        http="auto",  # httptools when installed (faster), else h11
        ws="none",
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name=f"ocnb-mcp-{bound_port}", daemon=True)
    handle = McpHandle(
        url=url,
        token=token,
        host=host,
        port=bound_port,
        bridge=bridge,
        _server=server,
        _thread=thread,
        _sock=sock,
        _stats=stats,
        token_file=Path(token_file).expanduser().resolve() if token_file is not None and auth else None,
    )
    thread.start()
    deadline = time.monotonic() + startup_timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            handle.stop()
            raise RuntimeError(f"the MCP server on {url} did not start")
        time.sleep(0.01)
    handle._cancel_on_close = session.on_close(handle.stop)  # the server stops when its session closes
    if not quiet:  # a notebook saves its output: there the banner names the token, never shows it
        print(handle.safe_banner() if _output_is_saved() else handle.banner(), file=sys.stdout, flush=True)
    return handle


def _output_is_saved() -> bool:
    """True in a Jupyter kernel, whose cell output is saved in the ``.ipynb``."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None  # type: ignore[attr-defined]
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"
