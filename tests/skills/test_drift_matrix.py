"""The drift matrix: one recorded 6-step sign-up flow replayed on pages that changed.

The flow (recorded through ``capture_artifact``, the real path): open the page, accept cookies, fill
First name, fill Email, check the terms, press Sign up. Each variant of
``tests/fixtures/sites/drift/signup.html`` either must replay (cosmetic drift: ids, classes, order,
wrappers, an extra field, a late cookie banner, re-ordered frames …) or must be refused at the
right step, naming the refused candidate (a different field in the same place, a renamed label or
button, swapped labels, a duplicated field, a hidden field …). After every run the page's values
are read back: exactly the steps before the refusal took effect, and nothing else was touched.
"""

from __future__ import annotations

from typing import Any

import pytest

from ocnb.commands.demosite import DemoSite
from tests.skills.helpers import LATE_REFUSAL_STEP_MS, PASSING_STEP_MS, page_states, record_flow

pytestmark = pytest.mark.browser

PARAMS = {"first": "Ada", "email": "ada@example.com"}
#: What each step (1–5) leaves on the page.
EFFECTS: dict[int, tuple[str, Any]] = {
    1: ("log", "cookies"),
    2: ("first", "Ada"),
    3: ("email", "ada@example.com"),
    4: ("terms", True),
    5: ("log", "submit"),
}

# (variant, page, step the replay must be refused at or None to replay, refused candidate's name, tolerate)
CASES: list[tuple[str, str, int | None, str | None, list[str]]] = [
    # --- replay ---
    ("", "signup", None, None, []),
    ("ids", "signup", None, None, []),
    ("classes", "signup", None, None, []),
    ("order", "signup", None, None, []),
    ("wrappers", "signup", None, None, []),
    ("extra-field", "signup", None, None, []),
    ("late-banner", "signup", None, None, []),
    ("testid", "signup", None, None, []),
    ("text-case", "signup", None, None, []),
    ("placeholder", "signup", None, None, []),
    ("ids,classes,order,wrappers", "signup", None, None, []),
    ("label-renamed", "signup", None, None, ["name"]),
    ("", "framed", None, None, []),
    ("frame-reordered", "framed", None, None, []),
    # --- refuse ---
    ("phone", "signup", 3, "Mobile phone", []),
    ("phone-same-id", "signup", 3, "Mobile phone", []),
    ("same-type", "signup", 3, "Backup email", []),
    ("last-name", "signup", 2, "Last name", []),
    ("label-renamed", "signup", 3, "Email address", []),
    ("swapped", "signup", 2, "First name", []),
    ("duplicate", "signup", 3, "Email", []),
    ("hidden", "signup", 3, "Email", []),
    ("terms-renamed", "signup", 4, "Subscribe to the newsletter", []),
    ("delete", "signup", 5, "Delete account", []),
    ("link-button", "signup", 5, "Sign up", []),
    ("cookie-reject", "signup", 1, "Reject cookies", []),
    ("phone", "framed", None, None, []),  # the variant applies to signup.html only: the framed copy is intact
    ("frame-missing", "framed", 1, None, []),
]


@pytest.fixture(scope="module")
def skills(shared_session: Any, drift: DemoSite) -> dict[str, str]:
    return {
        "signup": record_flow(shared_session, drift.page("signup.html"), "drift-signup"),
        "framed": record_flow(shared_session, drift.page("framed.html"), "drift-framed"),
    }


def _expected(done: int) -> tuple[dict[str, Any], list[str]]:
    values: dict[str, Any] = {}
    log: list[str] = []
    for step in range(1, done + 1):
        key, value = EFFECTS[step]
        if key == "log":
            log.append(value)
        else:
            values[key] = value
    return values, log


def _assert_only(state: dict[str, Any], done: int) -> None:
    values, log = _expected(done)
    assert state["log"] == log, state
    for key, value in state["values"].items():
        want = values.get(key, False if isinstance(value, bool) else "")
        assert value == want, (key, state)


