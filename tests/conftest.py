"""Shared fixtures: an isolated OCNB_HOME, the demo site on loopback, and real-Chromium sessions."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Awaitable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

import ocnb
from ocnb.commands.demosite import DemoSite, serve

T = TypeVar("T")

#: ``OCNB_TEST_NO_BROWSER=1`` (the other-Python runs of tests/package/test_pythons.py): the browserless
#: tests run, and a test that tries to launch or connect a browser is reported as skipped, saying so.
NO_BROWSER = os.environ.get("OCNB_TEST_NO_BROWSER") == "1"
NO_BROWSER_SAID = "needs a browser (OCNB_TEST_NO_BROWSER=1)"

if NO_BROWSER:
    import ocnb.browser.shared
    import ocnb.browser.state
    from ocnb.errors import BrowserUnavailable

    # Once per process: this file is imported twice when a test imports ``tests.conftest``, and both
    # copies must read the same record of a browser start (kept on the refusing function).
    if not hasattr(ocnb.browser.state.open_browser, "tried"):
        tried = threading.Event()

        async def _refuse(*args: object, **kwargs: object) -> None:
            tried.set()  # from any thread: the browser thread, or a test's own
            raise BrowserUnavailable(NO_BROWSER_SAID)

        _refuse.tried = tried  # type: ignore[attr-defined]
        ocnb.browser.state.open_browser = _refuse  # type: ignore[assignment]
        ocnb.browser.shared.open_browser = _refuse  # type: ignore[assignment]


def _tried_browser() -> threading.Event | None:
    import ocnb.browser.state

    return getattr(ocnb.browser.state.open_browser, "tried", None)


#: Fixtures that start a real Chromium (directly or through a fixture they use). A test that uses one
#: is marked ``browser`` at collection (``pytest_collection_modifyitems`` below), so ``-m "not browser"``
#: (``make test-fast``) leaves it out without a hand mark. A room's own browser fixture goes here too.
BROWSER_FIXTURES = frozenset({"shared_session", "fresh_session", "playwright_browser", "ip"})


#: Under ``pytest -n N --dist loadgroup`` (``make test``) each module's tests run on one worker, so a
#: module's browser and servers start once (:func:`pytest_xdist_make_scheduler`). These modules' tests
#: each build what they need (venvs, clusters, servers of their own) and are spread over the workers
#: one by one (``OCNB_TEST_SPREAD_TOO`` names more, comma-separated: tests/package/test_suite_parts.py
#: checks the spreading with it).
SPREAD = frozenset(
    {
        "tests/package/test_pythons.py",
        "tests/batch/test_exactly_once.py",
        "tests/batch/test_worker_killed.py",
        "tests/batch/test_exactly_once_rules.py",
    }
)
#: The longest modules, longest first (seconds of a whole run's ``--junitxml``, 2026-12): workers take
#: them first, so no worker starts a seven-minute module when the others are nearly done.
LONGEST = (
    "tests/package/test_fresh_venv.py",  # ~460 s: four fresh venvs, each extra installed
    "tests/security/test_origin_policy.py",  # ~410 s: 188 vectors, each given 1.5 s to reach out
    "tests/package/test_pythons.py",  # the newest Python's run ~200 s, the sdist ~30 s; spread
    "tests/batch/test_exactly_once.py",  # 7 x ~50 s, spread
    "tests/batch/test_worker_killed.py",
    "tests/batch/test_pool.py",
    "tests/perception/test_read_corpus.py",
    "tests/notebooks/test_notebooks.py",
    "tests/browser/test_crash_recovery.py",
    "tests/notebooks/test_jupyterlab.py",
    "tests/package/test_readme_commands.py",
    "tests/batch/test_exactly_once_rules.py",
)


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``browser`` every test whose fixtures (with what they use) start a Chromium; on an xdist
    worker, put :data:`LONGEST` first (the order the workers take the modules in)."""
    for item in items:
        if BROWSER_FIXTURES.intersection(getattr(item, "fixturenames", ())) and not item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.browser)
    if not hasattr(config, "workerinput"):
        return  # a plain run keeps the files' order
    rank = {path: i for i, path in enumerate(LONGEST)}
    items.sort(key=lambda item: rank.get(_module(item.nodeid), len(rank)))


