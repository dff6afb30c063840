"""Flows, steps, actions and assertions: the in-memory model of a flow file.

The action space is closed (P5 plus navigate, double click, check/uncheck,
hover, upload and press; P5): nothing outside :data:`ACTION_KINDS`
can be executed.  What each kind needs (a target, a value) and promises is
the action table's, :mod:`core.act.space`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Mapping

from .element import ElementDescriptor

__all__ = [
    "ActionKind", "ACTION_KINDS", "Action", "Assertion",
    "AssertionKind", "Step", "StepEvidence", "AfterState", "Flow", "EpisodeSpec",
]

ActionKind = Literal[
    "click", "dblclick", "input", "select", "check", "uncheck", "hover",
    "press", "scroll", "wait", "assert", "back", "screenshot", "navigate",
    "upload",
]
#: The closed action space (P5 + navigate, dblclick, check/uncheck, hover, upload, press).
ACTION_KINDS: tuple[str, ...] = ActionKind.__args__  # type: ignore[attr-defined]

AssertionKind = Literal[
    "visible", "hidden", "text_equals", "text_contains", "enabled", "disabled",
    "value", "count", "text_appears", "text_absent", "url_contains",
]

#: Assertion kinds checked on the whole page, never on the step's target (a selector is ignored).
PAGE_ASSERTIONS: tuple[str, ...] = ("text_appears", "text_absent", "url_contains")


#: Default scroll distance of a scroll step, CSS px.
DEFAULT_SCROLL_PX = 400


@dataclass(frozen=True, slots=True)
class Action:
    """One action of the closed action space.

    Attributes
    ----------
    kind : ActionKind
        What to do.
    value : str
        Text to type (``input``), option to pick (``select``), key to press
        (``press``, e.g. ``"Enter"``), URL for ``navigate`` (relative to the
        project's base URL), file path for ``upload``, condition text for
        ``wait``.  May contain ``{param}`` placeholders.
    direction : str
        ``"down"``/``"up"``/``"left"``/``"right"`` for ``scroll``.
    distance : int
        Scroll distance in CSS px (:data:`DEFAULT_SCROLL_PX`).
    timeout_ms : int
        This action's timeout in ms; 0 (the default) takes the project's
        ``browser.action_timeout_ms`` (5000, P6).
    """

    kind: ActionKind
    value: str = ""
    direction: str = "down"
    distance: int = DEFAULT_SCROLL_PX
    timeout_ms: int = 0


@dataclass(frozen=True, slots=True)
class Assertion:
    """A check on the page after a step (P7).

    Attributes
    ----------
    kind : AssertionKind
        ``text_appears`` / ``text_absent`` / ``url_contains`` are page level;
        the others apply to ``selector`` (or, when empty, to the step's target).
    expected : str
        Expected text / value / count (as text).  May contain ``{param}``.
    selector : str
        Playwright selector of the asserted element; empty = the step target.
    """

    kind: AssertionKind
    expected: str = ""
    selector: str = ""


@dataclass(frozen=True, slots=True)
class AfterState:
    """Where a step landed, as recorded: part of its expectation at replay (S5, issue 9 item 3).

    Compared by :func:`core.act.after.compare_after`; an empty field is not
    compared (old flows, hand-written ones that name only what matters).

    Attributes
    ----------
    url_pattern : str
        Path of the page after the step with ids generalised: numbers ->
        ``{n}``, UUIDs -> ``{uuid}``, long hex or mixed tokens -> ``{id}``;
        a ``{name}`` segment matches any segment (``"/requests/{n}"``).
        No query string, no fragment.
    title : str
        Document title after the step (digits folded when compared).
    heading : str
        Text of the main heading (the first visible ``h1`` or
        ``role=heading`` level 1, else the first ``h2``) after the step.
    dialog : bool | None
        A dialog (modal) was open after the step; None = not recorded.
    dialog_name : str
        The top dialog's accessible name or title, when one was open.
    field_changed : str
        Label (else name attribute) of the form control whose value changed
        because of the step ("" = none or not recorded).
    field_appeared : str
        Label (else role) of an editable field that appeared because of the
        step: an inline editor opened by a double click ("" = none).
    response_status : int | None
        HTTP status of the step's own request as recorded (the document it
        loaded, else the write it sent: :func:`core.act.landing.own_status`);
        ``0`` = the step sent no request of its own; None = not recorded
        (flows recorded before it existed: judged as they were).
    list_kind : str
        Kind of list item whose count the step changed on the same page
        (``li``, ``tr``, ``listitem``, ``row``, ``option``, ``article``,
        ``treeitem``: :mod:`core.perception.effects`); "" = none recorded.
    list_delta : int
        How many items of ``list_kind`` the step added (negative: removed),
        compared relative at replay: the count grows by the same delta,
        whatever it was before.
    landmark : str
        Name of the main landmark (``<main>`` / ``role=main``) after the step:
        its ``aria-label``, else its first heading
        (:mod:`core.act.regions`); "" = none or not recorded.
    region : str
        The innermost regions the step changed on the page it stayed on,
        by role and accessible name (``"region: Todos"``), several joined
        by ``" | "`` (:func:`core.act.regions.changed_regions`); "" = none
        or not recorded.
    target_state : str
        The acted element's own state after the step when the step changed
        it on the same page: ``checked`` or ``unchecked`` (a checkbox, radio
        or switch the click toggled); "" = unchanged or not recorded.
    """

    url_pattern: str = ""
    title: str = ""
    heading: str = ""
    dialog: bool | None = None
    dialog_name: str = ""
    field_changed: str = ""
    field_appeared: str = ""
    response_status: int | None = None
    list_kind: str = ""
    list_delta: int = 0
    landmark: str = ""
    region: str = ""
    target_state: str = ""
    #: The step started a download (a click inside codegen's ``with page.expect_download()``): the export wraps
    #: it in ``with page.expect_download():`` again; the replay does not compare it (not in :attr:`is_empty`).
    download: bool = False

    @property
    def is_empty(self) -> bool:
        """True when nothing would be compared."""
        return not (self.url_pattern or self.title or self.heading or self.dialog is not None
                    or self.field_changed or self.field_appeared or self.response_status is not None
                    or (self.list_kind and self.list_delta) or self.landmark or self.region
                    or self.target_state)


@dataclass(frozen=True, slots=True)
class StepEvidence:
    """What the recorder saw around a step (issue "record by demonstration").

    Attributes
    ----------
    state_before, state_after : str
        Light-signature digests (S2, SHA1 hex) of the page before and after
        the action, as recorded.
    observed : tuple[str, ...]
        The deltas observed while recording (:func:`core.act.expect.observed_deltas`
        names, e.g. ``("navigation", "content")``); the step's ``expect`` is
        derived from them so that replay verifies the same effect (S5).
    after : AfterState | None
        Where the step landed (URL pattern, title, heading, dialog, changed
        field); None in flows recorded before it existed, which verify by
        their deltas alone.
    """

    state_before: str = ""
    state_after: str = ""
    observed: tuple[str, ...] = ()
    after: AfterState | None = None


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a flow.

    Attributes
    ----------
    id : str
        Stable identifier within the flow (``"s3"``).
    name : str
        Human title (``"Click Sign in"``).
    action : Action
        What to do.
    selector : str
        Optional Playwright selector given by the author; used as the EXACT
        level when present.
    target : ElementDescriptor
        The remembered element (empty for targetless actions, or before the
        first run of a selector-only step).
    assertions : tuple[Assertion, ...]
        Checked after the action; all must hold.
    expect : str
        Expected delta kind for post-verification (S5): ``"auto"`` derives
        it from the action; others: ``"navigation"``, ``"value"``,
        ``"overlay_open"``, ``"overlay_close"``, ``"content"``, ``"none"``.
    reversible : bool
        False for network writes (S6); a failed verification of an
        irreversible step stops the run instead of retrying.
    reversible_declared : bool
        True when the flow file says ``reversible:`` for this step: the
        label is taken as written.  Otherwise it is the action table's
        default, and replay may still find the step irreversible from the
        requests its action caused (a server write, S6,
        :mod:`core.act.writes`).
    compensations : tuple[Step, ...]
        Actions of the closed action space that undo this step's effect
        (R3), run in order on a rollback of a reversible step, and for an
        irreversible one only when a person approves it.
    goal : str
        A goal in words (P3): the model decider chooses actions of the closed
        action space until ``assertions`` hold (or, without assertions, the
        model judges the goal reached, P7) within the step budget (P6); the
        step's own action is then ``assert``.  ``""`` for recorded steps.
    allow_irreversible : bool
        A goal step's irreversible actions need no person's approval.
    allow : tuple[tuple[str, str], ...]
        A goal step's allowed controls, ``(role, name)`` pairs from the flow
        file's ``allow: [{role: button, name: "Save"}]``: the model may act on
        exactly these without a person's approval (once each: a control that
        wrote is never acted on again in the goal without approval).
    key : bool
        A key goal: a second model confirms its result when one is configured (P10).
    read_only : bool
        True for actions without side effects; the breaker tolerates more
        failures of those (R4).
    optional : bool
        When True a failure to locate skips the step instead of escalating.
    recorded : StepEvidence | None
        Signatures and deltas seen when the step was recorded.
    """

    id: str
    action: Action
    name: str = ""
    selector: str = ""
    target: ElementDescriptor = field(default_factory=ElementDescriptor)
    assertions: tuple[Assertion, ...] = ()
    expect: str = "auto"
    reversible: bool = True
    read_only: bool = False
    optional: bool = False
    recorded: StepEvidence | None = None
    reversible_declared: bool = False
    compensations: tuple["Step", ...] = ()
    goal: str = ""
    allow_irreversible: bool = False
    key: bool = False
    allow: tuple[tuple[str, str], ...] = ()

    @property
    def title(self) -> str:
        """Name, or a generated one from action and target."""
        if self.name:
            return self.name
        if self.goal:
            return f"goal: {self.goal}"
        what = self.target.label_text or self.selector or self.action.value
        return f"{self.action.kind} {what}".strip()


@dataclass(frozen=True, slots=True)
class EpisodeSpec:
    """How a flow binds to a MiniWoB++-style episodic task.

    Attributes
    ----------
    task : str
        Task name (``"login-user"``); the page is ``miniwob/<task>.html``.
    fields : tuple[str, ...]
        The task's fields the flow uses as parameters (MiniWoB++'s own field
        extractor gives them per episode: ``target``, ``username``...; a
        field key with spaces becomes ``_``: ``target 0`` -> ``target_0``).
        Declared so that a misspelt ``{name}`` is found before the run.
    utterance_regex : str
        Optional Python regex with named groups over the instruction, for a
        task the field extractor does not know; each group becomes a parameter.
    """

    task: str
    utterance_regex: str = ""
    fields: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Flow:
    """A named sequence of steps starting at a URL.

    Attributes
    ----------
    name : str
        Flow name (file stem).
    start_url : str
        URL relative to the project's base URL (``"/login"``).
    steps : tuple[Step, ...]
        Steps in order.
    params : Mapping[str, str]
        Default parameter values; ``{name}`` in step values is replaced.
    secrets : tuple[str, ...]
        Names of parameters that are secret in this flow (in addition to
        the project's declared secrets).
    episode : EpisodeSpec | None
        Set for episodic tasks (MiniWoB++).
    description : str
        Free text.
    source : str
        Path of the file the flow was loaded from ("" when built in code).
    base_path : str
        The path of the base URL the flow was recorded under (``"/examples/a/"``), "" when not known (a
        file written before it was kept, a flow written by hand).  The steps' ``after.url_pattern`` are
        relative to it; a full path that starts with it is made relative at replay.
    """

    name: str
    start_url: str
    steps: tuple[Step, ...]
    params: Mapping[str, str] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()
    episode: EpisodeSpec | None = None
    description: str = ""
    source: str = ""
    base_path: str = ""
