"""Generate ``docs/agent/capability-map.md`` from the tool registry, and guard it against drift.

``ocnb capability-map --print`` (or :func:`ocnb.capability_map` in Python) gives the map's text from
the installed package, which is all a pip user has. In a source checkout ``ocnb capability-map`` (or
``python -m ocnb.commands.capmap``) writes the checkout's ``docs/agent/capability-map.md`` whatever the working
folder; elsewhere writing needs ``--path FILE``. ``--check`` exits 1 when the file differs from a fresh
generation. The map is one line per tool, grouped by category, meant to be loaded as a system-prompt
preamble so a model can choose a tool without the full schemas.

Excluded on purpose: meta-tools that exist only to discover other tools (:data:`EXCLUDED`). A map
that lists them would describe the discovery mechanism instead of the capabilities, and in
discovery mode they are the only tools a model starts with anyway.

The output is deterministic to the byte (sorted, LF endings, one trailing newline) and capped, both
enforced here: the default map (what a session offers without ``caps``) ≤ 4,096 bytes and ≤ 1,000
cl100k tokens; the full map (``--all-groups``, every opt-in group too, checked in beside it as
``capability-map-all.md``) ≤ 8,192 bytes and ≤ 2,000 tokens. Over a cap, the error names the longest
summaries to shorten (a summary is the first sentence of the tool's description).
No runtime module imports this generator at import time (:func:`ocnb.capability_map` does on call).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..registry import Registry, ToolDef, capability_groups

__all__ = [
    "EXCLUDED",
    "FULL_BYTES",
    "FULL_TOKENS",
    "all_groups",
    "default_tools",
    "full_path",
    "HARD_BYTES",
    "MAX_TOKENS",
    "TARGET_BYTES",
    "check",
    "checkout_path",
    "generate",
    "main",
    "map_names",
    "write",
]

#: Meta-tools that exist to discover other tools; not capabilities themselves.
EXCLUDED = frozenset({"expand_tools", "discover_capabilities"})
#: The default map's caps (it is loaded into every prompt): bytes and cl100k tokens. ``HARD_BYTES`` is
#: kept as a name for the same byte cap.
TARGET_BYTES = HARD_BYTES = 4096
MAX_TOKENS = 1000
#: The full map's caps (``--all-groups``): read on request, so it may be twice the default.
FULL_BYTES = 8192
FULL_TOKENS = 2000
DEFAULT_PATH = Path("docs/agent/capability-map.md")
DRIFT_MESSAGE = "capability-map drift — run `ocnb capability-map` and commit the result"


class CapsExceeded(ValueError):
    """The generated map is over the hard byte ceiling or the token cap."""


def _type(schema: dict[str, Any]) -> str:
    """The parameter's type as the map writes it; ``""`` for a plain string (the header says so)."""
    if schema.get("type") == "string" and "enum" not in schema:
        return ""
    if "enum" in schema and len(schema["enum"]) <= 3:
        return "|".join(str(v) for v in schema["enum"])
    t = schema.get("type")
    if isinstance(t, list):
        return "|".join(str(x) for x in t)
    alternatives = schema.get("anyOf") or schema.get("oneOf")
    if not t and alternatives and all(isinstance(a, dict) and isinstance(a.get("type"), str) for a in alternatives):
        return "|".join(a["type"] for a in alternatives)
    if t:
        return str(t)
    if "enum" in schema:
        return "enum"
    if "oneOf" in schema or "anyOf" in schema:
        return "any"
    return "any"


def _params(td: ToolDef) -> str:
    props: dict[str, Any] = td.input_schema.get("properties", {})
    required = set(td.required)
    parts = []
    for name, schema in props.items():
        if (name == "tab_id" and td.uses_page) or name in ("intent", "capture_artifact"):
            continue  # stated once in the header
        kind = _type(schema)
        parts.append(f"{name}{'' if name in required else '?'}{':' + kind if kind else ''}")
    return ", ".join(parts)


def _line(td: ToolDef) -> str:
    marker = f"{td.group}: " if td.group != "core" else ""
    return f"- {marker}{td.name}({_params(td)}): {td.summary}"


def default_tools() -> list[ToolDef]:
    """The tools a session offers without ``caps``: what the checked-in map lists."""
    return list(Registry())


def all_groups() -> list[ToolDef]:
    """The default tools and those of every opt-in capability group."""
    return list(Registry(caps=capability_groups()))


def generate(tools: Iterable[ToolDef] | None = None, *, full: bool = False) -> str:
    """The map's text for ``tools`` (default: the default tool set, as a session without ``caps`` has it).

    A tool of an opt-in capability group is marked with its group (``network: name(...)``). ``full``
    holds the text to the full map's caps (:data:`FULL_BYTES`, :data:`FULL_TOKENS`) instead of the
    default map's.
    """
    chosen = sorted(
        (t for t in (default_tools() if tools is None else tools) if t.name not in EXCLUDED),
        key=lambda t: (t.category, t.name),
    )
    header = (
        "name(args): what it does; `?` = optional, no type = string. Page tools also take tab_id?, "
        "acting tools intent? and capture_artifact?:boolean."
    )
    if any(t.group != "core" for t in chosen):
        header += " `group:` tools need caps=group."
    lines = [
        "<!-- Generated by `ocnb capability-map` from the tool registry; CI checks drift. -->",
        "# ocnb tools",
        header,
    ]
    category = None
    for td in chosen:
        if td.category != category:
            category = td.category
            lines.append(f"## {category}")
        lines.append(_line(td))
    text = "\n".join(lines) + "\n"
    _enforce_caps(text, chosen, full)
    return text


