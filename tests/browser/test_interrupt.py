"""The browser lives outside the process group of the Python that drives it (ocnb/driver.py):
a Ctrl-C stops the call, not the browser, and Python's end (even by SIGKILL) still ends the browser
and removes its temporary profile folder."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ocnb.commands.demosite import DemoSite
from tests.conftest import alive

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
#: Where each child's stderr goes, by pid (a failure shows it: why a line never came).
CHILD_STDERR: dict[int, Path] = {}

CHILD = textwrap.dedent(
    """
    import os, signal, sys, threading, time
    # what a terminal's shell gives the programs it starts: Ctrl-C's default handler, no signal blocked
    # (a test worker's own state is not the terminal's); what was inherited goes to stderr
    print("inherited SIGINT", signal.getsignal(signal.SIGINT), "blocked", signal.pthread_sigmask(signal.SIG_BLOCK, []), file=sys.stderr)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    import ocnb
    from ocnb.errors import Interrupted

    s = ocnb.Session(headless=True)
    s.navigate(url=sys.argv[1] + "form.html")
    s.interact(action="fill", query="Full name", value="Ada Lovelace")
    def child_driver(p):  # a process that ends while /proc is read is not ours to find (CI, once)
        try:
            cmd = open(f"/proc/{p}/cmdline", "rb").read().decode(errors="replace")
            return "run-driver" in cmd and open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1] == str(os.getpid())
        except OSError:
            return False
    drivers = [p for p in os.listdir("/proc") if p.isdigit() and child_driver(p)]
    print("driver", *drivers, flush=True)
    if sys.argv[2] in ("interrupt", "elsewhere"):
        if sys.argv[2] == "elsewhere":  # a SIGINT that reaches the browser's thread, not the main one
            loop_thread = next(t for t in threading.enumerate() if t.name.startswith("ocnb-browser-"))
            threading.Timer(1.0, signal.pthread_kill, (loop_thread.ident, signal.SIGINT)).start()
        print("waiting", flush=True)
        try:
            s.wait_for(text="never there", timeout_ms=30000)
        except Interrupted as exc:
            print(exc, flush=True)
        r = s.javascript_tool(expression="document.querySelector('#full-name').value")
        print("value", r.data["result"], flush=True)
        print("url", s.tabs_context().data["tabs"][0]["url"], flush=True)
        codes = [e["error_code"] for e in s.journal_df().fillna("").to_dict("records") if e["tool"] == "wait_for"]
        print("journal", *codes, flush=True)
    else:
        print("ready", flush=True)
        time.sleep(600)
    """
)


def _start(site: DemoSite, tmp_path: Path, mode: str) -> subprocess.Popen[str]:
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    errors = tmp_path / "child-stderr.txt"
    with errors.open("w") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, site.url, mode],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env=env,
            start_new_session=True,  # its own process group, like a kernel started by Jupyter
        )
    CHILD_STDERR[proc.pid] = errors  # shown by _line when a line never comes
    return proc


def _line(proc: subprocess.Popen[str], prefix: str) -> str:
    assert proc.stdout is not None
    passed = []
    for line in proc.stdout:
        if line.startswith(prefix):
            return line.strip()
        passed.append(line.strip())
    code = proc.wait()
    errors = CHILD_STDERR[proc.pid].read_text(errors="replace")[-3000:]
    raise AssertionError(f"no line {prefix!r}; exit {code}; it printed {passed}; its stderr ends:\n{errors}")


def _browsers_under(folder: Path) -> list[int]:
    """Live processes whose command line names ``folder`` (Chromium's profile lives there)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if str(folder) in cmd and alive(int(entry)):
                out.append(int(entry))
    return out


def test_ctrl_c_in_a_terminal_stops_the_call_and_keeps_the_browser(site: DemoSite, tmp_path: Path) -> None:
    proc = _start(site, tmp_path, "interrupt")
    try:
        _line(proc, "waiting")
        time.sleep(2)
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole foreground group
        assert _line(proc, "interrupted:").startswith("interrupted: wait_for cancelled after ")
        assert _line(proc, "value") == "value Ada Lovelace"
        assert _line(proc, "url").endswith("/form.html")
        assert _line(proc, "journal") == "journal CANCELLED"
        assert proc.wait(60) == 0
    finally:
        proc.kill()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and (_browsers_under(tmp_path) or list(tmp_path.glob("playwright*"))):
        time.sleep(0.2)
    assert _browsers_under(tmp_path) == []
    assert list(tmp_path.glob("playwright_chromiumdev_profile-*")) == []


def test_a_ctrl_c_that_reaches_another_thread_still_stops_the_call_at_once(site: DemoSite, tmp_path: Path) -> None:
    """The kernel may hand a process's SIGINT to any thread that does not block it, and Python runs the
    handler on the main thread only, once it runs Python code again: a main thread asleep in one long
    wait for the browser thread would not see it until the call ended by itself (30 s here)."""
    proc = _start(site, tmp_path, "elsewhere")  # the child sends SIGINT to its browser thread after 1 s
    try:
        _line(proc, "waiting")
        said = _line(proc, "interrupted:")
        m = re.fullmatch(r"interrupted: wait_for cancelled after ([\d.]+) s", said)
        assert m and float(m.group(1)) < 10, said  # within a slice of the wait, not after the call's 30 s
        assert _line(proc, "value") == "value Ada Lovelace"
        assert _line(proc, "journal") == "journal CANCELLED"
        assert proc.wait(60) == 0
    finally:
        proc.kill()


def test_python_killed_without_close_leaves_no_browser_and_no_profile_folder(site: DemoSite, tmp_path: Path) -> None:
    proc = _start(site, tmp_path, "hang")
    try:
        drivers = [int(p) for p in _line(proc, "driver").split()[1:]]
        _line(proc, "ready")
        assert len(drivers) == 1 and alive(drivers[0])
        assert _browsers_under(tmp_path)  # the browser is up, its profile in our TMPDIR
        assert list(tmp_path.glob("playwright_chromiumdev_profile-*"))
        os.killpg(proc.pid, signal.SIGKILL)  # a kernel killed by its manager: no close(), no atexit
        proc.wait(10)
    finally:
        proc.kill()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (
        alive(drivers[0]) or _browsers_under(tmp_path) or list(tmp_path.glob("playwright_chromiumdev_profile-*"))
    ):
        time.sleep(0.2)
    assert not alive(drivers[0]), "the driver outlived its Python"
    assert _browsers_under(tmp_path) == []
    assert list(tmp_path.glob("playwright_chromiumdev_profile-*")) == []
