"""ocnb.files: CORRUPT_FILE naming the file, leftover temp files of killed writers, no-clobber writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ocnb import errors, storage
from ocnb.errors import ERROR_CODES, CorruptFile, OcnbError
from ocnb.files import atomic_write_bytes, atomic_write_json, clean_stale_temps, read_json

KILLED_WRITER = """
import os, sys
from ocnb import files as storage
os.replace = lambda *a: os._exit(9)   # the process dies between writing its temp file and the rename
storage.atomic_write_json(sys.argv[1], {"half": True})
"""


def test_corrupt_file_is_its_own_code_in_the_error_tree() -> None:
    assert storage.CorruptFile is errors.CorruptFile and "CorruptFile" in errors.__all__
    assert issubclass(CorruptFile, OcnbError) and CorruptFile.code == "CORRUPT_FILE"
    assert "CORRUPT_FILE" in ERROR_CODES and "CorruptFile" in (errors.__doc__ or "")
    exc = CorruptFile("bad", file=Path("/x/y.json"))
    assert exc.details == {"file": "/x/y.json"} and str(exc) == "CORRUPT_FILE: bad"


@pytest.mark.parametrize("content", [b"{not json", b"\xff\xfe\x00binary"])
def test_unreadable_json_names_the_file_and_stays(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "f.json"
    path.write_bytes(content)
    with pytest.raises(CorruptFile) as info:
        read_json(path)
    assert info.value.code == "CORRUPT_FILE" and info.value.details["file"] == str(path)
    assert str(path) in info.value.message and path.read_bytes() == content


def test_temp_file_of_a_killed_writer_is_removed_by_the_next_locked_write(tmp_path: Path) -> None:
    target = tmp_path / "skills.json"
    out = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(target)], capture_output=True, timeout=60)
    assert out.returncode == 9, out.stderr
    leftovers = list(tmp_path.glob(".skills.json.*.tmp"))
    assert len(leftovers) == 1 and not target.exists()
    atomic_write_json(target, {"ok": True}, locked=True)
    assert json.loads(target.read_text()) == {"ok": True}
    assert not list(tmp_path.glob(".skills.json.*.tmp"))


def test_unlocked_write_removes_only_stale_temp_files_and_only_its_own(tmp_path: Path) -> None:
    target = tmp_path / "data.json"
    fresh = tmp_path / ".data.json.abcd1234.tmp"  # maybe a live writer right now: kept
    stale = tmp_path / ".data.json.zz_9zz99.tmp"
    other = tmp_path / ".data.json.bak.abcd1234.tmp"  # the temp of another file
    odd = tmp_path / ".data.json.not-ours.tmp"
    for p in (fresh, stale, other, odd):
        p.write_text("x")
    old = time.time() - storage.STALE_TEMP_S - 5
    for p in (stale, other, odd):
        os.utime(p, (old, old))
    atomic_write_bytes(target, b"1")
    assert fresh.exists() and not stale.exists() and other.exists() and odd.exists()
    assert clean_stale_temps(target, 0) == [fresh] and other.exists()


def test_no_clobber_write_refuses_an_existing_file(tmp_path: Path) -> None:
    target = tmp_path / "script.py"
    atomic_write_bytes(target, b"first", overwrite=False)
    with pytest.raises(FileExistsError):
        atomic_write_bytes(target, b"second", overwrite=False)
    assert target.read_bytes() == b"first" and sorted(p.name for p in tmp_path.iterdir()) == ["script.py"]
    atomic_write_bytes(target, b"third")
    assert target.read_bytes() == b"third"


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"schema_version": 9, "assertion": {}}'])
def test_every_corrupt_contract_file_is_corrupt_file_naming_it(ocnb_home: Path, content: str) -> None:
    from ocnb.contracts import ContractStore

    path = ocnb_home / "contracts" / "c1.json"
    path.parent.mkdir(parents=True)
    path.write_text(content)
    with pytest.raises(CorruptFile) as info:
        ContractStore().get("c1")
    assert info.value.code == "CORRUPT_FILE" and info.value.details["file"] == str(path)
