"""ocnb ``read_page`` vs Playwright MCP ``browser_snapshot`` on the two real-page corpora.

Serves ``../shared/corpus/real-pages/*/source.html`` and ``../shared/corpus/real-pages-2/*.html.gz``
(unzipped on the fly, never copied) on 127.0.0.1, reads each page with ocnb's ``read_page`` (default
mode) and with Playwright MCP's ``browser_snapshot`` (driven over stdio with the ``mcp`` client; any
dialog the page opens is accepted first, or Playwright MCP refuses every later snapshot), both on the
same Chromium and viewport, and prints per page and per corpus: cl100k tokens, interactive coverage,
text coverage, article recall (real-pages-2), tokens per kept word and median wall time.

- interactive coverage: of the interactive elements Playwright MCP gives a ref to (link, button,
  textbox, checkbox, radio, combobox, …; matched by role + name), the share that ocnb's output
  also makes addressable (a line with that role, that name and an ``ax_`` ref; a container's short
  name ``"first words…"`` matches a name that starts with those words);
- text coverage: the share of the visible words of ``document.body.innerText`` (counted with
  multiplicity) that appear in the output; a line repeated right after itself counts once (a
  visually hidden screen-reader copy of a visible line, ``aria-hidden`` on the visible one: a reader
  shows it once, innerText twice);
- article recall: the share of the person-annotated ``articleBody`` words of 3+ letters
  (lower-cased, with multiplicity) that appear in the output;
- tokens per kept word: output tokens ÷ visible words kept.

Per-page floors (every page with ≥ 50 visible words keeps ≥ 95% of them and ≥ 95% of its article
words) are listed with the worst five pages and what they lost.

Set-up (once): ``npm install --prefix bench/.node @playwright/mcp@0.0.83`` (done by this script
when missing). Run: ``.venv/bin/python bench/bench_read_page.py [--corpus real-pages-2] [--pages a,b]
[--runs 3] [--show NAME]``.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import re
import statistics
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from bench.common import CHROMIUM, playwright_mcp_params  # noqa: E402
from ocnb.perception.listeners import install as install_listeners  # noqa: E402
from ocnb.perception.snapshot import read_page  # noqa: E402
from ocnb.tokens import count_text  # noqa: E402

VIEWPORT = (1280, 720)
SHARED = (ROOT / ".." / "shared" / "corpus").resolve()
if not SHARED.is_dir():
    SHARED = Path("/work/shared/corpus")
CORPORA = ("real-pages", "real-pages-2")
#: Per-page floors: a page with at least FLOOR_WORDS visible words keeps at least FLOOR of them and of
#: its article words.
FLOOR, FLOOR_WORDS = 0.95, 50
INTERACTIVE = {
    "link", "button", "textbox", "searchbox", "checkbox", "radio", "combobox", "listbox", "option",
    "slider", "spinbutton", "switch", "tab", "menuitem", "menuitemcheckbox", "menuitemradio", "treeitem",
}  # fmt: skip
_PW_LINE = re.compile(r'^\s*- (\w+)(?: "((?:[^"\\]|\\.)*)")?(.*)$')
_OCNB_ITEM = re.compile(r'(?:^|[-:] )(\w+)(?: "((?:[^"\\]|\\.)*)")? \[ax_\d+\]')
_OCNB_INLINE = re.compile(r"\[((?:[^\[\]\\]|\\.)*)\]\(ax_\d+")
_OPTIONS = re.compile(r"\boptions: (.*)$")
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class CorpusPage:
    corpus: str
    name: str
    path: str  # URL path under the corpus server
    article: str | None = None  # the person-annotated article body (real-pages-2)


def corpus_pages(corpus: str, names: list[str] | None = None) -> list[CorpusPage]:
    """The pages of one corpus (sorted), or only ``names`` of it."""
    folder = SHARED / corpus
    out: list[CorpusPage] = []
    if corpus == "real-pages":
        for p in sorted(folder.iterdir()):
            if (p / "source.html").is_file():
                out.append(CorpusPage(corpus, p.name, f"/{corpus}/{p.name}/source.html"))
    elif corpus == "real-pages-2":
        truth = json.loads((folder / "ground-truth.json").read_text(encoding="utf-8"))
        for key in sorted(truth):
            if (folder / f"{key}.html.gz").is_file():
                out.append(CorpusPage(corpus, key[:12], f"/{corpus}/{key}.html", truth[key]["articleBody"]))
    else:
        raise ValueError(f"unknown corpus {corpus!r}")
    return [p for p in out if not names or p.name in names]


class _CorpusHandler(SimpleHTTPRequestHandler):
    """Static files from the shared corpus folder; ``X.html`` is served from ``X.html.gz`` unzipped."""

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path = self.path.split("?", 1)[0]
        gz = Path(self.translate_path(path + ".gz"))
        if path.endswith(".html") and gz.is_file():
            data = gzip.decompress(gz.read_bytes())
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        super().do_GET()


def serve_corpora() -> tuple[ThreadingHTTPServer, str]:
    """Serve ``SHARED`` on 127.0.0.1 (a free port); returns the server and its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_CorpusHandler, directory=str(SHARED)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def _words(text: str, min_len: int = 1) -> Counter[str]:
    return Counter(w.lower() for w in _WORD.findall(text) if len(w) >= min_len)


