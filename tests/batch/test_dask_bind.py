"""bind_workers: each Dask worker's own browser server(s) from a ``connect=[...]`` list."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("distributed")

from ocnb.batch.dask import bind_workers  # noqa: E402 - after the skip


class FakeClient:
    def __init__(self, workers: list[str]) -> None:
        self.workers = workers

    def scheduler_info(self) -> dict[str, Any]:
        return {"workers": {w: {} for w in self.workers}}


def test_one_server_per_worker_and_a_single_url_left_alone() -> None:
    rest, bound = bind_workers(FakeClient(["tcp://b", "tcp://a"]), {"connect": ["ws://0", "ws://1"], "home": "h"})
    assert rest == {"home": "h"}
    assert bound == {"tcp://a": {"connect": "ws://0"}, "tcp://b": {"connect": "ws://1"}}
    rest, bound = bind_workers(FakeClient(["tcp://a"]), {"connect": "ws://0"})
    assert rest == {"connect": "ws://0"} and bound == {}


def test_fewer_servers_than_workers_are_shared_and_more_are_split() -> None:
    _, bound = bind_workers(FakeClient(["tcp://a", "tcp://b", "tcp://c"]), {"connect": ["ws://0", "ws://1"]})
    assert [bound[w]["connect"] for w in ("tcp://a", "tcp://b", "tcp://c")] == ["ws://0", "ws://1", "ws://0"]
    # more servers than workers: each worker's pool gets a browser on each of its own servers
    _, bound = bind_workers(FakeClient(["tcp://a", "tcp://b"]), {"connect": ["ws://0", "ws://1", "ws://2"]})
    assert bound == {"tcp://a": {"connect": ["ws://0", "ws://2"]}, "tcp://b": {"connect": "ws://1"}}
