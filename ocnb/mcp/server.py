"""The MCP server: a thin adapter from the official ``mcp`` SDK (v2, low-level ``Server``) to dispatch.

``tools/list`` is the session's :class:`~ocnb.registry.Registry`, ``tools/call`` runs
:func:`~ocnb.dispatch.dispatch_async` with ``source="mcp"`` on the session's browser thread. There is
no tool-specific code here: a tool added to the registry is served as it is.

- Results: the :class:`~ocnb.results.ToolResult` as JSON text content, the text a page controls fenced
  in a second block between markers carrying the session's random token (:mod:`ocnb.audit.fence`); a
  result whose ``data`` names a PNG/JPEG file (``path``) also carries that image (screenshots).
- Failures: ``isError: true``, the JSON text holding the stable error code — whatever the arguments.
  The one exception is a tool the registry does not have: the spec makes that a protocol error, so it
  is JSON-RPC ``-32602`` ("Unknown tool: NAME", ``data`` holding ocnb's ``UNKNOWN_TOOL`` error), and
  the journal still records the attempt.
- Strict JSON: a request whose JSON holds ``NaN`` or ``±Infinity`` (which JSON does not have, though
  the SDK's parsers take them) is answered with a JSON-RPC parse error (-32700), over stdio and HTTP;
  the JSON text of results is strict too.
- Malformed traffic is answered, never dropped: a stdio line that is not JSON gets -32700 (id ``null``
  unless a request's id can still be read); JSON that is no JSON-RPC message — a batch, an object
  without ``method`` — gets -32600 with a short message, over stdio and HTTP (:func:`refusal`).
- Annotations: from the tool's ``side_effects`` flag, and only where they differ from the spec's
  defaults (``readOnlyHint: false``, ``destructiveHint: true``): a read-only tool says
  ``readOnlyHint: true``; a tool with side effects sends no annotations, which a client reads as
  "may change things, may be destructive".
- Live tool list: when the registry changes, handshake-era clients (2025 protocol versions) get
  ``notifications/tools/list_changed`` on their connection; 2026-era clients get the same event on
  their ``subscriptions/listen`` stream.
- What ``tools/list`` shows (:mod:`ocnb.mcp.listing`): by default the essentials and the tools that
  find other tools (those whose :attr:`~ocnb.registry.ToolDef.reveals` is set), plus, per turn, the
  tools the latest discovery result named; every tool with ``--all-tools``; only the finders at first
  in discovery mode. Every tool of the registry is callable whatever is listed.
- Cancellation: a client's ``notifications/cancelled`` (or its time-out, or the server shutting down)
  cancels the call on the browser thread; dispatch journals it as ``CANCELLED``. The cancelled request
  gets no response, over stdio and HTTP (whose stream for it just ends; see :mod:`ocnb.mcp.http`).
- Progress: a request with a ``progressToken`` gets ``notifications/progress`` from long tools
  (``wait_for`` every second, ``execute_plan`` and ``oc_skill_replay`` per step), in order.
- Logging: ``logging/setLevel`` turns on ``notifications/message`` for that client (none before):
  the page's console errors and warnings, uncaught page errors, crashes and failed navigations,
  secrets masked, each text from the page fenced like a result's. Handshake-era protocol versions
  only (2026 drops connection-wide logging).
- Resources: the journal, traces, screenshots, evidence bundles, skills and the capability map
  (:mod:`ocnb.mcp.resources`); a result naming files under ``OCNB_HOME`` carries a ``resource_link``
  for each, after its JSON text.
- Hand-off: a ``NEEDS_HUMAN`` result, for a client that declared ``elicitation``, becomes an
  ``elicitation/create`` asking the person to pick among the candidates; the chosen ref resumes the call
  through dispatch (journaled, like the widget's path). Declined or cancelled: nothing acts, and the
  client gets the ``NEEDS_HUMAN`` result as it is.
- Approval (:mod:`ocnb.audit.approval`): an ``APPROVAL_REQUIRED`` result, for a client that declared
  ``elicitation``, becomes an ``elicitation/create`` asking the person to approve the action (tool,
  element, page, intent, reason); the answer settles the request and the call runs again through
  dispatch: approved, it acts; declined or cancelled, it ends ``APPROVAL_DENIED`` (each journaled with
  ``approval: … by mcp``). A client without elicitation gets ``APPROVAL_REQUIRED``: nothing acts.

The server's own event loop never waits on the browser: a call is submitted to the browser thread and
awaited through :func:`asyncio.wrap_future`, so a busy notebook cell delays an agent's call (the
session serializes calls) without blocking the server.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared._context_streams import create_context_streams
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..audit.fence import FENCE_NOTE, Fence
from ..calls import ProgressFn
from ..dispatch import dispatch_async
from ..errors import OcnbError
from ..jsonsafe import has_nonfinite
from ..registry import ToolDef, capability_groups
from ..results import ToolError, ToolResult
from . import resources
from .listing import LISTINGS, Listing, finders, listed

if TYPE_CHECKING:
    from ..session import Session

__all__ = [
    "MAX_IMAGE_BYTES",
    "McpBridge",
    "discovery_tools",
    "refusal",
    "run_stdio",
    "to_call_result",
    "tool_to_mcp",
]

log = logging.getLogger("ocnb.mcp")

#: Images larger than this are not inlined (the JSON text still gives their path).
MAX_IMAGE_BYTES = 8 * 1024 * 1024
_IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}

INSTRUCTIONS = (
    "ocnb drives one real Chromium that a person also sees from a Jupyter notebook. "
    "Every tool result is JSON: {ok, tool, data} or {ok: false, error: {code, message}}. "
    "Every call is recorded in the session's journal. " + FENCE_NOTE
)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("ocnb")
    except Exception:  # noqa: BLE001 - a source checkout without metadata
        return "0"


def tool_to_mcp(tooldef: ToolDef) -> types.Tool:
    """A registry tool as MCP ``tools/list`` shows it, with hints from its side-effect flag.

    Only hints that differ from the MCP spec's defaults are sent: ``readOnlyHint: true`` for a tool
    without side effects, nothing for one with side effects (the defaults, ``readOnlyHint: false`` and
    ``destructiveHint: true``, say exactly that). Spelling the defaults out would cost about 14 tokens
    per acting tool, and every token of ``tools/list`` sits in an agent's context.
    """
    spec = tooldef.to_mcp()
    return types.Tool(
        name=spec["name"],
        description=spec["description"],
        input_schema=spec["inputSchema"],
        annotations=None if tooldef.side_effects else types.ToolAnnotations(read_only_hint=True),
    )


def _images(data: Any) -> list[types.ImageContent]:
    """Image content for a result whose data names an image file (``{"path": "...png"}``)."""
    if not isinstance(data, dict) or not isinstance(data.get("path"), str):
        return []
    path = Path(data["path"])
    mime = _IMAGE_TYPES.get(path.suffix.lower())
    if mime is None:
        return []
    try:
        if not path.is_file() or path.stat().st_size > MAX_IMAGE_BYTES:
            return []
        raw = path.read_bytes()
    except OSError:
        return []
    return [types.ImageContent(data=base64.b64encode(raw).decode("ascii"), mime_type=mime)]


def to_call_result(result: ToolResult, home: Path | None = None, fence: Fence | None = None) -> types.CallToolResult:
    """A ToolResult as an MCP ``CallToolResult``: text (+ image), ``isError`` on failure.

    The text is :meth:`Fence.blocks <ocnb.audit.fence.Fence.blocks>`: the tool's own words as strict
    JSON, then — when the result holds text a page controls (what its tool declares in ``page_text``) —
    that text between the session's ``[page TOKEN]`` markers, in a second block (a page outline as
    plain text, unescaped: JSON-escaping its quotes and newlines would cost the agent tokens).
    """
    fence = fence or Fence()
    content: list[Any] = [types.TextContent(text=block) for block in fence.blocks(result)]
    if result.ok:
        content.extend(_images(result.data))
        if home is not None:
            content.extend(resources.links_for(home, result.data))
    return types.CallToolResult(content=content, is_error=not result.ok)


class _OcnbServer(Server[Any]):
    """The SDK's low-level server, advertising ``tools.listChanged`` to handshake-era clients."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True), experimental_capabilities, extensions
        )


