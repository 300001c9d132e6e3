"""Assertion validation, patterns and the contract store (no browser)."""

from __future__ import annotations

import json

import pytest

from ocnb.contracts.assertions import (
    ASSERTION_KINDS,
    describe_assertion,
    ensure_valid_assertion,
    match_pattern,
    validate_assertion,
)
from ocnb.contracts.store import ContractStore, RecordNotFound
from ocnb.errors import InvalidArgument
from ocnb.files import CorruptFile

VALID = [
    {"kind": "url", "pattern": "https://shop.test/*"},
    {"kind": "url", "pattern": "re:^https://shop\\.test/cart$"},
    {"kind": "title", "equals": "Cart"},
    {"kind": "title", "contains": "Ca"},
    {"kind": "title", "pattern": "re:^C"},
    {"kind": "dom_text", "contains": "Total"},
    {"kind": "dom_text", "selector": "#total", "contains": "Total", "description": "total shown"},
    {"kind": "dom_count", "selector": "li", "op": "gte", "value": 0},
    {"kind": "element_visible", "selector": "#ok"},
    {"kind": "element_visible", "role": "button", "name": "Pay"},
    {"kind": "no_dialog"},
    {"kind": "network", "url_pattern": "*/api/*"},
    {"kind": "network", "url_pattern": "*/api/*", "status_in": [200, 201]},
    {"kind": "and", "children": [{"kind": "no_dialog"}]},
    {"kind": "or", "children": [{"kind": "no_dialog"}, {"kind": "title", "equals": "x"}]},
    {"kind": "not", "child": {"kind": "no_dialog"}},
]


@pytest.mark.parametrize("assertion", VALID, ids=lambda a: a["kind"])
def test_valid_assertions_have_no_errors(assertion: dict) -> None:
    assert validate_assertion(assertion) == []
    assert describe_assertion(assertion)


def test_every_kind_is_covered_by_a_valid_example() -> None:
    assert {a["kind"] for a in VALID} == set(ASSERTION_KINDS)


INVALID = [
    ({"kind": "bogus"}, "$.kind", "unknown assertion kind"),
    ({}, "$.kind", "required"),
    ("url", "$", "must be an object"),
    ({"kind": "url"}, "$.pattern", "required"),
    ({"kind": "url", "pattern": "re:("}, "$.pattern", "invalid regular expression"),
    ({"kind": "url", "pattern": 5}, "$.pattern", "expected string, got integer"),
    ({"kind": "url", "pattern": "*", "extra": 1}, "$.extra", "unknown field"),
    ({"kind": "title"}, "$", "exactly one of"),
    ({"kind": "title", "equals": "a", "contains": "b"}, "$", "exactly one of"),
    ({"kind": "dom_text", "contains": ""}, "$.contains", "must not be empty"),
    ({"kind": "dom_count", "selector": "a", "op": "gt", "value": 1}, "$.op", "unknown op"),
    ({"kind": "dom_count", "selector": "a", "op": "eq", "value": True}, "$.value", "expected integer, got boolean"),
    ({"kind": "dom_count", "selector": "a", "op": "eq", "value": -1}, "$.value", "≥ 0"),
    ({"kind": "element_visible"}, "$", "needs selector"),
    ({"kind": "element_visible", "role": "button"}, "$", "needs selector"),
    ({"kind": "element_visible", "selector": "a", "role": "b", "name": "c"}, "$", "not both"),
    ({"kind": "no_dialog", "selector": "x"}, "$.selector", "unknown field"),
    ({"kind": "network", "url_pattern": "*", "status_in": []}, "$.status_in", "must not be empty"),
    ({"kind": "network", "url_pattern": "*", "status_in": [200, 99]}, "$.status_in[1]", "HTTP status"),
    ({"kind": "and", "children": []}, "$.children", "at least one"),
    ({"kind": "or", "children": {}}, "$.children", "expected array"),
    ({"kind": "not", "child": []}, "$.child", "an assertion must be an object, got array"),
]


@pytest.mark.parametrize(("assertion", "path", "fragment"), INVALID, ids=[str(i) for i in range(len(INVALID))])
def test_each_invalid_shape_is_reported_at_its_path(assertion: object, path: str, fragment: str) -> None:
    errors = validate_assertion(assertion)
    assert any(e.path == path and fragment in e.message for e in errors), errors


def test_all_errors_are_reported_at_once_with_nested_paths() -> None:
    doc = {
        "kind": "and",
        "children": [
            {"kind": "url"},
            {"kind": "dom_count", "selector": "li", "op": "gt", "value": 1, "colour": "red"},
            {"kind": "not", "child": {"kind": "nope"}},
            {"kind": "or", "children": [{"kind": "title", "equals": 1}]},
        ],
    }
    errors = {(e.path, e.message.split(" (")[0]) for e in validate_assertion(doc)}
    assert errors == {
        ("$.children[0].pattern", "required field missing in url assertion"),
        ("$.children[1].colour", "unknown field in dom_count assertion"),
        ("$.children[1].op", "unknown op 'gt'"),
        ("$.children[2].child.kind", "unknown assertion kind 'nope'"),
        ("$.children[3].children[0].equals", "expected string, got integer"),
    }


