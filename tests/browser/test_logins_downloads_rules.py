"""The rules behind saved logins and downloads, without a browser: names, allowed folders, settings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ocnb.browser.download_store import MAX_NAME, _claim, safe_filename
from ocnb.browser.saved_logins import load_state, state_path, summary
from ocnb.errors import FileNotAllowed, InvalidArgument
from ocnb.mcp.cli import build_parser
from ocnb.settings import Settings


@pytest.mark.parametrize(
    ("suggested", "safe"),
    [
        ("report.csv", "report.csv"),
        ("../../etc/passwd", "_._etc_passwd"),
        ("..\\..\\boot.ini", "_._boot.ini"),
        ("/abs/path.txt", "_abs_path.txt"),
        ("..", "download"),
        (".hidden", "hidden"),
        ("a\x00b\x07c\nd.txt", "a_b_c_d.txt"),
        ("bell\u202eexe.txt", "bell_exe.txt"),  # a right-to-left override is a control (format) character
        ("name...txt", "name.txt"),
        ("", "download"),
        (None, "download"),
        ("café.pdf", "café.pdf"),
    ],
)
def test_safe_filename(suggested: str | None, safe: str) -> None:
    assert safe_filename(suggested) == safe


def test_a_long_name_keeps_its_extension() -> None:
    name = safe_filename("x" * 500 + ".tar.gz")
    assert len(name) <= MAX_NAME and name.endswith(".gz") and "/" not in name


def test_claim_never_overwrites(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("first")
    for text in ("second", "third"):
        part = tmp_path / ".part"
        part.write_text(text)
        _claim(tmp_path, "a.txt", part)
        part.unlink()
    assert [(tmp_path / n).read_text() for n in ("a.txt", "a-2.txt", "a-3.txt")] == ["first", "second", "third"]


def _settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home", upload_root=tmp_path / "project")


def test_state_names_and_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = _settings(tmp_path)
    state = (tmp_path / "home" / "state").resolve()
    assert state_path("github", s) == state / "github.json"
    assert state_path("github.json", s, write=True) == state / "github.json"
    assert state_path(str(state / "x.json"), s, write=True) == state / "x.json"
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path / "project")
    assert state_path("./auth.json", s) == (tmp_path / "project" / "auth.json").resolve()  # read from the project
    with pytest.raises(FileNotAllowed):
        state_path("./auth.json", s, write=True)  # never written there
    for bad in ("../auth.json", "/etc/passwd", "~/.ssh/id_rsa", str(state / ".." / "x.json")):
        with pytest.raises(FileNotAllowed):
            state_path(bad, s)
    for bad in ("bad name", "a..b", "-x", " "):
        with pytest.raises(InvalidArgument):
            state_path(bad, s)


def test_a_symlink_out_of_the_state_folder_is_refused(tmp_path: Path) -> None:
    s = _settings(tmp_path)
    folder = tmp_path / "home" / "state"
    folder.mkdir(parents=True)
    (tmp_path / "secret.json").write_text("{}")
    os.symlink(tmp_path / "secret.json", folder / "link.json")
    with pytest.raises(FileNotAllowed):
        state_path(str(folder / "link.json"), s)


def test_load_state_never_quotes_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('["sekrit-cookie-value"]')
    with pytest.raises(InvalidArgument) as err:
        load_state(path)
    assert "sekrit" not in str(err.value)
    with pytest.raises(InvalidArgument, match="no storage state"):
        load_state(tmp_path / "missing.json")
    state = {
        "cookies": [{"name": "a", "value": "v"}],
        "origins": [{"origin": "o", "localStorage": [], "indexedDB": []}],
    }
    assert summary(path, state) == {"path": str(path), "cookies": 1, "origins": 1, "indexed_db": 0}


def test_settings_fields() -> None:
    s = Settings(storage_state=Path("auth.json"), user_data_dir="~/prof")
    assert s.storage_state == "auth.json" and s.user_data_dir == Path("~/prof").expanduser()
    assert Settings().download_max_bytes == 100 * 1024 * 1024
    with pytest.raises(ValueError):
        Settings(download_max_bytes=0)


def test_mcp_options() -> None:
    opts = build_parser().parse_args(["--cdp-endpoint", "http://127.0.0.1:9222", "--storage-state", "gh"])
    assert (opts.cdp_endpoint, opts.connect, opts.storage_state) == ("http://127.0.0.1:9222", None, "gh")
    opts = build_parser().parse_args(["--connect", "ws://127.0.0.1:3000/", "--user-data-dir", "p"])
    assert (opts.connect, opts.user_data_dir) == ("ws://127.0.0.1:3000/", "p")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--cdp-endpoint", "x", "--connect", "y"])
