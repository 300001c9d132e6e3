"""Strict JSON at the edges: what a caller may pass in, and what ocnb may write out.

A tool call's arguments must be *strict* JSON (RFC 8259): finite numbers, valid Unicode, string
keys, bounded depth. :func:`check_args` walks them without recursion (so 3,000 levels of nesting
cannot overflow the stack), returns a copy fit for the audit trail and names every problem.
:func:`strict_copy` makes any value strict-JSON-able (for results coming back from a page and for
the journal/trace writers' fallback): lone surrogates become U+FFFD, ``NaN``/``±Infinity`` become
the strings ``"NaN"``/``"Infinity"``/``"-Infinity"``, deeper levels than allowed become ``"…"``.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = [
    "MAX_ARG_DEPTH",
    "MAX_ARG_VALUES",
    "check_args",
    "fix_text",
    "has_nonfinite",
    "is_strict_json",
    "strict_copy",
    "strict_dumps",
]

#: Nesting deeper than this is refused in arguments (no tool takes more than a few levels).
MAX_ARG_DEPTH = 64
#: More values (strings, numbers, … counted at every depth) than this are refused in arguments.
MAX_ARG_VALUES = 100_000
#: Integers beyond ±2**63 are refused in arguments (no tool takes one; JSON peers cannot hold them).
MAX_INT = 2**63
#: What stands in for a value cut off below the depth or size limit.
ELIDED = "…"
#: :func:`is_strict_json`'s encoder, made once (``json.dumps`` with options builds one per call).
_STRICT = json.JSONEncoder(ensure_ascii=False, allow_nan=False, default=str, check_circular=False)


def fix_text(text: str) -> str:
    """``text`` as valid Unicode: a surrogate pair is joined, a lone surrogate becomes U+FFFD."""
    if text.isascii():  # O(1) in CPython: the common case, without encoding anything
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _nonfinite(value: float) -> str:
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


def _key_path(path: str, key: Any) -> str:
    return f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}"


def _walk(
    value: Any, *, max_depth: int, max_values: int, problems: list[dict[str, str]] | None, max_int: int | None
) -> Any:
    """The strict copy of ``value`` (iteratively); appends problems when ``problems`` is a list."""

    def problem(path: str, message: str) -> None:
        if problems is not None and len(problems) < 50:
            problems.append({"path": path, "message": message})

    holder: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int, str]] = [(value, holder, 0, 0, "$")]
    count = 0
    too_many = False
    while stack:
        src, parent, key, depth, path = stack.pop()
        count += 1
        if count > max_values:
            if not too_many:
                problem("$", f"more than {max_values} values")
                too_many = True
            parent[key] = ELIDED
            continue
        if isinstance(src, str):
            fixed = fix_text(src)
            if fixed is not src:
                problem(path, "string is not valid Unicode (lone surrogate)")
            parent[key] = fixed
        elif isinstance(src, bool) or src is None:
            parent[key] = src
        elif isinstance(src, int):
            if max_int is not None and not -max_int <= src <= max_int:
                problem(path, f"integer out of range (more than {max_int.bit_length() - 1} bits)")
                parent[key] = f"<integer of {src.bit_length()} bits>"
            elif src.bit_length() > 13_000:  # beyond Python's int→str limit: json.dumps would raise
                parent[key] = f"<integer of {src.bit_length()} bits>"
            else:
                parent[key] = int(src)
        elif isinstance(src, float):
            if math.isfinite(src):
                parent[key] = float(src)
            else:
                spelled = _nonfinite(src)
                problem(path, f"{spelled} is not a JSON number (numbers must be finite)")
                parent[key] = spelled
        elif isinstance(src, dict | list | tuple):
            if depth >= max_depth:
                problem(path, f"nested deeper than {max_depth} levels")
                parent[key] = ELIDED
                continue
            if isinstance(src, dict):
                out: dict[str, Any] = {}
                parent[key] = out
                children = []
                for k, v in src.items():
                    if isinstance(k, str):
                        sk = fix_text(k)
                        if sk is not k:
                            problem(path, "key is not valid Unicode (lone surrogate)")
                    else:
                        problem(path, f"object keys must be strings, not {type(k).__name__}")
                        sk = fix_text(k if isinstance(k, str) else repr(k))
                    out[sk] = None
                    children.append((v, out, sk, depth + 1, _key_path(path, sk) if depth < 16 else path))
                stack.extend(reversed(children))
            else:
                items: list[Any] = [None] * len(src)
                parent[key] = items
                stack.extend(
                    (v, items, i, depth + 1, _key_path(path, i) if depth < 16 else path)
                    for i, v in reversed(list(enumerate(src)))
                )
        else:
            # Not a JSON type (a Python caller's object): kept in arguments, spelled as text on disk.
            parent[key] = src if problems is not None else fix_text(str(src))
    return holder[0]


def check_args(args: Any) -> tuple[Any, list[dict[str, str]]]:
    """A strict copy of a call's arguments and every problem found, as ``{path, message}``.

    Problems: non-finite numbers, lone surrogates, non-string keys, nesting deeper than
    :data:`MAX_ARG_DEPTH`, more than :data:`MAX_ARG_VALUES` values, integers beyond ±2**63. With no
    problem the copy equals the arguments (tuples become lists; other objects are kept as given).
    """
    flat = _flat_copy(args)
    if flat is not None:
        return flat, []
    try:
        return _clean_copy(args, 0, [0]), []
    except _Unclean:
        pass
    problems: list[dict[str, str]] = []
    copy = _walk(args, max_depth=MAX_ARG_DEPTH, max_values=MAX_ARG_VALUES, problems=problems, max_int=MAX_INT)
    problems.sort(key=lambda p: (p["path"], p["message"]))
    return copy, problems


def _flat_copy(args: Any) -> dict[str, Any] | None:
    """The copy :func:`check_args` makes of a flat object of strings, booleans, nulls and numbers that
    need no fixing (most calls), made without the walk; None for anything else."""
    if type(args) is not dict or len(args) > 256:
        return None
    for key, value in args.items():
        if type(key) is not str or fix_text(key) is not key:
            return None
        kind = type(value)
        if kind is str:
            if fix_text(value) is not value:
                return None
        elif kind is int:
            if not -MAX_INT <= value <= MAX_INT:
                return None
        elif kind is float:
            if not math.isfinite(value):
                return None
        elif kind is not bool and value is not None:
            return None
    return dict(args)


class _Unclean(Exception):  # noqa: N818 - a signal inside check_args, never seen outside
    """The value needs the full walk (something to fix or report, or a type the fast copy leaves to it)."""


def _clean_copy(value: Any, depth: int, count: list[int]) -> Any:
    """The copy :func:`check_args` makes of nested arguments that need no fixing (plain dicts, lists,
    tuples, strings, booleans, nulls, ints and floats within the limits), made recursively without
    the walk's bookkeeping; raises :class:`_Unclean` for anything else, which the walk then handles."""
    count[0] += 1
    if count[0] > MAX_ARG_VALUES:
        raise _Unclean
    kind = type(value)
    if kind is str:
        if fix_text(value) is not value:
            raise _Unclean
        return value
    if kind is bool or value is None:
        return value
    if kind is int:
        if not -MAX_INT <= value <= MAX_INT:
            raise _Unclean
        return value
    if kind is float:
        if not math.isfinite(value):
            raise _Unclean
        return value
    if kind is dict:
        if depth >= MAX_ARG_DEPTH:
            raise _Unclean
        out = {}
        for k, v in value.items():
            if type(k) is not str or fix_text(k) is not k:
                raise _Unclean
            out[k] = _clean_copy(v, depth + 1, count)
        return out
    if kind is list or kind is tuple:
        if depth >= MAX_ARG_DEPTH:
            raise _Unclean
        return [_clean_copy(v, depth + 1, count) for v in value]
    raise _Unclean


