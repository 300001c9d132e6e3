"""Secrets from a dotenv file, used in tool arguments as ``${SECRET:NAME}``.

The values enter a call only inside dispatch (:meth:`SecretStore.substitute`, just before the
handler) and leave through :meth:`SecretStore.mask`, which writes each value back as its
placeholder — longest value first, so a secret that contains another is never half-masked.
Nothing here ever prints, logs or reprs a value: ``repr(store)`` shows names only.

A value is masked in every spelling a browser, a server or a serializer gives it, even mixed within
one occurrence (each character may be spelled differently):

- as written; URL-encoded (``quote``/``quote_plus``, ``+`` for a space, upper- or lower-case hex,
  and encoded twice, ``%2520``); HTML-escaped (``&amp;``, ``&lt;``, ``&#38;``, ``&#x26;``…);
  JSON- or JavaScript-escaped (``\\"``, ``\\/``, ``\\u0026``, surrogate pairs…);
- a prefix of at least :data:`MIN_PREFIX` characters cut at a truncation boundary: just before an
  ellipsis (``…``, ``...``) or a truncation marker, or at the end of a text the caller says was cut
  (:meth:`SecretStore.mask_text` with ``truncated=True``);
- the transforms that are cheap to compute — upper and lower case, reversed, base64 (standard and
  URL-safe, at any offset, e.g. inside ``Basic`` credentials) and hex — for values of at least
  :data:`MIN_TRANSFORM` characters (shorter ones would match ordinary text).

A page can transform a value in ways no masker can follow (encrypt it, split it, encode it twice in
base64): that cannot be masked in general, and the README says so.

A secret may be bound to origins (``PASS.origins=https://login.example.com; https://*.example.org`` in
the file, :meth:`SecretStore.bind` in Python): :mod:`ocnb.audit.secret_origins` then lets its value go
only where it can reach nothing but those origins. A secret with no binding goes wherever it is used.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ocnb.errors import InvalidArgument, MissingSecret
from ocnb.origins import OriginPattern, parse_patterns
from ocnb.placeholders import SECRET_RE, fill_secrets, has_secret_placeholder, map_strings, secret_names, strings

__all__ = [
    "MAX_SECRETS",
    "MIN_PREFIX",
    "MIN_TRANSFORM",
    "PLACEHOLDER_RE",
    "SecretStore",
    "parse_dotenv",
    "placeholder",
    "spellings",
]

#: At most this many names in one store.
MAX_SECRETS = 100

NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: ``${SECRET:NAME}`` in an argument value (:data:`ocnb.placeholders.SECRET_RE`).
PLACEHOLDER_RE = SECRET_RE
_LINE_RE = re.compile(r"^(?:export\s+)?([^=\s]*)\s*=\s*(.*)$")
#: ``NAME.origins``: the line that binds secret ``NAME`` to origin patterns.
ORIGINS_SUFFIX = ".origins"
#: A prefix of a secret this long or longer, cut at a truncation boundary, is masked too.
MIN_PREFIX = 6
#: Case variants, the reversed value, base64 and hex are masked for values at least this long.
MIN_TRANSFORM = 6
#: Where a text was cut: an ellipsis or one of ocnb's truncation markers (optionally after spaces).
_BOUNDARY = r"(?=\s*(?:…|\.\.\.|<!-- ocnb: truncated|\[truncated))"
#: Appended to a text the caller says was cut, so that its end is a boundary; removed afterwards.
_CUT_SENTINEL = "…\x00ocnb-cut"
_HTML_NAMED = {"&": "amp", "<": "lt", ">": "gt", '"': "quot", "'": "apos", "\xa0": "nbsp"}
#: The backslash of an escape: one, or two or three when the escape was escaped again (JSON inside
#: JSON: ``\\u00e9`` → ``\\\\u00e9``, ``\\"`` → ``\\\\\\"``). Bounded, never ``\\+``: a run of backslashes
#: must not be split many ways (catastrophic backtracking on a page full of them).
_ESC = r"\\{1,3}"
#: JSON's short escapes, as the character after the backslash(es).
_JSON_SHORT = {'"': '"', "\\": "\\", "/": "/", "\n": "n", "\r": "r", "\t": "t", "\b": "b", "\f": "f"}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "$": "$"}


def placeholder(name: str) -> str:
    """The placeholder that stands for secret ``name``: ``${SECRET:NAME}``."""
    return "${SECRET:" + name + "}"


def _ci(text: str) -> str:
    """``text`` as a regex whose ASCII letters match either case (hex digits, entity names)."""
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isascii() and c.isalpha() else re.escape(c) for c in text)


def _char_pattern(ch: str) -> str:
    """A regex for one character of a secret in any of its spellings (see the module docstring)."""
    alts = [re.escape(ch)]
    if ch.isascii() and ch.isalnum():
        return alts[0]  # no encoder spells a letter or a digit any other way
    data = ch.encode("utf-8", "surrogatepass")
    alts.append("".join("%" + _ci(f"{b:02x}") for b in data))  # URL-encoded
    alts.append("".join("%25" + _ci(f"{b:02x}") for b in data))  # URL-encoded twice
    if ch == " ":
        alts.append(r"\+")  # quote_plus, form bodies
    cp = ord(ch)
    alts.append(f"&\\#0*{cp};")  # HTML numeric references
    alts.append(f"&\\#[xX]0*{_ci(f'{cp:x}')};")
    if ch in _HTML_NAMED:
        alts.append(f"&{_ci(_HTML_NAMED[ch])};?")
    # JSON and JavaScript escapes, behind one backslash or more (JSON inside JSON doubles them).
    if cp > 0xFFFF:  # JSON writes astral characters as a surrogate pair
        hi, lo = 0xD800 + ((cp - 0x10000) >> 10), 0xDC00 + ((cp - 0x10000) & 0x3FF)
        alts.append(_ESC + "[uU]" + _ci(f"{hi:04x}") + _ESC + "[uU]" + _ci(f"{lo:04x}"))
    else:
        alts.append(_ESC + "[uU]" + _ci(f"{cp:04x}"))
    if ch in _JSON_SHORT and ch != "\\":  # a backslash's own escapes: see _run_pattern
        alts.append(_ESC + re.escape(_JSON_SHORT[ch]))
    if cp < 0x80:
        alts.append(_ESC + "[xX]" + _ci(f"{cp:02x}"))  # JavaScript \xHH
    # The character itself last: an escape that starts with it (``\\\\``) is tried whole first.
    return "(?:" + "|".join(dict.fromkeys(alts[1:] + alts[:1])) + ")"


def _b64_cores(value: str) -> list[str]:
    """The base64 text of ``value`` that does not depend on its neighbours, at each offset mod 3.

    Inside a longer base64 text (``user:password`` in Basic credentials) the characters that cover
    only the value's own bits are the same whatever comes before and after it.
    """
    data = value.encode("utf-8", "surrogatepass")
    cores: list[str] = []
    for k in range(3):
        enc = base64.b64encode(b"\0" * k + data + b"\0\0").decode("ascii")
        start, end = -(-8 * k // 6), 8 * (k + len(data)) // 6
        core = enc[start:end]
        if len(core) >= 8:
            cores.append(core)
            cores.append(core.replace("+", "-").replace("/", "_"))
    return list(dict.fromkeys(cores))


def _run_pattern(n: int) -> str:
    """A run of ``n`` backslashes: as written, JSON-escaped (2n), escaped twice (4n), or one by one."""
    one = _char_pattern("\\")  # %5C, &#92;, \u005c … or the backslash itself
    return f"(?:\\\\{{{4 * n}}}|\\\\{{{2 * n}}}|{one}{{{n}}})"


def _units(value: str) -> list[tuple[int, str]]:
    """``value`` as (length, regex) units: one per character, one per run of backslashes."""
    out: list[tuple[int, str]] = []
    for run in re.findall(r"\\+|[^\\]", value):
        out.append((len(run), _run_pattern(len(run)) if run[0] == "\\" else _char_pattern(run)))
    return out


def _secret_pattern(value: str) -> str:
    """One regex for a secret: every spelling, a cut prefix before a boundary, cheap transforms."""
    parts: list[str] = []
    length = 0
    for n, unit in _units(value):
        # The first MIN_PREFIX characters, then each further unit present or a truncation boundary.
        # Once at a boundary, every later step succeeds empty, so the match is the cut prefix.
        parts.append(unit if length < MIN_PREFIX or len(value) <= MIN_PREFIX else f"(?:{unit}|{_BOUNDARY})")
        length += n
    flex = "".join(parts)
    if len(value) < MIN_TRANSFORM:
        return flex
    alts = [f"(?i:{flex})", f"(?i:{re.escape(value[::-1])})"]
    # The one character after a base64 core holds the value's last bits with its neighbour's.
    alts += [re.escape(core) + "[A-Za-z0-9+/_-]?=*" for core in _b64_cores(value)]
    alts.append(_ci(value.encode("utf-8", "surrogatepass").hex()))
    return "|".join(alts)


def spellings(value: str) -> list[str]:
    """Common spellings of ``value`` that :meth:`SecretStore.mask_text` masks (for tests and audits).

    The literal; ``quote`` and ``quote_plus`` with upper- and lower-case hex; HTML-escaped; the
    inside of its JSON string; and, from :data:`MIN_TRANSFORM` characters, upper and lower case,
    reversed and base64. Empty spellings and duplicates are left out.
    """
    import html
    import json
    from urllib.parse import quote, quote_plus

    out = [value]
    for enc in (quote(value, safe=""), quote(value), quote_plus(value)):
        out += [enc, re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), enc)]
    out += [html.escape(value), html.escape(value, quote=False), json.dumps(value)[1:-1]]
    out.append(json.dumps(value, ensure_ascii=True)[1:-1])
    if len(value) >= MIN_TRANSFORM:
        raw = value.encode("utf-8", "surrogatepass")
        out += [value.upper(), value.lower(), value[::-1], base64.b64encode(raw).decode("ascii")]
        out.append(base64.urlsafe_b64encode(raw).decode("ascii").rstrip("="))
    return [s for s in dict.fromkeys(out) if s]


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
    (never the value). A later definition of a name wins. A ``NAME.origins`` line (the origins
    ``NAME`` is bound to) comes back under that key; :meth:`SecretStore.load_dotenv` reads it.
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
        if not NAME_RE.fullmatch(name.removesuffix(ORIGINS_SUFFIX)):
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


class _Masker:
    """The regex of one secret and the needles that must occur in a text it can match."""

    def __init__(self, value: str, name: str) -> None:
        self.replacement = placeholder(name)
        self.regex = re.compile(f"(?P<keep>{PLACEHOLDER_RE.pattern})|{_secret_pattern(value)}")
        # ASCII letters and digits have one spelling (either case), so a run of them is in every
        # spelling of the value, and the first characters' run in every cut prefix.
        needles = [_longest_run(value), _longest_run(value[:MIN_PREFIX])]
        if len(value) >= MIN_TRANSFORM:
            needles += [needles[0][::-1], value.encode("utf-8", "surrogatepass").hex()]
            needles += [core.lower() for core in _b64_cores(value)]
        self.needles = None if "" in needles[:2] else list(dict.fromkeys(needles))

    def apply(self, text: str, folded: str) -> str:
        """``text`` with this secret masked; ``folded`` is the lower-case text, for the quick check."""
        if self.needles is not None and not any(n in folded for n in self.needles):
            return text
        return self.regex.sub(self._replace, text)

    def _replace(self, m: re.Match[str]) -> str:
        return m.group(0) if m.group("keep") is not None else self.replacement


def _longest_run(value: str) -> str:
    """The longest run of ASCII letters and digits in ``value``, lower case ("" when none)."""
    runs = re.findall(r"[A-Za-z0-9]+", value)
    return max(runs, key=len).lower() if runs else ""


class SecretStore:
    """Named secret values; substitutes placeholders in, masks literal values out.

    One store lives as long as its session and may be filled later (:meth:`load_dotenv`,
    :meth:`update`); the journal and the trace hold a reference and always mask with the
    current contents.
    """

    def __init__(self, values: Mapping[str, str] | None = None) -> None:
        self._values: dict[str, str] = {}
        self._origins: dict[str, tuple[OriginPattern, ...]] = {}
        self._maskers: list[_Masker] = []  # longest value first
        if values:
            self.update(values)

    @classmethod
    def from_dotenv(cls, path: str | os.PathLike[str]) -> SecretStore:
        """A store read from a dotenv file (see :func:`parse_dotenv`)."""
        store = cls()
        store.load_dotenv(path)
        return store

    def load_dotenv(self, path: str | os.PathLike[str]) -> list[str]:
        """Add the secrets of a dotenv file, and their ``NAME.origins`` bindings; return the names it defined.

        A binding of a secret neither the file nor the store holds, or a malformed pattern, is
        ``INVALID_ARGUMENT`` naming it, and nothing of the file is loaded.
        """
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InvalidArgument(f"secrets file not found: {path}") from None
        parsed = parse_dotenv(text, source=str(path))
        values = {k: v for k, v in parsed.items() if not k.endswith(ORIGINS_SUFFIX)}
        bindings: dict[str, tuple[OriginPattern, ...]] = {}
        for key, raw in parsed.items():
            if not key.endswith(ORIGINS_SUFFIX):
                continue
            name = key.removesuffix(ORIGINS_SUFFIX)
            if name not in values and name not in self._values:
                raise InvalidArgument(f"{path}: {key} binds an unknown secret {name}", details={"name": name})
            bindings[name] = self._patterns(name, raw, where=f"{path}: {key}")
        self.update(values)
        self._origins.update(bindings)
        return list(values)

    @staticmethod
    def _patterns(name: str, patterns: Any, *, where: str) -> tuple[OriginPattern, ...]:
        try:
            parsed = parse_patterns(patterns)
        except InvalidArgument as exc:
            exc.message = f"{where}: {exc.message}"
            exc.details = {**exc.details, "name": name}
            raise
        if not parsed:
            raise InvalidArgument(f"{where}: no origin pattern", details={"name": name})
        return parsed

    def bind(self, name: str, origins: str | list[str] | tuple[str, ...]) -> None:
        """Bind secret ``name`` to origin patterns (a list, or one ``;``-separated string).

        From then on its value goes only where it can reach nothing but those origins. An unknown
        name or a malformed pattern is ``INVALID_ARGUMENT``, and the binding is left as it was.
        """
        if name not in self._values:
            raise InvalidArgument(f"cannot bind an unknown secret {name!r}", details={"name": name})
        self._origins[name] = self._patterns(name, origins, where=f"{name}.origins")

    def origins(self, name: str) -> list[str] | None:
        """The origin patterns secret ``name`` is bound to, as written; ``None`` when it is not bound."""
        bound = self._origins.get(name)
        return None if bound is None else [p.text for p in bound]

    def patterns(self, name: str) -> tuple[OriginPattern, ...] | None:
        """The parsed patterns secret ``name`` is bound to (``None``: not bound, it goes anywhere)."""
        return self._origins.get(name)

    @property
    def bound(self) -> list[str]:
        """The names of the bound secrets that have a value, sorted."""
        return sorted(name for name in self._origins if self._values.get(name))

    def bound_in(self, value: Any) -> list[str]:
        """The bound secrets whose value occurs in a string inside ``value`` (substituted arguments), sorted.

        Read by value, not by placeholder: a plan's steps reach their own calls already substituted.
        """
        if not self._origins:
            return []
        texts = list(strings(value))
        return [name for name in self.bound if any(self._values[name] in text for text in texts)]

    def value_of(self, name: str) -> str:
        """The value of secret ``name``, for the engine that checks where it may go (never for output)."""
        return self._values[name]

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
        # A placeholder already in the text comes first of all, so it is kept as it is.
        pairs = sorted(((v, n) for n, v in self._values.items() if v), key=lambda p: (-len(p[0]), p[1]))
        by_value: dict[str, str] = {}
        for value, name in pairs:
            by_value.setdefault(value, name)
        self._maskers = [_Masker(value, name) for value, name in by_value.items()]

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
        if not has_secret_placeholder(value):
            return []
        return [name for name in secret_names(value) if name not in self._values]

    def substitute(self, value: Any) -> Any:
        """Return ``value`` with every ``${SECRET:NAME}`` replaced by its secret, recursively.

        Only string values inside dicts, lists and tuples are touched (not keys). An unknown name
        raises ``MISSING_SECRET`` listing every unknown name, before anything is replaced. A value
        with no ``${SECRET:`` in any string comes back as it is (the same object, not a copy): one walk
        for the calls that name no secret (most), where the full check walks it twice and copies it.
        """
        if not has_secret_placeholder(value):
            return value
        missing = self.missing(value)
        if missing:
            raise MissingSecret(
                f"unknown secret{'s' if len(missing) > 1 else ''}: {', '.join(missing)}",
                details={"names": missing, "known": self.names},
            )
        return fill_secrets(value, self._values)

    def mask_text(self, text: str, *, truncated: bool = False) -> str:
        """Replace every secret value in ``text``, in any spelling, by its placeholder, longest first.

        ``truncated=True`` says ``text`` was cut at its end: a prefix of a secret of at least
        :data:`MIN_PREFIX` characters there is masked too.
        """
        if not self._maskers or not text:
            return text
        if truncated:
            text += _CUT_SENTINEL
        folded = text.lower()
        for masker in self._maskers:
            text = masker.apply(text, folded)
        return text[: -len(_CUT_SENTINEL)] if truncated else text

    def clip_text(self, text: str, max_len: int) -> str:
        """``text`` masked, then cut to ``max_len`` characters (the cut never leaves part of a secret)."""
        masked = self.mask_text(text)
        return masked if len(masked) <= max_len else self.mask_text(masked[:max_len], truncated=True)

    def mask(self, obj: Any) -> Any:
        """Return a copy of a JSON-able object with secret values masked in every string and key."""
        if not self._maskers:
            return obj
        return map_strings(obj, self.mask_text, keys=True)
