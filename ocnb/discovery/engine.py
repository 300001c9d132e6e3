"""The discovery engine: index + retriever + graph + tiered assembly, per turn.

``DiscoveryEngine`` holds descriptors from any source (registry tools, recorded skills,
manifests), rebuilds its index lazily when they change (each change bumps ``index_version``),
and answers ``discover(query, kind, category)`` with a token-budgeted ``DiscoveryResult``.
``get_stats()`` (also ``getStats()``) reports what is indexed and which retriever ranks; the
first discovery with a fallback retriever logs once how to get the better one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ocnb.discovery.assembler import Budgets, DiscoveryResult, assemble, tier0_text
from ocnb.discovery.descriptors import (
    CapabilityDescriptor,
    embedding_text,
    from_skills,
    from_tooldefs,
)
from ocnb.discovery.graph import build_graph, rerank
from ocnb.discovery.manifests import ManifestSet, ManifestWatcher
from ocnb.discovery.retrievers import Retriever, default_retriever, notice_fallback, retriever_info

__all__ = ["DiscoveryEngine", "KINDS"]

KINDS = ("tool", "skill", "any")


class DiscoveryEngine:
    """Per-turn capability discovery within token budgets.

    ``retriever`` defaults to the measured hybrid (MiniLM + WordLlama + BM25, by what is
    installed: see :func:`~ocnb.discovery.retrievers.default_retriever`). ``manifest_roots``:
    ``None`` for the standard roots, ``()`` for none. Call ``refresh()`` to re-read sources,
    ``watch()``/``stop()`` for hot reload of manifests.
    """

    def __init__(
        self,
        descriptors: Iterable[CapabilityDescriptor] = (),
        *,
        tools: Iterable[Any] | None = None,
        skills: Iterable[Mapping[str, Any]] | None = None,
        manifest_roots: Sequence[str | Path] | None = (),
        retriever: Retriever | None = None,
        budgets: Budgets = Budgets(),
        top_k: int = 8,
        min_relevance: float = 0.35,
        tier2_count: int = 2,
        candidates: int = 30,
        debounce_ms: int = 500,
    ) -> None:
        self.retriever = retriever if retriever is not None else default_retriever()
        self.budgets, self.top_k, self.min_relevance = budgets, top_k, min_relevance
        self.tier2_count, self.candidates = tier2_count, candidates
        self._lock = threading.RLock()
        self._static: dict[str, CapabilityDescriptor] = {}
        self._manifest_ids: set[str] = set()
        self._all: dict[str, CapabilityDescriptor] = {}
        self.index_version = 0
        self._built_version = -1
        self._tier0 = ""
        self._build_ms: float | None = None
        self._builds = 0
        self._queries = 0
        self.manifests = ManifestSet(manifest_roots) if manifest_roots != () else None
        self._watcher: ManifestWatcher | None = None
        self._debounce_ms = debounce_ms
        self.add(descriptors)
        if tools is not None:
            self.add(from_tooldefs(tools))
        if skills is not None:
            self.add(from_skills(skills))
        if self.manifests is not None:
            self._set_manifests(self.manifests.scan())

    # -- contents -----------------------------------------------------------------------
    def add(self, descriptors: Iterable[CapabilityDescriptor]) -> None:
        """Add or replace descriptors (by id)."""
        with self._lock:
            changed = False
            for d in descriptors:
                if self._static.get(d.id) != d:
                    self._static[d.id] = d
                    changed = True
            if changed:
                self._merge()

    def remove(self, ids: Iterable[str]) -> None:
        """Remove descriptors by id (unknown ids are ignored)."""
        with self._lock:
            if any([self._static.pop(i, None) is not None for i in ids]):
                self._merge()

    def refresh(self) -> None:
        """Re-scan the manifest roots (and rebuild the index on the next query)."""
        with self._lock:
            if self.manifests is not None:
                self._set_manifests(self.manifests.scan())
            self.index_version += 1

    def _set_manifests(self, found: dict[str, CapabilityDescriptor]) -> None:
        with self._lock:
            self._manifest_descs = found
            self._merge()

    def _merge(self) -> None:
        merged = dict(getattr(self, "_manifest_descs", {}))
        merged.update(self._static)  # registry tools and skills win over a manifest of same id
        if merged != self._all:
            self._all = merged
            self.index_version += 1

    def _on_manifest_change(self, folders: set[Path]) -> None:
        assert self.manifests is not None
        with self._lock:
            self._set_manifests(self.manifests.reload(folders))

    @property
    def descriptors(self) -> dict[str, CapabilityDescriptor]:
        """id → descriptor of everything indexed (a copy)."""
        with self._lock:
            return dict(self._all)

    # -- hot reload ---------------------------------------------------------------------
    def watch(self) -> None:
        """Start hot reload of the manifest roots (debounced)."""
        if self.manifests is None:
            raise ValueError("this engine has no manifest roots to watch")
        if self._watcher is None:
            self._watcher = ManifestWatcher(self.manifests, self._on_manifest_change, self._debounce_ms)
            self._watcher.start()

    def stop(self) -> None:
        """Stop hot reload (idempotent)."""
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None

    # -- querying -----------------------------------------------------------------------
    def build(self) -> None:
        """(Re)build the index now if the contents changed since the last build."""
        with self._lock:
            if self._built_version == self.index_version:
                return
            t0 = time.perf_counter()
            descs = [self._all[i] for i in sorted(self._all)]
            self.retriever.fit([(d.id, embedding_text(d)) for d in descs])
            self._graph, self._deps = build_graph(descs)
            self._tier0 = tier0_text(descs, self.budgets.tier0)
            self._built_version = self.index_version
            self._build_ms = round((time.perf_counter() - t0) * 1000, 1)
            self._builds += 1

    def get_stats(self) -> dict[str, Any]:
        """What the engine holds and how it ranks, as JSON.

        ``retriever`` (label of the ranking method), ``retriever_preferred``, ``retriever_fallback``
        and ``retriever_upgrade`` (see :func:`~ocnb.discovery.retrievers.retriever_info`);
        ``total_indexed``, ``by_kind``, ``by_source`` (``registry``, ``skill``, ``manifest``);
        ``index_version``, ``index_built`` (the index matches the contents), ``builds``,
        ``last_build_ms`` (``None`` before the first build) and ``queries``.
        """
        with self._lock:
            descs = list(self._all.values())
            info = retriever_info(self.retriever)
            by_kind: dict[str, int] = {}
            by_source: dict[str, int] = {}
            for d in descs:
                by_kind[d.kind] = by_kind.get(d.kind, 0) + 1
                source = next((p for p in ("registry", "skill") if d.source_ref.startswith(p + ":")), "manifest")
                by_source[source] = by_source.get(source, 0) + 1
            return {
                "retriever": info["retriever"],
                "retriever_preferred": info["preferred"],
                "retriever_fallback": info["fallback"],
                "retriever_upgrade": info["upgrade"],
                "total_indexed": len(descs),
                "by_kind": dict(sorted(by_kind.items())),
                "by_source": dict(sorted(by_source.items())),
                "index_version": self.index_version,
                "index_built": self._built_version == self.index_version,
                "builds": self._builds,
                "last_build_ms": self._build_ms,
                "queries": self._queries,
            }

    getStats = get_stats  # the name the discovery contract uses

    def discover(self, query: str, kind: str = "any", category: str | None = None) -> DiscoveryResult:
        """Tiered context for ``query``, restricted to a kind (tool|skill|any) and category."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
        if self._queries == 0:
            notice_fallback(self.retriever)  # once per process, and only for a weaker default
        with self._lock:
            self._queries += 1
            self.build()
            descs = self._all
            hits = self.retriever.search(query, max(self.candidates, self.top_k))
            hits = [
                (i, s)
                for i, s in hits
                if (kind == "any" or descs[i].kind == kind) and (category is None or descs[i].category == category)
            ]
            ranked = rerank(hits, self._graph, self._deps)
            result = assemble(
                query,
                ranked,
                descs,
                self._tier0,
                self.index_version,
                budgets=self.budgets,
                top_k=self.top_k,
                min_relevance=self.min_relevance,
                tier2_count=self.tier2_count,
            )
            result.retriever = self.retriever.label or type(self.retriever).__name__
            return result
