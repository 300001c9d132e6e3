"""Page load time with an origin policy set against none, as ratios measured in one run (target ≤ 1.10×).

Four sessions on the same Chromium build, one browser each: one without a policy, one with a
block-list (``blocked_origins=["https://blocked.invalid"]``), one with an allow-list and one with the
same allow-list made to need the DevTools guard (``allow_devtools``: an allowed pattern with a blocked
origin inside it, ``INSIDE``, which no page asks for). The allow-list is the bench servers' own
origins (``http://127.0.0.1:*``, ``http://localhost:*``: the demo site's ports and the corpus server)
and every other origin the pages ask for (the saved corpus pages name their sites' CDNs, unreachable
here), found by a first pass under the servers' origins alone that collects what it refused —
policies that refuse nothing these pages load, so all four send the same requests (every other host
is "not found" at once in all of them, ``NO_OTHER_HOSTS``: a CDN the saved pages name would otherwise
hang a load for seconds on this closed network) and the difference is the cost of checking each one.

How each is enforced (docs/security.md): the allow-list by Chromium's proxy rules, its allowed
origins bypassing ocnb's refusing proxy (``ocnb/browser/proxy_guard.py``: nothing paused, nothing
intercepted); the block-list by the DevTools ``Fetch`` guard on the browser's own session pausing only
URLs that name a blocked host (``ocnb/browser/fetch_guard.py``); ``allow_devtools`` by the same guard
pausing every request, Playwright's driver continuing the allowed ones that are not documents without
asking Python (``driver_guard.js``), the rest coming to Python. Each page of the demo site
(``ocnb.commands.demosite.serve``) and of the shared corpora (``real-pages``, ``real-pages-2``, read
from /work/shared/corpus and served as ``bench_read_page`` serves them) is loaded with ``navigate``
(``load``), the sessions in a rotating order ``--runs`` times; per page the median of each, per corpus
and in total the sum of the medians (and the median of the per-page ratios, less swayed by one slow
page on a busy machine). Beside the wall clock: this process's CPU time (``time.process_time``:
Python's side of every paused request) per policy, and per policy's guard the requests it was asked
about (``paused``: each a round trip to Python), those Playwright's driver continued without asking
(``continued_by_driver``), those refused (``refused``, which should be 0) and whether the network
guard enforced it (``network_guard``).

Run: ``.venv/bin/python bench/bench_origin_policy.py [--runs 3] [--limit N] [--policy allow ...]``;
writes ``bench/results/origin_policy.json``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import ocnb  # noqa: E402
from bench.bench_read_page import corpus_pages, serve_corpora  # noqa: E402
from bench.common import save  # noqa: E402
from ocnb.browser import launch  # noqa: E402
from ocnb.browser.launch import launch_args as _ocnb_launch_args  # noqa: E402
from ocnb.commands.demosite import serve, site_root  # noqa: E402
from ocnb.origins import origin_of  # noqa: E402

OWN = ["http://127.0.0.1:*", "http://localhost:*"]
#: An allowed pattern with a blocked origin inside it, which no page here asks for: the network
#: guard's bypass rules cannot carve it out, so the DevTools guard enforces that whole policy.
INSIDE = {"allowed": ["https://*.example.invalid"], "blocked": ["https://bad.example.invalid"]}


def with_inside(allowed: list[str]) -> dict[str, list[str]]:
    """``allowed`` as a policy the DevTools guard enforces (``INSIDE`` added)."""
    return {"allowed_origins": allowed + INSIDE["allowed"], "blocked_origins": INSIDE["blocked"]}


POLICIES: dict[str, dict[str, list[str]]] = {
    "block": {"blocked_origins": ["https://blocked.invalid"]},
    "allow": {"allowed_origins": OWN},
    "allow_devtools": with_inside(OWN),
}


#: Every host but the bench servers' is "not found" at once, in every session alike: the saved corpus
#: pages name their sites' CDNs, and on a closed network a connection to one can hang for seconds.
NO_OTHER_HOSTS = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"


def _launch_args() -> list[str]:
    return [*_ocnb_launch_args(), NO_OTHER_HOSTS]


launch.launch_args = _launch_args  # the bench's sessions only


def origins_asked(urls: list[str]) -> list[str]:
    """Every origin besides the servers' that the pages at ``urls`` ask for: what a session allowed
    only the servers' origins refuses while it loads each of them once, under either guard (they see
    a request at different points: the DevTools guard an ``http:`` URL the browser then upgrades to
    ``https:`` for HSTS, the network guard the upgraded one)."""
    found: set[str | None] = set()
    for policy in ({"allowed_origins": OWN}, with_inside(OWN)):
        s = ocnb.Session(**policy)
        try:
            s.call("navigate", url="about:blank")  # the browser is up
            for url in urls:
                guard = s.browser_state().origin_guard
                mark = guard.last_seq if guard is not None else 0
                s.call("navigate", url=url)
                guard = s.browser_state().origin_guard
                found |= {origin_of(b.url) for b in (guard.since(mark) if guard is not None else [])}
        finally:
            s.close()
    return sorted(o for o in found if o)


def load(s: ocnb.Session, url: str) -> tuple[float, float]:
    """Wall-clock and this process's CPU milliseconds of one ``navigate``."""
    t0, c0 = time.perf_counter(), time.process_time()
    s.call("navigate", url=url)
    return (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000


def guard_counts(s: ocnb.Session) -> dict[str, object]:
    state = s.browser_state()
    guard = state.origin_guard
    browser = getattr(state, "browser_guard", None)
    return {
        "paused": getattr(browser, "paused", 0),
        # allowed requests Playwright's driver continued without asking Python (driver_guard.js)
        "continued_by_driver": (s.run(browser.continue_allowed()) or 0) if browser is not None else 0,
        "refused": len(guard.log) if guard is not None else 0,
        "refused_origins": sorted({origin_of(b.url) or b.url for b in guard.log}) if guard is not None else [],
        # enforced by the network guard's proxy (ocnb/browser/proxy_guard.py): nothing paused
        "network_guard": bool(guard is not None and guard.network),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--limit", type=int, default=0, help="pages per corpus (0: all)")
    ap.add_argument(
        "--policy", choices=tuple(POLICIES), action="append", help="one policy (again: more); all by default"
    )
    opts = ap.parse_args()
    chosen = opts.policy or list(POLICIES)
    demo = serve()
    server, base = serve_corpora()
    pages: list[tuple[str, str, str]] = [
        ("demo", p.name, demo.page(p.name)) for p in sorted(site_root().glob("*.html"))
    ]
    for corpus in ("real-pages", "real-pages-2"):
        found = corpus_pages(corpus)
        pages += [(corpus, p.name, base + p.path) for p in (found[: opts.limit] if opts.limit else found)]
    if "allow" in chosen or "allow_devtools" in chosen:
        asked = origins_asked([url for _g, _n, url in pages])
        POLICIES["allow"] = {"allowed_origins": OWN + asked}
        POLICIES["allow_devtools"] = with_inside(OWN + asked)
    sessions = {"none": ocnb.Session(), **{name: ocnb.Session(**POLICIES[name]) for name in chosen}}
    labels = list(sessions)
    rows = []
    cpu = dict.fromkeys(labels, 0.0)
    try:
        for s in sessions.values():
            s.call("navigate", url=demo.page("index.html"))  # browsers up, caches warm alike
        for group, name, url in pages:
            times: dict[str, list[float]] = {label: [] for label in labels}
            for i in range(opts.runs):
                for label in labels[i % len(labels) :] + labels[: i % len(labels)]:  # each goes first in turn
                    wall, used = load(sessions[label], url)
                    times[label].append(wall)
                    cpu[label] += used
            row: dict[str, object] = {"group": group, "page": name}
            row.update({f"{label}_ms": round(statistics.median(times[label]), 1) for label in labels})
            rows.append(row)
            none = statistics.median(times["none"])
            shown = "  ".join(f"{label} ×{statistics.median(times[label]) / none:5.2f}" for label in chosen)
            print(f"{group:13} {name[:28]:28} none {none:8.1f} ms  {shown}")
        counts = {label: guard_counts(sessions[label]) for label in chosen}
    finally:
        for s in sessions.values():
            s.close()
        server.shutdown()
        demo.close()
    groups: dict[str, dict[str, object]] = {}
    for g in ("demo", "real-pages", "real-pages-2", "total"):
        sel = [r for r in rows if g in ("total", r["group"])]
        none = sum(float(r["none_ms"]) for r in sel)  # type: ignore[arg-type]
        out: dict[str, object] = {"pages": len(sel), "none_ms": round(none, 1)}
        for label in chosen:
            ms = sum(float(r[f"{label}_ms"]) for r in sel)  # type: ignore[arg-type]
            per_page = statistics.median(float(r[f"{label}_ms"]) / float(r["none_ms"]) for r in sel)  # type: ignore[arg-type]
            out[label] = {"ms": round(ms, 1), "ratio": round(ms / none, 3), "median_page_ratio": round(per_page, 3)}
        groups[g] = out
        shown = "  ".join(
            f"{label} ×{out[label]['ratio']:5.3f} (median page ×{out[label]['median_page_ratio']:5.3f})"  # type: ignore[index]
            for label in chosen
        )
        print(f"{g:13} {len(sel):3} pages  none {none:9.1f} ms  {shown}")
    cpu_ratio = {label: round(cpu[label] / cpu["none"], 3) for label in chosen}
    print("cpu ms (this process):", {k: round(v) for k, v in cpu.items()}, "ratio", cpu_ratio, "guards", counts)
    path = save(
        "origin_policy",
        {
            "runs": opts.runs,
            "limit": opts.limit,
            "policies": {label: POLICIES[label] for label in chosen},
            "groups": groups,
            "cpu_ms": {k: round(v, 1) for k, v in cpu.items()},
            "cpu_ratio": cpu_ratio,
            "guards": counts,
            "note": "wall-clock on a machine shared with other jobs (±30% run to run); cpu_ms is this process's",
            "pages": rows,
        },
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
