"""Turn a skill into a standalone Playwright Python script that runs without ocnb.

The script is fixed code plus data. Every piece of data — the skill's name, id and domain, its
steps, selectors and element fingerprints, the start URL, the parameter names — is embedded as a
Python literal (``pprint`` of a JSON round-trip, checked with ``ast.literal_eval``), never pasted into
code, docstrings or comments: a skill name holding ``\"\"\"`` or a selector holding ``"false"`` stays
exactly what it was. ``${var}`` placeholders become required command-line options;
``${SECRET:NAME}`` is read from the environment variable ``NAME`` when the script runs.

The script finds each step's element the way ``oc_skill_replay`` does, with the same engine: ocnb's
in-page script (the perception bundle of ``ocnb/perception/js/``, embedded as the literal ``ENGINE``) singles the
element out through the selector chain and checks it against the recorded fingerprint before the
script acts; an element it cannot vouch for stops the script with the reason, nothing is done to it.
"""

from __future__ import annotations

import ast
import inspect
import json
import pprint
from pathlib import Path
from typing import Any

from ..errors import InvalidArgument
from ..files import atomic_write_text
from ..perception.actions import CHECKED_WORDS, UNCHECKED_WORDS, checked
from ..perception.refs import script as engine_script
from ..perception.selectors import TOLERABLE, step_fingerprint, stored_chain
from ..placeholders import param_names

__all__ = ["export_script", "script_data", "write_script"]

_HEAD = '''#!/usr/bin/env python3
"""Replay a skill recorded with ocnb, with Playwright alone (no ocnb needed).

    pip install playwright && python -m playwright install chromium   # or set CHROMIUM=/path/to/chromium
    python this_script.py --help    # the options: one per ${var} of the skill, --start-url, --tolerate, --headed

Secrets (${SECRET:NAME} in the skill) are read from environment variables of the same name.
The skill's name, id and domain are in SKILL below. Each step's element is found and checked against
its recorded fingerprint by ocnb's in-page engine (ENGINE, at the end of the file) before the script
acts on it; an element that cannot be vouched for stops the script and nothing is done to it.
"""

import argparse
import os
import re
import sys
import time
from urllib.parse import urlsplit

from playwright.sync_api import sync_playwright

'''

_BODY = '''

PLACEHOLDER = re.compile(r"\\$\\{(SECRET:)?([A-Za-z_][A-Za-z0-9_]*)\\}")


_NEXT = [1]  # the next ref number the engine may give out on this page (refs are never reused)


def engine(frame, req):
    """Run one request of ocnb's in-page engine in ``frame``."""
    out = frame.evaluate(ENGINE, dict(req, next=_NEXT[0]))
    _NEXT[0] = max(_NEXT[0], int(out["next"]))
    return out["result"]


def element(frame, ref):
    """The live element behind a ref the engine just gave out (None when it is gone)."""
    out = frame.evaluate_handle(ENGINE, {"op": "resolve", "id": int(ref[3:]), "next": _NEXT[0]})
    result = out.get_property("result")
    out.dispose()
    el = result.as_element()
    if el is None:
        result.dispose()
    return el


def origin_path(url):
    p = urlsplit(url)
    return f"{p.scheme}://{p.netloc}{p.path}"


def frames_of(page, step):
    """The recorded frame: found again by its address when it is a child frame, else by position."""
    where = (step.get("fingerprint") or {}).get("frame") or {}
    ordinal = int(where.get("ordinal", step.get("frame_ordinal", 0)) or 0)
    frames = page.frames
    if where.get("url"):
        hits = [f for f in frames if origin_path(f.url) == where["url"]]
        return sorted(hits, key=lambda f: frames.index(f) != ordinal)
    return [frames[ordinal]] if 0 <= ordinal < len(frames) else []


def why(out, fp):
    """One line on why no element could be vouched for."""
    status = out.get("status", "none")
    want = f"{fp.get('role', 'element')} {fp.get('name', '')!r}" if fp else "the recorded element"
    if status == "refused":
        r, found = out["refused"], out.get("found") or {}
        diffs = [f"{d} is {found.get(d)!r}, recorded {fp.get(d)!r}" for d in r.get("differs", []) if d != "visible"]
        if "visible" in r.get("differs", []):
            diffs.append("it is hidden")
        return f"refused {r.get('role')} {r.get('name', '')!r}, not the recorded {want}: " + "; ".join(diffs)
    if status == "ambiguous":
        return f"{out.get('agreeing', 2)} visible elements agree with the recorded {want}; none can be chosen"
    if status == "frame":
        return "the recorded frame is not on the page"
    return f"no element matches any selector of the recorded {want}"


def resolve(page, index, step, tolerate, timeout_s):
    """The element the chain singles out that agrees with the step's fingerprint (polled up to timeout_s)."""
    fp = {k: v for k, v in (step.get("fingerprint") or {}).items() if k != "frame"}
    req = {"op": "resolveStep", "chain": step["selectors"], "fingerprint": fp, "tolerate": tolerate}
    deadline = time.monotonic() + timeout_s
    while True:
        results = []
        for frame in frames_of(page, step):
            try:
                results.append((frame, engine(frame, req)))
            except Exception:  # a frame that navigated or went away: poll again
                continue
        oks = [(f, out) for f, out in results if out["status"] == "ok"]
        if len(oks) == 1:
            frame, out = oks[0]
            el = element(frame, out["ref"])
            if el is not None:
                return el
        if time.monotonic() >= deadline:
            if len(oks) > 1:
                last = {"status": "ambiguous", "agreeing": len(oks)}
            else:
                informative = [out for _, out in results if out["status"] != "none"]
                last = informative[0] if informative else (results[0][1] if results else {"status": "frame"})
            sys.exit(f"step {index} ({step['kind']}): {why(last, fp)}; nothing was done to it")
        page.wait_for_timeout(50)


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


def run(page, params, tolerate=(), timeout_s=5.0):
    """Run every step on ``page``; ``tolerate`` names fingerprint words that may differ (see TOLERABLE)."""
    fields = sorted({f for word in tolerate for f in TOLERABLE[word]})
    for index, step in enumerate(STEPS):
        args = fill_in(step.get("args", {}), params)
        kind, action = step["kind"], args.get("action")
        if kind == "navigate":
            page.goto(args["url"])
            continue
        if kind == "press" and not step["selectors"]:
            page.keyboard.press(args["key"])
            continue
        el = resolve(page, index, step, fields, timeout_s)
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
                el.set_checked(checked(args.get("value")))
            else:
                el.fill(str(args.get("value", "")))
        elif kind == "fill":
            el.type(str(args.get("value", "")))
        elif kind == "upload":  # the paths the caller gives (--file_… PATH); the script runs as its caller
            paths = args.get("paths")
            el.set_input_files([paths] if isinstance(paths, str) else list(paths))
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
    if "tolerate" not in PARAMS:
        parser.add_argument(
            "--tolerate", action="append", default=[], choices=sorted(TOLERABLE), help="accept a changed name/label…"
        )
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
        run(page, params, ns.get("tolerate") or ())
        print("done:", page.url, "|", page.title())
        browser.close()

'''

