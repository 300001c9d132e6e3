"""Browser task signatures: a typed, machine-checked boundary for one browser task.

A signature says which tools a task may use, what inputs it takes (and which are secret), when it
has succeeded, when to stop or declare failure, how to detect loops, and its budgets. It is data,
not a prompt: the evaluator (:mod:`ocnb.contracts.evaluator`) checks it without any LLM. The JSON
form (keys in camelCase, as in the spec)::

    {
      "version": 1,
      "id": "search-docs",
      "description": "Search the docs for a term and land on the results page.",
      "inputs": {"query": {"type": "string", "required": true, "redaction": "none"}},
      "allowedTools": ["navigate", "form_input", "interact", "read_page"],
      "success": {"kind": "dom_text", "selector": "#results", "contains": "result"},
      "stopWhen": [],
      "failureWhen": [{"kind": "no_dialog"}],
      "loopGuards": [{"kind": "max_observation_calls", "limit": 3}],
      "budgets": {"maxToolCalls": 20, "maxWallMs": 60000}
    }

``version``, ``id``, ``description``, ``inputs``, ``allowedTools`` and ``success`` are required;
``stopWhen``, ``failureWhen`` and ``loopGuards`` default to ``[]``; ``budgets`` and each of its
fields are optional: ``maxToolCalls`` defaults to :data:`DEFAULT_MAX_TOOL_CALLS` (50) and
``maxWallMs`` to :data:`DEFAULT_MAX_WALL_MS` (300000, five minutes). An input spec needs
``type`` (``string`` | ``number`` | ``boolean``); ``required`` defaults to ``true`` and
``redaction`` (``secret`` | ``none``) to ``none``. A loop guard is ``{kind, limit, window?}``.
Unknown fields, kinds and assertion kinds are errors; :func:`validate_signature` checks a document
against :data:`SIGNATURE_SCHEMA` and reports every error at once with JSON paths. :func:`dumps`
writes the canonical form (defaults filled in, tools sorted, keys sorted, fixed separators, trailing
newline), so the same signature is the same bytes.

This module is the signature as a document: schema and validation, the dataclasses, canonical JSON,
a task's input values (:func:`require_inputs`, :func:`redact_inputs`, :func:`secret_input_masks`),
:class:`SignatureStore`, and :func:`load_signature` (a stored id or an inline document). Judging a
task against it is :mod:`.evaluator`; binding one to a session is :mod:`ocnb.contracts.taskguard`.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ocnb.errors import InvalidArgument
from ocnb.files import ocnb_home
from ocnb.placeholders import is_secret_placeholder

from .assertions import ASSERTION_DEFS, assertion_checks
from .store import ID_RE, RecordStore
from .validation import (
    NONEMPTY,
    ValidationError,
    child_path,
    dumps_canonical,
    json_type,
    raise_if_invalid,
    schema_errors,
    schema_validator,
    sort_errors,
)

__all__ = [
    "DEFAULT_MAX_TOOL_CALLS",
    "DEFAULT_MAX_WALL_MS",
    "INPUT_TYPES",
    "LOOP_GUARD_KINDS",
    "REDACTED",
    "SIGNATURE_SCHEMA",
    "SIGNATURE_VERSION",
    "BrowserTaskSignature",
    "Budgets",
    "InputSpec",
    "LoopGuard",
    "SignatureStore",
    "check_inputs",
    "dumps",
    "load_signature",
    "loads",
    "parse_signature",
    "redact_inputs",
    "require_inputs",
    "secret_input_masks",
    "secret_values",
    "validate_signature",
]

SIGNATURE_VERSION = 1
INPUT_TYPES = ("string", "number", "boolean")
REDACTIONS = ("secret", "none")
LOOP_GUARD_KINDS = ("max_same_tool", "max_observation_calls", "max_non_progress_calls")
#: What a secret input's value is replaced with in results, journal lines and traces.
REDACTED = "[REDACTED]"

#: Budgets a signature gets when it gives none (or leaves one out).
DEFAULT_MAX_TOOL_CALLS = 50
DEFAULT_MAX_WALL_MS = 300_000


@dataclass(frozen=True)
class InputSpec:
    """One declared input: its JSON ``type``, whether it is ``required``, and its ``redaction``."""

    type: str
    required: bool = True
    redaction: str = "none"

    @property
    def secret(self) -> bool:
        return self.redaction == "secret"

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "required": self.required, "redaction": self.redaction}


@dataclass(frozen=True)
class LoopGuard:
    """A loop guard: trips when the count it watches exceeds ``limit`` (see :mod:`.evaluator`).

    ``window``, when set, looks only at the last ``window`` calls.
    """

    kind: str
    limit: int
    window: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "limit": self.limit}
        if self.window is not None:
            out["window"] = self.window
        return out


@dataclass(frozen=True)
class Budgets:
    """At most ``max_tool_calls`` calls and ``max_wall_ms`` milliseconds for the task."""

    max_tool_calls: int
    max_wall_ms: int

    def to_dict(self) -> dict[str, Any]:
        return {"maxToolCalls": self.max_tool_calls, "maxWallMs": self.max_wall_ms}


@dataclass(frozen=True)
class BrowserTaskSignature:
    """A validated task signature. Build one with :func:`parse_signature` (or :func:`loads`)."""

    id: str
    description: str
    inputs: Mapping[str, InputSpec]
    allowed_tools: tuple[str, ...]
    success: Mapping[str, Any]
    budgets: Budgets
    stop_when: tuple[Mapping[str, Any], ...] = ()
    failure_when: tuple[Mapping[str, Any], ...] = ()
    loop_guards: tuple[LoopGuard, ...] = ()
    version: int = SIGNATURE_VERSION

    @property
    def secret_inputs(self) -> tuple[str, ...]:
        """Names of the inputs marked ``redaction: secret``, sorted."""
        return tuple(sorted(name for name, spec in self.inputs.items() if spec.secret))

    def allows(self, tool: str) -> bool:
        """Whether ``tool`` is in ``allowedTools``."""
        return tool in self.allowed_tools

    def to_dict(self) -> dict[str, Any]:
        """The canonical JSON form (defaults filled in, ``allowedTools`` sorted)."""
        return {
            "version": self.version,
            "id": self.id,
            "description": self.description,
            "inputs": {name: spec.to_dict() for name, spec in sorted(self.inputs.items())},
            "allowedTools": sorted(self.allowed_tools),
            "success": _plain(self.success),
            "stopWhen": [_plain(a) for a in self.stop_when],
            "failureWhen": [_plain(a) for a in self.failure_when],
            "loopGuards": [g.to_dict() for g in self.loop_guards],
            "budgets": self.budgets.to_dict(),
        }

    def dumps(self) -> str:
        """Canonical JSON text: the same signature always gives the same bytes."""
        return dumps_canonical(self.to_dict())


def _plain(obj: Any) -> Any:
    return json.loads(json.dumps(obj))


# --------------------------------------------------------------------------------------------
# Validation


def _object(title: str, properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """A closed object schema: only ``properties``, with ``required`` ones; its errors name it ``title``."""
    return {
        "title": title,
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
        "x-messages": {"type": f"{'an' if title[0] in 'aeiou' else 'a'} {title} must be an object, got {{got}}"},
    }


def _whole(pattern: str) -> str:
    """A schema ``pattern`` that must match the whole string (``$`` alone lets a final newline through)."""
    return f"^(?:{pattern})$(?!\\n)"


_ASSERTIONS = {"type": "array", "items": {"$ref": "#/$defs/assertion"}}
_AT_LEAST_ONE = {"type": "integer", "minimum": 1}
#: The JSON Schema (Draft 2020-12) of a signature document. :func:`validate_signature` adds what a
#: schema cannot say: a loop guard's window exceeds its limit, the tools are registered ones.
SIGNATURE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    **_object(
        "signature",
        {
            "version": {
                "type": "integer",
                "const": SIGNATURE_VERSION,
                "x-messages": {"const": f"unsupported version {{value}} (this ocnb reads {SIGNATURE_VERSION})"},
            },
            "id": {
                "type": "string",
                "pattern": _whole(ID_RE.pattern),
                "x-messages": {"pattern": "must be 1-64 characters from A-Z a-z 0-9 _ . -"},
            },
            "description": NONEMPTY,
            "inputs": {
                "type": "object",
                "propertyNames": {
                    "pattern": _whole("[A-Za-z_][A-Za-z0-9_]{0,63}"),
                    "x-messages": {"pattern": "input names are 1-64 letters, digits or _, not starting with a digit"},
                },
                "additionalProperties": {"$ref": "#/$defs/input"},
            },
            "allowedTools": {
                "type": "array",
                "minItems": 1,
                "uniqueItems": True,
                "items": {
                    "title": "tool",
                    "type": "string",
                    "pattern": "\\S",
                    "x-messages": {
                        "type": "expected a tool name, got {got}",
                        "pattern": "expected a tool name, got a blank string",
                    },
                },
                "x-messages": {"minItems": "must name at least one tool"},
            },
            "success": {"$ref": "#/$defs/assertion"},
            "stopWhen": _ASSERTIONS,
            "failureWhen": _ASSERTIONS,
            "loopGuards": {"type": "array", "items": {"$ref": "#/$defs/loopGuard"}},
            "budgets": _object("budgets", {"maxToolCalls": _AT_LEAST_ONE, "maxWallMs": _AT_LEAST_ONE}),
        },
        ("version", "id", "description", "inputs", "allowedTools", "success"),
    ),
    "$defs": {
        **ASSERTION_DEFS,
        "input": _object(
            "input spec",
            {
                "type": {"title": "input type", "enum": list(INPUT_TYPES)},
                "required": {"type": "boolean"},
                "redaction": {"title": "redaction", "enum": list(REDACTIONS)},
            },
            ("type",),
        ),
        "loopGuard": _object(
            "loop guard",
            {
                "kind": {"title": "loop guard kind", "enum": list(LOOP_GUARD_KINDS)},
                "limit": _AT_LEAST_ONE,
                "window": {"type": ["integer", "null"]},
            },
            ("kind", "limit"),
        ),
    },
}


@functools.cache
def _validator() -> Any:
    return schema_validator(SIGNATURE_SCHEMA)


def validate_signature(obj: Any, *, known_tools: Collection[str] | None = None) -> list[ValidationError]:
    """Every error of a signature document, with JSON paths; ``[]`` when valid.

    With ``known_tools``, a name in ``allowedTools`` that is not among them is an error too.
    """
    errors: list[ValidationError] = []
    if not isinstance(obj, Mapping):
        return schema_errors(_validator(), obj)
    obj = dict(obj)
    if "success" in obj:
        obj["success"] = assertion_checks(obj["success"], "$.success", 0, errors)
    for key in ("stopWhen", "failureWhen"):
        if isinstance(obj.get(key), list):
            obj[key] = [assertion_checks(a, f"$.{key}[{i}]", 0, errors) for i, a in enumerate(obj[key])]
    guards = obj.get("loopGuards")
    for i, g in enumerate(guards if isinstance(guards, list) else []):
        limit, window = (g.get("limit"), g.get("window")) if isinstance(g, Mapping) else (None, None)
        if isinstance(limit, int) and isinstance(window, int) and not isinstance(window, bool) and window <= limit:
            errors.append(
                ValidationError(
                    f"$.loopGuards[{i}].window", f"must be greater than limit ({limit}), or the guard can never trip"
                )
            )
    tools = obj.get("allowedTools")
    if known_tools is not None and isinstance(tools, list):
        for i, name in enumerate(tools):
            if isinstance(name, str) and name.strip() and name not in known_tools:
                errors.append(ValidationError(f"$.allowedTools[{i}]", f"unknown tool {name!r}"))
    return sort_errors(schema_errors(_validator(), obj) + errors)


# --------------------------------------------------------------------------------------------
# Parsing and serialization


def parse_signature(obj: Any, *, known_tools: Collection[str] | None = None) -> BrowserTaskSignature:
    """A :class:`BrowserTaskSignature` from its JSON form; ``INVALID_ARGUMENT`` with every error otherwise."""
    if isinstance(obj, BrowserTaskSignature):
        obj = obj.to_dict()
    raise_if_invalid(validate_signature(obj, known_tools=known_tools), "task signature")
    inputs = {
        name: InputSpec(spec["type"], spec.get("required", True), spec.get("redaction", "none"))
        for name, spec in obj["inputs"].items()
    }
    return BrowserTaskSignature(
        id=obj["id"],
        description=obj["description"],
        inputs=inputs,
        allowed_tools=tuple(sorted(obj["allowedTools"])),
        success=_plain(obj["success"]),
        budgets=Budgets(
            obj.get("budgets", {}).get("maxToolCalls", DEFAULT_MAX_TOOL_CALLS),
            obj.get("budgets", {}).get("maxWallMs", DEFAULT_MAX_WALL_MS),
        ),
        stop_when=tuple(_plain(a) for a in obj.get("stopWhen", [])),
        failure_when=tuple(_plain(a) for a in obj.get("failureWhen", [])),
        loop_guards=tuple(LoopGuard(g["kind"], g["limit"], g.get("window")) for g in obj.get("loopGuards", [])),
        version=obj["version"],
    )


def loads(text: str | bytes) -> BrowserTaskSignature:
    """Parse signature JSON text; bad JSON is ``INVALID_ARGUMENT`` too."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidArgument(
            f"task signature is not valid JSON: {exc}", details={"errors": [{"path": "$", "message": str(exc)}]}
        ) from None
    return parse_signature(obj)


