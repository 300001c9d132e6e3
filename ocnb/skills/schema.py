"""The JSON Schema of a stored skill, and the checks every skill passes when recorded and when loaded.

A skill file (``skill-memory/<domain>/skills.json``) holds ``{"schema_version", "domain", "skills"}``
(and ``"fingerprints": true`` once written by an ocnb that records fingerprints, see :mod:`.store`);
each skill is checked against :data:`SKILL_SCHEMA` (Draft 2020-12, via ``jsonschema``): known step
kinds, known selector types, known artifact schema versions, the fields each kind needs, and no
unknown fields outside the free-form places (a step's ``args``, the recorder's metadata, the
element ``fingerprint``). :func:`skill_errors` lists every problem at once with its JSON path;
:func:`ensure_valid_skill` raises ``INVALID_ARGUMENT`` carrying them all. Domains are checked by
:func:`domain_problem`: a host name (optionally ``:port``) or a bracketed IPv6 address, never a path
segment such as ``..``.

Chain entries are stored as ``{"type": "role_name", "role": …, "name": …}`` or
``{"type": <css|xpath|text|accessible_name|node_ref>, "value": …}``, the form on disk since v2.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from typing import Any

from ..errors import InvalidArgument
from ..perception.selectors import SELECTOR_TYPES  # the types the one resolver can resolve

__all__ = [
    "ARTIFACT_SCHEMA_VERSIONS",
    "FILE_SCHEMA_VERSIONS",
    "SELECTOR_TYPES",
    "SKILL_SCHEMA",
    "STEP_KINDS",
    "domain_problem",
    "ensure_valid_skill",
    "skill_errors",
    "skill_json_schema",
]

#: Versions of a skills file ocnb reads (1: no artifacts, read-only; 2: current).
FILE_SCHEMA_VERSIONS = (1, 2)
#: Versions of a step's ``replay_artifact`` ocnb reads (2 adds per-step element fingerprints).
ARTIFACT_SCHEMA_VERSIONS = (1, 2)
STEP_KINDS = ("click", "fill", "navigate", "press", "select", "submit", "scroll", "upload")
#: Step kinds that may run without an element (navigate; press on the page's keyboard).
KINDS_WITHOUT_ELEMENT = ("navigate", "press")

_TEXT = {"type": "string"}
_NONEMPTY = {"type": "string", "minLength": 1}
_OPT_TEXT = {"type": ["string", "null"]}

_SELECTOR: dict[str, Any] = {
    "type": "object",
    "required": ["type"],
    "properties": {
        "type": {"enum": list(SELECTOR_TYPES)},
        "role": _NONEMPTY,
        "name": _TEXT,
        "value": _NONEMPTY,
    },
    "additionalProperties": False,
    "allOf": [
        {
            "if": {"properties": {"type": {"const": "role_name"}}, "required": ["type"]},
            "then": {"required": ["role", "name"]},
            "else": {"required": ["value"]},
        }
    ],
}

#: What the element looked like when recorded; compared at replay (``twins``: other visible elements
#: with the same fingerprint then). Open to further string fields.
_FINGERPRINT: dict[str, Any] = {
    "type": ["object", "null"],
    "properties": {
        "role": _OPT_TEXT,
        "name": _OPT_TEXT,
        "tag": _OPT_TEXT,
        "type": _OPT_TEXT,
        "name_attr": _OPT_TEXT,
        "autocomplete": _OPT_TEXT,
        "label": _OPT_TEXT,
        "frame": {
            "type": ["object", "integer", "string", "null"],
            "properties": {"ordinal": {"type": "integer", "minimum": 0}, "url": _OPT_TEXT},
        },
        "twins": {"type": "integer", "minimum": 0},
    },
    "additionalProperties": _OPT_TEXT,
}

_LOW_STEP: dict[str, Any] = {
    "type": "object",
    "required": ["kind", "selectors"],
    "properties": {
        "kind": {"enum": list(STEP_KINDS)},
        "selectors": {"type": "array", "items": _SELECTOR},
        "frame_ordinal": {"type": "integer", "minimum": 0},
        "args": {"type": "object", "properties": {"action": _TEXT}},
        "risky": {"type": "boolean"},
        "target": {"type": ["object", "null"], "additionalProperties": _OPT_TEXT},
        "post_assert": {
            "type": ["object", "null"],
            "required": ["contract_id"],
            "properties": {"contract_id": _NONEMPTY},
            "additionalProperties": False,
        },
        "fingerprint": _FINGERPRINT,
    },
    "additionalProperties": False,
    "allOf": [
        {
            "if": {"properties": {"kind": {"const": "navigate"}}, "required": ["kind"]},
            "then": {
                "required": ["args"],
                "properties": {"args": {"required": ["url"], "properties": {"url": _NONEMPTY}}},
            },
        },
        {
            "if": {"properties": {"kind": {"const": "press"}}, "required": ["kind"]},
            "then": {
                "required": ["args"],
                "properties": {"args": {"required": ["key"], "properties": {"key": _NONEMPTY}}},
            },
        },
        {
            "if": {"properties": {"kind": {"not": {"enum": list(KINDS_WITHOUT_ELEMENT)}}}, "required": ["kind"]},
            "then": {"properties": {"selectors": {"minItems": 1}}},
        },
    ],
}

_ARTIFACT: dict[str, Any] = {
    "type": ["object", "null"],
    "required": ["schema_version", "steps"],
    "properties": {
        "schema_version": {"enum": list(ARTIFACT_SCHEMA_VERSIONS)},
        "recorded_at": _TEXT,
        "recorder": {"type": "object", "properties": {"ocnb_version": _TEXT}},
        "url": _OPT_TEXT,
        "steps": {"type": "array", "minItems": 1, "items": _LOW_STEP},
    },
    "additionalProperties": False,
}

_SKILL_STEP: dict[str, Any] = {
    "type": "object",
    "required": ["tool"],
    "properties": {
        "tool": _NONEMPTY,
        "args": {"type": "object"},
        "description": _OPT_TEXT,
        "intent": _OPT_TEXT,
        "replay_artifact": _ARTIFACT,
    },
    "additionalProperties": False,
}

#: The JSON Schema of one stored skill (as recorded, as loaded, as returned by recall).
SKILL_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://ocnb.dev/schemas/skill.json",
    "title": "ocnb skill",
    "type": "object",
    "required": ["id", "domain", "name", "steps"],
    "properties": {
        "id": {"type": "string", "pattern": "^sk_[0-9a-f]{16}$"},
        "domain": {"type": "string", "minLength": 1, "maxLength": 253},
        "name": {"type": "string", "minLength": 1, "maxLength": 120},
        "description": _OPT_TEXT,
        "contract_id": _OPT_TEXT,
        "start_url": _OPT_TEXT,
        "created_at": _TEXT,
        "updated_at": _TEXT,
        "steps": {"type": "array", "minItems": 1, "items": _SKILL_STEP},
    },
    "additionalProperties": False,
}

_HOST = re.compile(r"[\w-]{1,63}(?:\.[\w-]{1,63})*(?::[0-9]{1,5})?")
_IPV6 = re.compile(r"\[[0-9A-Fa-f:.]{2,45}(?:%25[\w.~-]+)?\](?::[0-9]{1,5})?")


def domain_problem(domain: Any) -> str | None:
    """Why ``domain`` cannot key a skills file, or None when it can (host[:port] or [IPv6][:port])."""
    if not isinstance(domain, str) or not domain:
        return "domain must be a non-empty string"
    if len(domain) > 253:
        return "domain must be at most 253 characters"
    if _HOST.fullmatch(domain) or _IPV6.fullmatch(domain):
        return None
    return (
        f"domain {domain!r} is not a host name: use letters, digits, '-', '_' and dots between labels, "
        "optionally ':port' (no '/', '..', '.' or spaces)"
    )


@functools.cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator  # imported on first use: it is slow to import

    return Draft202012Validator(SKILL_SCHEMA)  # the schema itself is checked by the tests


def _path(parts: Any) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)


def skill_errors(skill: Any) -> list[dict[str, str]]:
    """Every problem of ``skill`` as ``{"path", "message"}`` (``$``-rooted), in a stable order.

    What is checked is the stored form, the JSON the skill is written as; a value JSON cannot hold
    is an error itself.
    """
    try:
        text = json.dumps(skill, ensure_ascii=False, sort_keys=True, allow_nan=False)
        text.encode("utf-8")  # a lone surrogate cannot be written to a UTF-8 file
    except (TypeError, ValueError) as exc:
        return [{"path": "$", "message": f"a skill must be JSON data in valid Unicode: {exc}"}]
    return [{"path": p, "message": m} for p, m in _errors_of(text)]


@functools.lru_cache(maxsize=256)
def _errors_of(text: str) -> tuple[tuple[str, str], ...]:
    """The errors of one stored form (memoized: replay loads the same skill again and again)."""
    skill = json.loads(text)
    errors = {(_path(e.absolute_path), e.message) for e in _validator().iter_errors(skill)}
    if isinstance(skill, dict) and "domain" in skill:
        problem = domain_problem(skill["domain"])
        if problem and not any(path == "$.domain" for path, _ in errors):
            errors.add(("$.domain", problem))
    return tuple(sorted(errors))


def ensure_valid_skill(skill: Any, what: str = "skill") -> None:
    """Raise ``INVALID_ARGUMENT`` naming every schema error of ``skill`` (all in ``details["errors"]``)."""
    errors = skill_errors(skill)
    if errors:
        listed = "; ".join(f"{e['path']}: {e['message']}" for e in errors)
        raise InvalidArgument(f"invalid {what}, {len(errors)} error(s): {listed}", details={"errors": errors})


def skill_json_schema() -> dict[str, Any]:
    """A copy of :data:`SKILL_SCHEMA` (for documentation and editors)."""
    return copy.deepcopy(SKILL_SCHEMA)
