"""Approval before irreversible actions (issue 30 §4), in real Chromium against a site that logs what it
received: denied, or with nobody to ask, the server gets nothing; approved, it gets the action."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import ocnb
from ocnb.audit.approval import ApprovalRequest
from ocnb.audit.journal import read_journal

from .approval_site import ApprovalSite, serve

pytestmark = pytest.mark.browser


class Person:
    """An approve callable that answers as told and keeps what it was asked."""

    def __init__(self) -> None:
        self.answer: Any = None  # None: the session has nobody to ask (see `asking`)
        self.asked: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> Any:
        self.asked.append(request)
        return self.answer


@pytest.fixture(scope="module")
def approval_site() -> Iterator[ApprovalSite]:
    with serve() as s:
        yield s


@pytest.fixture(scope="module")
def person() -> Person:
    return Person()


@pytest.fixture(scope="module")
def asking(module_home: Path, person: Person) -> Iterator[ocnb.Session]:
    """A session whose approve callable is ``person``, with confirm=risky."""
    s = ocnb.Session(headless=True, home=module_home, approve=person, confirm="risky")
    yield s
    s.close()


@pytest.fixture
def on_page(asking: ocnb.Session, approval_site: ApprovalSite, person: Person) -> ocnb.Session:
    asking.configure(confirm="risky", risky_words=())
    person.answer, person.asked[:] = None, []
    assert asking.call("navigate", url=approval_site.url).ok
    approval_site.log.clear()
    return asking


def settle(check: Callable[[], Any], timeout: float = 5.0) -> Any:
    """``check()`` once it is truthy (the browser's request may still be on its way), else its last value."""
    deadline = time.monotonic() + timeout
    while not (value := check()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return value


def last_line(session: ocnb.Session, tool: str) -> dict[str, Any]:
    return read_journal(session.home, session_id=session.id, tool=tool)[-1]


ACTIONS = [
    pytest.param("interact", {"query": "Delete account"}, "POST", "/delete", id="delete-account"),
    pytest.param("interact", {"query": "Buy now"}, "POST", "/buy", id="buy-now"),
    pytest.param("interact", {"query": "Subscribe"}, "POST", "/collect", id="form-to-another-origin"),
    pytest.param(
        "interact", {"query": "Email", "action": "press", "key": "Enter"}, "POST", "/collect", id="enter-submits-there"
    ),
    pytest.param("file_upload", {"query": "Attachment"}, "GET", "/uploaded", id="file-upload"),
]


def _args(tool: str, args: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    if tool == "file_upload":
        monkeypatch.chdir(tmp_path)  # the upload root is the working directory
        (tmp_path / "cv.txt").write_text("my cv")
        return {**args, "paths": ["cv.txt"]}
    return dict(args)


@pytest.mark.parametrize(("tool", "args", "method", "path"), ACTIONS)
def test_with_nobody_to_ask_nothing_reaches_the_server(
    module_home: Path,
    approval_site: ApprovalSite,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    tool: str,
    args: dict[str, Any],
    method: str,
    path: str,
) -> None:
    args = _args(tool, args, tmp_path, monkeypatch)
    with ocnb.Session(headless=True, home=module_home, confirm="risky") as s:
        assert s.call("navigate", url=approval_site.url).ok
        approval_site.log.clear()
        r = s.call(tool, args)
        assert not r.ok and r.error is not None and r.error.code == "APPROVAL_REQUIRED", r
        assert r.error.details["approval_id"] and r.error.details["tool"] == tool
        time.sleep(0.5)
        assert approval_site.log == []  # nothing at all: no submission, no upload
        line = last_line(s, tool)
        assert line["error_code"] == "APPROVAL_REQUIRED" and "approval: asked by nobody" in line["summary"]


@pytest.mark.parametrize(("tool", "args", "method", "path"), ACTIONS)
def test_a_no_sends_nothing_and_a_yes_sends_the_action(
    on_page: ocnb.Session,
    approval_site: ApprovalSite,
    person: Person,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    tool: str,
    args: dict[str, Any],
    method: str,
    path: str,
) -> None:
    s = on_page
    args = _args(tool, args, tmp_path, monkeypatch)
    s.configure(upload_root=tmp_path)
    person.answer = False
    r = s.call(tool, args)
    assert not r.ok and r.error is not None and r.error.code == "APPROVAL_DENIED", r
    assert r.error.details["decided_by"] == "callable"
    time.sleep(0.5)
    assert approval_site.log == []
    line = last_line(s, tool)
    assert line["error_code"] == "APPROVAL_DENIED" and "approval: denied by callable" in line["summary"]

    person.answer = True
    r = s.call(tool, args)
    assert r.ok, r
    got = settle(lambda: approval_site.received(method, path))
    assert len(got) == 1, approval_site.log
    if path == "/collect":
        assert got[0]["host"] == f"localhost:{approval_site.port}" and "email=ada%40example.com" in got[0]["body"]
    if path == "/delete":
        assert got[0]["body"] == "id=42"
    assert "approval: approved by callable" in last_line(s, tool)["summary"]
    assert len(person.asked) == 2


def test_the_approver_gets_the_documented_request(
    on_page: ocnb.Session, approval_site: ApprovalSite, person: Person
) -> None:
    s = on_page
    person.answer = False
    r = s.call("interact", query="Delete account", intent="close the test account")
    assert r.error is not None and r.error.code == "APPROVAL_DENIED"
    (req,) = person.asked
    assert isinstance(req, ApprovalRequest)
    assert req.tool == "interact"
    assert req.args == {"query": "Delete account"}  # as given, less the intent (its own field)
    assert (req.role, req.name) == ("button", "Delete account")
    assert req.ref and req.ref.startswith("ax_")
    assert req.url == approval_site.url
    assert req.intent == "close the test account"
    assert "delete" in req.reason
    assert set(req.to_dict()) == {"tool", "args", "role", "name", "ref", "url", "intent", "reason", "approval_id"}


def test_a_safe_button_is_not_asked_about_and_acts(
    on_page: ocnb.Session, approval_site: ApprovalSite, person: Person
) -> None:
    r = on_page.call("interact", query="Save settings")
    assert r.ok, r
    assert person.asked == []
    assert len(settle(lambda: approval_site.received("POST", "/save"))) == 1


def test_confirm_never_is_the_api_default_and_asks_nobody(
    fresh_session: ocnb.Session, approval_site: ApprovalSite
) -> None:
    s = fresh_session
    assert s.settings.confirm == "never"
    assert s.call("navigate", url=approval_site.url).ok
    approval_site.log.clear()
    assert s.call("interact", query="Buy now").ok
    assert len(settle(lambda: approval_site.received("POST", "/buy"))) == 1


def test_confirm_acting_asks_before_every_acting_call(
    on_page: ocnb.Session, approval_site: ApprovalSite, person: Person
) -> None:
    s = on_page
    s.configure(confirm="acting")
    person.answer = False
    r = s.call("interact", query="Save settings")
    assert r.error is not None and r.error.code == "APPROVAL_DENIED"
    r = s.call("navigate", url=approval_site.url + "elsewhere")
    assert r.error is not None and r.error.code == "APPROVAL_DENIED"
    assert s.call("read_page").ok  # reading is never asked about
    time.sleep(0.3)
    assert approval_site.log == []
    assert [q.reason for q in person.asked] == ["confirm=acting: every acting call"] * 2
    assert person.asked[1].tool == "navigate" and person.asked[1].args == {"url": approval_site.url + "elsewhere"}
    s.secrets.update({"EMAIL": "s3cret@example.com"})  # the request's arguments are masked
    r = s.call("form_input", query="Email", value="s3cret@example.com")
    assert r.error is not None and r.error.code == "APPROVAL_DENIED"
    assert person.asked[2].args == {"query": "Email", "value": "${SECRET:EMAIL}"}
    assert "s3cret" not in repr(r.error.to_dict())


def test_a_person_adds_risky_words(on_page: ocnb.Session, approval_site: ApprovalSite, person: Person) -> None:
    s = on_page
    s.configure(risky_words=("nuke",))
    person.answer = False
    r = s.call("interact", query="Nuke the archive")
    assert r.error is not None and r.error.code == "APPROVAL_DENIED"
    assert "'nuke'" in person.asked[0].reason
    time.sleep(0.3)
    assert approval_site.received("POST", "/nuked") == []


def test_an_approver_that_raises_has_not_said_yes(module_home: Path, approval_site: ApprovalSite) -> None:
    def broken(request: ApprovalRequest) -> bool:
        raise RuntimeError("no terminal")

    with ocnb.Session(headless=True, home=module_home, confirm="risky", approve=broken) as s:
        assert s.call("navigate", url=approval_site.url).ok
        approval_site.log.clear()
        r = s.call("interact", query="Delete account")
        assert r.error is not None and r.error.code == "APPROVAL_DENIED"
        assert "no terminal" in r.error.details["reason"]
    time.sleep(0.3)
    assert approval_site.log == []


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="confirm must be one of never, risky, acting"):
        ocnb.Settings(confirm="sometimes")
    with pytest.raises(TypeError, match="approve must be a callable"):
        ocnb.Session(approve="yes")  # type: ignore[arg-type]
    assert ocnb.Settings.from_env({"OCNB_CONFIRM": "Acting", "OCNB_RISKY_WORDS": "Nuke, wipe out"}).risky_words == (
        "nuke",
        "wipe out",
    )


@pytest.fixture
def delete_skill(on_page: ocnb.Session, approval_site: ApprovalSite) -> str:
    """A recorded skill that opens the page and clicks "Delete account" (recorded with confirm=never)."""
    s = on_page
    s.configure(confirm="never")
    assert s.call("navigate", url=approval_site.url, capture_artifact=True).ok
    assert s.call("interact", query="Delete account", capture_artifact=True).ok
    rec = s.call("oc_skill_record", name=f"delete-{time.monotonic_ns()}", description="Delete the account")
    assert rec.ok, rec
    approval_site.log.clear()
    return str(rec.data["skill_id"])


def test_replay_asks_the_same_approver_before_a_risky_step(
    on_page: ocnb.Session, approval_site: ApprovalSite, person: Person, delete_skill: str
) -> None:
    s = on_page
    person.answer = False
    r = s.call("oc_skill_replay", skill_id=delete_skill)
    assert r.error is not None and r.error.code == "APPROVAL_DENIED", r
    assert (person.asked[0].tool, person.asked[0].name) == ("oc_skill_replay", "Delete account")
    assert "risky step(s) 1 (click 'Delete account')" in person.asked[0].reason
    time.sleep(0.3)
    assert approval_site.log == []  # not even the replay's first step (its navigation) ran

    person.answer = True
    r = s.call("oc_skill_replay", skill_id=delete_skill)
    assert r.ok, r
    assert len(settle(lambda: approval_site.received("POST", "/delete"))) == 1


def test_allow_risky_is_no_approval_where_a_person_must_approve(
    on_page: ocnb.Session, approval_site: ApprovalSite, person: Person, delete_skill: str
) -> None:
    s = on_page
    s.configure(confirm="risky")
    person.answer = False
    r = s.call("oc_skill_replay", skill_id=delete_skill, allow_risky=True)
    assert r.error is not None and r.error.code == "APPROVAL_DENIED", r
    time.sleep(0.3)
    assert approval_site.log == []
    s.configure(confirm="never")  # the Python API's default: the caller's allow_risky is enough
    assert s.call("oc_skill_replay", skill_id=delete_skill, allow_risky=True).ok
    assert len(settle(lambda: approval_site.received("POST", "/delete"))) == 1
    assert len(person.asked) == 1


def test_replay_with_nobody_to_ask_is_blocked_as_before(
    module_home: Path, approval_site: ApprovalSite, on_page: ocnb.Session, delete_skill: str
) -> None:
    with ocnb.Session(headless=True, home=on_page.home) as s:
        assert s.call("navigate", url=approval_site.url).ok
        approval_site.log.clear()
        r = s.call("oc_skill_replay", skill_id=delete_skill)
        assert r.data["failure"]["code"] == "RISKY_STEP_BLOCKED", r
        s.configure(confirm="risky")
        r = s.call("oc_skill_replay", skill_id=delete_skill, allow_risky=True)
        assert r.error is not None and r.error.code == "APPROVAL_REQUIRED", r
    time.sleep(0.3)
    assert approval_site.log == []


def test_a_plan_step_is_asked_about_like_a_call(
    on_page: ocnb.Session, approval_site: ApprovalSite, person: Person
) -> None:
    s = on_page
    person.answer = False
    steps = [{"tool": "find", "args": {"query": "Buy now"}}, {"tool": "interact", "args": {"query": "Buy now"}}]
    r = s.call("execute_plan", steps=steps)
    assert r.ok and r.data["status"] == "failed", r
    assert [st.get("error_code") for st in r.data["steps"]] == [None, "APPROVAL_DENIED"]
    assert [q.name for q in person.asked] == ["Buy now"]
    time.sleep(0.3)
    assert approval_site.received("POST", "/buy") == []
