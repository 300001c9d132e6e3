"""Everything under OCNB_HOME is private to the user: files 0600, folders 0700 (issue 16, defect 9)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ocnb.audit.journal import Journal
from ocnb.audit.trace import TraceWriter
from ocnb.files import (
    PRIVATE_DIR,
    PRIVATE_FILE,
    atomic_write_bytes,
    atomic_write_json,
    file_lock,
    open_append,
    private_dir,
)

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX modes")


def modes_under(root: Path) -> dict[str, int]:
    """Relative path → permission bits of every file and folder under ``root`` (root excluded)."""
    return {str(p.relative_to(root)): stat.S_IMODE(p.lstat().st_mode) for p in root.rglob("*")}


def assert_private(root: Path) -> None:
    modes = modes_under(root)
    assert modes, "nothing was written"
    wrong = {
        name: oct(mode)
        for name, mode in modes.items()
        if mode != (PRIVATE_DIR if (root / name).is_dir() else PRIVATE_FILE)
    }
    assert not wrong, wrong


@pytest.fixture
def loose_umask():
    old = os.umask(0o002)  # the most generous umask a user is likely to have
    yield
    os.umask(old)


def test_every_writer_creates_private_files_and_folders(tmp_path: Path, loose_umask: None) -> None:
    home = tmp_path / "home"
    journal = Journal(home, session_id="s1")
    journal.append({"tool": "navigate", "ok": True, "args": {"url": "https://example.test"}})
    journal.close()
    with TraceWriter(home, "s1") as trace:
        trace.emit("console", body={"text": "hello"})
    atomic_write_json(home / "skill-memory" / "example.test" / "skills.json", {"skills": []})
    atomic_write_bytes(home / "screenshots" / "s1" / "shot-00001.png", b"\x89PNG")
    with file_lock(home / "contracts" / "c.json"):
        atomic_write_bytes(home / "contracts" / "c.json", b"{}", locked=True)
    fd = open_append(home / "deep" / "er" / "log.jsonl")
    os.close(fd)
    assert_private(home)


def test_files_and_folders_of_an_older_version_are_tightened(tmp_path: Path, loose_umask: None) -> None:
    home = tmp_path / "home"
    (home / "journal").mkdir(parents=True, mode=0o755)
    os.chmod(home / "journal", 0o755)
    old = home / "journal" / "journal-20260101.jsonl"
    old.write_text("")
    os.chmod(old, 0o644)
    (home / "traces" / "s1").mkdir(parents=True)
    os.chmod(home / "traces", 0o755)
    os.chmod(home / "traces" / "s1", 0o755)
    journal = Journal(home, session_id="s1")
    os.close(open_append(old))  # what the journal does with an existing day file
    journal.close()
    TraceWriter(home, "s1").close()
    modes = modes_under(home)
    assert modes["journal"] == PRIVATE_DIR and modes["journal/journal-20260101.jsonl"] == PRIVATE_FILE
    assert modes["traces/s1"] == PRIVATE_DIR


def test_private_dir_leaves_an_existing_folder_alone_unless_asked(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o755)
    private_dir(shared / "a" / "b")
    assert stat.S_IMODE(shared.stat().st_mode) == 0o755  # the user's own folder, not ours
    assert stat.S_IMODE((shared / "a").stat().st_mode) == PRIVATE_DIR
    assert stat.S_IMODE((shared / "a" / "b").stat().st_mode) == PRIVATE_DIR
    private_dir(shared, tighten=True)
    assert stat.S_IMODE(shared.stat().st_mode) == PRIVATE_DIR
