"""Notebook widgets: the live browser, the journal, the skill recorder, the human hand-off and the approval desk.

Every action a widget takes goes through :func:`ocnb.dispatch` with ``source="widget"``, so it is
journaled like a call from code; custom front-end code (the clickable screenshot) is an anywidget
ES module shipped in the wheel (:func:`assets_dir`).
"""

from .._extras import extra

with extra("notebook"):
    from .assets import assets_dir
    from .browser_view import BrowserView
    from .caller import ScriptedCaller, SessionCaller
    from .desk import AgentPanel, ApprovalDesk
    from .handoff import HumanHandoff
    from .journal_view import JournalView
    from .screen import ScreenView
    from .skill_recorder import SkillRecorder
    from .watch import SessionWatcher, watcher_for

__all__ = [
    "AgentPanel",
    "ApprovalDesk",
    "BrowserView",
    "HumanHandoff",
    "JournalView",
    "ScreenView",
    "ScriptedCaller",
    "SessionCaller",
    "SessionWatcher",
    "SkillRecorder",
    "assets_dir",
    "watcher_for",
]
