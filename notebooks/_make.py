"""Write the example notebooks from this one script, so they stay consistent and output-free.

Run ``python notebooks/_make.py`` after editing; the ``.ipynb`` files are generated (outputs stripped)
and checked in. ``tests/notebooks/test_notebooks.py`` executes every notebook written here.
Cells tagged ``raises-exception`` show an error on purpose (nbclient carries on past them).
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

__all__ = ["NOTEBOOKS", "build", "main"]

HERE = Path(__file__).resolve().parent

#: ``%load_ext ocnb`` once ``ocnb/__init__.py`` exposes ``load_ipython_extension``; the module until then.
LOAD_EXT = "%load_ext ocnb" if hasattr(__import__("ocnb"), "load_ipython_extension") else "%load_ext ocnb.magics"

SETUP = (
    LOAD_EXT
    + """
import ocnb
from ocnb.commands.demosite import serve

site = serve()          # the bundled demo site, on 127.0.0.1 only
s = ocnb.session()      # the shared, headless browser session that %oc drives too
site.page("index.html")"""
)

TEARDOWN = """\
s.close()               # closes Chromium; no browser outlives the session
site.close()"""


def md(text: str) -> nbformat.NotebookNode:
    return new_markdown_cell(text.strip())


def code(text: str, *tags: str) -> nbformat.NotebookNode:
    cell = new_code_cell(text.strip())
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def quickstart() -> list[nbformat.NotebookNode]:
    return [
        md("""
# ocnb quickstart

Drive a real Chromium from this notebook: navigate, read the page as an outline with refs, act on
elements by what they are (not by CSS selectors), fill a form, and see every call in the journal.
Everything here runs against the bundled demo site on `127.0.0.1`, headless.

`%oc TOOL ...` runs any tool; `%oc tools` lists them and `%oc help TOOL` shows its arguments.
"""),
        code(SETUP),
        code("%oc tools"),
        md("## Navigate and read\n`$name` and `{expression}` in a magic line are expanded as usual in IPython."),
        code('home = site.page("index.html")\n%oc navigate $home'),
        md(
            "## Watch the page\nThe view refreshes after every call, from any face. Click on the picture to act on "
            "the element under the pointer (it goes through `interact`, so it is journaled too)."
        ),
        code("import ocnb.widgets\n\nview = ocnb.widgets.BrowserView(s)\nview"),
        code("%oc read"),
        md("`find` ranks candidates for plain words without acting on anything."),
        code('%oc find "sign-up form"'),
        md("""
## Act with intent
`click`, `fill` and `press` are short for `interact`. `--intent` labels the action in the audit
trail; it is never used to find the element.
"""),
        code('%oc click "Sign-up form" --intent "open the sign-up form"'),
        code('%oc fill "Full name" "Ada Lovelace" --intent "type the name"'),
        md("`fill_form` fills several fields at once; JSON-looking values are parsed as JSON."),
        code(
            """%oc fill_form --fields '{"Email": "ada@example.org", "Country": "Japan", "I accept the terms": true}' --intent "complete the form\""""
        ),
        code('%oc click "Sign up" --intent "submit the form"'),
        code('%oc wait_for --text "Thanks, Ada Lovelace"'),
        code("%oc shot"),
        md(
            "## Several calls in one cell\n`%%oc` runs one call per line, stops at the first failure and returns the steps."
        ),
        code(
            """%%oc
navigate {site.page("login.html")}
fill Username ada --intent "log in as ada"
fill Password correct-horse-battery
press Enter Password
wait_for --text "Welcome, ada\""""
        ),
        md(
            "## The Python API\nThe magics are a thin face over the same calls; a failed call is a result with a stable code."
        ),
        code('r = s.call("tabs_context")\nr.data["tabs"]'),
        code('s.navigate(url="file:///etc/passwd")   # refused: file: URLs are blocked by default'),
        md("## The journal\nEvery call, from every face, lands in the journal — here as a DataFrame."),
        code(
            'journal = ocnb.journal_df(session_id=s.id)\njournal[["ts", "source", "tool", "ok", "error_code", "intent", "summary"]]'
        ),
        code('journal.groupby("tool")["ok"].agg(["count", "sum"])'),
        md("The calls as a timeline: one bar per call, failures in red with their code."),
        code("from ocnb.widgets.plots import call_timeline\n\ncall_timeline(journal);"),
        md("…and as a live table that follows every new call (filter by tool, ok or failed):"),
        code("ocnb.widgets.JournalView(s)"),
        md("In a magic, an error is one line with its code, not a traceback:"),
        code("%oc navigate file:///etc/passwd", "raises-exception"),
        md("""
## When a person has to pick
Two rows each have a "Delete" button: the words alone cannot say which. With hand-off on, the cell
shows the candidates told apart by their row, each numbered on the screenshot; pick one and press
*Resume* (or call `r.resume(ref)`), and the click runs on it, journaled like any other call.
"""),
        code('%config OcMagics.handoff = True\nrows = site.page("ambiguous.html")\n%oc navigate $rows'),
        code('r = %oc click "Delete"\nr'),
        code('r.resume(r.candidates[1]["ref"])   # what Resume does for the second row (Globex)'),
        code("%config OcMagics.handoff = False"),
        code(TEARDOWN),
    ]


