"""%oc / %%oc in a real IPython shell, driving real Chromium against the demo site."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from IPython.core.completer import provisionalcompleter
from IPython.core.error import UsageError

import ocnb
from ocnb.commands.demosite import DemoSite
from ocnb.errors import OcnbError
from ocnb.magics import OcMagics, parse_call

pytestmark = pytest.mark.browser


def magics(shell: Any) -> OcMagics:
    return shell.magics_manager.registry["OcMagics"]


def oc(shell: Any, line: str) -> Any:
    return shell.run_line_magic("oc", line)


def js(expr: str) -> Any:
    return ocnb.session().call("javascript_tool", expression=expr).raise_for_error().data["result"]


@pytest.fixture(autouse=True)
def blank(ip: Any) -> None:
    s = ocnb.session()
    for t in s.call("tabs_context").data["tabs"][1:]:
        s.call("tabs_close", tab_id=t["tab_id"])
    s.call("navigate", url="about:blank")


def needs(tool: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(tool not in ocnb.build_registry(), reason=f"tool {tool} not registered yet")


# -- positional and flag forms, expansion, JSON values ------------------------------------------


def test_positional_and_flag_forms_reach_the_same_tool(ip: Any, site: DemoSite) -> None:
    url = site.page("form.html")
    first = oc(ip, f"navigate {url}")
    second = oc(ip, f"navigate --url {url} --wait_until domcontentloaded")
    third = oc(ip, f"navigate --url={url}")
    assert [r.data["title"] for r in (first, second, third)] == ["Sign up"] * 3


def test_dollar_and_brace_expansion_happen_as_in_ipython(ip: Any, site: DemoSite) -> None:
    ip.user_ns.update(site=site, page_url=site.page("login.html"))
    assert ip.run_cell("%oc navigate $page_url").result.data["title"] == "Log in"
    assert ip.run_cell('%oc navigate {site.page("form.html")}').result.data["title"] == "Sign up"


def test_json_looking_values_are_parsed_but_string_arguments_stay_text(ip: Any, site: DemoSite) -> None:
    oc(ip, f"navigate {site.page('form.html')}")
    shot = oc(ip, "page_screenshot --full_page true")
    assert shot.data["height"] >= 800
    oc(ip, "storage set --key n --value 42")  # value is a string argument: kept as "42"
    assert js("localStorage.getItem('n')") == "42"
    assert oc(ip, 'javascript_tool "[1, 2, 3].length"').data["result"] == 3


def test_parser_forms_without_a_browser() -> None:
    registry = ocnb.build_registry()
    assert parse_call("navigate https://x.test/a?b=1", registry).args == {"url": "https://x.test/a?b=1"}
    assert parse_call("wait_for --time_ms 10", registry).args == {"time_ms": 10}
    assert parse_call("page_screenshot --full-page", registry).args == {"full_page": True}
    assert parse_call("click ax_12 --intent 'open it'", registry).args == {
        "action": "click",
        "ref": "ax_12",
        "intent": "open it",
    }
    assert parse_call('fill "Email address" a@b.co', registry).args == {
        "action": "fill",
        "query": "Email address",
        "value": "a@b.co",
    }
    assert parse_call("press Enter", registry).args == {"action": "press", "key": "Enter"}
    assert parse_call("read --mode text", registry).tool == "read_page"
    assert parse_call("shot", registry).tool == "page_screenshot"
    with pytest.raises(UsageError, match="did you mean navigate"):
        parse_call("navigat https://x", registry)
    with pytest.raises(UsageError, match="has no argument --urll.*did you mean url"):
        parse_call("navigate --urll https://x", registry)
    with pytest.raises(UsageError, match="not valid JSON"):
        parse_call("wait_for --time_ms '{x: 1}'", registry)
    with pytest.raises(UsageError, match="takes url positionally"):
        parse_call("navigate https://a https://b", registry)
    with pytest.raises(UsageError, match="usage: %oc fill TARGET VALUE"):
        parse_call("fill onlyone", registry)


def _line_for(tooldef: ocnb.ToolDef) -> str:
    """A %oc line giving every required argument: strings positionally, the rest as JSON flags."""
    from ocnb.magics import positional_names

    props = tooldef.input_schema.get("properties", {})
    positional = positional_names(tooldef)
    words = [tooldef.name] + [json.dumps(props[p].get("enum", ["x"])[0]) for p in positional]
    for name in tooldef.required:
        if name in positional:
            continue
        prop = props.get(name, {})
        kind = prop.get("type")
        value: Any = prop.get("enum", [None])[0]
        if value is None:
            value = {"integer": 1, "number": 1, "boolean": True, "object": {}, "array": []}.get(kind, "x")
        words.append(f"--{name} '{json.dumps(value)}'")
    return " ".join(words)


def test_every_registered_tool_is_reachable_from_oc(ip: Any) -> None:
    """Each tool's line goes through dispatch as source "magic"; a before-hook refuses it, so nothing runs."""
    s = ocnb.session()
    seen: list[tuple[str, str]] = []

    def probe(call: Any) -> None:
        seen.append((call.name, call.source))
        raise OcnbError("probe: refused before running", code="DISABLED")

    s.pipeline.before.insert(0, probe)
    try:
        for tooldef in s.registry:
            with pytest.raises(UsageError) as info:
                oc(ip, _line_for(tooldef))
            message = str(info.value)
            assert message.startswith(f"{tooldef.name}: "), message
            assert "DISABLED" in message or "INVALID_ARGUMENT" in message, message
    finally:
        s.pipeline.before.remove(probe)
    assert {name for name, _ in seen} <= set(s.registry.names())
    assert {source for _, source in seen} == {"magic"}
    assert len(seen) >= len(s.registry) // 2  # most tools' minimal lines pass the schema and reach the hook