@pytest.hookimpl(optionalhook=True)  # xdist's hook: a run without xdist (the other Pythons') has none
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under ``--dist loadgroup``: a module's tests are one unit of work, given whole to one worker
    (but :data:`SPREAD`'s, each its own), in the order the workers collected them.

    xdist's own ``loadgroup`` learns a test's group from a suffix it writes into the test's node id on
    the worker; pytest 9.2's structured node ids no longer carry it (pytest-dev/pytest-xdist#1386), and
    every module's tests were dealt out one by one, each module's browser and servers started on
    every worker. The groups are read here from the node ids themselves, on the controller.
    """
    if config.getoption("dist", None) != "loadgroup":
        return None  # xdist's own scheduler for the mode asked
    from xdist.scheduler import LoadScopeScheduling

    spread = SPREAD | set(filter(None, os.environ.get("OCNB_TEST_SPREAD_TOO", "").split(",")))

    class ModuleScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = _module(nodeid)
            return nodeid if module in spread else module

    return ModuleScheduling(config, log)


def pytest_runtest_setup(item: pytest.Item) -> None:
    tried = _tried_browser()
    if tried is not None:
        tried.clear()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    if not NO_BROWSER:
        return
    report = outcome.get_result()  # type: ignore[attr-defined]
    tried = _tried_browser()
    if report.failed and ((tried is not None and tried.is_set()) or NO_BROWSER_SAID in str(report.longrepr)):
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: {NO_BROWSER_SAID}")


@pytest.fixture(autouse=True)
def ocnb_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test writes under its own OCNB_HOME, never under ~/.ocnb."""
    home = tmp_path_factory.mktemp("ocnb-home")
    monkeypatch.setenv("OCNB_HOME", str(home))
    return home


@pytest.fixture(scope="session")
def site() -> Iterator[DemoSite]:
    """The bundled demo site served on 127.0.0.1 (two origins) for the whole run."""
    with serve() as s:
        yield s


#: The perception fixture pages (tests/fixtures/sites/perception): controls, icons, fills, scrolling.
PERCEPTION_SITES = Path(__file__).resolve().parent / "fixtures" / "sites" / "perception"


@pytest.fixture(scope="session")
def perception_site() -> Iterator[DemoSite]:
    """The perception fixture pages, served on loopback for the whole run."""
    with serve(root=PERCEPTION_SITES) as s:
        yield s


@pytest.fixture(scope="module")
def module_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ocnb-module-home")


@pytest.fixture(scope="module")
def shared_session(module_home: Path) -> Iterator[ocnb.Session]:
    """One Chromium per test module (launching costs about a second)."""
    s = ocnb.Session(headless=True, home=module_home)
    s.start()
    yield s
    s.close()


@pytest.fixture
def session(shared_session: ocnb.Session) -> Iterator[ocnb.Session]:
    """The module's session, reset to one blank tab before each test."""
    s = shared_session
    tabs = s.call("tabs_context").data["tabs"]
    for t in tabs[1:]:
        s.call("tabs_close", tab_id=t["tab_id"])
    s.call("navigate", url="about:blank")
    yield s


@dataclass
class PlaywrightBrowser:
    """A Chromium driven by plain Playwright async (no ocnb between), on an event loop of its own."""

    loop: asyncio.AbstractEventLoop
    playwright: Any  # playwright.async_api.Playwright
    browser: Any  # playwright.async_api.Browser

    def run(self, coro: Awaitable[T]) -> T:
        """Run ``coro`` on the browser's loop until it is done."""
        return self.loop.run_until_complete(coro)


@pytest.fixture(scope="module")
def playwright_browser() -> Iterator[PlaywrightBrowser]:
    """One Chromium for the test module, launched by plain Playwright the way ocnb finds and starts it
    (``find_chromium``, ``launch_args``); the module is skipped when no Chromium can start. Tests that
    check pages or page-side code without ocnb's session take a fresh context of it per test."""
    from playwright.async_api import async_playwright

    from ocnb.browser import find_chromium, launch_args

    loop = asyncio.new_event_loop()
    playwright = loop.run_until_complete(async_playwright().start())
    path, _ = find_chromium(None, None)  # OCNB_CHROMIUM or a system Chromium; None = Playwright's own
    try:
        browser = loop.run_until_complete(
            playwright.chromium.launch(executable_path=path, args=[*launch_args(), "--disable-gpu"])
        )
    except Exception as exc:  # noqa: BLE001 - no usable browser on this machine
        loop.run_until_complete(playwright.stop())
        loop.close()
        pytest.skip(f"Chromium not available: {exc}")
    try:
        yield PlaywrightBrowser(loop, playwright, browser)
    finally:
        loop.run_until_complete(browser.close())
        loop.run_until_complete(playwright.stop())
        loop.close()


@pytest.fixture
def fresh_session(ocnb_home: Path) -> Iterator[ocnb.Session]:
    """A session of its own (for tests that change configuration or close it)."""
    s = ocnb.Session(headless=True, home=ocnb_home)
    yield s
    s.close()


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (exists and is not a zombie; Linux /proc)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def chromium_children(marker: str | None = None) -> list[int]:
    """PIDs of Chromium processes that descend from this process (Linux /proc)."""
    me = os.getpid()
    parents: dict[int, int] = {}
    names: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        parents[int(entry)] = ppid
        names[int(entry)] = cmd
    out = []
    for pid, cmd in names.items():
        if "chrom" not in cmd.lower() or (marker and marker not in cmd):
            continue
        p = pid
        while p in parents and p != 1:
            p = parents[p]
            if p == me:
                out.append(pid)
                break
    return out


#: The opt-in capability group of the probe tool below.
PROBE_GROUP = "zzprobe"


@pytest.fixture
def probe_group() -> Iterator[str]:
    """An opt-in capability group with one read-only tool (``zz_probe``) while the test runs."""
    from ocnb import registry

    @registry.tool(name="zz_probe", category="test", group=PROBE_GROUP, uses_page=False, description="A probe.")
    async def zz_probe(ctx: object, args: dict) -> dict:
        return {"probe": True}

    try:
        yield PROBE_GROUP
    finally:
        registry._ALL.pop("zz_probe", None)


def process_state() -> dict[str, Any]:
    """What a module could leave behind for the next module its worker runs: the default session
    (``ocnb.session()``), and an MCP server in the notebook shell's magics (the shell is one per process)."""
    import importlib
    import sys

    default = importlib.import_module("ocnb.session")._DEFAULT
    server = None
    if "IPython" in sys.modules:
        from IPython import get_ipython

        shell = get_ipython()
        magics = shell.magics_manager.registry.get("OcMagics") if shell is not None else None
        server = getattr(magics, "_mcp_server", None)
    return {
        "default": default if default is not None and not default.closed else None,
        "server": server if server is not None and server.running else None,
    }


def left_behind(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What is open in ``after`` that ``before`` did not have, each closed here and said in a line."""
    leaks = []
    if after["default"] is not None and after["default"] is not before["default"]:
        leaks.append(f"the default session (ocnb.session(), home {after['default'].home}) is open")
        after["default"].close()
    if after["server"] is not None and after["server"] is not before["server"]:
        leaks.append(f"an MCP server ({after['server'].url}) runs in the notebook shell's magics")
        after["server"].stop()
    return leaks


@pytest.fixture(scope="module", autouse=True)
def _a_module_leaves_the_process_as_it_found_it() -> Iterator[None]:
    """A module's own fixtures close what they open: the next module the same worker runs, whichever
    it is, must not find it (CI once failed test_magics' ``%oc mcp start`` on a server the docs' prose
    had left running). What is left is closed, and the module's last test errors, naming it."""
    before = process_state()
    yield
    leaks = left_behind(before, process_state())
    if leaks:
        pytest.fail("this module left behind: " + "; ".join(leaks), pytrace=False)
