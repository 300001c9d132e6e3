"""Turn a skill into a standalone Playwright Python script that runs without ocnb."""

from __future__ import annotations

import json
import re
from typing import Any

from .replay import _VAR

__all__ = ["export_script"]

_SECRET = re.compile(r"\$\{SECRET:([A-Za-z_][A-Za-z0-9_]*)\}")

_HEADER = '''#!/usr/bin/env python3
"""{title}

Exported from ocnb skill {skill_id} (domain {domain}). Runs with Playwright alone:
    pip install playwright && python -m playwright install chromium   # or set CHROMIUM=/usr/bin/chromium
    python {filename} {param_usage}
Secrets are read from environment variables of the same name.
"""

import argparse
import os

from playwright.sync_api import sync_playwright

STEPS = {steps}


def locate(frame, sel):
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


def resolve(page, step):
    """The first selector of the chain that matches exactly one element."""
    frame = page.frames[step.get("frame_ordinal", 0)]
    for _ in range(30):
        for sel in step["selectors"]:
            loc = locate(frame, sel)
            if loc is not None and loc.count() == 1:
                return loc
        page.wait_for_timeout(100)
    raise SystemExit(f"no selector matched for step {{step}}")


def fill_in(value, params):
    if not isinstance(value, str):
        return value
    for name, v in params.items():
        value = value.replace("${{" + name + "}}", str(v))
    import re
    return re.sub(r"\\$\\{{SECRET:([A-Za-z_][A-Za-z0-9_]*)\\}}", lambda m: os.environ[m.group(1)], value)


def run(page, params):
    for step in STEPS:
        args = {{k: fill_in(v, params) for k, v in step.get("args", {{}}).items()}}
        kind, action = step["kind"], args.get("action")
        if kind == "navigate":
            page.goto(args["url"])
            continue
        if kind == "press" and not step["selectors"]:
            page.keyboard.press(args["key"])
            continue
        el = resolve(page, step)
        if kind == "press":
            el.press(args["key"])
        elif kind == "scroll":
            el.scroll_into_view_if_needed()
        elif kind == "select":
            el.select_option(label=str(args.get("value")))
        elif kind == "fill":
            tag, typ = el.evaluate("e => [e.tagName.toLowerCase(), (e.type || '').toLowerCase()]")
            if tag == "select":
                el.select_option(label=str(args.get("value")))
            elif typ in ("checkbox", "radio"):
                el.set_checked(args.get("value") not in (False, "false", "0", "", None))
            else:
                el.fill(str(args.get("value", "")))
        elif action == "double_click":
            el.dblclick()
        elif action == "check":
            el.check()
        elif action == "uncheck":
            el.uncheck()
        else:
            el.click()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
{param_args}    parser.add_argument("--start-url", default={start_url!r}, help="page to open first (when the skill does not navigate)")
    parser.add_argument("--headed", action="store_true")
    ns = parser.parse_args()
    params = {{k: v for k, v in vars(ns).items() if k not in ("start_url", "headed")}}
    with sync_playwright() as p:
        args = ["--no-sandbox"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
        browser = p.chromium.launch(headless=not ns.headed, executable_path=os.environ.get("CHROMIUM") or None, args=args)
        page = browser.new_page()
        if STEPS and STEPS[0]["kind"] != "navigate" and ns.start_url:
            page.goto(ns.start_url)
        run(page, params)
        print("done:", page.url, "|", page.title())
        browser.close()


if __name__ == "__main__":
    main()
'''


def export_script(skill: dict[str, Any], filename: str = "skill.py") -> str:
    """The text of a standalone Playwright script replaying ``skill`` (``${var}`` become CLI options)."""
    steps: list[dict[str, Any]] = []
    start_url = None
    for st in skill.get("steps", []):
        art = st.get("replay_artifact") or {}
        start_url = start_url or art.get("url")
        for low in art.get("steps", []):
            steps.append({k: low[k] for k in ("kind", "selectors", "frame_ordinal", "args") if k in low})
    params = sorted(set(_VAR.findall(json.dumps(steps))))
    param_args = "".join(f"    parser.add_argument({('--' + p)!r}, dest={p!r}, required=True)\n" for p in params)
    return _HEADER.format(
        title=f"{skill['name']} — replay script",
        skill_id=skill["id"],
        domain=skill.get("domain", ""),
        filename=filename,
        param_usage=" ".join(f"--{p} VALUE" for p in params),
        steps=json.dumps(steps, indent=4, ensure_ascii=False)
        .replace("null", "None")
        .replace("true", "True")
        .replace("false", "False"),
        param_args=param_args,
        start_url=skill.get("start_url") or start_url,
    )
