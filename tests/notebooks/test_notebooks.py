"""Every example notebook executes top to bottom, headless, against the bundled demo site."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import nbformat
import pytest

from ocnb.commands.notebooks import notebooks_dir, run_demo_notebooks, run_notebook

NOTEBOOKS = sorted(notebooks_dir().glob("*.ipynb"))


def _maker():
    spec = importlib.util.spec_from_file_location("_make", notebooks_dir() / "_make.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_generated_notebook_is_checked_in_without_outputs() -> None:
    make = _maker()
    assert {p.stem for p in NOTEBOOKS} == set(make.NOTEBOOKS)
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb.cells if c.cell_type == "code")
        fresh = make.build(path.stem)
        assert [c.source for c in nb.cells] == [c.source for c in fresh.cells], f"{path.name}: run notebooks/_make.py"


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path: Path, tmp_path: Path) -> None:
    run = run_notebook(path, tmp_path / f"{path.stem}.html", timeout=240)
    assert run.ok, run.error
    html = (tmp_path / f"{path.stem}.html").read_text()
    assert "<html" in html and path.stem.split("_")[0] in html.lower()


@pytest.mark.slow
def test_demo_reports_a_failing_notebook_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    broken = tmp_path / "nbs"
    broken.mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 / 0")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, broken / "boom.ipynb")
    monkeypatch.setattr("ocnb.commands.notebooks.notebooks_dir", lambda: broken)
    failures = run_demo_notebooks(tmp_path / "reports", ("boom", "missing"))
    out = capsys.readouterr().out.splitlines()
    assert len(failures) == 2 and out == failures
    assert failures[0].startswith("boom: FAILED after") and "ZeroDivisionError" in failures[0]
    assert (tmp_path / "reports" / "boom.html").is_file()
    assert failures[1].startswith("missing: FAILED")
    assert json.loads(json.dumps(failures))  # plain strings


@pytest.mark.slow
def test_demo_runs_its_notebooks_at_once_and_reports_them_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """Each notebook in its own kernel, at the same time: the first one waits for the second to start
    (run one after the other, it would give up after 60 s and fail), and the lines come in the order
    asked, not the order the notebooks finished."""
    folder = tmp_path / "nbs"
    folder.mkdir()
    started = tmp_path / "second-started"
    cells = {
        "first": f"import pathlib, time\nend = time.time() + 60\nwhile not pathlib.Path({str(started)!r}).exists():\n"
        "    assert time.time() < end, 'the second notebook never started'\n    time.sleep(0.05)",
        "second": f"import pathlib\npathlib.Path({str(started)!r}).touch()",
    }
    for name, code in cells.items():
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(nb, folder / f"{name}.ipynb")
    monkeypatch.setattr("ocnb.commands.notebooks.notebooks_dir", lambda: folder)
    assert run_demo_notebooks(tmp_path / "reports", ("first", "second"), jobs=2) == []
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in out] == ["first", "second"], out


@pytest.mark.slow
def test_a_notebooks_kernel_is_gone_when_it_returns_failed_or_not(tmp_path: Path) -> None:
    """Each kernel is shut down when its notebook ends, not when this process exits (until then it kept
    its browser, and ``ocnb demo`` printed "Parent appears to have exited" once per notebook after it
    had itself exited)."""
    for name, code in {"fine": "", "boom": "1 / 0"}.items():
        pid_file = tmp_path / f"{name}.pid"
        nb = nbformat.v4.new_notebook(
            cells=[
                nbformat.v4.new_code_cell(
                    f"import os, pathlib\npathlib.Path({str(pid_file)!r}).write_text(str(os.getpid()))\n{code}"
                )
            ]
        )
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(nb, tmp_path / f"{name}.ipynb")
        run = run_notebook(tmp_path / f"{name}.ipynb")
        assert run.ok is (name == "fine"), run
        pid = int(pid_file.read_text())
        assert pid != os.getpid()
        with pytest.raises(ProcessLookupError):  # no such process: the kernel has exited and been reaped
            os.kill(pid, 0)


def test_demo_refuses_jobs_below_one_before_it_does_anything(tmp_path: Path, capsys) -> None:
    from ocnb.commands import demo

    with pytest.raises(SystemExit) as refused:
        demo.main(["--out", str(tmp_path / "reports"), "--jobs", "0"])
    assert refused.value.code == 2
    assert "--jobs must be at least 1, not 0" in capsys.readouterr().err
    assert not (tmp_path / "reports").exists()  # no report written, no browser started
