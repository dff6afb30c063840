"""The step kernel's one hook protocol: typed hook payloads, the hook specifications, the ports, the host.

The kernel (:mod:`core.engine.pipeline`) runs a step as observe, resolve,
act, verify and knows no feature.  Every feature - change detection, state
awareness, evidence, the state graph, breakpoints, chosen candidates,
skills, takeover, failure capture - is a plugin (:mod:`core.engine.plugins`)
registered on a :class:`PluginHost` when the executor is built.  The kernel
calls the plugins at fixed points with one payload dataclass per hook
(:class:`Hook` subclasses below; the payload's ``name`` is the hook's).

Two kinds of hook:

*notifications* (:meth:`PluginHost.notify`)
    every plugin that implements the hook is called, each on its own; a
    plugin that raises is logged (``Ports.store_errors``), announced with
    :class:`~core.engine.events.PluginFailed`, and the step goes on
    (the engine never fails a step over bookkeeping);
*decisions* (:meth:`PluginHost.decide`, pluggy ``firstresult``)
    the first plugin that returns something other than None decides
    (``tryfirst`` plugins are asked first).  A decision that raises is not
    swallowed: it reaches the step's one error path, where the recovery
    policy judges it, because a lost decision could act wrongly (a pause
    that does not happen, a denied target that is used).

Plugins receive the step's :class:`~core.engine.step.StepContext` inside
the payload (never the executor) and, at construction, the :class:`Ports`
they need: the driver, the store, the event sink, the run control, the
settings, the redactor.  A plugin never imports the executor or the kernel's
pipeline (``.importlinter``: "Plugins do not reach the executor").

Adding a feature: a class with ``@hookimpl`` methods in a new module of
:mod:`core.engine.plugins`, and one line in
:func:`core.engine.plugins.default_plugins`.  A new point in the step is a
payload class here and a spec method in :class:`StepHooks`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, ClassVar, Protocol

import pluggy

from core.domain import BreakerContext, Candidate, EngineSettings, EscalationAnswerKind, EscalationCandidate
from core.domain import EscalationKind, Observation, Resolution
from core.domain.belief import Belief
from core.domain.change import ChangeReport
from core.engine.events import EngineEvent, PluginFailed
from core.engine.step import RunState, StepContext, StepFailure

__all__ = [
    "Engine", "PROJECT", "hookspec", "hookimpl", "Ports", "PluginHost", "StepHooks", "Hook",
    "FlowBegins", "FlowEnds", "ObservationStored", "StateBefore", "Decided", "BeforeAction", "StateAfter",
    "FailureSeen", "StepRecorded", "TakeoverBegins", "TakeoverHandedBack",
    "ReuseObservation", "TakeObservation", "CompareScreen", "PageHeading", "CurrentBelief", "ResolveFirst", "Resolved",
    "SkipResolve", "HoldTarget", "Held", "RefuseAction", "BreakpointHit", "AttemptFailed", "Handled",
    "EscalationOffer", "Offer", "EscalationAnswered", "HealProposal", "TakeoverEnds", "ClearPopup", "Cleared",
    "DEFERRED_WRITES",
    "call_store", "flush_store",
]

#: The pluggy project name of Steadyhand's engine hooks.
PROJECT = "steadyhand"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


# --- the store ------------------------------------------------------------------------------------

#: Store writes whose result nobody reads, handed to the store's writer thread when it has one
#: (``Store.defer``, :mod:`core.store.writer`): committed in order, before any later synchronous read or
#: write of the store - among them the "step under way" row the act phase commits before acting
#: (:func:`core.engine.acting.note_acting`), so a resume never finds a step acting without its checkpoint.
#: ``record_observation`` is deferred only without a screenshot (it returns the PNG's path otherwise).
DEFERRED_WRITES = frozenset({
    "record_observation", "record_resolution", "record_verdict", "record_checkpoint", "record_step",
    "record_step_evidence", "record_screen_change", "save_baseline",
})


def call_store(store: Any, errors: list[str], method: str, *args: Any) -> Any:
    """``store.<method>(*args)``: deferred to the store's writer thread for :data:`DEFERRED_WRITES` (None
    returned), else called now; None without a store.  A failure, now or on the writer thread later, is kept
    in ``errors`` as ``"store.<method> failed: <error>"``, never raised (recording is best effort)."""
    if store is None:
        return None

    def failed(exc: BaseException) -> None:
        errors.append(f"store.{method} failed: {exc}")

    try:
        defer = getattr(store, "defer", None)
        if (defer is not None and method in DEFERRED_WRITES
                and not (method == "record_observation" and getattr(args[-1], "screenshot_png", b""))):
            defer(method, *args, on_error=failed)
            return None
        return getattr(store, method)(*args)
    except Exception as exc:  # noqa: BLE001 - recording is best effort, the run goes on
        failed(exc)
        return None


def flush_store(store: Any, errors: list[str]) -> None:
    """Wait until the store's deferred writes are committed (``Store.flush``; nothing for a store without
    one); a failure is kept in ``errors``, never raised."""
    flush = getattr(store, "flush", None) if store is not None else None
    if flush is None:
        return
    try:
        flush()
    except Exception as exc:  # noqa: BLE001 - recording is best effort, the run goes on
        errors.append(f"store.flush failed: {exc}")


# --- ports ---------------------------------------------------------------------------------------


@dataclass
class Ports:
    """What a plugin may use: the driver, the store, the event sink, the run control and the settings.

    ``store_errors`` is the executor's list (shared): store and plugin
    failures are kept there, never raised.  ``decider(name)`` returns the
    decide chain's decider of that name (``"skill"``...) or None;
    ``heals`` the run's pending heal book (:class:`core.heal.HealBook`) or
    None; ``redactor`` masks the driver's known secrets (text -> text).
    """

    driver: Any
    emit: Callable[[EngineEvent], None]
    control: Any = None
    store: Any = None
    settings: EngineSettings = field(default_factory=EngineSettings)
    project_name: str = ""
    store_errors: list[str] = field(default_factory=list)
    decider: Callable[[str], Any] = lambda name: None
    heals: Any = None

    def store_call(self, method: str, *args: Any) -> Any:
        """``store.<method>(*args)`` (:func:`call_store`: deferred for :data:`DEFERRED_WRITES`); None without a
        store; a failure is kept in ``store_errors``."""
        return call_store(self.store, self.store_errors, method, *args)

    def redact(self, text: str) -> str:
        """``text`` with the driver's known secret values masked."""
        redactor = getattr(self.driver, "redactor", None)
        return redactor.text(text) if redactor is not None else text