def skill_authoring() -> list[nbformat.NotebookNode]:
    return [
        md("""
# Skill authoring: record once, replay without an LLM

Steps run with `--capture_artifact true` are recorded with their selector chains. Saved as a skill,
they replay deterministically — no `read_page`, no `find`, no model — and hand back a precise reason
when the page has changed.
"""),
        code(SETUP),
        md("## Record"),
        code('form = site.page("form.html")\n%oc navigate $form'),
        code(
            """%%oc
fill "Full name" "Ada Lovelace" --capture_artifact true --intent "type the name"
fill "Email" "ada@example.org" --capture_artifact true
click "Pro" --capture_artifact true
click "Sign up" --capture_artifact true --intent "submit the form\""""
        ),
        code('%oc wait_for --text "Thanks, Ada Lovelace"'),
        md("An outcome contract says when the flow succeeded; the skill checks it after replay."),
        code(
            """%oc oc_contract_define signed-up --assertion '{"kind": "dom_text", "selector": "#result", "contains": "Thanks"}'"""
        ),
        code(
            'rec = %oc oc_skill_record sign-up --contract_id signed-up --description "sign up on the demo form"\n'
            'skill_id = rec["skill_id"]\nrec'
        ),
        code("%oc oc_skill_recall --name sign-up"),
        md("## Replay\nReload the form and replay: every step resolves from its recorded chain."),
        code("%oc navigate $form\nreplay = %oc oc_skill_replay $skill_id\nreplay"),
        md(
            "Every class renamed, the way CSS-in-JS builds do (`?variant=restyled`): the chain still finds every element."
        ),
        code(
            """import pandas as pd

%oc navigate {form}?variant=restyled
r = s.call("oc_skill_replay", skill_id=skill_id).raise_for_error()
pd.DataFrame(r["step_results"])[["index", "kind", "resolved_via", "selector_attempts", "ok"]]"""
        ),
        md(
            "The Email label is renamed (`?variant=renamed`). A stable CSS selector still finds the field, but its "
            "accessible name no longer agrees with the fingerprint recorded with the step, so replay refuses "
            "before acting on it, naming the fields that differ and the candidate it refused:"
        ),
        code(
            """%oc navigate {form}?variant=renamed
refused = s.call("oc_skill_replay", skill_id=skill_id)
refused.data["failure"]"""
        ),
        md(
            'When the rename is expected, say so for one replay: `tolerate: ["name"]` accepts a changed label '
            "(role and input type are never tolerated). It relaxes every step it covers — the radio buttons "
            '"Free" and "Pro" differ only by name — so keep it to the renamed step with `step_range`:'
        ),
        code(
            """%oc navigate {form}?variant=renamed
r = s.call("oc_skill_replay", skill_id=skill_id, tolerate=["name"], step_range={"from": 1, "to": 1}).raise_for_error()
pd.DataFrame(r["step_results"])[["index", "kind", "resolved_via", "selector_attempts", "ok"]]"""
        ),
        md("On a page the skill was not recorded on, replay refuses before acting, with a precise code:"),
        code('%oc navigate {site.page("login.html")}\ns.call("oc_skill_replay", skill_id=skill_id)'),
        md("## Replay telemetry and export"),
        code("ocnb.replay_df(skill_id)"),
        md(
            "The export is a plain Playwright script that runs without ocnb. Its data (steps, selectors, "
            "fingerprints) are Python literals; at its end it carries the in-page engine replay uses, so it "
            "checks each element the same way. An existing file is kept unless `--overwrite true`:"
        ),
        code(
            "from pathlib import Path\n\nexported = %oc oc_skill_export $skill_id --overwrite true\n"
            'script = Path(exported["path"]).read_text()\n'
            'print(script[: script.index("\\n# ocnb\'s in-page engine")])'
        ),
        md("""
## Show it once: record what you do

Instead of writing the steps, do them: `%oc record start`, then act in the page — click and type in
the live view below (it forwards keys while it has focus), in a headed window, or from another program
driving the same browser — and `%oc record stop`. Only your own input is recorded (a page's scripted
clicks are not), as the same steps `capture_artifact` records: chain, fingerprint, intent. A password
you type becomes `${SECRET:PASSWORD}`; `--params` turns a field into a parameter.
"""),
        code("from ocnb.widgets import BrowserView\n\nview = BrowserView(s)\nview"),
        md("Here the cell acts for you, through the view's Python API (what a click and typing in it send):"),
        code(
            """%oc navigate $form
%oc record start
%oc click "Full name"
view.type("Grace Hopper")
%oc click Email
view.type("grace@example.org")
%oc click "Sign up"
shown = %oc record stop --name sign-up-shown --params email=email "full name=who"
shown["signature"]"""
        ),
        md("It replays like any skill — here with other values, on the restyled page:"),
        code(
            """%oc navigate {form}?variant=restyled
r = s.oc_skill_replay(skill_id=shown["skill_id"], params={"who": "Lin", "email": "lin@example.org"},
                      step_range={"from": 1}).raise_for_error()
pd.DataFrame(r["step_results"])[["index", "kind", "resolved_via", "ok"]]"""
        ),
        code("view.close()\n" + TEARDOWN),
    ]


