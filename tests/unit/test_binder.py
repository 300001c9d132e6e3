"""The Binder (repo2docker) configuration: runnable postBuild, Chromium's libraries, pinned requirements."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[2]
BINDER = ROOT / "binder"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements() -> list[str]:
    lines = (BINDER / "requirements.txt").read_text().splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


def test_postbuild_is_an_executable_bash_script_that_stops_on_errors() -> None:
    post = BINDER / "postBuild"
    assert os.access(post, os.X_OK), "binder/postBuild must be executable"
    lines = post.read_text().splitlines()
    assert lines[0] == "#!/bin/bash"
    first_command = next(ln for ln in lines[1:] if ln.strip() and not ln.startswith("#"))
    assert re.match(r"^set -e\b", first_command), "set -e must come before any command"
    assert "python -m playwright install chromium" in lines
    assert subprocess.run(["bash", "-n", str(post)], capture_output=True).returncode == 0


def _playwright_chromium_deps() -> list[str]:
    import playwright

    lib = Path(playwright.__file__).parent / "driver" / "package" / "lib"
    for candidate in [lib / "coreBundle.js", *lib.rglob("nativeDeps.js")]:
        if candidate.is_file():
            text = candidate.read_text(errors="replace")
            block = re.search(r'"ubuntu22\.04-x64":\s*\{.*?chromium:\s*\[(.*?)\]', text, re.S)
            if block:
                return re.findall(r'"([^"]+)"', block.group(1))
    pytest.skip("Playwright's list of native dependencies not found in this Playwright build")


def test_apt_txt_has_the_libraries_playwright_lists_for_chromium_and_not_the_snap_stub() -> None:
    packages = [
        ln.strip() for ln in (BINDER / "apt.txt").read_text().splitlines() if ln.strip() and not ln.startswith("#")
    ]
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9.+-]+", p) for p in packages), packages
    assert not {"chromium", "chromium-browser"} & set(packages)
    missing = set(_playwright_chromium_deps()) - set(packages)
    assert not missing, f"apt.txt lacks {sorted(missing)}"


def test_requirements_are_pinned_cover_the_dependencies_and_install_the_repo() -> None:
    reqs = _requirements()
    assert reqs[-1] in {".", "-e ."}, "the last line installs ocnb from the repository"
    pins = {}
    for line in reqs[:-1]:
        name, sep, ver = line.partition("==")
        assert sep and re.fullmatch(r"[0-9][0-9A-Za-z.+-]*", ver), f"not pinned: {line}"
        pins[_norm(name)] = ver
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    needed = {_norm(_NAME.match(d).group(0)) for d in project["dependencies"]}
    assert not needed - set(pins), (
        f"unpinned runtime dependencies {sorted(needed - set(pins))}: run binder/pin_requirements.py"
    )
    assert {"jupyterlab", "ipykernel"} <= set(pins)
    drift = {}
    for name, ver in pins.items():
        try:
            here = version(name)
        except PackageNotFoundError:
            continue
        if here != ver:
            drift[name] = (ver, here)
    assert not drift, (
        f"pins differ from the tested environment (pinned, installed): {drift}; run binder/pin_requirements.py"
    )


@pytest.mark.slow
def test_pinned_requirements_resolve(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet"]
    cmd += ["--report", str(report), "-r", str(BINDER / "requirements.txt")]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    chosen = {_norm(i["metadata"]["name"]): i["metadata"]["version"] for i in json.loads(report.read_text())["install"]}
    assert "ocnb" in chosen
    for line in _requirements()[:-1]:
        name, _, ver = line.partition("==")
        assert chosen[_norm(name)] == ver
