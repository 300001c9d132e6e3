"""Strict JSON in and out (issue 16: 1, 2): argument checks, the writers' encoding, calls that used to raise."""

from __future__ import annotations

import enum
import json
import math
from pathlib import Path
from typing import Any

import pytest

import ocnb
from ocnb.audit.jsonl import dumps_line
from ocnb.dispatch import dispatch
from ocnb.jsonsafe import MAX_ARG_DEPTH, check_args, fix_text, has_nonfinite, is_strict_json, strict_copy, strict_dumps


class _Flag(int, enum.Enum):
    ON = 1


def deep(n: int) -> Any:
    value: Any = 1
    for _ in range(n):
        value = [value]
    return value


def strict_loads(line: bytes) -> Any:
    return json.loads(line.decode("utf-8"), parse_constant=lambda c: pytest.fail(f"non-strict constant {c}"))


def test_fix_text_joins_pairs_and_replaces_lone_surrogates() -> None:
    assert fix_text("plain ✓") == "plain ✓"
    assert fix_text("a\ud800b") == "a\ufffdb"
    assert fix_text("\ud83d\ude00") == "😀"
    assert fix_text("\udfff\ud800") == "\ufffd\ufffd"


@pytest.mark.parametrize(
    ("args", "path", "fragment"),
    [
        ({"t": math.nan}, "$.t", "NaN is not a JSON number"),
        ({"t": [1, math.inf]}, "$.t[1]", "Infinity is not a JSON number"),
        ({"p": {"pad": -math.inf}}, "$.p.pad", "-Infinity is not a JSON number"),
        ({"s": "x\ud800"}, "$.s", "lone surrogate"),
        ({"\udc00": 1}, "$", "key is not valid Unicode"),
        ({1: 2}, "$", "keys must be strings"),
        ({"n": 2**64}, "$.n", "integer out of range"),
        ({"d": deep(3000)}, "$.d", f"nested deeper than {MAX_ARG_DEPTH}"),
        ({"l": list(range(100_001))}, "$", "more than 100000 values"),
    ],
)
def test_check_args_names_each_problem(args: dict[Any, Any], path: str, fragment: str) -> None:
    copy, problems = check_args(args)
    assert any(p["path"].startswith(path) and fragment in p["message"] for p in problems), problems
    assert is_strict_json(copy, max_depth=MAX_ARG_DEPTH + 1)  # what the journal records is strict


def test_check_args_keeps_good_arguments_as_given() -> None:
    args = {"url": "https://example.org/?q=é", "n": 3, "x": 1.5, "ok": True, "none": None, "l": [1, {"a": "b"}]}
    copy, problems = check_args(args)
    assert problems == [] and copy == args and copy is not args
    assert check_args({"t": (1, 2)}) == ({"t": [1, 2]}, [])
    assert check_args({"depth": deep(MAX_ARG_DEPTH - 1)})[1] == []


@pytest.mark.parametrize(
    "args",
    [
        {"expression": "1 + 1", "tab_id": "t1", "to_file": False},
        {"n": 2**63, "m": -(2**63), "x": 0.0, "none": None, "ok": True, "é": "ü ✓"},
        {"big": 2**63 + 1},
        {"nan": math.nan},
        {"inf": -math.inf},
        {"lone": "a\ud800b"},
        {"\udfffkey": 1},
        {1: "a non-string key"},
        {"obj": object},
        {"flag": _Flag.ON},
    ],
)
def test_flat_arguments_are_checked_as_the_walk_checks_them(args: dict[Any, Any]) -> None:
    """Flat arguments take a shortcut past the walk: the same copy and the same problems."""
    from ocnb.jsonsafe import MAX_ARG_VALUES, MAX_INT, _walk

    problems: list[dict[str, str]] = []
    walked = _walk(args, max_depth=MAX_ARG_DEPTH, max_values=MAX_ARG_VALUES, problems=problems, max_int=MAX_INT)
    copy, found = check_args(args)
    assert (copy, found) == (walked, sorted(problems, key=lambda p: (p["path"], p["message"])))
    assert [type(v) for v in copy.values()] == [type(v) for v in walked.values()]
    assert copy is not args


def test_strict_copy_and_dumps_never_emit_non_strict_json() -> None:
    loop: list[Any] = []
    loop.append(loop)
    nasty = {"nan": math.nan, "inf": [math.inf, -math.inf], "s": "\ud800", "deep": deep(3000), "big": 10**5000}
    nasty["loop"] = loop
    nasty["obj"] = object()
    text = strict_dumps(nasty, ensure_ascii=False)
    obj = strict_loads(text.encode("utf-8"))
    assert obj["nan"] == "NaN" and obj["inf"] == ["Infinity", "-Infinity"] and obj["s"] == "\ufffd"
    assert obj["big"].startswith("<integer of")
    assert strict_dumps({"t": "a\ud800"}) == '{"t": "a\\ufffd"}'  # not escaped as \ud800 by ensure_ascii
    assert not has_nonfinite(strict_copy({"a": [math.nan]}))
    assert has_nonfinite({"a": [{"b": math.inf}]}) and not has_nonfinite({"a": "NaN"})


