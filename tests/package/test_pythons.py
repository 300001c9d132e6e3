"""The Pythons ocnb claims, tested: the oldest and the newest supported interpreter on this machine each
install the built wheel with every extra into a fresh virtual environment, import ocnb, run the README's
first example (on real Chromium) and the tests that need no browser. The built sdist builds the very
wheel the checkout builds (the same files, byte for byte), so what the wheel's runs show holds for it.

The interpreter running this suite is tested by the suite itself, from the checkout, with the same
pinned dependencies: when it is the oldest supported one and a newer one is on the machine (whose run
installs the same wheel), its own wheel run would repeat both, and is a skip that says so.

``requires-python`` in pyproject.toml is exactly the tested range: its lower bound is the oldest minor
version tested here, and its classifiers name each minor version from there to the newest tested. An
interpreter that is not on the machine is a skip that says so, never a silent pass.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.package.wheelhouse import HOUSE, filling, remove_later, venv_env

ROOT = Path(__file__).resolve().parents[2]
#: The test folders run on another interpreter: every feature's tests, less those that start servers,
#: kernels or worker processes of the repo's own Python (MCP, notebooks, batch, fuzz) and this folder.
FOLDERS = ("core", "audit", "contracts", "discovery", "perception", "tools", "browser", "skills", "widgets")
#: Tests of a source checkout itself (where its files are found), or that start a real browser in a
#: process of their own: not what an installed copy is asked.
CHECKOUT_ONLY = (
    "tests/discovery/test_capmap_reader.py::test_default_path_is_the_checkouts_not_the_working_folder",
    "tests/widgets/test_assets.py::test_source_checkout_reads_the_repo_widgets_folder",
    "tests/browser/test_runtime.py::test_no_chromium_after_interpreter_exit",
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _minimum() -> tuple[int, int]:
    spec = _pyproject()["project"]["requires-python"]
    m = re.fullmatch(r">=\s*3\.(\d+)", spec)
    assert m, f"requires-python {spec!r} is not a plain lower bound"
    return (3, int(m.group(1)))


def _interpreters() -> dict[tuple[int, int], str]:
    """Every CPython on the machine (pyenv's and PATH's), by minor version."""
    found: dict[tuple[int, int], str] = {}
    candidates = sorted(Path.home().glob(".pyenv/versions/3.*/bin/python3"))
    candidates += [Path(p) for p in (shutil.which(f"python3.{n}") for n in range(8, 20)) if p]
    for exe in candidates:
        out = subprocess.run(
            [str(exe), "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True, text=True
        )
        if out.returncode == 0:
            major, minor = map(int, out.stdout.split())
            found.setdefault((major, minor), str(exe))
    return found


def _supported() -> list[tuple[int, int]]:
    lo = _minimum()
    return sorted(v for v in _interpreters() if v >= lo)


def test_the_claimed_range_is_the_tested_range() -> None:
    """The classifiers name each minor version from the lower bound to the newest tested one."""
    supported = _supported()
    if not supported:
        pytest.skip(f"no Python {_minimum()[0]}.{_minimum()[1]} or newer on this machine besides the running one")
    classifiers = _pyproject()["project"]["classifiers"]
    named = sorted(
        (3, int(m.group(1)))
        for c in classifiers
        if (m := re.fullmatch(r"Programming Language :: Python :: 3\.(\d+)", c))
    )
    assert named[0] == _minimum(), (named, _minimum())
    assert named == [(3, n) for n in range(_minimum()[1], named[-1][1] + 1)], named
    assert named[-1] <= supported[-1], f"classifiers claim {named[-1]} but the newest on the machine is {supported[-1]}"
    below = sorted(v for v in _interpreters() if v < _minimum())
    print(f"\nsupported on this machine: {supported}; older, refused by requires-python: {below}")


def _build(kind: str, out: Path) -> Path:
    """The wheel or the sdist built from this checkout (no build isolation: hatchling is a dev dependency)."""
    flag = {"wheel": "--wheel", "sdist": "--sdist"}[kind]
    run = subprocess.run(
        [sys.executable, "-m", "build", flag, "--no-isolation", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    (built,) = out.glob("ocnb-*.whl" if kind == "wheel" else "ocnb-*.tar.gz")
    return built


def _venv(python: str, base: Path, target: Path) -> Path:
    """A fresh venv of ``python`` with ``target[all]``, its dependencies from a per-interpreter wheelhouse."""
    root = base / "venv"
    made = subprocess.run([python, "-m", "venv", str(root)], capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    py = str(root / "bin" / "python")
    tag = subprocess.run(
        [py, "-c", "import sys; print(f'cp{sys.version_info[0]}{sys.version_info[1]}')"], capture_output=True, text=True
    ).stdout.strip()
    house = HOUSE / tag
    house.mkdir(parents=True, exist_ok=True)
    lock = ROOT / "scripts" / "constraints.txt"
    pins = ["-c", str(lock)] if f"# python {tag[2]}.{tag[3:]}" in lock.read_text().splitlines() else []
    # ocnb with every extra, what the tests run with, and hatchling (an sdist builds with it, offline)
    want = [
        f"{target}[all]",
        "pytest",
        "pytest-timeout",
        "hypothesis",
        "anthropic",
        "httpx",
        "lxml",
        "packaging",
        "hatchling",
    ]
    offline = [py, "-m", "pip", "install", "-q", "--no-compile", "--no-index", "--find-links", str(house), *pins, *want]
    if subprocess.run(offline, capture_output=True, text=True, timeout=900).returncode != 0:
        with filling(house):
            for stale in house.glob("ocnb-*"):
                stale.unlink()
            fetched = subprocess.run(
                [py, "-m", "pip", "download", "-q", "-d", str(house), *pins, *want],
                capture_output=True,
                text=True,
                timeout=1200,
            )
            assert fetched.returncode == 0, fetched.stderr[-3000:]
            for stale in house.glob("ocnb-*"):
                stale.unlink()
            again = subprocess.run(offline, capture_output=True, text=True, timeout=900)
            assert again.returncode == 0, again.stderr[-3000:]
    return root


def _check(root: Path, tmp: Path) -> str:
    """Import, the README's first example, and the browserless tests, all from the installed copy."""
    py = str(root / "bin" / "python")
    env = venv_env(root, tmp / "home")
    where = subprocess.run(
        [py, "-P", "-c", "import ocnb; print(ocnb.__file__, ocnb.__version__)"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    assert where.returncode == 0, where.stderr[-2000:]
    assert str(root) in where.stdout, f"ocnb imported from {where.stdout}, not the fresh venv"

    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```python\n(.*?)```", readme, re.S).group(1)
    expected = [m.group(1).strip() for m in re.finditer(r"#\s*(.+)$", block, re.M)]
    example = subprocess.run([py, "-P", "-c", block], capture_output=True, text=True, cwd=tmp, env=env, timeout=600)
    assert example.returncode == 0, example.stderr[-3000:]
    assert example.stdout.splitlines() == expected

    # The repo's tests, importing the installed ocnb: `-P` keeps the checkout off sys.path, and the
    # tests package (and bench) are reached through a folder that holds only links to them.
    shim = tmp / "tests-only"
    shim.mkdir()
    (shim / "tests").symlink_to(ROOT / "tests")
    (shim / "bench").symlink_to(ROOT / "bench")  # a corpus test reads the bench's page server
    env.update(PYTHONPATH=str(shim), OCNB_TEST_NO_BROWSER="1")
    run = subprocess.run(
        [
            py,
            "-P",
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-x",
            "--timeout",
            "300",
            # a test that starts a browser would only be a skip here (OCNB_TEST_NO_BROWSER): leave it out
            # rather than set up its servers and sessions to skip it
            "-m",
            "not browser",
            *[str(ROOT / "tests" / f) for f in FOLDERS],
            *[f"--deselect={t}" for t in CHECKOUT_ONLY],
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=2000,
    )
    tail = run.stdout[-3000:]
    assert run.returncode == 0, tail + run.stderr[-2000:]
    passed = int(re.search(r"(\d+) passed", tail).group(1))
    assert passed >= 300, tail  # a run that skipped nearly everything is no check
    return tail.strip().splitlines()[-1]


@pytest.mark.parametrize("which", ["oldest", "newest"])
def test_the_wheel_on_the_oldest_and_newest_supported_python(which: str, tmp_path: Path) -> None:
    supported = _supported()
    if not supported:
        pytest.skip("no supported Python on this machine besides the running one")
    version = supported[0] if which == "oldest" else supported[-1]
    if which == "newest" and len(supported) == 1:
        pytest.skip(f"only Python {version} is on this machine: the oldest run covers it")
    if which == "oldest" and version == sys.version_info[:2] and len(supported) > 1:
        pytest.skip(
            f"Python {version[0]}.{version[1]} runs this whole suite (from the checkout, the same pins), and the "
            f"newest's run installs the same wheel: a wheel run here would repeat both"
        )
    wheel = _build("wheel", tmp_path / "dist")
    root = _venv(_interpreters()[version], tmp_path, wheel)
    try:
        print(f"\nPython {version[0]}.{version[1]}: {_check(root, tmp_path)}")
    finally:
        remove_later(root)


def _files(wheel: Path) -> dict[str, str]:
    """A wheel's files and their SHA-256, less its RECORD (which lists them)."""
    import hashlib
    import zipfile

    with zipfile.ZipFile(wheel) as z:
        return {n: hashlib.sha256(z.read(n)).hexdigest() for n in z.namelist() if not n.endswith(".dist-info/RECORD")}


def test_the_sdist_builds_the_checkouts_wheel(tmp_path: Path) -> None:
    """``python -m build`` and ``twine check`` pass on both artifacts, and the wheel built from the
    unpacked sdist (as ``pip install`` of the sdist builds it) holds the checkout's wheel's files, byte
    for byte: the sdist installs what the wheel runs above test."""
    dist = tmp_path / "dist"
    wheel, sdist = _build("wheel", dist), _build("sdist", dist)
    twine = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert twine.returncode == 0, twine.stdout + twine.stderr
    import tarfile

    with tarfile.open(sdist) as tar:
        names = tar.getnames()
        assert any(n.endswith("/LICENSE") for n in names) and any(n.endswith("/RELEASING.md") for n in names), names
        tar.extractall(tmp_path / "unpacked", filter="data")
    import zipfile

    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in zipfile.ZipFile(wheel).namelist())
    (unpacked,) = (tmp_path / "unpacked").iterdir()
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(tmp_path / "from-sdist"),
            str(unpacked),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    (again,) = (tmp_path / "from-sdist").glob("ocnb-*.whl")
    assert again.name == wheel.name
    mine, theirs = _files(wheel), _files(again)
    assert sorted(set(mine) ^ set(theirs)) == [], "files in one wheel only"
    assert [n for n in mine if mine[n] != theirs[n]] == [], "files that differ"
    assert len(mine) > 100, len(mine)  # the package, its page scripts, widgets and notebooks, not an empty shell
