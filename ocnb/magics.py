"""IPython magics: ``%oc TOOL ...`` runs any registered tool, ``%%oc`` runs one call per line.

Load with ``%load_ext ocnb``. The magics are a thin face: they parse a line into ``(tool, args)``
(:func:`~ocnb.notebook.lines.parse_call`, pure and testable on its own), make one :func:`~ocnb.dispatch.dispatch` call on
the shared default session (:func:`ocnb.session`) with ``source="magic"``, and display the
:class:`~ocnb.results.ToolResult`. A failed call raises :class:`~IPython.core.error.UsageError`, so a
person sees one line with the error code, not a traceback.

Line forms::

    %oc navigate https://example.org          # first required string argument(s) positional
    %oc find "email field" --limit 3          # the rest as --name value (JSON-looking values parsed)
    %oc fill_form --fields '{"Email": "a@b.co"}'
    %oc click "Sign in" --intent "log in"      # short verbs: click, fill, press, read, shot
    %oc help navigate | %oc tools | %oc discover "upload a file" | %oc mcp start --port 8765
"""

from __future__ import annotations

import importlib
import sys
import time
from typing import TYPE_CHECKING, Any

from ._extras import extra

with extra("notebook"):
    from IPython.core.completer import SimpleCompletion, context_matcher
    from IPython.core.error import UsageError
    from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
    from traitlets import Bool, Int, List, TraitError, Unicode, default, observe, validate

from . import display as _display
from .dispatch import dispatch
from .errors import OcnbError
from .notebook.close_command import close_command
from .notebook.lines import (
    COMMANDS,
    RECORD_SUBCOMMANDS,
    VERBS,
    Call,
    coerce_value,
    expand,
    help_text,
    offer_group,
    parse_call,
    parse_record,
    positional_names,
    tool_help,
    tool_list,
)
from .notebook.mcp_command import MCP_SUBCOMMANDS, MCP_TOKEN_FILE, mcp_command
from .registry import Registry, check_caps
from .session import build_session
from .settings import SessionOptions, Settings, check_setting

if TYPE_CHECKING:
    import pandas as pd

    from .results import ToolResult
    from .session import Session

# The line's parts live in ocnb.notebook; they are importable from here too, by their old names.
__all__ = [
    "COMMANDS",
    "MCP_TOKEN_FILE",
    "VERBS",
    "Call",
    "OcMagics",
    "coerce_value",
    "load_ipython_extension",
    "parse_call",
    "positional_names",
    "tool_help",
]


#: The traitlets that are settings of the session (:class:`~ocnb.settings.Settings` fields of the same name).
SETTINGS_TRAITS = (
    "headless",
    "default_timeout_ms",
    "caps",
    "dialog_policy",
    "handoff",
    "discovery_learn",
    "confirm",
    "risky_words",
    "allowed_origins",
    "blocked_origins",
)
#: Settings a running browser keeps until it next starts (``%oc close``, then any call).
_NEXT_BROWSER = ("headless", "allowed_origins", "blocked_origins")


