"""MkDocs hook (mkdocs.yml ``hooks:``): the pages generated at build time, never written to docs/.

- ``index.md``, ``getting-started.md``, ``notebook.md``, ``mcp.md``: sections of the README (one text,
  shown in both places; its examples are the ones the docs tests run);
- ``reference/tools.md`` and one page per tool under ``reference/tools/``: from the registry — the
  description, the JSON Schema as a table, the capability group, the error codes the tool can return
  and an example call as MCP arguments (valid against the schema: tests/package/test_reference_site.py);
- ``reference/settings.md``: every ``Settings`` field with its default, environment variable, ``%config
  OcMagics`` trait and ``ocnb mcp`` option;
- ``reference/errors.md``: ``ocnb.errors.ERROR_CODES`` with each class;
- ``reference/api.md``: the public Python API through mkdocstrings.

Links from README text to files outside docs/ become links to the repository.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]
REPO = "https://github.com/ocnb/ocnb/blob/main/"

#: Codes any tool call can end with, whatever the tool.
EVERY_CALL = ("INVALID_ARGUMENT", "TIMEOUT", "CANCELLED", "SESSION_CLOSED", "BROWSER_UNAVAILABLE", "PAUSED", "INTERNAL")
#: And any call that acts on a page.
PAGE_CALL = ("TARGET_CLOSED", "PAGE_CRASHED", "BROWSER_CRASHED", "DIALOG_OPEN")
#: And any call that resolves an element (a ``ref`` or a ``query``).
TARGET_CALL = ("UNKNOWN_REF", "STALE_REF", "ELEMENT_NOT_FOUND", "AMBIGUOUS_TARGET", "NEEDS_HUMAN")
#: And any call with side effects: the ``confirm`` setting may hold it for a person's approval.
ACTING_CALL = ("APPROVAL_REQUIRED", "APPROVAL_DENIED", "APPROVAL_TIMEOUT")


def _readme_sections() -> dict[str, str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    out = {"_intro": parts[0]}
    for title, body in zip(parts[1::2], parts[2::2], strict=True):
        out[title.strip()] = body
    return out


def _relink(text: str) -> str:
    """README links: docs/x.md → x.md inside the site; other repository files → the repository."""

    def fix(m: re.Match[str]) -> str:
        label, target = m.group(1), m.group(2)
        if re.match(r"^[a-z]+:|^#", target):
            return m.group(0)
        if target.startswith("docs/"):
            return f"[{label}]({target.removeprefix('docs/')})"
        return f"[{label}]({REPO}{target})"

    return re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", fix, text)


def _codes_raised(fn: Any, depth: int = 3, seen: set[int] | None = None) -> set[str]:
    """Error codes ``fn`` raises by class name (``raise InvalidArgument(...)`` → INVALID_ARGUMENT), and
    those of the ocnb functions it calls, ``depth`` calls deep."""
    import inspect
    import textwrap

    from ocnb import errors

    seen = set() if seen is None else seen
    if id(fn) in seen or not callable(fn):
        return set()
    seen.add(id(fn))
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return set()
    codes: set[str] = set()
    scope = getattr(fn, "__globals__", {})
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        target = scope.get(node.func.id)
        if isinstance(target, type) and issubclass(target, errors.OcnbError) and "code" in target.__dict__:
            codes.add(target.code)
        elif depth > 0 and inspect.isfunction(target) and target.__module__.startswith("ocnb."):
            codes |= _codes_raised(target, depth - 1, seen)
    return codes


def _example_value(name: str, schema: dict[str, Any]) -> Any:
    if "enum" in schema:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return _example_value(name, schema[key][0])
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if "default" in schema:
        return schema["default"]
    if kind == "string":
        if "url" in name:
            return "https://example.com/"
        if name == "ref":
            return "ax_12"
        if name == "intent":
            return "say why you act"
        n = max(int(schema.get("minLength", 1)), 1)
        return ("text" * n)[: max(n, 4)]
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 1))
    if kind == "boolean":
        return True
    if kind == "array":
        return [_example_value(name, schema.get("items", {}))] if schema.get("minItems") else []
    if kind == "object":
        props = schema.get("properties", {})
        out = {k: _example_value(k, v) for k, v in props.items() if k in schema.get("required", [])}
        if not out and schema.get("minProperties"):
            extra = schema.get("additionalProperties")
            out["Full name"] = _example_value("value", extra) if isinstance(extra, dict) else "Ada Lovelace"
        return out
    return None


def example_args(tooldef: Any) -> dict[str, Any]:
    """An example of a tool's MCP arguments: its required arguments (and an intent, where it takes one)."""
    schema = tooldef.input_schema
    props = schema.get("properties", {})
    out = {k: _example_value(k, props[k]) for k in schema.get("required", [])}
    if "intent" in props:
        out["intent"] = "say why you act"
    return out


def _type(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " or ".join(_type(s) for s in schema[key])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_type(schema.get('items', {}))}"
    return str(kind) if not isinstance(kind, list) else " or ".join(kind)