@needs("oc_assert")
def test_json_object_values(ip: Any, site: DemoSite) -> None:
    oc(ip, f"navigate {site.page('form.html')}")
    verdict = oc(ip, """oc_assert --assertion '{"kind": "url", "pattern": "*form.html"}'""")
    assert verdict.data["verdict"] == "pass"


# -- short verbs ---------------------------------------------------------------------------------


@needs("interact")
def test_short_verbs_act_on_the_page(ip: Any, site: DemoSite) -> None:
    oc(ip, f"navigate {site.page('form.html')}")
    oc(ip, 'fill "Full name" "Ada Lovelace" --intent "type the name"')
    assert js("document.getElementById('full-name').value") == "Ada Lovelace"
    oc(ip, 'click "Sign up"')
    oc(ip, 'wait_for --text "Thanks, Ada Lovelace"')
    oc(ip, f"navigate {site.page('login.html')}")
    oc(ip, "fill Username ada")
    oc(ip, "fill Password correct-horse-battery")
    oc(ip, "press Enter Password")
    assert oc(ip, 'wait_for --text "Welcome, ada"').ok


@needs("read_page")
def test_read_shows_an_outline_with_refs(ip: Any, site: DemoSite) -> None:
    oc(ip, f"navigate {site.page('form.html')}")
    result = oc(ip, "read")
    bundle = result._repr_mimebundle_()
    assert "Full name" in bundle["text/plain"]
    assert "<details" in bundle["text/html"] and 'class="ocnb-ref"' in bundle["text/html"]


def test_shot_displays_an_image_unless_switched_off(ip: Any, site: DemoSite) -> None:
    oc(ip, f"navigate {site.page('index.html')}")
    bundle = oc(ip, "shot")._repr_mimebundle_()
    assert '<img src="data:image/png;base64,' in bundle["text/html"] and bundle["text/plain"]
    ip.run_line_magic("config", "OcMagics.show_screenshots = False")
    try:
        bundle = oc(ip, "shot")._repr_mimebundle_()
        assert "<img" not in bundle["text/html"] and ".png" in bundle["text/html"]
    finally:
        ip.run_line_magic("config", "OcMagics.show_screenshots = True")


# -- %%oc -------------------------------------------------------------------------------------------


def test_cell_stops_at_the_first_failure_and_returns_the_steps(ip: Any, site: DemoSite, capsys: Any) -> None:
    ip.user_ns["site"] = site
    cell = """
navigate {site.page("form.html")}
# comments and blank lines are skipped

wait_for --text "No such text" --timeout_ms 300
tabs_create --url about:blank
"""
    df = ip.run_cell_magic("oc", "", cell)
    assert list(df["status"]) == ["ok", "failed", "skipped"]
    assert list(df["tool"]) == ["navigate", "wait_for", "tabs_create"]
    assert df.loc[1, "error_code"] == "TIMEOUT" and bool(df.loc[0, "ok"]) is True
    assert str(df["ok"].dtype) == "boolean" and df["ok"].isna().tolist() == [False, False, True]
    assert len(ocnb.session().call("tabs_context").data["tabs"]) == 1  # the skipped step did not run
    assert "step 2 failed: wait_for: TIMEOUT" in capsys.readouterr().err