@pytest.mark.parametrize(
    ("variant", "page", "refuse_at", "refused_name", "tolerate"),
    CASES,
    ids=[f"{p}:{v or 'base'}{'+tolerate' if t else ''}" for v, p, _, _, t in CASES],
)
def test_drift(session, drift, skills, variant, page, refuse_at, refused_name, tolerate) -> None:
    url = drift.page(f"{page}.html") + (f"?v={variant}" if variant else "")
    assert session.navigate(url=url).ok
    timeout = PASSING_STEP_MS if refuse_at is None else LATE_REFUSAL_STEP_MS
    args: dict[str, Any] = {"params": PARAMS, "step_range": {"from": 1, "to": 5}, "step_timeout_ms": timeout}
    if tolerate:
        args["tolerate"] = tolerate
    r = session.oc_skill_replay(skill_id=skills[page], **args)
    states = page_states(session)
    signup = states.get("signup.html")
    if refuse_at is None:
        assert r.ok, r
        assert r.data["steps_executed"] == 5 and all(s["verified"] for s in r.data["step_results"]), r.data
        _assert_only(signup, 5)
    else:
        assert not r.ok and r.error.code == "ARTIFACT_RESOLUTION_FAILED", r
        failure = r.data["failure"]
        assert r.data["ok"] is False and failure["code"] == "ARTIFACT_RESOLUTION_FAILED"
        assert failure["step_index"] == refuse_at and r.data["steps_executed"] == refuse_at - 1, failure
        assert failure.get("evidence_bundle_path"), failure
        if refused_name is not None:
            assert failure["refused"]["name"] == refused_name and failure["refused"]["ref"].startswith("ax_")
            assert f'"{refused_name}"' in failure["detail"], failure["detail"]
            assert failure["differs"], failure
        if signup is not None:
            _assert_only(signup, refuse_at - 1)
    for name, state in states.items():
        if name == "ad.html" and state is not None:
            assert not any(state["values"].values()), state  # nothing done in the look-alike frame


def _replay(session: Any, skill_id: str, **extra: Any) -> Any:
    args = {"params": PARAMS, "step_range": {"from": 1, "to": 5}, "step_timeout_ms": LATE_REFUSAL_STEP_MS, **extra}
    return session.oc_skill_replay(skill_id=skill_id, **args)


def test_refusal_names_the_differing_fields_and_candidates(session, drift, skills) -> None:
    session.navigate(url=drift.page("signup.html") + "?v=phone")
    f = _replay(session, skills["signup"]).data["failure"]
    assert {"name", "type", "label"} <= set(f["differs"]), f
    assert f["recorded"]["name"] == "Email" and f["found"]["name"] == "Mobile phone"
    assert f["refused"]["role"] == "textbox" and f["refused"]["type"] == "tel"
    assert "name is 'Mobile phone', recorded 'Email'" in f["detail"]
    assert f["candidates"] == []  # no other email field: a tel field is never offered for an email step
    # a renamed label: the candidates (same role and type) include the refused field, to confirm
    session.navigate(url=drift.page("signup.html") + "?v=label-renamed")
    f = _replay(session, skills["signup"]).data["failure"]
    assert f["step_index"] == 3 and f["differs"] == ["name", "label"]
    assert [(c["ref"], c["name"], c["type"], c["differs"]) for c in f["candidates"]] == [
        (f["refused"]["ref"], "Email address", "email", ["name", "label"])
    ]
    # an agent (or the person at the notebook) confirms the candidate by its ref and carries on from there
    acted = session.interact(ref=f["candidates"][0]["ref"], action="fill", value="ada@example.com")
    assert acted.ok and acted.data["element"]["name"] == "Email address"
    assert page_states(session)["signup.html"]["values"]["email"] == "ada@example.com"
    rest = _replay(session, skills["signup"], step_range={"from": 4, "to": 5})
    assert rest.ok and page_states(session)["signup.html"]["log"] == ["cookies", "submit"]
    assert "candidates: ax_" in f["detail"]


def test_tolerate_never_accepts_a_different_type(session, drift, skills) -> None:
    session.navigate(url=drift.page("signup.html") + "?v=phone")
    r = _replay(session, skills["signup"], tolerate=["name", "name_attr", "autocomplete"])
    assert r.data["failure"]["step_index"] == 3 and "type" in r.data["failure"]["differs"]
    assert page_states(session)["signup.html"]["values"]["phone"] == ""
    bad = session.oc_skill_replay(skill_id=skills["signup"], tolerate=["type"])
    assert bad.error.code == "INVALID_ARGUMENT" and bad.data["failure"]["code"] == "INVALID_ARGUMENT"
