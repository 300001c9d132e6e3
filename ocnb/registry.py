"""The tool registry: every tool is a :class:`ToolDef` (data plus an async handler).

Tool modules declare tools with the :func:`tool` decorator. The registry names none of them: the
package hands it the catalogue of tool modules (``ocnb/tools/__init__.py``) with :func:`use_catalogue`,
imported the first time the tools are asked for. A :class:`Registry` is a filtered view of all
declared tools: the default surface (group ``core``) always, and each opt-in capability group a
session asks for (``Session(caps=("network",))``, ``OCNB_CAPS``, ``ocnb mcp --caps``). Everything
generated from tools (Session methods, MCP ``tools/list``, the capability map, magic help) reads a
Registry.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .errors import InvalidArgument
from .results import ToolError

__all__ = [
    "INTENT_SCHEMA",
    "Registry",
    "ToolDef",
    "all_tooldefs",
    "build_registry",
    "capability_groups",
    "internal_tooldef",
    "tool",
    "use_catalogue",
]

Handler = Callable[[Any, dict[str, Any]], Awaitable[Any]]

#: Schema of the optional ``intent`` argument of acting tools: the published contract. dispatch
#: checks it before the schema, so that a bad intent gets ``INVALID_INTENT`` (and no journal line)
#: rather than ``INVALID_ARGUMENT``; ``dispatch.INTENT_MAX`` is the same 120.
#: (The tool's description carries the explanation, in :data:`INTENT_LINE`.)
INTENT_SCHEMA: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": 120}
#: The name says it all; every byte here is repeated in ~30 schemas an agent reads.
TAB_ID_SCHEMA: dict[str, Any] = {"type": "string"}
INTENT_LINE = "Pass intent (why you act) for the audit log."  # its length limit is in the schema

_SENTENCE_END = re.compile(r"[.!?]\s")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.")


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (not fooled by e.g., i.e., etc.)."""
    text = " ".join(text.split())
    for m in _SENTENCE_END.finditer(text):
        head = text[: m.start() + 1]
        if not head.endswith(_ABBREVIATIONS):
            return head
    return text


@dataclass(frozen=True)
class ToolDef:
    """One tool: its public contract (name, description, JSON Schema) and its handler."""

    name: str
    description: str
    input_schema: dict[str, Any]
    category: str
    handler: Handler = field(compare=False, repr=False)
    #: ``core`` (always offered) or the name of the opt-in capability group the tool belongs to.
    group: str = "core"
    side_effects: bool = False
    #: The tool acts on a page and takes ``tab_id``.
    uses_page: bool = True
    #: Optional argument check ``check(config, args)`` run before the browser is touched;
    #: it raises an :class:`~ocnb.errors.OcnbError` (e.g. ``BLOCKED_URL``) to refuse the call.
    check: Callable[[Any, dict[str, Any]], None] | None = field(default=None, compare=False, repr=False)
    #: ``failure_data(args, error)``: the data a failed call of this tool carries when it carries none
    #: (a replay's ``{ok: false, failure}`` even when it was refused before it ran). Dispatch applies it
    #: to this tool's calls only, before the session's after-hooks.
    failure_data: Callable[[dict[str, Any], ToolError], Any] | None = field(default=None, compare=False, repr=False)
    #: A tool that finds other tools: ``reveals(data)`` names the tools a successful result found. A face
    #: that offers tools step by step (MCP discovery mode) starts with such tools and adds the ones named.
    reveals: Callable[[Any], Iterable[str]] | None = field(default=None, compare=False, repr=False)
    #: Example requests in a user's words; capability discovery matches them beside the description
    #: (never shown in ``tools/list`` or the capability map).
    examples: tuple[str, ...] = field(default=(), compare=False)
    #: The parts of a result a page controls: keys of ``data``, or ``error.message`` / ``error.details``.
    #: A face that hands results to a model fences them (:mod:`ocnb.audit.fence`).
    page_text: tuple[str, ...] = field(default=(), compare=False)

    @property
    def summary(self) -> str:
        """The description's first sentence: the one-line summary."""
        return first_sentence(self.description)

    @property
    def accepts_intent(self) -> bool:
        return "intent" in self.input_schema.get("properties", {})

    @property
    def required(self) -> list[str]:
        return list(self.input_schema.get("required", []))

    def to_mcp(self) -> dict[str, Any]:
        """The tool as MCP ``tools/list`` shows it (name, description, inputSchema)."""
        return {"name": self.name, "description": self.description, "inputSchema": self.input_schema}


_ALL: dict[str, ToolDef] = {}
#: Tools no face offers, run by dispatch for replay calls only (``@tool(internal=True)``).
_INTERNAL: dict[str, ToolDef] = {}
_CATALOGUE: Callable[[], object] | None = None
_LOADED = False
_LOAD_LOCK = threading.Lock()


