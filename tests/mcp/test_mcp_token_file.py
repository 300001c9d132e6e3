"""The MCP bearer token kept in a file: created 0600 atomically, reused, never overwritten."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from ocnb.mcp import McpSecurityWarning, McpTokenError, load_or_create_token
from ocnb.mcp.cli import build_parser, main

posix_only = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")


@posix_only
def test_created_with_mode_0600_in_a_new_folder_and_reused(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "mcp-token"
    token = load_or_create_token(path)
    assert len(token) >= 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text(encoding="utf-8") == token + "\n"
    assert load_or_create_token(path) == token  # a restart reads the same one
    assert [p.name for p in path.parent.iterdir()] == ["mcp-token"]  # no temporary file left behind


def test_a_given_token_seeds_a_new_file_and_must_match_an_existing_one(tmp_path: Path) -> None:
    path = tmp_path / "t"
    given = "x" * 24
    assert load_or_create_token(path, given) == given
    assert path.read_text().strip() == given
    assert load_or_create_token(path, given) == given
    with pytest.raises(McpTokenError, match="differs"):
        load_or_create_token(path, "y" * 24)
    assert path.read_text().strip() == given


@pytest.mark.parametrize("content", ["", "\n", "short", "has space inside the token here", "ünïcödé" * 4])
def test_an_unusable_file_is_reported_and_left_alone(tmp_path: Path, content: str) -> None:
    path = tmp_path / "t"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(McpTokenError, match=str(path)):
        load_or_create_token(path)
    assert path.read_text(encoding="utf-8") == content


@posix_only
def test_a_file_others_can_read_warns(tmp_path: Path) -> None:
    path = tmp_path / "t"
    path.write_text("z" * 32)
    path.chmod(0o644)
    with pytest.warns(McpSecurityWarning, match="chmod 600"):
        assert load_or_create_token(path) == "z" * 32


def test_processes_starting_together_agree_on_one_token(tmp_path: Path) -> None:
    path = tmp_path / "t"
    got: list[str] = []
    barrier = threading.Barrier(8)

    def start() -> None:
        barrier.wait()
        got.append(load_or_create_token(path))

    threads = [threading.Thread(target=start) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and len(set(got)) == 1
    assert path.read_text().strip() == got[0]


def test_cli_flags_and_their_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    opts = build_parser().parse_args(["--http", "0", "--token-file", "tok"])
    assert opts.token_file == "tok"
    help_text = build_parser().format_help()
    assert "Authorization: Bearer <token>" in help_text and "--token-file" in help_text
    assert "OCNB_MCP_TOKEN" in help_text and "0600" in help_text
    with pytest.raises(SystemExit):
        main(["--http", "0", "--no-auth", "--token-file", str(tmp_path / "t")])
    with pytest.raises(SystemExit):
        main(["--token-file", str(tmp_path / "t")])  # stdio needs no token
    bad = tmp_path / "bad"
    bad.write_text("nope")
    assert main(["--http", "0", "--token-file", str(bad)]) == 2  # before any browser starts
    assert "must be at least 16 characters" in capsys.readouterr().err
    assert bad.read_text() == "nope"


def test_cli_refuses_a_short_env_token(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OCNB_MCP_TOKEN", "abc")
    assert main(["--http", "0"]) == 2
    assert "OCNB_MCP_TOKEN" in capsys.readouterr().err
