"""What binding a secret to origins costs a call: the same calls with no bound secret and with one.

With a bound secret, ``form_input`` of it checks the origin of the field's frame, and every click
reads the form it might submit (one evaluation in the page) to see whether a bound secret is in it.
Three operations on the demo sign-up form, medians over N calls each, measured in one run with the
two arms called in turn, so both see the same machine: a click on a checkbox, ``form_input`` of a
secret into the password field, and ``javascript_tool`` (the before-hook's cost alone).

    python -m bench.bench_secret_origins [--n 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

import ocnb
from ocnb.commands.demosite import serve
from ocnb.origins import origin_of

from .common import save

SECRET = "correct-horse-battery"


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=30)
    opts = parser.parse_args(argv)
    os.environ.setdefault("OCNB_HOME", tempfile.mkdtemp(prefix="ocnb-bench-"))
    ops: dict[str, Callable[[ocnb.Session], Any]] = {
        "click": lambda s: s.call("interact", query="I accept the terms", action="click").raise_for_error(),
        "form_input": lambda s: s.call("form_input", query="Password", value="${SECRET:PW}").raise_for_error(),
        "javascript": lambda s: s.call("javascript_tool", expression="1 + 1").raise_for_error(),
    }
    samples: dict[str, list[float]] = {f"{op}_{arm}": [] for op in ops for arm in ("free", "bound")}
    with serve() as site, ocnb.Session(headless=True) as free, ocnb.Session(headless=True) as bound:
        url = site.page("form.html")
        free.secrets.update({"PW": SECRET})
        bound.secrets.update({"PW": SECRET})
        bound.secrets.bind("PW", [str(origin_of(url))])
        for s in (free, bound):
            s.call("navigate", url=url).raise_for_error()
        for op, fn in ops.items():
            for s in (free, bound):  # warm-up
                fn(s)
            for i in range(opts.n):  # the two arms call by call, in turn, so both see the same machine
                arms = (("free", free), ("bound", bound)) if i % 2 else (("bound", bound), ("free", free))
                for arm, s in arms:
                    t0 = time.perf_counter()
                    fn(s)
                    samples[f"{op}_{arm}"].append((time.perf_counter() - t0) * 1000)
    figures: dict[str, float] = {f"{k}_ms": statistics.median(v) for k, v in samples.items()}
    for op in ops:
        figures[f"{op}_ratio"] = figures[f"{op}_bound_ms"] / figures[f"{op}_free_ms"]
        print(
            f"{op}: no bound secret {figures[f'{op}_free_ms']:.2f} ms, "
            f"PW bound {figures[f'{op}_bound_ms']:.2f} ms → {figures[f'{op}_ratio']:.2f}×"
        )
    save("secret_origins", {"n": opts.n, **figures})
    return figures


if __name__ == "__main__":
    main()