def capability_map() -> list[nbformat.NotebookNode]:
    return [
        md("""
# The capability map

A one-line-per-tool map generated from the registry, meant as a system-prompt preamble. It is
deterministic to the byte, capped in size and tokens, and checked for drift in CI.
"""),
        code(
            """from pathlib import Path

import pandas as pd

import ocnb
from ocnb import capmap, tokens
from ocnb.registry import capability_groups

text = capmap.generate()
print(text)"""
        ),
        md("## Size and tokens (cl100k_base, counted offline)"),
        code(
            """full = ocnb.build_registry(caps=capability_groups())  # the default set and every opt-in group
core = ocnb.build_registry()
figures = pd.Series(
    {
        "map bytes": len(text.encode()),
        "map tokens": tokens.count_text(text),
        "byte target": capmap.TARGET_BYTES,
        "byte ceiling": capmap.HARD_BYTES,
        "token cap": capmap.MAX_TOKENS,
        "full tool list tokens (JSON schemas)": tokens.count_tools([t.to_mcp() for t in full]),
        "core tool list tokens": tokens.count_tools([t.to_mcp() for t in core]),
        "tools (default set)": len(core),
        "tools (every group)": len(full),
    }
)
figures"""
        ),
        code('assert figures["map bytes"] <= capmap.HARD_BYTES and figures["map tokens"] <= capmap.MAX_TOKENS'),
        md("## Drift\nThe checked-in map must equal a fresh generation (`ocnb capability-map --check` in CI)."),
        code(
            """checked_in = Path.cwd().parent / capmap.DEFAULT_PATH
if checked_in.is_file():
    print("in step with the registry" if capmap.check(checked_in) else "DRIFT: run `ocnb capability-map`")
else:
    print(f"no checked-in map at {checked_in} (installed package?)")"""
        ),
        md("## Runtime cross-check\nThe names in the map are exactly the live tools, minus the discovery meta-tools."),
        code(
            """live = {t.name for t in core} - capmap.EXCLUDED
assert capmap.map_names(text) == live, capmap.map_names(text) ^ live
len(live)"""
        ),
        code(
            """pd.DataFrame(
    [{"category": t.category, "tool": t.name, "group": t.group, "schema tokens": tokens.count_json(t.to_mcp())} for t in full]
).groupby("category").agg(tools=("tool", "count"), schema_tokens=("schema tokens", "sum")).sort_values("schema_tokens")"""
        ),
    ]


