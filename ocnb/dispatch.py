"""dispatch: the one pipeline every face's tool call goes through.

::

    lookup (UNKNOWN_TOOL) -> intent check (INVALID_INTENT) -> JSON Schema (INVALID_ARGUMENT, all errors)
      -> before-hooks (secrets in, signature guards, …) -> handler on the browser thread, with a timeout
      -> errors mapped to stable codes -> after-hooks (secrets out, journal, trace, …) -> ToolResult

The call context, the pipeline of hooks and the :class:`~ocnb.calls.Host` protocol that dispatch
runs against live in :mod:`ocnb.calls`; a :class:`~ocnb.session.Session` is such a host.
A tool failure never raises out of :func:`dispatch`; it comes back as a failed :class:`ToolResult`.
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import inspect
import math
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .calls import SOURCES, AfterHook, AskFn, BeforeHook, CallContext, CallLock, Host, ProgressFn
from .display import Waiting
from .display import options as display_options
from .errors import (
    Cancelled,
    Interrupted,
    InvalidArgument,
    InvalidIntent,
    OcnbError,
    Timeout,
    UnknownTool,
    from_playwright,
)
from .jsonsafe import check_args, fix_text, is_strict_json, strict_copy
from .registry import ToolDef, internal_tooldef
from .results import ToolError, ToolResult

if TYPE_CHECKING:
    from .audit.approval import Approvals
    from .audit.journal import Journal
    from .audit.secrets import SecretStore
    from .browser.crashes import CrashWatch
    from .browser.state import BrowserState
    from .browser.tabs import Tab
    from .contracts.taskguard import TaskBinding, TaskGuard
    from .settings import Settings

__all__ = ["ToolContext", "ToolHost", "dispatch", "dispatch_async"]

INTENT_MAX = 120
#: The longest a call may run whatever it asks for (the largest ``timeout_ms`` any schema allows).
MAX_CALL_TIMEOUT_MS = 300_000
#: Unknown tool names are recorded cut to this length.
TOOL_NAME_MAX = 200

_nested: contextvars.ContextVar[bool] = contextvars.ContextVar("ocnb_nested_call", default=False)
#: The call whose hooks or handler run now: a call dispatched inside it is its step (``CallContext.parent``).
_current: contextvars.ContextVar[CallContext | None] = contextvars.ContextVar("ocnb_current_call", default=None)
_validators: dict[int, Any] = {}


class ToolHost(Host, Protocol):
    """What a tool handler may ask of its session: :class:`~ocnb.calls.Host`, and the layers' state
    that tools read (the secrets, the journal, the task guard, the crash watch, the approvals). A
    :class:`~ocnb.session.Session` is one; nothing else of the session is a tool's business."""

    @property
    def secrets(self) -> SecretStore: ...
    @property
    def journal(self) -> Journal: ...
    @property
    def guard(self) -> TaskGuard: ...
    @property
    def task(self) -> TaskBinding | None: ...
    @property
    def crashes(self) -> list[dict[str, Any]]: ...
    @property
    def crash_watch(self) -> CrashWatch: ...
    @property
    def approvals(self) -> Approvals:
        """Approval before irreversible actions: the acting tools ask it once their element is resolved."""

    async def relaunch_browser(self) -> dict[str, Any]:
        """Start a new browser now; returns what was lost."""


