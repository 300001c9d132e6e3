"""Turn a skill into a standalone Playwright Python script that runs without ocnb.

The script is fixed code plus data. Every piece of data — the skill's name, id and domain, its
steps and selectors, the start URL, the parameter names — is embedded as a Python literal
(``pprint`` of a JSON round-trip, checked with ``ast.literal_eval``), never pasted into code,
docstrings or comments: a skill name holding ``\"\"\"`` or a selector holding ``"false"`` stays
exactly what it was. ``${var}`` placeholders become required command-line options;
``${SECRET:NAME}`` is read from the environment variable ``NAME`` when the script runs.
"""

from __future__ import annotations

import ast
import json
import pprint
from pathlib import Path
from typing import Any

from ..errors import InvalidArgument
from ..storage import atomic_write_text
from .replay import _VAR

__all__ = ["export_script", "script_data", "write_script"]

_HEAD = '''#!/usr/bin/env python3
"""Replay a skill recorded with ocnb, with Playwright alone (no ocnb needed).

    pip install playwright && python -m playwright install chromium   # or set CHROMIUM=/path/to/chromium
    python this_script.py --help    # the options: one per ${var} of the skill, --start-url, --headed

Secrets (${SECRET:NAME} in the skill) are read from environment variables of the same name.
The skill's name, id and domain are in SKILL below.
"""

import argparse
import os
import re
import sys

from playwright.sync_api import sync_playwright

'''

_BODY = '''

PLACEHOLDER = re.compile(r"\\$\\{(SECRET:)?([A-Za-z_][A-Za-z0-9_]*)\\}")


def locate(frame, sel):
    """A Playwright locator for one selector-chain entry (None for types a script cannot use)."""
    kind = sel["type"]
    if kind == "role_name":
        return frame.get_by_role(sel["role"], name=sel.get("name") or None, exact=True)
    if kind == "accessible_name":
        return frame.get_by_label(sel["value"], exact=True)
    if kind == "css":
        return frame.locator(sel["value"])
    if kind == "xpath":
        return frame.locator("xpath=" + sel["value"])
    if kind == "text":
        return frame.get_by_text(sel["value"], exact=True)
    return None


def resolve(page, index, step):
    """The first selector of the chain that matches exactly one element (retried for about 3 s)."""
    for _ in range(30):
        frames = page.frames
        ordinal = step.get("frame_ordinal", 0)
        frame = frames[ordinal] if 0 <= ordinal < len(frames) else None
        for sel in step["selectors"] if frame is not None else []:
            loc = locate(frame, sel)
            if loc is not None and loc.count() == 1:
                return loc
        page.wait_for_timeout(100)
    tried = ", ".join(sel["type"] for sel in step["selectors"])
    sys.exit(f"step {index} ({step['kind']}): no selector matched exactly one element (tried {tried})")


def fill_in(value, params):
    """``${var}`` from the command line, ``${SECRET:NAME}`` from the environment."""
    if isinstance(value, dict):
        return {k: fill_in(v, params) for k, v in value.items()}
    if isinstance(value, list):
        return [fill_in(v, params) for v in value]
    if not isinstance(value, str):
        return value

    def one(m):
        if m.group(1):
            if m.group(2) not in os.environ:
                sys.exit(f"set the environment variable {m.group(2)} (the skill uses ${{SECRET:{m.group(2)}}})")
            return os.environ[m.group(2)]
        return str(params[m.group(2)]) if m.group(2) in params else m.group(0)

    return PLACEHOLDER.sub(one, value)


def run(page, params):
    for index, step in enumerate(STEPS):
        args = fill_in(step.get("args", {}), params)
        kind, action = step["kind"], args.get("action")
        if kind == "navigate":
            page.goto(args["url"])
            continue
        if kind == "press" and not step["selectors"]:
            page.keyboard.press(args["key"])
            continue
        el = resolve(page, index, step)
        if kind == "press":
            el.press(args["key"])
        elif kind == "scroll":
            el.scroll_into_view_if_needed()
        elif kind == "select":
            el.select_option(label=str(args.get("value")))
        elif kind == "fill" and action != "type":
            tag, typ = el.evaluate("e => [e.tagName.toLowerCase(), (e.type || '').toLowerCase()]")
            if tag == "select":
                el.select_option(label=str(args.get("value")))
            elif typ in ("checkbox", "radio"):
                el.set_checked(args.get("value") not in (False, "false", "0", "", None))
            else:
                el.fill(str(args.get("value", "")))
        elif kind == "fill":
            el.press_sequentially(str(args.get("value", "")))
        elif action == "double_click":
            el.dblclick()
        elif action == "check":
            el.check()
        elif action == "uncheck":
            el.uncheck()
        elif action == "hover":
            el.hover()
        else:
            el.click()


def main(argv=None):
    parser = argparse.ArgumentParser(description="Replay the ocnb skill described by SKILL in this file.")
    for name in PARAMS:
        parser.add_argument("--" + name, dest="param:" + name, required=True, metavar="VALUE")
    parser.add_argument("--start-url", default=START_URL, help="page to open first (when the skill does not navigate)")
    if "headed" not in PARAMS:
        parser.add_argument("--headed", action="store_true", help="show the browser window")
    ns = vars(parser.parse_args(argv))
    params = {k[len("param:"):]: v for k, v in ns.items() if k.startswith("param:")}
    with sync_playwright() as p:
        args = ["--no-sandbox"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
        browser = p.chromium.launch(
            headless=not ns.get("headed"), executable_path=os.environ.get("CHROMIUM") or None, args=args
        )
        page = browser.new_page()
        if STEPS and STEPS[0]["kind"] != "navigate" and ns["start_url"]:
            page.goto(ns["start_url"])
        print("skill:", SKILL["name"], SKILL["id"])
        run(page, params)
        print("done:", page.url, "|", page.title())
        browser.close()


if __name__ == "__main__":
    main()
'''


