"""oc_contract_define, oc_assert and oc_evidence_bundle through a real Session on the demo search page."""

from __future__ import annotations

import importlib
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ocnb import registry

pytestmark = pytest.mark.browser

NAMES = ("oc_contract_define", "oc_assert", "oc_evidence_bundle")


@pytest.fixture(scope="module", autouse=True)
def contract_tools() -> Iterator[None]:
    """Register the contract tools for this module's session (built after this fixture).

    While ``ocnb/tools/__init__.py`` does not import ``contracts`` yet, the registration is undone
    afterwards so that other modules (the capability map's drift check) see the wired set only.
    """
    registry.all_tooldefs()
    if all(n in registry._ALL for n in NAMES):
        yield
        return
    importlib.import_module("ocnb.tools.contracts")
    try:
        yield
    finally:
        for name in NAMES:
            registry._ALL.pop(name, None)


RESULTS = {"kind": "dom_text", "selector": "#results-summary", "contains": "Results for"}


def test_define_then_assert_pass_and_fail_with_evidence(session, site) -> None:
    define = session.call("oc_contract_define", contract_id="results-shown", assertion=RESULTS)
    assert define.ok, define
    assert json.loads(Path(define["path"]).read_text())["assertion"] == RESULTS

    session.call("navigate", url=site.page("search.html")).raise_for_error()
    failed = session.call("oc_assert", contract_id="results-shown")
    assert failed.ok and failed["verdict"] == "fail"
    [failure] = failed["failures"]
    assert failure["kind"] == "dom_text" and failure["actual"] == "1 match, none visible"  # results are hidden
    bundle = Path(failed["evidence"]["path"])
    assert sorted(p.name for p in bundle.iterdir()) == ["bundle.json", "dom.html", "screenshot.png"]
    meta = json.loads((bundle / "bundle.json").read_text())
    assert meta["reason"] == "contract 'results-shown' failed" and meta["url"].endswith("search.html")

    session.call("navigate", url=site.page("search.html?q=shoes")).raise_for_error()
    session.call("wait_for", selector="#results-summary:has-text('Results for')").raise_for_error()
    passed = session.call("oc_assert", contract_id="results-shown")
    assert passed["verdict"] == "pass" and passed["failures"] == [] and passed["evidence"] is None


def test_inline_assertion_with_every_error_at_once(session) -> None:
    bad = session.call("oc_assert", assertion={"kind": "and", "children": [{"kind": "url"}, {"kind": "colour"}]})
    assert not bad.ok and bad.error.code == "INVALID_ARGUMENT"
    assert [e["path"] for e in bad.error.details["errors"]] == [
        "$.assertion.children[0].pattern",
        "$.assertion.children[1].kind",
    ]
    both = session.call("oc_assert", contract_id="x", assertion={"kind": "no_dialog"})
    assert not both.ok and both.error.code == "INVALID_ARGUMENT"
    missing = session.call("oc_assert", contract_id="never-defined")
    assert not missing.ok and "no contract with id 'never-defined'" in missing.error.message
    ok = session.call("oc_assert", assertion={"kind": "url", "pattern": "about:blank"}, evidence=False)
    assert ok["verdict"] == "pass"


def test_network_assertion_sees_the_tab_responses_since_the_page_loaded(session, site) -> None:
    session.call("navigate", url=site.page("search.html")).raise_for_error()
    doc = {"kind": "network", "url_pattern": "*/search.html", "status_in": [200]}
    assert session.call("oc_assert", assertion=doc)["verdict"] == "pass"
    session.call("navigate", url=site.page("index.html")).raise_for_error()
    assert session.call("oc_assert", assertion=doc, evidence=False)["verdict"] == "fail"  # an earlier page's
    assert session.call("oc_assert", assertion=doc, since_ms=60_000)["verdict"] == "pass"


def test_evidence_bundle_on_request(session, site) -> None:
    session.call("navigate", url=site.page("search.html?q=lamp")).raise_for_error()
    result = session.call("oc_evidence_bundle", reason="look at this")
    assert result.ok, result
    assert result["files"] == ["bundle.json", "dom.html", "screenshot.png"]
    meta = json.loads((Path(result["path"]) / "bundle.json").read_text())
    assert meta["reason"] == "look at this" and meta["bundle_id"] == result["bundle_id"]


def test_timeout_ms_polls_until_the_assertion_passes(session, site) -> None:
    session.call("navigate", url=site.page("search.html?q=kettle")).raise_for_error()  # results appear after 300 ms
    passed = session.call("oc_assert", assertion=RESULTS, timeout_ms=5_000)
    assert passed["verdict"] == "pass"
    start = time.monotonic()
    never = session.call("oc_assert", assertion={"kind": "title", "equals": "Never"}, timeout_ms=400, evidence=False)
    assert never["verdict"] == "fail" and time.monotonic() - start >= 0.4
