"""Where ocnb leans on the ``mcp`` SDK beyond its public API, and the JSON-RPC strictness layer.

Everything here was written against **mcp 2.3.0** (``pyproject.toml``: ``mcp>=2.3,<3``;
``scripts/constraints.txt`` pins ``mcp==2.3.0``). It is the only module of :mod:`ocnb.mcp` that reads a
private name of the SDK (a module, attribute or method whose name starts with ``_``);
``tests/mcp/test_sdk_seams.py`` holds that rule (an AST scan of ``ocnb/mcp/*.py``) and, for each seam
below, a test that fails loudly when the SDK drops or reshapes the name, and where it can, one showing
through the SDK itself that the correction is still needed.

The seams (what each corrects, and the test that notices an SDK change):

1. :func:`context_streams` — ``mcp.shared._context_streams.create_context_streams``. Between the stdio
   transport and ``Server.run`` ocnb puts :func:`strict_messages`; the stream it hands the server must
   be the SDK's context-carrying kind (the dispatcher reads its ``last_context``), which only the
   private module makes. Test: ``test_context_streams_carry_the_senders_context``.
2. :func:`connection_of` — ``ServerSession._connection``. A handler's ``ctx.session`` does not expose
   the client's ``Connection``, the one object that lives as long as the client does: ocnb keys
   ``logging/setLevel`` levels and ``notifications/tools/list_changed`` on it and sends on it outside
   a request (``notify``, ``send_tool_list_changed``, ``exit_stack``, ``has_standalone_channel``).
   Tests: ``test_a_handlers_session_holds_its_connection`` (shape, through the official client), and
   in behaviour ``test_console_errors_arrive_as_log_messages_at_the_set_level``
   (test_protocol_features.py), ``test_tools_list_changed_reaches_both_protocol_eras`` (test_http.py).
3. :func:`http_transports` — ``StreamableHTTPSessionManager._server_instances``. The SDK has no public
   way to end its HTTP sessions short of stopping the whole manager's task group, so a server stop
   would wait for long-lived SSE streams to time out. Tests:
   ``test_the_session_manager_keeps_its_transports_by_session_id``, and in behaviour
   ``test_stop_ends_open_client_streams_promptly`` (test_http.py).
4. :func:`silence_cancelled_requests` — ``StreamableHTTPSessionManager._admit_session``,
   ``StreamableHTTPServerTransport._terminate_unanswered_request`` and ``._request_streams``. The
   spec says a cancelled request SHOULD get no response; the SDK's 2025-era HTTP transport instead
   ends its SSE stream with a made-up ``-32800 Request cancelled``. Tests:
   ``test_the_sdk_still_answers_a_cancelled_request_with_32800`` (the correction is still needed),
   ``test_silencing_wraps_each_admitted_transport`` (shape), and in behaviour
   ``test_a_cancelled_request_gets_no_reply_over_http`` (test_spec_details.py).

The strictness layer (no private name, but SDK behaviour it corrects, checked by the same tests):
the SDK's JSON parser (``mcp_types.jsonrpc_message_adapter``) takes ``NaN``/``±Infinity``, and answers
a message that is JSON but no JSON-RPC message with its validator's whole report as ``-32602`` over
HTTP, or not at all over stdio. :func:`refusal` reads the SDK parser's pydantic errors (their shape is
part of the seam: ``test_refusal_reads_the_sdk_parsers_errors``) into a short ``-32600``/``-32700``;
:func:`strict_messages` (stdio), :func:`check_message` (HTTP) and :func:`refuse_nonfinite` (every
transport) apply it. Behaviour: ``test_stdio_answers_lines_that_are_not_messages`` and
``test_not_a_message_is_invalid_request_with_a_short_message`` (test_spec_details.py),
``test_nonfinite_numbers_are_a_parse_error`` (test_strict_json_http.py),
``test_stdio_refuses_nan_and_infinity_as_parse_errors`` (tests/fuzz/test_strict_edges.py).
"""

from __future__ import annotations

