"""The suite's own arrangement: the module lists tests/conftest.py schedules by name still name modules,
its workers keep a module together, and it loads where xdist is not installed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import LONGEST, SPREAD

ROOT = Path(__file__).resolve().parents[2]


def _pytest(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """A pytest run of this checkout's tests in a process of its own; it must pass."""
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    return run


def test_the_scheduled_modules_exist() -> None:
    """A module renamed or removed would silently drop out of ``SPREAD`` / ``LONGEST`` (and run last)."""
    gone = sorted(p for p in SPREAD | set(LONGEST) if not (ROOT / p).is_file())
    assert not gone, f"tests/conftest.py names modules that are not there: {gone}"
    assert len(set(LONGEST)) == len(LONGEST)


def test_make_test_runs_on_workers_grouped_by_module() -> None:
    """CI's command spreads the suite over workers with the groups conftest.py sets (``loadgroup``), in
    the order it sets (no reordering by xdist)."""
    recipe = (ROOT / "Makefile").read_text().split("\ntest: ", 1)[1].split("\n\n", 1)[0]
    assert "-n $(JOBS) --dist loadgroup --no-loadscope-reorder" in recipe, recipe


@pytest.mark.slow  # three xdist workers in a subprocess: 17 s of make test-fast's 2 minutes
def test_each_modules_tests_run_on_one_worker_and_a_spread_modules_on_several() -> None:
    """What the grouping is for, run on real workers: a module's tests share its browser and servers
    only if they run on one worker. Three small modules on three workers each stay whole; a module in
    ``SPREAD`` (made to stand in for one by name) is dealt out. (pytest 9.2 silently undid xdist's own
    loadgroup: every module was dealt out test by test.)"""
    modules = ["tests/core/test_settings.py", "tests/core/test_registry.py", "tests/core/test_jsonsafe.py"]
    run = _pytest(
        *("-n", "3", "--dist", "loadgroup", "--no-loadscope-reorder", "-v", *modules),
        env={**os.environ, "OCNB_TEST_SPREAD_TOO": modules[2]},
    )
    workers: dict[str, set[str]] = {}
    for worker, module in re.findall(r"^\[(gw\d)\] \[ *\d+%\] PASSED (\S+?)::", run.stdout, re.M):
        workers.setdefault(module, set()).add(worker)
    assert set(workers) == set(modules), run.stdout[-3000:]
    assert [len(workers[m]) for m in modules[:2]] == [1, 1], workers
    assert len(workers[modules[2]]) > 1, workers  # 51 tests dealt out one by one over three workers


def test_the_suite_loads_where_xdist_is_not_installed() -> None:
    """The other Pythons' runs (tests/package/test_pythons.py) install no xdist: conftest.py's xdist
    hook must be optional there, or pytest refuses the conftest before any test runs."""
    _pytest("-q", "-p", "no:xdist", "tests/core/test_settings.py")


def test_a_module_that_leaves_the_default_session_open_is_told() -> None:
    """The guard every module runs under (tests/conftest.py): what a module leaves open is named, and
    closed, so the next module on the worker starts clean."""
    import ocnb
    from tests.conftest import left_behind, process_state

    stale = process_state()["default"]
    if stale is not None:
        stale.close()
    before = process_state()
    s = ocnb.session()  # a module that opens the default session and never closes it
    leaks = left_behind(before, process_state())
    assert leaks == [f"the default session (ocnb.session(), home {s.home}) is open"]
    assert s.closed and left_behind(before, process_state()) == []