def token_cost_report() -> list[nbformat.NotebookNode]:
    return [
        md("""
# Token-cost report

What ocnb costs an agent in context, counted with a real tokenizer (`cl100k_base`, offline):
the tool list, the capability map, each tool's schema, and the results of a session's calls —
`read_page` outputs among them. Anthropic publishes no offline tokenizer for current Claude models,
so Claude figures are estimates.
"""),
        code(SETUP),
        md("## Reading pages\n`read_page` on pages of the demo site, in its default (`ax`) mode and as text."),
        code(
            """import pandas as pd

from ocnb import capmap, tokens
from ocnb.commands.token_report import token_report

pages = ["index.html", "form.html", "search.html", "login.html", "dynamic.html", "long.html", "checkout.html"]
rows = []
for name in pages:
    s.navigate(url=site.page(name))
    ax = s.call("read_page").raise_for_error()
    txt = s.call("read_page", mode="text").raise_for_error()
    rows.append({"page": name, "ax tokens": tokens.count_text(ax["content"]), "text tokens": tokens.count_text(txt["content"])})
reads = pd.DataFrame(rows).set_index("page")
reads.style.bar(color="#a1d99b")"""
        ),
        md(
            "## The report\nTool list, default set, capability map, each tool's schema, and this session's results by tool."
        ),
        code("report = token_report(s, capability_map=capmap.generate())\nreport"),
        code("report.summary"),
        code('report.per_tool.head(12).style.bar(subset=["tokens"], color="#9ecae1")'),
        md("The same as plots: each tool's schema, and what this session's results cost, by tool."),
        code(
            """from ocnb.widgets.plots import tokens_by_tool

tokens_by_tool(report.per_tool, top=12, title="tool schema tokens");"""
        ),
        code(
            'tokens_by_tool(report.results, title="tokens of this session\'s results") if len(report.results) else None;'
        ),
        code(
            """figures = dict(zip(report.summary["item"], report.summary["tokens"]))
figures["median read_page (ax)"] = int(reads["ax tokens"].median())
print(f"token cost ({report.encoding}): " + ", ".join(f"{k} {int(v):,}" for k, v in figures.items()))"""
        ),
        code(TEARDOWN),
    ]