import functools
import json
import logging
from typing import Any

import mcp_types as types
from mcp.shared._context_streams import create_context_streams  # seam 1
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from pydantic import ValidationError
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..jsonsafe import has_nonfinite

__all__ = [
    "BATCH_MESSAGE",
    "NONFINITE_MESSAGE",
    "NO_METHOD_MESSAGE",
    "NOT_OBJECT_MESSAGE",
    "PARSE_MESSAGE",
    "SDK_VERSION",
    "UNPARSED_MESSAGE",
    "check_message",
    "connection_of",
    "context_streams",
    "http_transports",
    "nonstrict",
    "refusal",
    "refuse_nonfinite",
    "silence_cancelled_requests",
    "strict_messages",
]

log = logging.getLogger("ocnb.mcp")

#: The SDK version these seams were written against and last checked with.
SDK_VERSION = "2.3.0"


# -- the SDK's private names ---------------------------------------------------------------------
def context_streams() -> tuple[Any, Any]:
    """A send/receive pair of the SDK's context-carrying memory streams, for ``Server.run`` to read.

    Seam 1: ``mcp.shared._context_streams`` (private module). The SDK's stdio transport makes its
    streams with it, and its dispatcher restores the sender's ``contextvars`` from the receive side's
    ``last_context``; a plain anyio stream would run every handler in the reader's context.
    """
    return create_context_streams[SessionMessage | Exception](0)


def connection_of(peer: Any) -> Any | None:
    """The ``Connection`` behind a handler's ``ctx.session`` (a ``ServerSession``), or None.

    Seam 2: ``ServerSession._connection`` (private attribute). A ``ServerSession`` is built per request;
    its ``Connection`` lives as long as the client and is the only handle that can send to the client
    outside a request (``notify``, ``send_tool_list_changed``) and say when the client goes
    (``exit_stack``). None when an SDK no longer has it: then no log messages and no ``list_changed``
    for handshake-era clients, which ``tests/mcp/test_sdk_seams.py`` notices.
    """
    return getattr(peer, "_connection", None)


def http_transports(server: Any) -> list[Any]:
    """The live streamable-HTTP transports (one per client session) of a low-level ``Server``.

    Seam 3: ``StreamableHTTPSessionManager._server_instances`` (private attribute; the manager itself
    is the public ``Server.session_manager``). Empty for a server never served over HTTP (stdio).
    """
    try:
        manager = server.session_manager
    except RuntimeError:  # never served over HTTP
        return []
    instances = getattr(manager, "_server_instances", None)
    if not isinstance(instances, dict):
        log.warning("cannot end open MCP HTTP sessions with this mcp SDK (expected %s)", SDK_VERSION)
        return []
    return list(instances.values())


def silence_cancelled_requests(server: Any) -> bool:
    """Make the 2025-era streamable HTTP transport send nothing for a request the client cancelled;
    True when done (False: this SDK's layout is not the one this was written for, and a cancelled
    request gets the SDK's ``-32800``).

    Seam 4: ``StreamableHTTPSessionManager._admit_session`` is wrapped, and on each new session's
    transport ``_terminate_unanswered_request`` is replaced by :func:`_end_unanswered`, which reads
    ``_request_streams``. The spec's cancellation utility: the receiver of ``notifications/cancelled``
    SHOULD NOT send a response for the request. The SDK's dispatcher writes none, but its 2025-era
    HTTP transport then ends the request's SSE stream with an error it makes up (-32800, "Request
    cancelled"); here the stream just ends (what was queued for the request still goes out first).
    Sessions answering with JSON bodies (not ocnb's) keep the SDK's way: a body must hold a response.
    """
    try:
        manager = server.session_manager
    except RuntimeError:  # call after streamable_http_app()
        manager = None
    admit = getattr(manager, "_admit_session", None)
    if manager is None or admit is None:
        log.warning("cannot keep cancelled MCP requests unanswered with this mcp SDK (expected %s)", SDK_VERSION)
        return False

    def admitting(requestor: Any) -> Any:
        transport = admit(requestor)
        if transport is not None and not transport.is_json_response_enabled:
            transport._terminate_unanswered_request = functools.partial(_end_unanswered, transport)
        return transport

    manager._admit_session = admitting
    return True


