"""ocnb.placeholders: the one way ${param} and ${SECRET:NAME} are found and filled."""

from __future__ import annotations

import pytest

from ocnb.audit.secrets import SecretStore
from ocnb.errors import InvalidArgument
from ocnb.placeholders import (
    fill_params,
    fill_secrets,
    has_secret_placeholder,
    is_secret_placeholder,
    map_strings,
    missing_params,
    param_names,
    require_params,
    secret_names,
    strings,
)

PARAMS = {"n": 3, "on": False, "tags": ["a", "b"], "x": 1.5, "none": None, "s": "text", "obj": {"k": 1}}


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_a_whole_value_placeholder_keeps_the_params_json_type(name: str) -> None:
    assert fill_params("${" + name + "}", PARAMS) == PARAMS[name]
    assert type(fill_params("${" + name + "}", PARAMS)) is type(PARAMS[name])


def test_inside_a_longer_string_a_param_is_written_as_text() -> None:
    assert fill_params("id-${n}", PARAMS) == "id-3"
    assert fill_params("${s}/${s}", PARAMS) == "text/text"
    # not a string: its JSON text (as a page or a URL would spell it), never Python's repr
    assert fill_params("on=${on}&tags=${tags}&none=${none}", PARAMS) == 'on=false&tags=["a", "b"]&none=null'
    assert fill_params(" ${n}", PARAMS) == " 3"


def test_one_walker_over_nested_dicts_and_lists_keys_untouched() -> None:
    args = {"${n}": ["${n}", {"deep": "${tags}", "t": ("${on}", 7)}], "plain": 2, "url": "/p/${n}"}
    assert fill_params(args, PARAMS) == {
        "${n}": [3, {"deep": ["a", "b"], "t": [False, 7]}],
        "plain": 2,
        "url": "/p/3",
    }
    assert map_strings({"k": ["a"]}, str.upper, keys=True) == {"K": ["A"]}
    assert list(strings(args)) == ["${n}", "${tags}", "${on}", "/p/${n}"]  # in order, keys left out


def test_substitution_is_one_pass_and_leaves_secrets_alone() -> None:
    params = {"a": "${b}", "b": "never", "pw": "${SECRET:PW}"}
    assert fill_params("${a}", params) == "${b}"
    assert fill_params("x${a}", params) == "x${b}"
    assert fill_params("${SECRET:PW} ${pw}", params) == "${SECRET:PW} ${SECRET:PW}"


def test_missing_params_are_found_in_values_only_sorted_once() -> None:
    steps = [{"args": {"value": "${b}", "k": "${a}-${b}"}}, {"args": {"l": ["${c}", "${SECRET:X}"]}}, 3]
    assert param_names(steps) == ["a", "b", "c"]
    assert missing_params(steps, {"b": 1}) == ["a", "c"]
    # a placeholder in a key is never filled, so it is never required either
    assert param_names({"${key}": 1}) == []
    with pytest.raises(InvalidArgument) as err:
        require_params(steps, {"b": 1})
    assert err.value.details == {"missing": ["a", "c"]} and "a, c" in err.value.message
    require_params(steps, {"a": 0, "b": 0, "c": 0})


def test_secret_placeholders() -> None:
    value = {"u": "${SECRET:USER}", "p": ["x${SECRET:PW}y", "${SECRET:USER}"], "n": "${n}"}
    assert secret_names(value) == ["PW", "USER"]
    assert fill_secrets(value, {"USER": "me", "PW": "pw"}) == {"u": "me", "p": ["xpwy", "me"], "n": "${n}"}
    assert is_secret_placeholder("${SECRET:PW}")
    assert not is_secret_placeholder("a ${SECRET:PW}") and not is_secret_placeholder(3)


def test_the_secret_store_fills_through_the_same_walker() -> None:
    store = SecretStore({"PW": "hunter2"})
    args = {"value": "${SECRET:PW}", "n": 3, "t": ("${SECRET:PW}",)}
    assert (
        store.substitute(args)
        == fill_secrets(args, {"PW": "hunter2"})
        == {"value": "hunter2", "n": 3, "t": ["hunter2"]}
    )
    assert store.missing({"a": "${SECRET:NOPE}", "b": "${SECRET:PW}"}) == ["NOPE"]


class _Args(dict):  # a Mapping that is not a plain dict, as a face may pass
    pass


@pytest.mark.parametrize(
    "value",
    [
        "${SECRET:PW}",
        "a ${SECRET:PW} b",
        {"x": [1, {"y": ("z", "${SECRET:PW}")}]},
        [None, 2.5, True, ["deep", ["deeper", "${SECRET:PW}"]]],
        _Args(v=_Args(w="${SECRET:PW}")),
        ("t", ("${SECRET:PW}",)),
        {"${SECRET:PW}": "a key is not a value"},
        {"only": "${PW}", "n": 3, "s": "$SECRET:PW", "b": b"${SECRET:PW}"},
        [],
        {},
        7,
    ],
)
def test_the_quick_secret_check_agrees_with_the_names_it_stands_for(value: object) -> None:
    """Every call's arguments pass through has_secret_placeholder (the secrets layer skips the rest when
    it says no): it must say yes exactly when secret_names finds a name, over every shape the walker knows."""
    assert has_secret_placeholder(value) == bool(secret_names(value)), value