#: MCP log levels, least severe first (RFC 5424).
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_CONSOLE_LEVELS = {"error": "error", "pageerror": "error", "assert": "error", "warning": "warning"}


def _event_level(kind: str, body: dict[str, Any]) -> str | None:
    """The log level of a session event, or None for events that are not worth a message."""
    if kind == "console":
        return _CONSOLE_LEVELS.get(str(body.get("type")), "debug")
    if kind in ("page_crash", "browser_crashed"):
        return "critical"
    if kind in ("dialog", "download", "browser_relaunched"):
        return "info"
    return None


def _candidate_title(candidate: dict[str, Any]) -> str:
    """How a person sees a candidate element: role, name and ref."""
    role = candidate.get("role") or candidate.get("tag") or "element"
    name = candidate.get("name") or candidate.get("label") or candidate.get("text") or ""
    return f"{role} {str(name)[:80]!r} ({candidate['ref']})" if name else f"{role} ({candidate['ref']})"


def approval_message(request: dict[str, Any]) -> str:
    """What the person is asked: the action, its element, the page, the intent and why it asks."""
    element = " ".join(str(request[k]) for k in ("role", "name") if request.get(k))
    lines = [f"Approve {request.get('tool')}" + (f" on {element[:120]}" if element else "") + "?"]
    if request.get("url"):
        lines.append(f"page: {str(request['url'])[:200]}")
    if request.get("intent"):
        lines.append(f"intent: {request['intent']}")
    lines.append(f"why asked: {request.get('reason')}")
    return "\n".join(lines)


