"""The JSON Schemas of assertion, contract and signature documents, and the errors they give."""

from __future__ import annotations

import copy

import pytest
from jsonschema import Draft202012Validator

from ocnb.contracts.assertions import ASSERTION_SCHEMA, validate_assertion
from ocnb.contracts.signatures import SIGNATURE_SCHEMA, validate_signature
from ocnb.contracts.store import CONTRACT_SCHEMA
from tests.contracts.test_assertions import VALID
from tests.contracts.test_signatures import login_doc


@pytest.mark.parametrize("schema", [ASSERTION_SCHEMA, SIGNATURE_SCHEMA, CONTRACT_SCHEMA], ids=["a", "s", "c"])
def test_each_schema_is_a_draft_2020_12_schema_an_editor_can_use(schema: dict) -> None:
    Draft202012Validator.check_schema(schema)


def test_plain_jsonschema_accepts_what_ocnb_accepts() -> None:
    for doc in VALID:
        assert Draft202012Validator(ASSERTION_SCHEMA).is_valid(doc), doc
        assert Draft202012Validator(CONTRACT_SCHEMA).is_valid({"schema_version": 1, "id": "c", "assertion": doc})
    assert Draft202012Validator(SIGNATURE_SCHEMA).is_valid(login_doc())
    assert not Draft202012Validator(ASSERTION_SCHEMA).is_valid({"kind": "url", "pattern": "*", "x": 1})


def messages(errors) -> list[str]:
    return [f"{e.path}: {e.message}" for e in errors]


def test_exactly_one_of_says_which_fields_were_given() -> None:
    assert messages(validate_assertion({"kind": "title", "equals": "a", "pattern": "b"})) == [
        "$: title assertion needs exactly one of equals, contains, pattern (given: equals, pattern)"
    ]
    assert messages(validate_assertion({"kind": "element_visible", "name": "Pay"})) == [
        "$: element_visible needs selector, or both role and name, not both (given: name)"
    ]


def test_errors_come_in_document_order_every_one_at_once() -> None:
    doc = {"kind": "or", "children": [{"kind": "url"} if i in (2, 10) else {"kind": "no_dialog"} for i in range(11)]}
    assert [e.path for e in validate_assertion(doc)] == ["$.children[2].pattern", "$.children[10].pattern"]


def test_a_wrongly_typed_value_gets_one_error_not_two() -> None:
    doc = login_doc()
    doc["version"] = "1"
    assert messages(validate_signature(doc)) == ["$.version: expected integer, got string"]


def test_a_bad_input_name_and_a_bad_spec_are_both_reported() -> None:
    doc = login_doc()
    doc["inputs"]["1q"] = "string"
    assert messages(validate_signature(doc)) == [
        '$.inputs["1q"]: an input spec must be an object, got string',
        '$.inputs["1q"]: input names are 1-64 letters, digits or _, not starting with a digit',
    ]


@pytest.mark.parametrize("bad", ["x\n", "", "a b", "x" * 65])
def test_ids_match_as_a_whole(bad: str) -> None:
    doc = copy.deepcopy(login_doc())
    doc["id"] = bad
    assert messages(validate_signature(doc)) == ["$.id: must be 1-64 characters from A-Z a-z 0-9 _ . -"]


def test_a_too_deep_assertion_inside_a_signature_is_cut_and_reported() -> None:
    deep: dict = {"kind": "no_dialog"}
    for _ in range(500):
        deep = {"kind": "not", "child": deep}
    doc = login_doc()
    doc["failureWhen"] = [deep]
    (error,) = validate_signature(doc)
    assert error.path.startswith("$.failureWhen[0].child.child") and "deeper than 32" in error.message
