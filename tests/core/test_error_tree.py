"""Every stable error code is one class of the tree in ocnb/errors.py (DESIGN §5)."""

from __future__ import annotations

import pytest

from ocnb import errors
from ocnb.errors import ERROR_CODES, InvalidArgument, OcnbError, error_class


def _classes() -> list[type[OcnbError]]:
    found: list[type[OcnbError]] = []
    todo = [OcnbError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return [c for c in found if c.__module__ == "ocnb.errors"]


def test_every_code_has_exactly_one_class() -> None:
    by_code: dict[str, list[str]] = {}
    for cls in _classes():
        code = cls.__dict__.get("code")
        if code is not None:
            by_code.setdefault(code, []).append(cls.__name__)
    missing = sorted(set(ERROR_CODES) - set(by_code))
    assert not missing, f"codes without a class in ocnb/errors.py: {missing}"
    unknown = sorted(set(by_code) - set(ERROR_CODES))
    assert not unknown, f"classes whose code is not in ERROR_CODES: {unknown}"
    twice = {code: names for code, names in by_code.items() if len(names) > 1}
    assert not twice, twice


@pytest.mark.parametrize("code", sorted(ERROR_CODES))
def test_error_class_finds_the_class_and_its_message(code: str) -> None:
    cls = error_class(code)
    err = cls()
    assert err.code == code and err.message == ERROR_CODES[code]
    assert cls.__name__ in errors.__all__


def test_an_unknown_code_is_no_class() -> None:
    with pytest.raises(KeyError):
        error_class("NO_SUCH_CODE")


def test_every_class_is_drawn_in_the_docstring() -> None:
    doc = errors.__doc__ or ""
    assert [c.__name__ for c in _classes() if c.__name__ not in doc] == []


def test_a_bad_value_is_also_a_value_error() -> None:
    """``except ValueError`` around a public call given a bad value keeps working."""
    with pytest.raises(ValueError):
        raise InvalidArgument("bad")