async def _end_unanswered(transport: Any, request_id: Any) -> None:
    """End the SSE stream of a cancelled request without a JSON-RPC message for it (seam 4)."""
    streams = getattr(transport, "_request_streams", {}).get(str(request_id))
    if streams is not None:
        streams[0].close()  # the stream's writer sends what is queued, then the HTTP response ends


# -- strict JSON-RPC -----------------------------------------------------------------------------
NONFINITE_MESSAGE = "Parse error: NaN and Infinity are not JSON numbers (RFC 8259)"
UNPARSED_MESSAGE = "Parse error: not valid JSON text (e.g. a lone surrogate escape such as \\ud800)"
PARSE_MESSAGE = "Parse error: not valid JSON text"
BATCH_MESSAGE = "Invalid Request: JSON-RPC batches are not supported; send one message at a time"
NO_METHOD_MESSAGE = "Invalid Request: no method"
NOT_OBJECT_MESSAGE = "Invalid Request: a JSON-RPC message is a JSON object"
_MISSING = object()


def nonstrict(message: Any) -> bool:
    """Whether a parsed JSON-RPC message holds NaN or ±Infinity (which strict JSON cannot spell)."""
    for attr in ("params", "result"):
        if has_nonfinite(getattr(message, attr, None)):
            return True
    error = getattr(message, "error", None)
    return error is not None and has_nonfinite(getattr(error, "data", None))


def _first_error(exc: BaseException) -> Any:
    """The first entry of a pydantic error's ``errors()``, or None for another exception."""
    errors = getattr(exc, "errors", None)
    try:
        return errors()[0] if callable(errors) else None
    except Exception:  # noqa: BLE001 - not a pydantic error
        return None


def _unparsed_request_id(exc: BaseException) -> int | str | None:
    """The id of a request the SDK's parser refused as invalid JSON (e.g. a lone surrogate escape,
    which Python's own parser reads), so that it can be answered rather than left waiting."""
    first = _first_error(exc)
    if not isinstance(first, dict) or first.get("type") != "json_invalid" or not isinstance(first.get("input"), str):
        return None
    try:
        message = json.loads(first["input"])
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return None
    rid = message.get("id")
    return rid if isinstance(rid, int | str) and not isinstance(rid, bool) else None


def _parsed_value(errors: list[dict[str, Any]]) -> Any:
    """The whole parsed message behind a union validation failure of the SDK's JSON-RPC parser: the
    input of a per-branch type error (not an object) or of a missing field (an object)."""
    for error in errors:
        loc = error.get("loc") or ()
        if (error.get("type") == "model_type" and len(loc) == 1) or (
            error.get("type") == "missing" and len(loc) == 2 and isinstance(error.get("input"), dict)
        ):
            return error.get("input")
    return _MISSING


