"""The audit hooks as dispatch runs them: secrets in/out, one journal entry, trace events."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ocnb.audit.hooks import install, record, result_summary, secrets_in, secrets_out, trace_call
from ocnb.audit.trace import read_events, read_meta
from ocnb.dispatch import CallContext, Pipeline
from ocnb.errors import MissingSecret
from ocnb.results import ToolResult


def make_session(home: Path, tmp: Path) -> Any:
    env = tmp / ".env"
    env.write_text("PW=hunter2-xyz\n")
    session = SimpleNamespace(id="s-hooks", home=home, pipeline=Pipeline(), _on_close=[], secrets=None)
    install(session, secrets=env)
    return session


def run(session: Any, name: str, args: dict[str, Any], handler: Any, *, intent: str | None = None) -> ToolResult:
    """What dispatch does around a handler, minus the browser."""
    call = CallContext(session=session, name=name, args=dict(args), source="api", seq=7)
    call.intent = intent
    call.exec_args = {k: v for k, v in args.items() if k != "intent"}
    try:
        for hook in session.pipeline.before:
            hook(call)
        result = ToolResult.success(name, handler(call.exec_args))
    except MissingSecret as exc:
        result = ToolResult.failure(name, exc.code, exc.message, exc.details)
    for hook in session.pipeline.after:
        replaced = hook(call, result)
        if isinstance(replaced, ToolResult):
            result = replaced
    return result


def test_secret_reaches_the_handler_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    session = make_session(home, tmp_path)
    seen: dict[str, Any] = {}

    def handler(args: dict[str, Any]) -> dict[str, Any]:
        seen.update(args)
        return {"typed": args["value"], "echo": f"value was {args['value']}"}

    args = {"target": "ax_1", "value": "${SECRET:PW}", "intent": "log in"}
    result = run(session, "form_input", args, handler, intent="log in")
    assert seen["value"] == "hunter2-xyz"
    assert result.ok and result.data == {"typed": "${SECRET:PW}", "echo": "value was ${SECRET:PW}"}
    [entry] = session.journal.entries
    assert entry["args"] == {"target": "ax_1", "value": "${SECRET:PW}"} and entry["intent"] == "log in"
    assert entry["seq"] == 7 and entry["summary"].startswith("ok typed=${SECRET:PW}")
    session.trace.close()
    kinds = [(e["kind"], e.get("intent")) for e in read_events(home, "s-hooks")]
    assert kinds == [("tool_call", "log in"), ("tool_result", "log in")]
    # Zero hits for the literal value anywhere under OCNB_HOME.
    for path in home.rglob("*"):
        if path.is_file():
            assert b"hunter2-xyz" not in path.read_bytes(), path


def test_unknown_secret_is_refused_before_the_handler(tmp_path: Path) -> None:
    session = make_session(tmp_path / "home", tmp_path)
    called = []
    result = run(session, "form_input", {"value": "${SECRET:NOPE}"}, called.append)
    assert not called and not result.ok and result.error is not None and result.error.code == "MISSING_SECRET"
    [entry] = session.journal.entries
    assert entry["ok"] is False and entry["error_code"] == "MISSING_SECRET" and "intent" not in entry


def test_refused_intent_leaves_no_record(tmp_path: Path) -> None:
    session = make_session(tmp_path / "home", tmp_path)
    call = CallContext(session=session, name="interact", args={"intent": ""}, source="api", seq=1, record=False)
    trace_call(call)
    record(call, ToolResult.failure("interact", "INVALID_INTENT"))
    assert session.journal.entries == []
    assert list(read_events(tmp_path / "home", "s-hooks")) == []


def test_close_hook_marks_the_trace_closed(tmp_path: Path) -> None:
    session = make_session(tmp_path / "home", tmp_path)
    for hook in session._on_close:
        hook(session)
    assert read_meta(tmp_path / "home", "s-hooks")["status"] == "closed"


def test_error_messages_are_masked_and_summaries_are_one_line() -> None:
    from ocnb.audit.secrets import SecretStore

    session = SimpleNamespace(secrets=SecretStore({"PW": "hunter2-xyz"}))
    call = SimpleNamespace(session=session)
    bad = ToolResult.failure("interact", "TIMEOUT", "waited for hunter2-xyz", {"value": "hunter2-xyz"})
    masked = secrets_out(call, bad)  # type: ignore[arg-type]
    assert masked is not None and masked.error is not None
    assert masked.error.message == "waited for ${SECRET:PW}" and masked.error.details == {"value": "${SECRET:PW}"}
    assert result_summary(bad) == "TIMEOUT: waited for hunter2-xyz"
    assert (
        result_summary(ToolResult.success("t", {"url": "u", "n": 2, "d": {}, "b": True, "x": 1}))
        == "ok url=u n=2 b=True"
    )


def test_secrets_in_without_a_store_still_refuses_placeholders() -> None:
    call = SimpleNamespace(session=SimpleNamespace(), exec_args={"v": "${SECRET:X}"})
    with pytest.raises(MissingSecret):
        secrets_in(call)  # type: ignore[arg-type]