_TAIL = """

if __name__ == "__main__":
    main()
"""


def _literal(value: Any) -> str:
    """``value`` (JSON data) as Python source that evaluates back to exactly the same data."""
    data = json.loads(json.dumps(value, ensure_ascii=False, allow_nan=False))
    text = pprint.pformat(data, indent=1, width=110, sort_dicts=False)
    if ast.literal_eval(text) != data:  # pragma: no cover - pprint writes literals; this guards the promise
        raise InvalidArgument("the skill's data cannot be written as a Python literal")
    return text


def script_data(skill: dict[str, Any]) -> dict[str, Any]:
    """What the script embeds: ``SKILL`` (id, name, domain), ``STEPS``, ``PARAMS``, ``START_URL``."""
    steps: list[dict[str, Any]] = []
    start_url = None
    for st in skill.get("steps", []):
        art = st.get("replay_artifact") or {}
        start_url = start_url or art.get("url")
        for low in art.get("steps", []):
            step = {k: low[k] for k in ("kind", "selectors", "frame_ordinal", "args") if k in low}
            step["selectors"] = stored_chain(low.get("selectors"))
            fp = step_fingerprint(low) if step["selectors"] else {}
            if fp:
                step["fingerprint"] = fp
            steps.append(step)
    return {
        "SKILL": {"id": skill["id"], "name": skill["name"], "domain": skill.get("domain", "")},
        "STEPS": steps,
        "PARAMS": param_names([s.get("args") for s in steps]),
        "START_URL": skill.get("start_url") or start_url,
    }


def export_script(skill: dict[str, Any], filename: str = "skill.py") -> str:
    """The text of a standalone Playwright script replaying ``skill`` (``${var}`` become CLI options).

    ``filename`` is accepted for compatibility; the script names itself through ``argparse``.
    """
    del filename
    data = script_data(skill)
    block = "".join(f"{name} = {_literal(value)}\n" for name, value in data.items())
    return _HEAD + block + _BODY + _checked_block() + _engine_block() + _TAIL


def _checked_block() -> str:
    """The checkbox rule of :func:`ocnb.perception.actions.checked`, copied into the script as source."""
    return (
        "\n\n# The checkbox rule of ocnb.perception.actions (form_input and oc_skill_replay use the same).\n"
        f"CHECKED_WORDS = {sorted(CHECKED_WORDS)!r}\nUNCHECKED_WORDS = {sorted(UNCHECKED_WORDS)!r}\n\n\n"
        + inspect.getsource(checked)
    )


def _engine_block() -> str:
    """ocnb's matching engine, as data: the tolerable words and the in-page script."""
    engine = {
        "TOLERABLE": {word: list(fields) for word, fields in TOLERABLE.items()},
        "ENGINE": engine_script(),  # the perception bundle (ocnb/perception/js/): the engine oc_skill_replay uses
    }
    return "\n# ocnb's in-page engine (ocnb/perception/js/, bundled), the one oc_skill_replay uses.\n" + "".join(
        f"{name} = {_literal(value)}\n" for name, value in engine.items()
    )


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