# --- payloads ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hook:
    """A hook payload; ``name`` is the hook's name in :class:`StepHooks`."""

    name: ClassVar[str] = ""


# notifications (safecall: a failing plugin is logged and the step goes on)

@dataclass(frozen=True)
class FlowBegins(Hook):
    """A flow starts, before its start URL loads (``run`` is empty yet)."""

    name: ClassVar[str] = "flow_begins"
    run: RunState


@dataclass(frozen=True)
class FlowEnds(Hook):
    """A flow ended (``passed``: its status is ``passed``), before its result is returned."""

    name: ClassVar[str] = "flow_ends"
    run: RunState
    passed: bool


@dataclass(frozen=True)
class ObservationStored(Hook):
    """An observation of step ``index`` (``when``: ``"before"``/``"after"``) was stored at ``written`` (None: no file)."""

    name: ClassVar[str] = "observation_stored"
    run_id: str
    index: int
    when: str
    written: Path | None


@dataclass(frozen=True)
class StateBefore(Hook):
    """The page before the step's action is known (``step.before``, ``step.change``): fingerprint phase."""

    name: ClassVar[str] = "state_before"
    step: StepContext


@dataclass(frozen=True)
class Decided(Hook):
    """The decide chain gave the step (``step.decided``, ``step.source``)."""

    name: ClassVar[str] = "decided"
    step: StepContext


@dataclass(frozen=True)
class BeforeAction(Hook):
    """The pre-check passed the target; the action comes next (precheck phase)."""

    name: ClassVar[str] = "before_action"
    step: StepContext


