"""The audit layer's hooks as dispatch runs them: secrets in/out, one journal entry, trace events."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ocnb.audit.hooks import AuditLayer, result_summary
from ocnb.audit.trace import read_events, read_meta
from ocnb.calls import CallContext, Pipeline
from ocnb.errors import MissingSecret
from ocnb.results import ToolResult


def make_session(home: Path, tmp: Path) -> Any:
    """A stand-in host with the audit layer and its hooks, in the order a Session declares them."""
    env = tmp / ".env"
    env.write_text("PW=hunter2-xyz\n")
    audit = AuditLayer(home, "s-hooks", secrets=env)
    pipeline = Pipeline(before=[audit.trace_call, audit.secrets_in], after=[audit.secrets_out, audit.record])
    return SimpleNamespace(id="s-hooks", home=home, pipeline=pipeline, audit=audit, journal=audit.journal)


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
    session.audit.trace.close()
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
    session.audit.trace_call(call)
    session.audit.record(call, ToolResult.failure("interact", "INVALID_INTENT"))
    assert session.journal.entries == []
    assert list(read_events(tmp_path / "home", "s-hooks")) == []


def test_close_hook_marks_the_trace_closed(tmp_path: Path) -> None:
    session = make_session(tmp_path / "home", tmp_path)
    session.audit.close()
    assert read_meta(tmp_path / "home", "s-hooks")["status"] == "closed"


def test_error_messages_are_masked_and_summaries_are_one_line(tmp_path: Path) -> None:
    audit = AuditLayer(tmp_path, "s-mask")
    audit.secrets.update({"PW": "hunter2-xyz"})
    call = CallContext(session=SimpleNamespace(), name="interact", args={}, source="api", seq=1)  # type: ignore[arg-type]
    bad = ToolResult.failure("interact", "TIMEOUT", "waited for hunter2-xyz", {"value": "hunter2-xyz"})
    masked = audit.secrets_out(call, bad)
    assert masked is not None and masked.error is not None
    assert masked.error.message == "waited for ${SECRET:PW}" and masked.error.details == {"value": "${SECRET:PW}"}
    assert result_summary(bad) == "TIMEOUT: waited for hunter2-xyz"
    assert (
        result_summary(ToolResult.success("t", {"url": "u", "n": 2, "d": {}, "b": True, "x": 1}))
        == "ok url=u n=2 b=True"
    )


def test_secrets_in_with_an_empty_store_still_refuses_placeholders(tmp_path: Path) -> None:
    call = CallContext(session=SimpleNamespace(), name="t", args={}, source="api", seq=1)  # type: ignore[arg-type]
    call.exec_args = {"v": "${SECRET:X}"}
    with pytest.raises(MissingSecret):
        AuditLayer(tmp_path, "s-empty").secrets_in(call)