@magics_class
class OcMagics(Magics):
    """``%oc`` / ``%%oc``. Settings are traitlets: ``%config OcMagics.headless = False`` etc."""

    headless = Bool(True, help="Run Chromium without a window (applies when the session starts).").tag(config=True)
    default_timeout_ms = Int(30_000, help="Per-call timeout when a call gives none.").tag(config=True)
    show_screenshots = Bool(True, help="Show screenshots inline as images (else their path).").tag(config=True)
    caps = List(Unicode(), help="Opt-in capability groups of tools to offer besides the default set.").tag(config=True)
    dialog_policy = Unicode(
        "accept", help="How page dialogs are answered: accept, dismiss or manual (they wait for dialog_answer)."
    ).tag(config=True)
    secrets = Unicode(None, allow_none=True, help="A dotenv file of secrets usable as ${SECRET:NAME}.").tag(config=True)
    progress = Bool(True, help="Show a progress bar while %%oc runs its lines.").tag(config=True)
    handoff = Bool(False, help="A target nobody can resolve shows the hand-off widget in the cell (NEEDS_HUMAN).").tag(
        config=True
    )
    discovery_learn = Bool(
        help="Learn successful calls' intents as discovery examples (OCNB_HOME/capabilities/learned.jsonl)."
    ).tag(config=True)

    confirm = Unicode(
        help="Which calls need approval before they act: never (the default: the person types the call), "
        "risky (Delete/Buy/Send…, a form posting to another origin, file_upload) or acting. A held call "
        "returns APPROVAL_REQUIRED; HumanHandoff(result, session) asks with Approve / Deny."
    ).tag(config=True)
    risky_words = List(Unicode(), help="Words added to the risky vocabulary (e.g. ['nuke', 'wipe out']).").tag(
        config=True
    )
    allowed_origins = List(
        Unicode(),
        help="Origins the browser may reach (https://example.com, https://*.example.org, http://localhost:*).",
    ).tag(config=True)
    blocked_origins = List(Unicode(), help="Origins the browser may not reach (wins over allowed_origins).").tag(
        config=True
    )

    # What OCNB_* says, where it says anything (read once, by ocnb.settings).
    @default("confirm")
    def _confirm_default(self) -> str:
        return Settings.from_env().confirm

    @default("risky_words")
    def _risky_words_default(self) -> list[str]:
        return list(Settings.from_env().risky_words)

    @default("allowed_origins")
    def _allowed_origins_default(self) -> list[str]:
        return list(Settings.from_env().allowed_origins)

    @default("blocked_origins")
    def _blocked_origins_default(self) -> list[str]:
        return list(Settings.from_env().blocked_origins)

    @default("discovery_learn")
    def _discovery_learn_default(self) -> bool:
        return Settings.from_env().discovery_learn

    @default("caps")
    def _caps_default(self) -> list[str]:
        return list(Settings.from_env().caps)

    @default("dialog_policy")
    def _dialog_policy_default(self) -> str:
        return Settings.from_env().dialog_policy

    @validate(*SETTINGS_TRAITS)
    def _setting_valid(self, proposal: dict[str, Any]) -> Any:
        """A value checked as :class:`~ocnb.settings.Settings` checks it (caps: by the registry), normalised."""
        name = proposal["trait"].name
        try:
            value = sorted(check_caps(proposal["value"])) if name == "caps" else check_setting(name, proposal["value"])
        except Exception as exc:  # noqa: BLE001 - refused: %config shows why, naming the trait
            raise TraitError(f"OcMagics.{name}: {getattr(exc, 'message', exc)}") from None
        return list(value) if isinstance(value, tuple) else value

    @observe(*SETTINGS_TRAITS)
    def _setting_changed(self, change: dict[str, Any]) -> None:
        """A trait's new value on the live session (a browser already running keeps ``_NEXT_BROWSER``'s)."""
        s = self._existing()
        if s is None:
            return
        name = change["name"]
        if name in _NEXT_BROWSER and s.started:
            print(f"{name} applies to the next browser: run %oc close, then any %oc call", file=sys.stderr)
            if name == "headless":
                return
        s.configure(**{name: change["new"]})

    @observe("show_screenshots")
    def _screenshots_changed(self, change: dict[str, Any]) -> None:
        _display.options.inline_images = change["new"]

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        self.last_results: list[ToolResult] = []
        self._mcp_server: Any = None
        _display.options.inline_images = self.show_screenshots

    # -- the session --------------------------------------------------------------------------
    def session_options(self) -> SessionOptions:
        """These settings (and ``secrets``) as the :class:`~ocnb.settings.SessionOptions` of a new session."""
        values: dict[str, Any] = {name: getattr(self, name) for name in SETTINGS_TRAITS}
        labels = {name: f"OcMagics.{name}" for name in (*SETTINGS_TRAITS, "secrets")}
        return SessionOptions.resolve({**values, "secrets": self.secrets}, labels=labels)

    def session(self) -> Session:
        """The shared default session, created from these settings on first use."""
        existing = self._existing()  # every %oc line asks: an open session is returned as it is
        return existing if existing is not None else build_session(self.session_options(), default=True)

    def _existing(self) -> Session | None:
        # ocnb.session is shadowed by the function of that name in the package namespace.
        s = importlib.import_module("ocnb.session")._DEFAULT
        return s if s is not None and not s.closed else None

    # -- magics -------------------------------------------------------------------------------
    @line_magic("oc")  # type: ignore[arg-type]  # IPython types the decorator for plain functions
    def oc(self, line: str) -> Any:
        """Run one ocnb tool: ``%oc TOOL [VALUE] [--name value ...]``; ``%oc help`` for more."""
        words = line.split(None, 1)
        head = words[0] if words else ""
        rest = words[1] if len(words) > 1 else ""
        if head == "help":
            print(self._help(rest.strip()))
            return None
        if head == "tools":
            print(tool_list(self.session().registry))
            return None
        if head == "mcp":
            return self._mcp(rest)
        if head == "record":  # a person's demonstration: offers the opt-in group record on first use
            call = parse_record(rest)
            offer_group(self.session(), "record")
            result = self.run_call(call)
            if not result.ok:
                raise UsageError(result.summary_line())
            return result
        if head in ("approve", "deny", "approvals", "pick"):
            return self._desk(head, rest.strip())
        if head == "close":
            server, self._mcp_server = self._mcp_server, None
            print(close_command(self._existing(), server))
            return None
        result = self.run_call(parse_call(line, self.session().registry))
        if not result.ok:
            if _needs_human(result):  # a person picks the element in the cell, instead of an error
                return self.handoff_widget(result)
            if result.error is not None and result.error.code == "APPROVAL_REQUIRED":
                return self.handoff_widget(result)  # Approve / Deny in the cell; then its outcome, no error block
            raise UsageError(result.summary_line())
        rows = result.df  # rows (extract) show as their DataFrame, and `_` holds it
        return result if rows is None else rows

    def handoff_widget(self, result: ToolResult) -> Any:
        """The :class:`~ocnb.widgets.handoff.HumanHandoff` for a ``NEEDS_HUMAN`` or ``APPROVAL_REQUIRED``
        result, on this session.

        ``r = %oc click "Delete"`` sets ``r`` to it; ``r.result`` is the resumed (or approved) call's result.
        """
        from .widgets.handoff import HumanHandoff

        return HumanHandoff(result, self.session())

    def _desk(self, head: str, rest: str) -> Any:
        """``%oc approvals`` (the desk widget), ``%oc approve ID``, ``%oc deny ID``, ``%oc pick ID N``
        (an agent's hand-off: its candidate N) — decided by ``notebook``."""
        s = self.session()
        if head == "approvals":
            if rest:
                raise UsageError("usage: %oc approvals")
            from .widgets.desk import ApprovalDesk

            return ApprovalDesk(s)
        if head == "pick":  # an agent's hand-off waiting at the desk: its candidate N (or ref)
            parts = rest.split()
            if len(parts) != 2:
                raise UsageError(
                    "usage: %oc pick ID N (the hand-off's id and candidate number; %oc approvals lists them)"
                )
            choice: int | str = int(parts[1]) if parts[1].isdigit() else parts[1]
            try:
                picked = s.approvals.pick(parts[0], choice, by="notebook")
            except OcnbError as exc:
                raise UsageError(f"{exc.code}: {exc.message}") from None
            print(f"{parts[0]}: picked {picked['ref']}; the agent's call goes on")
            return None
        if not rest or len(rest.split()) != 1:
            raise UsageError(f"usage: %oc {head} ID (the approval_id; %oc approvals lists them)")
        try:
            out = s.approvals.answer(rest, head == "approve", by="notebook")
        except OcnbError as exc:
            raise UsageError(f"{exc.code}: {exc.message}") from None
        rerun = out.get("rerun")
        if rerun is not None:  # a held call of the person's: run it again, now settled
            result = dispatch(s, rerun["tool"], rerun["args"], source="magic")
            if not result.ok:
                raise UsageError(result.summary_line())
            return result
        print(f"{rest} {'approved' if head == 'approve' else 'denied'}: the agent's call goes on")
        return None

    def run_call(self, call: Call) -> ToolResult:
        """The one library call behind every line: dispatch on the shared session as ``magic``."""
        result = dispatch(self.session(), call.tool, call.args, source="magic")
        self.last_results = [result]
        return result

    @cell_magic("oc")  # type: ignore[arg-type]
    def oc_cell(self, line: str, cell: str) -> pd.DataFrame:
        """Run one ``%oc`` call per line, in order, stopping at the first failure.

        ``%%oc --keep-going`` runs every line. Returns a DataFrame of the steps (``status`` ok,
        failed or skipped); the results themselves are in ``OcMagics.last_results``.
        """
        opts = line.split()
        if any(o != "--keep-going" for o in opts):
            raise UsageError("usage: %%oc [--keep-going], then one %oc call per line")
        keep_going = "--keep-going" in opts
        registry = self.session().registry
        steps: list[tuple[str, Call]] = []
        for raw in cell.splitlines():
            text = raw.strip()
            if not text or text.startswith("#"):
                continue
            text = expand(self.shell, text.removeprefix("%oc").strip())
            try:
                steps.append((text, parse_call(text, registry)))
            except UsageError as exc:
                raise UsageError(f"line {text!r}: {exc}; nothing was run") from None
        return self._run_steps(steps, keep_going)

    def _run_steps(self, steps: list[tuple[str, Call]], keep_going: bool) -> pd.DataFrame:
        import pandas as pd
        from tqdm.auto import tqdm

        rows: list[dict[str, Any]] = []
        self.last_results = []
        failed = False
        bar = tqdm(total=len(steps), desc="%%oc", unit="call", disable=not self.progress or not steps)
        try:
            for i, (text, call) in enumerate(steps, 1):
                row: dict[str, Any] = {"step": i, "line": text, "tool": call.tool}
                if failed and not keep_going:
                    rows.append({**row, "status": "skipped"})
                    continue
                bar.set_postfix_str(call.tool, refresh=False)
                t0 = time.perf_counter()
                result = dispatch(self.session(), call.tool, call.args, source="magic")
                self.last_results.append(result)
                row["duration_ms"] = round((time.perf_counter() - t0) * 1000, 1)
                row["ok"] = result.ok
                if result.ok:
                    row["status"] = "ok"
                else:
                    assert result.error is not None
                    row.update(status="failed", error_code=result.error.code, message=result.error.message)
                    if _needs_human(result):
                        from IPython.display import display

                        display(self.handoff_widget(result))
                    elif not failed:
                        print(f"step {i} failed: {result.summary_line()}", file=sys.stderr)
                    failed = True
                rows.append(row)
                bar.update(1)
        finally:
            bar.close()
        columns = {
            "step": "Int64",
            "line": "string",
            "tool": "string",
            "status": "string",
            "ok": "boolean",
            "error_code": "string",
            "message": "string",
            "duration_ms": "Float64",
        }
        df = pd.DataFrame(rows, columns=list(columns))
        return df.astype(columns)

    # -- help, MCP ----------------------------------------------------------------------------
    def _help(self, name: str) -> str:
        return help_text(name, self.session().registry)

    def _mcp(self, rest: str) -> Any:
        shown, self._mcp_server = mcp_command(rest, self._mcp_server, self.session)
        return shown

    # -- completion ---------------------------------------------------------------------------
    def completions(self, text_until_cursor: str) -> tuple[list[str], str]:
        """Completions for the word being typed on a ``%oc`` line, and that word."""
        words = text_until_cursor.split()
        if text_until_cursor[-1:].isspace() or not words:
            words.append("")
        current = words[-1]
        before = words[1:-1] if words and words[0] in ("%oc", "%%oc") else words[:-1]
        if words[0] in ("%oc", "%%oc") and len(words) == 1:
            return [], current
        existing = self._existing()  # completing must not create a session
        registry = existing.registry if existing is not None else Registry(caps=self.caps)
        if not before:
            names = [*registry.names(), *VERBS, *COMMANDS]
            return sorted(n for n in set(names) if n.startswith(current)), current
        head = before[0]
        if head in ("help",) and len(before) == 1:
            return sorted(n for n in {*registry.names(), *VERBS} if n.startswith(current)), current
        if head == "mcp" and len(before) == 1:
            return [s for s in MCP_SUBCOMMANDS if s.startswith(current)], current
        if head == "record" and len(before) == 1:
            return [s for s in RECORD_SUBCOMMANDS if s.startswith(current)], current
        tool = VERBS[head][0] if head in VERBS else head
        tooldef = registry.get(tool)
        if tooldef is None or not current.startswith("-"):
            return [], current
        given = {w[2:].split("=")[0] for w in before if w.startswith("--")}
        props = tooldef.input_schema.get("properties", {})
        fixed = VERBS[head][1] if head in VERBS else {}
        return sorted(f"--{p}" for p in props if f"--{p}".startswith(current) and p not in given | set(fixed)), current


