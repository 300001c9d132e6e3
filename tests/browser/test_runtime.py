"""The browser runtime: scripts, running loops, threads, close(), and no leftover Chromium."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import ocnb
from tests.conftest import chromium_children

pytestmark = pytest.mark.browser


def test_plain_script(tmp_path: Path, site) -> None:
    script = tmp_path / "script.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import ocnb
            s = ocnb.Session()
            r = s.navigate(url={site.page("form.html")!r})
            print(r.ok, r.data["title"])
            s.close()
            """
        )
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("True ")


def test_sync_api_inside_running_loop(site, ocnb_home) -> None:
    """As in a Jupyter kernel: the sync API is called while an asyncio loop runs on this thread."""

    async def main() -> tuple[bool, str]:
        s = ocnb.Session(home=ocnb_home)
        try:
            r = s.navigate(url=site.page("index.html"))
            js = s.javascript_tool(expression="document.title")
            return r.ok, js.data["result"]
        finally:
            s.close()

    ok, title = asyncio.run(main())
    assert ok and title == r_title(site)


def r_title(site) -> str:
    import re
    import urllib.request

    html = urllib.request.urlopen(site.page("index.html")).read().decode()
    return re.search(r"<title>(.*?)</title>", html, re.S).group(1).strip()


def test_many_threads_are_serialized(session, site) -> None:
    session.navigate(url=site.page("index.html"))
    session.javascript_tool(expression="window.__n = 0")
    errors: list[str] = []

    def worker() -> None:
        for _ in range(10):
            r = session.javascript_tool(expression="(() => { const v = window.__n; window.__n = v + 1; return v })()")
            if not r.ok:
                errors.append(r.error.code)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads), "deadlock"
    assert errors == []
    assert session.javascript_tool(expression="window.__n").data["result"] == 40


def test_close_is_idempotent_and_later_calls_say_session_closed(ocnb_home, site) -> None:
    before = set(chromium_children())
    s = ocnb.Session(home=ocnb_home)
    assert s.navigate(url=site.page("index.html")).ok
    pids = set(chromium_children()) - before
    assert pids, "Chromium should be running as our descendant"
    s.close()
    s.close()
    r = s.navigate(url=site.page("index.html"))
    assert not r.ok and r.error.code == "SESSION_CLOSED"
    deadline = time.time() + 10
    while time.time() < deadline and pids & set(chromium_children()):
        time.sleep(0.2)
    assert not pids & set(chromium_children()), "Chromium outlived close()"


def test_no_chromium_after_interpreter_exit(tmp_path: Path, site) -> None:
    script = tmp_path / "leak.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
            import ocnb
            from tests.conftest import chromium_children
            s = ocnb.Session()
            s.navigate(url={site.page("index.html")!r})
            print(" ".join(map(str, chromium_children())), flush=True)
            # exit without close()
            """
        )
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    pids = [int(p) for p in out.stdout.split()]
    assert pids
    deadline = time.time() + 10
    alive = pids
    while time.time() < deadline:
        alive = [p for p in pids if Path(f"/proc/{p}").exists() and "Z" not in _state(p)]
        if not alive:
            break
        time.sleep(0.2)
    assert not alive, f"Chromium processes survived the interpreter: {alive}"


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def test_browser_unavailable_says_what_was_tried(ocnb_home, tmp_path) -> None:
    s = ocnb.Session(home=ocnb_home, executable_path=str(tmp_path / "no-such-chrome"))
    try:
        r = s.call("navigate", url="about:blank")
        assert r.error.code == "BROWSER_UNAVAILABLE"
        assert "no-such-chrome" in r.error.message and "apt-get install" in r.error.message
    finally:
        s.close()


def test_default_session_is_shared_and_recreated(ocnb_home) -> None:
    a = ocnb.session()
    assert ocnb.session() is a
    a.close()
    b = ocnb.session()
    assert b is not a
    b.close()
