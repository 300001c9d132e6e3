"""Property tests: every stored form the schema allows round-trips through the store and the export."""

from __future__ import annotations

import ast
import copy
import json
import tempfile
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ocnb.errors import InvalidArgument
from ocnb.skills.export import export_script, script_data
from ocnb.skills.schema import ARTIFACT_SCHEMA_VERSIONS, SELECTOR_TYPES, STEP_KINDS, skill_errors
from ocnb.skills.store import SkillStore

text = st.text(max_size=12)
word = st.text(min_size=1, max_size=12)
opt_text = st.none() | text
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.floats(allow_nan=False, allow_infinity=False) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=6,
)
# Strings that once broke the export: docstring quotes, JSON words inside strings, placeholders.
tricky = st.sampled_from(['"""', "'''", '[aria-hidden="false"]', "null", "true", "\\", "\n", "${who}", "${SECRET:PW}"])
value_text = st.one_of(text, tricky, st.builds(lambda a, b: a + b, tricky, text))

role_name = st.fixed_dictionaries({"type": st.just("role_name"), "role": word, "name": value_text})
by_value = st.fixed_dictionaries(
    {"type": st.sampled_from([t for t in SELECTOR_TYPES if t != "role_name"]), "value": value_text.filter(bool)}
)
selector = role_name | by_value
known_fp = {k: opt_text for k in ("role", "name", "tag", "type", "name_attr", "autocomplete", "label")} | {
    "frame": st.fixed_dictionaries({"ordinal": st.integers(0, 5)}, optional={"url": opt_text}),
    "twins": st.integers(0, 3),
}
fingerprint = st.builds(
    lambda known, extra: {**extra, **known},
    st.fixed_dictionaries({}, optional=known_fp),
    st.dictionaries(st.text(min_size=1, max_size=8).filter(lambda k: k not in known_fp), opt_text, max_size=2),
)


@st.composite
def low_step(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(STEP_KINDS))
    needs_element = kind not in ("navigate", "press")
    args: dict[str, Any] = draw(st.dictionaries(text, json_values, max_size=2))
    args["action"] = draw(value_text)
    if kind == "navigate":
        args["url"] = draw(value_text.filter(bool))
    if kind == "press":
        args["key"] = draw(word)
    step: dict[str, Any] = {
        "kind": kind,
        "selectors": draw(st.lists(selector, min_size=1 if needs_element else 0, max_size=3)),
        "args": args,
    }
    optional = {
        "frame_ordinal": st.integers(0, 4),
        "risky": st.booleans(),
        "target": st.none() | st.dictionaries(st.sampled_from(["role", "name"]), opt_text),
        "post_assert": st.none() | st.fixed_dictionaries({"contract_id": word}),
        "fingerprint": st.none() | fingerprint,
    }
    for key, strategy in optional.items():
        if draw(st.booleans()):
            step[key] = draw(strategy)
    return step


artifact = st.fixed_dictionaries(
    {
        "schema_version": st.sampled_from(ARTIFACT_SCHEMA_VERSIONS),
        "steps": st.lists(low_step(), min_size=1, max_size=3),
    },
    optional={"recorded_at": text, "recorder": st.fixed_dictionaries({"ocnb_version": text}), "url": opt_text},
)
skill_step = st.fixed_dictionaries(
    {"tool": word, "replay_artifact": st.none() | artifact},
    optional={"args": st.dictionaries(text, json_values, max_size=2), "description": opt_text, "intent": opt_text},
)
skill_steps = st.lists(skill_step, min_size=1, max_size=3)
names = st.text(min_size=1, max_size=120) | st.builds(lambda t: f'x"""{t}', text)
domains = st.sampled_from(["example.com", "127.0.0.1:8000", "[::1]:9", "münchen.de", "a-b.c_d"])

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.slow
@SETTINGS
@given(domain=domains, name=names, steps=skill_steps, description=opt_text)
def test_stored_form_round_trips_through_the_schema(domain: str, name: str, steps: list, description) -> None:
    with tempfile.TemporaryDirectory() as home:
        store = SkillStore(home)
        recorded = store.record(domain, name, copy.deepcopy(steps), description=description)
        assert skill_errors(recorded) == []
        assert recorded["steps"] == steps  # nothing added, dropped or rewritten
        on_disk = json.loads(store.path(domain).read_text(encoding="utf-8"))["skills"][recorded["id"]]
        assert on_disk == recorded == store.get(recorded["id"])
        assert skill_errors(json.loads(json.dumps(on_disk))) == []


@pytest.mark.slow
@SETTINGS
@given(steps=skill_steps, where=st.data(), bad_kind=text.filter(lambda k: k not in STEP_KINDS))
def test_an_unknown_step_kind_anywhere_is_refused_and_not_stored(steps: list, where, bad_kind: str) -> None:
    lows = [low for st_ in steps for low in (st_["replay_artifact"] or {}).get("steps", [])]
    if not lows:
        steps[0]["replay_artifact"] = {"schema_version": 1, "steps": [{"kind": "click", "selectors": [], "args": {}}]}
        lows = steps[0]["replay_artifact"]["steps"]
    where.draw(st.sampled_from(lows))["kind"] = bad_kind
    with tempfile.TemporaryDirectory() as home:
        store = SkillStore(home)
        with pytest.raises(InvalidArgument) as info:
            store.record("example.com", "bad", steps)
        assert any(e["path"].endswith(".kind") for e in info.value.details["errors"])
        assert not store.path("example.com").exists()


def _shape(tree: ast.Module) -> list[str]:
    """The top-level statements of a script, data values left out: what code it runs."""
    out = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant | ast.Dict | ast.List):
            out.append("data " + ast.unparse(node.targets[0]))
        else:
            out.append(ast.dump(node))
    return out


REFERENCE = ast.parse(
    export_script({"id": "sk_0000000000000000", "name": "plain", "domain": "example.com", "steps": []})
)


@pytest.mark.slow
@SETTINGS
@given(name=names, steps=skill_steps, start_url=opt_text)
def test_exported_script_embeds_data_only_as_literals(name: str, steps: list, start_url) -> None:
    skill = {"id": "sk_0123456789abcdef", "name": name, "domain": "example.com", "steps": steps, "start_url": start_url}
    text_ = export_script(skill)
    tree = ast.parse(text_)
    compile(tree, "skill.py", "exec")
    assert _shape(tree) == _shape(REFERENCE)  # the same code whatever the data: nothing injected
    assert ast.get_docstring(tree) == ast.get_docstring(REFERENCE)
    data = script_data(skill)
    embedded = {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id in data
    }
    assert embedded == data
