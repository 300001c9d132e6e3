"""One normalized description of anything an agent can discover: a tool, a skill, a manifest.

Descriptors are built deterministically (same input → equal descriptors, sorted output) from
registry ToolDefs, recorded skills and ``CAPABILITY.yaml`` folders. Full schemas and skill
contents are loaded lazily: the index only needs the short fields.
"""

from __future__ import annotations

import functools
import json
import re
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "CapabilityDescriptor",
    "ManifestError",
    "ManifestWarning",
    "embedding_text",
    "first_sentence",
    "from_manifest",
    "from_skills",
    "from_tooldefs",
]

MANIFEST_FILE = "CAPABILITY.yaml"


class ManifestError(ValueError):
    """A ``CAPABILITY.yaml`` folder that cannot be turned into a descriptor."""


@dataclass(frozen=True)
class CapabilityDescriptor:
    """What the discovery index knows about one capability.

    ``id`` is ``kind:name``. ``full_schema``/``full_content`` are read on first access
    (from memory for tools and skills, from ``schema.json``/``SKILL.md`` for manifests).
    ``composed_with`` holds declared co-use (ids), an addition used by the graph.
    """

    id: str
    kind: str
    name: str
    display_name: str
    description: str
    category: str
    tags: tuple[str, ...] = ()
    required_secrets: tuple[str, ...] = ()
    required_tools: tuple[str, ...] = ()
    available: bool = True
    #: The opt-in capability group of a registry tool (``core``: the default set).
    group: str = "core"
    has_side_effects: bool = False
    source_ref: str = ""
    composed_with: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    #: Example requests it serves, declared (``@tool(examples=...)``, a manifest's ``examples:``).
    examples: tuple[str, ...] = ()
    #: Example requests learned from use (intents of successful calls), oldest first.
    learned: tuple[str, ...] = ()
    _schema_loader: Callable[[], dict[str, Any] | None] | None = field(default=None, repr=False, compare=False)
    _content_loader: Callable[[], str | None] | None = field(default=None, repr=False, compare=False)
    _cache: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def full_schema(self) -> dict[str, Any] | None:
        """The full JSON Schema (tools, manifests with ``schema.json``), loaded once."""
        if "schema" not in self._cache:
            self._cache["schema"] = self._schema_loader() if self._schema_loader else None
        return self._cache["schema"]

    @property
    def full_content(self) -> str | None:
        """The full content (skill steps, a manifest's ``SKILL.md``), loaded once."""
        if "content" not in self._cache:
            self._cache["content"] = self._content_loader() if self._content_loader else None
        return self._cache["content"]


_SENTENCE = re.compile(r"(?<=[.!?])\s")


def first_sentence(text: str) -> str:
    """The first sentence of a description (its one-line summary)."""
    text = " ".join(text.split())
    return _SENTENCE.split(text, maxsplit=1)[0] if text else ""


def _words(name: str) -> str:
    """``FinanceTool`` / ``read_page`` → ``Finance Tool`` / ``read page``."""
    return " ".join(re.sub(r"(?<=[a-z0-9])(?=[A-Z])|[_\-.]", " ", name).split())


def embedding_text(d: CapabilityDescriptor) -> str:
    """Text the retrievers index: names, description, category, tags, parameters, needs.

    Never the full schema and never secret values (only secret names would matter, and those
    are left out too: they describe access, not purpose). Starts ``Name: description`` (the
    display name only when it says more than the name) and leaves out the placeholder
    category ``general``: text shared by every capability only blurs a mean-pooled sentence
    embedding (MiniLM top-1 on MetaTool drops from 0.55 to 0.46 with it).
    """
    head = _words(d.name)
    if d.display_name and _words(d.display_name).lower() != head.lower():
        head += f" ({d.display_name})"
    parts = [f"{head}: {d.description}"]
    if d.category and d.category != "general":
        parts.append(f"Category: {_words(d.category)}.")
    if d.tags:
        parts.append("Use cases: " + ", ".join(_words(t) for t in d.tags) + ".")
    if d.params:
        parts.append("Parameters: " + ", ".join(_words(p) for p in d.params) + ".")
    if d.required_tools:
        parts.append("Uses: " + ", ".join(_words(t.split(":", 1)[-1]) for t in d.required_tools))
    return " ".join(p for p in parts if p)


