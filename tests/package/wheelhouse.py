"""The wheelhouse the fresh-venv tests install from offline (filled from the package index once)."""

from __future__ import annotations

import fcntl
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: What a fresh venv's processes do not inherit from the suite's: its paths, and PYTHONDONTWRITEBYTECODE
#: (set on CI's machine): the wheels go in with ``--no-compile``, so each process would compile pandas,
#: IPython … from source again (1.8 s for pandas alone, 0.5 s once its bytecode is written). A pip
#: user's environment writes bytecode.
NOT_INHERITED = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE")

HOUSE = Path(os.environ.get("OCNB_TEST_WHEELHOUSE", Path.home() / ".cache" / "ocnb" / "test-wheelhouse"))


@contextmanager
def filling(house: Path) -> Iterator[None]:
    """Hold ``house`` while one test fills it: under ``pytest -n`` two tests can find it empty at once,
    and one must not install from a wheel the other is still writing."""
    house.mkdir(parents=True, exist_ok=True)
    with open(house / ".lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)


def venv_env(root: Path, home: Path) -> dict[str, str]:
    """The environment of a process of the fresh venv ``root`` (activated, its ``bin`` first on PATH),
    with ``OCNB_HOME`` at ``home``."""
    env = {k: v for k, v in os.environ.items() if k not in NOT_INHERITED}
    env.update(
        PATH=f"{root / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(root),
        OCNB_HOME=str(home),
        PYTHONUNBUFFERED="1",
    )
    return env


def remove_later(*paths: Path) -> None:
    """Delete ``paths`` (fresh venvs: 0.3-0.6 GB of small files each) in a process of their own, so the
    test's worker goes on: deleting five took 34 s of disk time in a test's teardown on CI's machine.

    The ``rm`` is started by a shell that exits at once, so it is not this process's child: it leaves
    no zombie in the worker's process tree for a later test that walks it.
    """
    subprocess.run(
        ["sh", "-c", 'rm -rf -- "$@" &', "sh", *map(str, paths)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # not the worker's: an interrupted run does not stop it half-way
        check=True,
        timeout=30,
    )