def dumps(sig: BrowserTaskSignature | Mapping[str, Any]) -> str:
    """Canonical JSON text of a signature (validated first when given as a dict)."""
    return parse_signature(sig).dumps() if not isinstance(sig, BrowserTaskSignature) else sig.dumps()


# --------------------------------------------------------------------------------------------
# Inputs


def check_inputs(sig: BrowserTaskSignature, inputs: Mapping[str, Any], *, path: str = "$") -> list[ValidationError]:
    """Every problem with a task's input values: unknown names, missing required ones, wrong types.

    A ``number`` is any JSON number (not a boolean). Messages never include a value.
    """
    errors: list[ValidationError] = []
    if not isinstance(inputs, Mapping):
        return [ValidationError(path, f"inputs must be an object, got {json_type(inputs)}")]
    for name in inputs:
        if name not in sig.inputs:
            known = ", ".join(sorted(sig.inputs)) or "none"
            errors.append(ValidationError(child_path(path, str(name)), f"unknown input (declared: {known})"))
    for name, spec in sorted(sig.inputs.items()):
        if name not in inputs:
            if spec.required:
                errors.append(ValidationError(child_path(path, name), f"required {spec.type} input missing"))
            continue
        actual = json_type(inputs[name])
        ok = actual in ("integer", "number") if spec.type == "number" else actual == spec.type
        if not ok:
            errors.append(ValidationError(child_path(path, name), f"expected {spec.type}, got {actual}"))
    return errors