@dataclass(frozen=True)
class StateAfter(Hook):
    """The page after the action was observed (``step.after``): verify phase, before the verdict."""

    name: ClassVar[str] = "state_after"
    step: StepContext


@dataclass(frozen=True)
class FailureSeen(Hook):
    """An attempt failed with ``failure`` (a phase's :class:`StepFailure`), before the recovery policy judges it."""

    name: ClassVar[str] = "failure_seen"
    step: StepContext
    failure: StepFailure


@dataclass(frozen=True)
class StepRecorded(Hook):
    """The step's outcome was stored (record phase; also after a crash or a stop). Times in ms."""

    name: ClassVar[str] = "step_recorded"
    step: StepContext
    active_ms: float
    wall_ms: float


@dataclass(frozen=True)
class TakeoverBegins(Hook):
    """A person takes the page over at this step (before the run control waits for the hand-back)."""

    name: ClassVar[str] = "takeover_begins"
    step: StepContext


@dataclass(frozen=True)
class TakeoverHandedBack(Hook):
    """The person handed back: ``meaning`` (``done``/``replace``/``insert``), continue at ``target`` (0-based)."""

    name: ClassVar[str] = "takeover_handed_back"
    step: StepContext
    meaning: str | None
    target: int
    reason: str


# decisions (firstresult: the first non-None answer decides; an exception reaches the step's error path)

@dataclass(frozen=True)
class ReuseObservation(Hook):
    """May the previous after-observation stand as this step's before? An :class:`Observation`, else None.

    ``fast``: the step may take the fast path (below the evidence level ``full``, not looked at in full), so the
    reads it makes before acting may ride on the reuse check (:mod:`core.engine.ahead`)."""

    name: ClassVar[str] = "reuse_observation"
    step: StepContext
    fast: bool = False


@dataclass(frozen=True)
class TakeObservation(Hook):
    """Observe the page (a plugin may read more around it); an :class:`Observation`, else the driver's own.

    ``ax`` False: the light look of the fast path, without reading Chromium's accessibility tree again
    (:func:`core.engine.fastpath.driver_observe`)."""

    name: ClassVar[str] = "take_observation"
    run_id: str
    index: int
    when: str
    screenshot: bool
    ax: bool = True


@dataclass(frozen=True)
class PageHeading(Hook):
    """The page's main heading as read with ``observation`` (:func:`core.perception.pagefacts.main_heading`'s
    rule; "" when it has none), in that observation's own round trip; None when it was not read with it."""

    name: ClassVar[str] = "page_heading"
    observation: Observation


@dataclass(frozen=True)
class CompareScreen(Hook):
    """The screen before the step against its baseline (R1): a :class:`ChangeReport`, else None."""

    name: ClassVar[str] = "compare_screen"
    step: StepContext


@dataclass(frozen=True)
class CurrentBelief(Hook):
    """The engine's belief about the page (S3), for the pre-check and the settle wait; None when none."""

    name: ClassVar[str] = "current_belief"


@dataclass(frozen=True)
class Resolved:
    """A target found before the locator chain: its resolution, its candidate, and the step's new source (or None)."""

    resolution: Resolution
    candidate: Candidate | None
    source: str | None = None


@dataclass(frozen=True)
class ResolveFirst(Hook):
    """A target before the locator chain (a person's choice, the unchanged-screen fast path): :class:`Resolved`."""

    name: ClassVar[str] = "resolve_first"
    step: StepContext


@dataclass(frozen=True)
class SkipResolve(Hook):
    """True when the step needs no target resolved though its action usually has one (a skill's bare key)."""

    name: ClassVar[str] = "skip_resolve"
    step: StepContext


@dataclass(frozen=True)
class Held:
    """A found target held back: the resolution to record (abstained) and the failure the kernel raises."""

    resolution: Resolution
    failure: StepFailure


@dataclass(frozen=True)
class HoldTarget(Hook):
    """The locator found ``candidate``: a :class:`Held` when a rule forbids acting on it, else None."""

    name: ClassVar[str] = "hold_target"
    step: StepContext
    resolution: Resolution
    candidate: Candidate | None


