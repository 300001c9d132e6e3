"""Capability discovery on MetaTool: accuracy, speed, memory and per-turn context tokens.

Each of the 199 MetaTool tools becomes a ``CAPABILITY.yaml`` folder (name, kind: tool,
description, plus a one-parameter ``schema.json`` since MetaTool gives no schemas) in a temp
dir, plus ocnb's own registry tools when ``ocnb.registry`` exists. Only descriptions are
indexed; the 2,000 dev queries are used to CHOOSE between retrievers, never to fit anything.

Run: ``.venv/bin/python bench/bench_discovery.py [--corpus ../shared/corpus/metatool]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

import psutil
import yaml

from ocnb import tokens
from ocnb.discovery import DiscoveryEngine
from ocnb.discovery.graph import rerank
from ocnb.discovery.retrievers import (
    BM25Retriever,
    HybridRetriever,
    StaticEmbeddingRetriever,
    load_wordllama,
)

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "metatool"
QUERY_SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}


def write_manifests(tools: dict[str, str], root: Path) -> None:
    for name, desc in tools.items():
        folder = root / name
        folder.mkdir(parents=True)
        doc = {"name": name, "kind": "tool", "description": desc}
        (folder / "CAPABILITY.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
        (folder / "schema.json").write_text(json.dumps(QUERY_SCHEMA), encoding="utf-8")


def registry_tools() -> list:
    """ocnb's own core tools (minus the meta-tools that find tools), when the registry exists."""
    try:
        from ocnb.registry import Registry
    except ImportError:
        return []
    return [t for t in Registry(pilot=False) if t.name not in {"discover_capabilities", "expand_tools"}]


def rank_metrics(engine: DiscoveryEngine, queries: list[dict], use_graph: bool) -> tuple[float, float]:
    engine.build()
    top1 = rec5 = 0
    for q in queries:
        hits = engine.retriever.search(q["query"], engine.candidates)
        ids = [r.id for r in rerank(hits, engine._graph, engine._deps)] if use_graph else [i for i, _ in hits]
        gold = f"tool:{q['tool']}"
        top1 += bool(ids) and ids[0] == gold
        rec5 += gold in ids[:5]
    return top1 / len(queries), rec5 / len(queries)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    args = ap.parse_args()
    tools = json.loads((args.corpus / "tools.json").read_text(encoding="utf-8"))
    queries = [json.loads(line) for line in (args.corpus / "queries-dev.jsonl").open(encoding="utf-8")]
    own = registry_tools()
    proc = psutil.Process()
    rss0 = proc.memory_info().rss
    t = time.perf_counter()
    load_wordllama()
    model_load = time.perf_counter() - t
    rss_model = proc.memory_info().rss

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "capabilities"
        write_manifests(tools, root)
        candidates = {
            "bm25": lambda: BM25Retriever(),
            "wordllama": lambda: StaticEmbeddingRetriever(),
            "hybrid 0.6/0.4": lambda: HybridRetriever([(StaticEmbeddingRetriever(), 0.6), (BM25Retriever(), 0.4)]),
            "hybrid 0.7/0.3": lambda: HybridRetriever([(StaticEmbeddingRetriever(), 0.7), (BM25Retriever(), 0.3)]),
            "hybrid 0.8/0.2": lambda: HybridRetriever([(StaticEmbeddingRetriever(), 0.8), (BM25Retriever(), 0.2)]),
        }
        print(
            f"capabilities: {len(tools)} MetaTool manifests + {len(own)} ocnb registry tools; "
            f"{len(queries)} dev queries"
        )
        print(f"\n{'retriever':16s} {'graph':5s} {'top-1':>6s} {'R@5':>6s}")
        for name, make in candidates.items():
            eng = DiscoveryEngine(tools=own, manifest_roots=[root], retriever=make())
            for g in (False, True):
                t1, r5 = rank_metrics(eng, queries, g)
                print(f"{name:16s} {'yes' if g else 'no':5s} {t1:6.3f} {r5:6.3f}")

        # The default engine, end to end.
        t = time.perf_counter()
        eng = DiscoveryEngine(tools=own, manifest_roots=[root])
        eng.build()
        build = time.perf_counter() - t
        tracemalloc.start()  # memory of a second, identical build (tracemalloc slows it down)
        DiscoveryEngine(tools=own, manifest_roots=[root]).build()
        index_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        uniq = list(dict.fromkeys(q["query"] for q in queries))
        cold, warm, totals, visible1, visible5 = [], [], [], 0, 0
        gold = {q["query"]: f"tool:{q['tool']}" for q in queries}
        for q in uniq:
            t = time.perf_counter()
            res = eng.discover(q)
            cold.append(time.perf_counter() - t)
            t = time.perf_counter()
            eng.discover(q)
            warm.append(time.perf_counter() - t)
            totals.append(res.tokens["total"])
            ids = [e.id for e in res.tier1]
            visible1 += bool(ids) and ids[0] == gold[q]
            visible5 += gold[q] in ids[:5]
            b = eng.budgets
            assert res.tokens["tier0"] <= b.tier0 and res.tokens["tier1"] <= b.tier1
            assert res.tokens["tier2"] <= b.tier2

        descs = eng.descriptors.values()
        dump = [{"name": d.name, "description": d.description, "inputSchema": d.full_schema or {}} for d in descs]
        static = tokens.count_tools(dump)
        avg, mx = statistics.mean(totals), max(totals)
        print("\ndefault engine (hybrid 0.7/0.3 + graph), via discover():")
        print(
            f"  Tier-1 top-1 {visible1 / len(uniq):.3f}, Tier-1 recall@5 {visible5 / len(uniq):.3f} "
            f"({len(uniq)} unique queries)"
        )
        print(
            f"  model load {model_load:.3f} s (once per process); index build {build:.3f} s "
            f"({len(eng.descriptors)} capabilities: manifest scan + embed + BM25 + graph + Tier 0)"
        )
        print(
            f"  discover() median cold {statistics.median(cold) * 1e3:.2f} ms, "
            f"warm {statistics.median(warm) * 1e3:.2f} ms (p95 warm "
            f"{sorted(warm)[int(0.95 * len(warm))] * 1e3:.2f} ms)"
        )
        print(
            f"  memory: RSS +{(rss_model - rss0) / 2**20:.1f} MiB for the model, "
            f"index build peak {index_peak / 2**20:.1f} MiB (tracemalloc)"
        )
        print(
            f"  per-turn context (cl100k_base): mean {avg:.0f}, max {mx} tokens; static dump of all "
            f"{len(dump)} schemas {static} tokens -> {static / avg:.1f}x smaller on average "
            f"({1 - avg / static:.1%} reduction; worst turn {1 - mx / static:.1%})"
        )
        print(
            "  (cl100k counts; no offline tokenizer exists for current Claude models: "
            "Claude figures would be estimates)"
        )
    if os.environ.get("BENCH_SHOW"):
        print(eng.discover(queries[0]["query"]).render_for_prompt())


if __name__ == "__main__":
    main()