def redact_inputs(sig: BrowserTaskSignature, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``inputs`` with every ``redaction: secret`` value replaced by :data:`REDACTED`.

    A value that is itself a ``${SECRET:NAME}`` placeholder is kept: it names a secret, it is not one.
    """
    out: dict[str, Any] = {}
    for name, value in inputs.items():
        spec = sig.inputs.get(name)
        if spec is not None and spec.secret and not is_secret_placeholder(value):
            out[name] = REDACTED
        else:
            out[name] = value
    return out


def require_inputs(sig: BrowserTaskSignature, inputs: Mapping[str, Any], *, what: str = "inputs") -> None:
    """Raise ``INVALID_ARGUMENT`` with every :func:`check_inputs` problem (``what`` names the values)."""
    problems = check_inputs(sig, inputs)
    if problems:
        raise InvalidArgument(
            f"{what} do not match the signature's inputs", details={"errors": [p.to_dict() for p in problems]}
        )


def secret_input_masks(sig: BrowserTaskSignature, inputs: Mapping[str, Any]) -> dict[str, str]:
    """The literal values of secret inputs by masker name (``INPUT_<NAME>``), for a
    :class:`~ocnb.audit.secrets.SecretStore` to scrub from every output. Placeholders are left out."""
    masks = {}
    for name in sig.secret_inputs:
        value = inputs.get(name)
        if value is None or isinstance(value, bool):
            continue
        text = str(value)
        if text and not is_secret_placeholder(text):
            masks[f"INPUT_{name.upper()}"] = text
    return masks


def secret_values(sig: BrowserTaskSignature, inputs: Mapping[str, Any]) -> list[str]:
    """The literal values of secret inputs (as strings), for a masker to scrub from every output."""
    return list(secret_input_masks(sig, inputs).values())


# --------------------------------------------------------------------------------------------
# Store


class SignatureStore:
    """Task signatures under ``OCNB_HOME/signatures/<id>.json`` in canonical form (``version: 1``)."""

    def __init__(self, home: str | os.PathLike[str] | None = None) -> None:
        self.records = RecordStore(
            ocnb_home(home) / "signatures", kind="task signature", version_key="version", version=SIGNATURE_VERSION
        )

    def save(self, sig: BrowserTaskSignature | Mapping[str, Any]) -> Path:
        """Validate and store a signature under its id (replacing an earlier one); returns the file."""
        parsed = parse_signature(sig)
        return self.records.write(parsed.id, parsed.dumps())

    def get(self, sig_id: str) -> BrowserTaskSignature:
        """The stored signature; ``RecordNotFound``, ``CorruptFile`` or ``INVALID_ARGUMENT`` otherwise."""
        sig = parse_signature(self.records.get(sig_id))
        if sig.id != sig_id:
            path = self.records.path(sig_id)
            raise InvalidArgument(f"{path} holds signature {sig.id!r}, not {sig_id!r}; fix or move it")
        return sig

    def ids(self) -> list[str]:
        """Ids of every stored signature, sorted."""
        return self.records.ids()

    def delete(self, sig_id: str) -> bool:
        """Remove a signature; ``False`` when there was none."""
        return self.records.delete(sig_id)


def load_signature(
    value: Any, *, home: str | os.PathLike[str] | None = None, known_tools: Collection[str] | None = None
) -> BrowserTaskSignature:
    """The signature a caller named: a stored id (from :class:`SignatureStore`) or an inline document.

    An inline document is validated with ``known_tools``; a stored one was validated when it was saved.
    """
    if isinstance(value, str):
        return SignatureStore(home).get(value)
    return parse_signature(value, known_tools=known_tools)
