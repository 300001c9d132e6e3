"""A notebook that started the MCP server, executed in a real kernel and saved, holds no token:
the cell shows the token's 0600 file and a masked value, and the printed configurations still work."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytest.importorskip("ocnb.mcp")


@pytest.mark.slow
def test_a_saved_notebook_that_started_the_mcp_server_holds_no_token(tmp_path: Path, ocnb_home: Path) -> None:
    leak = tmp_path / "tokens.txt"  # the kernel writes the tokens here for the test, never to its output
    cells = [
        "%load_ext ocnb.magics",
        "%oc mcp start",
        "h = _\nprint(h)\nh",
        "%oc mcp status",
        "import ocnb, ocnb.mcp\nh2 = ocnb.mcp.serve(ocnb.session())",  # the Python API, in a kernel
        f"open({str(leak)!r}, 'w').write(h.token + '\\n' + h2.token + '\\n'); h2.stop()",
        "%oc mcp stop",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    saved = tmp_path / "mcp.ipynb"
    nbformat.write(nb, saved)

    token, token2 = leak.read_text().split()
    text = saved.read_text()
    assert token not in text and token2 not in text
    shown = "".join(
        o.get("text", "") + str(o.get("data", {}).get("text/plain", "")) for c in nb.cells for o in c.get("outputs", [])
    )
    token_file = ocnb_home / "mcp" / "token"
    # what the cell shows instead: the file (0600) holding the token, its first characters, working configs
    assert f"in the file {token_file} (mode 0600)" in shown and f"{token[:4]}…" in shown
    assert f'--header "Authorization: Bearer $(cat {token_file})"' in shown
    assert token_file.read_text().strip() == token
    assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
    assert "McpHandle(" not in shown or "token=" not in shown
