"""``${param}`` and ``${SECRET:NAME}`` placeholders in tool arguments: the one place that finds and fills them.

Every face that runs steps with placeholders — ``execute_plan``, skill replay, the secrets layer of
dispatch, task signatures, the exported replay script's parameter list — goes through here, so the
same steps get the same arguments whichever runs them:

- A string that is exactly one ``${param}`` becomes the param's value *with its JSON type*:
  ``"${n}"`` with ``n=3`` gives ``3``, ``"${on}"`` with ``on=False`` gives ``False``, a list stays
  a list. The tool's own schema then decides whether it takes that type.
- Anywhere else a placeholder is interpolated as text: ``"id-${n}"`` gives ``"id-3"``. A string
  param goes in as it is; any other value as its JSON text (``true``, ``null``, ``["a", "b"]``).
- ``${SECRET:NAME}`` is never a param. Secret values are strings; :func:`fill_secrets` puts them in
  (the :class:`~ocnb.audit.secrets.SecretStore` does, just before a handler runs, and masks them
  on the way out).

Values are walked through dicts, lists and tuples (tuples come back as lists); keys are not
touched. Substitution is one pass: a value that itself holds ``${…}`` is not filled again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from .errors import InvalidArgument

__all__ = [
    "PARAM_RE",
    "SECRET_RE",
    "fill_params",
    "fill_secrets",
    "has_secret_placeholder",
    "is_secret_placeholder",
    "map_strings",
    "missing_params",
    "param_names",
    "require_params",
    "secret_names",
    "strings",
]

#: ``${name}`` — a param (never ``${SECRET:…}``); group 1 is the name.
PARAM_RE = re.compile(r"\$\{(?!SECRET:)([A-Za-z_][A-Za-z0-9_]*)\}")
#: ``${SECRET:NAME}``; group 1 is the name.
SECRET_RE = re.compile(r"\$\{SECRET:([A-Za-z_][A-Za-z0-9_]*)\}")


def strings(value: Any) -> Iterator[str]:
    """Every string value inside ``value`` (dicts, lists and tuples, at any depth; not keys), in order.

    A loop over a stack, not a recursive generator: every call's arguments pass here several times
    (:func:`has_secret_placeholder`), and each level of ``yield from`` costs every string below it.
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, Mapping):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, (list, tuple)):
            stack.extend(reversed(item))


def map_strings(value: Any, fn: Callable[[str], Any], *, keys: bool = False) -> Any:
    """A copy of ``value`` with every string ``s`` replaced by ``fn(s)`` (keys too when ``keys``).

    Dicts stay dicts, lists and tuples become lists, anything else is kept as it is.
    """
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, Mapping):
        return {(fn(k) if keys and isinstance(k, str) else k): map_strings(v, fn, keys=keys) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [map_strings(v, fn, keys=keys) for v in value]
    return value


def param_names(value: Any) -> list[str]:
    """The names of the ``${param}`` placeholders in ``value``, sorted, each once."""
    return sorted({name for s in strings(value) for name in PARAM_RE.findall(s)})


def missing_params(value: Any, params: Mapping[str, Any]) -> list[str]:
    """The ``${param}`` names in ``value`` that ``params`` does not give, sorted."""
    return [name for name in param_names(value) if name not in params]


def require_params(value: Any, params: Mapping[str, Any]) -> None:
    """Raise ``INVALID_ARGUMENT`` naming every ``${param}`` in ``value`` that ``params`` does not give."""
    missing = missing_params(value, params)
    if missing:
        raise InvalidArgument(
            f"missing params for ${{…}} placeholders: {', '.join(missing)}", details={"missing": missing}
        )


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def fill_params(value: Any, params: Mapping[str, Any]) -> Any:
    """``value`` with its ``${param}`` placeholders filled from ``params`` (see the module docstring).

    A placeholder ``params`` does not give raises ``KeyError``: call :func:`require_params` first.
    """

    def one(text: str) -> Any:
        whole = PARAM_RE.fullmatch(text)
        if whole:
            return params[whole.group(1)]
        return PARAM_RE.sub(lambda m: _as_text(params[m.group(1)]), text)

    return map_strings(value, one)


def secret_names(value: Any) -> list[str]:
    """The names of the ``${SECRET:NAME}`` placeholders in ``value``, sorted, each once."""
    return sorted({name for s in strings(value) for name in SECRET_RE.findall(s)})


#: What every ``${SECRET:NAME}`` placeholder starts with (a string without it holds none).
SECRET_MARK = "${SECRET:"


def has_secret_placeholder(value: Any) -> bool:
    """Whether any string inside ``value`` (as :func:`strings` walks it) holds ``${SECRET:`` — False
    means :func:`secret_names` is empty and :func:`fill_secrets` would change nothing. No regex: the
    test every call's arguments go through."""
    return any(SECRET_MARK in s for s in strings(value))


def fill_secrets(value: Any, secrets: Mapping[str, str]) -> Any:
    """``value`` with every ``${SECRET:NAME}`` replaced by ``secrets[NAME]`` (a string, always).

    A name ``secrets`` does not hold raises ``KeyError``: check :func:`secret_names` first.
    """
    return map_strings(value, lambda s: SECRET_RE.sub(lambda m: secrets[m.group(1)], s))


def is_secret_placeholder(value: Any) -> bool:
    """Whether ``value`` is exactly one ``${SECRET:NAME}`` (it names a secret; it is not one)."""
    return isinstance(value, str) and SECRET_RE.fullmatch(value) is not None
