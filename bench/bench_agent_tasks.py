"""Tasks finished on MiniWoB++ over MCP: ocnb vs Playwright MCP, the same scripted agent on both.

MiniWoB++ is an external benchmark (the ``miniwob`` package on PyPI ships its task pages; installed as
a dependency of the ``bench`` extra, never vendored here). Its pages are served on loopback and each
episode is run as MiniWoB's own environment runs it: ``Math.seedrandom(seed)``,
``core.startEpisodeReal()``, the instruction from ``core.getUtterance()``, the reward from
``WOB_DONE_GLOBAL`` / ``WOB_RAW_REWARD_GLOBAL`` — evaluated by the *harness* through the server's own
evaluate tool (``javascript_tool`` / ``browser_evaluate``), whose results the solver never sees and
which are not counted. The only change to the task pages is a longer episode time limit (60 s instead of
MiniWoB's 10 s, the same for both servers: a tool-calling agent's rhythm is not what the 10 s were
made for; the reward is read raw, without the time discount).

The solvers (``bench/agent_solvers.py``, one per task type) read only what the tools returned — the
page outline, parsed by ``bench/agent_outline.py`` — find their targets by role, name and text and act
by ref through a six-call adapter (snapshot, read one element, click, type, select, press) that each
server implements with its own tools and ref syntax (Playwright MCP has no element-scoped read: its
snapshot stands in). The same decision logic runs on both; a solver gives up when the
outline does not show what it needs. Playwright MCP's dialogs are accepted as they open (its later
snapshots fail until then); those ``browser_handle_dialog`` calls are not counted. ocnb, in its default
configuration, asks the person (MCP elicitation) before a click on Buy, Send, Delete…; the harness
answers yes as the person whose task it is (the client declares elicitation, as Claude Desktop does).
The asks are counted per episode (``approvals``); their text goes to the person, not to the model, and is
not counted in tokens.

Figures, in one run: episodes won per task type and server; tokens (cl100k) per episode of the
solver's tool results — each counted over the whole ``CallToolResult`` JSON the client receives
(content, ``isError``, …), and by tool — and with the server's ``tools/list`` (as the client receives
it) counted once per episode, as an agent pays it; the ratios ocnb / Playwright MCP. ``--before PATH``
runs a third server, ocnb from another source tree, on the same episodes.

Run: ``.venv/bin/python bench/bench_agent_tasks.py [--tasks a,b] [--seeds 5] [--only ocnb|pwmcp] [--before PATH]``.
Writes ``bench/results/agent_tasks.json`` and ``bench/results/agent_tasks.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from agent_solvers import SOLVERS, Agent, GaveUp  # noqa: E402
from common import PW_MCP_VERSION, RESULTS, playwright_mcp_params, save  # noqa: E402

from ocnb.audit.fence import unfence  # noqa: E402
from ocnb.tokens import count_text, count_tools  # noqa: E402

EPISODE_MS = 60_000
#: Another ocnb source tree run beside this one (``--before``): a change measured against what it replaced.
BEFORE = ROOT
SOLVER_S = 75

#: The task types of issue 31 §7.
TASKS = (
    "button-delay buy-ticket choose-date choose-date-easy choose-date-medium click-checkboxes-large "
    "click-checkboxes-soft click-checkboxes-transfer click-collapsible-2 click-menu-2 click-tab-2-easy "
    "click-tab-2-medium click-tab-2-hard click-test click-test-2 click-widget copy-paste copy-paste-2 "
    "daily-calendar email-inbox-delete email-inbox-forward email-inbox-important email-inbox-reply "
    "email-inbox-star-reply email-inbox-noscroll enter-text-dynamic find-word focus-text-2 form-sequence-2 "
    "form-sequence-3 multi-layouts multi-orderings number-checkboxes order-food phone-book read-table-2 "
    "scroll-text scroll-text-2 sign-agreement social-media-all social-media-some stock-market terminal "
    "text-editor text-transform use-autocomplete-nodelay use-slider-2 unicode-test"
).split()

START = (
    "() => {{ Math.seedrandom({seed}); core.setDataMode('train'); core.EPISODE_MAX_TIME = {ms}; "
    "core.startEpisodeReal(); var u = core.getUtterance(); "
    "return JSON.stringify({{ready: WOB_TASK_READY, utterance: typeof u === 'string' ? u : u.utterance}}); }}"
)
SCORE = "() => JSON.stringify({done: WOB_DONE_GLOBAL, raw: WOB_RAW_REWARD_GLOBAL, reason: String(WOB_REWARD_REASON)})"
READY = "() => JSON.stringify({ready: WOB_TASK_READY})"


def serve_miniwob() -> tuple[ThreadingHTTPServer, str]:
    """The ``miniwob`` package's task pages on a loopback port."""
    import miniwob

    html = Path(miniwob.__file__).resolve().parent / "html"

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(html)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}/miniwob/"


