"""Settings: one frozen value, read from the environment in one place, never changed behind a caller's back."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

import ocnb
from ocnb.settings import ENV, Settings

OCNB = Path(ocnb.__file__).parent


def test_from_env_reads_every_documented_variable(tmp_path: Path) -> None:
    env = {
        "OCNB_HOME": str(tmp_path / "h"),
        "OCNB_CHROMIUM": "/opt/chrome",
        "OCNB_JAVASCRIPT": "0",
        "OCNB_ALLOW_FILE_URLS": "yes",
        "OCNB_SKILL_REPLAY": "off",
        "OCNB_CAPABILITY_DIRS": f"{tmp_path / 'a'}:{tmp_path / 'b'}",
        "OCNB_O200K_FILE": str(tmp_path / "o200k"),
        "OCNB_MCP_TOKEN": " tok-123 ",
        "OCNB_CAPS": "vision, network",
        "OCNB_DIALOG_POLICY": "Manual",
        "OCNB_DISCOVERY_LEARN": "1",
        "OCNB_CONFIRM": "Risky",
        "OCNB_AGENT_CONFIRM": " Acting ",
        "OCNB_APPROVAL_TIMEOUT": "7.5",
        "OCNB_RISKY_WORDS": "nuke,Wipe  Out",
        "OCNB_ALLOWED_ORIGINS": "https://*.example.com; http://localhost:*",
        "OCNB_BLOCKED_ORIGINS": "https://admin.example.com",
    }
    assert set(env) == set(ENV), "the test covers every variable ENV documents"
    s = Settings.from_env(env)
    assert s.home_path == tmp_path / "h"
    assert s.chromium == "/opt/chrome"
    assert s.allow_javascript is False and s.skill_replay is False
    assert s.allowed_schemes == ("file",)
    assert s.capability_dirs == (tmp_path / "a", tmp_path / "b")
    assert s.o200k_file == tmp_path / "o200k"
    assert s.mcp_token == "tok-123" and "tok-123" not in repr(s)
    assert s.dialog_policy == "manual"
    assert s.discovery_learn is True
    assert s.confirm == "risky" and s.risky_words == ("nuke", "wipe out")
    assert s.agent_confirm == "acting" and s.approval_timeout_s == 7.5
    assert s.caps == ("dialogs", "network", "vision")  # manual dialogs bring the tool that answers them
    assert s.allowed_origins == ("https://*.example.com", "http://localhost:*")
    assert s.blocked_origins == ("https://admin.example.com",)


def test_defaults_are_safe_without_environment() -> None:
    s = Settings.from_env({})
    assert s.allow_javascript and s.allowed_schemes == () and not s.handoff
    assert s.discovery_learn is False  # learning from use is opt-in
    assert s.home_path == Path.home() / ".ocnb"


def test_a_flag_that_is_not_a_flag_is_an_error_naming_the_variable() -> None:
    with pytest.raises(ValueError, match="OCNB_JAVASCRIPT='maybe'"):
        Settings.from_env({"OCNB_JAVASCRIPT": "maybe"})


def test_settings_are_frozen_and_checked() -> None:
    s = Settings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.handoff = True  # type: ignore[misc]
    with pytest.raises(TypeError, match="unknown setting 'hedless'"):
        s.with_changes(hedless=False)
    with pytest.raises(ValueError, match="dialog_policy"):
        s.with_changes(dialog_policy="maybe")
    with pytest.raises(ValueError, match="default_timeout_ms"):
        Settings(default_timeout_ms=0)
    assert s.with_changes(allowed_schemes=["FILE"]).allowed_schemes == ("file",)


def test_session_never_changes_the_callers_settings_and_honours_headless(tmp_path: Path) -> None:
    mine = Settings(headless=True, handoff=False, home=tmp_path)
    s = ocnb.Session(settings=mine, headless=False, handoff=True)
    try:
        assert mine.headless is True and mine.handoff is False
        assert s.settings.headless is False and s.settings.handoff is True
        assert s.config is s.settings and s.home == tmp_path
        new = s.configure(default_timeout_ms=1234)
        assert s.settings is new and new.default_timeout_ms == 1234 and mine.default_timeout_ms == 30_000
        with pytest.raises(ValueError, match="home cannot change"):
            s.configure(home=tmp_path / "other")
    finally:
        s.close()
    with pytest.raises(TypeError, match="unknown setting 'nope'"):
        ocnb.Session(home=tmp_path, nope=1)
    assert ocnb.Config is Settings


def _environ_reads(tree: ast.AST) -> list[tuple[int, str]]:
    """Reads of an ``OCNB_*`` variable: os.environ[...] (load), os.environ.get(...), os.getenv(...)."""
    found = []
    for node in ast.walk(tree):
        name = None
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Load)
            and ast.unparse(node.value) == "os.environ"
        ):
            name = node.slice
        elif isinstance(node, ast.Call) and ast.unparse(node.func) in ("os.environ.get", "os.getenv") and node.args:
            name = node.args[0]
        if isinstance(name, ast.Constant) and str(name.value).startswith("OCNB_"):
            found.append((node.lineno, str(name.value)))
        elif isinstance(name, ast.Name) and name.id.endswith("_ENV"):
            found.append((node.lineno, name.id))
    return found


def test_settings_is_the_only_reader_of_ocnb_variables() -> None:
    readers = {}
    for path in OCNB.rglob("*.py"):
        if path.name == "settings.py" and path.parent == OCNB:
            continue
        reads = _environ_reads(ast.parse(path.read_text(encoding="utf-8")))
        if reads:
            readers[str(path.relative_to(OCNB))] = reads
    assert readers == {}, f"read OCNB_* through ocnb.settings.Settings.from_env(), not os.environ: {readers}"


def test_the_agent_has_its_own_authority_by_default_and_bad_values_are_refused(tmp_path: Path) -> None:
    """Issue 42 §1: a person's calls default to confirm=never, an agent's to agent_confirm=risky."""
    s = Settings.from_env({})
    assert (s.confirm, s.agent_confirm, s.approval_timeout_s) == ("never", "risky", 120.0)
    for bad in ({"agent_confirm": "sometimes"}, {"approval_timeout_s": 0}, {"approval_timeout_s": "soon"}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            s.with_changes(**bad)
    with pytest.raises(ValueError, match="agent_confirm"):
        Settings.from_env({"OCNB_AGENT_CONFIRM": "maybe"})
    with pytest.raises(ValueError, match="approval_timeout_s"):
        Settings.from_env({"OCNB_APPROVAL_TIMEOUT": "nan"})
    with ocnb.Session(agent_confirm="never", approval_timeout_s=5, home=tmp_path) as session:
        assert (session.settings.agent_confirm, session.settings.approval_timeout_s) == ("never", 5.0)
        with pytest.raises(ValueError, match="agent_confirm"):
            session.configure(agent_confirm="sometimes")
        assert session.settings.agent_confirm == "never"  # nothing changed


def test_ocnb_mcp_flags_name_themselves_in_errors() -> None:
    from ocnb.errors import InvalidArgument
    from ocnb.mcp.cli import build_parser, session_options

    parser = build_parser()
    opts = session_options(parser.parse_args(["--confirm", "acting", "--approval-timeout", "30"]), environ={})
    assert (opts.settings.agent_confirm, opts.settings.approval_timeout_s, opts.settings.confirm) == (
        "acting",
        30.0,
        "never",
    )
    with pytest.raises(InvalidArgument, match="--approval-timeout"):
        session_options(parser.parse_args(["--approval-timeout", "-1"]), environ={})
    with pytest.raises(InvalidArgument, match="OCNB_AGENT_CONFIRM"):
        session_options(parser.parse_args([]), environ={"OCNB_AGENT_CONFIRM": "maybe"})