@dataclass(frozen=True)
class RefuseAction(Hook):
    """Just before the driver acts: a :class:`StepFailure` when the action must not be done, else None."""

    name: ClassVar[str] = "refuse_action"
    step: StepContext


@dataclass(frozen=True)
class BreakpointHit(Hook):
    """Before ``phase`` (or ``"failed"``): the pause's one-line reason when a breakpoint fires, else None."""

    name: ClassVar[str] = "breakpoint_hit"
    step: StepContext
    phase: str


@dataclass(frozen=True)
class Handled:
    """A failed attempt a plugin took over: the step's status and its message."""

    status: str
    error: str


@dataclass(frozen=True)
class AttemptFailed(Hook):
    """An attempt failed with ``error``: a :class:`Handled` ends the attempt without the recovery policy."""

    name: ClassVar[str] = "attempt_failed"
    step: StepContext
    error: BaseException


@dataclass(frozen=True)
class Offer:
    """What an escalation shows: its candidates, its answers, its plain sentence (redacted)."""

    candidates: tuple[EscalationCandidate, ...]
    answers: tuple[EscalationAnswerKind, ...]
    plain: str


@dataclass(frozen=True)
class EscalationOffer(Hook):
    """An escalation is about to be raised: an :class:`Offer`, else the kernel offers the resolution's top."""

    name: ClassVar[str] = "escalation_offer"
    step: StepContext
    reason: str
    kind: EscalationKind
    answers: tuple[EscalationAnswerKind, ...]
    breaker: BreakerContext | None


@dataclass(frozen=True)
class EscalationAnswered(Hook):
    """A person answered ``escalation`` with ``answer``: False refuses the answer (the flow stops), True takes it."""

    name: ClassVar[str] = "escalation_answered"
    step: StepContext
    escalation: Any
    answer: Any


@dataclass(frozen=True)
class HealProposal(Hook):
    """A person proposed an escalation's candidate as a heal (``command``): the event that says what came of it."""

    name: ClassVar[str] = "heal_proposal"
    step: StepContext
    command: Any


@dataclass(frozen=True)
class TakeoverEnds(Hook):
    """The hand-back came: what the person did on the page (a recording with ``steps``), else None."""

    name: ClassVar[str] = "takeover_ends"
    step: StepContext


@dataclass(frozen=True)
class Cleared:
    """A popup a plugin answered (an approved skill): ``ok`` True when the page was cleared; ``detail`` what was
    done, in plain words (redacted)."""

    ok: bool
    detail: str


@dataclass(frozen=True)
class ClearPopup(Hook):
    """A popup is in the step's way (issue 25 item 1): ``where`` is ``"after_action"`` (the step's verification saw
    a dialog it did not expect; its action is done and is not repeated) or ``"covered"`` (the pre-check found the
    target covered, before acting).  ``point`` (CSS px) is the target's centre when known; ``keep`` how many open
    dialogs the step expects.  A :class:`Cleared` when a plugin answered it, else None (the engine's close-only
    dismissal goes on)."""

    name: ClassVar[str] = "clear_popup"
    step: StepContext
    where: str
    point: tuple[float, float] | None = None
    keep: int = 0


# --- specifications ------------------------------------------------------------------------------