def refusal(exc: BaseException) -> types.JSONRPCError | None:
    """The JSON-RPC error answering a message the SDK's parser refused (``exc``, its pydantic error), or
    None when ``exc`` is not such a refusal.

    Not JSON: parse error (-32700), with the request's id when Python can still read one (a lone
    surrogate escape), else ``null``. JSON but not a message: invalid request (-32600) with a short
    message — a batch, an object without ``method``, a field of the wrong type; the id is echoed only
    for a request (an object with a ``method``), as a broken response's id belongs to the server.
    """
    get = getattr(exc, "errors", None)
    try:
        errors = get() if callable(get) else None
    except Exception:  # noqa: BLE001 - not a pydantic error
        return None
    if not isinstance(errors, list) or not errors or not all(isinstance(e, dict) for e in errors):
        return None

    def reply(rid: Any, code: int, message: str) -> types.JSONRPCError:
        rid = rid if isinstance(rid, int | str) and not isinstance(rid, bool) else None
        return types.JSONRPCError(jsonrpc="2.0", id=rid, error=types.ErrorData(code=code, message=message))

    if errors[0].get("type") == "json_invalid":
        rid = _unparsed_request_id(exc)
        return reply(rid, types.PARSE_ERROR, UNPARSED_MESSAGE if rid is not None else PARSE_MESSAGE)
    value = _parsed_value(errors)
    if value is _MISSING:
        return reply(None, types.INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message")
    if isinstance(value, list):
        return reply(None, types.INVALID_REQUEST, BATCH_MESSAGE)
    if not isinstance(value, dict):
        return reply(None, types.INVALID_REQUEST, NOT_OBJECT_MESSAGE)
    if "method" not in value:
        if "result" in value or "error" in value:
            return reply(None, types.INVALID_REQUEST, "Invalid Request: not a valid JSON-RPC 2.0 response")
        return reply(None, types.INVALID_REQUEST, NO_METHOD_MESSAGE)
    branch = "JSONRPCRequest" if "id" in value else "JSONRPCNotification"
    first = next((e for e in errors if tuple(e.get("loc") or ())[:1] == (branch,)), errors[0])
    field = ".".join(str(part) for part in tuple(first.get("loc") or ())[1:]) or "message"
    return reply(value.get("id"), types.INVALID_REQUEST, f"Invalid Request: {field}: {first.get('msg', 'invalid')}")


async def refuse_nonfinite(ctx: Any, call_next: Any) -> Any:
    """Middleware, for every transport (stdio, HTTP): a request whose params hold NaN or ±Infinity is
    a parse error (-32700); the SDK's JSON parsers take them, strict JSON does not."""
    if has_nonfinite(getattr(ctx, "params", None)):
        raise MCPError(code=types.PARSE_ERROR, message=NONFINITE_MESSAGE)
    return await call_next(ctx)


def _blank_line(exc: Exception) -> bool:
    """Whether the SDK refused an empty (whitespace-only) stdin line."""
    first = _first_error(exc)
    return isinstance(first, dict) and isinstance(first.get("input"), str) and not first["input"].strip()


async def strict_messages(source: Any, sink: Any, write_stream: Any) -> None:
    """Pass the stdio transport's messages on; answer a request holding NaN/±Infinity with a parse
    error (-32700, with its id so the client is not left waiting) and drop any other such message. A
    line that is not JSON is answered with a parse error (-32700; with the request's id when one can
    still be read, as for a lone surrogate escape, else ``null``), one that is JSON but not a JSON-RPC
    message (a batch, no ``method``) with an invalid request (-32600) — see :func:`refusal`. Blank
    lines are skipped."""
    async with sink:
        async for item in source:
            if isinstance(item, Exception) and _blank_line(item):
                continue  # not a message: nothing to answer
            if isinstance(item, Exception) and (reply := refusal(item)) is not None:
                log.warning("refused a message that is not JSON-RPC: %s", reply.error.message)
                await write_stream.send(SessionMessage(reply))
                continue
            if isinstance(item, SessionMessage) and nonstrict(item.message):
                message = item.message
                log.warning("refused a message holding NaN or Infinity (not JSON)")
                if isinstance(message, types.JSONRPCRequest):
                    error = types.ErrorData(code=types.PARSE_ERROR, message=NONFINITE_MESSAGE)
                    reply = types.JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
                    await write_stream.send(SessionMessage(reply))
                continue
            await sink.send(item)


async def check_message(app: ASGIApp, limit: int, scope: Scope, receive: Receive, send: Send) -> None:
    """Pass an HTTP POST to ``app`` unless its body is JSON but not one JSON-RPC message (a batch, an
    object without ``method``…): that is answered here, 400 with a short invalid-request error (-32600),
    where the SDK would answer -32602 with its validator's whole report. Bodies over ``limit``, bodies
    that are not JSON and non-JSON content types are the SDK's to answer (413, -32700, 400)."""
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
