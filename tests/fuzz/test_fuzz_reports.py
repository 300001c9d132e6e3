"""What the fuzz tests report when they fail: the failure itself, whatever the example holds."""

from __future__ import annotations

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from tests.fuzz.fuzz_strategies import DEEP, DEPTHS


def test_a_failing_example_with_a_deep_value_reports_its_own_failure() -> None:
    """Hypothesis prints a failing example's arguments; a 3,000-level value once turned the report
    into a RecursionError and hid the failure (CI). Its own assertion must come through, the value
    printed as the call that built it."""

    @settings(derandomize=True, database=None, phases=[Phase.generate], max_examples=1)
    @given(value=st.just(DEEP[-1]))
    def fails(value: object) -> None:
        raise AssertionError("the failure itself")

    with pytest.raises(AssertionError, match="the failure itself") as failed:
        fails()
    assert f"_deep({DEPTHS[-1]})" in "\n".join(getattr(failed.value, "__notes__", [])), failed.value
