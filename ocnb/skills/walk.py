"""The one walk of steps, in named phases: a skill's replay (:class:`~ocnb.skills.replay.ReplayRun`) and a
plan (``execute_plan``'s ``PlanRun``) are :class:`StepWalk` subclasses; a batch row replays through the
first. Each step acts by dispatching a tool call, so the pipeline's rules reach it by construction.

``preflight`` once (nothing has run yet), then per step ``act`` and ``verify`` inside :meth:`StepWalk.around`,
and ``record`` whatever happened; then ``finish``. A phase ends the walk by raising :class:`Stop`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = ["Stop", "StepResult", "StepWalk"]


@dataclass
class StepResult:
    """What one step did. A walk's subclass adds what its steps report (a replay: how the element was found)."""

    index: int
    #: the step's kind (a skill's step) or tool (a plan's)
    kind: str
    ok: bool = False
    elapsed_ms: float = 0.0


class Stop(Exception):  # noqa: N818 - a verdict, not an error: the walk ends and says why
    """A phase's verdict that the walk ends here (a subclass says how its report shows it)."""


R = TypeVar("R", bound=StepResult)


class StepWalk(Generic[R]):
    """Steps walked in phases; a subclass fills in :attr:`steps` (in :meth:`preflight`) and the phases."""

    steps: list[dict[str, Any]]

    async def walk(self) -> Stop | None:
        """Every phase in order; the :class:`Stop` that ended the walk early, or None."""
        try:
            await self.preflight()
            for i, step in enumerate(self.steps):
                await self.step(i, step)
            await self.finish()
        except Stop as stop:
            return stop
        return None

    async def step(self, i: int, step: dict[str, Any]) -> R:
        """One step: ``act`` and ``verify`` (timed, inside ``around``), then ``record``, whatever happened."""
        result = await self.begin(i, step)
        t0 = time.perf_counter()
        try:
            async with self.around(i, step, result):
                await self.act(i, step, result)
                await self.verify(i, step, result)
        finally:
            result.elapsed_ms = round((time.perf_counter() - t0) * 1000, 2)
            self.record(i, step, result)
        return result

    async def preflight(self) -> None:
        """Everything checked before any step runs; sets :attr:`steps`."""

    async def begin(self, i: int, step: dict[str, Any]) -> R:
        """The step's (empty) typed result, before the step is timed (a batch's commit hook runs here)."""
        raise NotImplementedError

    @contextlib.asynccontextmanager
    async def around(self, i: int, step: dict[str, Any], result: R) -> AsyncIterator[None]:
        """What holds while a step acts and is verified (a replay: the step's recorded dialog answer)."""
        yield

    async def act(self, i: int, step: dict[str, Any], result: R) -> None:
        """The step's tool call, through dispatch; what it did goes into ``result``."""
        raise NotImplementedError

    async def verify(self, i: int, step: dict[str, Any], result: R) -> None:
        """After the step acted: whether the walk goes on (raise :class:`Stop` to end it)."""

    def record(self, i: int, step: dict[str, Any], result: R) -> None:
        """The step in the walk's report (and trace, progress); runs whether the step passed or not."""

    async def finish(self) -> None:
        """After the last step (a skill's own contract)."""
