"""Points for query_dom(method="point"): viewport pixels or percentages, anything else refused."""

from __future__ import annotations

import pytest

from ocnb.errors import InvalidArgument
from ocnb.perception.point import parse_point


@pytest.mark.parametrize(
    ("text", "point"),
    [
        ("640,400", (640.0, 400.0, "px")),
        (" 12.5 , 0 ", (12.5, 0.0, "px")),
        ("50%,25%", (50.0, 25.0, "%")),
        ("0.5%, 99.75%", (0.5, 99.75, "%")),
    ],
)
def test_points_in_pixels_or_percentages(text: str, point: tuple[float, float, str]) -> None:
    assert parse_point(text) == point


@pytest.mark.parametrize("text", ["640", "1,2,3", "-1,5", "50%,20", "x,y", "1e3,2", "nan,1", "", "#submit"])
def test_anything_else_is_invalid_argument_with_an_example(text: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        parse_point(text)
    assert "640,400" in str(err.value) and err.value.details == {"selector": text}
