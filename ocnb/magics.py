"""IPython magics: ``%oc TOOL ...`` runs any registered tool, ``%%oc`` runs one call per line.

Load with ``%load_ext ocnb``. The magics are a thin face: they parse a line into ``(tool, args)``
(:func:`parse_call`, pure and testable on its own), make one :func:`~ocnb.dispatch.dispatch` call on
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

import difflib
import importlib
import json
import re
import shlex
import sys
import textwrap
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._extras import extra

with extra("notebook"):
    from IPython.core.completer import SimpleCompletion, context_matcher
    from IPython.core.error import UsageError
    from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
    from IPython.utils.text import DollarFormatter
    from traitlets import Bool, Int, List, TraitError, Unicode, default, observe, validate

from . import display as _display
from .dispatch import dispatch
from .origins import OriginPolicy, split_patterns
from .perception.refs import REF_PATTERN
from .registry import Registry, ToolDef, check_caps
from .session import session as default_session
from .settings import CONFIRM_MODES, DIALOG_POLICIES, Settings

if TYPE_CHECKING:
    import pandas as pd

    from .results import ToolResult
    from .session import Session

__all__ = ["COMMANDS", "VERBS", "Call", "OcMagics", "load_ipython_extension", "parse_call", "tool_help"]

#: Short verbs: verb -> (tool, fixed arguments, names of the positional arguments).
VERBS: dict[str, tuple[str, dict[str, Any], tuple[str, ...]]] = {
    "click": ("interact", {"action": "click"}, ("target",)),
    "fill": ("interact", {"action": "fill"}, ("target", "value")),
    "press": ("interact", {"action": "press"}, ("key", "target?")),
    "read": ("read_page", {}, ()),
    "shot": ("page_screenshot", {}, ()),
    "discover": ("discover_capabilities", {}, ("query",)),
}
#: Words of ``%oc`` that are not tools.
COMMANDS = ("help", "tools", "mcp", "close")
MCP_SUBCOMMANDS = ("start", "status", "stop")
#: Where ``%oc mcp start`` keeps the server's token (under the session's home, mode 0600), unless
#: ``--token-file`` says otherwise; the same token after a restart.
MCP_TOKEN_FILE = "mcp/token"

# A verb's target that looks like a ref (``ax_12``) is passed as ``ref``, anything else as ``query``.
_NUMBER = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?$")
_USAGE = (
    "usage: %oc TOOL [VALUE ...] [--name value ...] | %oc click|fill|press|read|shot ... | "
    "%oc help [TOOL] | %oc tools | %oc discover QUERY | %oc mcp start|status|stop | %oc close"
)


@dataclass
class Call:
    """One parsed ``%oc`` line: the tool to run and its arguments."""

    tool: str
    args: dict[str, Any] = field(default_factory=dict)


def _types(prop: dict[str, Any]) -> set[str]:
    t = prop.get("type")
    if isinstance(t, str):
        return {t}
    if isinstance(t, list):
        return set(t)
    return set()


def _looks_like_json(raw: str) -> bool:
    s = raw.strip()
    return bool(s) and (s[0] in '{["' or s in ("true", "false", "null") or bool(_NUMBER.match(s)))


def coerce_value(tooldef: ToolDef | None, name: str, raw: str) -> Any:
    """A flag's value: kept as text for string-only arguments, parsed as JSON when it looks like JSON."""
    prop = (tooldef.input_schema.get("properties", {}).get(name) if tooldef else None) or {}
    if _types(prop) == {"string"} or not _looks_like_json(raw):
        return raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--{name}: not valid JSON ({exc.msg} at position {exc.pos}): {raw}") from None


def _suggest(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=3)
    return f" (did you mean {', '.join(close)}?)" if close else ""


