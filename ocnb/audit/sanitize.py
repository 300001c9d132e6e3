"""Make tool arguments safe to store: mask secrets, redact sensitive keys, clip long strings.

Order matters: secret values are masked *before* clipping, so a clip can never cut a secret
in half and leave its first part on disk.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from ocnb.audit.secrets import SecretStore

__all__ = ["MAX_STRING", "REDACTED", "clip", "is_sensitive_key", "sanitize_args"]

#: Strings longer than this are clipped in journal entries.
MAX_STRING = 500
REDACTED = "[REDACTED]"

# Matched against the key in snake_case, lower case. "token" must end the key (token,
# access_token, csrftoken, refreshToken) so that max_tokens or token_budget stay readable.
_SENSITIVE_RE = re.compile(r"password|passwd|secret|api_?key|authorization|cookie|token$")
_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@functools.lru_cache(maxsize=4096)
def is_sensitive_key(key: str) -> bool:
    """Whether a key names a credential (password, passwd, token, secret, api_key, apikey, authorization, cookie)."""
    norm = _CAMEL_RE.sub("_", key).lower().replace("-", "_").replace(" ", "_")
    return _SENSITIVE_RE.search(norm) is not None


def clip(text: str, max_len: int = MAX_STRING) -> str:
    """``text`` cut to ``max_len`` characters plus ``…[+N chars]`` when longer."""
    if len(text) <= max_len:
        return text
    return f"{text[:max_len]}…[+{len(text) - max_len} chars]"


def sanitize_args(args: Any, secrets: SecretStore | None = None, *, max_len: int | None = MAX_STRING) -> Any:
    """A copy of ``args`` fit for a journal or a trace.

    Values under a sensitive key become ``"[REDACTED]"``; literal secret values become
    ``${SECRET:NAME}`` (longest first, in strings at any depth); strings longer than ``max_len``
    are clipped (``max_len=None`` keeps them whole). Tuples become lists; other values are kept.
    """
    # a store without values masks nothing: the walk below then skips it (the same copy, for less work)
    empty = isinstance(secrets, SecretStore) and not len(secrets)
    return _sanitize(args, None if empty else secrets, max_len)


def _sanitize(args: Any, secrets: SecretStore | None, max_len: int | None) -> Any:
    # Leaves first, and a dict before the Mapping ABC (whose isinstance check is several times slower):
    # the same result as asking Mapping first, for less work per value.
    if isinstance(args, str):
        text = secrets.mask_text(args) if secrets is not None else args
        return clip(text, max_len) if max_len is not None else text
    if args is None or isinstance(args, int | float):
        return args
    if isinstance(args, dict) or isinstance(args, Mapping):
        out: dict[Any, Any] = {}
        for key, value in args.items():
            skey = secrets.mask_text(key) if secrets is not None and isinstance(key, str) else key
            if isinstance(key, str) and is_sensitive_key(key) and value is not None:
                out[skey] = REDACTED
            else:
                out[skey] = _sanitize(value, secrets, max_len)
        return out
    if isinstance(args, list | tuple):
        return [_sanitize(v, secrets, max_len) for v in args]
    return args
