"""The HTTP server's front door: Host, Origin, OAuth discovery, the bearer token, then the message's shape.

Every request needs ``Authorization: Bearer <token>`` (401 otherwise); ``Host`` must name this server
and a browser ``Origin`` must be this server's own (DNS-rebinding protection: 421/403). OAuth discovery
(``/.well-known/*``, and the ``/authorize``, ``/token``, ``/register`` fallbacks) answers 404 with or
without the token: there is no authorization server, so an OAuth-capable client finds nothing to
register with and asks for the bearer token. A POST body that is JSON but no JSON-RPC message gets a
short -32600 (:func:`ocnb.mcp.sdk_seams.check_message`).
"""

from __future__ import annotations

import secrets

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from .sdk_seams import check_message

__all__ = ["DEFAULT_MAX_BODY_BYTES", "MCP_PATH", "Guard"]

MCP_PATH = "/mcp"
DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024


#: OAuth endpoints a client looks for on a server without authorization metadata (MCP 2025-03-26's
#: fallbacks): answered 404 like ``/.well-known/*``, so nothing suggests a registration could work.
_OAUTH_FALLBACKS = frozenset({"/authorize", "/token", "/register"})


def _oauth_discovery(path: str) -> bool:
    """Whether ``path`` is where an OAuth-capable client looks for authorization metadata
    (``/.well-known/oauth-protected-resource``, ``/.well-known/oauth-authorization-server``,
    ``/.well-known/openid-configuration``, with or without a path suffix, or in front of one)."""
    return "/.well-known/" in path or path.rstrip("/") in _OAUTH_FALLBACKS


class Guard:
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
            await check_message(self.app, self.max_body_bytes, scope, receive, send)
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
