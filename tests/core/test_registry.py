"""Registry and dispatch behaviour that needs no browser: lookup, schemas, tiers, methods."""

from __future__ import annotations

import pytest

import ocnb
from ocnb.errors import OcnbError
from ocnb.registry import INTENT_LINE, Registry, all_tooldefs, capability_groups, tool
from ocnb.session import Session

FIRST_TOOLS = {
    "navigate", "page_reload", "wait_for", "javascript_tool", "page_screenshot", "tabs_create",
    "tabs_context", "tabs_activate", "tabs_close", "cookies", "storage", "oc_connection_health", "expand_tools",
}  # fmt: skip


def test_first_tools_are_registered_with_their_argument_names() -> None:
    names = {t.name for t in all_tooldefs()}
    assert FIRST_TOOLS <= names
    reg = Registry()
    nav = reg.get("navigate")
    assert nav is not None and nav.required == ["url"]
    assert {"url", "wait_until", "tab_id"} <= set(nav.input_schema["properties"])
    assert set(reg.get("wait_for").input_schema["properties"]) >= {
        "selector",
        "text",
        "url",
        "load_state",
        "time_ms",
        "timeout_ms",
    }


def test_summary_is_first_sentence() -> None:
    nav = Registry().get("navigate")
    assert nav.summary == "Open a URL, or go back/forward."


def test_every_tool_has_category_schema_and_description() -> None:
    for t in all_tooldefs():
        assert t.description and t.category and t.input_schema.get("type") == "object", t.name
        assert t.input_schema.get("additionalProperties") is False, t.name


def test_an_opt_in_group_is_offered_only_when_asked_for(tmp_path) -> None:
    @tool(name="zz_group_probe", category="test", group="zzgroup", description="A group probe.", properties={})
    async def probe(ctx, args):  # pragma: no cover - never called
        return {}

    try:
        assert capability_groups()["zzgroup"] == ["zz_group_probe"]
        assert "zz_group_probe" not in Registry()
        assert "zz_group_probe" in Registry(caps=["zzgroup"]) and "zz_group_probe" in Registry(caps="zzgroup")
        reg = Registry()
        seen = []
        reg.on_change(lambda: seen.append(len(reg)))
        reg.set_caps(["zzgroup"])
        assert "zz_group_probe" in reg and seen and reg.caps == {"zzgroup"}
        with pytest.raises(OcnbError) as err:
            reg.set_caps(["zzgroup", "nosuch"])
        assert err.value.code == "INVALID_ARGUMENT" and "nosuch" in str(err.value) and "zzgroup" in str(err.value)
        assert "zz_group_probe" in reg  # a refused change changes nothing
        # a session's methods follow its groups
        s = Session(home=tmp_path)
        try:
            assert not hasattr(s, "zz_group_probe")
            s.configure(caps=["zzgroup"])
            assert callable(s.zz_group_probe) and "zz_group_probe" in dir(s)
            with pytest.raises(OcnbError):
                s.configure(caps=["nosuch"])
            assert s.settings.caps == ("zzgroup",)
            s.configure(caps=[])
            assert not hasattr(s, "zz_group_probe")
        finally:
            s.close()
        with pytest.raises(OcnbError, match="unknown capability group 'nosuch'"):
            Session(home=tmp_path, caps=["nosuch"])
    finally:
        from ocnb import registry

        registry._ALL.pop("zz_group_probe", None)


def test_intent_tools_get_the_audit_line() -> None:
    @tool(name="zz_intent_probe", category="test", intent=True, description="Probe.", properties={})
    async def probe(ctx, args):  # pragma: no cover
        return {}

    try:
        from ocnb import registry

        td = registry._ALL["zz_intent_probe"]
        assert INTENT_LINE in td.description and td.accepts_intent
    finally:
        registry._ALL.pop("zz_intent_probe", None)


def test_bad_arguments_are_refused_before_any_browser_starts() -> None:
    s = ocnb.Session()
    try:
        r = s.call("navigate", urll="x", wait_until="soon")
        assert not r.ok and r.error.code == "INVALID_ARGUMENT"
        paths = sorted(e["path"] for e in r.error.details["errors"])
        assert paths == ["$", "$", "$.wait_until"]  # all errors at once
        assert not s.started
        assert s.call("no_such_tool").error.code == "UNKNOWN_TOOL"
        assert s.call("navigate", url="javascript:alert(1)").error.code == "BLOCKED_URL"
        assert s.call("navigate", url="chrome://settings").error.code == "BLOCKED_URL"
        assert not s.started
    finally:
        s.close()


def test_tools_are_methods_with_docstrings() -> None:
    s = ocnb.Session()
    try:
        assert s.navigate.__doc__.startswith("Open a URL")
        assert "navigate" in dir(s) and "expand_tools" in dir(s)
        assert s.navigate(urll=1).error.code == "INVALID_ARGUMENT"
    finally:
        s.close()


def test_result_shapes() -> None:
    ok = ocnb.ToolResult.success("x", {"a": 1})
    bad = ocnb.ToolResult.failure("x", "TIMEOUT", "slow")
    assert ok.to_dict() == {"ok": True, "tool": "x", "data": {"a": 1}}
    assert bad.to_dict() == {"ok": False, "tool": "x", "error": {"code": "TIMEOUT", "message": "slow"}}
    assert '"TIMEOUT"' in bad.to_json()
    bundle = bad._repr_mimebundle_()
    assert "TIMEOUT" in bundle["text/plain"] and "TIMEOUT" in bundle["text/html"]
    with pytest.raises(ocnb.OcnbError) as info:
        bad.raise_for_error()
    assert info.value.code == "TIMEOUT"


def test_unknown_session_setting_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match="unknown setting"):
        ocnb.Session(headles=True)
