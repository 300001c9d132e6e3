"""Remote browsers: a Playwright server to connect to (``Session(connect=...)``).

:class:`PlaywrightServer` runs ``playwright run-server`` from the driver bundled with the Playwright
Python package, bound to loopback — the same server browser-farm images run. Use it to try remote
mode on one machine, or in tests.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
import time

__all__ = ["PlaywrightServer", "driver_command"]


def driver_command() -> list[str]:
    """The command line of Playwright's bundled Node driver (``node cli.js``)."""
    from playwright._impl._driver import compute_driver_executable

    node, cli = compute_driver_executable()
    return [str(node), str(cli)]


class PlaywrightServer:
    """``playwright run-server`` on 127.0.0.1; ``.ws_url`` is what ``Session(connect=...)`` takes.

    ``unsafe=True`` lets clients choose the browser executable (needed where Playwright's own
    browser is not installed, e.g. with Debian's chromium); keep it on loopback.
    """

    def __init__(self, port: int = 0, *, unsafe: bool = True, host: str = "127.0.0.1", timeout: float = 30.0) -> None:
        if port == 0:
            import socket

            with socket.socket() as sock:
                sock.bind((host, 0))
                port = sock.getsockname()[1]
        self.port = port
        self.host = host
        cmd = [*driver_command(), "run-server", "--port", str(port), "--host", host]
        if unsafe:
            cmd.append("--unsafe")
        env = dict(os.environ)
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        self.ws_url = ""
        deadline = time.time() + timeout
        assert self.proc.stdout is not None
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            m = re.search(r"(ws://\S+)", line)
            if m:
                self.ws_url = m.group(1)
                break
        if not self.ws_url:
            self.close()
            raise RuntimeError(f"playwright run-server did not start on {host}:{port}")
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        with contextlib.suppress(Exception):
            for _ in self.proc.stdout:
                pass

    def kill(self) -> None:
        """Kill the server abruptly (to test dropped connections)."""
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        self.proc.wait(10)

    def close(self) -> None:
        """Stop the server and the browsers it launched.

        ``SIGINT``, not ``SIGTERM``: once the server has launched a browser, Playwright's ``SIGTERM``
        handler closes the browsers but leaves the server running (a ``terminate`` then waited 10 s for
        the kill on every close); on ``SIGINT`` it closes them and exits. Killed after 10 s all the same."""
        if self.proc.poll() is None:
            if os.name == "nt":  # no SIGINT to send to a process there
                self.proc.terminate()
            else:
                self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    def __enter__(self) -> PlaywrightServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
