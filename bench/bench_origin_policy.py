"""Page load time with an origin policy set against none, as a ratio measured in one run (target ≤ 1.10×).

Two sessions on the same Chromium build: one without a policy, one with
``blocked_origins=["https://blocked.invalid"]`` — a policy that refuses nothing these pages load, so
both send the same requests and the difference is the cost of checking each one (the policy's rule
of the context's route, the DevTools ``Fetch`` guard on the browser's own session — which pauses every
request of the browser — and the WebSocket route). Each page of the demo site
(``ocnb.commands.demosite.serve``) and of the shared corpora (``real-pages``, ``real-pages-2``, served as
``bench_read_page`` serves them) is loaded with ``navigate`` (``load``), alternating the two sessions
``--runs`` times; per page the median of each, and per corpus and in total the sum of the medians
(and the median of the per-page ratios, less swayed by one slow page on a busy machine).

Run: ``.venv/bin/python bench/bench_origin_policy.py [--runs 3] [--limit N]``; writes
``bench/results/origin_policy.json``.
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
from ocnb.commands.demosite import serve, site_root  # noqa: E402

POLICY = {"blocked_origins": ["https://blocked.invalid"]}


def load_ms(s: ocnb.Session, url: str) -> float:
    t0 = time.perf_counter()
    s.call("navigate", url=url)
    return (time.perf_counter() - t0) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--limit", type=int, default=0, help="pages per corpus (0: all)")
    opts = ap.parse_args()
    demo = serve()
    server, base = serve_corpora()
    pages: list[tuple[str, str, str]] = [
        ("demo", p.name, demo.page(p.name)) for p in sorted(site_root().glob("*.html"))
    ]
    for corpus in ("real-pages", "real-pages-2"):
        found = corpus_pages(corpus)
        pages += [(corpus, p.name, base + p.path) for p in (found[: opts.limit] if opts.limit else found)]
    plain, guarded = ocnb.Session(), ocnb.Session(**POLICY)
    rows = []
    try:
        for s in (plain, guarded):
            s.call("navigate", url=demo.page("index.html"))  # browsers up, caches warm alike
        for group, name, url in pages:
            times: dict[str, list[float]] = {"none": [], "policy": []}
            for i in range(opts.runs):
                order = [("none", plain), ("policy", guarded)][:: 1 if i % 2 == 0 else -1]
                for label, s in order:
                    times[label].append(load_ms(s, url))
            none, policy = statistics.median(times["none"]), statistics.median(times["policy"])
            rows.append({"group": group, "page": name, "none_ms": round(none, 1), "policy_ms": round(policy, 1)})
            print(f"{group:13} {name[:28]:28} none {none:8.1f} ms  policy {policy:8.1f} ms  ×{policy / none:5.2f}")
    finally:
        plain.close()
        guarded.close()
        server.shutdown()
        demo.close()
    groups: dict[str, dict[str, float]] = {}
    for g in ("demo", "real-pages", "real-pages-2", "total"):
        sel = [r for r in rows if g in ("total", r["group"])]
        none, policy = sum(r["none_ms"] for r in sel), sum(r["policy_ms"] for r in sel)
        per_page = statistics.median(r["policy_ms"] / r["none_ms"] for r in sel)
        groups[g] = {
            "pages": len(sel),
            "none_ms": round(none, 1),
            "policy_ms": round(policy, 1),
            "ratio": round(policy / none, 3),
            "median_page_ratio": round(per_page, 3),
        }
        print(
            f"{g:13} {len(sel):3} pages  none {none:9.1f} ms  policy {policy:9.1f} ms  ×{policy / none:5.3f}"
            f"  (median page ×{per_page:5.3f})"
        )
    path = save("origin_policy", {"runs": opts.runs, "policy": POLICY, "groups": groups, "pages": rows})
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
