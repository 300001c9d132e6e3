"""Which browser ocnb launches: explicit choices first, and a headless shell for headless sessions."""

from __future__ import annotations

from pathlib import Path

import pytest

from ocnb.browser import find_chromium, playwright_headless_shell
from ocnb.settings import Settings


def _exe(path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return str(path)


@pytest.fixture
def fake_path(tmp_path, monkeypatch) -> Path:
    bin_dir = tmp_path / "bin"
    _exe(bin_dir / "chromium")
    _exe(bin_dir / "chromium-headless-shell")
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv("OCNB_CHROMIUM", raising=False)
    return bin_dir


def test_headless_sessions_prefer_the_headless_shell_headed_ones_never_get_it(fake_path) -> None:
    assert find_chromium(None, None)[0] == str(fake_path / "chromium-headless-shell")
    assert find_chromium(None, None, headless=False)[0] == str(fake_path / "chromium")


def test_an_explicit_choice_wins_and_a_missing_one_is_an_error_not_a_fallback(fake_path, tmp_path, monkeypatch) -> None:
    chosen = _exe(tmp_path / "elsewhere" / "chrome")
    assert find_chromium(chosen, None)[0] == chosen
    path, tried = find_chromium(tmp_path / "missing" / "chrome", None)
    assert path is None and "missing" in tried[-1]
    monkeypatch.setenv("OCNB_CHROMIUM", chosen)  # read by Settings, passed on as `configured`
    assert find_chromium(None, None, configured=Settings.from_env().chromium)[0] == chosen
    assert find_chromium(None, None)[0] != chosen  # find_chromium itself reads no environment variable


def test_playwrights_own_headless_shell_of_the_same_revision(fake_path, tmp_path) -> None:
    cache = tmp_path / "ms-playwright"
    full = _exe(cache / "chromium-1200" / "chrome-linux64" / "chrome")
    _exe(cache / "chromium_headless_shell-1190" / "chrome-headless-shell-linux64" / "chrome-headless-shell")
    assert playwright_headless_shell(full) is None  # another revision's shell is not used
    shell = _exe(cache / "chromium_headless_shell-1200" / "chrome-headless-shell-linux64" / "chrome-headless-shell")
    assert playwright_headless_shell(full) == shell
    assert find_chromium(None, full)[0] == shell
    assert find_chromium(None, full, headless=False)[0] == full
