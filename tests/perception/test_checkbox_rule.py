"""One checkbox rule for form_input, replay and exported scripts: a word that is neither yes nor no is refused."""

from __future__ import annotations

import pytest

from ocnb.perception.actions import checked
from ocnb.skills.export import export_script


@pytest.mark.parametrize("value", [True, 1, "1", "true", " Yes ", "ON", "checked", "x"])
def test_yes_words_check(value: object) -> None:
    assert checked(value) is True


@pytest.mark.parametrize("value", [False, 0, None, "", "0", "false", "No", "off", "unchecked"])
def test_no_words_uncheck(value: object) -> None:
    assert checked(value) is False


@pytest.mark.parametrize("value", ["maybe", "agree", "nein", ["yes"], {"v": 1}])
def test_anything_else_is_refused_rather_than_read_as_unchecked(value: object) -> None:
    with pytest.raises(ValueError, match="checkbox value"):
        checked(value)


def test_an_exported_script_carries_the_same_rule() -> None:
    skill = {"id": "s", "name": "s", "domain": "example.test", "steps": []}
    source = export_script(skill)
    namespace: dict = {}
    start = source.index("CHECKED_WORDS = ")
    end = source.index("\n\n\n", source.index("def checked("))
    exec(source[start:end], namespace)  # the rule alone, as the script defines it
    for value in ("Yes", "off", True, ""):
        assert namespace["checked"](value) is checked(value)
    with pytest.raises(ValueError):
        namespace["checked"]("maybe")
