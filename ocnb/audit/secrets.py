"""Secrets from a dotenv file, used in tool arguments as ``${SECRET:NAME}``.

The values enter a call only inside dispatch (:meth:`SecretStore.substitute`, just before the
handler) and leave through :meth:`SecretStore.mask`, which writes each literal value back as its
placeholder — longest value first, so a secret that contains another is never half-masked.
Nothing here ever prints, logs or reprs a value: ``repr(store)`` shows names only.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ocnb.errors import InvalidArgument, MissingSecret

__all__ = ["MAX_SECRETS", "PLACEHOLDER_RE", "SecretStore", "parse_dotenv", "placeholder"]

#: At most this many names in one store.
MAX_SECRETS = 100

NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: ``${SECRET:NAME}`` in an argument value.
PLACEHOLDER_RE = re.compile(r"\$\{SECRET:([A-Za-z_][A-Za-z0-9_]*)\}")
_LINE_RE = re.compile(r"^(?:export\s+)?([^=\s]*)\s*=\s*(.*)$")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "$": "$"}


def placeholder(name: str) -> str:
    """The placeholder that stands for secret ``name``: ``${SECRET:NAME}``."""
    return "${SECRET:" + name + "}"


def _unquote_double(raw: str, where: str) -> tuple[str, str]:
    """Decode a double-quoted value starting after the opening quote; return (value, rest)."""
    out: list[str] = []
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\\" and i + 1 < len(raw):
            out.append(_ESCAPES.get(raw[i + 1], "\\" + raw[i + 1]))
            i += 2
            continue
        if ch == '"':
            return "".join(out), raw[i + 1 :]
        out.append(ch)
        i += 1
    raise InvalidArgument(f"{where}: unterminated double quote")


def parse_dotenv(text: str, *, source: str = "<dotenv>") -> dict[str, str]:
    """Parse dotenv text: ``KEY=VALUE`` lines, optional ``export``, quotes and ``#`` comments.

    Unquoted values end at `` #``; single quotes are literal; double quotes know ``\\n``, ``\\t``,
    ``\\"`` and ``\\\\``. A bad line raises ``INVALID_ARGUMENT`` naming the file and line number
    (never the value). A later definition of a name wins.
    """
    values: dict[str, str] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        where = f"{source}, line {lineno}"
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _LINE_RE.match(stripped)
        if match is None:
            raise InvalidArgument(f"{where}: expected NAME=VALUE")
        name, raw = match.group(1), match.group(2)
        if not NAME_RE.fullmatch(name):
            raise InvalidArgument(f"{where}: invalid secret name (use letters, digits and _, not first a digit)")
        if raw.startswith('"'):
            value, rest = _unquote_double(raw[1:], where)
        elif raw.startswith("'"):
            end = raw.find("'", 1)
            if end < 0:
                raise InvalidArgument(f"{where}: unterminated single quote")
            value, rest = raw[1:end], raw[end + 1 :]
        else:
            value = re.split(r"\s+#", raw, maxsplit=1)[0].strip()
            rest = ""
        rest = rest.strip()
        if rest and not rest.startswith("#"):
            raise InvalidArgument(f"{where}: unexpected text after the closing quote of {name}")
        values[name] = value
        if len(values) > MAX_SECRETS:
            raise InvalidArgument(f"{where}: more than {MAX_SECRETS} secrets")
    return values


class SecretStore:
    """Named secret values; substitutes placeholders in, masks literal values out.

    One store lives as long as its session and may be filled later (:meth:`load_dotenv`,
    :meth:`update`); the journal and the trace hold a reference and always mask with the
    current contents.
    """

    def __init__(self, values: Mapping[str, str] | None = None) -> None:
        self._values: dict[str, str] = {}
        self._mask_re: re.Pattern[str] | None = None
        self._mask_names: dict[str, str] = {}
        if values:
            self.update(values)

    @classmethod
    def from_dotenv(cls, path: str | os.PathLike[str]) -> SecretStore:
        """A store read from a dotenv file (see :func:`parse_dotenv`)."""
        store = cls()
        store.load_dotenv(path)
        return store

    def load_dotenv(self, path: str | os.PathLike[str]) -> list[str]:
        """Add the secrets of a dotenv file; return the names it defined."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InvalidArgument(f"secrets file not found: {path}") from None
        values = parse_dotenv(text, source=str(path))
        self.update(values)
        return list(values)

    def update(self, values: Mapping[str, str]) -> None:
        """Add or replace secrets; names must be identifiers, at most :data:`MAX_SECRETS` in all."""
        for name, value in values.items():
            if not isinstance(name, str) or not NAME_RE.fullmatch(name):
                raise InvalidArgument(f"invalid secret name: {name!r}")
            if not isinstance(value, str):
                raise InvalidArgument(f"secret {name} must be a string")
        merged = {**self._values, **values}
        if len(merged) > MAX_SECRETS:
            raise InvalidArgument(f"more than {MAX_SECRETS} secrets")
        self._values = merged
        self._rebuild()

    def _rebuild(self) -> None:
        # Longest value first: the regex alternation then prefers the longer secret at a position.
        pairs = sorted(((v, n) for n, v in self._values.items() if v), key=lambda p: (-len(p[0]), p[1]))
        self._mask_names = {}
        for value, name in pairs:
            self._mask_names.setdefault(value, name)
        self._mask_re = re.compile("|".join(re.escape(v) for v in self._mask_names)) if self._mask_names else None

    @property
    def names(self) -> list[str]:
        """The secret names, sorted (never the values)."""
        return sorted(self._values)

    def __contains__(self, name: object) -> bool:
        return name in self._values

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"SecretStore(names={self.names!r})"

    __str__ = __repr__

    def __reduce__(self) -> Any:
        raise TypeError("SecretStore cannot be pickled (it would write secret values)")

    def missing(self, value: Any) -> list[str]:
        """Names of placeholders in ``value`` (recursively) that this store does not know."""
        found: set[str] = set()
        _walk_strings(value, lambda s: found.update(PLACEHOLDER_RE.findall(s)))
        return sorted(n for n in found if n not in self._values)

    def substitute(self, value: Any) -> Any:
        """Return ``value`` with every ``${SECRET:NAME}`` replaced by its secret, recursively.

        Only string values inside dicts, lists and tuples are touched (not keys). An unknown name
        raises ``MISSING_SECRET`` listing every unknown name, before anything is replaced.
        """
        missing = self.missing(value)
        if missing:
            raise MissingSecret(
                f"unknown secret{'s' if len(missing) > 1 else ''}: {', '.join(missing)}",
                details={"names": missing, "known": self.names},
            )
        return _map_strings(value, lambda s: PLACEHOLDER_RE.sub(lambda m: self._values[m.group(1)], s), keys=False)

    def mask_text(self, text: str) -> str:
        """Replace every literal secret value in ``text`` by its placeholder, longest first."""
        if self._mask_re is None or not text:
            return text
        return self._mask_re.sub(lambda m: placeholder(self._mask_names[m.group(0)]), text)

    def mask(self, obj: Any) -> Any:
        """Return a copy of a JSON-able object with secret values masked in every string and key."""
        if self._mask_re is None:
            return obj
        return _map_strings(obj, self.mask_text, keys=True)


def _walk_strings(obj: Any, fn: Any) -> None:
    if isinstance(obj, str):
        fn(obj)
    elif isinstance(obj, Mapping):
        for v in obj.values():
            _walk_strings(v, fn)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _walk_strings(v, fn)


def _map_strings(obj: Any, fn: Any, *, keys: bool) -> Any:
    if isinstance(obj, str):
        return fn(obj)
    if isinstance(obj, Mapping):
        return {(fn(k) if keys and isinstance(k, str) else k): _map_strings(v, fn, keys=keys) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_map_strings(v, fn, keys=keys) for v in obj]
    return obj
