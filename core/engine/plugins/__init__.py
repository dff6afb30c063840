"""The engine's features as plugins of the step kernel, and the default set the executor registers.

Each plugin is an object with ``@hookimpl`` methods (:mod:`core.engine.hooks`)
built on the :class:`~core.engine.hooks.Ports` it needs; none imports the
executor or the pipeline (``.importlinter``).  :func:`default_plugins` is the
one registration list: a new feature is a new module and one line here.
"""
from __future__ import annotations

from core.engine.aware import AwarenessPlugin
from core.engine.chosen import ChosenPlugin
from core.engine.evidence import EvidencePlugin
from core.engine.graph import GraphRecorder
from core.engine.hooks import Ports
from core.engine.plugins.answer_popup import AnswerPopupPlugin
from core.engine.plugins.breakpoints import BreakpointPlugin
from core.engine.plugins.capture import CapturePlugin
from core.engine.plugins.effects_seen import EffectsSeenPlugin
from core.engine.plugins.snapshot import StepSnapshotPlugin
from core.engine.screen import ScreenPlugin
from core.engine.skilled import SkillsPlugin
from core.engine.takeover import TakeoverPlugin

__all__ = ["default_plugins"]


def default_plugins(ports: Ports) -> list[object]:
    """The plugins every run has, in registration order (pluggy asks the last registered first,
    ``tryfirst`` implementations before all; notifications go in registration order): change detection
    (R1), state awareness (S2, S3), the state graph (P4), evidence, breakpoints, a person's chosen candidate,
    skills' safety (K6), a takeover's recording and correction, failure capture (K2), what each control's use
    did for the model's guard (issue 21), each step's page for the studio's inspector (issue 23), an approved
    skill answering a popup in a step's way (issue 25)."""
    return [ScreenPlugin(ports), AwarenessPlugin(ports), GraphRecorder(ports), EvidencePlugin(ports),
            CapturePlugin(ports), BreakpointPlugin(ports), ChosenPlugin(ports), SkillsPlugin(ports),
            TakeoverPlugin(ports), EffectsSeenPlugin(ports), StepSnapshotPlugin(ports), AnswerPopupPlugin(ports)]
