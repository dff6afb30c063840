"""A scripted correction through the takeover path a person uses (``steadyhand bench learn``, its tests).

When the engine cannot go on alone it escalates; a person then takes the
page over, acts on it and hands it back (:mod:`core.engine.takeover`): the
recording listener attached to the engine's own page records every action
with the full descriptor a recording keeps, and the hand-back stores the
manual segment as a correction.  :class:`ScriptedCorrection` is a run control
(:class:`core.engine.control.RunControl`) that plays that person: it answers
an escalation with "take over", and during the takeover it performs the
actions of the first :class:`CorrectionScript` whose ``when`` holds on the
page - on the engine's page, the way a script connected over CDP acts
(real input events: Playwright's click, double-click, typing), pumping the
listener between actions as :class:`core.engine.handback.WaitControl` does
while it waits - then hands back with the script's meaning.  Nothing is
written into the store by this module: the correction is stored by the
engine, exactly as a person's would be.

Scripts describe their targets semantically (ARIA role + accessible name,
or the exact visible text of a label), never by coordinates, ids or CSS, so
the same script serves every page that shows the same trouble.  A page
that no script fits gets no correction: the takeover ends without a
hand-back ("no scripted correction fits this page"), and the step ends
escalated.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, Sequence

from core.domain import Escalation
from core.engine.control import Answer

__all__ = ["CorrectionAction", "CorrectionScript", "ScriptedCorrection", "TakeoverLog", "DEMO_SCRIPTS",
           "ACTION_LIMIT_MS", "SETTLE_MS", "MAX_TAKEOVERS"]

#: Longest wait for one scripted action's target, ms (every wait has a limit).
ACTION_LIMIT_MS = 5_000
#: How long the listener is pumped after each action so it records the step (settle + effects), ms.
SETTLE_MS = 700
#: Most takeovers one control answers (a page that keeps escalating ends the run, never loops).
MAX_TAKEOVERS = 20

ActionKind = Literal["click", "dblclick", "type", "press"]


@dataclass(frozen=True, slots=True)
class CorrectionAction:
    """One action of a scripted correction, its target described by meaning.

    Attributes
    ----------
    action : str
        ``click`` / ``dblclick`` on the target, ``type`` ``value`` into it
        (a click first, then the keys), ``press`` the key ``value``
        (``"Tab"``; no target needed).
    role, name : str
        ARIA role and accessible name of the target (``button`` /
        ``Accept all cookies``); exact name.
    text : str
        Instead of a role: the target's exact visible text (a label).
    within_role, within_name : str
        Look only inside this container (``dialog`` / ``Use your last entry?``).
    value : str
        Text to type or key to press; ``{name}`` is bound from the run's parameters.
    """

    action: ActionKind
    role: str = ""
    name: str = ""
    text: str = ""
    within_role: str = ""
    within_name: str = ""
    value: str = ""

    def describe(self) -> str:
        what = f"{self.role} {self.name!r}" if self.role else (f"text {self.text!r}" if self.text else "the page")
        where = f" in {self.within_role} {self.within_name!r}" if self.within_role else ""
        return f"{self.action} {what}{where}" + (f" ({self.value!r})" if self.action == "press" else "")


@dataclass(frozen=True, slots=True)
class CorrectionScript:
    """What a person does for one kind of failure: when it applies, the actions, what the hand-back says.

    ``when`` is a target description (role + name, or text) that must be
    visible on the page for the script to apply.  ``meaning`` is the
    hand-back's (``insert``: the actions go before the failed step, which
    is run again on the page as left; ``replace`` / ``done``, as in
    :data:`core.engine.events.HandBackMeaning`).
    """

    kind: str
    when: CorrectionAction
    actions: tuple[CorrectionAction, ...]
    meaning: Literal["insert", "replace", "done"] = "insert"


#: The demo's failure kinds (docs/variants.md) and what a person does about each.
DEMO_SCRIPTS: tuple[CorrectionScript, ...] = (
    CorrectionScript(
        "cookie-banner",
        when=CorrectionAction("click", role="region", name="We value your privacy"),
        actions=(CorrectionAction("click", role="button", name="Accept all cookies",
                                  within_role="region", within_name="We value your privacy"),)),
    CorrectionScript(
        "focus-popup",
        when=CorrectionAction("click", role="dialog", name="Use your last entry?"),
        actions=(CorrectionAction("click", role="button", name="Start empty",
                                  within_role="dialog", within_name="Use your last entry?"),)),
    CorrectionScript(
        "inline-edit",
        when=CorrectionAction("click", text="Double-click \u201cReason\u201d to edit."),
        actions=(CorrectionAction("dblclick", text="Reason"),)),
)


@dataclass
class TakeoverLog:
    """One takeover the control answered: where, why, which script, what it did (or why it could not)."""

    run_id: str
    flow: str
    index: int
    reason: str = ""
    kind: str = ""
    done: list[str] = field(default_factory=list)
    error: str = ""
    handed_back: bool = False


class ScriptedCorrection:
    """Run control that corrects escalations by scripted takeovers (see the module docstring).

    Parameters
    ----------
    scripts : Sequence[CorrectionScript]
        Tried in order at each takeover; the first whose ``when`` is visible is played.
    params : Mapping[str, str]
        Values for ``{name}`` in typed text.
    settle_ms : int
        Pumping after each action, ms (:data:`SETTLE_MS`).

    Attributes
    ----------
    takeovers : list[TakeoverLog]
        Every takeover answered, in order (the benchmark counts them).
    """

    def __init__(self, scripts: Sequence[CorrectionScript] = DEMO_SCRIPTS, *, params: Mapping[str, str] | None = None,
                 settle_ms: int = SETTLE_MS) -> None:
        self.scripts = tuple(scripts)
        self.params = dict(params or {})
        self.settle_ms = int(settle_ms)
        self.takeovers: list[TakeoverLog] = []
        self.escalations: list[Escalation] = []
        self.takeover: Any = None

    # -- RunControl ------------------------------------------------------------------
    def attach_takeover(self, recording: Any) -> None:
        """The engine's recording of the takeover (:class:`core.engine.takeover.TakeoverRecording`)."""
        self.takeover = recording

    def pause_point(self, run_id: str, flow: str, index: int, phase: str) -> None:
        return None

    def escalate(self, escalation: Escalation) -> Answer:
        self.escalations.append(escalation)
        if "take_over" not in escalation.answers or len(self.takeovers) >= MAX_TAKEOVERS:
            return Answer("stop")
        return Answer("take_over")

    def take_over(self, run_id: str, flow: str, index: int) -> Answer:
        """Play the first script that fits the page, pump the listener, hand back; ``stop`` when none fits."""
        reason = self.escalations[-1].reason if self.escalations else ""
        log = TakeoverLog(run_id, flow, index, reason)
        self.takeovers.append(log)
        page = self._page()
        if page is None:
            log.error = "the engine's page is not available to act on"
            return Answer("stop", reason=log.error)
        script = next((s for s in self.scripts if self._visible(page, s.when)), None)
        if script is None:
            log.error = "no scripted correction fits this page"
            return Answer("stop", reason=log.error)
        log.kind = script.kind
        for act in script.actions:
            try:
                self._perform(page, act)
            except Exception as exc:  # noqa: BLE001 - a target that is not there: the takeover ends unanswered
                log.error = f"{act.describe()}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                self._pump(self.settle_ms)
                return Answer("stop", reason=log.error)
            log.done.append(act.describe())
            self._pump(self.settle_ms)
        log.handed_back = True
        return Answer("take_over", meaning=script.meaning)

    # -- acting on the engine's page ---------------------------------------------------
    def _page(self) -> Any:
        rec = self.takeover
        driver = getattr(getattr(rec, "ex", None), "driver", None)
        return getattr(driver, "page", None)

    def _pump(self, ms: int) -> None:
        """Let the listener record what the page reported (as WaitControl does while a person acts)."""
        deadline = time.monotonic() + ms / 1000.0
        while time.monotonic() < deadline:
            if self.takeover is not None:
                self.takeover.pump(50)
            else:
                time.sleep(0.05)

    @staticmethod
    def _locate(page: Any, act: CorrectionAction) -> Any:
        scope = page
        if act.within_role:
            scope = page.get_by_role(act.within_role, name=act.within_name, exact=True)
        if act.role:
            return scope.get_by_role(act.role, name=act.name, exact=True)
        return scope.get_by_text(act.text, exact=True)

    def _visible(self, page: Any, when: CorrectionAction) -> bool:
        try:
            loc = self._locate(page, when)
            return loc.count() == 1 and loc.is_visible()
        except Exception:  # noqa: BLE001 - a page that cannot be read: the script does not apply
            return False

    def _perform(self, page: Any, act: CorrectionAction) -> None:
        from core.project.params import bind as bind_text

        if act.action == "press":
            page.keyboard.press(bind_text(act.value, self.params) if act.value else "Tab")
            return
        target = self._locate(page, act)
        if act.action == "click":
            target.click(timeout=ACTION_LIMIT_MS)
        elif act.action == "dblclick":
            target.dblclick(timeout=ACTION_LIMIT_MS)
        elif act.action == "type":
            target.click(timeout=ACTION_LIMIT_MS)
            page.keyboard.type(bind_text(act.value, self.params))
        else:  # pragma: no cover - the Literal above
            raise ValueError(f"unknown scripted action {act.action!r}")