def _progress_token(ctx: Any) -> Any:
    meta = getattr(ctx, "meta", None)
    if isinstance(meta, dict):
        return meta.get("progress_token", meta.get("progressToken"))
    return getattr(meta, "progress_token", None)


class _Progress:
    """One call's ``notifications/progress``, sent in order from the browser thread's reports."""

    def __init__(self, peer: Any) -> None:
        self.peer = peer
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue[tuple[float, float | None, str | None] | None] = asyncio.Queue()
        self.task = self.loop.create_task(self._pump())
        self.last = -1.0

    def report(self, done: float, total: float | None, message: str | None) -> None:
        """The :data:`~ocnb.calls.ProgressFn` the call gets (any thread)."""
        with contextlib.suppress(RuntimeError):  # the loop is closed
            self.loop.call_soon_threadsafe(self.queue.put_nowait, (done, total, message))

    async def _pump(self) -> None:
        while (item := await self.queue.get()) is not None:
            await self._send(*item)

    async def _send(self, done: float, total: float | None, message: str | None) -> None:
        if done <= self.last:  # the spec wants progress to increase
            return
        self.last = done
        try:
            await self.peer.report_progress(done, total, message)
        except Exception:  # noqa: BLE001 - progress is a courtesy
            log.debug("could not send progress", exc_info=True)

    async def close(self) -> None:
        """Send what is queued (before the call's result goes out), then stop; a cancelled call sends no more."""
        self.queue.put_nowait(None)
        try:
            await asyncio.wait_for(self.task, 5)
        except BaseException:  # noqa: BLE001 - cancelled (the call was), or a client that stopped reading
            self.task.cancel()


def _unknown_tool(name: str, result: ToolResult | None) -> MCPError:
    """The JSON-RPC error for a call to a tool the registry does not have: -32602 (invalid params), as
    the spec wants ("Protocol Errors: Unknown tools"); ``data`` is ocnb's error (code ``UNKNOWN_TOOL``,
    a message naming where the list is)."""
    shown = name.encode("utf-8", "backslashreplace").decode("utf-8")
    data = result.error.to_dict() if result is not None and result.error is not None else None
    return MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {shown}", data=data)


def discovery_tools(tools: Iterable[ToolDef]) -> list[ToolDef]:
    """The tools discovery mode starts with: those that find other tools (``ToolDef.reveals``)."""
    return finders(tools)


