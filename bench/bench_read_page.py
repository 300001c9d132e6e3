"""ocnb ``read_page`` vs Playwright MCP ``browser_snapshot`` on the real-pages corpus.

Serves every ``../shared/corpus/real-pages/*/source.html`` on 127.0.0.1, reads each page with
ocnb's ``read_page`` (default mode) and with Playwright MCP's ``browser_snapshot`` (driven over
stdio with the ``mcp`` client), both on the same Chromium and viewport, and prints per page and in
total: cl100k tokens, interactive coverage, text coverage and median wall time.

- interactive coverage: of the interactive elements Playwright MCP gives a ref to (link, button,
  textbox, checkbox, radio, combobox, …; matched by role + name), the share that ocnb's output
  also makes addressable (a line with that role, that name and an ``ax_`` ref);
- text coverage: the share of the visible words of ``document.body.innerText`` (counted with
  multiplicity) that appear in the output.

Set-up (once): ``npm install --prefix bench/.node @playwright/mcp@0.0.83`` (done by this script
when missing). Run: ``.venv/bin/python bench/bench_read_page.py [--pages a,b] [--runs 3] [--show NAME]``.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from ocnb.perception.snapshot import read_page  # noqa: E402
from ocnb.tokens import count_text  # noqa: E402

PW_MCP_VERSION = "0.0.83"
NODE_DIR = HERE / ".node"
PW_MCP_BIN = NODE_DIR / "node_modules" / ".bin" / "playwright-mcp"
CHROMIUM = "/usr/bin/chromium"
VIEWPORT = (1280, 720)
CORPUS = (ROOT / ".." / "shared" / "corpus" / "real-pages").resolve()
if not CORPUS.is_dir():
    CORPUS = Path("/work/shared/corpus/real-pages")

INTERACTIVE = {
    "link", "button", "textbox", "searchbox", "checkbox", "radio", "combobox", "listbox", "option",
    "slider", "spinbutton", "switch", "tab", "menuitem", "menuitemcheckbox", "menuitemradio", "treeitem",
}  # fmt: skip
_PW_LINE = re.compile(r'^\s*- (\w+)(?: "((?:[^"\\]|\\.)*)")?(.*)$')
_OCNB_ITEM = re.compile(r'(?:^|[-:] )(\w+)(?: "((?:[^"\\]|\\.)*)")? \[ax_\d+\]')
_OCNB_INLINE = re.compile(r"\[((?:[^\[\]\\]|\\.)*)\]\(ax_\d+")
_OPTIONS = re.compile(r"\boptions: (.*)$")
_WORD = re.compile(r"\w+", re.UNICODE)


def ensure_playwright_mcp() -> None:
    """Install @playwright/mcp at the pinned version into bench/.node (gitignored)."""
    if PW_MCP_BIN.exists():
        return
    NODE_DIR.mkdir(parents=True, exist_ok=True)
    subprocess.run(["npm", "install", "--prefix", str(NODE_DIR), f"@playwright/mcp@{PW_MCP_VERSION}"], check=True)


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def serve(folder: Path) -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def norm(name: str) -> str:
    """Names compare by their words (case, spacing and punctuation aside)."""
    return " ".join(_WORD.findall(name.lower()))


def pw_snapshot_yaml(text: str) -> str:
    m = re.search(r"```yaml\n(.*?)```", text, re.S)
    return m.group(1) if m else text


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _child_text(lines: list[str], i: int) -> str:
    """Text of the lines nested under ``lines[i]`` (Playwright MCP omits a name its children repeat)."""
    base, parts = _indent(lines[i]), []
    for line in lines[i + 1 :]:
        if line.strip() and _indent(line) <= base:
            break
        body = line.strip().lstrip("-").strip().strip("'")
        if body.startswith("/"):
            continue
        m = re.match(r'^(\w+)(?: "((?:[^"\\]|\\.)*)")?[^:]*(?::\s*(.*))?$', body)
        if m:
            parts.append(m.group(2) or "")
            parts.append((m.group(3) or "").strip('"'))
    return " ".join(p for p in parts if p)


def pw_interactive(yaml: str) -> list[tuple[str, str]]:
    out = []
    lines = yaml.split("\n")
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("- '") and stripped.rstrip(":").endswith("'"):  # YAML single-quoted line
            body = stripped.rstrip(":")[3:-1].replace("''", "'")
            line = line[: len(line) - len(stripped)] + "- " + body + (":" if stripped.endswith(":") else "")
        m = _PW_LINE.match(line)
        if m and m.group(1) in INTERACTIVE and "[ref=" in (m.group(3) or ""):
            name = m.group(2)
            if name is None:
                rest = m.group(3) or ""
                inline = rest.split("]:", 1)[1].strip().strip('"') if "]:" in rest else ""
                name = inline or _child_text(lines, i)
            out.append((m.group(1), norm(name)))
    return out


def ocnb_interactive(content: str) -> list[tuple[str, str]]:
    out = []
    for line in content.split("\n"):
        for m in _OCNB_ITEM.finditer(line):
            out.append((m.group(1), norm(m.group(2) or "")))
        for m in _OCNB_INLINE.finditer(line):
            out.append(("link", norm(m.group(1))))
        om = _OPTIONS.search(line)
        if om and "[ax_" in line:
            out.extend(("option", norm(o)) for o in om.group(1).split(" | "))
    return out


def coverage(theirs: list[tuple[str, str]], ours: list[tuple[str, str]]) -> tuple[int, int, list[tuple[str, str]]]:
    """Matched count, total, and the unmatched items of ``theirs`` (role + name, multiset)."""
    pool = Counter(ours)
    missed = []
    for item in theirs:
        if pool[item] > 0:
            pool[item] -= 1
        elif pool[(item[0], "")] > 0 and item[0] in ("combobox", "listbox", "textbox"):
            pool[(item[0], "")] -= 1  # Playwright MCP shows an unnamed field's options/value as its children
        else:
            missed.append(item)
    return len(theirs) - len(missed), len(theirs), missed


def text_coverage(inner_text: str, output: str) -> float:
    want = Counter(w.lower() for w in _WORD.findall(inner_text))
    have = Counter(w.lower() for w in _WORD.findall(output))
    total = sum(want.values())
    if not total:
        return 1.0
    return sum(min(c, have[w]) for w, c in want.items()) / total


async def run(pages: list[str], runs: int, show: str | None) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from playwright.async_api import async_playwright

    ensure_playwright_mcp()
    server, base = serve(CORPUS)
    params = StdioServerParameters(
        command=str(PW_MCP_BIN),
        args=[
            "--executable-path", CHROMIUM, "--headless", "--no-sandbox", "--isolated",
            "--viewport-size", f"{VIEWPORT[0]}x{VIEWPORT[1]}", "--image-responses", "omit",
        ],
    )  # fmt: skip
    rows = []
    async with async_playwright() as pw, Client(params, read_timeout_seconds=120) as client:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = await browser.new_page(viewport={"width": VIEWPORT[0], "height": VIEWPORT[1]})
        for i, name in enumerate(pages, 1):
            print(f"[{i}/{len(pages)}] {name}", file=sys.stderr, flush=True)
            url = f"{base}/{name}/source.html"
            await client.call_tool("browser_navigate", {"url": url})
            pw_times, pw_text = [], ""
            for _ in range(runs):
                t0 = time.perf_counter()
                res = await client.call_tool("browser_snapshot", {})
                pw_times.append(time.perf_counter() - t0)
                pw_text = "\n".join(getattr(c, "text", "") for c in res.content)
            await page.goto(url, wait_until="load", timeout=60_000)
            oc_times, oc = [], {}
            for _ in range(runs):
                t0 = time.perf_counter()
                oc = await read_page(page)
                oc_times.append(time.perf_counter() - t0)
            inner = await page.evaluate("document.body ? document.body.innerText : ''")
            yaml = pw_snapshot_yaml(pw_text)
            ours = oc["content"]
            hit, total, missed = coverage(pw_interactive(yaml), ocnb_interactive(ours))
            row = {
                "page": name,
                "pw_tokens": count_text(yaml),
                "pw_full_tokens": count_text(pw_text),
                "oc_tokens": count_text(ours),
                "oc_full_tokens": count_text(f"url: {oc['url']}\ntitle: {oc['title']}\n{ours}"),
                "hit": hit,
                "total": total,
                "pw_text_cov": text_coverage(inner, yaml),
                "oc_text_cov": text_coverage(inner, ours),
                "pw_ms": statistics.median(pw_times) * 1000,
                "oc_ms": statistics.median(oc_times) * 1000,
                "missed": missed,
                "words": len(_WORD.findall(inner)),
            }
            rows.append(row)
            if show and name == show:
                Path("/tmp/bench_pw.yaml").write_text(yaml)
                Path("/tmp/bench_oc.txt").write_text(ours)
                Path("/tmp/bench_inner.txt").write_text(inner)
        await browser.close()
    server.shutdown()
    report(rows)


def report(rows: list[dict]) -> None:
    print(
        f"{'page':34} {'pw_tok':>7} {'oc_tok':>7} {'ratio':>5} {'inter':>9} {'pw_txt':>6} {'oc_txt':>6} {'pw_ms':>6} {'oc_ms':>6}"
    )
    for r in rows:
        cov = f"{r['hit']}/{r['total']}"
        print(
            f"{r['page'][:34]:34} {r['pw_tokens']:7d} {r['oc_tokens']:7d} {r['oc_tokens'] / max(r['pw_tokens'], 1):5.2f} "
            f"{cov:>9} {r['pw_text_cov']:6.1%} {r['oc_text_cov']:6.1%} {r['pw_ms']:6.0f} {r['oc_ms']:6.0f}"
        )
    pw_tok = sum(r["pw_tokens"] for r in rows)
    oc_tok = sum(r["oc_tokens"] for r in rows)
    pw_full = sum(r["pw_full_tokens"] for r in rows)
    oc_full = sum(r["oc_full_tokens"] for r in rows)
    hit = sum(r["hit"] for r in rows)
    total = sum(r["total"] for r in rows)
    words = sum(r["words"] for r in rows)
    oc_txt = sum(r["oc_text_cov"] * r["words"] for r in rows) / max(words, 1)
    pw_txt = sum(r["pw_text_cov"] * r["words"] for r in rows) / max(words, 1)
    oc_ms = statistics.median(r["oc_ms"] for r in rows)
    pw_ms = statistics.median(r["pw_ms"] for r in rows)
    slower = [r["page"] for r in rows if r["oc_ms"] > 1.2 * r["pw_ms"]]
    print("-" * 100)
    print(f"pages: {len(rows)}")
    print(
        f"tokens (snapshot body): playwright-mcp {pw_tok}, ocnb {oc_tok}, ratio {oc_tok / max(pw_tok, 1):.3f} (target ≤ 0.6)"
    )
    print(f"tokens (whole response): playwright-mcp {pw_full}, ocnb {oc_full}, ratio {oc_full / max(pw_full, 1):.3f}")
    print(f"interactive coverage: {hit}/{total} = {hit / max(total, 1):.2%} (target ≥ 99%)")
    print(f"text coverage (word-weighted): ocnb {oc_txt:.2%} (target ≥ 95%), playwright-mcp {pw_txt:.2%}")
    print(
        f"median wall time per page: ocnb {oc_ms:.0f} ms, playwright-mcp {pw_ms:.0f} ms, ratio {oc_ms / max(pw_ms, 1e-9):.2f} (target ≤ 1.2)"
    )
    print(
        f"summed wall time: ocnb {sum(r['oc_ms'] for r in rows):.0f} ms, playwright-mcp {sum(r['pw_ms'] for r in rows):.0f} ms; "
        f"pages where ocnb is > 1.2x slower: {', '.join(slower) or 'none'}"
    )
    from bench.common import save

    save(
        "read_page",
        {
            "pages": len(rows),
            "pages_measured": [r["page"] for r in rows],
            "total": {
                "ocnb_tokens": oc_tok,
                "playwright_mcp_tokens": pw_tok,
                "token_ratio": round(oc_tok / max(pw_tok, 1), 4),
                "interactive_coverage": round(hit / max(total, 1), 4),
                "text_coverage": round(oc_txt, 4),
                "playwright_mcp_text_coverage": round(pw_txt, 4),
                "ocnb_median_ms": round(oc_ms, 1),
                "playwright_mcp_median_ms": round(pw_ms, 1),
                "time_ratio": round(oc_ms / max(pw_ms, 1e-9), 3),
                "slower_pages": slower,
            },
            "per_page": [{k: v for k, v in r.items() if k != "missed"} for r in rows],
        },
    )
    missed = Counter()
    for r in rows:
        for item in r["missed"]:
            missed[(r["page"], *item)] += 1
    if missed:
        print("unmatched playwright-mcp refs (first 40):")
        for (page, role, name), n in missed.most_common(40):
            print(f"  {page}: {role} {name[:70]!r} ×{n}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", help="comma-separated page folder names (default: all)")
    ap.add_argument("--runs", type=int, default=3, help="timed reads per page and tool (median)")
    ap.add_argument("--show", help="write both outputs of this page to /tmp/bench_{pw,oc}.*")
    a = ap.parse_args(argv)
    pages = a.pages.split(",") if a.pages else sorted(p.name for p in CORPUS.iterdir() if (p / "source.html").exists())
    asyncio.run(run(pages, a.runs, a.show))


if __name__ == "__main__":
    main()
