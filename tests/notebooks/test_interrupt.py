"""Interrupting a cell stops the call, not the browser: the way JupyterLab's ■ does it, through
``jupyter_client``'s ``interrupt_kernel`` (SIGINT to the kernel's whole process group)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from ocnb.commands.demosite import DemoSite

pytestmark = pytest.mark.browser


def _run(kc: Any, code: str, timeout: float = 90) -> dict[str, Any]:
    """Execute ``code``; its stream text, error lines and last text/plain result."""
    out: dict[str, Any] = {"stdout": "", "stderr": "", "error": None, "result": None}

    def hook(msg: dict[str, Any]) -> None:
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            out[content["name"]] += content["text"]
        elif kind == "error":
            out["error"] = content
        elif kind in ("execute_result", "display_data"):
            out["result"] = content["data"].get("text/plain")

    reply = kc.execute_interactive(code, timeout=timeout, output_hook=hook)
    out["status"] = reply["content"]["status"]
    return out


def _value(kc: Any, expr: str) -> Any:
    res = _run(kc, f"import json; print(json.dumps({expr}))")
    assert res["status"] == "ok", res
    return json.loads(res["stdout"].strip().splitlines()[-1])


@pytest.mark.parametrize("face", ["line", "cell", "api"])
def test_interrupting_a_wait_keeps_the_page_tabs_and_typed_values(site: DemoSite, ocnb_home: Path, face: str) -> None:
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3")
    try:
        setup = _run(
            kc,
            "import ocnb\n"
            "%load_ext ocnb.magics\n"
            "%config OcMagics.headless = True\n"
            f"%oc navigate {site.url}form.html\n"
            '%oc fill "Full name" "Ada Lovelace"\n'
            "%oc tabs_create\n"
            "%oc tabs_activate t1\n"
            "s = ocnb.session()\n",
        )
        assert setup["status"] == "ok", setup
        tabs_before = _value(kc, "[t['tab_id'] for t in s.call('tabs_context').data['tabs']]")
        assert len(tabs_before) == 2
        wait = {
            "line": '%oc wait_for --text "never there" --timeout_ms 120000',
            "cell": '%%oc\nwait_for --text "never there" --timeout_ms 120000\nnavigate about:blank',
            "api": 's.wait_for(text="never there", timeout_ms=120000)',
        }[face]
        if face != "cell":  # a first output tells the cell is running (%%oc shows its progress bar)
            wait = "print('started', flush=True)\n" + wait
        msg_id = kc.execute(wait)
        while True:
            msg = kc.get_iopub_msg(timeout=60)
            started = msg["msg_type"] in ("stream", "display_data", "update_display_data")
            if msg["parent_header"].get("msg_id") == msg_id and started:
                break
        time.sleep(2)  # the wait is running on the browser thread by now
        t0 = time.monotonic()
        km.interrupt_kernel()
        error = None
        while True:
            msg = kc.get_iopub_msg(timeout=30)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "error":
                error = msg["content"]
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
        assert time.monotonic() - t0 < 60  # the cell stopped, long before the 120 s time-out
        assert error is not None
        assert error["ename"] == "Interrupted"
        assert len(error["traceback"]) == 1  # one line, no traceback
        assert error["traceback"][0].startswith("interrupted: wait_for cancelled after ")

        # the next call finds the same browser: the same page, tabs and typed value
        assert _value(kc, "[t['tab_id'] for t in s.call('tabs_context').data['tabs']]") == tabs_before
        typed = _value(
            kc,
            "s.call('javascript_tool', expression=\"document.querySelector('#full-name').value\").data",
        )
        assert "Ada Lovelace" in json.dumps(typed)
        url = _value(kc, "s.call('tabs_context').data['tabs'][0]['url']")
        assert url.endswith("/form.html")
        journal = _value(kc, "[(e['tool'], e['error_code']) for e in s.journal_df().fillna('').to_dict('records')]")
        assert [entry for entry in journal if entry[0] == "wait_for"] == [["wait_for", "CANCELLED"]]
        assert not any(code == "BROWSER_CRASHED" for _, code in journal)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
