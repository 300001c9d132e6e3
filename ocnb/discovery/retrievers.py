"""Retrievers: the seam between the discovery index and a ranking method.

A retriever is fitted on ``(id, text)`` pairs and answers ``search(query, k)`` with
``(id, score)`` pairs, best first, scores in [0, 1]. Shipped: lexical BM25 (own, ~40 lines,
with a light suffix stemmer), a static-embedding retriever on WordLlama (its weights ship in
the wheel; nothing is downloaded), and a weighted hybrid of the two (the default, chosen by
``bench/bench_discovery.py``).
"""

from __future__ import annotations

import functools
import logging
import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "BM25Retriever",
    "HybridRetriever",
    "Retriever",
    "StaticEmbeddingRetriever",
    "default_retriever",
    "load_wordllama",
]

Doc = tuple[str, str]

_STOP = frozenset(
    "a an the and or of to in for on with is are be can you i me my it this that what how do "
    "does please from at by as about some any your we our would like want need help get find "
    "there which who will could should its into also".split()
)
_SUFFIXES = ("ations", "ation", "ings", "ing", "ers", "er", "ies", "es", "s", "ed", "ly")


def _stem(word: str) -> str:
    for suf in _SUFFIXES:
        if word.endswith(suf) and len(word) - len(suf) >= 3:
            return word[: -len(suf)] + ("y" if suf == "ies" else "")
    return word


def _split_camel(text: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|_", " ", text)


def terms(text: str) -> list[str]:
    """Lower-cased, stop-word-free, lightly stemmed terms (camelCase and snake_case split)."""
    words = re.findall(r"\w+", _split_camel(text).lower())
    return [_stem(w) for w in words if w not in _STOP and len(w) > 1]


class Retriever:
    """Base seam: fit on documents, then search. Subclasses keep ``ids`` in fit order."""

    ids: list[str]

    def fit(self, docs: Sequence[Doc]) -> None:
        raise NotImplementedError

    def scores(self, query: str) -> np.ndarray:
        """One score in [0, 1] per fitted document (fit order)."""
        raise NotImplementedError

    def search(self, query: str, k: int = 10) -> list[tuple[str, float]]:
        """The ``k`` best ``(id, score)`` pairs, best first (ties broken by id order)."""
        if not getattr(self, "ids", None):
            return []
        sc = self.scores(query)
        top = np.argsort(-sc, kind="stable")[: max(k, 0)]
        return [(self.ids[i], float(sc[i])) for i in top.tolist()]


class BM25Retriever(Retriever):
    """Okapi BM25 over :func:`terms`; scores divided by the best one (so the top is 1.0)."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.ids = []
        self._post: dict[str, list[tuple[int, float]]] = {}

    def fit(self, docs: Sequence[Doc]) -> None:
        self.ids = [i for i, _ in docs]
        toks = [terms(t) for _, t in docs]
        n = len(toks)
        avg = (sum(map(len, toks)) / n) if n else 1.0
        df = Counter(w for t in toks for w in set(t))
        post: dict[str, list[tuple[int, float]]] = defaultdict(list)
        for i, t in enumerate(toks):
            norm = self.k1 * (1 - self.b + self.b * len(t) / (avg or 1.0))
            for w, c in sorted(Counter(t).items()):
                idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                post[w].append((i, idf * c * (self.k1 + 1) / (c + norm)))
        self._post = dict(post)

    def scores(self, query: str) -> np.ndarray:
        sc = np.zeros(len(self.ids))
        for w in set(terms(query)):
            for i, v in self._post.get(w, ()):
                sc[i] += v
        top = sc.max() if len(sc) else 0.0
        return sc / top if top > 0 else sc


@functools.cache
def load_wordllama() -> Any:
    """WordLlama's ``l2_supercat`` 256-d static embeddings from the installed wheel, offline.

    The wheel ships the weights and the tokenizer file; ``WordLlama.load`` looks for the
    tokenizer under a ``tokenizer/`` folder the wheel does not have, so the package folder is
    passed as the cache dir (whose ``tokenizers/`` matches) and downloads are disabled.
    wordllama calls ``logging.basicConfig`` at import; the root logger is restored after.
    """
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        import wordllama
        from wordllama import WordLlama
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    pkg = Path(wordllama.__file__).parent
    return WordLlama.load(config="l2_supercat", dim=256, cache_dir=pkg, disable_download=True)


class StaticEmbeddingRetriever(Retriever):
    """Cosine similarity of mean-pooled static token embeddings (WordLlama by default).

    Document vectors are cached by text, so re-fitting after a small change embeds only the
    changed documents; query vectors sit in an LRU cache.
    """

    def __init__(self, model: Any = None, cache_size: int = 1024) -> None:
        self._model = model
        self.ids = []
        self._matrix = np.zeros((0, 1), dtype=np.float32)
        self._doc_cache: dict[str, np.ndarray] = {}
        self._embed_query = functools.lru_cache(maxsize=cache_size)(self._embed_one)

    @property
    def model(self) -> Any:
        if self._model is None:
            self._model = load_wordllama()
        return self._model

    def _embed_one(self, text: str) -> np.ndarray:
        return self.model.embed([text], norm=True)[0]

    def fit(self, docs: Sequence[Doc]) -> None:
        self.ids = [i for i, _ in docs]
        texts = [t for _, t in docs]
        todo = sorted({t for t in texts if t not in self._doc_cache})
        if todo:
            for text, vec in zip(todo, self.model.embed(todo, norm=True), strict=True):
                self._doc_cache[text] = vec
        keep = set(texts)
        self._doc_cache = {t: v for t, v in self._doc_cache.items() if t in keep}
        dim = self.model.embedding.shape[1]
        self._matrix = np.stack([self._doc_cache[t] for t in texts]) if texts else np.zeros((0, dim), dtype=np.float32)

    def scores(self, query: str) -> np.ndarray:
        if not self.ids:
            return np.zeros(0)
        return np.clip(self._matrix @ self._embed_query(query), 0.0, 1.0)


class HybridRetriever(Retriever):
    """Weighted sum of several retrievers' scores, each first divided by its own best score
    (so a cosine retriever and BM25 weigh in on the same relative scale)."""

    def __init__(self, parts: Sequence[tuple[Retriever, float]]) -> None:
        self.parts = list(parts)
        self.ids = []

    def fit(self, docs: Sequence[Doc]) -> None:
        self.ids = [i for i, _ in docs]
        for retriever, _ in self.parts:
            retriever.fit(docs)

    def scores(self, query: str) -> np.ndarray:
        total = np.zeros(len(self.ids))
        weight = sum(w for _, w in self.parts) or 1.0
        for retriever, w in self.parts:
            sc = retriever.scores(query)
            top = sc.max() if len(sc) else 0.0
            total += w * (sc / top if top > 0 else sc)
        return total / weight


def default_retriever() -> Retriever:
    """The measured default: 0.7 × WordLlama cosine + 0.3 × BM25 (see bench_discovery)."""
    return HybridRetriever([(StaticEmbeddingRetriever(), 0.7), (BM25Retriever(), 0.3)])
