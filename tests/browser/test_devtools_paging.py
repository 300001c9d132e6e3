"""Paging of the console and network lists, and the bounded log behind them, without a browser."""

from __future__ import annotations

import pytest

from ocnb.browser import Ring
from ocnb.errors import InvalidArgument
from ocnb.settings import Settings
from ocnb.tools.console import parse_since, window

ITEMS = [{"id": i, "ts": 1000.0 + i} for i in range(1, 11)]


def page(args: dict) -> tuple[list[int], dict]:
    got, meta = window(ITEMS, args, lambda e: e["id"], ts=lambda e: e["ts"])
    return [e["id"] for e in got], meta


def test_without_since_the_newest_come_and_older_ones_are_counted() -> None:
    assert page({"limit": 3}) == ([8, 9, 10], {"skipped": 7})
    assert page({}) == (list(range(1, 11)), {})
    assert page({"limit": 0}) == ([], {"skipped": 10})


def test_since_pages_forward_oldest_first() -> None:
    assert page({"since": 0, "limit": 4}) == ([1, 2, 3, 4], {"next": 4})
    assert page({"since": 4, "limit": 4}) == ([5, 6, 7, 8], {"next": 8})
    assert page({"since": 8, "limit": 4}) == ([9, 10], {})
    assert page({"since": 10}) == ([], {})
    assert page({"since": "7"}) == ([8, 9, 10], {})


def test_since_a_timestamp() -> None:
    from datetime import datetime, timezone

    iso = datetime.fromtimestamp(1008.0, tz=timezone.utc).isoformat().replace("+00:00", "Z")
    assert page({"since": iso}) == ([8, 9, 10], {})
    assert parse_since("1970-01-01T00:16:48") == (None, 1008.0)  # naive means UTC
    with pytest.raises(InvalidArgument):
        parse_since("last tuesday")


def test_a_ring_counts_what_rolled_off() -> None:
    ring: Ring[int] = Ring(3)
    for i in range(5):
        ring.append(i)
    assert list(ring) == [2, 3, 4] and ring.dropped == 2 and ring.maxlen == 3


@pytest.mark.parametrize("name", ["console_buffer", "network_buffer", "network_bodies"])
def test_buffer_sizes_are_settings(name: str) -> None:
    assert Settings().with_changes(**{name: 7}).__getattribute__(name) == 7
    with pytest.raises(ValueError, match=name):
        Settings().with_changes(**{name: 0})
