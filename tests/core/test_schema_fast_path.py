"""The compiled schema check in front of jsonschema: the same verdict and messages for every tool.

dispatch lets a compiled (fastjsonschema) check accept a valid call; anything it refuses goes to
jsonschema as before. The danger is one way only: the fast check saying "valid" where jsonschema
would refuse. Every tool's schema is tried here with thousands of argument sets built from its own
limits (enums, lengths, bounds) and values of every JSON type, and ``schema_errors`` must give exactly
what jsonschema alone gives.
"""

from __future__ import annotations

import copy
import importlib
import random
from typing import Any

import pytest
from jsonschema import Draft202012Validator

import ocnb.tools  # noqa: F401 - registers every tool
from ocnb.dispatch import _validator, schema_errors
from ocnb.registry import ToolDef, all_tooldefs

PALETTE: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    1.0,
    2.5,
    -0.5,
    2**53 + 1,
    "",
    "a",
    " ",
    "x" * 300,
    "line\n",
    "Ünïcødé 💥",
    [],
    [1],
    ["a", "b"],
    ["a", "a"],
    [None],
    [{"a": 1}],
    {},
    {"a": 1},
    {"name": "x", "value": "y"},
]


_CHECKERS: dict[int, Any] = {}
_CANDIDATES: dict[int, list[Any]] = {}


def _checker(schema: Any) -> Any:
    found = _CHECKERS.get(id(schema))
    if found is None:
        found = _CHECKERS[id(schema)] = Draft202012Validator(schema)
    return found


def _fits(schema: Any, value: Any) -> bool:
    return bool(_checker(schema).is_valid(value))


def _candidates(schema: Any) -> list[Any]:
    found = _CANDIDATES.get(id(schema))
    if found is None:
        found = _CANDIDATES[id(schema)] = _edges(schema)
    return found


def _fitting(schema: Any) -> list[Any]:
    key = -id(schema)
    found = _CANDIDATES.get(key)
    if found is None:
        found = _CANDIDATES[key] = [v for v in _candidates(schema) if _fits(schema, v)]
    return found


def _edges(schema: Any) -> list[Any]:
    """Values near the edges of ``schema`` (its enum, length and number bounds) and of every type."""
    out = list(PALETTE)
    if not isinstance(schema, dict):
        return out
    for sub in schema.get("anyOf", []):
        out += _candidates(sub)[len(PALETTE) :]
    out += list(schema.get("enum", []))
    for key in ("minLength", "maxLength"):
        if key in schema:
            n = schema[key]
            out += ["y" * max(0, n + d) for d in (-1, 0, 1)]
    for key in ("minimum", "maximum"):
        if key in schema:
            n = schema[key]
            out += [n - 1, n, n + 1, n - 0.5, n + 0.5, float(n)]
    if "items" in schema:
        items = [v for v in _candidates(schema["items"]) if _fits(schema["items"], v)]
        items = items[-4:] or PALETTE[:4]
        out += [items[:k] for k in (0, 1, 2, 3)] + [[items[0], items[0]]]
    if "properties" in schema:
        out += [_args(schema, random.Random(i)) for i in range(4)]
    return out