def _split(tokens: list[str]) -> tuple[list[str], list[tuple[str, str | None]]]:
    """Positional tokens, and ``(name, raw value or None for a bare flag)`` pairs, in order."""
    positionals: list[str] = []
    flags: list[tuple[str, str | None]] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.startswith("--") and len(tok) > 2:
            name, eq, value = tok[2:].partition("=")
            name = name.replace("-", "_")
            if eq:
                flags.append((name, value))
            elif i + 1 < len(tokens) and not (tokens[i + 1].startswith("--") and len(tokens[i + 1]) > 2):
                flags.append((name, tokens[i + 1]))
                i += 1
            else:
                flags.append((name, None))
        else:
            positionals.append(tok)
        i += 1
    return positionals, flags


def positional_names(tooldef: ToolDef) -> list[str]:
    """The arguments a line may give positionally: the required string arguments, in schema order."""
    props = tooldef.input_schema.get("properties", {})
    required = set(tooldef.required)
    return [k for k, v in props.items() if k in required and "string" in _types(v)]


def _target(value: str) -> dict[str, str]:
    return {"ref": value} if REF_PATTERN.match(value) else {"query": value}


def parse_call(line: str, registry: Registry) -> Call:
    """Parse a ``%oc`` line (already $-expanded by IPython) into a :class:`Call`; UsageError if malformed."""
    try:
        tokens = shlex.split(line, comments=False, posix=True)
    except ValueError as exc:
        raise UsageError(f"cannot parse the line: {exc}") from None
    if not tokens:
        raise UsageError(_USAGE)
    head, rest = tokens[0], tokens[1:]
    positionals, flags = _split(rest)
    args: dict[str, Any] = {}
    if head in VERBS:
        tool, fixed, slots = VERBS[head]
        args.update(fixed)
        tooldef = registry.get(tool)
        needed = [s for s in slots if not s.endswith("?")]
        if len(positionals) < len(needed) or len(positionals) > len(slots):
            shown = " ".join(s.rstrip("?").upper() if not s.endswith("?") else f"[{s[:-1].upper()}]" for s in slots)
            raise UsageError(f"usage: %oc {head} {shown} [--name value ...]".replace("  ", " "))
        for slot, value in zip(slots, positionals, strict=False):
            slot = slot.rstrip("?")
            if slot == "target":
                args.update(_target(value))
            else:
                args[slot] = value
    else:
        tool = head
        tooldef = registry.get(tool)
        if tooldef is None:
            raise UsageError(f"UNKNOWN_TOOL: no tool {tool!r}{_suggest(tool, registry.names())}; %oc tools lists them")
        slots_ = positional_names(tooldef)
        if len(positionals) > len(slots_):
            what = ", ".join(slots_) if slots_ else "no value"
            raise UsageError(f"{tool} takes {what} positionally; give the rest as --name value (see %oc help {tool})")
        args.update(dict(zip(slots_, positionals, strict=False)))
    props = tooldef.input_schema.get("properties", {}) if tooldef else {}
    closed = tooldef is not None and tooldef.input_schema.get("additionalProperties") is False
    for name, raw in flags:
        if closed and name not in props:
            raise UsageError(f"{tool} has no argument --{name}{_suggest(name, list(props))}; see %oc help {tool}")
        if raw is None:
            if props.get(name) and "boolean" not in _types(props[name]):
                raise UsageError(f"--{name} needs a value")
            args[name] = True
        else:
            args[name] = coerce_value(tooldef, name, raw)
    return Call(tool, args)