def task_signatures() -> list[nbformat.NotebookNode]:
    return [
        md("""
# Task signatures: deterministic task boundaries

A `BrowserTaskSignature` says which tools a task may use, when it has succeeded, when to stop and
what it may spend — checked without any LLM. It is a boundary, not a prompt.
"""),
        code(SETUP),
        code(
            """from ocnb.contracts import signatures

sig = {
    "version": 1,
    "id": "search-demo",
    "description": "Search the demo site for a word",
    "inputs": {"query": {"type": "string", "required": True, "redaction": "none"}},
    "allowedTools": ["navigate", "wait_for", "page_screenshot"],
    "success": {"kind": "dom_text", "selector": "#results-summary", "contains": "ocnb"},
    "loopGuards": [{"kind": "max_observation_calls", "limit": 3, "window": 10}],
    "budgets": {"maxToolCalls": 10, "maxWallMs": 30000},
}
signatures.validate_signature(sig)   # no errors"""
        ),
        md("Invalid signatures are refused with every error at once, each with its JSON path:"),
        code(
            """bad = {**sig, "allowedTools": "navigate", "surprise": 1, "budgets": {"maxToolCalls": -1}}
[(e.path, e.message) for e in signatures.validate_signature(bad)]"""
        ),
        code("print(signatures.dumps(sig))   # stable: the same signature always gives the same bytes"),
        md("## execute_plan with a signature"),
        code(
            """steps = [
    {"tool": "navigate", "args": {"url": site.page("search.html") + "?q=${query}"}},
    {"tool": "wait_for", "args": {"text": "Results for"}},
]
run = s.call("execute_plan", steps=steps, params={"query": "ocnb"}, signature=sig).raise_for_error()
run["taskSignature"]"""
        ),
        md("A step outside `allowedTools` fails the preflight: nothing runs."),
        code(
            """sneaky = steps[:1] + [{"tool": "javascript_tool", "args": {"expression": "document.title = 'pwned'"}}]
s.call("execute_plan", steps=sneaky, params={"query": "ocnb"}, signature=sig).data["taskSignature"]"""
        ),
        md(
            "## Live guards: fence every face of the session\nBound with `oc_task_start`, the signature checks every call — from this notebook or from an agent over MCP."
        ),
        code('s.call("oc_task_start", signature=sig, inputs={"query": "ocnb"}).raise_for_error()'),
        code('%oc javascript_tool "1 + 1"', "raises-exception"),
        code("%oc workflow_status"),
        code("%oc oc_task_finish"),
        code(TEARDOWN),
    ]


def mcp_shim() -> list[nbformat.NotebookNode]:
    return [
        md("""
# The MCP shim: an agent drives this notebook's browser

`%oc mcp start` serves the session's tools over streamable HTTP from inside the kernel, on
loopback, with a bearer token. An MCP client (Claude Code, Cursor, …) then acts on the very browser
this notebook uses, and every call lands in the same journal.
"""),
        code(SETUP),
        code("server = %oc mcp start"),
        code("%oc mcp status"),
        md("## A client, from the notebook itself\nThe official `mcp` SDK client, authenticated with the token."),
        code(
            """import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

async with httpx2.AsyncClient(headers=server.headers, timeout=httpx2.Timeout(30, read=300)) as http:
    async with Client(streamable_http_client(server.url, http_client=http)) as client:
        listed = await client.list_tools()
        nav = await client.call_tool("navigate", {"url": site.page("form.html")})
        shot = await client.call_tool("page_screenshot", {})
        refused = await client.call_tool("navigate", {"url": "file:///etc/passwd"})

print(len(listed.tools), "tools over MCP;", len(s.tools()), "in the session")
print("screenshot content:", [c.type for c in shot.content])
print("refused:", refused.is_error, refused.content[0].text[:120])"""
        ),
        md("## The agent's calls in the journal"),
        code(
            'journal = ocnb.journal_df(session_id=s.id)\njournal[journal["source"] == "mcp"][["ts", "tool", "ok", "error_code", "summary"]]'
        ),
        code("%oc mcp stop"),
        code(TEARDOWN),
    ]


NOTEBOOKS = {
    "quickstart": quickstart,
    "skill_authoring": skill_authoring,
    "capability_map": capability_map,
    "token_cost_report": token_cost_report,
    "task_signatures": task_signatures,
    "mcp_shim": mcp_shim,
}


def build(name: str) -> nbformat.NotebookNode:
    """The notebook ``name``, without outputs, with a python3 kernelspec."""
    nb = new_notebook(cells=NOTEBOOKS[name]())
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{name[:20]}-{i:02d}"
    nbformat.validate(nb)
    return nb


def main(argv: list[str] | None = None) -> int:
    names = (argv if argv is not None else sys.argv[1:]) or list(NOTEBOOKS)
    for name in names:
        path = HERE / f"{name}.ipynb"
        nbformat.write(build(name), path)
        print(f"wrote {path.relative_to(HERE.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
