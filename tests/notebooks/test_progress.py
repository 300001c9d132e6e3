"""A long call shows its progress in the cell, replaced by one line when it ends; a quick call and a
call outside a notebook show nothing. In a real kernel, through ``jupyter_client``, for ``%oc``,
``%%oc`` and the Python API."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import ocnb
from ocnb.commands.demosite import DemoSite
from ocnb.widgets.progress import CellProgress, describe

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def kernel(site: DemoSite, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real kernel with ``%load_ext ocnb.magics``, a headless browser on the demo site's form."""
    from jupyter_client.manager import start_new_kernel

    mp = pytest.MonkeyPatch()
    mp.setenv("OCNB_HOME", str(tmp_path_factory.mktemp("ocnb-home")))
    km, kc = start_new_kernel(kernel_name="python3")
    mp.undo()
    try:
        ready = _execute(
            kc,
            "import ocnb\n%load_ext ocnb.magics\n%config OcMagics.headless = True\n"
            f"%oc navigate {site.url}form.html\ns = ocnb.session()\n",
        )
        assert ready["status"] == "ok", ready
        yield kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _execute(kc: Any, code: str, timeout: float = 120) -> dict[str, Any]:
    """Run ``code``; its reply status, its stream text, and its outputs as the saved notebook holds
    them (``update_display_data`` replaces the output of the same display id) plus every progress
    text seen while it ran."""
    outputs: list[dict[str, Any]] = []
    seen: list[str] = []
    stream: list[str] = []

    def hook(msg: dict[str, Any]) -> None:
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            stream.append(content["text"])
        elif kind in ("display_data", "execute_result"):
            outputs.append({"id": content.get("transient", {}).get("display_id"), "data": content["data"]})
        elif kind == "update_display_data":
            for out in outputs:
                if out["id"] == content["transient"]["display_id"]:
                    out["data"] = content["data"]
        if kind in ("display_data", "update_display_data") and "ocnb-progress" in content["data"].get("text/html", ""):
            seen.append(content["data"]["text/plain"])

    reply = kc.execute_interactive(code, timeout=timeout, output_hook=hook)
    progress = [o["data"]["text/plain"] for o in outputs if "ocnb-progress" in o["data"].get("text/html", "")]
    return {"status": reply["content"]["status"], "stream": "".join(stream), "progress": progress, "seen": seen}


@pytest.mark.parametrize(
    "face, code",
    [
        ("line", "%oc navigate {slow}"),
        ("cell", "%%oc\nnavigate {slow}\nread_page"),
        ("api", "s.navigate(url='{slow}').ok"),
    ],
)
def test_a_long_call_shows_progress_then_one_line(kernel: Any, site: DemoSite, face: str, code: str) -> None:
    slow = f"{site.url}slow?ms=3000"
    res = _execute(kernel, code.format(slow=slow))
    assert res["status"] == "ok", res
    # while it ran: what it waits for and the seconds so far, updated in place
    running = [text for text in res["seen"] if text.startswith("⏳")]
    assert running, res
    assert all(f"navigate url='{slow}'" in text for text in running)
    assert len({text.rsplit(":", 1)[1] for text in running}) >= 2  # the seconds moved on
    # what the saved notebook keeps: one line, no bar
    assert len(res["progress"]) == 1, res
    final = res["progress"][0]
    assert final.startswith("navigate url=") and ": done after " in final, final
    assert 2.5 <= float(final.rsplit("after ", 1)[1].removesuffix(" s")) < 60


def test_a_failed_long_wait_ends_as_failed_and_a_quick_call_shows_nothing(kernel: Any) -> None:
    res = _execute(kernel, '%oc wait_for --text "never there" --timeout_ms 2000')
    assert res["status"] == "error"  # the magic reports the TIMEOUT as before
    assert len(res["progress"]) == 1, res
    assert res["progress"][0].startswith("wait_for text='never there' timeout_ms=2000: failed after ")

    quick = _execute(kernel, "%oc read_page")
    assert quick["status"] == "ok"
    assert quick["seen"] == [] and quick["progress"] == []


def test_outside_a_notebook_a_long_call_prints_nothing(
    session: ocnb.Session, site: DemoSite, capfd: pytest.CaptureFixture[str]
) -> None:
    assert session.navigate(url=f"{site.url}slow?ms=1500").ok
    out, err = capfd.readouterr()
    assert "navigate" not in out + err and "⏳" not in out + err


def test_the_line_says_what_is_waited_for_and_never_a_typed_value() -> None:
    assert describe("wait_for", {"text": "Saved", "timeout_ms": 30000}) == "wait_for text='Saved' timeout_ms=30000"
    assert describe("interact", {"action": "fill", "query": "Password", "value": "hunter2"}) == (
        "interact query='Password'"
    )
    long = describe("navigate", {"url": "https://example.com/" + "a" * 100})
    assert len(long) < 70 and long.endswith("…'")


class _Handle:
    def __init__(self, shown: list[dict[str, str]]) -> None:
        self.shown = shown

    def update(self, bundle: dict[str, str], raw: bool = False) -> None:
        self.shown[-1] = bundle


def test_a_call_quicker_than_a_second_shows_nothing_a_longer_one_is_replaced_by_one_line() -> None:
    shown: list[dict[str, str]] = []

    def show(bundle: dict[str, str]) -> _Handle:
        shown.append(bundle)
        return _Handle(shown)

    quick = CellProgress("read_page", {}, show=show)
    for t in (0.25, 0.5, 0.75):
        quick.tick(t)
    quick.end(True)
    assert shown == [] and not quick.shown

    slow = CellProgress("wait_for", {"text": "Saved"}, show=show)
    slow.tick(1.0)
    assert shown[-1]["text/plain"] == "⏳ wait_for text='Saved': 1.0 s"
    slow.tick(1.25)  # less than half a second later: not redrawn
    assert shown[-1]["text/plain"] == "⏳ wait_for text='Saved': 1.0 s"
    slow.tick(1.5)
    assert shown[-1]["text/plain"] == "⏳ wait_for text='Saved': 1.5 s"
    slow.end(None)
    assert len(shown) == 1
    assert shown[0]["text/plain"].startswith("wait_for text='Saved': interrupted after ")
    assert "<progress" not in shown[0]["text/html"]


def test_import_ocnb_sets_the_cell_progress_and_outside_a_kernel_it_shows_nothing() -> None:
    """The seam: ``import ocnb`` sets the progress factory; dispatch only calls it."""
    assert ocnb.display.options.progress is not None
    assert ocnb.display.options.progress("wait_for", {}) is None  # not in a kernel: nothing
