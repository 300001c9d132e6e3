"""Task signatures: validation (every error at once), stable bytes, inputs, redaction, the store."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from ocnb.contracts.signatures import (
    REDACTED,
    BrowserTaskSignature,
    SignatureStore,
    check_inputs,
    dumps,
    load_signature,
    loads,
    parse_signature,
    redact_inputs,
    require_inputs,
    secret_input_masks,
    secret_values,
    validate_signature,
)
from ocnb.errors import InvalidArgument
from ocnb.files import CorruptFile


def login_doc() -> dict:
    return {
        "version": 1,
        "id": "demo-login",
        "description": "Log in to the demo site.",
        "inputs": {
            "username": {"type": "string"},
            "password": {"type": "string", "required": True, "redaction": "secret"},
            "remember": {"type": "boolean", "required": False},
            "retries": {"type": "number", "required": False},
        },
        "allowedTools": ["navigate", "form_input", "interact", "read_page"],
        "success": {"kind": "dom_text", "selector": "#welcome", "contains": "Welcome"},
        "failureWhen": [{"kind": "dom_text", "selector": ".error", "contains": "Invalid"}],
        "loopGuards": [{"kind": "max_observation_calls", "limit": 3, "window": 10}],
        "budgets": {"maxToolCalls": 12, "maxWallMs": 30000},
    }


def test_valid_signature_parses_to_the_typed_model() -> None:
    sig = parse_signature(login_doc())
    assert isinstance(sig, BrowserTaskSignature)
    assert sig.id == "demo-login"
    assert sig.allowed_tools == ("form_input", "interact", "navigate", "read_page")
    assert sig.inputs["username"].required is True and sig.inputs["username"].redaction == "none"
    assert sig.inputs["remember"].required is False
    assert sig.secret_inputs == ("password",)
    assert sig.budgets.max_tool_calls == 12 and sig.budgets.max_wall_ms == 30000
    assert sig.loop_guards[0].kind == "max_observation_calls" and sig.loop_guards[0].window == 10
    assert sig.stop_when == ()


def test_serialization_is_stable_and_canonical() -> None:
    doc = login_doc()
    shuffled = json.loads(json.dumps(doc))
    shuffled["allowedTools"].reverse()
    shuffled = dict(reversed(list(shuffled.items())))
    shuffled["stopWhen"] = []
    shuffled["inputs"]["username"] = {"redaction": "none", "required": True, "type": "string"}
    text = dumps(doc)
    assert dumps(shuffled) == text
    assert text.endswith("}\n") and '\n  "allowedTools": [\n    "form_input",' in text
    assert loads(text).dumps() == text  # a round trip is byte-identical
    assert text.encode() == parse_signature(doc).dumps().encode()


def test_signature_dumps_includes_defaults() -> None:
    out = json.loads(dumps(login_doc()))
    assert out["inputs"]["username"] == {"type": "string", "required": True, "redaction": "none"}
    assert out["stopWhen"] == [] and out["version"] == 1


def _errors(doc: object) -> set[tuple[str, str]]:
    return {(e.path, e.message) for e in validate_signature(doc)}


@pytest.mark.parametrize(
    ("mutate", "path", "fragment"),
    [
        (lambda d: d.update(extra=1), "$.extra", "unknown field in signature"),
        (lambda d: d.pop("success"), "$.success", "required field missing"),
        (lambda d: d.update(version=2), "$.version", "unsupported version 2"),
        (lambda d: d.update(id="bad id"), "$.id", "must be 1-64 characters"),
        (lambda d: d.update(description=" "), "$.description", "must not be empty"),
        (lambda d: d["inputs"].update(q={"type": "date"}), "$.inputs.q.type", "unknown input type 'date'"),
        (
            lambda d: d["inputs"].update(q={"type": "string", "redaction": "hidden"}),
            "$.inputs.q.redaction",
            "unknown redaction",
        ),
        (
            lambda d: d["inputs"].update(q={"type": "string", "secret": True}),
            "$.inputs.q.secret",
            "unknown field in input spec",
        ),
        (lambda d: d["inputs"].update(q={"required": True}), "$.inputs.q.type", "required field missing"),
        (lambda d: d["inputs"].update({"1q": {"type": "string"}}), '$.inputs["1q"]', "input names"),
        (lambda d: d.update(allowedTools=[]), "$.allowedTools", "at least one tool"),
        (lambda d: d["allowedTools"].append("navigate"), "$.allowedTools[4]", "duplicate tool 'navigate'"),
        (lambda d: d["allowedTools"].append(3), "$.allowedTools[4]", "expected a tool name"),
        (lambda d: d.update(success={"kind": "magic"}), "$.success.kind", "unknown assertion kind 'magic'"),
        (lambda d: d.update(stopWhen=[{"kind": "url"}]), "$.stopWhen[0].pattern", "required field missing"),
        (lambda d: d["failureWhen"].append({"kind": "no_dialog", "x": 1}), "$.failureWhen[1].x", "unknown field"),
        (
            lambda d: d["loopGuards"].append({"kind": "max_tokens", "limit": 3}),
            "$.loopGuards[1].kind",
            "unknown loop guard kind",
        ),
        (
            lambda d: d["loopGuards"].append({"kind": "max_same_tool"}),
            "$.loopGuards[1].limit",
            "required field missing",
        ),
        (
            lambda d: d["loopGuards"].append({"kind": "max_same_tool", "limit": 0}),
            "$.loopGuards[1].limit",
            "must be ≥ 1",
        ),
        (
            lambda d: d["loopGuards"].append({"kind": "max_same_tool", "limit": 3, "window": 3}),
            "$.loopGuards[1].window",
            "greater than limit",
        ),
        (
            lambda d: d["loopGuards"].append({"kind": "max_same_tool", "limit": 3, "every": 3}),
            "$.loopGuards[1].every",
            "unknown field",
        ),
        (lambda d: d["budgets"].update(maxToolCalls=0), "$.budgets.maxToolCalls", "must be ≥ 1"),
        (lambda d: d["budgets"].update(maxWallMs="1s"), "$.budgets.maxWallMs", "expected integer, got string"),
        (lambda d: d["budgets"].update(maxTokens=5), "$.budgets.maxTokens", "unknown field in budgets"),
    ],
)
def test_each_kind_of_invalid_signature_is_reported(mutate, path: str, fragment: str) -> None:
    doc = login_doc()
    mutate(doc)
    errors = validate_signature(doc)
    assert any(e.path == path and fragment in e.message for e in errors), errors


def test_all_errors_are_reported_at_once() -> None:
    doc = login_doc()
    doc["surprise"] = True
    doc["inputs"]["q"] = {"type": "list"}
    doc["allowedTools"] = ["navigate", "navigate"]
    doc["success"] = {"kind": "and", "children": [{"kind": "url"}, {"kind": "bogus"}]}
    doc["loopGuards"] = [{"kind": "max_loops", "limit": -1}]
    doc["budgets"] = {"maxToolCalls": 0}
    paths = [e.path for e in validate_signature(doc)]
    assert sorted(paths) == sorted(
        [
            "$.surprise",
            "$.inputs.q.type",
            "$.allowedTools[1]",
            "$.success.children[0].pattern",
            "$.success.children[1].kind",
            "$.loopGuards[0].kind",
            "$.loopGuards[0].limit",
            "$.budgets.maxToolCalls",
        ]
    )
    with pytest.raises(InvalidArgument) as info:
        parse_signature(doc)
    assert len(info.value.details["errors"]) == len(paths)


def test_known_tools_rejects_unregistered_names() -> None:
    errors = validate_signature(login_doc(), known_tools={"navigate", "interact", "read_page"})
    assert [(e.path, e.message) for e in errors] == [("$.allowedTools[1]", "unknown tool 'form_input'")]


def test_non_object_and_bad_json() -> None:
    assert _errors([]) == {("$", "a signature must be an object, got array")}
    with pytest.raises(InvalidArgument, match="not valid JSON"):
        loads("{nope")


# -- inputs --------------------------------------------------------------------------------


def test_check_inputs_reports_types_required_and_unknown_without_values() -> None:
    sig = parse_signature(login_doc())
    assert check_inputs(sig, {"username": "ada", "password": "s3cret", "retries": 2.5, "remember": False}) == []
    errors = check_inputs(sig, {"username": 7, "retries": True, "pin": "1234"}, path="$.inputs")
    got = {(e.path, e.message.split(" (")[0]) for e in errors}
    assert got == {
        ("$.inputs.pin", "unknown input"),
        ("$.inputs.password", "required string input missing"),
        ("$.inputs.username", "expected string, got integer"),
        ("$.inputs.retries", "expected number, got boolean"),
    }
    assert all("1234" not in e.message for e in errors)


def test_secret_inputs_are_redacted() -> None:
    sig = parse_signature(login_doc())
    inputs = {"username": "ada", "password": "hunter2", "remember": True}
    redacted = redact_inputs(sig, inputs)
    assert redacted == {"username": "ada", "password": REDACTED, "remember": True}
    assert "hunter2" not in json.dumps(redacted)
    assert inputs["password"] == "hunter2"  # the caller's dict is untouched
    assert secret_values(sig, inputs) == ["hunter2"]
    placeholder = {"username": "ada", "password": "${SECRET:DEMO_PASSWORD}"}
    assert redact_inputs(sig, placeholder)["password"] == "${SECRET:DEMO_PASSWORD}"
    assert secret_values(sig, placeholder) == []


def test_require_inputs_raises_with_every_problem_and_masks_name_secret_literals() -> None:
    sig = parse_signature(login_doc())
    with pytest.raises(InvalidArgument) as info:
        require_inputs(sig, {"username": 7, "pin": "1234"}, what="params")
    assert info.value.message == "params do not match the signature's inputs"
    assert sorted(e["path"] for e in info.value.details["errors"]) == ["$.password", "$.pin", "$.username"]
    require_inputs(sig, {"username": "ada", "password": "pw"})
    assert secret_input_masks(sig, {"username": "ada", "password": "hunter2"}) == {"INPUT_PASSWORD": "hunter2"}
    assert secret_input_masks(sig, {"password": "${SECRET:PW}"}) == {}


def test_load_signature_takes_a_stored_id_or_an_inline_document(ocnb_home) -> None:
    SignatureStore().save(login_doc())
    assert load_signature("demo-login") == parse_signature(login_doc())
    assert load_signature(login_doc(), known_tools=None).id == "demo-login"
    with pytest.raises(InvalidArgument, match="unknown tool 'form_input'"):
        load_signature(login_doc(), known_tools={"navigate", "interact", "read_page"})


# -- store ---------------------------------------------------------------------------------


def test_store_writes_canonical_bytes_and_reads_back(ocnb_home) -> None:
    store = SignatureStore()
    path = store.save(login_doc())
    assert path == ocnb_home / "signatures" / "demo-login.json"
    assert path.read_text() == dumps(login_doc())
    assert store.get("demo-login") == parse_signature(login_doc())
    assert store.ids() == ["demo-login"]
    assert store.delete("demo-login") and store.ids() == []


def test_store_refuses_invalid_and_corrupt(ocnb_home) -> None:
    store = SignatureStore()
    bad = copy.deepcopy(login_doc())
    bad["budgets"] = {"maxWallMs": 0}
    with pytest.raises(InvalidArgument):
        store.save(bad)
    assert store.ids() == []
    folder = ocnb_home / "signatures"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "demo-login.json").write_text("{truncated")
    with pytest.raises(CorruptFile):
        store.save(login_doc())
    assert (folder / "demo-login.json").read_text() == "{truncated"


def test_store_detects_an_id_that_does_not_match_the_file_name(ocnb_home) -> None:
    folder = ocnb_home / "signatures"
    folder.mkdir(parents=True)
    (folder / "other.json").write_text(dumps(login_doc()))
    with pytest.raises(InvalidArgument, match="holds signature 'demo-login'"):
        SignatureStore().get("other")


# -- the worked examples in docs/task-signatures.md ------------------------------------------

DOC = Path(__file__).resolve().parents[2] / "docs" / "task-signatures.md"


def _doc_signatures() -> list[dict]:
    blocks = re.findall(r"```json\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    return [json.loads(b) for b in blocks if '"version"' in b]


def test_the_documented_signatures_are_valid() -> None:
    docs = _doc_signatures()
    assert [d["id"] for d in docs] == ["demo-search", "demo-login"]
    for doc in docs:
        assert validate_signature(doc) == []
    login = parse_signature(docs[1])
    assert [(e.path, e.message) for e in check_inputs(login, {"username": "ada"})] == [
        ("$.password", "required string input missing")
    ]


def test_the_documented_search_evaluation() -> None:
    from ocnb.contracts import AssertionOutcome, CallInfo, PageState, evaluate_signature

    sig = parse_signature(_doc_signatures()[0])
    no = AssertionOutcome(False)
    state = PageState(success=no, stop_when=(no,), failure_when=(no,))
    nav = CallInfo("navigate", url_before="about:blank", url_after="http://127.0.0.1/search.html")
    assert evaluate_signature(
        sig, page_state=state, calls=[nav, *[CallInfo("read_page")] * 3], elapsed_ms=1
    ).status == ("continue")
    got = evaluate_signature(sig, page_state=state, calls=[CallInfo("read_page")] * 4, elapsed_ms=900).to_dict()
    assert got == {
        "status": "stop",
        "reasons": ["max_observation_calls: 4 observation calls since the last progress (limit 3)"],
    }


def test_budgets_are_optional_with_documented_defaults() -> None:
    from ocnb.contracts.signatures import DEFAULT_MAX_TOOL_CALLS, DEFAULT_MAX_WALL_MS

    doc = login_doc()
    del doc["budgets"]
    assert validate_signature(doc) == []
    sig = parse_signature(doc)
    assert (
        (sig.budgets.max_tool_calls, sig.budgets.max_wall_ms)
        == (DEFAULT_MAX_TOOL_CALLS, DEFAULT_MAX_WALL_MS)
        == (
            50,
            300_000,
        )
    )
    partial = login_doc()
    partial["budgets"] = {"maxToolCalls": 7}
    sig = parse_signature(partial)
    assert (sig.budgets.max_tool_calls, sig.budgets.max_wall_ms) == (7, DEFAULT_MAX_WALL_MS)
    assert json.loads(dumps(doc))["budgets"] == {"maxToolCalls": 50, "maxWallMs": 300_000}  # canonical: filled in