def _enforce_caps(text: str, tools: list[ToolDef], full: bool) -> None:
    """:class:`CapsExceeded` naming the map, its size, its caps and the longest summaries to shorten."""
    from ..tokens import count_text

    size, tokens = len(text.encode("utf-8")), count_text(text)
    max_bytes, max_tokens = (FULL_BYTES, FULL_TOKENS) if full else (HARD_BYTES, MAX_TOKENS)
    if size <= max_bytes and tokens <= max_tokens:
        return
    longest = sorted(tools, key=lambda t: (-len(t.summary), t.name))[:5]
    which = "full capability map (--all-groups)" if full else "default capability map"
    raise CapsExceeded(
        f"the {which} is {size} bytes / {tokens} cl100k tokens; its caps are {max_bytes} bytes and "
        f"{max_tokens} tokens (over by {max(0, size - max_bytes)} bytes / {max(0, tokens - max_tokens)} "
        "tokens). Shorten the first sentence of these tools' descriptions (the map's summary), longest first: "
        + "; ".join(f"{t.name} ({len(t.summary)} chars: {t.summary!r})" for t in longest)
    )


def map_names(text: str) -> set[str]:
    """Tool names listed in a map's text."""
    names = set()
    for line in text.splitlines():
        if line.startswith("- "):
            head = line[2:].split("(", 1)[0]
            names.add(head.rsplit(": ", 1)[-1])  # without a group marker
    return names


def full_path(path: Path) -> Path:
    """Where the full map lives beside the default map at ``path`` (``capability-map-all.md``)."""
    return path.with_name(f"{path.stem}-all{path.suffix}")


def write(path: Path = DEFAULT_PATH) -> Path:
    """Write the default map to ``path`` and the full map (every group) beside it; returns ``path``."""
    default, everything = generate(), generate(all_groups(), full=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(default.encode("utf-8"))
    full_path(path).write_bytes(everything.encode("utf-8"))
    return path


def check(path: Path = DEFAULT_PATH) -> bool:
    """True when the default map at ``path`` and the full map beside it equal a fresh generation byte for
    byte (:class:`CapsExceeded` when either is over its caps)."""
    try:
        return path.read_bytes() == generate().encode("utf-8") and full_path(path).read_bytes() == generate(
            all_groups(), full=True
        ).encode("utf-8")
    except FileNotFoundError:
        return False


def checkout_path() -> Path | None:
    """The map of the source checkout this package runs from, or ``None`` when installed from a wheel."""
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file() and (root / DEFAULT_PATH.parent).is_dir():
        return root / DEFAULT_PATH
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="ocnb capability-map",
        description="Print, write or check the capability map (one line per tool) generated from the tool registry.",
        epilog="In Python: ocnb.capability_map() returns the same text as --print.",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--print", action="store_true", help="write the map to stdout (works from an installed package)")
    parser.add_argument(
        "--all-groups", action="store_true", help="with --print: list every opt-in capability group's tools too"
    )
    mode.add_argument("--check", action="store_true", help="exit 1 if the map at --path has drifted")
    parser.add_argument(
        "--path",
        type=Path,
        help="the file to write or check (default: docs/agent/capability-map.md of the source checkout; "
        "required outside one)",
    )
    ns = parser.parse_args(argv)
    if ns.print:
        try:
            sys.stdout.write(generate(all_groups(), full=True) if ns.all_groups else generate())
        except CapsExceeded as exc:
            print(f"ocnb capability-map: {exc}", file=sys.stderr)
            return 2
        return 0
    if ns.path is None:
        ns.path = checkout_path()
        if ns.path is None:
            print(
                "ocnb capability-map: not running from a source checkout, so there is no docs/agent/ to "
                "write into; use --print to read the map, or --path FILE to write it",
                file=sys.stderr,
            )
            return 2
    try:
        if ns.check:
            if not check(ns.path):
                print(DRIFT_MESSAGE, file=sys.stderr)
                return 1
            print(f"capability map up to date: {ns.path}")
            return 0
        path = write(ns.path)
    except CapsExceeded as exc:
        print(f"ocnb capability-map: {exc}", file=sys.stderr)
        return 2
    text = path.read_text()
    from ..tokens import count_text

    print(f"wrote {path}: {len(text.encode())} bytes, {count_text(text)} cl100k tokens, {len(map_names(text))} tools")
    text = full_path(path).read_text()
    print(f"wrote {full_path(path)}: {len(text.encode())} bytes, {count_text(text)} cl100k tokens (all groups)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
