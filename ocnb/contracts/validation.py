"""Structural validation shared by assertions and task signatures.

Validators here never stop at the first problem: each collects every :class:`ValidationError` (a JSON
path such as ``$.children[1].op`` plus a message) so that a person or an agent can fix a document in
one round. The small field checkers are the one place that knows JSON types (a ``bool`` is not a
number here, although Python says it is an ``int``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from ocnb.errors import InvalidArgument

__all__ = [
    "ValidationError",
    "check_fields",
    "child_path",
    "dumps_canonical",
    "is_integer",
    "json_type",
    "raise_if_invalid",
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


def is_integer(value: Any) -> TypeGuard[int]:
    """A JSON integer (``True`` is not one)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _is(value: Any, expected: str) -> bool:
    actual = json_type(value)
    if expected == "number":
        return actual in ("integer", "number")
    return actual == expected


def check_fields(
    obj: Mapping[str, Any],
    path: str,
    fields: Mapping[str, str],
    required: Iterable[str],
    errors: list[ValidationError],
    *,
    what: str = "object",
) -> None:
    """Check an object's field names and JSON types: unknown fields, missing required ones, wrong types.

    ``fields`` maps each allowed name to its JSON type (``string``, ``integer``, ``number``,
    ``boolean``, ``array``, ``object``, or ``any``). Values are not looked into further.
    """
    for key in obj:
        if key not in fields:
            allowed = ", ".join(sorted(fields))
            errors.append(ValidationError(child_path(path, str(key)), f"unknown field in {what} (allowed: {allowed})"))
    for key in required:
        if key not in obj:
            errors.append(ValidationError(child_path(path, key), f"required field missing in {what}"))
    for key, expected in fields.items():
        if key in obj and expected != "any" and not _is(obj[key], expected):
            errors.append(ValidationError(child_path(path, key), f"expected {expected}, got {json_type(obj[key])}"))


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