def _compact_json(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _schema_params(schema: Mapping[str, Any] | None) -> tuple[str, ...]:
    props = (schema or {}).get("properties") or {}
    return tuple(props) if isinstance(props, Mapping) else ()


def _tool_id(name: str) -> str:
    return name if ":" in name else f"tool:{name}"


def from_tooldefs(tooldefs: Iterable[Any]) -> list[CapabilityDescriptor]:
    """Descriptors for registry tools (objects with ``name description input_schema category
    tier side_effects``), sorted by id."""
    out = []
    for td in tooldefs:
        schema = dict(td.input_schema or {})
        out.append(
            CapabilityDescriptor(
                id=f"tool:{td.name}",
                kind="tool",
                name=td.name,
                display_name=_words(td.name),
                description=" ".join((td.description or "").split()),
                category=td.category or "general",
                group=str(getattr(td, "group", "core") or "core"),
                has_side_effects=bool(td.side_effects),
                source_ref=f"registry:{td.name}",
                params=_schema_params(schema),
                examples=tuple(getattr(td, "examples", ()) or ()),
                _schema_loader=functools.partial(dict, schema),
            )
        )
    return sorted(out, key=lambda d: d.id)


def from_skills(skills: Iterable[Mapping[str, Any]]) -> list[CapabilityDescriptor]:
    """Descriptors for recorded skills (``{id, domain, name, description?, steps[{kind,...}]}``).

    ``required_tools`` are the step kinds (each step runs the tool of that name); the steps
    themselves become the lazily rendered full content. Sorted by id.
    """
    out = []
    for skill in skills:
        steps = list(skill.get("steps") or [])
        kinds = sorted(
            {str(s.get("tool") or s.get("kind")) for s in steps if s.get("tool") or s.get("kind")} | {"oc_skill_replay"}
        )
        domain = str(skill.get("domain") or "")
        desc = " ".join(str(skill.get("description") or "").split())
        if not desc:
            desc = f"Recorded skill on {domain}: {len(steps)} steps ({', '.join(kinds)})."
        out.append(
            CapabilityDescriptor(
                id=f"skill:{skill['id']}",
                kind="skill",
                name=str(skill["name"]),
                display_name=_words(str(skill["name"])),
                description=desc,
                category="skills",
                tags=tuple(t for t in (domain,) if t),
                required_tools=tuple(_tool_id(k) for k in kinds),
                source_ref=f"skill:{domain}/{skill['id']}",
                _content_loader=functools.partial(_compact_json, steps),
            )
        )
    return sorted(out, key=lambda d: d.id)


def _str_tuple(value: Any, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ManifestError(f"{key!r} must be a string or a list of strings")


def _read_text(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.is_file() else None


def _read_schema(path: Path) -> dict[str, Any] | None:
    text = _read_text(path)
    return json.loads(text) if text is not None else None


#: The seed's camelCase field names → ours (both spellings are read).
_ALIASES = {
    "displayName": "display_name",
    "requiredSecrets": "required_secrets",
    "requiredTools": "required_tools",
    "composedWith": "composed_with",
    "hasSideEffects": "side_effects",
    "has_side_effects": "side_effects",
    "inputSchema": "input_schema",
    "skillContent": "skill_content",
}
_FIELDS = frozenset(
    "id name kind description display_name category tags required_secrets required_tools composed_with "
    "parameters examples available side_effects input_schema skill_content schema_version version".split()
)


#: libyaml's safe loader when PyYAML was built with it (about 10x faster on many manifests).
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ManifestWarning(UserWarning):
    """A capability manifest was skipped, or one of its fields was unknown or invalid (named in the message)."""


def _warn(path: Path, message: str) -> None:
    warnings.warn(f"{path}: {message}", ManifestWarning, stacklevel=4)


def _flag(data: dict[str, Any], key: str, default: bool, path: Path, safe: bool, spelled: dict[str, str]) -> bool:
    value = data.get(key, default)
    if isinstance(value, bool):
        return value
    _warn(path, f"field {spelled.get(key, key)!r} must be true or false, not {value!r}; read as {safe}")
    return safe


def _looks_like_file(text: str) -> bool:
    """Whether a ``skillContent`` string names a file (``./SKILL.md``, ``docs/usage.md``) rather than
    being the content itself: one line, no spaces, a relative-path start or a text-file suffix."""
    one = text.strip()
    return (
        bool(one)
        and "\n" not in one
        and " " not in one
        and (one.startswith(("./", "../")) or one.lower().endswith((".md", ".markdown", ".txt", ".json")))
    )


def _file_field(folder: Path, path: Path, field: str, value: str, default: Path) -> Path:
    """The file to load lazily for a manifest field that names one: that file when it is inside the
    capability's folder and exists, else ``default`` with a warning naming the field."""
    target = (folder / value.strip()).resolve()
    if not target.is_relative_to(folder.resolve()):
        _warn(path, f"field {field!r} names {value!r}, outside the capability's folder; {default.name} is used instead")
        return default
    if not target.is_file():
        _warn(path, f"field {field!r} names {value!r}, which does not exist; {default.name} is used instead")
        return default
    return target


def from_manifest(folder: str | Path) -> CapabilityDescriptor:
    """The descriptor of one capability folder; raises ManifestError naming the problem.

    ``CAPABILITY.yaml`` needs ``name``, ``kind`` and ``description``; optional: ``id``
    (default ``kind:name``), ``display_name``, ``category``, ``tags``, ``required_secrets``,
    ``required_tools``, ``composed_with``, ``parameters``, ``examples``, ``available``,
    ``side_effects``, ``input_schema`` and ``skill_content`` (inline, or a file inside the
    capability's folder such as the seed's ``skillContent: ./SKILL.md``; else ``schema.json`` and
    ``SKILL.md`` beside it; files are loaded only when asked for). The seed's spellings (``displayName``,
    ``requiredSecrets``, ``requiredTools``, ``hasSideEffects``, ``inputSchema``, ``skillContent``)
    are read too. An unknown field, or an invalid value of an optional one, is a
    :class:`ManifestWarning` naming the file and the field; an invalid ``hasSideEffects`` is read
    as ``true`` (the safe side).
    """
    folder = Path(folder)
    path = folder / MANIFEST_FILE
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=_YAML_LOADER)  # noqa: S506 - a safe loader
    except OSError as exc:
        raise ManifestError(f"cannot read: {exc}") from exc
    except yaml.YAMLError as exc:
        raise ManifestError(f"invalid YAML: {' '.join(str(exc).split())}") from exc
    if not isinstance(raw, dict):
        raise ManifestError("top level must be a mapping")
    data: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for key, value in raw.items():
        name_ = _ALIASES.get(str(key), str(key))
        if name_ not in _FIELDS:
            _warn(path, f"unknown field {key!r} ignored")
            continue
        data[name_], spelled[name_] = value, str(key)
    missing = [k for k in ("name", "kind", "description") if not data.get(k)]
    if missing:
        raise ManifestError(f"missing required field(s): {', '.join(missing)}")
    for key in ("name", "kind", "description", "id", "display_name", "category"):
        if key in data and not isinstance(data[key], str):
            raise ManifestError(f"{key!r} must be a string")
    name, kind = data["name"], data["kind"]
    schema_path, skill_path = folder / "schema.json", folder / "SKILL.md"
    schema, content = data.get("input_schema"), data.get("skill_content")
    if isinstance(schema, str):  # a file beside the manifest, as skillContent may be
        schema_path = _file_field(folder, path, spelled.get("input_schema", "inputSchema"), schema, schema_path)
        schema = None
    if schema is not None and not isinstance(schema, dict):
        _warn(path, "field 'inputSchema' must be a mapping (a JSON Schema) or a file; schema.json is used instead")
        schema = None
    if content is not None and not isinstance(content, str):
        _warn(path, "field 'skillContent' must be a string; SKILL.md is used instead")
        content = None
    if content is not None and _looks_like_file(content):  # the seed's `skillContent: ./SKILL.md`
        skill_path = _file_field(folder, path, spelled.get("skill_content", "skillContent"), content, skill_path)
        content = None
    inline_schema: dict[str, Any] | None = schema
    inline_content: str | None = content
    return CapabilityDescriptor(
        id=data.get("id") or f"{kind}:{name}",
        kind=kind,
        name=name,
        display_name=data.get("display_name") or _words(name),
        description=" ".join(data["description"].split()),
        category=data.get("category") or "general",
        tags=_str_tuple(data.get("tags"), "tags"),
        required_secrets=_str_tuple(data.get("required_secrets"), "required_secrets"),
        required_tools=tuple(_tool_id(t) for t in _str_tuple(data.get("required_tools"), "required_tools")),
        composed_with=_str_tuple(data.get("composed_with"), "composed_with"),
        params=_str_tuple(data.get("parameters"), "parameters") or _schema_params(inline_schema),
        examples=tuple(" ".join(e.split()) for e in _str_tuple(data.get("examples"), "examples") if e.strip()),
        available=_flag(data, "available", True, path, True, spelled),
        has_side_effects=_flag(data, "side_effects", False, path, True, spelled),
        source_ref=str(path),
        _schema_loader=(lambda: dict(inline_schema))
        if inline_schema is not None
        else (lambda: _read_schema(schema_path)),
        _content_loader=(lambda: inline_content) if inline_content is not None else (lambda: _read_text(skill_path)),
    )