def tool_help(tooldef: ToolDef) -> str:
    """Plain-text help for one tool, computed from its description and JSON Schema."""
    props = tooldef.input_schema.get("properties", {})
    required = set(tooldef.required)
    pos = positional_names(tooldef)
    usage = " ".join(
        [f"%oc {tooldef.name}"]
        + [p.upper() for p in pos]
        + [f"--{k} {k.upper()}" for k in props if k in required and k not in pos]
        + (["[--name value ...]"] if set(props) - required else [])
    )
    lines = [usage, ""]
    lines += textwrap.wrap(" ".join(tooldef.description.split()), width=100)
    flags = ("side effects" if tooldef.side_effects else "read-only") + (
        f", capability group {tooldef.group!r}" if tooldef.group != "core" else ""
    )
    lines += ["", f"category: {tooldef.category} ({flags})", "", "arguments:"]
    if not props:
        lines.append("  (none)")
    for name, prop in props.items():
        kind = "|".join(sorted(_types(prop))) or "any"
        if "enum" in prop:
            kind = "|".join(map(str, prop["enum"]))
        extra = "required" if name in required else "optional"
        if "default" in prop:
            extra += f", default {json.dumps(prop['default'])}"
        desc = " ".join(str(prop.get("description", "")).split())
        lines.append(f"  --{name} ({kind}; {extra})" + (f"  {desc}" if desc else ""))
    return "\n".join(lines)


def _tool_list(registry: Registry) -> str:
    by_cat: dict[str, list[ToolDef]] = {}
    for t in registry:
        by_cat.setdefault(t.category, []).append(t)
    width = max((len(t.name) for t in registry), default=0)
    out = []
    for cat in sorted(by_cat):
        out.append(f"{cat}:")
        out += [f"  {t.name:<{width}}  {t.summary}" for t in by_cat[cat]]
    out.append(f"{len(registry)} tools; short verbs: {', '.join(VERBS)}; %oc help TOOL for its arguments")
    return "\n".join(out)


