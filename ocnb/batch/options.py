"""How every row of one batch is replayed: :class:`RowOptions`, one frozen value instead of a dict.

``Pool.replay(...)`` builds it from its keyword arguments; each row's run reads its fields. The one
thing a batch tells a row that is not data — who to tell when the row reaches its commit step (the
ledger, :mod:`ocnb.batch.ledger`) — is the :attr:`RowOptions.on_commit` field, set per row in this
process and never sent anywhere. A Dask worker receives :meth:`RowOptions.wire`, a plain picklable
dict of the fields given, and reads it back with :meth:`RowOptions.of`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

__all__ = ["RowOptions"]


@dataclass(frozen=True)
class RowOptions:
    """The options of a batch's rows (see :meth:`ocnb.batch.Pool.replay` for what each does).

    - ``start_url``: opened before the row's replay (unless the skill's first step opens it anyway).
    - ``commit_step``: the row acts on the site from this low-level step on; None: judged from the
      step kinds (:func:`ocnb.batch.row.commit_step`).
    - ``step_timeout_ms``, ``allow_risky``, ``tolerate``, ``stop_on_contract_failure``: passed to
      ``oc_skill_replay`` when given.
    - ``block_resources``: resource kinds aborted in the row's browser context.
    - ``idempotent``: the site ignores a repeated row, so a row lost after acting is retried too.
    - ``extract``: the ``extract`` tool's arguments, run on the page the row ended on.
    - ``on_commit``: called with the commit step's index just before it acts (this process only).
    """

    start_url: str | None = None
    commit_step: int | None = None
    step_timeout_ms: int | None = None
    allow_risky: bool | None = None
    tolerate: tuple[str, ...] = ()
    block_resources: tuple[str, ...] = ()
    idempotent: bool = False
    extract: Mapping[str, Any] | None = None
    stop_on_contract_failure: bool | None = None
    on_commit: Callable[[int], None] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tolerate", tuple(self.tolerate or ()))
        object.__setattr__(self, "block_resources", tuple(self.block_resources or ()))
        if self.extract is not None:
            object.__setattr__(self, "extract", dict(self.extract))

    @classmethod
    def of(cls, value: RowOptions | Mapping[str, Any] | None) -> RowOptions:
        """``value`` as RowOptions: itself, the fields of a dict (:meth:`wire`'s, or a caller's), or defaults.

        An unknown key is a ``TypeError`` naming it.
        """
        if isinstance(value, RowOptions):
            return value
        given = dict(value or {})
        names = {f.name for f in fields(cls)} - {"on_commit"}
        unknown = sorted(set(given) - names)
        if unknown:
            raise TypeError(f"unknown row option {unknown[0]!r}; options: {', '.join(sorted(names))}")
        return cls(**given)

    def wire(self) -> dict[str, Any]:
        """The fields given (those not at their default), as a plain dict a Dask worker can unpickle.
        ``on_commit`` is never in it: it belongs to this process."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name != "on_commit" and value != f.default:
                out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    def for_row(self, on_commit: Callable[[int], None] | None) -> RowOptions:
        """These options with one row's ``on_commit``."""
        return self if on_commit is None else replace(self, on_commit=on_commit)

    def replay_args(self) -> dict[str, Any]:
        """What of these options goes to ``oc_skill_replay`` besides the skill and the row's params."""
        args: dict[str, Any] = {}
        for key in ("step_timeout_ms", "allow_risky", "stop_on_contract_failure"):
            if getattr(self, key) is not None:
                args[key] = getattr(self, key)
        if self.tolerate:
            args["tolerate"] = list(self.tolerate)
        return args
