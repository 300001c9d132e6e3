"""Rewrite binder/requirements.txt: pyproject's runtime dependencies plus JupyterLab, pinned to this venv.

Run ``.venv/bin/python binder/pin_requirements.py`` after changing dependencies in pyproject.toml;
``tests/unit/test_binder.py`` fails until the pins cover them and match the tested environment.
A dependency not installed here keeps the pin it already has (it must have one).
"""

from __future__ import annotations

import re
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "binder" / "requirements.txt"
#: What the image needs besides ocnb's own dependencies: the notebook server, its kernel, widgets.
EXTRA = ["jupyterlab", "ipykernel", "jupyterlab_widgets", "nbclient", "nbformat", "nbconvert"]
HEADER = [
    "# What the Binder image installs (repo2docker), pinned to the versions tested here.",
    "# ocnb itself comes from this repository (the last line); its own ranges are in pyproject.toml.",
    "# Chromium: system libraries in binder/apt.txt, the browser from binder/postBuild.",
    "# Regenerate with: .venv/bin/python binder/pin_requirements.py",
]


def main() -> int:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = [re.match(r"[A-Za-z0-9._-]+", d).group(0) for d in deps] + EXTRA
    old = {}
    if OUT.is_file():
        for line in OUT.read_text().splitlines():
            name, sep, ver = line.partition("==")
            if sep:
                old[name.strip().lower()] = ver.strip()
    pins, missing = {}, []
    for name in names:
        try:
            pins[name] = version(name)
        except PackageNotFoundError:
            if name.lower() in old:
                pins[name] = old[name.lower()]
            else:
                missing.append(name)
    if missing:
        print(f"not installed and not pinned yet: {', '.join(missing)}; install them first", file=sys.stderr)
        return 1
    lines = HEADER + [f"{n}=={pins[n]}" for n in sorted(pins, key=str.lower)] + ["."]
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)} ({len(pins)} pins)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