def tool_page(t: Any) -> str:
    props = t.input_schema.get("properties", {})
    required = set(t.required)
    rows = ["| argument | type | required | description |", "| --- | --- | --- | --- |"]
    for name, schema in props.items():
        desc = str(schema.get("description", "")).replace("|", "\\|").replace("\n", " ")
        rows.append(f"| `{name}` | {_type(schema)} | {'yes' if name in required else ''} | {desc} |")
    codes = set(EVERY_CALL) | _codes_raised(t.handler)
    if t.check is not None:  # the argument check run before the browser is touched (a URL's scheme …)
        codes |= _codes_raised(t.check)
    if t.uses_page:
        codes |= set(PAGE_CALL)
    if t.side_effects:
        codes |= set(ACTING_CALL)
    if "ref" in props or "query" in props:
        codes |= set(TARGET_CALL)
    if t.accepts_intent:
        codes.add("INVALID_INTENT")
    from ocnb.errors import ERROR_CODES

    codes &= set(ERROR_CODES)
    offered = "the default set" if t.group == "core" else f'the `{t.group}` group (`Session(caps=["{t.group}"])`)'
    example = json.dumps(example_args(t), indent=2)
    py_args = ", ".join(f"{k}={v!r}" for k, v in example_args(t).items())
    lines = [
        f"# `{t.name}`",
        "",
        t.description,
        "",
        f"Category **{t.category}**; offered in {offered}; "
        + ("acts on the page (side effects)." if t.side_effects else "reads only."),
        "",
        "## Arguments",
        "",
        *(rows if props else ["None."]),
        "",
        "## Example",
        "",
        "MCP `tools/call` arguments:",
        "",
        "```json",
        example,
        "```",
        "",
        f"Python: `s.{t.name}({py_args})`",
        "",
        "## Errors it can return",
        "",
        *[f"- [`{c}`](../errors.md#{c.lower()}) — {ERROR_CODES[c]}" for c in sorted(codes)],
        "",
        f"Its code: [`{t.handler.__module__}`]({REPO}{t.handler.__module__.replace('.', '/')}.py).",
        "",
    ]
    return "\n".join(lines)


def tools_index(tools: list[Any]) -> str:
    by_cat: dict[str, list[Any]] = {}
    for t in tools:
        by_cat.setdefault(t.category, []).append(t)
    out = ["# Tools", "", f"Every tool ocnb offers ({len(tools)}), by category, generated from the registry.", ""]
    for cat in sorted(by_cat):
        out += [f"## {cat}", "", "| tool | group | summary |", "| --- | --- | --- |"]
        for t in sorted(by_cat[cat], key=lambda t: t.name):
            out.append(f"| [`{t.name}`](tools/{t.name}.md) | {t.group} | {t.summary.replace('|', '/')} |")
        out.append("")
    return "\n".join(out)


def settings_page() -> str:
    from ocnb.settings import ENV, Settings

    env_of: dict[str, list[str]] = {}
    for var, text in ENV.items():
        env_of.setdefault(text.split(":", 1)[0].strip(), []).append(var)
    try:
        from ocnb.magics import OcMagics

        traits = set(OcMagics.class_trait_names(config=True))
    except Exception:  # noqa: BLE001 - without the notebook extra the column stays empty
        traits = set()
    out = [
        "# Settings",
        "",
        "One frozen value, `ocnb.Settings`; every face maps onto it: `Session(name=value)`, "
        "`Settings.from_env()` (the only reader of `OCNB_*`), `%config OcMagics.name = value`, `ocnb mcp` options.",
        "",
        "| setting | default | environment | `%config OcMagics.` |",
        "| --- | --- | --- | --- |",
    ]
    for f in dataclasses.fields(Settings):
        if f.name.startswith("_"):
            continue
        default = (
            f.default
            if f.default is not dataclasses.MISSING
            else (
                f.default_factory() if f.default_factory is not dataclasses.MISSING else ""  # type: ignore[misc]
            )
        )
        env = ", ".join(f"`{v}`" for v in env_of.get(f.name, []))
        trait = f"`{f.name}`" if f.name in traits else ""
        out.append(f"| `{f.name}` | `{default!r}` | {env} | {trait} |".replace("\n", " "))
    out += ["", "## Environment variables", ""]
    out += [f"- `{var}` — {text}" for var, text in ENV.items()]
    return "\n".join(out) + "\n"


def errors_page() -> str:
    from ocnb import errors

    out = [
        "# Error codes",
        "",
        "Every failed call has one stable code (`result.error.code`). Each is a class of "
        "`ocnb.errors` (`error_class(code)`); a failure never raises out of a call.",
        "",
    ]
    for code, text in errors.ERROR_CODES.items():
        cls = errors.error_class(code)
        out += [f"## {code}", "", f"{text} — `ocnb.errors.{cls.__name__}`", ""]
    return "\n".join(out)


API = """# Python API

The names `import ocnb` gives. Every tool is also a method of `Session` (`s.navigate(url=...)`),
typed for editors and type checkers (see [Tools](tools.md)).

::: ocnb.Session
    options:
      members: [call, configure, close, start, journal_df, trace_df, load_secrets, resume_handoff, tools]

::: ocnb.Settings

::: ocnb.ToolResult

::: ocnb.Pool

::: ocnb.journal_df

::: ocnb.trace_df

::: ocnb.replay_df
"""


def on_files(files: Files, config: Any) -> Files:
    import ocnb  # noqa: F401 - the package hands the registry its catalogue
    from ocnb.registry import all_tooldefs

    def add(path: str, text: str) -> None:
        files.append(File.generated(config, path, content=text))

    readme = _readme_sections()
    intro = _relink(readme["_intro"])
    add("index.md", intro)
    add("getting-started.md", "# Getting started\n\n" + _relink(readme["A first session"]))
    add("notebook.md", "# The notebook face\n\n" + _relink(readme["In a notebook"]))
    add("mcp.md", "# The MCP server\n\n" + _relink(readme["Connecting an MCP client"]))
    if files.get_file_from_path("security.md") is None:
        add("security.md", "# Security model\n\n" + _relink(readme.get("Security model", "")))
    tools = sorted(all_tooldefs(), key=lambda t: t.name)
    add("reference/tools.md", tools_index(tools))
    for t in tools:
        add(f"reference/tools/{t.name}.md", tool_page(t))
    add("reference/settings.md", settings_page())
    add("reference/errors.md", errors_page())
    add("reference/api.md", API)
    return files
