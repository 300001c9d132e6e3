"""Where the time of one ``javascript_tool`` call goes, step by step (issue 35's per-call overhead).

CPU time, not wall time (a shared machine's load does not move it much): on the browser thread
(``time.thread_time``) for the steps, of the whole process (``time.process_time``) for a call made
from the caller's thread. Medians over ``--n`` calls of the same call (``expression="1 + 1"`` on the
demo form): each before- and after-hook of the session's pipeline (each wrapped in a timer for this
run only), the argument checks dispatch makes, the handler, Playwright's ``page.evaluate`` alone,
the handler under its timeout and the dialog guard, the whole ``dispatch_async`` with and without
the audit trail (``record=False``), the checks dispatch makes before a replay step's handler (the
nested arguments of the internal ``replay_step``: strict copy, schema, copy, secrets), and, from the caller's thread, ``Session.call`` and the hop to the
browser thread and back (``Session.run`` of a coroutine that does nothing); and the event loop's
turns per call (counted, not timed). Written to ``bench/results/call_profile.json``.

    python -m bench.profile_call [--n 300]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import os
import statistics
import tempfile
import time
from collections import defaultdict
from typing import Any

import ocnb
from ocnb.calls import CallContext
from ocnb.commands.demosite import serve
from ocnb.dispatch import ToolContext, _copy_args, _run_handler, dispatch_async, schema_errors
from ocnb.jsonsafe import check_args
from ocnb.registry import internal_tooldef

from .common import save

ARGS = {"expression": "1 + 1"}
#: A replay step's call as ``oc_skill_replay`` dispatches it (a recorded fill on the demo form).
STEP_ARGS = {
    "step": {
        "kind": "fill",
        "args": {"query": "Full name", "action": "fill", "value": "Ada"},
        "selectors": [
            {"type": "role_name", "role": "textbox", "name": "Full name"},
            {"type": "css", "value": "#full-name"},
            {"type": "xpath", "value": "//*[@id='full-name']"},
            {"type": "text", "value": "Full name"},
        ],
        "fingerprint": {"role": "textbox", "name": "Full name", "tag": "input", "type": "text", "count": 1},
        "target": {"role": "textbox", "name": "Full name"},
    },
    "timeout_ms": 5000,
    "tolerate": ["name"],
    "tab_id": "t1",
}


def _timed(name: str, hook: Any, spans: dict[str, list[float]]) -> Any:
    async def run(*params: Any) -> Any:
        t0 = time.thread_time()
        value = hook(*params)
        if asyncio.iscoroutine(value) or isinstance(value, asyncio.Future):
            value = await value
        spans[name].append(time.thread_time() - t0)
        return value

    return run


def _ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 4)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=300)
    n = parser.parse_args(argv).n
    os.environ.setdefault("OCNB_HOME", tempfile.mkdtemp(prefix="ocnb-bench-"))
    figures: dict[str, Any] = {}
    with serve() as site, ocnb.Session(headless=True) as s:
        s.start()
        s.call("navigate", url=site.page("form.html"))
        for _ in range(20):
            s.call("javascript_tool", ARGS)
        spans: dict[str, list[float]] = defaultdict(list)

        def caller_side() -> None:
            for _ in range(n):
                t0 = time.process_time()
                s.call("javascript_tool", ARGS)
                spans["Session.call (process CPU)"].append(time.process_time() - t0)

                async def nothing() -> None:
                    return None

                t0 = time.process_time()
                s.run(nothing())
                spans["thread hop (Session.run of nothing, process CPU)"].append(time.process_time() - t0)

        async def loop_side() -> None:
            page = await s.browser_state().page(None)
            tooldef = s.registry.get("javascript_tool")
            step_tool = internal_tooldef("replay_step")
            assert tooldef is not None and step_tool is not None
            for _ in range(n):
                t0 = time.thread_time()
                await page.evaluate("1 + 1")
                spans["page.evaluate (raw, browser thread)"].append(time.thread_time() - t0)
                t0 = time.thread_time()
                await dispatch_async(s, "javascript_tool", dict(ARGS))
                spans["dispatch_async (whole call)"].append(time.thread_time() - t0)
                t0 = time.thread_time()
                given, _ = check_args(dict(ARGS))
                spans["check_args"].append(time.thread_time() - t0)
                t0 = time.thread_time()
                schema_errors(tooldef, given)
                spans["schema_errors"].append(time.thread_time() - t0)
                t0 = time.thread_time()
                copy.deepcopy(given)
                spans["copy.deepcopy of args"].append(time.thread_time() - t0)
                call = CallContext(session=s, name="javascript_tool", args=given, source="api", seq=0, record=False)
                t0 = time.thread_time()
                await tooldef.handler(ToolContext(s, call), dict(ARGS))
                spans["handler alone"].append(time.thread_time() - t0)
                call = CallContext(session=s, name="javascript_tool", args=given, source="api", seq=0, record=False)
                call.tooldef, call.exec_args = tooldef, dict(ARGS)
                t0 = time.thread_time()
                await _run_handler(s, tooldef, call)
                spans["handler under its timeout and the dialog guard (_run_handler)"].append(time.thread_time() - t0)
                t0 = time.thread_time()
                await dispatch_async(s, "javascript_tool", dict(ARGS), record=False)
                spans["dispatch_async, record=False (no journal line, no trace events)"].append(time.thread_time() - t0)
                t0 = time.thread_time()
                given, _ = check_args(STEP_ARGS)
                schema_errors(step_tool, given)
                s.secrets.substitute(_copy_args(given))
                spans["replay_step arguments: check_args + schema_errors + copy + secrets (per step)"].append(
                    time.thread_time() - t0
                )

        caller_side()
        s.run(loop_side())
        # The browser loop's turns per call: each turn is an epoll wait, where a loaded machine
        # takes the CPU away. asyncio's private _run_once, patched for this count only.
        loop: Any = s.runtime.loop
        turns = [0]
        run_once = loop._run_once

        def counted() -> None:
            turns[0] += 1
            run_once()

        loop._run_once = counted
        try:
            for _ in range(n):
                s.call("javascript_tool", ARGS)
        finally:
            del loop._run_once
        figures["loop turns per call (count)"] = round(turns[0] / n, 2)
        hooked: dict[str, list[float]] = defaultdict(list)
        before, after = list(s.pipeline.before), list(s.pipeline.after)
        s.pipeline.before[:] = [_timed(f"before: {h.__qualname__}", h, hooked) for h in before]
        s.pipeline.after[:] = [_timed(f"after: {h.__qualname__}", h, hooked) for h in after]
        try:
            for _ in range(n):
                s.call("javascript_tool", ARGS)
        finally:
            s.pipeline.before[:], s.pipeline.after[:] = before, after
    for name, values in [*spans.items(), *hooked.items()]:
        figures[name] = _ms(values)
    width = max(len(k) for k in figures)
    for name, value in figures.items():
        print(f"{name:<{width}}  {value:8.4f}{'' if '(count)' in name else ' ms'}")
    save("call_profile", {"n": n, "median_cpu_ms": figures})
    return figures


if __name__ == "__main__":
    main()