def _needs_human(result: ToolResult) -> bool:
    return result.error is not None and result.error.code == "NEEDS_HUMAN"


def _make_matcher(magics: OcMagics) -> Any:
    @context_matcher()
    def oc_matcher(context: Any) -> dict[str, Any]:
        text = context.text_until_cursor
        lines = context.full_text.split("\n")
        in_cell = context.cursor_line > 0 and lines[0].lstrip().startswith("%%oc")
        stripped = text.lstrip()
        if not (stripped.startswith("%oc ") or stripped.startswith("%%oc ") or in_cell):
            return {"completions": [], "suppress": False}
        if in_cell and not stripped.startswith("%"):
            stripped = "%oc " + stripped
        matches, word = magics.completions(stripped)
        return {
            "completions": [SimpleCompletion(m, type="ocnb") for m in matches],
            "matched_fragment": word,
            "suppress": bool(matches) or word.startswith("-"),
        }

    return oc_matcher


def load_ipython_extension(ip: Any) -> None:
    """``%load_ext ocnb``: register ``%oc``/``%%oc``, their settings and their completer.

    Loaded again (``%load_ext ocnb.magics`` after ``%load_ext ocnb``, or ``%reload_ext``), the new
    magics take over the MCP server the old ones started and their results: ``%oc mcp stop`` still
    reaches a server an agent is connected to.
    """
    before = ip.magics_manager.registry.get("OcMagics")
    magics = OcMagics(shell=ip)
    if before is not None:
        magics._mcp_server = getattr(before, "_mcp_server", None)
        magics.last_results = getattr(before, "last_results", [])
    ip.register_magics(magics)
    completer = getattr(ip, "Completer", None)
    if completer is not None:
        completer.custom_matchers = [m for m in completer.custom_matchers if getattr(m, "__name__", "") != "oc_matcher"]
        completer.custom_matchers.append(_make_matcher(magics))
