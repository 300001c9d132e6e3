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
Unknown fields, kinds and assertion kinds are errors; :func:`validate_signature` reports all of
them at once with JSON paths. :func:`dumps` writes the canonical form (defaults filled in, tools
sorted, keys sorted, fixed separators, trailing newline), so the same signature is the same bytes.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ocnb.errors import InvalidArgument
from ocnb.storage import ocnb_home

from .assertions import validate_assertion
from .store import ID_RE, RecordStore
from .validation import (
    ValidationError,
    check_fields,
    child_path,
    dumps_canonical,
    is_integer,
    json_type,
    raise_if_invalid,
)

__all__ = [
    "DEFAULT_MAX_TOOL_CALLS",
    "DEFAULT_MAX_WALL_MS",
    "INPUT_TYPES",
    "LOOP_GUARD_KINDS",
    "REDACTED",
    "SIGNATURE_VERSION",
    "BrowserTaskSignature",
    "Budgets",
    "InputSpec",
    "LoopGuard",
    "SignatureStore",
    "check_inputs",
    "dumps",
    "loads",
    "parse_signature",
    "redact_inputs",
    "secret_values",
    "validate_signature",
]

SIGNATURE_VERSION = 1
INPUT_TYPES = ("string", "number", "boolean")
REDACTIONS = ("secret", "none")
LOOP_GUARD_KINDS = ("max_same_tool", "max_observation_calls", "max_non_progress_calls")
#: What a secret input's value is replaced with in results, journal lines and traces.
REDACTED = "[REDACTED]"

_INPUT_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_TOP_FIELDS = {
    "version": "integer",
    "id": "string",
    "description": "string",
    "inputs": "object",
    "allowedTools": "array",
    "success": "object",
    "stopWhen": "array",
    "failureWhen": "array",
    "loopGuards": "array",
    "budgets": "object",
}
_TOP_REQUIRED = ("version", "id", "description", "inputs", "allowedTools", "success")
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


def validate_signature(obj: Any, *, known_tools: Collection[str] | None = None) -> list[ValidationError]:
    """Every structural error of a signature document, with JSON paths; ``[]`` when valid.

    With ``known_tools``, a name in ``allowedTools`` that is not among them is an error too.
    """
    errors: list[ValidationError] = []
    if not isinstance(obj, Mapping):
        return [ValidationError("$", f"a signature must be an object, got {json_type(obj)}")]
    check_fields(obj, "$", _TOP_FIELDS, _TOP_REQUIRED, errors, what="signature")
    version = obj.get("version")
    if is_integer(version) and version != SIGNATURE_VERSION:
        errors.append(
            ValidationError("$.version", f"unsupported version {version} (this ocnb reads {SIGNATURE_VERSION})")
        )
    sig_id = obj.get("id")
    if isinstance(sig_id, str) and not ID_RE.fullmatch(sig_id):
        errors.append(ValidationError("$.id", "must be 1-64 characters from A-Z a-z 0-9 _ . -"))
    if isinstance(obj.get("description"), str) and not obj["description"].strip():
        errors.append(ValidationError("$.description", "must not be empty"))
    if isinstance(obj.get("inputs"), Mapping):
        _validate_inputs(obj["inputs"], errors)
    if isinstance(obj.get("allowedTools"), list):
        _validate_tools(obj["allowedTools"], known_tools, errors)
    if isinstance(obj.get("success"), Mapping):
        errors.extend(validate_assertion(obj["success"], "$.success"))
    for key in ("stopWhen", "failureWhen"):
        if isinstance(obj.get(key), list):
            for i, a in enumerate(obj[key]):
                errors.extend(validate_assertion(a, f"$.{key}[{i}]"))
    if isinstance(obj.get("loopGuards"), list):
        for i, g in enumerate(obj["loopGuards"]):
            _validate_guard(g, f"$.loopGuards[{i}]", errors)
    if isinstance(obj.get("budgets"), Mapping):
        budgets = obj["budgets"]
        fields = {"maxToolCalls": "integer", "maxWallMs": "integer"}
        check_fields(budgets, "$.budgets", fields, (), errors, what="budgets")
        for key in fields:
            if is_integer(budgets.get(key)) and budgets[key] < 1:
                errors.append(ValidationError(f"$.budgets.{key}", "must be ≥ 1"))
    return errors


