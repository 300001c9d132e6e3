"""The wheel built from the repo ships the widgets' front-end files, and an installed widget loads them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ASSETS = sorted(p.name for p in (ROOT / "widgets").iterdir() if p.suffix in (".js", ".css"))

pytestmark = pytest.mark.slow

PROBE = r"""
import json, ocnb, ocnb.widgets as w
from ocnb.widgets.assets import assets_dir
screen = w.ScreenView()
print(json.dumps({
    "package": ocnb.__file__,
    "assets": str(assets_dir()),
    "esm": str(screen._esm),
    "css": str(screen._css),
}))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=240,
    )
    (built,) = out.glob("ocnb-*.whl")
    return built


def test_wheel_contains_the_widget_assets(wheel: Path) -> None:
    assert ASSETS, "the repo's widgets/ folder has no front-end files"
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in ASSETS:
        assert f"ocnb/_widgets/{name}" in names
    assert "ocnb/widgets/screen.py" in names


def test_installed_widget_loads_its_esm_and_css_from_the_package(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        timeout=240,
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    run = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=tmp_path,  # not the repo: ``import ocnb`` must find the installed copy
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    info = json.loads(run.stdout.strip().splitlines()[-1])
    installed = target / "ocnb"
    assert Path(info["package"]).parent == installed
    assert Path(info["assets"]) == installed / "_widgets"
    assert info["esm"] == (installed / "_widgets" / "screen.js").read_text(encoding="utf-8")
    assert info["css"] == (installed / "_widgets" / "screen.css").read_text(encoding="utf-8")
    assert "export default" in info["esm"] and "ocnb-screen" in info["css"]