def _args(schema: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    out: dict[str, Any] = {}
    for name, sub in props.items():
        if name in required and rng.random() < 0.95 or rng.random() < 0.4:
            values, fitting = _candidates(sub), _fitting(sub)
            out[name] = copy.deepcopy(rng.choice(fitting if fitting and rng.random() < 0.8 else values))
    if rng.random() < 0.1:
        out["not_a_property"] = rng.choice(PALETTE)
    return out


def _expected(tooldef: ToolDef, args: dict[str, Any]) -> list[dict[str, str]]:
    errors = []
    for err in _checker(tooldef.input_schema).iter_errors(args):
        path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
        errors.append({"path": path, "message": err.message})
    return sorted(errors, key=lambda e: (e["path"], e["message"]))


TOOLDEFS = sorted(all_tooldefs(), key=lambda t: t.name)


@pytest.mark.parametrize("tooldef", TOOLDEFS, ids=[t.name for t in TOOLDEFS])
def test_schema_errors_are_jsonschemas_own_for_every_tool(tooldef: ToolDef) -> None:
    rng = random.Random(tooldef.name)
    valid = 0
    for _ in range(400):
        args = _args(tooldef.input_schema, rng)
        given = copy.deepcopy(args)
        expected = _expected(tooldef, args)
        assert schema_errors(tooldef, args) == expected, args
        assert args == given, "the check changed the arguments (a default filled in?)"
        valid += not expected
    assert valid, f"no valid argument set was tried for {tooldef.name}"


def test_nearly_every_tool_gets_the_compiled_check() -> None:
    fast = [t.name for t in TOOLDEFS if _validator(t)[1] is not None]
    assert len(fast) >= len(TOOLDEFS) - 3, sorted({t.name for t in TOOLDEFS} - set(fast))
    assert "javascript_tool" in fast and "navigate" in fast


def test_a_keyword_the_drafts_read_differently_keeps_jsonschema_alone() -> None:
    """``uniqueItems`` (jsonschema tells ``1`` from ``true``), a number enum, 2020-12's ``prefixItems``."""
    from ocnb.dispatch import _fast_ok

    assert _fast_ok({"type": "object", "properties": {"a": {"type": "string", "minLength": 1}}})
    assert not _fast_ok({"type": "array", "uniqueItems": True})
    assert not _fast_ok({"type": "object", "properties": {"a": {"enum": [1, 2]}}})
    assert not _fast_ok({"type": "object", "properties": {"a": {"prefixItems": [{"type": "string"}]}}})
    assert not _fast_ok({"type": "object", "anyOf": [{"type": "object", "format": "uri"}]})


def test_a_schema_the_compiler_refuses_is_checked_by_jsonschema_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    import fastjsonschema

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise fastjsonschema.JsonSchemaDefinitionException("cannot compile this")

    monkeypatch.setattr(fastjsonschema, "compile", refuse)
    [base] = [t for t in TOOLDEFS if t.name == "javascript_tool"]
    tooldef = dataclasses.replace(base, input_schema=copy.deepcopy(base.input_schema))  # a schema not compiled yet
    # a cache of its own: the entry goes with the test (the cache is keyed by the schema's id)
    monkeypatch.setattr(importlib.import_module("ocnb.dispatch"), "_validators", {})
    assert _validator(tooldef)[1] is None
    assert schema_errors(tooldef, {"expression": "1"}) == []
    assert [e["path"] for e in schema_errors(tooldef, {"expression": ""})] == ["$.expression"]


def test_unique_items_over_strings_gets_the_compiled_check() -> None:
    """``uniqueItems`` whose items can only be strings (an enum of strings: replay's ``tolerate``) reads
    alike in both drafts, so the compiled check answers for oc_skill_replay and its internal step tool;
    over anything else jsonschema alone still decides."""
    from ocnb.dispatch import _fast_ok

    strings = {"type": "array", "items": {"enum": ["name", "role"]}, "uniqueItems": True}
    assert _fast_ok(strings)
    assert not _fast_ok({**strings, "items": {"enum": ["name", 1]}})
    assert not _fast_ok({**strings, "items": {"type": "string"}})
    assert not _fast_ok({"type": "array", "uniqueItems": True})
    for name in ("oc_skill_replay",):
        [t] = [t for t in TOOLDEFS if t.name == name]
        assert _validator(t)[1] is not None


def test_the_replay_step_tool_gets_the_same_verdicts_and_messages() -> None:
    """The internal ``replay_step`` (one call per replayed step) against jsonschema alone, as every
    public tool is above; ``tolerate`` with a repeated word is refused with jsonschema's message."""
    from ocnb.registry import internal_tooldef

    tooldef = internal_tooldef("replay_step")
    assert tooldef is not None and _validator(tooldef)[1] is not None
    test_schema_errors_are_jsonschemas_own_for_every_tool(tooldef)
    step = {"kind": "fill", "args": {"value": "x"}, "selectors": [{"type": "css", "value": "#a"}]}
    for tolerate in (["name", "name"], ["name", True], [1, 1.0], ["role"], []):
        args = {"step": step, "tolerate": tolerate}
        assert schema_errors(tooldef, args) == _expected(tooldef, args), tolerate
    assert schema_errors(tooldef, {"step": step, "tolerate": ["name", "name"]})[0]["path"] == "$.tolerate"
