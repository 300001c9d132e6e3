"""The signature evaluator and the live guard, with assertion outcomes injected (no browser)."""

from __future__ import annotations

import pytest

from ocnb.contracts.assertions import AssertionOutcome
from ocnb.contracts.evaluator import (
    CONTROL_TOOLS,
    OBSERVATION_TOOLS,
    CallInfo,
    PageState,
    evaluate_signature,
    guard_call,
    guard_status,
    is_progress,
    preflight,
)
from ocnb.contracts.signatures import BrowserTaskSignature, parse_signature
from ocnb.errors import BudgetExhausted, DisallowedTool

PASS = AssertionOutcome(True)
FAIL = AssertionOutcome(
    False, [{"path": "$", "kind": "dom_text", "expected": "text containing 'Results'", "actual": ""}]
)


def make_sig(guards: list[dict] | None = None, *, calls: int = 10, wall: int = 60_000) -> BrowserTaskSignature:
    return parse_signature(
        {
            "version": 1,
            "id": "search",
            "description": "Search for a term.",
            "inputs": {"q": {"type": "string"}},
            "allowedTools": ["navigate", "form_input", "interact", "read_page", "find"],
            "success": {"kind": "dom_text", "selector": "#results", "contains": "Results"},
            "stopWhen": [{"kind": "url", "pattern": "*/captcha*"}],
            "failureWhen": [{"kind": "dom_text", "contains": "Server error"}],
            "loopGuards": guards or [],
            "budgets": {"maxToolCalls": calls, "maxWallMs": wall},
        }
    )


def state(success=FAIL, stop=FAIL, failure=FAIL, url="http://127.0.0.1/search") -> PageState:
    return PageState(success, (stop,), (failure,), url)


def acting(tool: str = "interact", **kw) -> CallInfo:
    return CallInfo(tool, **kw)


READ = CallInfo("read_page")


# -- progress and observations ---------------------------------------------------------------


def test_progress_is_url_change_acting_dom_change_or_passed_assertion() -> None:
    assert is_progress(CallInfo("navigate", url_before="http://a/", url_after="http://a/b"))
    assert not is_progress(CallInfo("navigate", url_before="http://a/", url_after="http://a/"))
    assert not is_progress(CallInfo("navigate", url_before=None, url_after="http://a/"))
    assert is_progress(CallInfo("interact", dom_changed=True))
    assert not is_progress(CallInfo("read_page", dom_changed=True))  # looking is not acting
    assert is_progress(CallInfo("oc_assert", assertion_passed=True))
    assert not is_progress(CallInfo("interact"))


def test_call_info_from_result_reads_the_result_shapes() -> None:
    assert CallInfo.from_result("interact", True, {"changes": {"dom_changed": True}}).progress
    assert not CallInfo.from_result("interact", False, {"changes": {"dom_changed": True}}).progress
    assert not CallInfo.from_result("interact", True, {"changes": {"dom_changed": False}}).progress
    assert CallInfo.from_result("oc_assert", True, {"verdict": "pass"}).assertion_passed
    assert not CallInfo.from_result("oc_assert", True, {"verdict": "fail"}).progress
    assert CallInfo.from_result("navigate", True, None, url_before="http://a/", url_after="http://b/").progress


def test_observation_and_control_sets_are_disjoint_and_name_the_documented_tools() -> None:
    assert {"read_page", "find", "query_dom", "page_screenshot", "oc_journal"} <= OBSERVATION_TOOLS
    assert not OBSERVATION_TOOLS & CONTROL_TOOLS


# -- statuses --------------------------------------------------------------------------------


def test_continue_says_what_is_missing() -> None:
    ev = evaluate_signature(make_sig(), page_state=state(), calls=[acting()], elapsed_ms=10)
    assert ev.status == "continue" and not ev.done
    assert ev.reasons[0].startswith("success not met yet: text of '#results' contains 'Results'")
    assert ev.to_dict() == {"status": "continue", "reasons": ev.reasons}


def test_success_carries_evidence() -> None:
    ev = evaluate_signature(make_sig(), page_state=state(success=PASS), calls=[acting(), READ], elapsed_ms=1200)
    assert ev.status == "success"
    assert ev.to_dict() == {
        "status": "success",
        "evidence": {
            "success": "text of '#results' contains 'Results'",
            "url": "http://127.0.0.1/search",
            "calls_used": 2,
            "elapsed_ms": 1200,
        },
    }


def test_failure_when_wins_over_success() -> None:
    ev = evaluate_signature(make_sig(), page_state=state(success=PASS, failure=PASS), calls=[], elapsed_ms=0)
    assert ev.status == "failure"
    assert ev.reasons == ["failureWhen[0]: text of 'body' contains 'Server error'"]


