"""The page scripts are bundled from ``ocnb/perception/js/`` at load time, and the wheel ships the modules."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ocnb.perception import bundle as bundles
from ocnb.perception.extract import _script as extract_script
from ocnb.perception.refs import script

ROOT = Path(__file__).resolve().parents[2]


def test_every_module_is_in_a_bundle_and_every_bundle_module_exists() -> None:
    on_disk = {p.name for p in bundles.JS_DIR.glob("*.js")}
    used = {m for _, modules in bundles.BUNDLES.values() for m in modules}
    assert on_disk == used
    for _, modules in bundles.BUNDLES.values():
        assert modules[: len(bundles.SHARED)] == bundles.SHARED  # one set of helpers, first


def test_a_bundle_is_one_function_expression_joined_once_per_process() -> None:
    source = script()
    assert source is script()  # cached: the same string object, read once
    assert source is bundles.bundle("perception")
    assert extract_script() is bundles.bundle("extract")
    body = source.split("\n", 1)[1]
    assert body.startswith("(function ocnbPerception(req) {") and body.rstrip().endswith("return main(req);\n})")
    for module in bundles.BUNDLES["perception"][1]:
        text = (bundles.JS_DIR / module).read_text(encoding="utf-8").rstrip("\n")
        assert f"// ---- js/{module}\n{text}\n" in source
    # the helpers are in both bundles, declared once in each
    assert source.count("function childNodesOf(") == 1
    assert extract_script().count("function childNodesOf(") == 1


@pytest.mark.slow
def test_the_wheel_ships_the_page_script_modules(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        timeout=240,
    )
    (built,) = tmp_path.glob("ocnb-*.whl")
    names = set(zipfile.ZipFile(built).namelist())
    for module in sorted(p.name for p in bundles.JS_DIR.glob("*.js")):
        assert f"ocnb/perception/js/{module}" in names
    assert "ocnb/perception/bundle.py" in names