def recall(want_text: str, output: str, min_len: int = 1) -> tuple[float, int, Counter[str]]:
    """Share of the words of ``want_text`` (with multiplicity) found in ``output``; word count; missing words."""
    want, have = _words(want_text, min_len), _words(output)
    total = sum(want.values())
    missing = Counter({w: c - have[w] for w, c in want.items() if c > have[w]})
    if not total:
        return 1.0, 0, missing
    return 1 - sum(missing.values()) / total, total, missing


def article_recall(article: str, output: str) -> tuple[float, int, Counter[str]]:
    """Article recall: ground-truth words of 3+ letters, lower-cased, with multiplicity."""
    return recall(article, output, 3)


def visible_text(inner_text: str) -> str:
    """``innerText`` with a line that repeats the line before it (blank lines aside) left out."""
    out: list[str] = []
    last = None
    for line in inner_text.split("\n"):
        key = " ".join(line.split())
        if not key:
            continue
        if key != last:
            out.append(line)
        last = key
    return "\n".join(out)


def lost_lines(inner_text: str, output: str, limit: int = 3) -> list[str]:
    """The visible lines most of whose words the output lacks (a short sample of what was lost)."""
    have = _words(output)
    out: list[tuple[int, str]] = []
    for line in inner_text.split("\n"):
        words = [w.lower() for w in _WORD.findall(line)]
        miss = 0
        for w in words:
            if have[w] > 0:
                have[w] -= 1
            else:
                miss += 1
        if miss >= max(2, len(words) // 2):
            out.append((miss, line.strip()[:120]))
    return [t for _, t in sorted(out, key=lambda x: -x[0])[:limit]]


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
    """(role, name) of every item with a ref; a container's short name keeps its trailing "…"."""
    out = []
    for line in content.split("\n"):
        for m in _OCNB_ITEM.finditer(line):
            raw = m.group(2) or ""
            out.append((m.group(1), norm(raw) + ("…" if raw.endswith("…") else "")))
        for m in _OCNB_INLINE.finditer(line):
            out.append(("link", norm(m.group(1))))
        om = _OPTIONS.search(line)
        if om and "[ax_" in line:
            out.extend(("option", norm(o)) for o in om.group(1).split(" | "))
    return out


def coverage(theirs: list[tuple[str, str]], ours: list[tuple[str, str]]) -> tuple[int, int, list[tuple[str, str]]]:
    """Matched count, total, and the unmatched items of ``theirs`` (role + name, multiset).

    In order of trust: the same role and name; an unnamed field (Playwright MCP shows its options or
    value as children); a container's short name ``"first words…"`` found in the name (which may begin
    with an image's alt text the short name leaves out); an item Playwright MCP names with no words
    (``button: ›‹``) against a same-role item ocnb names (from its aria-label) that nothing else matched.
    """
    pool = Counter(ours)
    left: list[tuple[str, str]] = []
    for item in theirs:
        if pool[item] > 0:
            pool[item] -= 1
        elif pool[(item[0], "")] > 0 and item[0] in ("combobox", "listbox", "textbox"):
            pool[(item[0], "")] -= 1
        else:
            left.append(item)
    prefixes: dict[str, list[str]] = {}
    for (role, name), n in pool.items():
        if name.endswith("…") and name[:-1]:
            prefixes.setdefault(role, []).extend([name[:-1]] * n)
    missed: list[tuple[str, str]] = []
    for item in left:
        cands = prefixes.get(item[0], [])
        hit = next((i for i, p in enumerate(cands) if p in item[1]), None)
        if hit is None:
            missed.append(item)
        else:
            pool[(item[0], cands.pop(hit) + "…")] -= 1
    unnamed_left = Counter(role for role, name in missed if not name)
    for (role, _name), n in pool.items():
        if n > 0 and unnamed_left[role] > 0:
            take = min(n, unnamed_left[role])
            unnamed_left[role] -= take
            for _ in range(take):
                missed.remove((role, ""))
    return len(theirs) - len(missed), len(theirs), missed


def text_coverage(inner_text: str, output: str) -> float:
    return recall(visible_text(inner_text), output)[0]


async def _accept_dialogs(client: Any, text: str) -> str:
    """Accept whatever dialogs Playwright MCP reports as open (it refuses snapshots until then)."""
    for _ in range(10):
        if "browser_handle_dialog" not in text:
            break
        res = await client.call_tool("browser_handle_dialog", {"accept": True})
        text = "\n".join(getattr(c, "text", "") for c in res.content)
    return text


def measure(page: CorpusPage, inner: str, ours: str) -> dict[str, Any]:
    """ocnb's figures for one page (tokens, text coverage, article recall, what was lost)."""
    txt, words, missing = recall(visible_text(inner), ours)
    row: dict[str, Any] = {
        "corpus": page.corpus,
        "page": page.name,
        "words": words,
        "oc_tokens": count_text(ours),
        "oc_text_cov": txt,
        "lost_words": [w for w, _ in missing.most_common(8)],
        "lost_lines": lost_lines(visible_text(inner), ours) if txt < 1 else [],
    }
    if page.article is not None:
        art, art_words, art_missing = article_recall(page.article, ours)
        row.update(
            article_words=art_words, oc_article_recall=art, article_inner_recall=article_recall(page.article, inner)[0]
        )
        row["lost_article_words"] = [w for w, _ in art_missing.most_common(8)]
    return row


def below_floor(row: dict[str, Any]) -> list[str]:
    """The per-page floors a row misses (pages with fewer than FLOOR_WORDS visible words are exempt)."""
    if row["words"] < FLOOR_WORDS:
        return []
    out = []
    if row["oc_text_cov"] < FLOOR:
        out.append(f"text {row['oc_text_cov']:.1%}")
    if row.get("article_words") and row["oc_article_recall"] < FLOOR:
        out.append(f"article {row['oc_article_recall']:.1%} (innerText itself holds {row['article_inner_recall']:.1%})")
    return out


async def run(pages: list[CorpusPage], runs: int, show: str | None) -> list[dict[str, Any]]:
    from mcp import Client
    from playwright.async_api import async_playwright

    params = playwright_mcp_params("--viewport-size", f"{VIEWPORT[0]}x{VIEWPORT[1]}", "--image-responses", "omit")
    server, base = serve_corpora()
    rows = []
    async with async_playwright() as pw, Client(params, read_timeout_seconds=120) as client:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = await browser.new_page(viewport={"width": VIEWPORT[0], "height": VIEWPORT[1]})
        await install_listeners(page.context)  # as ocnb's own browser does: script-driven controls get refs
        page.on("dialog", lambda d: asyncio.ensure_future(d.accept()))
        for i, cp in enumerate(pages, 1):
            print(f"[{i}/{len(pages)}] {cp.corpus}/{cp.name}", file=sys.stderr, flush=True)
            url = base + cp.path
            res = await client.call_tool("browser_navigate", {"url": url})
            await _accept_dialogs(client, "\n".join(getattr(c, "text", "") for c in res.content))
            pw_times, pw_text = [], ""
            for _ in range(runs):
                t0 = time.perf_counter()
                res = await client.call_tool("browser_snapshot", {})
                pw_times.append(time.perf_counter() - t0)
                pw_text = "\n".join(getattr(c, "text", "") for c in res.content)
                if "browser_handle_dialog" in pw_text:  # a dialog opened meanwhile: accept it, then re-read
                    await _accept_dialogs(client, pw_text)
                    res = await client.call_tool("browser_snapshot", {})
                    pw_text = "\n".join(getattr(c, "text", "") for c in res.content)
            try:
                await page.goto(url, wait_until="load", timeout=60_000)
            except Exception as exc:  # noqa: BLE001 - a page that never fires load is still read
                print(f"  load: {exc}".split("\n")[0], file=sys.stderr)
            oc_times, oc = [], {}
            for _ in range(runs):
                t0 = time.perf_counter()
                oc = await read_page(page)
                oc_times.append(time.perf_counter() - t0)
            inner = await page.evaluate("document.body ? document.body.innerText : ''")
            yaml = pw_snapshot_yaml(pw_text)
            ours = oc["content"]
            hit, total, missed = coverage(pw_interactive(yaml), ocnb_interactive(ours))
            row = measure(cp, inner, ours)
            row.update(
                pw_tokens=count_text(yaml),
                pw_full_tokens=count_text(pw_text),
                oc_full_tokens=count_text(f"url: {oc['url']}\ntitle: {oc['title']}\n{ours}"),
                hit=hit,
                total=total,
                pw_text_cov=text_coverage(inner, yaml),
                pw_ms=statistics.median(pw_times) * 1000,
                oc_ms=statistics.median(oc_times) * 1000,
                missed=missed,
            )
            if cp.article is not None:
                row["pw_article_recall"] = article_recall(cp.article, yaml)[0]
            rows.append(row)
            if show and cp.name == show:
                Path("/tmp/bench_pw.yaml").write_text(yaml)
                Path("/tmp/bench_oc.txt").write_text(ours)
                Path("/tmp/bench_inner.txt").write_text(inner)
        await browser.close()
    server.shutdown()
    return rows


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One corpus's totals."""
    pw_tok = sum(r["pw_tokens"] for r in rows)
    oc_tok = sum(r["oc_tokens"] for r in rows)
    words = sum(r["words"] for r in rows)
    oc_kept = sum(r["oc_text_cov"] * r["words"] for r in rows)
    pw_kept = sum(r["pw_text_cov"] * r["words"] for r in rows)
    hit = sum(r["hit"] for r in rows)
    total = sum(r["total"] for r in rows)
    oc_ms = statistics.median(r["oc_ms"] for r in rows)
    pw_ms = statistics.median(r["pw_ms"] for r in rows)
    out: dict[str, Any] = {
        "pages": len(rows),
        "ocnb_tokens": oc_tok,
        "playwright_mcp_tokens": pw_tok,
        "token_ratio": round(oc_tok / max(pw_tok, 1), 4),
        "whole_response_token_ratio": round(
            sum(r["oc_full_tokens"] for r in rows) / max(sum(r["pw_full_tokens"] for r in rows), 1), 4
        ),
        "interactive_coverage": round(hit / max(total, 1), 4),
        "text_coverage": round(oc_kept / max(words, 1), 4),
        "playwright_mcp_text_coverage": round(pw_kept / max(words, 1), 4),
        "min_page_text_coverage": round(
            min((r["oc_text_cov"] for r in rows if r["words"] >= FLOOR_WORDS), default=1), 4
        ),
        "tokens_per_kept_word": round(oc_tok / max(oc_kept, 1), 3),
        "playwright_mcp_tokens_per_kept_word": round(pw_tok / max(pw_kept, 1), 3),
        "ocnb_median_ms": round(oc_ms, 1),
        "playwright_mcp_median_ms": round(pw_ms, 1),
        "time_ratio": round(oc_ms / max(pw_ms, 1e-9), 3),
        "slower_pages": [r["page"] for r in rows if r["oc_ms"] > 1.2 * r["pw_ms"]],
        "pages_below_floor": {r["page"]: below_floor(r) for r in rows if below_floor(r)},
    }
    art = [r for r in rows if r.get("article_words")]
    if art:
        aw = sum(r["article_words"] for r in art)
        out["article_recall"] = round(sum(r["oc_article_recall"] * r["article_words"] for r in art) / aw, 4)
        out["playwright_mcp_article_recall"] = round(
            sum(r["pw_article_recall"] * r["article_words"] for r in art) / aw, 4
        )
        out["min_page_article_recall"] = round(min(r["oc_article_recall"] for r in art), 4)
    return out


def _score(r: dict[str, Any]) -> float:
    return min(r["oc_text_cov"], r.get("oc_article_recall", 1.0))


def report(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Print the per-page table and each corpus's totals side by side; return the figures saved."""
    corpora: dict[str, Any] = {}
    for corpus in CORPORA:
        crow = [r for r in rows if r["corpus"] == corpus]
        if not crow:
            continue
        print(f"== {corpus}")
        print(
            f"{'page':34} {'pw_tok':>7} {'oc_tok':>7} {'ratio':>5} {'inter':>9} {'pw_txt':>6} {'oc_txt':>6} "
            f"{'pw_art':>6} {'oc_art':>6} {'pw_ms':>6} {'oc_ms':>6}"
        )
        for r in crow:
            cov = f"{r['hit']}/{r['total']}"
            art = (
                f"{r['pw_article_recall']:6.1%} {r['oc_article_recall']:6.1%}"
                if r.get("article_words")
                else f"{'':6} {'':6}"
            )
            print(
                f"{r['page'][:34]:34} {r['pw_tokens']:7d} {r['oc_tokens']:7d} {r['oc_tokens'] / max(r['pw_tokens'], 1):5.2f} "
                f"{cov:>9} {r['pw_text_cov']:6.1%} {r['oc_text_cov']:6.1%} {art} {r['pw_ms']:6.0f} {r['oc_ms']:6.0f}"
            )
        t = summarize(crow)
        worst = sorted(crow, key=_score)[:5]
        corpora[corpus] = {
            "total": t,
            "worst": [
                {
                    k: r[k]
                    for k in (
                        "page",
                        "words",
                        "oc_text_cov",
                        "oc_article_recall",
                        "article_inner_recall",
                        "lost_words",
                        "lost_article_words",
                        "lost_lines",
                    )
                    if k in r
                }
                for r in worst
            ],  # fmt: skip
            "per_page": [{k: v for k, v in r.items() if k not in ("missed", "lost_lines")} for r in crow],
        }
    print("=" * 100)
    print(f"{'':38} " + " ".join(f"{c:>22}" for c in corpora))

    def line(label: str, fmt: Any) -> None:
        print(f"{label:38} " + " ".join(f"{fmt(corpora[c]['total']):>22}" for c in corpora))

    line("pages", lambda t: str(t["pages"]))
    line("tokens ocnb / playwright-mcp", lambda t: f"{t['ocnb_tokens']}/{t['playwright_mcp_tokens']}")
    line("token ratio (target ≤ 0.5)", lambda t: f"{t['token_ratio']:.3f}")
    line("whole-response token ratio", lambda t: f"{t['whole_response_token_ratio']:.3f}")
    line("interactive coverage (≥ 0.99)", lambda t: f"{t['interactive_coverage']:.2%}")
    line("text coverage ocnb (≥ 0.99)", lambda t: f"{t['text_coverage']:.2%}")
    line("text coverage playwright-mcp", lambda t: f"{t['playwright_mcp_text_coverage']:.2%}")
    line("lowest page text coverage (≥ 0.95)", lambda t: f"{t['min_page_text_coverage']:.2%}")
    line("article recall ocnb (≥ 0.98)", lambda t: f"{t['article_recall']:.2%}" if "article_recall" in t else "-")
    line(
        "article recall playwright-mcp",
        lambda t: f"{t['playwright_mcp_article_recall']:.2%}" if "article_recall" in t else "-",
    )
    line(
        "lowest page article recall (≥ 0.95)",
        lambda t: f"{t['min_page_article_recall']:.2%}" if "article_recall" in t else "-",
    )
    line("tokens per kept word ocnb", lambda t: f"{t['tokens_per_kept_word']:.3f}")
    line("tokens per kept word playwright-mcp", lambda t: f"{t['playwright_mcp_tokens_per_kept_word']:.3f}")
    line("median ms ocnb / playwright-mcp", lambda t: f"{t['ocnb_median_ms']:.0f}/{t['playwright_mcp_median_ms']:.0f}")
    line("time ratio (≤ 0.5)", lambda t: f"{t['time_ratio']:.2f}")
    for corpus, c in corpora.items():
        print(f"-- {corpus}: pages below the per-page floors: {c['total']['pages_below_floor'] or 'none'}")
        print(f"-- {corpus}: worst five pages (lowest of text coverage and article recall) and what they lost:")
        for w in c["worst"]:
            art = f", article {w['oc_article_recall']:.1%}" if "oc_article_recall" in w else ""
            print(
                f"   {w['page']}: text {w['oc_text_cov']:.1%}{art}; lost words {w.get('lost_article_words') or w['lost_words']}"
            )
            for ln in w.get("lost_lines", []):
                print(f"      lost: {ln!r}")
    missed = Counter()
    for r in rows:
        for item in r["missed"]:
            missed[(r["page"], *item)] += 1
    if missed:
        print("unmatched playwright-mcp refs (first 40):")
        for (page, role, name), n in missed.most_common(40):
            print(f"  {page}: {role} {name[:70]!r} ×{n}")
    return corpora


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", help="comma-separated corpora (default: " + ",".join(CORPORA) + ")")
    ap.add_argument(
        "--pages", help="comma-separated page names (folder names; the first 12 hex digits on real-pages-2)"
    )
    ap.add_argument("--runs", type=int, default=3, help="timed reads per page and tool (median)")
    ap.add_argument("--show", help="write both outputs of this page to /tmp/bench_{pw,oc}.*")
    ap.add_argument("--note", default="", help="a note saved with the figures (e.g. that the machine was shared)")
    a = ap.parse_args(argv)
    names = a.pages.split(",") if a.pages else None
    pages = [p for c in (a.corpus.split(",") if a.corpus else CORPORA) for p in corpus_pages(c, names)]
    rows = asyncio.run(run(pages, a.runs, a.show))
    corpora = report(rows)
    from bench.common import RESULTS, save

    previous = RESULTS / "read_page.json"
    if previous.is_file():  # a run over one corpus keeps the other corpus's last figures
        kept = json.loads(previous.read_text()).get("corpora", {})
        corpora = {c: corpora.get(c) or kept[c] for c in CORPORA if c in corpora or c in kept}
    first = corpora.get("real-pages") or next(iter(corpora.values()))
    save(
        "read_page",
        {
            "pages": sum(c["total"]["pages"] for c in corpora.values()),
            "pages_measured_this_run": [f"{r['corpus']}/{r['page']}" for r in rows],
            "note": a.note,
            # `total` stays the real-pages figures (bench.run_all reads it); `corpora` has both
            "total": first["total"],
            "corpora": corpora,
        },
    )


if __name__ == "__main__":
    main()