def wire(result: Any) -> str:
    """The whole ``CallToolResult`` as the client received it (content, isError, …), compact JSON."""
    return json.dumps(result.model_dump(by_alias=True, mode="json", exclude_none=True), ensure_ascii=False)


def text_of(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


class Server:
    """One MCP server: the solver's six calls (counted) and the harness's own (not counted)."""

    kind = ""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.tokens = 0
        self.calls = 0
        self.log: list[str] = []
        self.approvals: list[str] = []  # what ocnb asked the person (MCP elicitation)
        self.tool_names: list[str] = []  # the server's tools/list
        self.per_tool: dict[str, list[int]] = {}  # tokens of each counted result, by tool (and action)

    async def _call(self, name: str, args: dict[str, Any], *, counted: bool = True) -> str:
        result = await self.client.call_tool(name, args)
        text = text_of(result)
        if counted:
            tokens = count_text(wire(result))
            self.tokens += tokens
            self.calls += 1
            kind = f"{name} {args.get('action', 'click')}" if name == "interact" else name
            self.per_tool.setdefault(kind, []).append(tokens)
            self.log.append(f"{name} {json.dumps(args)[:120]} -> {text!r}")
        return text

    # the harness's calls
    async def navigate(self, url: str) -> None:
        raise NotImplementedError

    async def evaluate(self, js: str) -> Any:
        raise NotImplementedError


class Ocnb(Server):
    kind = "ocnb"

    async def navigate(self, url: str) -> None:
        await self._call("navigate", {"url": url}, counted=False)

    async def evaluate(self, js: str) -> Any:
        result = await self.client.call_tool("javascript_tool", {"expression": js})  # the harness's: not counted
        envelope = unfence([getattr(c, "text", "") for c in result.content])
        if not envelope.get("ok"):
            raise RuntimeError(f"javascript_tool: {envelope}")
        return json.loads(envelope["data"]["result"])

    async def snapshot(self) -> str:
        return await self._call("read_page", {})

    async def read(self, ref: str) -> str:
        return await self._call("read_page", {"ref_id": ref})

    async def click(self, ref: str, label: str) -> str:
        return await self._call("interact", {"ref": ref})

    async def type(self, ref: str, label: str, text: str) -> str:
        return await self._call("interact", {"ref": ref, "action": "fill", "value": text})

    async def select(self, ref: str, label: str, value: str) -> str:
        return await self._call("interact", {"ref": ref, "action": "select", "value": value})

    async def press(self, key: str) -> str:
        return await self._call("interact", {"action": "press", "key": key})

    async def scroll(self, ref: str, label: str, to: str) -> str | None:
        """Not in the default list: asked for through discover_capabilities (counted), then called."""
        found = await self._call(
            "discover_capabilities", {"query": "scroll an element with the mouse wheel", "kind": "tool", "top_k": 3}
        )
        if '"scroll"' not in found:
            return None
        return await self._call("scroll", {"ref": ref, "to": to})


class PlaywrightMcp(Server):
    kind = "pwmcp"

    async def _call(self, name: str, args: dict[str, Any], *, counted: bool = True) -> str:
        text = await super()._call(name, args, counted=counted)
        for _ in range(5):  # a dialog turns every later snapshot into an error until it is answered
            if "browser_handle_dialog" not in text or name == "browser_handle_dialog":
                break
            text = text_of(await self.client.call_tool("browser_handle_dialog", {"accept": True}))
        return text

    async def navigate(self, url: str) -> None:
        await self._call("browser_navigate", {"url": url}, counted=False)

    async def evaluate(self, js: str) -> Any:
        text = await self._call("browser_evaluate", {"function": js}, counted=False)
        if "### Result" not in text:
            raise RuntimeError(f"browser_evaluate: {text[:300]}")
        value = text.split("### Result", 1)[1].strip().split("\n", 1)[0]
        return json.loads(json.loads(value))

    async def snapshot(self) -> str:
        return await self._call("browser_snapshot", {})

    async def read(self, ref: str) -> str:  # no element-scoped read: the page's snapshot
        return await self._call("browser_snapshot", {})

    async def click(self, ref: str, label: str) -> str:
        return await self._call("browser_click", {"element": label, "target": ref})

    async def type(self, ref: str, label: str, text: str) -> str:
        return await self._call("browser_type", {"element": label, "target": ref, "text": text})

    async def select(self, ref: str, label: str, value: str) -> str:
        return await self._call("browser_select_option", {"element": label, "target": ref, "values": [value]})

    async def press(self, key: str) -> str:
        return await self._call("browser_press_key", {"key": key})

    async def scroll(self, ref: str, label: str, to: str) -> str | None:
        """Its default tools, as listed: a wheel tool (the pointer first moved over the element), else none."""
        if "browser_mouse_wheel" not in self.tool_names:
            return None
        await self._call("browser_hover", {"element": label, "target": ref})
        text = ""
        for _ in range(10):
            text = await self._call("browser_mouse_wheel", {"deltaX": 0, "deltaY": 600 if to == "bottom" else -600})
        return text


def server_params(kind: str, home: str) -> Any:
    from mcp.client.stdio import StdioServerParameters

    if kind in ("ocnb", "before"):  # the default configuration a new user gets: `ocnb mcp`
        root = BEFORE if kind == "before" else ROOT
        env = {**os.environ, "OCNB_HOME": home, "PYTHONPATH": str(root)}
        return StdioServerParameters(command=sys.executable, args=["-m", "ocnb.mcp.cli"], env=env, cwd=home)
    return playwright_mcp_params("--image-responses", "omit", cwd=home)


async def episode(server: Server, task: str, seed: int) -> dict[str, Any]:
    start = await server.evaluate(START.format(seed=json.dumps(str(seed)), ms=EPISODE_MS))
    for _ in range(40):
        if start.get("ready", True):
            break
        await asyncio.sleep(0.1)
        start = {**start, **await server.evaluate(READY)}
    server.tokens, server.calls, server.log = 0, 0, []
    asked = len(server.approvals)
    agent = Agent(server)  # type: ignore[arg-type]
    gave_up = None
    t0 = time.perf_counter()
    try:
        await asyncio.wait_for(SOLVERS[task](agent, start["utterance"]), SOLVER_S)
    except GaveUp as exc:
        gave_up = str(exc)
    except Exception as exc:  # noqa: BLE001 - a solver crash is a lost episode, with its reason
        gave_up = f"{type(exc).__name__}: {exc}"[:200]
    seconds = time.perf_counter() - t0
    score: dict[str, Any] = {}
    for _ in range(20):
        score = await server.evaluate(SCORE)
        if score["done"]:
            break
        await asyncio.sleep(0.1)
    won = bool(score["done"]) and float(score["raw"]) > 0
    row = {
        "server": server.kind,
        "task": task,
        "seed": seed,
        "won": won,
        "reward": float(score["raw"]) if score["done"] else None,
        "reason": gave_up
        or (None if won else f"reward {score['raw']} ({score['reason']})" if score["done"] else "not done"),
        "calls": server.calls,
        "approvals": len(server.approvals) - asked,
        "tokens": server.tokens,
        "seconds": round(seconds, 2),
    }
    if not won and os.environ.get("BENCH_AGENT_LOG"):
        with open(os.environ["BENCH_AGENT_LOG"], "a") as f:
            f.write(f"== {server.kind} {task} seed {seed}: {row['reason']}\n" + "\n".join(server.log) + "\n")
    return row


async def run_server(kind: str, tasks: list[str], seeds: int, base: str) -> dict[str, Any]:
    from mcp import Client

    with tempfile.TemporaryDirectory() as home:
        approvals: list[str] = []

        async def approve(context: Any, params: Any) -> Any:
            """The person whose task it is says yes (ocnb asks before Buy, Send, Delete: its default)."""
            from mcp import types

            approvals.append(params.message)
            return types.ElicitResult(action="accept", content={"approve": True})

        async with Client(
            server_params(kind, home), mode="legacy", read_timeout_seconds=120, elicitation_callback=approve
        ) as client:
            tools = (await client.list_tools()).tools
            listed = [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in tools]
            server: Server = PlaywrightMcp(client) if kind == "pwmcp" else Ocnb(client)
            server.kind = kind
            server.approvals = approvals
            server.tool_names = [t.name for t in tools]
            rows = []
            for task in tasks:
                await server.navigate(base + task + ".html")
                for seed in range(seeds):
                    row = await episode(server, task, seed)
                    rows.append(row)
                    mark = "won " if row["won"] else "lost"
                    print(
                        f"  {kind:5} {task:28} seed {seed} {mark} {row['tokens']:5d} tok  {row['reason'] or ''}"[:200],
                        flush=True,
                    )
            per_tool = {
                k: {"calls": len(v), "median": statistics.median(v), "mean": round(statistics.mean(v), 1)}
                for k, v in server.per_tool.items()
            }
            return {
                "tools": len(listed),
                "tools_list_tokens": count_tools(listed),
                "episodes": rows,
                "per_tool": per_tool,
            }


def summarize(runs: dict[str, dict[str, Any]], tasks: list[str]) -> dict[str, Any]:
    per_task: dict[str, dict[str, Any]] = {}
    for task in tasks:
        entry: dict[str, Any] = {}
        for kind, run in runs.items():
            eps = [e for e in run["episodes"] if e["task"] == task]
            reasons = sorted({e["reason"] for e in eps if e["reason"]})
            entry[kind] = {
                "won": sum(e["won"] for e in eps),
                "episodes": len(eps),
                "tokens_per_episode": round(sum(e["tokens"] for e in eps) / max(len(eps), 1), 1),
                "reasons": reasons[:3],
            }
        per_task[task] = entry
    totals: dict[str, Any] = {}
    for kind, run in runs.items():
        eps = run["episodes"]
        results = sum(e["tokens"] for e in eps) / max(len(eps), 1)
        totals[kind] = {
            "won": sum(e["won"] for e in eps),
            "episodes": len(eps),
            "success": round(sum(e["won"] for e in eps) / max(len(eps), 1), 3),
            "tools": run["tools"],
            "tools_list_tokens": run["tools_list_tokens"],
            "approvals": sum(e.get("approvals", 0) for e in eps),
            "result_tokens_per_episode": round(results, 1),
            "tokens_per_episode_with_tools_list": round(results + run["tools_list_tokens"], 1),
        }
    for kind, run in runs.items():
        if "per_tool" in run:
            totals[kind]["per_tool"] = run["per_tool"]
    if {"ocnb", "pwmcp"} <= set(totals):
        oc, pw = totals["ocnb"], totals["pwmcp"]
        totals["ratio_result_tokens"] = round(
            oc["result_tokens_per_episode"] / max(pw["result_tokens_per_episode"], 1), 3
        )
        totals["ratio_tokens_with_tools_list"] = round(
            oc["tokens_per_episode_with_tools_list"] / max(pw["tokens_per_episode_with_tools_list"], 1), 3
        )
        # Giving up early is cheap: the fairer token figure pairs the episodes both servers won.
        won = {(e["task"], e["seed"]): e for e in runs["ocnb"]["episodes"] if e["won"]}
        pairs = [
            (won[(e["task"], e["seed"])], e)
            for e in runs["pwmcp"]["episodes"]
            if e["won"] and (e["task"], e["seed"]) in won
        ]
        if pairs and "before" in runs:  # the same episodes, ocnb before the change
            before = {(e["task"], e["seed"]): e for e in runs["before"]["episodes"] if e["won"]}
            trio = [
                (won[(b["task"], b["seed"])], b, before[(b["task"], b["seed"])])
                for _, b in pairs
                if (b["task"], b["seed"]) in before
            ]
            if trio:
                totals["all_three_won"] = len(trio)
                totals["all_three_won_result_tokens_per_episode"] = {
                    k: round(sum(t[i]["tokens"] for t in trio) / len(trio), 1)
                    for i, k in enumerate(("ocnb", "pwmcp", "before"))
                }
        if pairs:
            oc_t = sum(a["tokens"] for a, _ in pairs) / len(pairs)
            pw_t = sum(b["tokens"] for _, b in pairs) / len(pairs)
            totals["episodes_both_won"] = len(pairs)
            totals["both_won_result_tokens_per_episode"] = {"ocnb": round(oc_t, 1), "pwmcp": round(pw_t, 1)}
            totals["both_won_ratio_result_tokens"] = round(oc_t / max(pw_t, 1), 3)
            totals["both_won_ratio_tokens_with_tools_list"] = round(
                (oc_t + oc["tools_list_tokens"]) / max(pw_t + pw["tools_list_tokens"], 1), 3
            )
        totals["task_types_ocnb_behind"] = [t for t, e in per_task.items() if e["ocnb"]["won"] < e["pwmcp"]["won"]]
    return {"per_task": per_task, "totals": totals}


def markdown(summary: dict[str, Any], seeds: int) -> str:
    kinds = [k for k in ("ocnb", "pwmcp") if k in summary["totals"]]
    names = {"ocnb": "ocnb", "pwmcp": f"Playwright MCP {PW_MCP_VERSION}"}
    lines = [
        f"# MiniWoB++ over MCP: episodes won ({seeds} seeds per task type)",
        "",
        "| task type | " + " | ".join(f"{names[k]} won | {names[k]} tokens/ep" for k in kinds) + " |",
        "| --- | " + " | ".join("---: | ---:" for _ in kinds) + " |",
    ]
    for task, e in summary["per_task"].items():
        cells = " | ".join(f"{e[k]['won']}/{e[k]['episodes']} | {e[k]['tokens_per_episode']:.0f}" for k in kinds)
        lines.append(f"| {task} | {cells} |")
    t = summary["totals"]
    lines += ["", "| | " + " | ".join(names[k] for k in kinds) + (" | ratio |" if len(kinds) == 2 else " |")]
    lines.append("| --- | " + " | ".join("---:" for _ in kinds) + (" | ---: |" if len(kinds) == 2 else " |"))

    def row(label: str, key: str, ratio: str | None = None) -> None:
        vals = " | ".join(str(t[k][key]) for k in kinds)
        tail = f" | {t[ratio]} |" if ratio and ratio in t else (" | |" if len(kinds) == 2 else " |")
        lines.append(f"| {label} | {vals}{tail}")

    row("episodes won", "won")
    row("success", "success")
    row("tools listed by default", "tools")
    row("tools/list tokens", "tools_list_tokens")
    if any(t[k].get("approvals") for k in kinds):
        row("approvals asked of the person (MCP elicitation; not in tokens)", "approvals")
    row("result tokens per episode", "result_tokens_per_episode", "ratio_result_tokens")
    row(
        "tokens per episode, tools/list once + results",
        "tokens_per_episode_with_tools_list",
        "ratio_tokens_with_tools_list",
    )
    if "episodes_both_won" in t:
        both, n = t["both_won_result_tokens_per_episode"], t["episodes_both_won"]
        lines.append(
            f"| the {n} episodes both won: result tokens per episode | {both['ocnb']} | {both['pwmcp']} | "
            f"{t['both_won_ratio_result_tokens']} |"
        )
        lines.append(
            f"| the {n} episodes both won: tools/list once + results | "
            f"{round(both['ocnb'] + t['ocnb']['tools_list_tokens'], 1)} | "
            f"{round(both['pwmcp'] + t['pwmcp']['tools_list_tokens'], 1)} | {t['both_won_ratio_tokens_with_tools_list']} |"
        )
    if "all_three_won" in t:
        trio = t["all_three_won_result_tokens_per_episode"]
        lines.append(
            f"| the {t['all_three_won']} episodes ocnb, Playwright MCP and ocnb before (`--before`) won: "
            f"result tokens per episode | {trio['ocnb']} | {trio['pwmcp']} | {round(trio['ocnb'] / trio['pwmcp'], 3)} "
            f"(before: {trio['before']}, {round(trio['before'] / trio['pwmcp'], 3)}) |"
        )
    per_tool = {k: t[k].get("per_tool", {}) for k in ("before", *kinds) if k in t}
    if per_tool:
        lines += [
            "",
            "| result (median tokens, whole CallToolResult JSON) | calls | median | mean |",
            "| --- | ---: | ---: | ---: |",
        ]
        for kind, tools in per_tool.items():
            for name, fig in sorted(tools.items()):
                lines.append(
                    f"| {names.get(kind, 'ocnb before')}: {name} | {fig['calls']} | {fig['median']} | {fig['mean']} |"
                )
    return "\n".join(lines) + "\n"


async def run(tasks: list[str], seeds: int, only: str | None) -> dict[str, dict[str, Any]]:
    server, base = serve_miniwob()
    kinds = [only] if only else ["ocnb", "pwmcp"]
    if BEFORE != ROOT:
        kinds.insert(0, "before")
    try:
        results = await asyncio.gather(*(run_server(k, tasks, seeds, base) for k in kinds))
    finally:
        server.shutdown()
    return dict(zip(kinds, results, strict=True))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", help="comma-separated task types (default: all of issue 31)")
    parser.add_argument("--seeds", type=int, default=5, help="episodes per task type and server (default 5)")
    parser.add_argument("--only", choices=("ocnb", "pwmcp"), help="run one server only")
    parser.add_argument("--out", default="agent_tasks", help="results name under bench/results (default agent_tasks)")
    parser.add_argument("--resummarize", action="store_true", help="rewrite the summary and table of a saved run")
    parser.add_argument("--before", type=Path, help="another ocnb source tree, run beside this one as 'before'")
    opts = parser.parse_args(argv)
    if opts.before:
        global BEFORE
        BEFORE = opts.before.resolve()
    if opts.resummarize:
        return resummarize(opts.out)
    tasks = opts.tasks.split(",") if opts.tasks else list(TASKS)
    unknown = [t for t in tasks if t not in TASKS]
    if unknown:
        parser.error(f"unknown task types: {', '.join(unknown)}")
    missing = [t for t in tasks if t not in SOLVERS]
    if missing:
        print(f"no solver yet (reported as lost): {', '.join(missing)}", file=sys.stderr)
        for t in missing:
            SOLVERS[t] = _no_solver
    t0 = time.perf_counter()
    runs = asyncio.run(run(tasks, opts.seeds, opts.only))
    summary = summarize(runs, tasks)
    summary["no_solver"] = missing
    summary["seeds"] = opts.seeds
    summary["minutes"] = round((time.perf_counter() - t0) / 60, 1)
    summary["playwright_mcp_version"] = PW_MCP_VERSION
    summary["episode_time_limit_ms"] = EPISODE_MS
    with contextlib.suppress(Exception):
        from importlib.metadata import version

        summary["miniwob_version"] = version("miniwob")
    md = markdown(summary, opts.seeds)
    print(md)
    path = save(opts.out, {**summary, "episodes": {k: r["episodes"] for k, r in runs.items()}})
    (RESULTS / f"{opts.out}.md").write_text(md)
    print(f"wrote {path.relative_to(ROOT)} and bench/results/{opts.out}.md")
    return 0


def resummarize(name: str) -> int:
    """Recompute the summary and the Markdown table of ``bench/results/<name>.json`` from its episodes."""
    path = RESULTS / f"{name}.json"
    saved = json.loads(path.read_text())
    runs = {
        k: {
            "episodes": eps,
            "tools": saved["totals"][k]["tools"],
            "tools_list_tokens": saved["totals"][k]["tools_list_tokens"],
            "per_tool": saved["totals"][k].get("per_tool", {}),
        }
        for k, eps in saved["episodes"].items()
    }
    saved.update(summarize(runs, list(saved["per_task"])))
    path.write_text(json.dumps(saved, indent=2, sort_keys=True) + "\n")
    md = markdown(saved, saved["seeds"])
    (RESULTS / f"{name}.md").write_text(md)
    print(md)
    return 0


async def _no_solver(agent: Agent, utterance: str) -> None:
    raise GaveUp("no solver written for this task type")


if __name__ == "__main__":
    sys.exit(main())