def test_ensure_valid_raises_invalid_argument_with_every_error() -> None:
    with pytest.raises(InvalidArgument) as info:
        ensure_valid_assertion({"kind": "and", "children": [{"kind": "url"}, {"kind": "x"}]})
    assert info.value.code == "INVALID_ARGUMENT"
    assert [e["path"] for e in info.value.details["errors"]] == ["$.children[0].pattern", "$.children[1].kind"]


def test_nesting_depth_is_capped() -> None:
    doc: dict = {"kind": "no_dialog"}
    for _ in range(40):
        doc = {"kind": "not", "child": doc}
    assert any("deeper than" in e.message for e in validate_assertion(doc))


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("https://a.test/*", "https://a.test/x/y?q=1", True),
        ("https://a.test/*", "https://b.test/x", False),
        ("*/search?q=*", "http://h/search?q=shoes", True),
        ("re:q=sho", "http://h/search?q=shoes", True),
        ("re:^q=sho", "http://h/search?q=shoes", False),
        ("re:\\.test/cart$", "https://a.test/cart", True),
        ("Cart", "Cart", True),
        ("Cart", "My Cart", False),
    ],
)
def test_patterns_are_whole_string_globs_or_searched_regexes(pattern: str, text: str, expected: bool) -> None:
    assert match_pattern(pattern, text) is expected


# -- contract store ------------------------------------------------------------------------


def test_contract_round_trip_with_stable_bytes(ocnb_home) -> None:
    store = ContractStore()
    assertion = {"kind": "title", "contains": "Café"}
    store.define("cart.done", assertion, description="cart shown")
    path = ocnb_home / "contracts" / "cart.done.json"
    first = path.read_bytes()
    assert json.loads(first) == {
        "schema_version": 1,
        "id": "cart.done",
        "assertion": assertion,
        "description": "cart shown",
    }
    assert first.endswith(b"\n") and "Café".encode() in first
    store.define("cart.done", dict(reversed(list(assertion.items()))), description="cart shown")
    assert path.read_bytes() == first
    got = store.get("cart.done")
    assert got.assertion == assertion and got.description == "cart shown"
    assert store.ids() == ["cart.done"]
    assert store.delete("cart.done") and store.ids() == []
    assert not store.delete("cart.done")


@pytest.mark.parametrize("bad_id", ["", "a/b", "../x", "x" * 65, "sp ace", "é"])
def test_contract_ids_are_checked(bad_id: str) -> None:
    with pytest.raises(InvalidArgument):
        ContractStore().define(bad_id, {"kind": "no_dialog"})


def test_invalid_assertion_is_not_stored(ocnb_home) -> None:
    with pytest.raises(InvalidArgument) as info:
        ContractStore().define("c1", {"kind": "url", "pattern": "*", "x": 1})
    assert info.value.details["errors"] == [
        {"path": "$.assertion.x", "message": "unknown field in url assertion (allowed: description, kind, pattern)"}
    ]
    assert not (ocnb_home / "contracts" / "c1.json").exists()


def test_missing_contract_is_a_clear_error() -> None:
    with pytest.raises(RecordNotFound, match="no contract with id 'nope'"):
        ContractStore().get("nope")


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"schema_version": 9, "assertion": {}}'])
def test_corrupt_contract_file_is_reported_and_never_overwritten(ocnb_home, content: str) -> None:
    folder = ocnb_home / "contracts"
    folder.mkdir(parents=True)
    (folder / "c1.json").write_text(content)
    store = ContractStore()
    with pytest.raises(CorruptFile, match="will not overwrite"):
        store.get("c1")
    with pytest.raises(CorruptFile):
        store.define("c1", {"kind": "no_dialog"})
    assert (folder / "c1.json").read_text() == content


def test_hand_edited_invalid_contract_reports_paths(ocnb_home) -> None:
    folder = ocnb_home / "contracts"
    folder.mkdir(parents=True)
    (folder / "c2.json").write_text(json.dumps({"schema_version": 1, "id": "c2", "assertion": {"kind": "zzz"}}))
    with pytest.raises(InvalidArgument) as info:
        ContractStore().get("c2")
    assert info.value.details["errors"][0]["path"] == "$.assertion.kind"


# -- observations --------------------------------------------------------------------------


def test_observations_from_a_tab_count_since_the_current_document_loaded() -> None:
    from collections import deque
    from types import SimpleNamespace

    from ocnb.contracts.assertions import PageObservations

    now = 1_000_000.0
    tab = SimpleNamespace(
        page=SimpleNamespace(url="http://h/b.html#top"),
        dialogs=deque([{"ts": now - 50, "type": "alert", "message": "old page"}]),
        responses=deque(
            [
                {"ts": now - 60, "url": "http://h/a.html", "status": 200},
                {"ts": now - 10, "url": "http://h/b.html", "status": 200},
                {"ts": now - 9, "url": "http://h/api", "status": 500},
            ]
        ),
        console=deque([{"ts": now - 55, "type": "log", "text": "a"}, {"type": "log", "text": "no ts"}]),
    )
    obs = PageObservations.from_tab(tab)
    assert obs.dialogs == []  # the alert belonged to the previous page
    assert [r["url"] for r in obs.responses] == ["http://h/b.html", "http://h/api"]
    assert obs.console == [{"type": "log", "text": "no ts"}]
    tab.page.url = "http://h/spa-route"  # pushed state: no document response, so everything counts
    assert len(PageObservations.from_tab(tab).responses) == 3
    assert PageObservations.from_tab(tab, since_ms=0).responses == []