class StepHooks:
    """The hook specifications (pluggy): one argument ``p``, the payload of the hook's name."""

    @hookspec
    def flow_begins(self, p: FlowBegins) -> None: """See :class:`FlowBegins`."""
    @hookspec
    def flow_ends(self, p: FlowEnds) -> None: """See :class:`FlowEnds`."""
    @hookspec
    def observation_stored(self, p: ObservationStored) -> None: """See :class:`ObservationStored`."""
    @hookspec
    def state_before(self, p: StateBefore) -> None: """See :class:`StateBefore`."""
    @hookspec
    def decided(self, p: Decided) -> None: """See :class:`Decided`."""
    @hookspec
    def before_action(self, p: BeforeAction) -> None: """See :class:`BeforeAction`."""
    @hookspec
    def state_after(self, p: StateAfter) -> None: """See :class:`StateAfter`."""
    @hookspec
    def failure_seen(self, p: FailureSeen) -> None: """See :class:`FailureSeen`."""
    @hookspec
    def step_recorded(self, p: StepRecorded) -> None: """See :class:`StepRecorded`."""
    @hookspec
    def takeover_begins(self, p: TakeoverBegins) -> None: """See :class:`TakeoverBegins`."""
    @hookspec
    def takeover_handed_back(self, p: TakeoverHandedBack) -> None: """See :class:`TakeoverHandedBack`."""

    @hookspec(firstresult=True)
    def reuse_observation(self, p: ReuseObservation) -> Observation | None: """See :class:`ReuseObservation`."""
    @hookspec(firstresult=True)
    def take_observation(self, p: TakeObservation) -> Observation | None: """See :class:`TakeObservation`."""
    @hookspec(firstresult=True)
    def compare_screen(self, p: CompareScreen) -> ChangeReport | None: """See :class:`CompareScreen`."""
    @hookspec(firstresult=True)
    def page_heading(self, p: PageHeading) -> str | None: """See :class:`PageHeading`."""
    @hookspec(firstresult=True)
    def current_belief(self, p: CurrentBelief) -> Belief | None: """See :class:`CurrentBelief`."""
    @hookspec(firstresult=True)
    def resolve_first(self, p: ResolveFirst) -> Resolved | None: """See :class:`ResolveFirst`."""
    @hookspec(firstresult=True)
    def skip_resolve(self, p: SkipResolve) -> bool | None: """See :class:`SkipResolve`."""
    @hookspec(firstresult=True)
    def hold_target(self, p: HoldTarget) -> Held | None: """See :class:`HoldTarget`."""
    @hookspec(firstresult=True)
    def refuse_action(self, p: RefuseAction) -> StepFailure | None: """See :class:`RefuseAction`."""
    @hookspec(firstresult=True)
    def breakpoint_hit(self, p: BreakpointHit) -> str | None: """See :class:`BreakpointHit`."""
    @hookspec(firstresult=True)
    def attempt_failed(self, p: AttemptFailed) -> Handled | None: """See :class:`AttemptFailed`."""
    @hookspec(firstresult=True)
    def escalation_offer(self, p: EscalationOffer) -> Offer | None: """See :class:`EscalationOffer`."""
    @hookspec(firstresult=True)
    def escalation_answered(self, p: EscalationAnswered) -> bool | None: """See :class:`EscalationAnswered`."""
    @hookspec(firstresult=True)
    def heal_proposal(self, p: HealProposal) -> Any: """See :class:`HealProposal`."""
    @hookspec(firstresult=True)
    def takeover_ends(self, p: TakeoverEnds) -> Any: """See :class:`TakeoverEnds`."""
    @hookspec(firstresult=True)
    def clear_popup(self, p: ClearPopup) -> Cleared | None: """See :class:`ClearPopup`."""


# --- host ----------------------------------------------------------------------------------------


class _Manager(pluggy.PluginManager):
    """pluggy's manager, finding a plugin object's hook implementations without a static look-up of every name.

    pluggy reads each attribute of a plugin being registered with ``inspect.getattr_static`` (so that no
    property runs); the executor registers a dozen plugins with some 800 names at every run: 118 ms of the
    engine thread a run under cProfile at load average 14 on 2 cores (issue 20).  An attribute of an object's class that carries no
    ``@hookimpl`` mark is no implementation, and reading it from the class runs no property: only names that
    do, or that the object holds itself, or any name of a module plugin, go to pluggy's own reading.  The
    same for the hook specifications of a class (:class:`StepHooks`, added at every run).
    """

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        if not isinstance(plugin, ModuleType) and name not in getattr(plugin, "__dict__", {}):
            found = getattr(type(plugin), name, None)
            target = found.__func__ if isinstance(found, (classmethod, staticmethod)) else found
            if not hasattr(target, self.project_name + "_impl"):
                return None
        return super().parse_hookimpl_opts(plugin, name)

    def parse_hookspec_opts(self, module_or_class: Any, name: str) -> Any:
        if isinstance(module_or_class, type) and not hasattr(getattr(module_or_class, name, None),
                                                             self.project_name + "_spec"):
            return None  # the same rule for the specifications, read at every executor (a class's attribute)
        return super().parse_hookspec_opts(module_or_class, name)