def _expand(shell: Any, text: str) -> str:
    """``$var``/``{expr}`` expansion against the user namespace, as IPython does for line magics."""
    try:
        return DollarFormatter().vformat(text, args=[], kwargs=dict(shell.user_ns))
    except Exception:  # noqa: BLE001 - IPython leaves the text unchanged when expansion fails
        return text


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

    @default("confirm")
    def _confirm_default(self) -> str:
        return Settings.from_env().confirm

    @validate("confirm")
    def _confirm_valid(self, proposal: dict[str, Any]) -> str:
        value = str(proposal["value"]).strip().lower()
        if value not in CONFIRM_MODES:
            raise TraitError(f"OcMagics.confirm must be one of {', '.join(CONFIRM_MODES)}, not {value!r}")
        return value

    @default("risky_words")
    def _risky_words_default(self) -> list[str]:
        return list(Settings.from_env().risky_words)

    @observe("confirm", "risky_words")
    def _approval_changed(self, change: dict[str, Any]) -> None:
        s = self._existing()
        if s is not None:
            s.configure(**{change["name"]: change["new"]})

    allowed_origins = List(
        Unicode(),
        help="Origins the browser may reach (https://example.com, https://*.example.org, http://localhost:*).",
    ).tag(config=True)
    blocked_origins = List(Unicode(), help="Origins the browser may not reach (wins over allowed_origins).").tag(
        config=True
    )

    @default("allowed_origins")
    def _allowed_origins_default(self) -> list[str]:
        return list(Settings.from_env().allowed_origins)

    @default("blocked_origins")
    def _blocked_origins_default(self) -> list[str]:
        return list(Settings.from_env().blocked_origins)

    @validate("allowed_origins", "blocked_origins")
    def _origins_valid(self, proposal: dict[str, Any]) -> list[str]:
        try:
            OriginPolicy(proposal["value"])  # a malformed pattern raises, naming it
        except Exception as exc:  # noqa: BLE001 - a malformed pattern: say which
            raise TraitError(f"OcMagics.{proposal['trait'].name}: {exc}") from None
        return list(split_patterns(proposal["value"]))

    @observe("allowed_origins", "blocked_origins")
    def _origins_changed(self, change: dict[str, Any]) -> None:
        s = self._existing()
        if s is None:
            return
        if s.started:
            print(f"{change['name']} applies to the next browser: run %oc close, then any %oc call", file=sys.stderr)
        s.configure(**{change["name"]: change["new"]})

    @default("discovery_learn")
    def _discovery_learn_default(self) -> bool:
        return Settings.from_env().discovery_learn

    @observe("discovery_learn")
    def _discovery_learn_changed(self, change: dict[str, Any]) -> None:
        s = self._existing()
        if s is not None:
            s.configure(discovery_learn=change["new"])

    @default("caps")
    def _caps_default(self) -> list[str]:
        return list(Settings.from_env().caps)

    @validate("caps")
    def _caps_valid(self, proposal: dict[str, Any]) -> list[str]:
        try:
            return sorted(check_caps(proposal["value"]))
        except Exception as exc:  # noqa: BLE001 - an unknown group: say which ones exist
            raise TraitError(f"OcMagics.caps: {exc}") from None

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        self.last_results: list[ToolResult] = []
        self._mcp_server: Any = None
        _display.options.inline_images = self.show_screenshots

    # -- the session --------------------------------------------------------------------------
    def session(self) -> Session:
        """The shared default session, created from these settings on first use."""
        return default_session(
            headless=self.headless,
            caps=self.caps,
            dialog_policy=self.dialog_policy,
            secrets=self.secrets,
            default_timeout_ms=self.default_timeout_ms,
            discovery_learn=self.discovery_learn,
            confirm=self.confirm,
            risky_words=tuple(self.risky_words),
            handoff=self.handoff,
            allowed_origins=self.allowed_origins,
            blocked_origins=self.blocked_origins,
        )

    @observe("handoff")
    def _handoff_changed(self, change: dict[str, Any]) -> None:
        s = self._existing()
        if s is not None:
            s.configure(handoff=change["new"])

    def _existing(self) -> Session | None:
        # ocnb.session is shadowed by the function of that name in the package namespace.
        s = importlib.import_module("ocnb.session")._DEFAULT
        return s if s is not None and not s.closed else None

    @validate("default_timeout_ms")
    def _timeout_valid(self, proposal: dict[str, Any]) -> int:
        if proposal["value"] <= 0:
            raise TraitError("OcMagics.default_timeout_ms must be a positive number of milliseconds")
        return int(proposal["value"])

    @observe("default_timeout_ms")
    def _timeout_changed(self, change: dict[str, Any]) -> None:
        s = self._existing()
        if s is not None:
            s.configure(default_timeout_ms=change["new"])

    @default("dialog_policy")
    def _dialog_policy_default(self) -> str:
        return Settings.from_env().dialog_policy

    @validate("dialog_policy")
    def _dialog_policy_valid(self, proposal: dict[str, Any]) -> str:
        value = str(proposal["value"]).strip().lower()
        if value not in DIALOG_POLICIES:
            raise TraitError(f"OcMagics.dialog_policy must be one of {', '.join(DIALOG_POLICIES)}, not {value!r}")
        return value

    @observe("dialog_policy")
    def _dialog_policy_changed(self, change: dict[str, Any]) -> None:
        s = self._existing()
        if s is not None:
            s.configure(dialog_policy=change["new"])

    @observe("caps")
    def _caps_changed(self, change: dict[str, Any]) -> None:
        s = self._existing()
        if s is not None:
            s.configure(caps=change["new"])

    @observe("headless")
    def _headless_changed(self, change: dict[str, Any]) -> None:
        s = self._existing()
        if s is None:
            return
        if s.started:
            print("headless applies to the next browser: run %oc close, then any %oc call", file=sys.stderr)
        else:
            s.configure(headless=change["new"])

    @observe("show_screenshots")
    def _screenshots_changed(self, change: dict[str, Any]) -> None:
        _display.options.inline_images = change["new"]

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
            print(_tool_list(self.session().registry))
            return None
        if head == "mcp":
            return self._mcp(rest)
        if head == "close":
            if self._mcp_server is not None:
                self._mcp("stop")
            s = self._existing()
            if s is not None:
                s.close()
            return None
        result = self.run_call(parse_call(line, self.session().registry))
        if not result.ok:
            if _needs_human(result):  # a person picks the element in the cell, instead of an error
                return self.handoff_widget(result)
            if self._ask_approval(result):  # APPROVAL_REQUIRED: Approve / Deny in the cell
                return result
            raise UsageError(result.summary_line())
        rows = result.df  # rows (extract) show as their DataFrame, and `_` holds it
        return result if rows is None else rows

    def handoff_widget(self, result: ToolResult) -> Any:
        """The :class:`~ocnb.widgets.handoff.HumanHandoff` for a ``NEEDS_HUMAN`` result, on this session.

        ``r = %oc click "Delete"`` sets ``r`` to it; ``r.result`` is the resumed call's result.
        """
        from .widgets.handoff import HumanHandoff

        return HumanHandoff(result, self.session())

    def _ask_approval(self, result: ToolResult) -> bool:
        """An ``APPROVAL_REQUIRED`` call is shown as the hand-off widget with Approve / Deny (when the
        notebook extra is installed); True when it was shown."""
        if result.error is None or result.error.code != "APPROVAL_REQUIRED":
            return False
        from IPython.display import display  # the notebook extra, which this module needs anyway

        from .widgets.handoff import HumanHandoff

        display(HumanHandoff(result, self.session()))
        return True

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
            text = _expand(self.shell, text.removeprefix("%oc").strip())
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
        registry = self.session().registry
        if not name:
            verbs = "\n".join(
                f"  %oc {v} {' '.join(s.rstrip('?').upper() for s in slots)}".rstrip() + f"  → {tool} {fixed or ''}"
                for v, (tool, fixed, slots) in VERBS.items()
            )
            return f"{_USAGE}\n\nshort verbs:\n{verbs}\n\n%%oc runs one call per line and returns a DataFrame."
        if name in VERBS:
            name = VERBS[name][0]
        tooldef = registry.get(name)
        if tooldef is None:
            raise UsageError(f"UNKNOWN_TOOL: no tool {name!r}{_suggest(name, registry.names())}")
        return tool_help(tooldef)

    def _mcp(self, rest: str) -> Any:
        words = shlex.split(rest)
        sub = words[0] if words else "status"
        if sub not in MCP_SUBCOMMANDS:
            raise UsageError("usage: %oc mcp start [--port N] [--token-file PATH] | status | stop")
        try:
            from . import mcp as ocnb_mcp
        except ImportError as exc:  # says which extra to install
            raise UsageError(str(exc)) from None
        if sub == "start":
            _, flags = _split(words[1:])
            opts = dict(flags)
            if set(opts) - {"port", "host", "token_file"}:
                raise UsageError("usage: %oc mcp start [--port N] [--token-file PATH]")
            if self._mcp_server is not None:
                raise UsageError("an MCP server is already running here; %oc mcp stop first")
            port = int(opts.get("port") or 0)
            s = self.session()
            # the token lives in a 0600 file, and the cell shows its path: a saved notebook holds no token
            token_file = opts.get("token_file") or s.home / MCP_TOKEN_FILE
            try:
                self._mcp_server = ocnb_mcp.serve(s, port=port, token_file=token_file, quiet=True)
            except ocnb_mcp.McpTokenError as exc:
                raise UsageError(str(exc)) from None
            return self._mcp_server  # shown through McpHandle._repr_pretty_: the safe banner
        if sub == "status":
            if self._mcp_server is None:
                print("no MCP server running (%oc mcp start [--port N])")
            else:
                print(json.dumps(self._mcp_server.status(), indent=2))
            return None
        if self._mcp_server is None:
            print("no MCP server running")
            return None
        server, self._mcp_server = self._mcp_server, None
        server.stop()
        print(f"MCP server stopped ({server.url})")
        return None

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
    """``%load_ext ocnb``: register ``%oc``/``%%oc``, their settings and their completer."""
    magics = OcMagics(shell=ip)
    ip.register_magics(magics)
    completer = getattr(ip, "Completer", None)
    if completer is not None:
        completer.custom_matchers = [m for m in completer.custom_matchers if getattr(m, "__name__", "") != "oc_matcher"]
        completer.custom_matchers.append(_make_matcher(magics))
