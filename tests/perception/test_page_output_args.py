"""Argument checks of emulate and the PDF page count, without a browser (issue 23: 4)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ocnb.errors import InvalidArgument
from ocnb.tools.emulation import _device, _wanted
from ocnb.tools.pdf import pdf_pages

DEVICES = SimpleNamespace(
    devices={
        "Pixel 7": {"viewport": {"width": 412, "height": 839}},
        "iPhone 13": {"viewport": {"width": 390, "height": 664}},
    }
)


def test_a_device_is_found_by_its_name_in_any_case() -> None:
    assert _device(DEVICES, "Pixel 7")[0] == "Pixel 7"
    assert _device(DEVICES, "iphone 13")[0] == "iPhone 13"


def test_an_unknown_device_names_the_nearest() -> None:
    with pytest.raises(InvalidArgument) as err:
        _device(DEVICES, "Pixel 8")
    assert err.value.details["near"] == ["Pixel 7"] and "did you mean Pixel 7" in err.value.message


@pytest.mark.parametrize(
    ("args", "word"),
    [
        ({}, "give device"),
        ({"reset": False}, "give device"),
        ({"timezone": "Mars/Base"}, "unknown timezone"),
        ({"timezone": "../../etc/passwd"}, "unknown timezone"),
        ({"locale": "de_DE!"}, "not a locale"),
    ],
)
def test_bad_arguments_are_refused_before_anything_happens(args: dict, word: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        _wanted(args)
    assert word in err.value.message


def test_good_arguments_pass() -> None:
    assert _wanted({"reset": True}) == {}
    assert _wanted({"timezone": "Asia/Tokyo", "locale": "de-DE", "width": 800}) == {
        "timezone": "Asia/Tokyo",
        "locale": "de-DE",
        "width": 800,
    }


def test_pdf_pages_counts_page_objects_not_the_page_tree() -> None:
    data = b"%PDF-1.4\n1 0 obj <</Type /Pages /Kids [2 0 R 3 0 R]>>\n2 0 obj <</Type /Page>>\n3 0 obj <</Type/Page>>"
    assert pdf_pages(data) == 2
