"""Validation shared by assertion, contract and task-signature documents.

Each document has a JSON Schema (Draft 2020-12, checked with ``jsonschema``); :func:`schema_errors`
turns every failure into a :class:`ValidationError` — a JSON path such as ``$.children[1].op`` plus a
plain sentence — never stopping at the first, so that a person or an agent can fix a document in one
round. The document modules add the checks a schema cannot make (a regular expression compiles, a
loop guard's window exceeds its limit, a tool is registered). JSON types are JSON's here: a ``bool``
is not a number, although Python says it is an ``int``.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ocnb.errors import InvalidArgument

__all__ = [
    "NONEMPTY",
    "ValidationError",
    "child_path",
    "dumps_canonical",
    "json_type",
    "raise_if_invalid",
    "schema_errors",
    "schema_validator",
    "sort_errors",
]


@dataclass(frozen=True)
class ValidationError:
    """One structural problem: where (``$``-rooted JSON path) and what, in one sentence."""

    path: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def child_path(path: str, key: str | int) -> str:
    """``$.a`` + ``b`` → ``$.a.b``; ``$.a`` + ``1`` → ``$.a[1]``; odd keys → ``$.a["x y"]``."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if key.isidentifier():
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key)}]"


def json_type(value: Any) -> str:
    """The JSON name of a Python value's type (``boolean``, ``integer``, ``number``, ``string``…)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return type(value).__name__


#: A string with something in it besides white space (``"x-messages"``: see :func:`schema_errors`).
NONEMPTY: dict[str, Any] = {"type": "string", "pattern": "\\S", "x-messages": {"pattern": "must not be empty"}}


@functools.cache
def _validator_class() -> Any:
    from jsonschema import Draft202012Validator, validators  # imported on first use: it is slow to import

    # JSON's types as json_type() names them: True is no integer, 1.0 is a number, a tuple is an array.
    checker = Draft202012Validator.TYPE_CHECKER.redefine_many(
        {
            "integer": lambda _, v: isinstance(v, int) and not isinstance(v, bool),
            "array": lambda _, v: isinstance(v, (list, tuple)),
            "object": lambda _, v: isinstance(v, Mapping),
        }
    )
    return validators.extend(Draft202012Validator, type_checker=checker)


def schema_validator(schema: Mapping[str, Any]) -> Any:
    """A Draft 2020-12 validator of ``schema`` (checked first) with JSON's own idea of the types."""
    cls = _validator_class()
    cls.check_schema(schema)
    return cls(schema)


def schema_errors(validator: Any, obj: Any, path: str = "$") -> list[ValidationError]:
    """Every error of ``obj`` against a :func:`schema_validator`, in plain words, in document order.

    The messages come from the keyword that failed: ``required`` names each missing field (in the
    object's ``title``), ``additionalProperties`` each unknown one with the allowed names, ``enum``
    the value and the choices (as an unknown ``title``), ``type`` the expected and actual JSON type,
    ``uniqueItems`` each repeated item at its own index. A schema may word any keyword's message
    itself in ``"x-messages": {keyword: text}``, where ``{value}`` and ``{got}`` (its JSON type)
    are filled in. When a value has the wrong type, the rest of the same schema's complaints about
    it (a ``const``, say) are left out.
    """
    found: dict[tuple[tuple[Any, ...], str], tuple[str, int]] = {}  # (parts, message) -> (keyword, schema)
    for err in validator.iter_errors(obj):
        for parts, message in _explain(err):
            found.setdefault((parts, message), (err.validator, id(err.schema)))
    mistyped = {(parts, schema) for (parts, _), (keyword, schema) in found.items() if keyword == "type"}
    return sort_errors(
        ValidationError(_join(path, parts), message)
        for (parts, message), (keyword, schema) in found.items()
        if keyword == "type" or (parts, schema) not in mistyped
    )


def sort_errors(errors: Iterable[ValidationError]) -> list[ValidationError]:
    """``errors`` in document order: by path (``[2]`` before ``[10]``), then by message."""

    def key(e: ValidationError) -> tuple[list[tuple[int, int, str]], str]:
        steps = re.findall(r"\[(\d+)\]|([^.\[\]]+)", e.path)
        return [(0, int(i), "") if i else (1, 0, name) for i, name in steps], e.message

    return sorted(errors, key=key)


def _join(path: str, parts: Iterable[Any]) -> str:
    for part in parts:
        path = child_path(path, part if isinstance(part, int) else str(part))
    return path


def _explain(err: Any) -> list[tuple[tuple[Any, ...], str]]:
    """(path parts, message) for one jsonschema error; some keywords speak of several places."""
    parts = tuple(err.absolute_path)
    keyword, value, schema = err.validator, err.instance, err.schema
    if list(err.absolute_schema_path)[-2:-1] == ["propertyNames"]:
        parts += (value,)  # a bad key: point at it, not at its object
    title = schema.get("title", "object")
    custom = schema.get("x-messages", {})
    if keyword in custom:
        message = custom[keyword].format(value=value, got=json_type(value))
        if keyword == "oneOf" and isinstance(value, Mapping):
            given = [k for branch in err.validator_value for k in branch.get("required", ()) if k in value]
            message += f" (given: {', '.join(dict.fromkeys(given)) or 'none'})"
        return [(parts, message)]
    if keyword == "type":
        expected = err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
        return [(parts, f"expected {' or '.join(expected)}, got {json_type(value)}")]
    if keyword == "required":
        return [(parts + (k,), f"required field missing in {title}") for k in err.validator_value if k not in value]
    if keyword == "additionalProperties":
        allowed = sorted(schema.get("properties", {}))
        return [
            (parts + (k,), f"unknown field in {title} (allowed: {', '.join(allowed)})")
            for k in value
            if k not in allowed
        ]
    if keyword == "enum":
        choices = ", ".join(str(c) for c in err.validator_value)
        return [(parts, f"unknown {schema.get('title', 'value')} {value!r} (expected one of: {choices})")]
    if keyword == "minimum":
        return [(parts, f"must be ≥ {err.validator_value}")]
    if keyword == "maximum":
        return [(parts, f"must be ≤ {err.validator_value}")]
    if keyword == "uniqueItems":
        item = schema.get("items", {}).get("title", "item")
        seen: list[Any] = []
        out = []
        for i, v in enumerate(value):
            if v in seen:
                out.append((parts + (i,), f"duplicate {item} {v!r}"))
            seen.append(v)
        return out
    return [(parts, err.message)]


def raise_if_invalid(errors: list[ValidationError], what: str) -> None:
    """Raise ``INVALID_ARGUMENT`` carrying every error in ``details["errors"]`` when there are any."""
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise InvalidArgument(
            f"invalid {what}: {first}{more}",
            details={"errors": [e.to_dict() for e in errors]},
        )


def dumps_canonical(obj: Any) -> str:
    """Stable JSON text: sorted keys, 2-space indent, fixed separators, UTF-8 as is, trailing newline.

    The same document always gives the same bytes, so files diff cleanly and can be compared.
    """
    return json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True, separators=(",", ": "), allow_nan=False) + "\n"
