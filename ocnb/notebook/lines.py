"""A ``%oc`` line as a tool call, and the help the magics print: pure functions, testable without a kernel.

:func:`parse_call` turns a line (already ``$``-expanded) into a :class:`Call`; :func:`tool_help`,
:func:`tool_list` and :func:`help_text` are computed from the registry. Malformed input raises
:class:`~IPython.core.error.UsageError`, which a notebook shows as one line.
"""

from __future__ import annotations

import difflib
import json
import re
import shlex
import textwrap
from dataclasses import dataclass, field
from typing import Any

from .._extras import extra

with extra("notebook"):
    from IPython.core.error import UsageError
    from IPython.utils.text import DollarFormatter

from ..perception.refs import REF_PATTERN
from ..registry import Registry, ToolDef

__all__ = [
    "COMMANDS",
    "RECORD_SUBCOMMANDS",
    "RECORD_USAGE",
    "USAGE",
    "VERBS",
    "Call",
    "coerce_value",
    "expand",
    "help_text",
    "offer_group",
    "parse_call",
    "parse_record",
    "positional_names",
    "split_tokens",
    "suggest",
    "tool_help",
    "tool_list",
]

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
COMMANDS = ("help", "tools", "mcp", "record", "close", "approve", "deny", "approvals", "pick")
#: ``%oc record …``: a person's demonstration (the opt-in tool group ``record``, offered on first use).
RECORD_SUBCOMMANDS = ("start", "status", "stop")
RECORD_USAGE = (
    "usage: %oc record start [--secret-fields FIELD ...] | %oc record status | "
    "%oc record stop [--name NAME] [--description TEXT] [--params FIELD=NAME ...] [--secrets FIELD=NAME ...] "
    "[--contract-id ID] [--discard]"
)

