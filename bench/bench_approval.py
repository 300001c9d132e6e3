"""What asking costs when nothing is risky: a click on a form's submit button with ``confirm="never"``
against ``confirm="risky"`` (the risk check reads the element's name and its form's target origin),
medians over N clicks each, in one run. Target: ratio ≤ 1.10.

    python -m bench.bench_approval [--n 40]
"""

from __future__ import annotations

import argparse
import os
import tempfile

import ocnb

from .common import median_ms, save

#: A form whose submission the page handles itself: the click is the whole action, no navigation.
PAGE = (
    "data:text/html,<form action='/save' onsubmit='event.preventDefault();document.title=String(Date.now())'>"
    "<button type='submit'>Save settings</button></form>"
)


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=40)
    n = parser.parse_args(argv).n
    os.environ.setdefault("OCNB_HOME", tempfile.mkdtemp(prefix="ocnb-bench-"))
    figures: dict[str, float] = {}
    with ocnb.Session(headless=True) as s:
        s.start()
        s.call("navigate", url=PAGE).raise_for_error()
        ref = s.call("find", query="Save settings").raise_for_error().data["candidates"][0]["ref"]

        def click() -> None:
            s.call("interact", ref=ref).raise_for_error()

        click()  # warm up
        for mode in ("never", "risky", "never", "risky"):  # interleaved: drift hits both alike
            s.configure(confirm=mode)
            figures[f"{mode}_click_ms"] = min(figures.get(f"{mode}_click_ms", float("inf")), median_ms(click, n))
    figures["risky_ratio"] = figures["risky_click_ms"] / figures["never_click_ms"]
    print(
        f"click: confirm=never {figures['never_click_ms']:.2f} ms, confirm=risky {figures['risky_click_ms']:.2f} ms"
        f" → {figures['risky_ratio']:.2f}× (target ≤ 1.10×)"
    )
    save("approval", {"n": n, **figures})
    return figures


if __name__ == "__main__":
    main()
