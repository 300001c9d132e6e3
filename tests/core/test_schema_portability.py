"""Every tool schema in the strict profile MCP clients with one type per schema accept (issue 24, item 6).

MCP Inspector 2.x warns that clients which expect a single ``type`` may reject ``"type": [..]``; a
union is written ``anyOf`` instead. Checked over every tool of every capability group.
"""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

import ocnb
from ocnb.registry import Registry, capability_groups

TOOLS = list(Registry(caps=capability_groups()))


def _nodes(schema: Any, path: str = "$") -> list[tuple[str, dict[str, Any]]]:
    """Every sub-schema with its path (properties, items, additionalProperties, anyOf/oneOf/allOf)."""
    if not isinstance(schema, dict):
        return []
    out = [(path, schema)]
    for name, sub in (schema.get("properties") or {}).items():
        out += _nodes(sub, f"{path}.{name}")
    for key in ("items", "additionalProperties", "not"):
        if isinstance(schema.get(key), dict):
            out += _nodes(schema[key], f"{path}/{key}")
    for key in ("anyOf", "oneOf", "allOf"):
        for i, sub in enumerate(schema.get(key) or []):
            out += _nodes(sub, f"{path}/{key}[{i}]")
    return out


@pytest.mark.parametrize("tooldef", TOOLS, ids=[t.name for t in TOOLS])
def test_schema_is_valid_and_has_one_type_per_node(tooldef: ocnb.ToolDef) -> None:
    Draft202012Validator.check_schema(tooldef.input_schema)
    assert tooldef.input_schema.get("type") == "object"
    for path, node in _nodes(tooldef.input_schema):
        assert not isinstance(node.get("type"), list), f"{tooldef.name} {path}: a type array; write anyOf"
        if "properties" in node:
            assert node.get("type") == "object", f"{tooldef.name} {path}: properties without type object"
        typed = "type" in node or "enum" in node or "const" in node or any(k in node for k in ("anyOf", "oneOf"))
        assert typed, f"{tooldef.name} {path}: no type (a strict client cannot tell what to send)"


def test_a_union_still_accepts_each_of_its_types_and_nothing_else() -> None:
    form_input = Registry().get("form_input")
    assert form_input is not None
    check = Draft202012Validator(form_input.input_schema)
    for value in ("x", 3, True, ["a", "b"]):
        assert check.is_valid({"ref": "ax_1", "value": value}), value
    for value in ({"a": 1}, None, [1]):
        assert not check.is_valid({"ref": "ax_1", "value": value}), value