def test_stop_when_assertion_stops() -> None:
    ev = evaluate_signature(make_sig(), page_state=state(stop=PASS), calls=[], elapsed_ms=0)
    assert (ev.status, ev.reasons) == ("stop", ["stopWhen[0]: url matches '*/captcha*'"])


def test_success_on_the_last_allowed_call_is_success_not_budget() -> None:
    calls = [acting()] * 3
    sig = make_sig(calls=3)
    assert evaluate_signature(sig, page_state=state(success=PASS), calls=calls, elapsed_ms=0).status == "success"
    assert evaluate_signature(sig, page_state=state(), calls=calls, elapsed_ms=0).status == "budget_exhausted"


@pytest.mark.parametrize(
    ("n_calls", "elapsed", "expected"),
    [
        (4, 0, "continue"),
        (5, 0, "budget_exhausted"),
        (0, 999, "continue"),
        (0, 1000, "budget_exhausted"),
    ],
)
def test_budgets(n_calls: int, elapsed: float, expected: str) -> None:
    sig = make_sig(calls=5, wall=1000)
    ev = evaluate_signature(sig, page_state=state(), calls=[acting()] * n_calls, elapsed_ms=elapsed)
    assert ev.status == expected
    if expected == "budget_exhausted":
        assert ev.reasons[0].startswith("maxToolCalls" if n_calls else "maxWallMs")


def test_control_tools_are_not_counted() -> None:
    calls = [CallInfo("workflow_status")] * 20 + [acting()]
    ev = evaluate_signature(make_sig(calls=2), page_state=state(), calls=calls, elapsed_ms=0)
    assert ev.status == "continue" and ev.calls_used == 1


def test_evaluation_is_deterministic() -> None:
    sig = make_sig([{"kind": "max_same_tool", "limit": 2}])
    calls = [READ, acting(), READ, READ]
    results = {repr(evaluate_signature(sig, page_state=state(), calls=calls, elapsed_ms=5).to_dict()) for _ in range(5)}
    assert len(results) == 1


def test_page_state_must_match_the_signature() -> None:
    with pytest.raises(ValueError, match="one outcome per"):
        evaluate_signature(make_sig(), page_state=PageState(FAIL), calls=[], elapsed_ms=0)


# -- loop guards -----------------------------------------------------------------------------


def test_max_same_tool_counts_one_tool_in_the_window() -> None:
    sig = make_sig([{"kind": "max_same_tool", "limit": 2, "window": 4}])
    ev = evaluate_signature(sig, page_state=state(), calls=[acting("find"), acting(), acting(), acting()], elapsed_ms=0)
    assert ev.status == "stop"
    assert ev.reasons == ["max_same_tool: 3 calls to 'interact' (limit 2, window 4)"]
    spread = [acting(), acting("find"), acting(), acting("find"), acting("find")]
    # in the last 4 calls: interact ×1, find ×3 → trips on find
    assert (
        evaluate_signature(sig, page_state=state(), calls=spread, elapsed_ms=0)
        .reasons[0]
        .startswith("max_same_tool: 3 calls to 'find'")
    )
    ok = [acting(), acting(), acting("find"), acting("find")]
    assert evaluate_signature(sig, page_state=state(), calls=ok, elapsed_ms=0).status == "continue"


def test_max_observation_calls_resets_on_progress() -> None:
    sig = make_sig([{"kind": "max_observation_calls", "limit": 3}])
    progress = acting(dom_changed=True)
    ok = [READ, READ, READ, progress, READ, READ, READ]
    assert evaluate_signature(sig, page_state=state(), calls=ok, elapsed_ms=0).status == "continue"
    ev = evaluate_signature(sig, page_state=state(), calls=[*ok, READ], elapsed_ms=0)
    assert ev.status == "stop"
    assert ev.reasons == ["max_observation_calls: 4 observation calls since the last progress (limit 3)"]


def test_max_non_progress_calls_counts_every_tool_since_progress() -> None:
    sig = make_sig([{"kind": "max_non_progress_calls", "limit": 2}])
    nav = CallInfo("navigate", url_before="http://a/", url_after="http://a/next")
    assert evaluate_signature(sig, page_state=state(), calls=[nav, acting(), READ], elapsed_ms=0).status == "continue"
    ev = evaluate_signature(sig, page_state=state(), calls=[nav, acting(), READ, acting()], elapsed_ms=0)
    assert ev.status == "stop" and ev.reasons[0].startswith("max_non_progress_calls: 3 calls since the last progress")