def _validate_inputs(inputs: Mapping[str, Any], errors: list[ValidationError]) -> None:
    for name, spec in inputs.items():
        path = child_path("$.inputs", str(name))
        if not isinstance(name, str) or not _INPUT_NAME_RE.fullmatch(name):
            errors.append(ValidationError(path, "input names are 1-64 letters, digits or _, not starting with a digit"))
        if not isinstance(spec, Mapping):
            errors.append(ValidationError(path, f"an input spec must be an object, got {json_type(spec)}"))
            continue
        fields = {"type": "string", "required": "boolean", "redaction": "string"}
        check_fields(spec, path, fields, ("type",), errors, what="input spec")
        if isinstance(spec.get("type"), str) and spec["type"] not in INPUT_TYPES:
            errors.append(
                ValidationError(
                    child_path(path, "type"),
                    f"unknown input type {spec['type']!r} (expected one of: {', '.join(INPUT_TYPES)})",
                )
            )
        if isinstance(spec.get("redaction"), str) and spec["redaction"] not in REDACTIONS:
            errors.append(
                ValidationError(
                    child_path(path, "redaction"), f"unknown redaction {spec['redaction']!r} (expected secret or none)"
                )
            )


def _validate_tools(tools: list[Any], known: Collection[str] | None, errors: list[ValidationError]) -> None:
    if not tools:
        errors.append(ValidationError("$.allowedTools", "must name at least one tool"))
    seen: set[str] = set()
    for i, name in enumerate(tools):
        path = f"$.allowedTools[{i}]"
        if not isinstance(name, str) or not name.strip():
            errors.append(ValidationError(path, f"expected a tool name, got {json_type(name)}"))
            continue
        if name in seen:
            errors.append(ValidationError(path, f"duplicate tool {name!r}"))
        seen.add(name)
        if known is not None and name not in known:
            errors.append(ValidationError(path, f"unknown tool {name!r}"))


def _validate_guard(g: Any, path: str, errors: list[ValidationError]) -> None:
    if not isinstance(g, Mapping):
        errors.append(ValidationError(path, f"a loop guard must be an object, got {json_type(g)}"))
        return
    fields = {"kind": "string", "limit": "integer", "window": "any"}
    check_fields(g, path, fields, ("kind", "limit"), errors, what="loop guard")
    kind = g.get("kind")
    if isinstance(kind, str) and kind not in LOOP_GUARD_KINDS:
        errors.append(
            ValidationError(
                f"{path}.kind", f"unknown loop guard kind {kind!r} (expected one of: {', '.join(LOOP_GUARD_KINDS)})"
            )
        )
    limit = g.get("limit")
    if is_integer(limit) and limit < 1:
        errors.append(ValidationError(f"{path}.limit", "must be ≥ 1"))
    window = g.get("window")
    if window is not None:
        if json_type(window) != "integer":
            errors.append(ValidationError(f"{path}.window", f"expected integer or null, got {json_type(window)}"))
        elif is_integer(limit) and window <= limit:
            errors.append(
                ValidationError(f"{path}.window", f"must be greater than limit ({limit}), or the guard can never trip")
            )


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
        if spec is not None and spec.secret and not (isinstance(value, str) and _is_placeholder(value)):
            out[name] = REDACTED
        else:
            out[name] = value
    return out


def secret_values(sig: BrowserTaskSignature, inputs: Mapping[str, Any]) -> list[str]:
    """The literal values of secret inputs (as strings), for a masker to scrub from every output."""
    values = []
    for name in sig.secret_inputs:
        value = inputs.get(name)
        if value is None or isinstance(value, bool):
            continue
        text = str(value)
        if text and not _is_placeholder(text):
            values.append(text)
    return values


_PLACEHOLDER_RE = re.compile(r"\$\{SECRET:[A-Za-z_][A-Za-z0-9_]*\}")


def _is_placeholder(value: str) -> bool:
    return _PLACEHOLDER_RE.fullmatch(value) is not None


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