def strict_copy(value: Any, *, max_depth: int = 200) -> Any:
    """``value`` made strict-JSON-able (see the module docstring); other objects become their ``str``."""
    return _walk(value, max_depth=max_depth, max_values=10**9, problems=None, max_int=None)


def is_strict_json(value: Any, *, max_depth: int = 200) -> bool:
    """Whether ``value`` is already strict JSON (finite numbers, valid Unicode, not too deep)."""
    try:
        _STRICT.encode(value).encode("utf-8")
    except (ValueError, RecursionError, TypeError):
        return False
    return _depth_ok(value, max_depth)


def _depth_ok(value: Any, max_depth: int) -> bool:
    stack = [(value, 0)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict):
            if d >= max_depth:
                return False
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list | tuple):
            if d >= max_depth:
                return False
            stack.extend((x, d + 1) for x in v)
    return True


def strict_dumps(obj: Any, **kwargs: Any) -> str:
    """``json.dumps`` that can only produce strict JSON: a value it would refuse, or spell as
    ``NaN``, is first made strict with :func:`strict_copy`. Keyword arguments go to ``json.dumps``."""
    kwargs["allow_nan"] = False
    kwargs.setdefault("default", str)
    try:
        text = json.dumps(obj, **{**kwargs, "ensure_ascii": False})
        text.encode("utf-8")  # a lone surrogate fails here (ensure_ascii would escape it as \ud800)
        return json.dumps(obj, **kwargs) if kwargs.get("ensure_ascii", True) else text
    except (ValueError, RecursionError, TypeError):  # UnicodeEncodeError is a ValueError
        return json.dumps(strict_copy(obj), **kwargs)


def has_nonfinite(value: Any) -> bool:
    """Whether a parsed JSON value holds ``NaN`` or ``±Infinity`` anywhere (iteratively, any depth)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, float):
            if not math.isfinite(v):
                return True
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list | tuple):
            stack.extend(v)
    return False