def test_several_tripped_guards_are_all_named() -> None:
    sig = make_sig([{"kind": "max_observation_calls", "limit": 1}, {"kind": "max_same_tool", "limit": 1}])
    ev = evaluate_signature(sig, page_state=state(), calls=[READ, READ], elapsed_ms=0)
    assert [r.split(":")[0] for r in ev.reasons] == ["max_observation_calls", "max_same_tool"]


def test_budget_is_reported_before_loop_guards() -> None:
    sig = make_sig([{"kind": "max_same_tool", "limit": 1}], calls=2)
    assert evaluate_signature(sig, page_state=state(), calls=[READ, READ], elapsed_ms=0).status == "budget_exhausted"


def test_guard_status_reports_counts() -> None:
    sig = make_sig([{"kind": "max_observation_calls", "limit": 2, "window": 5}])
    assert guard_status(sig, [READ, READ, READ]) == [
        {"kind": "max_observation_calls", "limit": 2, "window": 5, "count": 3, "tripped": True}
    ]


# -- live guard ------------------------------------------------------------------------------


def test_guard_call_refuses_tools_outside_the_signature() -> None:
    refusal = guard_call(make_sig(), "javascript_tool", [], 0)
    assert refusal is not None and refusal.code == "DISALLOWED_TOOL"
    assert "'javascript_tool' is not allowed by signature 'search'" in refusal.reason
    err = refusal.to_error()
    assert isinstance(err, DisallowedTool) and err.code == "DISALLOWED_TOOL"
    assert guard_call(make_sig(), "workflow_status", [], 0) is None  # control tools always pass


def test_guard_call_refuses_when_a_budget_is_spent() -> None:
    sig = make_sig(calls=2, wall=1000)
    assert guard_call(sig, "interact", [acting()], 10) is None
    refusal = guard_call(sig, "interact", [acting(), acting()], 10)
    assert refusal is not None and refusal.code == "BUDGET_EXHAUSTED" and "maxToolCalls: 2 of 2" in refusal.reason
    refusal = guard_call(sig, "interact", [], 1000)
    assert refusal is not None and "maxWallMs" in refusal.reason
    assert isinstance(refusal.to_error(), BudgetExhausted)


def test_guard_call_max_same_tool_refuses_the_call_that_would_exceed() -> None:
    sig = make_sig([{"kind": "max_same_tool", "limit": 2, "window": 3}])
    assert guard_call(sig, "find", [acting("find")], 0) is None
    refusal = guard_call(sig, "find", [acting("find"), acting("find")], 0)
    assert refusal is not None and refusal.guard == "max_same_tool"
    assert refusal.reason.startswith("max_same_tool: this would be call 3 to 'find'")
    assert refusal.to_error().details == {"guard": "max_same_tool"}
    # outside the window the old calls no longer count
    assert guard_call(sig, "find", [acting("find"), acting(), acting("find")], 0) is None


def test_guard_call_max_observation_calls_refuses_only_observations() -> None:
    sig = make_sig([{"kind": "max_observation_calls", "limit": 2}])
    calls = [READ, READ]
    refusal = guard_call(sig, "read_page", calls, 0)
    assert refusal is not None and refusal.guard == "max_observation_calls"
    assert guard_call(sig, "interact", calls, 0) is None  # acting may make progress
    assert guard_call(sig, "read_page", [*calls, acting(dom_changed=True)], 0) is None  # progress resets


def test_guard_call_max_non_progress_calls() -> None:
    sig = make_sig([{"kind": "max_non_progress_calls", "limit": 2}])
    assert guard_call(sig, "read_page", [acting()], 0) is None
    assert guard_call(sig, "read_page", [acting(), acting()], 0) is not None
    assert guard_call(sig, "interact", [acting(), acting()], 0) is None  # benefit of the doubt
    tripped = guard_call(sig, "interact", [acting(), acting(), acting()], 0)
    assert tripped is not None and tripped.guard == "max_non_progress_calls"


def test_preflight_names_each_disallowed_step() -> None:
    assert preflight(make_sig(), ["navigate", "form_input", "interact"]) == []
    assert preflight(make_sig(), ["navigate", "javascript_tool", "cookies"]) == [
        "step 1: tool 'javascript_tool' is not allowed by signature 'search'",
        "step 2: tool 'cookies' is not allowed by signature 'search'",
    ]


def test_registered_observation_tools_have_no_side_effects() -> None:
    from ocnb.registry import all_tooldefs

    registered = {t.name: t for t in all_tooldefs()}
    looked_at = [name for name in OBSERVATION_TOOLS if name in registered]
    assert looked_at  # the check means something only when some of them exist
    assert [n for n in looked_at if registered[n].side_effects] == []
