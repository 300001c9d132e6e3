"""What one acting call costs an agent: tokens of the result an MCP client gets, ocnb vs Playwright MCP.

The same calls, on the demo site's pages, through each server over stdio with the official MCP client:
open a page, read it, type into text fields, pick an option, tick a box, click a button whose form
answers, click a link that leaves the page, and (ocnb) a click on a ref that is gone. The tokens
(cl100k) are counted over the whole ``CallToolResult`` JSON as a client receives it (``content``,
``structuredContent`` when sent, ``isError``), and over its text parts alone; Playwright MCP runs with
``--image-responses omit`` as in ``bench_agent_tasks``. ``--before PATH`` adds a third server: ocnb
from another source tree (``git worktree add /tmp/before <commit>``), so a change is measured against
what it replaced in the same run.

Run: ``.venv/bin/python bench/bench_results.py [--before PATH] [--repeat 3]``.
Writes ``bench/results/results_tokens.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from common import PW_MCP_VERSION, RESULTS, playwright_mcp_params, save  # noqa: E402

from ocnb.commands.demosite import serve  # noqa: E402
from ocnb.tokens import count_text  # noqa: E402

#: The kinds of result compared (a Playwright MCP counterpart for each).
KINDS = ("navigate", "read_page", "form_input", "interact fill", "interact select", "interact click")
PEER = {
    "navigate": "browser_navigate",
    "read_page": "browser_snapshot",
    "form_input": "browser_type",
    "interact fill": "browser_type",
    "interact select": "browser_select_option",
    "interact click": "browser_click",
}


def wire(result: Any) -> str:
    """The ``CallToolResult`` as the client received it, compact JSON."""
    return json.dumps(result.model_dump(by_alias=True, mode="json", exclude_none=True), ensure_ascii=False)


def text_of(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


class Runner:
    """One server: calls by kind, the tokens of each result kept."""

    def __init__(self, client: Any, label: str) -> None:
        self.client = client
        self.label = label
        self.rows: list[dict[str, Any]] = []

    async def call(self, kind: str, name: str, args: dict[str, Any], note: str = "") -> str:
        result = await self.client.call_tool(name, args)
        text = text_of(result)
        self.rows.append(
            {
                "kind": kind,
                "tool": name,
                "note": note,
                "tokens": count_text(wire(result)),
                "text_tokens": count_text(text),
                "is_error": bool(result.is_error),
                "sample": text[:600],
            }
        )
        return text


_OC_REF = re.compile(r'- (\w+) "((?:[^"\\]|\\.)*)"[^\n]*?\[(ax_\d+)\]')
_PW_REF = re.compile(r'- (\w+) "((?:[^"\\]|\\.)*)"[^\n]*?\[ref=(\w+)\]')


def ref_of(outline: str, role: str, name: str, pattern: re.Pattern[str]) -> str:
    for m in pattern.finditer(outline):
        if m.group(1) == role and m.group(2) == name:
            return m.group(3)
    raise LookupError(f"no {role} {name!r} in the outline:\n{outline[:1500]}")


async def script(run: Runner, site: Any, peer: bool) -> None:
    """The same steps on either server (ocnb's tools, or Playwright MCP's)."""
    form, index = site.page("form.html"), site.page("index.html")
    pattern = _PW_REF if peer else _OC_REF
    nav = "browser_navigate" if peer else "navigate"
    snap, nav_args = ("browser_snapshot", {}) if peer else ("read_page", {})

    async def click(role: str, name: str, outline: str, note: str) -> str:
        ref = ref_of(outline, role, name, pattern)
        if peer:
            return await run.call("interact click", "browser_click", {"element": name, "target": ref}, note)
        return await run.call("interact click", "interact", {"ref": ref}, note)

    async def type_(kind: str, role: str, name: str, value: str, outline: str) -> None:
        ref = ref_of(outline, role, name, pattern)
        if peer:
            await run.call(kind, "browser_type", {"element": name, "target": ref, "text": value})
        elif kind == "form_input":
            await run.call(kind, "form_input", {"ref": ref, "value": value})
        else:
            await run.call(kind, "interact", {"ref": ref, "action": "fill", "value": value})

    await run.call("navigate", nav, {"url": form, **nav_args}, "form page")
    outline = await run.call("read_page", snap, {}, "form page")
    await type_("form_input", "textbox", "Full name", "Ada Lovelace", outline)
    await type_("form_input", "textbox", "Email", "ada@example.com", outline)
    await type_("interact fill", "textbox", "Password", "s3cret-pass", outline)
    await type_("interact fill", "textbox", "Message", "Hello there", outline)
    country = ref_of(outline, "combobox", "Country", pattern)
    if peer:
        await run.call(
            "interact select", "browser_select_option", {"element": "Country", "target": country, "values": ["Japan"]}
        )
    else:
        await run.call("interact select", "interact", {"ref": country, "action": "select", "value": "Japan"})
    await click("checkbox", "I accept the terms", outline, "a box ticked")
    await click("radio", "Pro", outline, "a radio chosen")
    await click("button", "Sign up", outline, "the form answers")
    await run.call("navigate", nav, {"url": index}, "index page")
    outline = await run.call("read_page", snap, {}, "index page")
    await click("link", "Sign-up form", outline, "a link to another page")
    if not peer:  # a ref whose element is gone: the failure an agent must read
        stale = ref_of(outline, "link", "Search", pattern)
        await run.call("failure", "interact", {"ref": stale}, "a stale ref")


async def run_server(label: str, params: Any, site: Any, repeat: int) -> list[dict[str, Any]]:
    from mcp import Client

    async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
        run = Runner(client, label)
        for _ in range(repeat):
            await script(run, site, peer=label == "pwmcp")
        return run.rows


def ocnb_params(root: Path, home: str) -> Any:
    from mcp.client.stdio import StdioServerParameters

    env = {**os.environ, "OCNB_HOME": home, "PYTHONPATH": str(root)}
    return StdioServerParameters(command=sys.executable, args=["-m", "ocnb.mcp.cli"], env=env, cwd=home)


def summarize(rows: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for label, rs in rows.items():
        out[label] = {}
        for kind in (*KINDS, "failure"):
            these = [r for r in rs if r["kind"] == kind]
            if these:
                out[label][kind] = {
                    "calls": len(these),
                    "median": statistics.median(r["tokens"] for r in these),
                    "mean": round(statistics.mean(r["tokens"] for r in these), 1),
                    "text_median": statistics.median(r["text_tokens"] for r in these),
                }
    for label in ("ocnb", "before"):  # medians ÷ Playwright MCP's, by kind (``interact_click``…)
        if label in out and "pwmcp" in out:
            out[f"{label}_ratio"] = {
                kind.replace(" ", "_"): round(out[label][kind]["median"] / out["pwmcp"][kind]["median"], 3)
                for kind in KINDS
                if kind in out[label] and kind in out["pwmcp"]
            }
    return out


def markdown(summary: dict[str, Any]) -> str:
    labels = [k for k in ("before", "ocnb", "pwmcp") if k in summary]
    names = {"before": "ocnb before", "ocnb": "ocnb", "pwmcp": f"Playwright MCP {PW_MCP_VERSION}"}
    lines = [
        "# Tokens of one result as an MCP client gets it (whole CallToolResult JSON, cl100k; median)",
        "",
        "| result | "
        + " | ".join(names[k] for k in labels)
        + " | Playwright MCP tool | ocnb / PW |"
        + (" before / PW |" if "before" in labels else ""),
        "| --- | " + " | ".join("---:" for _ in labels) + " | --- | ---: |" + (" ---: |" if "before" in labels else ""),
    ]
    for kind in (*KINDS, "failure"):
        cells = [str(summary[k].get(kind, {}).get("median", "–")) for k in labels]
        pw = summary.get("pwmcp", {}).get(kind, {}).get("median")
        ratio = f"{summary['ocnb'][kind]['median'] / pw:.2f}" if pw and kind in summary.get("ocnb", {}) else "–"
        before = (
            f" {summary['before'][kind]['median'] / pw:.2f} |"
            if "before" in labels and pw and kind in summary["before"]
            else (" – |" if "before" in labels else "")
        )
        lines.append(f"| {kind} | " + " | ".join(cells) + f" | {PEER.get(kind, '–')} | {ratio} |" + before)
    return "\n".join(lines) + "\n"


async def main_async(before: Path | None, repeat: int) -> dict[str, list[dict[str, Any]]]:
    with serve() as site, tempfile.TemporaryDirectory() as home:
        servers: dict[str, Any] = {"ocnb": ocnb_params(ROOT, home)}
        if before is not None:
            servers["before"] = ocnb_params(before, home)
        servers["pwmcp"] = playwright_mcp_params("--image-responses", "omit", cwd=home)
        rows = {}
        for label, params in servers.items():  # one after another: the machine is shared
            rows[label] = await run_server(label, params, site, repeat)
        return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="another ocnb source tree to measure beside this one")
    parser.add_argument("--repeat", type=int, default=3, help="runs of the script per server (default 3)")
    parser.add_argument("--show", action="store_true", help="print one sample result of each kind")
    opts = parser.parse_args(argv)
    rows = asyncio.run(main_async(opts.before, opts.repeat))
    summary = summarize(rows)
    md = markdown(summary)
    print(md)
    if opts.show:
        for label, rs in rows.items():
            seen: set[str] = set()
            for r in rs:
                if r["kind"] + r["note"] not in seen:
                    seen.add(r["kind"] + r["note"])
                    print(f"--- {label} {r['kind']} ({r['note']}): {r['tokens']} tokens\n{r['sample']}\n")
    samples = {label: rs[: len(rs) // max(opts.repeat, 1)] for label, rs in rows.items()}
    save("results_tokens", {"summary": summary, "playwright_mcp_version": PW_MCP_VERSION, "calls": samples})
    (RESULTS / "results_tokens.md").write_text(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