# A verb's target that looks like a ref (``ax_12``) is passed as ``ref``, anything else as ``query``.
_NUMBER = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?$")
USAGE = (
    "usage: %oc TOOL [VALUE ...] [--name value ...] | %oc click|fill|press|read|shot ... | "
    "%oc help [TOOL] | %oc tools | %oc discover QUERY | %oc mcp start|status|stop|pause|resume | "
    "%oc record start|status|stop | %oc approvals | %oc approve ID | %oc deny ID | %oc pick ID N | %oc close"
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


def suggest(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=3)
    return f" (did you mean {', '.join(close)}?)" if close else ""


def split_tokens(tokens: list[str]) -> tuple[list[str], list[tuple[str, str | None]]]:
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


def _quote_hint(positionals: list[str], places: int) -> str:
    """Why a line has more words than ``places`` and what to write instead: a value with spaces, or a
    JSON object, is one argument only inside quotes (the line is split as a shell splits it)."""
    n = len(positionals)
    said = f"the line has {n} word{'s' if n != 1 else ''} there ({' '.join(positionals)!r})"
    if any(w[:1] in "{[" or w[-1:] in "}]" for w in positionals):
        return (
            f"{said}: a JSON object or list is one argument only when quoted whole, with single quotes "
            """outside and double quotes inside, e.g. --fields '{"title": "h2"}'"""
        )
    if places == 0:
        return f'{said}: quote a value with spaces (--name "two words")'
    keep = positionals[: places - 1]
    example = " ".join([*keep, '"' + " ".join(positionals[places - 1 :]) + '"'])
    return f"{said}: quote a value with spaces to keep it one argument, e.g. {example}"


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
        raise UsageError(USAGE)
    head, rest = tokens[0], tokens[1:]
    positionals, flags = split_tokens(rest)
    args: dict[str, Any] = {}
    if head in VERBS:
        tool, fixed, slots = VERBS[head]
        args.update(fixed)
        tooldef = registry.get(tool)
        given = [name for name, _ in flags if name in ("ref", "query")]
        if len(given) > 1:
            raise UsageError(f"give the target once: --{given[0]} or --{given[1]}, not both")
        if given:  # `%oc click --ref ax_70` is `%oc click ax_70`: the flag fills the target's place
            if "target" in slots and len(positionals) == len([s for s in slots if not s.endswith("?")]):
                raise UsageError(f"give the target once: {positionals[0]!r} or --{given[0]}, not both")
            slots = tuple(s for s in slots if s.rstrip("?") != "target")
        needed = [s for s in slots if not s.endswith("?")]
        if len(positionals) < len(needed) or len(positionals) > len(slots):
            shown = " ".join(s.rstrip("?").upper() if not s.endswith("?") else f"[{s[:-1].upper()}]" for s in slots)
            usage = f"usage: %oc {head} {shown} [--name value ...]".replace("  ", " ")
            if len(positionals) > len(slots):
                usage += "; " + _quote_hint(positionals, len(slots))
            raise UsageError(usage)
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
            raise UsageError(f"UNKNOWN_TOOL: no tool {tool!r}{suggest(tool, registry.names())}; %oc tools lists them")
        slots_ = positional_names(tooldef)
        if len(positionals) > len(slots_):
            what = ", ".join(slots_) if slots_ else "no value"
            raise UsageError(
                f"{tool} takes {what} positionally, but {_quote_hint(positionals, len(slots_))}; give other "
                f"arguments as --name value (see %oc help {tool})"
            )
        args.update(dict(zip(slots_, positionals, strict=False)))
    props = tooldef.input_schema.get("properties", {}) if tooldef else {}
    closed = tooldef is not None and tooldef.input_schema.get("additionalProperties") is False
    for name, raw in flags:
        if closed and name not in props:
            raise UsageError(f"{tool} has no argument --{name}{suggest(name, list(props))}; see %oc help {tool}")
        if raw is None:
            if props.get(name) and "boolean" not in _types(props[name]):
                raise UsageError(f"--{name} needs a value")
            args[name] = True
        else:
            args[name] = coerce_value(tooldef, name, raw)
    return Call(tool, args)


def parse_record(line: str) -> Call:
    """``%oc record start|status|stop …`` as a call of ``record_start``, ``record_status`` or ``record_stop``.

    ``--params`` and ``--secrets`` take ``FIELD=NAME`` pairs (several after one flag, or the flag
    repeated); ``--secret-fields`` takes field names. UsageError when malformed.
    """
    try:
        tokens = shlex.split(line, comments=False, posix=True)
    except ValueError as exc:
        raise UsageError(f"cannot parse the line: {exc}") from None
    if not tokens or tokens[0] not in RECORD_SUBCOMMANDS:
        raise UsageError(RECORD_USAGE)
    sub, rest = tokens[0], tokens[1:]
    allowed = {
        "start": ("secret_fields",),
        "status": (),
        "stop": ("name", "description", "params", "secrets", "contract_id", "discard"),
    }
    args: dict[str, Any] = {}
    flag: str | None = None
    for tok in rest:
        if tok.startswith("--") and len(tok) > 2:
            name, eq, value = tok[2:].partition("=")
            flag = name.replace("-", "_")
            if flag not in allowed[sub]:
                raise UsageError(f"%oc record {sub} has no --{name}{suggest(flag, list(allowed[sub]))}; {RECORD_USAGE}")
            if flag == "discard":
                args["discard"], flag = True, None
            elif eq:
                _record_value(args, flag, value)
                flag = flag if flag in ("params", "secrets", "secret_fields") else None
            continue
        if flag is None:
            raise UsageError(f"unexpected {tok!r}; {RECORD_USAGE}")
        _record_value(args, flag, tok)
        if flag not in ("params", "secrets", "secret_fields"):
            flag = None
    return Call(f"record_{sub}", args)


def _record_value(args: dict[str, Any], flag: str, value: str) -> None:
    if flag in ("params", "secrets"):
        field_, eq, name = value.partition("=")
        if not eq or not field_ or not name:
            raise UsageError(f"--{flag} takes FIELD=NAME pairs (got {value!r})")
        args.setdefault(flag, {})[field_] = name
    elif flag == "secret_fields":
        args.setdefault(flag, []).append(value)
    else:
        args[flag] = value


def offer_group(session: Any, group: str) -> None:
    """Offer the opt-in tool group ``group`` on ``session`` if it does not yet (a person asked for it)."""
    if group not in session.registry.caps:
        session.configure(caps=(*session.settings.caps, group))


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


def tool_list(registry: Registry) -> str:
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


def expand(shell: Any, text: str) -> str:
    """``$var``/``{expr}`` expansion against the user namespace, as IPython does for line magics."""
    try:
        return DollarFormatter().vformat(text, args=[], kwargs=dict(shell.user_ns))
    except Exception:  # noqa: BLE001 - IPython leaves the text unchanged when expansion fails
        return text


def help_text(name: str, registry: Registry) -> str:
    """``%oc help [NAME]``: the usage and short verbs, or one tool's (or verb's) help."""
    if not name:
        verbs = "\n".join(
            f"  %oc {v} {' '.join(s.rstrip('?').upper() for s in slots)}".rstrip() + f"  → {tool} {fixed or ''}"
            for v, (tool, fixed, slots) in VERBS.items()
        )
        return f"{USAGE}\n\nshort verbs:\n{verbs}\n\n%%oc runs one call per line and returns a DataFrame."
    if name in VERBS:
        name = VERBS[name][0]
    tooldef = registry.get(name)
    if tooldef is None:
        raise UsageError(f"UNKNOWN_TOOL: no tool {name!r}{suggest(name, registry.names())}")
    return tool_help(tooldef)
