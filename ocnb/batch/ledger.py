"""A batch's per-row ledger on shared storage, so a task Dask reruns (its worker process died) posts no row twice.

Dask reruns a task whose worker process died (killed, out of memory) on another worker, outside
ocnb's own retry logic: without a record kept outside the dead process, a row that had already posted
would be posted again. The ledger is that record, under the batch's home (the storage the workers'
journals already share): ``root/ledger/<batch>/<worker>-<pid>.jsonl``, one file per worker process,
so no two processes append to one file. A task writes, per row,

- ``commit``: the row reached its commit step (:func:`ocnb.batch.commit_step`), written and
  ``fsync``'d *before* that step acts on the page;
- ``done``: the row finished, with its result row (``fsync``'d when the row had reached its commit
  step; a row that never did is safe to replay, so its record is only written).

A task first claims a marker for its key (``claims/<task>``, ``O_CREAT | O_EXCL``): the claim
succeeds on a first run, which reads nothing. Only a rerun (the claim is there) reads the batch's
ledger files (:func:`read`) and decides per row (:func:`rerun_decision`): a row finished by the dead
run comes back as recorded, a row caught at its commit step comes back ``"unknown"``
(:data:`~ocnb.batch.UNKNOWN_OUTCOME`, ``worker`` the dead one), the others are replayed. A torn last
line (the process killed mid-write) is skipped.

A local batch (``Pool.replay(..., ledger=...)``) keeps the same records as its one task, ``local``,
and reads them at every start: the same call made again after the caller's process died resumes it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["LEDGER_DIR", "Ledger", "batch_dir", "read", "remove", "rerun_decision", "unknown_row"]

#: Under the batch's home, one folder per batch: its claims and one ledger file per worker process.
LEDGER_DIR = "ledger"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)


def batch_dir(root: str | os.PathLike[str], batch: str) -> Path:
    """The ledger folder of batch ``batch`` under the batch's home ``root``: ``root/ledger/<batch>``."""
    return Path(root) / LEDGER_DIR / _safe(batch)


class Ledger:
    """One process's ledger of one batch, in the batch's folder ``directory`` (:func:`batch_dir`);
    thread-safe, its file opened on the first record."""

    def __init__(self, directory: str | os.PathLike[str], worker: str) -> None:
        self.dir = Path(directory)
        self.worker = worker
        self.path = self.dir / f"{_safe(worker)}-{os.getpid()}.jsonl"
        self._fd: int | None = None
        self._lock = threading.Lock()
        #: ``(task, row)`` pairs this process recorded at their commit step: their ``done`` is fsync'd too.
        self._committed: set[tuple[str, int]] = set()

    def claim(self, task: str) -> bool:
        """Claim the task ``task``: True on its first run, False when a run of it began before (a rerun)."""
        claims = self.dir / "claims"
        claims.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(claims / _safe(task), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            return False
        os.close(fd)
        return True

    def _write(self, record: dict[str, Any], sync: bool) -> None:
        line = (json.dumps(record, separators=(",", ":"), default=str) + "\n").encode()
        with self._lock:
            if self._fd is None:
                self.dir.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            os.write(self._fd, line)  # one write per line: O_APPEND keeps lines whole between threads
            if sync:
                os.fsync(self._fd)

    def committed(self, task: str, row: int, step: int) -> None:
        """Row ``row`` of ``task`` reached its commit step ``step``: durable before the step acts."""
        self._write({"t": task, "row": row, "ev": "commit", "step": step, "worker": self.worker}, sync=True)
        with self._lock:
            self._committed.add((task, row))

    def finished(self, task: str, result: dict[str, Any]) -> None:
        """Row ``result["row"]`` of ``task`` finished with ``result`` (fsync'd if it reached its commit step)."""
        key = (task, int(result["row"]))
        with self._lock:
            sync = key in self._committed
            self._committed.discard(key)
        self._write({"t": task, "row": key[1], "ev": "done", "result": result}, sync=sync)

    def settled(self, task: str, indexes: Iterable[int], *, idempotent: bool = False) -> dict[int, dict[str, Any]]:
        """For a rerun of ``task``: the result rows of its rows ``indexes`` that the batch's ledger settles
        without a replay (:func:`rerun_decision` on :func:`read`'s records), by row index."""
        records = read(self.dir, task)
        out = {}
        for index in indexes:
            decided = rerun_decision(records.get(index), index, idempotent=idempotent)
            if decided is not None:
                out[index] = decided
        return out

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self._fd)
                self._fd = None

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read(directory: str | os.PathLike[str], task: str) -> dict[int, dict[str, Any]]:
    """What the batch's ledger files in ``directory`` say of task ``task``'s rows: per row, its last
    ``done`` record if any, else its last ``commit`` record. Lines that do not parse (a torn last
    line) are skipped."""
    out: dict[int, dict[str, Any]] = {}
    for path in sorted(Path(directory).glob("*.jsonl")):
        with open(path, "rb") as fh:
            for raw in fh:
                try:
                    record = json.loads(raw)
                    if record.get("t") != task:
                        continue
                    row, event = int(record["row"]), record["ev"]
                except (ValueError, TypeError, KeyError, AttributeError):
                    continue  # torn or foreign line
                if event == "done" and isinstance(record.get("result"), dict):
                    out[row] = record
                elif event == "commit" and out.get(row, {}).get("ev") != "done":
                    out[row] = record
    return out


def unknown_row(index: int, record: dict[str, Any]) -> dict[str, Any]:
    """The result row of a row whose worker process died at or after its commit step (``record``)."""
    step = int(record.get("step", 0))
    return {
        "row": index,
        "ok": False,
        "outcome": "unknown",
        "failure_code": "UNKNOWN_OUTCOME",
        "step_reached": step,
        "steps_total": 0,
        "elapsed_ms": 0.0,
        "evidence_path": None,
        "acted": True,
        "retried": True,
        "worker": record.get("worker"),
        "browser": None,
    }


def rerun_decision(record: dict[str, Any] | None, index: int, *, idempotent: bool = False) -> dict[str, Any] | None:
    """For a rerun, the result row to return for row ``index`` without replaying it, or None to replay it.

    ``record`` is :func:`read`'s record of the row: ``done`` → its recorded result; ``commit`` (the
    process died at or after the commit step) → :func:`unknown_row`, unless ``idempotent`` (the site
    ignores a repeated row: replay it); none → replay.
    """
    if record is None:
        return None
    if record["ev"] == "done":
        return dict(record["result"])
    return None if idempotent else unknown_row(index, record)


def remove(directory: str | os.PathLike[str]) -> None:
    """Remove a finished batch's ledger: its files and claims, and the folder when nothing else is in it."""
    folder = Path(directory)
    for path in [*folder.glob("*.jsonl"), *folder.glob("claims/*")]:
        with contextlib.suppress(OSError):
            path.unlink()
    for path in (folder / "claims", folder):
        with contextlib.suppress(OSError):
            path.rmdir()