def test_dumps_line_is_byte_stable_and_strict() -> None:
    assert dumps_line({"a": 1, "é": "✓"}) == '{"a":1,"é":"✓"}\n'.encode()
    line = dumps_line({"v": math.nan, "t": "a\ud800"})
    assert strict_loads(line) == {"v": "NaN", "t": "a\ufffd"}


# --------------------------------------------------------------------------------------------
# Calls that used to raise out of Session.call / dispatch (refused before the browser starts)


@pytest.fixture
def idle_session(ocnb_home: Path) -> Any:
    s = ocnb.Session(home=ocnb_home)
    yield s
    s.close()


def test_calls_that_used_to_raise_return_specific_codes(idle_session: Any) -> None:
    s = idle_session
    cases: list[tuple[Any, Any, str]] = [
        ("navigate", {"url": deep(3000)}, "INVALID_ARGUMENT"),
        ("navigate", {"url": "\ud800"}, "INVALID_ARGUMENT"),
        ("wait_for", {"timeout_ms": 1e30}, "INVALID_ARGUMENT"),
        ("wait_for", {"timeout_ms": math.nan}, "INVALID_ARGUMENT"),
        ("form_input", {"ref": "ax_1", "value": math.nan}, "INVALID_ARGUMENT"),
        ("execute_plan", {"steps": [{"tool": "tabs_context"}], "params": {"pad": math.inf}}, "INVALID_ARGUMENT"),
        ("", {}, "UNKNOWN_TOOL"),
        ("\ud800", {}, "UNKNOWN_TOOL"),
        (["not", "a", "name"], {}, "UNKNOWN_TOOL"),
        ("navigate", {1: "x"}, "INVALID_ARGUMENT"),
    ]
    for tool, args, code in cases:
        result = s.call(tool, args)
        assert not result.ok and result.error.code == code, (tool, result)
        json.loads(json.dumps(result.to_dict(), allow_nan=False))  # the result itself is strict
    for bad in ([1], "navigate", 5, ("a", "b")):
        result = dispatch(s, "navigate", bad)  # type: ignore[arg-type]
        assert result.error is not None and result.error.code == "INVALID_ARGUMENT"
        assert s.call("navigate", bad).error.code == "INVALID_ARGUMENT"  # type: ignore[union-attr]
    assert not s.started  # refused before anything ran: no browser was started
    lines = [strict_loads(line) for p in (s.home / "journal").glob("*.jsonl") for line in p.read_bytes().splitlines()]
    # one strict line per call, except the call without a name (nothing to journal it under)
    assert len(lines) == len(cases) - 1 + 8
    assert {"args": {"url": "\ufffd"}}.items() <= lines[1].items()
    assert lines[3]["args"] == {"timeout_ms": "NaN"}


def _nested_cases() -> list[Any]:
    """Nested arguments: clean ones (a replay step's shape, tuples, the depth limit) and ones with one
    thing to fix or report somewhere deep (which the fast copy must leave to the walk)."""
    step = {"kind": "fill", "args": {"value": "Ada"}, "selectors": [{"type": "css", "value": "#a"}], "n": [1, 2.5]}
    bad: list[Any] = [math.nan, math.inf, "a\ud800b", 2**63 + 1, _Flag.ON, object, (1, "x"), True, None, 2**63]
    cases: list[Any] = [{"step": step, "tolerate": ["name"]}, {"t": ({"a": (1, 2)},)}, {"d": deep(MAX_ARG_DEPTH - 1)}]
    cases.append({"d": deep(MAX_ARG_DEPTH)})
    cases += [{"step": {**step, "args": {"value": v}}} for v in bad]
    cases += [{"l": [{"k": [v]}]} for v in bad]
    cases += [{"step": {**step, "fingerprint": {1: "non-string key"}}}, {"s": {"\udfffkey": [1]}}]
    return cases


@pytest.mark.parametrize("args", _nested_cases())
def test_nested_arguments_are_checked_as_the_walk_checks_them(args: dict[Any, Any]) -> None:
    """Nested arguments without a problem take a shortcut past the walk too: the same copy (a new one,
    tuples as lists) and the same problems as the walk gives, for clean and unclean values alike."""
    from ocnb.jsonsafe import MAX_ARG_VALUES, MAX_INT, _walk

    problems: list[dict[str, str]] = []
    walked = _walk(args, max_depth=MAX_ARG_DEPTH, max_values=MAX_ARG_VALUES, problems=problems, max_int=MAX_INT)
    copy, found = check_args(args)
    assert (copy, found) == (walked, sorted(problems, key=lambda p: (p["path"], p["message"])))
    assert json.dumps(copy, default=repr) == json.dumps(walked, default=repr)  # lists, not tuples, the same types

    def containers(v: Any) -> list[int]:
        inner = v.values() if isinstance(v, dict) else v if isinstance(v, list | tuple) else []
        return [id(v)] + [i for x in inner for i in containers(x)] if isinstance(v, dict | list | tuple) else []

    assert not set(containers(copy)) & set(containers(args)), "the copy shares a container with the arguments"


def test_more_values_than_the_limit_are_refused_however_nested() -> None:
    from ocnb.jsonsafe import MAX_ARG_VALUES

    _, problems = check_args({"rows": [[1, 2]] * (MAX_ARG_VALUES // 3 + 1)})
    assert problems == [{"path": "$", "message": f"more than {MAX_ARG_VALUES} values"}]
