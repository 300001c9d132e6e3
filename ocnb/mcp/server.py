"""The MCP server: a thin adapter from the official ``mcp`` SDK (v2, low-level ``Server``) to dispatch.

``tools/list`` is the session's :class:`~ocnb.registry.Registry`, ``tools/call`` runs
:func:`~ocnb.dispatch.dispatch_async` with ``source="mcp"`` on the session's browser thread. There is
no tool-specific code here: a tool added to the registry is served as it is.

- Results: an act's or a page read's outcome in one lean text block (``ok ax_12 changed``, then the
  page's strings fenced), any other :class:`~ocnb.results.ToolResult` as JSON text content with the text
  a page controls in a second block; fences are marked with the session's random token
  (:mod:`ocnb.audit.fence`); a result whose ``data`` names a PNG/JPEG file (``path``) also carries that
  image (screenshots).
- Failures: ``isError: true``, the JSON text holding the stable error code — whatever the arguments.
  The one exception is a tool the registry does not have: the spec makes that a protocol error, so it
  is JSON-RPC ``-32602`` ("Unknown tool: NAME", ``data`` holding ocnb's ``UNKNOWN_TOOL`` error), and
  the journal still records the attempt.
- Strict JSON (:mod:`ocnb.mcp.sdk_seams`, with every use of the SDK's private names): a request whose
  JSON holds ``NaN`` or ``±Infinity`` (which JSON does not have, though the SDK's parsers take them) is
  answered with a JSON-RPC parse error (-32700), over stdio and HTTP; the JSON text of results is strict
  too. Malformed traffic is answered, never dropped: a stdio line that is not JSON gets -32700 (id
  ``null`` unless a request's id can still be read); JSON that is no JSON-RPC message — a batch, an
  object without ``method`` — gets -32600 with a short message, over stdio and HTTP (:func:`refusal`).
- Annotations: from the tool's ``side_effects`` flag, and only where they differ from the spec's
  defaults (``readOnlyHint: false``, ``destructiveHint: true``): a read-only tool says
  ``readOnlyHint: true``; a tool with side effects sends no annotations, which a client reads as
  "may change things, may be destructive".
- Live tool list (:mod:`ocnb.mcp.notify`): when the registry changes, handshake-era clients (2025
  protocol versions) get ``notifications/tools/list_changed`` on their connection; 2026-era clients
  get the same event on their ``subscriptions/listen`` stream.
- What ``tools/list`` shows (:mod:`ocnb.mcp.listing`): by default the essentials and the tools that
  find other tools (those whose :attr:`~ocnb.registry.ToolDef.reveals` is set), plus, per turn, the
  tools the latest discovery result named; every tool with ``--all-tools``; only the finders at first
  in discovery mode. Every tool of the registry is callable whatever is listed.
- Cancellation: a client's ``notifications/cancelled`` (or its time-out, or the server shutting down)
  cancels the call on the browser thread; dispatch journals it as ``CANCELLED``. The cancelled request
  gets no response, over stdio and HTTP (whose stream for it just ends; see :mod:`ocnb.mcp.http`).
- Progress (:mod:`ocnb.mcp.progress`): a request with a ``progressToken`` gets ``notifications/progress`` from long tools
  (``wait_for`` every second, ``execute_plan`` and ``oc_skill_replay`` per step), in order.
- Logging (:mod:`ocnb.mcp.notify`): ``logging/setLevel`` turns on ``notifications/message`` for that client (none before):
  the page's console errors and warnings, uncaught page errors, crashes and failed navigations,
  secrets masked, each text from the page fenced like a result's. Handshake-era protocol versions
  only (2026 drops connection-wide logging).
- Resources: the journal, traces, screenshots, evidence bundles, skills and the capability map
  (:mod:`ocnb.mcp.resources`); a result naming files under ``OCNB_HOME`` carries a ``resource_link``
  for each, after its JSON text.
- Hand-off (:mod:`ocnb.mcp.elicitation`): a ``NEEDS_HUMAN`` result, for a client that declared
  ``elicitation``, becomes an ``elicitation/create`` asking the person to pick the element meant; the
  answer resumes the call through dispatch (journaled). Declined, cancelled, or a client without
  elicitation: nothing acts, and the client gets the result as it is.
- Approval (:mod:`ocnb.audit.approval`): the call waits at the session's approval desk — offered to
  the person in the notebook and, through elicitation, to the client's person at once — sending
  progress while it waits, then acts once or ends ``APPROVAL_DENIED`` / ``APPROVAL_TIMEOUT``.
- Pause: while the person has paused the agent (``%oc mcp pause``), every call ends ``PAUSED``.
- Results (:mod:`ocnb.mcp.content`): the JSON text, fenced page text, images and resource links.
- Isolated mode (:mod:`ocnb.mcp.clients`, ``isolated=True``): each client session's calls run in a
  session (browser context) of its own in the served session's browser; every journal line of an MCP
  call names the client (``client``, its ``clientInfo.name``), isolated or not.

The server's own event loop never waits on the browser: a call is submitted to the browser thread and
awaited through :func:`asyncio.wrap_future`, so a busy notebook cell delays an agent's call (the
session serializes calls) without blocking the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from ..audit.fence import FENCE_NOTE
from ..calls import AskFn, ProgressFn
from ..dispatch import dispatch_async
from ..errors import OcnbError
from ..registry import ToolDef, capability_groups
from ..results import ToolError, ToolResult
from . import resources
from .clients import ClientSessions, client_name
from .content import MAX_IMAGE_BYTES, to_call_result, tool_to_mcp, unknown_tool
from .elicitation import approval_asker, hand_off
from .listing import LISTINGS, Listing, finders, listed
from .notify import ClientLog, ToolListChanges
from .progress import Progress, progress_token
from .sdk_seams import (
    connection_of,
    context_streams,
    http_transports,
    refusal,
    refuse_nonfinite,
    strict_messages,
)

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

#: :meth:`McpBridge.call` bound to one client's session (what hand-off and approval resume through).
CallFn = Callable[..., Awaitable[ToolResult]]

INSTRUCTIONS = (
    "ocnb drives one real Chromium that a person also sees from a Jupyter notebook. "
    "Results of navigate, read_page, interact and form_input start with a line: ok (then the ref acted on, "
    "what changed) or error CODE; other results are JSON {ok, tool, data} or {ok: false, error: {code, message}}. "
    "Every call is recorded in the session's journal. " + FENCE_NOTE
)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("ocnb")
    except Exception:  # noqa: BLE001 - a source checkout without metadata
        return "0"


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


def discovery_tools(tools: Iterable[ToolDef]) -> list[ToolDef]:
    """The tools discovery mode starts with: those that find other tools (``ToolDef.reveals``)."""
    return finders(tools)


class McpBridge:
    """One MCP server over one :class:`~ocnb.session.Session` (serve it over stdio or HTTP)."""

    def __init__(
        self,
        session: Session,
        *,
        name: str = "ocnb",
        discovery: bool = False,
        listing: Listing | None = None,
        isolated: bool = False,
        stdio: bool = False,
    ) -> None:
        self.session = session
        #: Isolated mode (:mod:`ocnb.mcp.clients`): each client's calls run in a session (browser
        #: context) of its own in ``session``'s browser; None: every client drives ``session`` itself.
        self.clients: ClientSessions | None = ClientSessions(session, stdio=stdio) if isolated else None
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
        #: The server's event loop while it runs (set by its lifespan).
        self.loop: asyncio.AbstractEventLoop | None = None
        self.changes = ToolListChanges(lambda: self.loop)
        self.client_log = ClientLog(session, lambda: self.loop)
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
            on_subscriptions_listen=self.changes.listen,
        )
        # registered by hand: the constructor's on_set_logging_level warns (SEP-2577 deprecates it in 2026)
        self.server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, self.client_log.set_level)
        self.server.middleware.append(self.changes.track)
        self.server.middleware.append(refuse_nonfinite)
        if self.clients is not None:
            self.server.middleware.append(self.clients.refuse_sessionless)

    # -- lifecycle ----------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def _lifespan(self, _server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        self.loop = asyncio.get_running_loop()
        unsubscribe = self.session.registry.on_change(self.changes.changed)
        listeners = self.session.audit.listeners
        listeners.append(self.client_log.browser_event)
        try:
            yield {}
        finally:
            unsubscribe()
            with contextlib.suppress(ValueError):
                listeners.remove(self.client_log.browser_event)
            self.changes.listen.close()
            self.loop = None

    def release(self) -> None:
        """Give the session back as this server found it: every isolated client's session closed,
        discovery mode's every-group tool set undone (unless someone chose other groups meanwhile or
        the session is closed). Idempotent."""
        if self.clients is not None:
            self.clients.close_all()
        before, self._caps_before = self._caps_before, None
        if before is None or self.session.closed:
            return
        if set(self.session.settings.caps) == set(capability_groups()):
            self.session.configure(caps=before)

    @property
    def connections(self) -> int:
        """Handshake-era client connections currently open."""
        return len(self.changes.connections)

    async def close_streams(self) -> None:
        """End every client stream now (listen streams gracefully, HTTP sessions terminated), so a
        server shutdown does not wait for long-lived SSE streams to time out."""
        self.changes.listen.close()
        for transport in http_transports(self.server):
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
        unknown: ToolResult | None = None
        session = self.clients.session_for(peer) if self.clients is not None else self.session
        call = functools.partial(self.call, session=session, client=client_name(connection_of(peer)))
        with self.client_log.riding(peer, ctx.request_id):  # log messages ride this call's stream meanwhile
            progress = Progress(peer) if progress_token(ctx) is not None else None
            try:
                arguments = params.arguments
                args = dict(arguments) if isinstance(arguments, dict) else arguments
                result = await call(
                    params.name, args, progress=progress.report if progress else None, ask=approval_asker(ctx)
                )
                if result.error is None or result.error.code != "UNKNOWN_TOOL":
                    return await self._answer(ctx, params.name, result, session, call, args)
                unknown = result  # journaled by dispatch like any call; answered as a protocol error below
            except Exception as exc:  # noqa: BLE001 - a tool result, never a JSON-RPC error
                log.exception("tools/call %s failed", params.name)
                failure = ToolResult.failure(str(params.name), "INTERNAL", f"{type(exc).__name__}: {exc}")
                return to_call_result(failure, fence=session.fence)
            finally:
                if progress is not None:
                    await progress.close()
        raise unknown_tool(str(params.name), unknown)

    async def _answer(
        self, ctx: Any, name: str, result: ToolResult, session: Session, call: CallFn, args: Any = None
    ) -> types.CallToolResult:
        """A call's result as the client gets it (after a hand-off, a log message, discovery's turn)."""
        if result.error is not None and result.error.code == "NEEDS_HUMAN":
            result = await hand_off(ctx, result, session, call)
        if result.error is not None and result.error.code == "NAVIGATION_FAILED":
            failed = {"message": result.error.message}
            self.client_log.send("error", session.fence.event("navigation_failed", failed))
        tooldef = self.session.registry.get(name)
        if self.listing != "all" and result.ok and tooldef is not None and tooldef.reveals is not None:
            self._learn(tooldef.reveals(result.data))
        return to_call_result(result, session.home, session.fence, args)

    def _learn(self, names: Iterable[str]) -> None:
        """Show the tools the latest discovery result named, in place of the earlier turn's (every tool
        stays callable); announce a change."""
        found = {name for name in names if name in self.session.registry}
        if found != self.discovered:
            self.discovered = found
            self.changes.changed()

    async def call(
        self,
        name: str,
        arguments: Any,
        *,
        progress: ProgressFn | None = None,
        session: Session | None = None,
        client: str | None = None,
        ask: AskFn | None = None,
    ) -> ToolResult:
        """Run one call through dispatch on the browser thread, awaited without blocking this loop.

        ``session``: the one to run it in (default: the served session; an isolated client's own);
        ``client``: the client's name, for the journal line. Cancelling the awaiting task cancels the
        call on the browser thread (journaled ``CANCELLED``).
        """
        session = session or self.session
        if session.closed:
            return ToolResult.failure(name, "SESSION_CLOSED", "the session is closed; create a new Session")
        try:
            run = dispatch_async(session, name, arguments, source="mcp", progress=progress, ask=ask, client=client)
            future = session.runtime.submit(run)
            return await asyncio.wrap_future(future)
        except OcnbError as exc:  # the session closed between the check and the submit
            return ToolResult(ok=False, tool=name, error=ToolError.from_exception(exc))

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


async def run_stdio(
    session: Session,
    *,
    name: str = "ocnb",
    discovery: bool = False,
    listing: Listing | None = None,
    isolated: bool = False,
) -> None:
    """Serve ``session``'s tools over this process's stdin/stdout until the client closes the pipe.

    ``isolated``: the client's calls run in a browser context of its own (:mod:`ocnb.mcp.clients`)."""
    bridge = McpBridge(session, name=name, discovery=discovery, listing=listing, isolated=isolated, stdio=True)
    async with stdio_server() as (read_stream, write_stream):
        strict_send, strict_read = context_streams()
        async with anyio.create_task_group() as tg:
            tg.start_soon(strict_messages, read_stream, strict_send, write_stream)
            try:
                await bridge.server.run(strict_read, write_stream, bridge.server.create_initialization_options())
            finally:
                bridge.release()
            tg.cancel_scope.cancel()