def test_cell_keep_going_and_parse_errors(ip: Any, site: DemoSite) -> None:
    df = ip.run_cell_magic("oc", "--keep-going", "wait_for --text Nope --timeout_ms 200\ntabs_context\n")
    assert list(df["status"]) == ["failed", "ok"]
    before = len(ocnb.session().call("tabs_context").data["tabs"])
    with pytest.raises(UsageError, match="nothing was run"):
        ip.run_cell_magic("oc", "", "tabs_create --url about:blank\nnavigat https://x\n")
    assert len(ocnb.session().call("tabs_context").data["tabs"]) == before


# -- errors, help, tools, config -----------------------------------------------------------------


def test_errors_print_one_line_with_their_code(ip: Any, capsys: Any) -> None:
    capsys.readouterr()
    result = ip.run_cell("%oc navigate file:///etc/passwd")
    captured = capsys.readouterr()
    lines = [ln for ln in (captured.out + captured.err).splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("UsageError: navigate: BLOCKED_URL: ")
    assert "Traceback" not in captured.err and isinstance(result.error_in_exec, UsageError)


def test_help_and_tools_come_from_the_registry(ip: Any, capsys: Any) -> None:
    oc(ip, "help navigate")
    out = capsys.readouterr().out
    assert out.startswith("%oc navigate URL") and "--url (string; required)" in out and "--wait_until (" in out
    oc(ip, "tools")
    out = capsys.readouterr().out
    for name in ocnb.session().registry.names():
        assert f"  {name} " in out
    oc(ip, "help")
    assert "short verbs" in capsys.readouterr().out
    with pytest.raises(UsageError, match="did you mean navigate"):
        oc(ip, "help navigat")


def test_config_through_traitlets(ip: Any, capsys: Any, probe_group: str) -> None:
    m = magics(ip)
    assert m in ip.configurables
    s = ocnb.session()
    ip.run_line_magic("config", "OcMagics.default_timeout_ms = 4321")
    assert s.config.default_timeout_ms == 4321
    ip.run_line_magic("config", "OcMagics.default_timeout_ms = 0")  # refused (%config logs the reason)
    assert m.default_timeout_ms == 4321 and s.config.default_timeout_ms == 4321
    ip.run_line_magic("config", "OcMagics.default_timeout_ms = 30000")
    ip.run_line_magic("config", "OcMagics.headless = False")  # the browser is running: applies next time
    assert "next browser" in capsys.readouterr().err and s.config.headless is True
    ip.run_line_magic("config", "OcMagics.headless = True")
    ip.run_line_magic("config", "OcMagics.caps = ['nosuch']")  # refused: no such group
    assert m.caps == [] and s.registry.caps == set() and s.settings.caps == ()
    ip.run_line_magic("config", f"OcMagics.caps = [{probe_group!r}]")  # the group's tools join the session
    assert "zz_probe" in s.registry and s.zz_probe().data == {"probe": True}
    ip.run_line_magic("config", "OcMagics.caps = []")
    assert "zz_probe" not in s.registry
    ip.run_line_magic("config", "OcMagics.dialog_policy = 'sometimes'")  # refused
    assert s.settings.dialog_policy == "accept"
    ip.run_line_magic("config", "OcMagics.dialog_policy = 'manual'")  # dialogs wait; dialog_answer is offered
    assert s.settings.dialog_policy == "manual" and "dialog_answer" in s.registry
    ip.run_line_magic("config", "OcMagics.dialog_policy = 'accept'")
    assert s.settings.dialog_policy == "accept"
    assert m.discovery_learn is False and s.settings.discovery_learn is False  # learning from use is opt-in
    ip.run_line_magic("config", "OcMagics.discovery_learn = True")
    assert s.settings.discovery_learn is True
    ip.run_line_magic("config", "OcMagics.discovery_learn = False")
    ip.run_line_magic("config", "OcMagics")
    assert "OcMagics.show_screenshots=<Bool>" in capsys.readouterr().out


# -- completion ------------------------------------------------------------------------------------


def _complete(ip: Any, text: str) -> list[str]:
    with provisionalcompleter():
        return [c.text for c in ip.Completer.completions(text, len(text))]


def test_tab_completion_of_tools_verbs_and_arguments(ip: Any) -> None:
    assert _complete(ip, "%oc tabs_c") == ["tabs_close", "tabs_context", "tabs_create"]
    assert "click" in _complete(ip, "%oc cl") and "close" in _complete(ip, "%oc cl")
    assert _complete(ip, "%oc navigate https://x --wa") == ["--wait_until"]
    assert set(_complete(ip, "%oc wait_for --text hi --")) == {
        "--selector",
        "--url",
        "--load_state",
        "--time_ms",
        "--timeout_ms",
        "--tab_id",
    }
    assert _complete(ip, "%oc help page_s") == ["page_screenshot"]
    assert _complete(ip, "%oc mcp st") == ["start", "status", "stop"]
    assert _complete(ip, "%%oc\nnavigate https://x\nwait_f") == ["wait_for"]
    assert _complete(ip, "%%oc\nnavigate https://x --w") == ["--wait_until"]
    assert "tabs_context" not in _complete(ip, "x = tabs_c")  # only on %oc lines


# -- MCP, discovery, %load_ext ---------------------------------------------------------------------


def test_mcp_start_status_stop(ip: Any, capsys: Any) -> None:
    pytest.importorskip("ocnb.mcp")
    handle = oc(ip, "mcp start")
    try:
        assert handle.running and handle.url.startswith("http://127.0.0.1:")
        assert handle.token not in capsys.readouterr().out + repr(handle) + handle.safe_banner()
        assert "Bearer token:" in handle.safe_banner() and str(handle.token_file) in handle.safe_banner()
        with pytest.raises(UsageError, match="already running"):
            oc(ip, "mcp start")
        oc(ip, "mcp status")
        assert json.loads(capsys.readouterr().out)["running"] is True
    finally:
        oc(ip, "mcp stop")
    assert not handle.running
    oc(ip, "mcp status")
    assert "no MCP server running" in capsys.readouterr().out


def test_mcp_start_with_a_token_file_reuses_its_token(ip: Any, tmp_path: Path, capsys: Any) -> None:
    pytest.importorskip("ocnb.mcp")
    token_file = tmp_path / "mcp-token"
    tokens = []
    for _ in range(2):  # a restart of the kernel's server keeps the token a client was given
        handle = oc(ip, f"mcp start --token-file {token_file}")
        try:
            tokens.append(handle.token)
            assert f"in the file {token_file.resolve()}" in handle.safe_banner()
        finally:
            oc(ip, "mcp stop")
    assert tokens[0] == tokens[1] == token_file.read_text().strip()
    (tmp_path / "bad").write_text("short")
    with pytest.raises(UsageError, match="at least 16 characters"):
        oc(ip, f"mcp start --token-file {tmp_path / 'bad'}")


def test_loading_the_extension_again_keeps_the_running_server_in_reach(ip: Any, capsys: Any) -> None:
    pytest.importorskip("ocnb.mcp")
    handle = oc(ip, "mcp start")
    try:
        for name in ("ocnb", "ocnb.magics"):  # both names load it; the second load used to orphan the server
            ip.run_line_magic("load_ext", name)
        ip.run_line_magic("reload_ext", "ocnb.magics")
        capsys.readouterr()
        oc(ip, "mcp status")
        assert json.loads(capsys.readouterr().out)["url"] == handle.url
    finally:
        oc(ip, "mcp stop")
    assert not handle.running  # %oc mcp stop reached it


@needs("discover_capabilities")
def test_discover_ranks_capabilities(ip: Any) -> None:
    result = oc(ip, 'discover "take a screenshot of the page"')
    names = [r["name"] for r in result.data["results"][:5]]
    assert "page_screenshot" in names
    assert "ocnb-discovery" in result._repr_mimebundle_()["text/html"]


def test_load_ext_ocnb(ip: Any) -> None:
    if not hasattr(ocnb, "load_ipython_extension"):
        pytest.skip("ocnb/__init__.py does not expose load_ipython_extension yet")
    ip.run_line_magic("load_ext", "ocnb")
    assert "oc" in ip.magics_manager.magics["line"] and "oc" in ip.magics_manager.magics["cell"]


def test_close_and_settings_apply_to_the_next_session(ip: Any) -> None:
    first = ocnb.session()
    oc(ip, "close")
    assert first.closed
    ip.run_line_magic("config", "OcMagics.headless = False")
    ip.run_line_magic("config", "OcMagics.default_timeout_ms = 7000")
    try:
        nxt = magics(ip).session()
        assert nxt is not first and nxt.config.headless is False and nxt.config.default_timeout_ms == 7000
        assert not nxt.started  # nothing launched a window
    finally:
        ip.run_line_magic("config", "OcMagics.headless = True")
        ip.run_line_magic("config", "OcMagics.default_timeout_ms = 30000")
    assert ocnb.session().config.headless is True


def test_completion_through_a_real_kernel() -> None:
    """What JupyterLab sees: complete_request to an ipykernel with the extension loaded."""
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3")
    try:
        kc.execute_interactive("%load_ext ocnb.magics", timeout=60)
        code = "%oc navigate https://x --w"
        reply = kc.complete(code, len(code), reply=True, timeout=30)["content"]
        assert reply["matches"] == ["--wait_until"] and reply["cursor_start"] == len(code) - 3
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
