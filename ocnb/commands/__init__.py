"""The ``ocnb`` command (``ocnb demo``, ``ocnb demo-site``, ``ocnb capability-map``, ``ocnb mcp``) and
the modules behind it: :mod:`~ocnb.commands.demo`, :mod:`~ocnb.commands.demosite` (the bundled site),
:mod:`~ocnb.commands.notebooks` (the notebook runner), :mod:`~ocnb.commands.token_report` and
:mod:`~ocnb.commands.capmap` (the capability map). ``ocnb mcp`` is :mod:`ocnb.mcp.cli`.
"""

from __future__ import annotations

import importlib
import sys

from .._extras import MissingExtraError

__all__ = ["main"]

COMMANDS = {
    "demo": ("ocnb.commands.demo", "run the demo against the bundled site and write reports/"),
    "demo-site": ("ocnb.commands.demosite", "serve the bundled demo site on 127.0.0.1"),
    "capability-map": ("ocnb.commands.capmap", "print the tool map (--print), write it (--path), check it (--check)"),
    "mcp": ("ocnb.mcp.cli", "serve the tools over MCP (stdio, or --http PORT)"),
}


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print("usage: ocnb COMMAND [ARGS]\n\ncommands:")
        for name, (_, text) in COMMANDS.items():
            print(f"  {name:<16} {text}")
        return 0
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"ocnb: unknown command {name!r}; run `ocnb --help`", file=sys.stderr)
        return 2
    try:
        module = importlib.import_module(COMMANDS[name][0])
    except MissingExtraError as exc:  # e.g. `ocnb mcp` without the 'mcp' extra
        print(f"ocnb {name}: {exc}", file=sys.stderr)
        return 2
    return int(module.main(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