def tool(
    *,
    name: str,
    description: str,
    category: str,
    schema: dict[str, Any] | None = None,
    properties: dict[str, Any] | None = None,
    required: list[str] | tuple[str, ...] = (),
    side_effects: bool = False,
    group: str = "core",
    uses_page: bool = True,
    intent: bool = False,
    check: Callable[[Any, dict[str, Any]], None] | None = None,
    failure_data: Callable[[dict[str, Any], ToolError], Any] | None = None,
    reveals: Callable[[Any], Iterable[str]] | None = None,
    examples: Iterable[str] = (),
    page_text: Iterable[str] = (),
    internal: bool = False,
) -> Callable[[Handler], Handler]:
    """Declare a tool. Give a full ``schema``, or ``properties`` + ``required`` to build one.

    ``uses_page`` adds the optional ``tab_id`` argument; ``intent`` adds the optional ``intent``
    argument and the standard audit-label line to the description. ``examples`` are requests the
    tool serves, in a user's words, for capability discovery only. ``page_text`` names the parts of
    its result a page controls (keys of ``data``, ``error.message``, ``error.details``), fenced for a model.
    ``failure_data(args, error)``: the data of a failed call that carries none (see :attr:`ToolDef.failure_data`).
    ``internal``: a tool no face offers (not in any registry, ``tools/list``, the capability map or the
    stubs) that dispatch runs only for a call of source ``replay`` (:func:`internal_tooldef`): how a
    replay acts through the same pipeline as every other call.
    """

    def decorate(fn: Handler) -> Handler:
        if schema is not None:
            input_schema = dict(schema)
        else:
            input_schema = {"type": "object", "properties": dict(properties or {}), "additionalProperties": False}
            if required:
                input_schema["required"] = list(required)
        props = input_schema.setdefault("properties", {})
        desc = description.strip()
        if uses_page and "tab_id" not in props:
            props["tab_id"] = TAB_ID_SCHEMA
        if intent:
            props.setdefault("intent", INTENT_SCHEMA)
            if INTENT_LINE not in desc:
                desc = f"{desc} {INTENT_LINE}"
        table = _INTERNAL if internal else _ALL
        existing = _ALL.get(name) or _INTERNAL.get(name)
        if existing is not None and existing.handler is not fn:
            raise ValueError(f"tool {name!r} is declared twice")
        table[name] = ToolDef(
            name=name,
            description=desc,
            input_schema=input_schema,
            category=category,
            handler=fn,
            group=group,
            side_effects=side_effects,
            uses_page=uses_page,
            check=check,
            failure_data=failure_data,
            reveals=reveals,
            examples=tuple(examples),
            page_text=tuple(page_text),
        )
        return fn

    return decorate


def use_catalogue(load: Callable[[], object]) -> None:
    """Say how to declare every tool: ``load()`` imports the tool modules (the package passes an import
    of :mod:`ocnb.tools`). It runs once, the first time :func:`all_tooldefs` is called."""
    global _CATALOGUE
    _CATALOGUE = load


def _load_catalogue() -> None:
    global _LOADED
    with _LOAD_LOCK:
        if not _LOADED and _CATALOGUE is not None:
            _CATALOGUE()
            _LOADED = True


def all_tooldefs() -> list[ToolDef]:
    """Every declared tool of every group, sorted by name."""
    _load_catalogue()
    return [_ALL[k] for k in sorted(_ALL)]


def internal_tooldef(name: str) -> ToolDef | None:
    """The internal tool ``name`` (``@tool(internal=True)``), or None."""
    _load_catalogue()
    return _INTERNAL.get(name)


def capability_groups() -> dict[str, list[str]]:
    """The opt-in capability groups and their tools' names (``core``, always offered, is not one)."""
    groups: dict[str, list[str]] = {}
    for t in all_tooldefs():
        if t.group != "core":
            groups.setdefault(t.group, []).append(t.name)
    return dict(sorted(groups.items()))


def check_caps(caps: Iterable[str]) -> frozenset[str]:
    """``caps`` as a set of known group names; an unknown one is ``INVALID_ARGUMENT`` naming the known."""
    if isinstance(caps, str):
        caps = [c for c in caps.split(",") if c.strip()]
    wanted = frozenset(str(c).strip() for c in caps)
    known = capability_groups()
    unknown = sorted(wanted - set(known) - {"core"})
    if unknown:
        listed = ", ".join(known) or "none are installed"
        raise InvalidArgument(
            f"unknown capability group {unknown[0]!r}; groups: {listed}",
            details={"unknown": unknown, "groups": list(known)},
        )
    return wanted - {"core"}


class Registry:
    """The tools visible to one session (or server); notifies listeners when the set changes."""

    def __init__(self, *, caps: Iterable[str] = ()) -> None:
        self._caps = check_caps(caps)
        self._tools = self._select()
        self._listeners: list[Callable[[], None]] = []

    def _select(self) -> dict[str, ToolDef]:
        return {t.name: t for t in all_tooldefs() if t.group == "core" or t.group in self._caps}

    @property
    def caps(self) -> frozenset[str]:
        """The opt-in capability groups this registry offers besides ``core``."""
        return self._caps

    def set_caps(self, caps: Iterable[str]) -> None:
        """Offer exactly these opt-in groups (checked first); listeners hear about it when the list changes."""
        wanted = check_caps(caps)
        if wanted != self._caps:
            self._caps = wanted
            self._tools = self._select()
            self._changed()

    def on_change(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Register a listener called after the tool set changes; returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _changed(self) -> None:
        for listener in list(self._listeners):
            listener()

    def get(self, name: str) -> ToolDef | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return sorted(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[ToolDef]:
        return iter([self._tools[k] for k in sorted(self._tools)])

    def __len__(self) -> int:
        return len(self._tools)


def build_registry(caps: Iterable[str] = ()) -> Registry:
    """A registry of the default tools plus the opt-in capability groups ``caps``."""
    return Registry(caps=caps)