def _literal(value: Any) -> str:
    """``value`` (JSON data) as Python source that evaluates back to exactly the same data."""
    data = json.loads(json.dumps(value, ensure_ascii=False, allow_nan=False))
    text = pprint.pformat(data, indent=1, width=110, sort_dicts=False)
    if ast.literal_eval(text) != data:  # pragma: no cover - pprint writes literals; this guards the promise
        raise ValueError("the skill's data cannot be written as a Python literal")
    return text


def script_data(skill: dict[str, Any]) -> dict[str, Any]:
    """What the script embeds: ``SKILL`` (id, name, domain), ``STEPS``, ``PARAMS``, ``START_URL``."""
    steps: list[dict[str, Any]] = []
    start_url = None
    for st in skill.get("steps", []):
        art = st.get("replay_artifact") or {}
        start_url = start_url or art.get("url")
        for low in art.get("steps", []):
            steps.append({k: low[k] for k in ("kind", "selectors", "frame_ordinal", "args") if k in low})
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, str):
            found.update(_VAR.findall(value))
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk([s.get("args") for s in steps])
    return {
        "SKILL": {"id": skill["id"], "name": skill["name"], "domain": skill.get("domain", "")},
        "STEPS": steps,
        "PARAMS": sorted(found),
        "START_URL": skill.get("start_url") or start_url,
    }


def export_script(skill: dict[str, Any], filename: str = "skill.py") -> str:
    """The text of a standalone Playwright script replaying ``skill`` (``${var}`` become CLI options).

    ``filename`` is accepted for compatibility; the script names itself through ``argparse``.
    """
    del filename
    data = script_data(skill)
    block = "".join(f"{name} = {_literal(value)}\n" for name, value in data.items())
    return _HEAD + block + _BODY


def write_script(skill: dict[str, Any], path: str | Path, *, overwrite: bool = False) -> dict[str, Any]:
    """Write the script of ``skill`` to ``path`` (a ``.py`` file) atomically.

    An existing file is refused with ``INVALID_ARGUMENT`` unless ``overwrite`` is true.
    """
    target = Path(path)
    if target.suffix != ".py":
        raise InvalidArgument("path must end in .py", details={"path": str(target)})
    if target.is_dir():
        raise InvalidArgument(f"{target} is a folder; give a .py file path", details={"path": str(target)})
    text = export_script(skill, filename=target.name)
    try:
        atomic_write_text(target, text, overwrite=overwrite)
    except FileExistsError:
        raise InvalidArgument(
            f"{target} exists; pass overwrite: true to replace it", details={"path": str(target), "exists": True}
        ) from None
    return {"path": str(target), "bytes": len(text.encode()), "steps": len(script_data(skill)["STEPS"])}
