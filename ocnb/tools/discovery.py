"""The discovery meta-tools: ``discover_capabilities`` (per-turn discovery over the session's tools,
recorded skills and capability manifests, see :mod:`ocnb.discovery`) and ``expand_tools`` (the full list)."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from typing import Any

from ..discovery import DiscoveryEngine, default_retriever, from_skills, from_tooldefs, manifest_roots
from ..discovery.learned import LearnedExamples
from ..dispatch import ToolContext
from ..registry import Registry, capability_groups, tool
from ..skills.store import SkillStore

__all__ = ["META_TOOLS", "discover_capabilities", "engine_for", "expand_tools", "tools_found"]

#: Tools that exist to find other tools; they are not indexed themselves.
META_TOOLS = frozenset({"discover_capabilities", "expand_tools"})

_LOCK = threading.Lock()


def engine_for(session: Any) -> DiscoveryEngine:
    """The session's discovery engine (created on first use, kept in its extensions), in step with its registry."""
    with _LOCK:
        engine = session.extensions.get(DiscoveryEngine)
        if engine is None:
            engine = DiscoveryEngine(
                manifest_roots=manifest_roots(session.home, session.settings.capability_dirs),
                retriever=default_retriever(cache_dir=session.home / "cache" / "discovery"),
            )
            session.extensions.put(engine)
        # Every tool of every capability group is found; one this session does not offer says which
        # group to ask for (``needs_caps`` in the result) instead of being invisible.
        offered = {t.name for t in session.registry}
        everything = Registry(caps=capability_groups())
        tools = [
            dataclasses.replace(d, available=d.name in offered)
            for d in from_tooldefs(t for t in everything if t.name not in META_TOOLS)
        ]
        try:
            skills = from_skills(SkillStore(session.home).all())
        except Exception:  # noqa: BLE001 - a corrupt skill file must not break discovery of tools
            skills = []
        if session.settings.discovery_learn:  # examples learned from use (see ocnb.discovery.learned)
            learned = session.extensions.setdefault(LearnedExamples, lambda: LearnedExamples(session.home)).all()
            tools = [dataclasses.replace(d, learned=learned.get(d.id, ())) for d in tools]
            skills = [dataclasses.replace(d, learned=learned.get(d.id, ())) for d in skills]
        current = {d.id for d in [*tools, *skills]}
        stale = [
            i
            for i, d in engine.descriptors.items()
            if d.source_ref.startswith(("registry:", "skill:")) and i not in current
        ]
        engine.remove(stale)
        engine.add([*tools, *skills])
        return engine


def tools_found(data: Any) -> list[str]:
    """The registry tools a discovery result lists (its ``tool:`` entries), best first."""
    entries = (data.get("results") or []) if isinstance(data, dict) else []
    ids = [str(e.get("id", "")) for e in entries if isinstance(e, dict)]
    return [i.removeprefix("tool:") for i in ids if i.startswith("tool:")]


@tool(
    name="discover_capabilities",
    category="discovery",
    uses_page=False,
    reveals=tools_found,
    description=(
        "Find the tools, recorded skills and capability manifests relevant to a task, "
        "best first with a relevance score. Use it before acting when you do not know which tool fits."
    ),
    properties={
        "query": {"type": "string", "minLength": 1, "description": "What you want to do, in plain words."},
        "kind": {"type": "string", "enum": ["tool", "skill", "any"], "default": "any"},
        "category": {"type": "string", "description": "Only this category (optional)."},
        "top_k": {"type": "integer", "minimum": 1, "maximum": 50},
        "min_relevance": {"type": "number", "minimum": 0, "maximum": 1},
        "only_available": {"type": "boolean", "description": "Leave out tools this session does not offer."},
        "budgets": {
            "type": "object",
            "description": "Token budget per tier.",
            "properties": {t: {"type": "integer", "minimum": 0} for t in ("tier0", "tier1", "tier2")},
            "additionalProperties": False,
        },
    },
    required=["query"],
)
async def discover_capabilities(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    engine = engine_for(ctx.session)
    budgets = dataclasses.replace(engine.budgets, **args["budgets"]) if args.get("budgets") else None
    result = await asyncio.to_thread(
        engine.discover,
        args["query"],
        args.get("kind", "any"),
        args.get("category"),
        top_k=args.get("top_k"),
        min_relevance=args.get("min_relevance"),
        budgets=budgets,
        only_available=bool(args.get("only_available", False)),
    )
    return result.to_dict()


@tool(
    name="expand_tools",
    category="discovery",
    uses_page=False,
    description="List the offered tools by category and capability group with one-line summaries.",
    properties={"category": {"type": "string"}},
)
async def expand_tools(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    cats: dict[str, list[dict[str, Any]]] = {}
    for t in ctx.session.registry:
        if args.get("category") and t.category != args["category"]:
            continue
        cats.setdefault(t.category, []).append({"name": t.name, "group": t.group, "summary": t.summary})
    return {"categories": {k: cats[k] for k in sorted(cats)}, "count": sum(len(v) for v in cats.values())}
