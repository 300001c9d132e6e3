"""Execute the example notebooks headless (nbclient) and write them as HTML reports (nbconvert).

Used by the demo command (``ocnb demo`` / ``make demo``) and by the notebook tests. The kernel is
``python3``; jupyter_client starts it with this interpreter (``sys.executable``), so a notebook runs
in the same virtual environment as the caller, and inherits its environment (``OCNB_HOME`` …).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._extras import extra

with extra("notebook"):
    import nbformat
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

__all__ = ["DEMO_NOTEBOOKS", "NotebookRun", "notebooks_dir", "run_demo_notebooks", "run_notebook"]

#: The notebooks the demo command executes, in order.
DEMO_NOTEBOOKS = ("quickstart", "skill_authoring", "token_cost_report")


def notebooks_dir() -> Path:
    """The example notebooks: the copy shipped inside the wheel (``ocnb/_notebooks``, see
    ``pyproject.toml``) when installed, else a source checkout's ``notebooks/`` folder."""
    here = Path(__file__).resolve().parents[1]  # the ocnb package
    for candidate in (here / "_notebooks", here.parent / "notebooks"):
        if (candidate / f"{DEMO_NOTEBOOKS[0]}.ipynb").is_file():
            return candidate
    return here.parent / "notebooks"


@dataclass
class NotebookRun:
    """What executing one notebook gave: ``ok``, the failing cell's one-line error, timings."""

    path: Path
    ok: bool
    seconds: float
    cells: int
    error: str | None = None
    html: Path | None = None

    def summary_line(self) -> str:
        where = f" → {self.html}" if self.html else ""
        if self.ok:
            return f"{self.path.stem}: ok, {self.cells} cells in {self.seconds:.1f} s{where}"
        return f"{self.path.stem}: FAILED after {self.seconds:.1f} s: {self.error}{where}"


def _outputs(nb: object) -> Iterator[tuple[int, dict]]:
    for i, cell in enumerate(getattr(nb, "cells", [])):
        if cell.get("cell_type") == "code" and "raises-exception" not in cell.get("metadata", {}).get("tags", []):
            for out in cell.get("outputs", []):
                yield i, out


def _first_error(nb: object) -> str | None:
    """The first unexpected error output of an executed notebook, as one line."""
    for i, out in _outputs(nb):
        if out.get("output_type") == "error":
            lines = str(out.get("evalue", "")).strip().splitlines()
            return f"cell {i}: {out.get('ename')}: {lines[0][:300] if lines else ''}"
    return None


def _first_error_cause(nb: object) -> str | None:
    """The first ``%%oc`` step failure (``step N failed: …`` on stderr): often the real cause."""
    for i, out in _outputs(nb):
        if out.get("output_type") == "stream" and out.get("name") == "stderr":
            line = next((ln for ln in out.get("text", "").splitlines() if " failed: " in ln), None)
            if line:
                return f"cell {i}: {line[:300]}"
    return None


def _kernel_manager(kernel_name: str, folder: Path) -> Any:
    """A kernel manager that talks to its kernel over Unix sockets in ``folder`` where it can.

    Over TCP (the default, and the only choice on Windows) ipykernel warns at every start that the
    connection is not encrypted; local sockets are private to the user and need no such warning.
    """
    if os.name != "posix":
        return KernelManager(kernel_name=kernel_name)
    return KernelManager(kernel_name=kernel_name, transport="ipc", ip=str(folder / "kernel"))


def run_notebook(
    path: str | os.PathLike[str],
    out_html: str | os.PathLike[str] | None = None,
    *,
    timeout: int = 300,
    kernel_name: str = "python3",
    cwd: str | os.PathLike[str] | None = None,
) -> NotebookRun:
    """Execute ``path`` top to bottom in a fresh kernel; write it as HTML to ``out_html`` if given.

    ``timeout`` bounds each cell (seconds). The HTML is written even when a cell fails, so the
    report shows where. Never raises for a failing cell: see :attr:`NotebookRun.ok` and ``error``.
    """
    src = Path(path)
    nb = nbformat.read(src, as_version=4)
    sockets = tempfile.TemporaryDirectory(prefix="ocnb-kernel-")
    client = NotebookClient(
        nb,
        km=_kernel_manager(kernel_name, Path(sockets.name)),
        timeout=timeout,
        kernel_name=kernel_name,
        resources={"metadata": {"path": str(Path(cwd) if cwd else src.parent)}},
    )
    t0 = time.perf_counter()
    error: str | None = None
    try:
        with sockets:
            # The client did not create the kernel manager, so by default it would leave the kernel (and
            # its browser) running until this process exits: shut it down here, gracefully.
            client.execute(cleanup_kc=True)
    except CellExecutionError as exc:
        evalue = str(getattr(exc, "evalue", "") or "").strip().splitlines()
        error = _first_error(nb) or f"{getattr(exc, 'ename', 'error')}: {evalue[0][:300] if evalue else ''}"
        cause = _first_error_cause(nb)
        if cause and cause not in error:
            error = f"{error} (after {cause})"
    except (CellTimeoutError, DeadKernelError, RuntimeError) as exc:
        error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    seconds = time.perf_counter() - t0
    html_path = None
    if out_html is not None:
        with extra("notebook"):
            from nbconvert import HTMLExporter

        body, _ = HTMLExporter().from_notebook_node(nb)
        html_path = Path(out_html)
        html_path.parent.mkdir(parents=True, exist_ok=True)
        html_path.write_text(body, encoding="utf-8")
    cells = sum(1 for c in nb.cells if c.cell_type == "code")
    return NotebookRun(path=src, ok=error is None, seconds=seconds, cells=cells, error=error, html=html_path)


def run_demo_notebooks(
    out: Path, names: tuple[str, ...] = DEMO_NOTEBOOKS, *, timeout: int = 300, jobs: int | None = None
) -> list[str]:
    """Execute the demo notebooks headless, write ``out/<name>.html``, print one line per notebook.

    Up to ``jobs`` notebooks run at once, each in its own kernel (default: one per core, at most
    three): most of a notebook's time is its kernel and its browser waiting, so the demo takes about
    as long as its longest notebook. The lines are printed in ``names``' order, each as soon as its
    notebook and those before it are done. Returns the summary lines of the notebooks that failed
    (empty when all ran).
    """
    out = Path(out)
    folder = notebooks_dir()
    # A packaged copy sits in site-packages, which may be read-only: run it from the report folder.
    cwd = out if folder.parent == Path(__file__).resolve().parents[1] else None

    def run(name: str) -> tuple[bool, str]:
        path = folder / f"{name}.ipynb"
        if not path.is_file():
            return False, f"{name}: FAILED: {path} not found (`ocnb demo --no-notebooks` runs the tool tour alone)"
        done = run_notebook(path, out / f"{name}.html", timeout=timeout, cwd=cwd)
        return done.ok, done.summary_line()

    failures: list[str] = []
    workers = max(1, min(len(names), jobs or min(os.cpu_count() or 1, 3)))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ocnb-notebook") as pool:
        for ok, line in pool.map(run, names):
            print(line, flush=True)
            if not ok:
                failures.append(line)
    return failures


if __name__ == "__main__":  # python -m ocnb.commands.notebooks [NAME ...]: run and report into reports/
    sys.exit(1 if run_demo_notebooks(Path("reports"), tuple(sys.argv[1:]) or DEMO_NOTEBOOKS) else 0)