class McpBridge:
    """One MCP server over one :class:`~ocnb.session.Session` (serve it over stdio or HTTP)."""

    def __init__(
        self, session: Session, *, name: str = "ocnb", discovery: bool = False, listing: Listing | None = None
    ) -> None:
        self.session = session
        #: What ``tools/list`` shows (:mod:`ocnb.mcp.listing`): the essentials by default, every tool,
        #: or discovery mode's start (``discovery=True``); then, unless every tool is listed, the
        #: tools the latest discovery result named (filtered per turn; announced with ``list_changed``).
        self.listing: Listing = listing or ("discovery" if discovery else "essentials")
        if self.listing not in LISTINGS:
            raise ValueError(f"listing must be one of {', '.join(LISTINGS)}, not {self.listing!r}")
        self.discovery = self.listing == "discovery"
        self.discovered: set[str] = set()
        #: The session's groups before discovery mode turned every group on; :meth:`release` puts
        #: them back when this server stops.
        self._caps_before: tuple[str, ...] | None = None
        if self.discovery:  # every tool available, only the ones a turn needs in context
            self._caps_before = session.settings.caps
            session.configure(caps=capability_groups())
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        self.loop: asyncio.AbstractEventLoop | None = None
        #: Handshake-era connections with a back-channel (they get list_changed directly).
        self._connections: set[Any] = set()
        self.calls = 0
        self.server: Server[Any] = _OcnbServer(
            name,
            version=_version(),
            instructions=INSTRUCTIONS,
            lifespan=self._lifespan,
            get_tool_input_schema=self._input_schema,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_templates,
            on_read_resource=self._read_resource,
            on_completion=self._complete,
            on_subscriptions_listen=self.listen,
        )
        # registered by hand: the constructor's on_set_logging_level warns (SEP-2577 deprecates it in 2026)
        self.server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, self._set_level)
        self.server.middleware.append(self._track_connection)
        self.server.middleware.append(_refuse_nonfinite)
        #: The level each client set with ``logging/setLevel`` (by connection); no entry, no messages.
        self._log_levels: dict[Any, str] = {}
        #: The tools/call running on a connection (its SDK session and request id): a log message
        #: rides that call's stream, which every transport has.
        self._active: dict[Any, tuple[Any, Any]] = {}

    # -- lifecycle ----------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def _lifespan(self, _server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        self.loop = asyncio.get_running_loop()
        unsubscribe = self.session.registry.on_change(self._registry_changed)
        listeners = self.session.audit.listeners
        listeners.append(self._browser_event)
        try:
            yield {}
        finally:
            unsubscribe()
            with contextlib.suppress(ValueError):
                listeners.remove(self._browser_event)
            self.listen.close()
            self.loop = None

    def release(self) -> None:
        """Give the session back as this server found it: discovery mode's every-group tool set is
        undone, unless someone chose other groups meanwhile or the session is closed. Idempotent."""
        before, self._caps_before = self._caps_before, None
        if before is None or self.session.closed:
            return
        if set(self.session.settings.caps) == set(capability_groups()):
            self.session.configure(caps=before)

    @property
    def connections(self) -> int:
        """Handshake-era client connections currently open."""
        return len(self._connections)

    async def close_streams(self) -> None:
        """End every client stream now (listen streams gracefully, HTTP sessions terminated), so a
        server shutdown does not wait for long-lived SSE streams to time out."""
        self.listen.close()
        manager = getattr(self.server, "_session_manager", None)
        for transport in list(getattr(manager, "_server_instances", {}).values()):
            try:
                await transport.terminate()
            except Exception:  # noqa: BLE001 - best effort; uvicorn's graceful timeout is the fallback
                log.debug("could not terminate an MCP session", exc_info=True)

    # -- tools --------------------------------------------------------------------------------
    def _input_schema(self, name: str) -> dict[str, Any] | None:
        tooldef = self.session.registry.get(name)
        return tooldef.input_schema if tooldef else None

    def visible_tools(self) -> list[ToolDef]:
        """The tools ``tools/list`` shows under this server's listing (see :func:`listing.listed`)."""
        return listed(self.session.registry, self.listing, self.discovered)

    async def _list_tools(self, ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool_to_mcp(t) for t in self.visible_tools()])

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        self.calls += 1
        peer = ctx.session  # the MCP SDK's session with this client
        connection = getattr(peer, "_connection", None)
        if connection is not None:
            self._active[connection] = (peer, ctx.request_id)
        progress = _Progress(peer) if _progress_token(ctx) is not None else None
        unknown: ToolResult | None = None
        try:
            arguments = params.arguments
            args = dict(arguments) if isinstance(arguments, dict) else arguments
            result = await self.call(params.name, args, progress=progress.report if progress else None)
            if result.error is None or result.error.code != "UNKNOWN_TOOL":
                return await self._answer(ctx, params.name, result)
            unknown = result  # journaled by dispatch like any call; answered as a protocol error below
        except Exception as exc:  # noqa: BLE001 - a tool result, never a JSON-RPC error
            log.exception("tools/call %s failed", params.name)
            failure = ToolResult.failure(str(params.name), "INTERNAL", f"{type(exc).__name__}: {exc}")
            return to_call_result(failure, fence=self.session.fence)
        finally:
            if progress is not None:
                await progress.close()
            if connection is not None and self._active.get(connection, (None,))[0] is peer:
                del self._active[connection]
        raise _unknown_tool(str(params.name), unknown)

    async def _answer(self, ctx: Any, name: str, result: ToolResult) -> types.CallToolResult:
        """A call's result as the client gets it (after a hand-off, a log message, discovery's turn)."""
        if result.error is not None and result.error.code == "NEEDS_HUMAN":
            result = await self._hand_off(ctx, result)
        if result.error is not None and result.error.code == "APPROVAL_REQUIRED":
            result = await self._ask_approval(ctx, result)
        if result.error is not None and result.error.code == "NAVIGATION_FAILED":
            failed = {"message": result.error.message}
            self._log_event("error", self.session.fence.event("navigation_failed", failed))
        tooldef = self.session.registry.get(name)
        if self.listing != "all" and result.ok and tooldef is not None and tooldef.reveals is not None:
            self._learn(tooldef.reveals(result.data))
        return to_call_result(result, self.session.home, self.session.fence)

    # -- hand-off as elicitation ----------------------------------------------------------------
    async def _hand_off(self, ctx: Any, result: ToolResult) -> ToolResult:
        """Ask the person through the client (``elicitation/create``) which candidate a ``NEEDS_HUMAN``
        call meant, and resume it on that ref through dispatch. Without elicitation, a refusal, or no
        candidates: ``result`` as it is (and nothing acts)."""
        peer = ctx.session
        payload = result.error.details if result.error is not None else {}
        candidates = [c for c in payload.get("candidates") or [] if isinstance(c, dict) and c.get("ref")]
        wants = types.ClientCapabilities(elicitation=types.ElicitationCapability())
        if not candidates or not peer.check_client_capability(wants):
            return result
        options = [{"const": str(c["ref"]), "title": _candidate_title(c)} for c in candidates]
        schema = {
            "type": "object",
            "properties": {"ref": {"type": "string", "title": "Element", "oneOf": options}},
            "required": ["ref"],
        }
        intent = f" to {payload['intent']}" if payload.get("intent") else ""
        message = f"{payload.get('tool')}{intent}: {payload.get('message')}. Which element is meant?"
        try:
            answer = await peer.elicit_form(message, schema, related_request_id=ctx.request_id)
        except Exception:  # noqa: BLE001 - the client could not ask: today's result
            log.debug("elicitation failed", exc_info=True)
            return result
        ref = (answer.content or {}).get("ref") if answer.action == "accept" else None
        if not isinstance(ref, str) or ref not in {o["const"] for o in options}:
            return result
        try:
            tool, args = self.session.handoffs.take(str(payload["handoff_id"]), ref)
        except OcnbError as exc:
            return ToolResult(ok=False, tool=result.tool, error=ToolError.from_exception(exc))
        return await self.call(tool, args)

    # -- approval as elicitation ----------------------------------------------------------------
    async def _ask_approval(self, ctx: Any, result: ToolResult) -> ToolResult:
        """Ask the client's person (``elicitation/create``) to approve an ``APPROVAL_REQUIRED`` call,
        settle the request with the answer and run the call again. Without elicitation: ``result``."""
        peer = ctx.session
        request = result.error.details if result.error is not None else {}
        wants = types.ClientCapabilities(elicitation=types.ElicitationCapability())
        if not isinstance(request.get("approval_id"), str) or not peer.check_client_capability(wants):
            return result
        schema = {
            "type": "object",
            "properties": {"approve": {"type": "boolean", "title": "Approve", "default": False}},
            "required": ["approve"],
        }
        try:
            answer = await peer.elicit_form(approval_message(request), schema, related_request_id=ctx.request_id)
        except Exception:  # noqa: BLE001 - the client could not ask: nobody approved
            log.debug("elicitation failed", exc_info=True)
            return result
        approved = answer.action == "accept" and (answer.content or {}).get("approve") is True
        try:
            tool, args = self.session.approvals.settle(str(request["approval_id"]), approved, by="mcp")
        except OcnbError as exc:
            return ToolResult(ok=False, tool=result.tool, error=ToolError.from_exception(exc))
        return await self.call(tool, args)

    # -- resources ----------------------------------------------------------------------------
    async def _list_resources(self, ctx: Any, params: Any) -> types.ListResourcesResult:
        session = self.session
        found = await asyncio.to_thread(resources.list_resources, session.home, session.id, session.registry)
        return types.ListResourcesResult(resources=found)

    async def _list_templates(self, ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=resources.templates())

    async def _read_resource(self, ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        return await asyncio.to_thread(resources.read_resource, self.session.home, str(params.uri), self._capmap)

    async def _complete(self, ctx: Any, params: types.CompleteRequestParams) -> types.CompleteResult:
        """Completion of a resource template's argument; ocnb has no prompts to complete."""
        ref = params.ref
        if not isinstance(ref, types.ResourceTemplateReference):
            raise MCPError(
                code=types.INVALID_PARAMS, message=f"no prompt {getattr(ref, 'name', '')!r}: ocnb has no prompts"
            )
        arg = params.argument
        values = await asyncio.to_thread(resources.complete, self.session.home, ref.uri, arg.name, arg.value)
        return types.CompleteResult(completion=types.Completion(values=values, total=len(values), has_more=False))

    def _capmap(self) -> str:
        from ..commands.capmap import generate

        return generate(list(self.session.registry))

    # -- logging ------------------------------------------------------------------------------
    async def _set_level(self, ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        peer = ctx.session  # the MCP SDK's session with this client
        connection = getattr(peer, "_connection", None)
        # 2026-era connections opt in per request (SEP-2577): connection-wide messages are not theirs
        if connection is not None and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            if connection not in self._log_levels:
                connection.exit_stack.callback(self._log_levels.pop, connection, None)
            self._log_levels[connection] = params.level
        return types.EmptyResult()

    def _browser_event(self, kind: str, body: dict[str, Any]) -> None:
        """Listener on the session's events (browser thread): the ones worth a log message."""
        level = _event_level(kind, body)
        if level is not None:
            self._log_event(level, self.session.fence.event(kind, body))  # the page's texts fenced

    def _log_event(self, level: str, data: dict[str, Any]) -> None:
        loop = self.loop
        if loop is None or loop.is_closed() or not self._log_levels:
            return
        with contextlib.suppress(RuntimeError):  # the loop is shutting down
            loop.call_soon_threadsafe(lambda: loop.create_task(self._send_log(level, data)))

    async def _send_log(self, level: str, data: dict[str, Any]) -> None:
        rank = LOG_LEVELS.index(level)
        for connection, threshold in list(self._log_levels.items()):
            if rank < LOG_LEVELS.index(threshold):
                continue
            note = types.LoggingMessageNotification(
                params=types.LoggingMessageNotificationParams(level=level, data=data, logger="ocnb.browser")  # type: ignore[arg-type]
            )
            try:
                with anyio.move_on_after(5):
                    active = self._active.get(connection)
                    if active is not None:  # on the running call's stream
                        await active[0].send_notification(note, related_request_id=active[1])
                    else:
                        await connection.notify(
                            "notifications/message", note.params.model_dump(mode="json", exclude_none=True)
                        )
            except Exception:  # noqa: BLE001 - one broken client must not stop the others
                log.debug("could not send a log message", exc_info=True)

    def _learn(self, names: Iterable[str]) -> None:
        """Show the tools the latest discovery result named, in place of the earlier turn's (every tool
        stays callable); announce a change."""
        found = {name for name in names if name in self.session.registry}
        if found != self.discovered:
            self.discovered = found
            self._registry_changed()

    async def call(self, name: str, arguments: Any, *, progress: ProgressFn | None = None) -> ToolResult:
        """Run one call through dispatch on the browser thread, awaited without blocking this loop.

        Cancelling the awaiting task cancels the call on the browser thread (journaled ``CANCELLED``).
        """
        session = self.session
        if session.closed:
            return ToolResult.failure(name, "SESSION_CLOSED", "the session is closed; create a new Session")
        try:
            future = session.runtime.submit(dispatch_async(session, name, arguments, source="mcp", progress=progress))
            return await asyncio.wrap_future(future)
        except OcnbError as exc:  # the session closed between the check and the submit
            return ToolResult(ok=False, tool=name, error=ToolError.from_exception(exc))

    # -- live tool list -----------------------------------------------------------------------
    async def _track_connection(self, ctx: Any, call_next: Any) -> Any:
        """Remember handshake-era connections that can receive server notifications."""
        peer = ctx.session  # the MCP SDK's session with this client, not an ocnb Session
        connection = getattr(peer, "_connection", None)  # private in the SDK: absent in some versions
        if (
            connection is not None
            and connection not in self._connections
            and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS
            and connection.has_standalone_channel
        ):
            self._connections.add(connection)
            connection.exit_stack.callback(self._connections.discard, connection)
        return await call_next(ctx)

    def _registry_changed(self) -> None:
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # the loop is shutting down
            loop.call_soon_threadsafe(lambda: loop.create_task(self._broadcast_tools_changed()))

    async def _broadcast_tools_changed(self) -> None:
        await self.bus.publish(ToolsListChanged())
        for connection in list(self._connections):
            try:
                with anyio.move_on_after(5):
                    await connection.send_tool_list_changed()
            except Exception:  # noqa: BLE001 - one broken client must not stop the others
                log.debug("could not notify a client of the tool list change", exc_info=True)


async def run_stdio(
    session: Session, *, name: str = "ocnb", discovery: bool = False, listing: Listing | None = None
) -> None:
    """Serve ``session``'s tools over this process's stdin/stdout until the client closes the pipe."""
    bridge = McpBridge(session, name=name, discovery=discovery, listing=listing)
    async with stdio_server() as (read_stream, write_stream):
        strict_send, strict_read = create_context_streams[SessionMessage | Exception](0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(_strict_messages, read_stream, strict_send, write_stream)
            try:
                await bridge.server.run(strict_read, write_stream, bridge.server.create_initialization_options())
            finally:
                bridge.release()
            tg.cancel_scope.cancel()


NONFINITE_MESSAGE = "Parse error: NaN and Infinity are not JSON numbers (RFC 8259)"
UNPARSED_MESSAGE = "Parse error: not valid JSON text (e.g. a lone surrogate escape such as \\ud800)"


def nonstrict(message: Any) -> bool:
    """Whether a parsed JSON-RPC message holds NaN or ±Infinity (which strict JSON cannot spell)."""
    for attr in ("params", "result"):
        if has_nonfinite(getattr(message, attr, None)):
            return True
    error = getattr(message, "error", None)
    return error is not None and has_nonfinite(getattr(error, "data", None))


def _unparsed_request_id(exc: BaseException) -> int | str | None:
    """The id of a request the SDK's parser refused as invalid JSON (e.g. a lone surrogate escape,
    which Python's own parser reads), so that it can be answered rather than left waiting."""
    errors = getattr(exc, "errors", None)
    try:
        first = errors()[0] if callable(errors) else None
    except Exception:  # noqa: BLE001 - not a pydantic error
        return None
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


PARSE_MESSAGE = "Parse error: not valid JSON text"
BATCH_MESSAGE = "Invalid Request: JSON-RPC batches are not supported; send one message at a time"
NO_METHOD_MESSAGE = "Invalid Request: no method"
NOT_OBJECT_MESSAGE = "Invalid Request: a JSON-RPC message is a JSON object"
_MISSING = object()


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


async def _refuse_nonfinite(ctx: Any, call_next: Any) -> Any:
    """Middleware, for every transport (stdio, HTTP): a request whose params hold NaN or ±Infinity is
    a parse error (-32700); the SDK's JSON parsers take them, strict JSON does not."""
    if has_nonfinite(getattr(ctx, "params", None)):
        raise MCPError(code=types.PARSE_ERROR, message=NONFINITE_MESSAGE)
    return await call_next(ctx)


def _blank_line(exc: Exception) -> bool:
    """Whether the SDK refused an empty (whitespace-only) stdin line."""
    errors = getattr(exc, "errors", None)
    try:
        first = errors()[0] if callable(errors) else None
    except Exception:  # noqa: BLE001 - not a pydantic error
        return False
    return isinstance(first, dict) and isinstance(first.get("input"), str) and not first["input"].strip()


async def _strict_messages(source: Any, sink: Any, write_stream: Any) -> None:
    """Pass the transport's messages on; answer a request holding NaN/±Infinity with a parse error
    (-32700, with its id so the client is not left waiting) and drop any other such message. A line
    that is not JSON is answered with a parse error (-32700; with the request's id when one can still be
    read, as for a lone surrogate escape, else ``null``), one that is JSON but not a JSON-RPC message
    (a batch, no ``method``) with an invalid request (-32600) — see :func:`refusal`. Blank lines are
    skipped."""
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
