"""The MCP server over streamable HTTP, on uvicorn in a daemon thread (for a notebook kernel).

``handle = ocnb.mcp.serve(session)`` starts it on ``127.0.0.1`` (a free port by default) and prints the
URL, the bearer token generated at start and ready-to-paste client configuration. Agent calls run on
the session's browser thread, so they proceed while a notebook cell is busy and are serialized with
the cell's own calls. ``handle.status()`` reports, ``handle.stop()`` shuts down and frees the port.

The token is new at every start unless one is given: ``token=`` (or the ``OCNB_MCP_TOKEN``
environment variable), or ``token_file=PATH`` — the file's token is reused when the file exists, else
a new one is written there (mode 0600, atomically), so a saved client configuration survives restarts
(see :func:`load_or_create_token`).

Security (:mod:`ocnb.mcp.guard`): every request needs ``Authorization: Bearer <token>`` (401
otherwise); ``Host`` must name this server and a browser ``Origin`` must be this server's own
(DNS-rebinding protection: 421/403); bodies over ``max_body_bytes`` get 413. OAuth discovery
(``/.well-known/*``, and the ``/authorize``, ``/token``, ``/register`` fallbacks) answers 404 with or
without the token: there is no authorization server, so an OAuth-capable client finds nothing to
register with and asks for the bearer token. A request the client cancelled gets no response: its SSE
stream ends without one. A non-loopback bind address is refused (:class:`McpRemoteBindError`) unless
``allow_remote=True``; that, or ``auth=False``, is an explicit choice that emits
:class:`McpSecurityWarning`.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import secrets
import socket
import sys
import threading
import time
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings

from ..display import in_jupyter_kernel
from ..files import atomic_write_text
from .guard import DEFAULT_MAX_BODY_BYTES, MCP_PATH, Guard
from .handle import McpHandle, tools_line
from .listing import Listing
from .sdk_seams import silence_cancelled_requests
from .server import McpBridge

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
    "tools_line",
]

log = logging.getLogger("ocnb.mcp")

_LOOPBACK_NAMES = {"localhost"}


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


def check_token(token: str, where: str) -> str:
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
        check_token(token, f"the given token (or ${TOKEN_ENV})")
    for _ in range(2):
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise McpTokenError(f"cannot read the MCP token file {path}: {exc}") from exc
        else:
            found = check_token(text.strip(), f"the token file {path}")
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
    isolated: bool = False,
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
        isolated: give each client session a browser context of its own in ``session``'s browser
            (own tabs, cookies and storage; the session's origin policy; closed when the client
            disconnects) instead of driving ``session``'s own tabs (:mod:`ocnb.mcp.clients`).

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
            check_token(token, where)
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
    listing: Listing = "discovery" if discovery else "all" if all_tools else "essentials"
    bridge = McpBridge(session, listing=listing, isolated=isolated)
    app = bridge.server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=host,
        max_request_body_size=max_body_bytes,
        transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=sorted(hosts), allowed_origins=sorted(origins)
        ),
    )
    silence_cancelled_requests(bridge.server)
    stats = {"requests": 0, "refused": 0}
    guarded = Guard(app, token=token, hosts=hosts, origins=origins, stats=stats, max_body_bytes=max_body_bytes)
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
    handle.stop_with_session()
    if not quiet:  # a notebook saves its output: there the banner names the token, never shows it
        print(handle.safe_banner() if in_jupyter_kernel() else handle.banner(), file=sys.stdout, flush=True)
    return handle
