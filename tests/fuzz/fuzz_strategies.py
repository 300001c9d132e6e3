"""Hypothesis strategies for tool calls a careless user or an attacker would make.

Wrong types, missing and extra keys, huge and deep values, non-finite numbers, lone surrogates and
NUL bytes — mixed with plausible values, so that some calls run and most are refused at validation
(cheap). Nothing generated may make a call wait long: integers that could be a long timeout or
sleep (200 … 300,000) are moved out of that range.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st
from hypothesis.vendor import pretty as _pretty

from ocnb.registry import ToolDef

NONFINITE = [math.nan, math.inf, -math.inf]
NASTY_STRINGS = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "\ud800",
    "x\udfffy",
    "\ud83d\ude00",
    "é✓𝄞",
    "\n\r\t",
    "${SECRET:NOPE}",
    "${SECRET:",
    "ax_1",
    "ax_999999",
    "t99",
    "#id",
    "//[",
    "xpath=//[",
    "*",
    "<script>alert(1)</script>",
    "javascript:alert(1)",
    "file:///etc/passwd",
    "../../etc/passwd",
    "/nonexistent/\x00/x",
    "back",
    "x" * 121,
    "NaN",
    "Infinity",
    "__proto__",
]
NASTY_KEYS = ["", "\x00", "\ud800", "intent", "extra", "tab_id", "timeout_ms", "__proto__", "constructor", "args"]


def _no_long_wait(v: int) -> int:
    return v + 300_001 if 200 <= v <= 300_000 else v


def _deep(n: int) -> Any:
    value: Any = "bottom"
    for i in range(n):
        value = [value] if i % 2 else {"d": value}
    return value


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70).map(_no_long_wait),
    st.sampled_from([0, -1, 1, 2**31, 2**63, 2**64, -(2**63) - 1, 10**400]),
    st.floats().map(lambda f: f if not (200 <= f <= 300_000) else f * 1e6),
    st.sampled_from(NONFINITE),
    st.text(max_size=12),
    st.text(alphabet=st.characters(categories=["Cs", "Cc", "Co", "Zs"]), max_size=6),
    st.sampled_from(NASTY_STRINGS),
)
huge = st.sampled_from(["x" * 60_000, list(range(3000)), "y" * 5000])
#: Built once: building 3,000 levels per example would cost more than the call it feeds.
DEPTHS = (63, 64, 65, 66, 200, 999, 1001, 3000)
DEEP = [_deep(n) for n in DEPTHS]
deep = st.sampled_from(DEEP)


def _printed_as_built(n: int) -> Any:
    return lambda _value, printer, _cycle: printer.text(f"_deep({n})")


# Hypothesis prints a failing example's arguments with a recursive printer, which a value 999 levels
# deep overflows: the failure was then reported as a RecursionError, its own cause lost (CI, once).
# Each deep value is printed as the call that built it (by identity: hypothesis's per-object printers).
for _n, _value in zip(DEPTHS, DEEP, strict=True):
    _pretty._singleton_pprinters[id(_value)] = _printed_as_built(_n)
values = st.one_of(
    st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
        max_leaves=8,
    ),
    huge,
    deep,
)


def _plausible(name: str, spec: dict[str, Any], urls: list[str], tool_names: list[str]) -> st.SearchStrategy[Any]:
    """A value of the property's type (mostly within its limits), or one just outside them."""
    if "enum" in spec:
        return st.sampled_from(spec["enum"])
    types = spec.get("type", "string")
    types = types if isinstance(types, list) else [types]
    out: list[st.SearchStrategy[Any]] = []
    for t in types:
        if name == "intent":
            out.append(st.text(min_size=0, max_size=130) | st.sampled_from(["", "x" * 120, "x" * 121]))
        elif name in ("url",):
            out.append(st.sampled_from(urls))
        elif name == "tool":
            out.append(st.sampled_from(tool_names))
        elif name == "expression":
            out.append(st.sampled_from(["1 + 1", "document.title", "() => NaN", "() => [Infinity, -0]", "(", "\x00"]))
        elif t == "string":
            out.append(st.text(max_size=10) | st.sampled_from(NASTY_STRINGS))
        elif t == "integer":
            lo = spec.get("minimum", -3)
            out.append(st.integers(min_value=lo - 1, max_value=lo + 50))
        elif t == "number":
            out.append(st.floats(min_value=-10, max_value=10) | st.sampled_from(NONFINITE))
        elif t == "boolean":
            out.append(st.booleans())
        elif t == "array":
            out.append(st.lists(st.text(max_size=6) | scalars, max_size=3))
        elif t == "object":
            out.append(st.dictionaries(st.text(max_size=6), scalars, max_size=3))
        else:
            out.append(values)
    return st.one_of(*out)


def tool_args(tooldef: ToolDef, urls: list[str], tool_names: list[str]) -> st.SearchStrategy[Any]:
    """Arguments for one tool: its own keys with plausible or nasty values (required ones sometimes
    missing), sometimes extra keys, sometimes not an object at all."""
    props: dict[str, Any] = tooldef.input_schema.get("properties", {})
    keyed = st.fixed_dictionaries(
        {},
        optional={
            name: st.one_of(_plausible(name, spec, urls, tool_names), _plausible(name, spec, urls, tool_names), values)
            for name, spec in sorted(props.items())
        },
    )
    extra = st.dictionaries(st.sampled_from(NASTY_KEYS) | st.text(max_size=5), values, min_size=1, max_size=2)
    return st.one_of(
        keyed,
        keyed,
        keyed,
        st.tuples(keyed, extra).map(lambda t: {**t[0], **t[1]}),
        values,
    )


def calls(tooldefs: list[ToolDef], urls: list[str]) -> st.SearchStrategy[tuple[Any, Any]]:
    """``(tool name, arguments)``: a registered tool mostly (each as likely), sometimes a name that is not one."""
    names = [t.name for t in tooldefs]
    by_tool = {t.name: tool_args(t, urls, names) for t in tooldefs}
    known = st.sampled_from(names).flatmap(lambda name: st.tuples(st.just(name), by_tool[name]))
    odd_names = st.sampled_from(["", " ", "no_such_tool", "navigate\x00", "\ud800", "x" * 300]) | st.text(max_size=8)
    return st.one_of(known, known, known, known, known, known, st.tuples(odd_names, values))


def wire_safe(value: Any) -> Any:
    """``value`` as a JSON client can send it: no NaN/Infinity, no lone surrogates, string keys,
    not deeper than the SDK's parser takes (NaN and surrogates over the wire have their own tests)."""
    from ocnb.jsonsafe import strict_copy

    clean = strict_copy(value, max_depth=100)
    return clean