class ToolContext:
    """What a handler sees: the session (as a :class:`ToolHost`), the call, its browser state and
    helpers to reach a tab."""

    def __init__(self, session: ToolHost, call: CallContext) -> None:
        self.session = session
        self.call = call

    @property
    def browser(self) -> BrowserState:
        state: BrowserState = self.session.browser_state()
        return state

    @property
    def config(self) -> Settings:
        return self.session.config

    @property
    def home(self) -> Path:
        return self.session.home

    async def page(self, tab_id: str | None = None) -> Any:
        return await self.browser.page(tab_id)

    def tab(self, tab_id: str | None = None) -> Tab:
        return self.browser.tab(tab_id)

    def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Tell the face that ``done`` of ``total`` steps are finished (no-op when nobody listens)."""
        self.call.progress(done, total, message)

    async def dispatch(
        self, tool: str, args: dict[str, Any] | None = None, *, source: str | None = None, record: bool = True
    ) -> ToolResult:
        """Run another tool from inside a handler (plans, replay): same pipeline, no re-locking.
        ``record=False``: no journal line or trace event of its own (a replay's steps: the replay's
        own line and ``replay_step`` trace events stand for them)."""
        return await dispatch_async(
            self.session, tool, args or {}, source=source or self.call.source, client=self.call.client, record=record
        )


#: The schema keywords whose meaning is the same in draft 7 (what fastjsonschema compiles) as in draft
#: 2020-12 (what tools declare and :mod:`jsonschema` checks). A schema with any other keyword, or an
#: ``enum`` of anything but strings, is checked by jsonschema alone.
FAST_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "enum",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "items",
        "minItems",
        "maxItems",
        "minProperties",
        "anyOf",
        "pattern",
        "description",
        "default",
    }
)
_SUBSCHEMAS = ("items", "additionalProperties")


def _string_items(schema: dict[str, Any]) -> bool:
    """Whether every item an array of ``schema`` may hold is a string (its ``items`` is an ``enum`` of
    strings): ``uniqueItems`` then means the same in both drafts (no ``1`` against ``true`` to tell apart)."""
    items = schema.get("items")
    return (
        isinstance(items, dict)
        and isinstance(items.get("enum"), list)
        and all(isinstance(v, str) for v in items["enum"])
    )


def _fast_ok(schema: Any) -> bool:
    """Whether fastjsonschema may answer "valid" for ``schema`` (see :data:`FAST_KEYWORDS`; and
    ``uniqueItems`` over strings alone, as replay's ``tolerate`` lists)."""
    if not isinstance(schema, dict):
        return isinstance(schema, bool)
    allowed = FAST_KEYWORDS | {"uniqueItems"} if _string_items(schema) else FAST_KEYWORDS
    if not allowed.issuperset(schema):
        return False
    if "enum" in schema and not all(isinstance(v, str) for v in schema["enum"]):
        return False
    subs = [*schema.get("properties", {}).values(), *schema.get("anyOf", [])]
    subs += [schema[k] for k in _SUBSCHEMAS if k in schema]
    return all(_fast_ok(sub) for sub in subs)


def _validator(tooldef: ToolDef) -> tuple[Any, Any]:
    """The tool's jsonschema validator, and its compiled fastjsonschema check (None when the schema
    uses a keyword the two drafts do not read alike)."""
    key = id(tooldef.input_schema)
    v = _validators.get(key)
    if v is None:
        from jsonschema import Draft202012Validator  # imported on first use: it is slow to import

        fast = None
        if _fast_ok(tooldef.input_schema):
            import fastjsonschema

            try:  # use_default=False: never fill in defaults (it would change the call's arguments)
                fast = fastjsonschema.compile(tooldef.input_schema, use_default=False)
            except Exception:  # noqa: BLE001 - a schema it cannot compile is checked by jsonschema alone
                fast = None
        v = _validators[key] = (Draft202012Validator(tooldef.input_schema), fast)
    return v


def schema_errors(tooldef: ToolDef, args: dict[str, Any]) -> list[dict[str, str]]:
    """Every schema error of ``args``, each with a JSON path and message, in a stable order.

    A valid call is recognised by the compiled check (a tenth of jsonschema's time); anything it
    refuses is judged by jsonschema, whose verdict and messages are the ones reported.
    """
    validator, fast = _validator(tooldef)
    if fast is not None:
        try:
            fast(args)
            return []
        except Exception:  # noqa: BLE001 - refused, or a value it cannot read: jsonschema decides
            pass
    if validator.is_valid(args):  # the common case, without collecting errors
        return []
    errors = []
    for err in validator.iter_errors(args):
        path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
        errors.append({"path": path, "message": err.message})
    errors.sort(key=lambda e: (e["path"], e["message"]))
    return errors


def _check_intent(tooldef: ToolDef, args: dict[str, Any]) -> str | None:
    if "intent" not in args or not tooldef.accepts_intent:
        return None
    intent = args["intent"]
    if not isinstance(intent, str) or not (1 <= len(intent) <= INTENT_MAX):
        size = len(intent) if isinstance(intent, str) else type(intent).__name__
        raise InvalidIntent(f"intent must be a string of 1 to {INTENT_MAX} characters (got {size})")
    return intent


def _call_timeout(session: ToolHost, tooldef: ToolDef, args: Any) -> float:
    """Seconds a call may take: the session default, or the call's own ``timeout_ms`` + 5 s, capped."""
    ms = float(session.config.default_timeout_ms)
    own = args.get("timeout_ms") if isinstance(args, dict) else None
    if isinstance(own, int | float) and not isinstance(own, bool) and math.isfinite(own):
        ms = max(ms, min(float(own), MAX_CALL_TIMEOUT_MS) + 5_000)
    return min(ms, MAX_CALL_TIMEOUT_MS + 5_000) / 1000.0


async def _run_before(hooks: list[BeforeHook], call: CallContext) -> None:
    for hook in hooks:  # a fresh list from the pipeline: a hook may change the pipeline's own
        value = hook(call)
        if value is not None and inspect.isawaitable(value):
            await value


async def _run_after(hooks: list[AfterHook], call: CallContext, result: ToolResult) -> ToolResult:
    """The result after every after-hook: each sees the result the one before it returned (or kept)."""
    for hook in hooks:  # a fresh list from the pipeline: a hook may change the pipeline's own
        value = hook(call, result)
        if value is not None and inspect.isawaitable(value):
            value = await value
        if isinstance(value, ToolResult):
            result = value
    return result


def _with_failure_data(call: CallContext, result: ToolResult) -> ToolResult:
    """A failed result without data, given the data its tool declares for that (``ToolDef.failure_data``:
    a replay's ``{ok: false, failure}``). Before the session's after-hooks, so they see it as the caller will."""
    shape = call.tooldef.failure_data if call.tooldef is not None else None
    if shape is None or result.ok or result.data is not None or result.error is None:
        return result
    return ToolResult(ok=False, tool=result.tool, data=shape(call.args, result.error), error=result.error)


async def dispatch_async(
    session: ToolHost,
    tool: str,
    args: dict[str, Any] | None = None,
    *,
    source: str = "api",
    record: bool = True,
    progress: ProgressFn | None = None,
    ask: AskFn | None = None,
    client: str | None = None,
) -> ToolResult:
    """The pipeline, on the browser loop. Top-level calls are serialized; nested ones are not.

    Never raises for what a caller passes: any tool name, any arguments, any value in them. A
    cancelled call (``asyncio`` cancel of the task) is journaled as ``CANCELLED``, then the
    cancellation goes on. ``progress`` hears the steps of a long call (see :meth:`CallContext.progress`);
    ``ask`` lets the approval desk ask the face's own person too (:data:`~ocnb.calls.AskFn`).
    ``client``: the MCP client's name, written in the call's journal line.
    """
    try:
        if _nested.get():
            return await _pipeline(session, tool, args, source, record, progress, ask, client)
        token = _nested.set(True)
        _current.set(None)  # a top-level call is nobody's step, whatever task it was started from
        hold = CallLock(session.call_lock())
        try:
            await hold.acquire()
            return await _pipeline(session, tool, args, source, record, progress, ask, client, hold)
        finally:
            hold.release()  # unless a wait for a person let it go and the call was cancelled then
            _nested.reset(token)
    except OcnbError as exc:
        return ToolResult(ok=False, tool=_tool_name(tool), error=ToolError.from_exception(exc))
    except Exception as exc:  # noqa: BLE001 - a bug of ours still comes back as a result
        return _internal(_tool_name(tool), exc)


def _tool_name(tool: Any) -> str:
    """The tool name as results and the journal spell it: valid Unicode, at most TOOL_NAME_MAX chars."""
    name = tool if isinstance(tool, str) else repr(tool)
    name = fix_text(name)
    return name if len(name) <= TOOL_NAME_MAX else name[:TOOL_NAME_MAX] + "…"


def _internal(tool: str, exc: BaseException) -> ToolResult:
    return ToolResult.failure(tool, "INTERNAL", fix_text(f"{type(exc).__name__}: {exc}")[:500])


def _strict_result(result: ToolResult) -> ToolResult:
    """The result with strict-JSON data and error: what a page returns may hold lone surrogates or NaN."""
    error = result.error
    if is_strict_json(result.data) and (error is None or is_strict_json(error.to_dict())):
        return result
    if error is not None:
        error = ToolError(fix_text(str(error.code)), fix_text(str(error.message)), strict_copy(error.details))
    return ToolResult(ok=result.ok, tool=result.tool, data=strict_copy(result.data), error=error)


async def _pipeline(
    session: ToolHost,
    tool: str,
    args: dict[str, Any] | None,
    source: str,
    record: bool = True,
    progress: ProgressFn | None = None,
    ask: AskFn | None = None,
    client: str | None = None,
    lock: CallLock | None = None,
) -> ToolResult:
    name = _tool_name(tool)
    given, problems = check_args(args) if isinstance(args, dict) else ({}, [])
    call = CallContext(
        session=session,
        name=name,
        args=given,
        source=source,
        seq=session.next_seq(),
        # a call without a tool name is not a call of anything: there is nothing to journal it under
        record=record and name != "",
        progress_fn=progress,
        ask_fn=ask,
        parent=_current.get(),
        client=client,
        lock=lock,
    )
    current = _current.set(call)
    try:
        return await _run_call(session, call, tool, args, source, problems)
    finally:
        _current.reset(current)


async def _run_call(
    session: ToolHost, call: CallContext, tool: Any, args: Any, source: str, problems: list[Any]
) -> ToolResult:
    name = call.name
    t0 = time.perf_counter()
    result: ToolResult
    try:
        if source not in SOURCES:
            raise InvalidArgument(f"unknown source {source!r}; one of {', '.join(SOURCES)}")
        if not isinstance(args, dict | type(None)):
            raise InvalidArgument(f"arguments must be an object, not {type(args).__name__}")
        if not isinstance(tool, str) or not tool:
            raise UnknownTool("the tool name must be a non-empty string", details={"tool": name})
        tooldef = session.registry.get(tool)
        if tooldef is None and source == "replay":  # a replay's own step tool, offered by no face
            tooldef = internal_tooldef(tool)
        if tooldef is None:
            raise UnknownTool(f"no tool {name!r}; see expand_tools for the list", details={"tool": name})
        call.tooldef = tooldef
        call.tab_id = call.args.get("tab_id") if isinstance(call.args.get("tab_id"), str) else None
        try:
            call.intent = _check_intent(tooldef, call.args)
        except InvalidIntent:
            call.record = False
            raise
        errors = problems or schema_errors(tooldef, call.args)
        if errors:
            summary = "; ".join(f"{e['path']}: {e['message']}" for e in errors[:5])
            raise InvalidArgument(f"{len(errors)} invalid argument(s): {summary}", details={"errors": errors})
        if tooldef.check is not None:
            tooldef.check(session.config, call.args)
        call.exec_args = _copy_args(call.args)
        call.exec_args.pop("intent", None)
        await _run_before(session.pipeline.before_hooks(), call)
        data = await _run_handler(session, tooldef, call)
        result = ToolResult.success(name, data)
    except OcnbError as exc:
        result = ToolResult(ok=False, tool=name, data=exc.data, error=ToolError.from_exception(exc))
    except asyncio.CancelledError:  # the caller went away: journal the call, then let the cancel go on
        call.duration_ms = (time.perf_counter() - t0) * 1000.0
        await _record_cancelled(session, call)
        raise
    except Exception as exc:  # noqa: BLE001 - any handler bug becomes a result, never a raise
        err = from_playwright(exc)
        result = ToolResult(ok=False, tool=name, error=ToolError.from_exception(err))
    result = _strict_result(result)
    call.duration_ms = (time.perf_counter() - t0) * 1000.0
    try:
        result = await _run_after(session.pipeline.after_hooks(), call, _with_failure_data(call, result))
    except OcnbError as exc:  # an after-hook failure (e.g. disk full) is reported, not raised
        result = ToolResult(ok=False, tool=name, error=ToolError.from_exception(exc))
    except Exception as exc:  # noqa: BLE001 - nor is a bug in one
        result = _internal(name, exc)
    return result


def _copy_args(value: Any) -> Any:
    """A deep copy of checked arguments: dicts and lists anew, strings, numbers, booleans and None
    as they are (immutable), anything else through :func:`copy.deepcopy` (what this replaced, at a
    fraction of its cost for JSON values)."""
    if isinstance(value, dict):
        return {k: _copy_args(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_args(v) for v in value]
    if value is None or isinstance(value, str | int | float):  # bool is an int
        return value
    return copy.deepcopy(value)


async def _record_cancelled(session: ToolHost, call: CallContext) -> None:
    """Run the after-hooks (journal, trace …) on a ``CANCELLED`` result of a call being cancelled.

    Shielded, so a second cancel while the line is written cannot lose it; a hook's failure is logged
    by nobody (the caller is gone) and never replaces the cancellation.
    """
    message = f"{call.name} was cancelled after {call.duration_ms:.0f} ms; the browser may have acted in part"
    result = ToolResult(ok=False, tool=call.name, error=ToolError.from_exception(Cancelled(message)))
    task = asyncio.ensure_future(_run_after(session.pipeline.after_hooks(), call, _with_failure_data(call, result)))
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        pass  # the hooks go on in their own task
    except Exception:  # noqa: BLE001 - the cancellation is what the caller gets
        pass


async def _run_handler(session: ToolHost, tooldef: ToolDef, call: CallContext) -> Any:
    ctx = ToolContext(session, call)
    timeout = _call_timeout(session, tooldef, call.exec_args)
    state = await session.ensure_browser()
    handler = _translated(tooldef, ctx, call.exec_args)
    try:  # the browser layer runs it under the dialog rules (a stand-in host has no browser)
        # In this task, not a task of its own (asyncio.wait_for): one loop turn less per call.
        async with asyncio.timeout(timeout) as call.deadline:
            return await (state.dialogs.guard_call(call, handler) if state is not None else handler)
    except TimeoutError:
        raise Timeout(f"{tooldef.name} did not finish within {timeout:.0f} s") from None


async def _translated(tooldef: ToolDef, ctx: ToolContext, args: dict[str, Any]) -> Any:
    """Run the handler; what it raises comes out as an :class:`OcnbError` — the one translation of
    Playwright's errors for every tool. It happens inside the call's task, so a call a dialog
    interrupted, which finishes in the background, reports its failure by code too."""
    try:
        return await tooldef.handler(ctx, args)
    except OcnbError:
        raise
    except Exception as exc:  # noqa: BLE001 - translated at the seam
        raise from_playwright(exc) from None


def dispatch(
    session: ToolHost, tool: str, args: dict[str, Any] | None = None, *, source: str = "api", record: bool = True
) -> ToolResult:
    """Run one tool call synchronously from any thread (not the browser thread) and return its result.

    ``record=False`` runs it through the same pipeline (policy, secrets, validation) but leaves no
    journal entry, trace event or captured skill step: for calls that only display the page.
    Never raises for what a caller passes; a person's interrupt raises :class:`~ocnb.errors.Interrupted`.
    """
    name = _tool_name(tool)
    if session.closed:
        return ToolResult.failure(name, "SESSION_CLOSED", "the session is closed; create a new Session")
    waiting = _waiting(name, args, source, record)
    ok: bool | None = False
    try:
        tooldef = session.registry.get(tool) if isinstance(tool, str) else None
        budget = _call_timeout(session, tooldef, args) + 15.0 if tooldef else 30.0
        coro = dispatch_async(session, tool, args, source=source, record=record)
        if waiting is None:
            result: ToolResult = session.run(coro, timeout=budget)
        else:
            result = session.run(coro, timeout=budget, on_wait=waiting.tick)
        ok = result.ok
        return result
    except Interrupted as exc:  # a person's Ctrl-C: the call is cancelled (journaled CANCELLED), the loop stops
        ok = None
        raise Interrupted(name, exc.seconds) from None
    except OcnbError as exc:  # SESSION_CLOSED, TIMEOUT of the browser thread …
        return ToolResult(ok=False, tool=name, error=ToolError.from_exception(exc))
    except Exception as exc:  # noqa: BLE001 - never raise out of a call
        return _internal(name, exc)
    finally:
        if waiting is not None:
            _quietly(waiting.end, ok)


def _waiting(name: str, args: Any, source: str, record: bool) -> Waiting | None:
    """The progress display of a call a person waits for (from code or a magic), if a face set one."""
    factory = display_options.progress
    if factory is None or not record or source not in ("api", "magic") or not isinstance(args, dict):
        return None
    try:
        return factory(name, args)
    except Exception:  # noqa: BLE001 - a display never fails a call
        return None


def _quietly(fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except Exception:  # noqa: BLE001 - a display never fails a call
        pass