class PluginHost:
    """The executor's plugin manager: registers plugins and calls them (see the module doc).

    Parameters
    ----------
    ports : Ports
        Where a failing plugin is logged (``store_errors``) and announced (``emit``).
    """

    def __init__(self, ports: Ports) -> None:
        self.ports = ports
        self.pm = _Manager(PROJECT)
        self.pm.add_hookspecs(StepHooks)
        #: Where the failures are announced: (run id, flow name) of the current flow.
        self.where: tuple[str, str] = ("", "")

    def register(self, plugin: object, name: str | None = None) -> object:
        """Register ``plugin`` (an object with ``@hookimpl`` methods); returns it. Raises ``ValueError`` twice."""
        self.pm.register(plugin, name or type(plugin).__name__)
        return plugin

    def get(self, name: str) -> Any:
        """The plugin registered as ``name`` (its class name by default), else None."""
        return self.pm.get_plugin(name)

    def notify(self, payload: Hook) -> None:
        """Call every implementation of ``payload.name`` (``tryfirst`` ones first, then in registration order),
        each on its own: one that raises is logged
        (``store_errors``), announced (:class:`~core.engine.events.PluginFailed`) and skipped."""
        impls = getattr(self.pm.hook, payload.name).get_hookimpls()
        ordered = ([i for i in impls if i.tryfirst] + [i for i in impls if not i.tryfirst and not i.trylast]
                   + [i for i in impls if i.trylast])  # notifications: tryfirst, then in registration order
        for impl in ordered:
            try:
                impl.function(p=payload)
            except Exception as exc:  # noqa: BLE001 - a plugin never breaks a step (mitmproxy's safecall)
                message = f"{type(exc).__name__}: {exc}"
                self.ports.store_errors.append(f"plugin {impl.plugin_name}.{payload.name} failed: {message}")
                index = getattr(getattr(payload, "step", None), "index", getattr(payload, "index", -1))
                try:
                    self.ports.emit(PluginFailed(self.where[0], self.where[1], index, impl.plugin_name,
                                                 payload.name, self.ports.redact(message)))
                except Exception:  # noqa: BLE001 - the event sink itself failed: the list keeps it
                    pass

    def decide(self, payload: Hook) -> Any:
        """The first non-None answer of the implementations of ``payload.name`` (None when none answers).

        Asked in pluggy's order: ``tryfirst`` implementations, then the last registered first.

        Raises whatever the deciding plugin raises: a decision is never lost silently.
        """
        return getattr(self.pm.hook, payload.name)(p=payload)


class Engine(Protocol):
    """What the kernel (:mod:`core.engine.pipeline`) uses of the object that runs it - the executor - as a type,
    so that the kernel never imports the executor: the run's driver, control, settings and guards (breaker R4,
    loop guard and stagnation P8/K2, the decide chain, the settle-time learner S7), its plugins, and the
    services :meth:`observe`, :meth:`store_call`, :meth:`emit_breaker`, :meth:`ask_human`, :meth:`redact`."""

    driver: Any
    control: Any
    store: Any
    settings: EngineSettings
    breaker: Any
    loops: Any
    stagnation: Any
    chain: Any
    wait_learner: Any
    pending_heals: Any
    plugins: PluginHost
    last_reused: bool
    emit: Callable[[EngineEvent], None]

    def observe(self, run_id: str, flow: Any, index: int, when: str, *,
                ctx: StepContext | None = None) -> Observation: ...
    def store_call(self, method: str, *args: Any) -> Any: ...
    def emit_breaker(self, run_id: str) -> None: ...
    def ask_human(self, escalation: Any) -> Any: ...
    def redact(self, text: str) -> str: ...
