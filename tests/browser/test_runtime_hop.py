"""The hop to the browser thread and back (:meth:`Runtime.run`): results, errors, timeouts, many threads.

No browser: a coroutine on the runtime's loop is what every call's hop carries.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading

import pytest

from ocnb.browser.runtime import Runtime
from ocnb.errors import SessionClosed, Timeout


@pytest.fixture
def runtime() -> Runtime:
    rt = Runtime(name="ocnb-test-hop")
    yield rt
    rt.stop()


def test_result_and_exception_come_back_to_the_caller(runtime: Runtime) -> None:
    async def value() -> tuple[str, bool]:
        return threading.current_thread().name, runtime.in_runtime_thread()

    async def fails() -> None:
        await asyncio.sleep(0)
        raise LookupError("from the browser thread")

    assert runtime.run(value()) == ("ocnb-test-hop", True)
    with pytest.raises(LookupError, match="from the browser thread"):
        runtime.run(fails())
    assert runtime.run(value(), timeout=5)[1]  # the runtime still serves after a failure


def test_a_timeout_cancels_the_coroutine_on_the_browser_thread(runtime: Runtime) -> None:
    ended = threading.Event()

    async def slow() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            ended.set()
            raise

    with pytest.raises(Timeout, match="no answer from the browser thread"):
        runtime.run(slow(), timeout=0.2)
    assert ended.wait(5), "the timed-out coroutine was not cancelled"


def test_a_cancelled_coroutine_is_reported_as_cancelled(runtime: Runtime) -> None:
    async def cancels_itself() -> None:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        await asyncio.sleep(1)

    with pytest.raises(concurrent.futures.CancelledError):
        runtime.run(cancels_itself())


def test_on_wait_hears_the_wait_and_its_failure_does_not_fail_the_run(runtime: Runtime) -> None:
    heard: list[float] = []

    def tick(seconds: float) -> None:
        heard.append(seconds)
        if len(heard) == 2:
            raise RuntimeError("a broken display")

    async def takes_a_second() -> str:
        await asyncio.sleep(1.0)
        return "done"

    assert runtime.run(takes_a_second(), timeout=10, on_wait=tick) == "done"
    assert len(heard) == 2 and heard[0] < heard[1] < 1.0


def test_many_threads_each_get_their_own_result(runtime: Runtime) -> None:
    results: dict[int, list[int]] = {}

    async def echo(i: int) -> int:
        await asyncio.sleep(0)
        return i

    def worker(k: int) -> None:
        results[k] = [runtime.run(echo(k * 1000 + i), timeout=30) for i in range(200)]

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert results == {k: [k * 1000 + i for i in range(200)] for k in range(4)}


def test_run_after_stop_is_session_closed_and_closes_the_coroutine(runtime: Runtime) -> None:
    async def nothing() -> None:
        return None

    runtime.run(nothing())
    runtime.stop()
    coro = nothing()
    with pytest.raises(SessionClosed):
        runtime.run(coro)
    assert coro.cr_frame is None  # closed, never awaited: no "never awaited" warning either
