"""bind_workers: each Dask worker's own browser server(s) from a ``connect=[...]`` list."""

from __future__ import annotations

import pytest

pytest.importorskip("distributed")

from ocnb.batch.dask import bind_workers, cluster_workers  # noqa: E402 - after the skip


class FakeClient:
    def __init__(self, workers: list[str]) -> None:
        self.workers = workers

    def nthreads(self) -> dict[str, int]:
        return dict.fromkeys(self.workers, 1)


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


def test_the_worker_list_holds_while_the_client_refreshes_its_cache() -> None:
    """Where a lost worker's rows may go is asked of the scheduler each time. ``scheduler_info()`` was
    empty now and then (its cache is refreshed every 2 s without per-worker entries), and a row whose
    browser server died came back failed instead of moving: here the refresh runs every 2 ms."""
    import dask
    import distributed

    with (
        dask.config.set({"distributed.client.scheduler-info-interval": "2ms"}),
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster,
        distributed.Client(cluster) as client,
    ):
        client.wait_for_workers(2)
        expected = sorted(cluster.scheduler.workers)
        seen = [cluster_workers(client) for _ in range(1500)]
    assert all(s == expected for s in seen), sum(s != expected for s in seen)
