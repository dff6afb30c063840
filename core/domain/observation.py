"""Observations of the page, state signatures, locator resolutions, verdicts."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .element import BBox, Candidate

__all__ = [
    "TextBox", "Observation", "StateSignature", "ScoredCandidate", "LevelTrace", "Resolution",
    "VerdictKind", "Verdict", "StepOutcome", "RunResult", "PASSED_WITH_HELP", "run_label",
]


@dataclass(frozen=True, slots=True)
class TextBox:
    """A text-bearing element of the page that may be a target's anchor (a label, legend, heading, column header).

    Attributes
    ----------
    text : str
        Visible text or accessible name, whitespace collapsed (at most 80 chars).
    role : str
        ARIA role or lower-case tag (``"heading"``, ``"label"``, ``"legend"``,
        ``"columnheader"``), as the recorder names an anchor's role.
    bbox : BBox
        Box in CSS px, top-level viewport coordinates.
    frame : str
        Label of the frame it is in (``""`` for the main frame), as
        :attr:`ElementDescriptor.frame`.
    """

    text: str
    role: str
    bbox: BBox
    frame: str = ""


@dataclass(frozen=True, slots=True)
class StateSignature:
    """Light state signature of a page (S2, P4).

    Attributes
    ----------
    url : str
        URL without fragment.
    title : str
        Document title.
    interactive_count : int
        Number of visible interactive elements.
    modal_count : int
        Depth of the open dialog / overlay stack.
    text_digest : str
        SHA1 of the first 500 chars of normalized visible text (P4).
    elements_digest : str
        SHA1 of interactive elements' tag + role + first 20 chars of
        normalized text (P4).
    values_digest : str
        SHA1 of form controls' values and checked states.
    loading : bool
        A loading indicator (spinner, ``aria-busy``, progressbar) is visible.
    error_count : int
        Visible validation / error messages.
    focus : str
        Short description of the active element.
    digest : str
        SHA1 over all the above: equal digests mean the same light state.
    content_digest : str
        SHA1 of all visible text, not only the first 500 chars: the main
        page, its iframes and its open shadow roots.  Post-verification (S5)
        sees a change anywhere with it; the P4 state identity keeps using
        ``text_digest``.
    """

    url: str
    title: str
    interactive_count: int
    modal_count: int
    text_digest: str
    elements_digest: str
    values_digest: str
    loading: bool
    error_count: int
    focus: str
    digest: str
    content_digest: str = ""


@dataclass(frozen=True, slots=True)
class Observation:
    """What the engine saw at one moment (P1).

    Attributes
    ----------
    url, title : str
        Page URL and title.
    viewport : tuple[int, int]
        Viewport size in CSS px.
    device_pixel_ratio : float
        Device pixels per CSS px; screenshot pixels = CSS px * ratio.
    scroll : tuple[float, float]
        ``(scrollX, scrollY)`` of the main frame in CSS px.
    candidates : tuple[Candidate, ...]
        Visible interactive elements with boxes in viewport CSS px.
    visible_text : str
        Visible text of the page (secrets masked), at most 5000 chars.
    signature : StateSignature
        Light signature of this state.
    screenshot_png : bytes
        Viewport screenshot, PNG, device pixels, secrets masked ("" when
        not taken).
    modal_titles : tuple[str, ...]
        Titles of open dialogs, outermost first.
    timestamp_ms : float
        Wall-clock time of the observation in ms since the epoch.
    loading : tuple[str, ...]
        Evidence that the page is still loading (``'aria-busy="true" on tbody#rows'``,
        ``'class "skeleton-row" on tr'``, an indeterminate progress bar), at most 5 and
        ``"+N more"``; empty when nothing says so.  Placeholders are never candidates.
    anchors : tuple[TextBox, ...]
        Labels, legends, headings and column headers of the page (what the
        recorder keeps as a target's anchor), where the locator's RELATIVE
        level looks for a target's anchor; at most 400, secrets masked.
    """

    url: str
    title: str
    viewport: tuple[int, int]
    device_pixel_ratio: float
    scroll: tuple[float, float]
    candidates: tuple[Candidate, ...]
    visible_text: str
    signature: StateSignature
    screenshot_png: bytes = b""
    modal_titles: tuple[str, ...] = ()
    timestamp_ms: float = 0.0
    loading: tuple[str, ...] = ()
    anchors: tuple[TextBox, ...] = ()


@dataclass(frozen=True, slots=True)
class ScoredCandidate:
    """A candidate and the score one locator strategy gave it (0..1)."""

    ref: str
    score: float
    label: str = ""


@dataclass(frozen=True, slots=True)
class LevelTrace:
    """What one level of the locator chain (R2) concluded for one target.

    Attributes
    ----------
    level : str
        ``"exact"``, ``"fuzzy_text"``, ``"semantic"``, ``"relative"``,
        ``"visual"``, or a safety rule (``"safety"``).
    best, runner_up : ScoredCandidate | None
        The level's best candidate and the runner-up (scores 0..1).
    winner : bool
        True when the level had a clear winner (the best led by its margin).
    reason : str
        Why it won, fell through or was overruled, in one sentence.
    """

    level: str
    best: ScoredCandidate | None = None
    runner_up: ScoredCandidate | None = None
    winner: bool = False
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Resolution:
    """Outcome of resolving a step's target (R2).

    Attributes
    ----------
    strategy : str
        Winning strategy (``"exact"``, ``"fuzzy_text"``, ``"semantic"``,
        ``"selector"``) or ``""`` when abstained.
    ref : str | None
        Chosen candidate's ref; None when the chain abstained.
    score : float
        Score of the chosen candidate, 0..1.
    margin : float
        Score of the best minus the runner-up at the winning level.
    ms : float
        Time spent resolving, ms.
    abstained : bool
        True when no level produced a clear winner.
    reason : str
        Human explanation (why each level fell through).
    top : tuple[ScoredCandidate, ...]
        Best candidates of the last level tried, best first (at most 5).
    considered : int
        Candidates the chain looked at (0 when not known, e.g. by selector).
    trace : tuple[LevelTrace, ...]
        One entry per level tried, in chain order, plus the safety rules
        that overruled a level (R2).
    confirmed_by : tuple[str, ...]
        Independent levels whose clear winner is the chosen candidate (the
        winning level first); an irreversible step needs exact or two.
    role_crossing : bool
        True when the chosen candidate has another role than the recorded
        target (allowed only when every other attribute agrees).
    """

    strategy: str
    ref: str | None
    score: float
    margin: float
    ms: float
    abstained: bool = False
    reason: str = ""
    top: tuple[ScoredCandidate, ...] = ()
    considered: int = 0
    trace: tuple[LevelTrace, ...] = ()
    confirmed_by: tuple[str, ...] = ()
    role_crossing: bool = False

    @property
    def healed(self) -> bool:
        """A heal: resolved by any strategy other than exact (a heal)."""
        return not self.abstained and self.strategy not in ("exact", "")


VerdictKind = Literal["as_expected", "changed_unexpectedly", "unchanged", "failed"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """Post-verification of one action (S5).

    Attributes
    ----------
    kind : VerdictKind
        ``as_expected`` / ``changed_unexpectedly`` / ``unchanged``; ``failed``
        when the action itself raised or an assertion failed.
    expected : str
        The expected delta that was checked (``"value"``, ``"navigation"``...).
    observed : tuple[str, ...]
        Deltas observed between before and after.
    reason : str
        Why it was judged so, in one sentence.
    """

    kind: VerdictKind
    expected: str
    observed: tuple[str, ...] = ()
    reason: str = ""

    @property
    def invalid(self) -> bool:
        """An invalid action (the invalid-action measure of S8): unchanged or changed unexpectedly."""
        return self.kind in ("unchanged", "changed_unexpectedly")


#: How a step ended (see :class:`StepOutcome`).
StepStatus = Literal["passed", "failed", "escalated", "skipped", "manual", "stopped", "error"]


@dataclass(frozen=True, slots=True)
class StepOutcome:
    """Result of one executed step.

    Attributes
    ----------
    index : int
        0-based index of the step in its flow.
    step_id, title : str
        The step's id and title.
    status : str
        ``passed`` / ``failed`` (an assertion did not hold) / ``escalated``
        (the engine could not go on alone) / ``skipped`` (an optional step
        whose target was absent, or a human skipped it) / ``manual`` (done by
        hand during a takeover) / ``stopped`` (the
        user stopped the run during the step) / ``error`` (the browser or
        page crashed during the step).
    resolution, verdict
        The last attempt's target resolution and post-verification (or None).
    attempts : int
        Attempts made (1 + retries).
    ms : float
        Active time in ms: wall-clock time less the time paused or waiting for a human.
    error : str
        Why it did not pass (secrets masked), "" when it passed.
    source : str
        Which decider chose the action: ``skill`` / ``flow`` / ``model`` / ``human``.
    phase_ms : tuple[tuple[str, float], ...]
        Time per phase of the last attempt, in ms, in phase order.
    """

    index: int
    step_id: str
    title: str
    status: StepStatus
    resolution: Resolution | None
    verdict: Verdict | None
    attempts: int
    ms: float
    error: str = ""
    source: str = "flow"
    phase_ms: tuple[tuple[str, float], ...] = ()


#: Why a run did not pass, as a kind (exit codes and reports come from it, never from the message):
#: ``""`` passed; ``"assertion"`` an assertion did not hold (status failed); ``"refused"`` the server
#: refused a step's request (a 4xx answer) and the page kept nothing (status failed: a wrong password);
#: ``"escalated"`` the
#: engine could not go on alone and no human resolved it; ``"stopped"`` the user stopped it;
#: ``"parameter"`` a ``{name}`` had no value; ``"unreachable"`` the start page could not be loaded;
#: ``"navigation"`` a later page could not be loaded; ``"browser"`` the browser or page crashed;
#: ``"budget"`` the run hit ``max_steps`` (P6); ``"internal"`` a defect of Steadyhand.
ErrorKind = Literal["", "assertion", "refused", "escalated", "stopped", "parameter", "unreachable", "navigation",
                    "browser", "budget", "internal"]


#: The status shown for a passed run in which a person acted (a takeover handed back).
PASSED_WITH_HELP = "passed with help"


def run_label(status: str, by_hand: int) -> str:
    """A run's status as listed (run summary, ``history list``, the studio's History): ``status``, or
    :data:`PASSED_WITH_HELP` when it passed and ``by_hand`` (hand-backs after a person acted) is above 0."""
    return PASSED_WITH_HELP if status == "passed" and by_hand > 0 else status


@dataclass(frozen=True, slots=True)
class RunResult:
    """Result of one flow run (one independent job, architecture rule 8).

    Attributes
    ----------
    status : str
        ``passed`` / ``failed`` / ``escalated`` / ``stopped`` / ``error``.
    steps : tuple[StepOutcome, ...]
        Executed steps in order.
    heals : int
        Steps whose target was resolved by a strategy other than exact.
    invalid_actions : int
        Steps whose verdict was unchanged or changed unexpectedly.
    seconds : float
        Wall-clock duration in s.
    reward : float | None
        Raw reward of an episodic task (MiniWoB++), else None.
    error_kind : ErrorKind
        Why it did not pass, as a kind; ``""`` when it passed.
    total_steps : int
        Steps in the flow (``steps`` holds those executed).
    abstentions : int
        Attempts on which the locator abstained (R2).
    stop_kind : str
        What stopped the run: the escalation kind (``breaker_open``,
        ``loop``, ``stagnation``, ``abstained``...) or else the error kind;
        ``""`` when it passed.
    stopped_at : int | None
        0-based index of the step it stopped at (None when it passed or
        stopped before any step).
    by_hand : int
        Hand-backs after which the run went on from what a person did on the
        page (a takeover: the step done by hand, actions before it, or the
        step skipped by hand); 0 when nobody acted.  A passed run with
        ``by_hand`` > 0 is "passed with help" (:attr:`label`): ``status``
        stays ``passed`` for exit codes and retries.
    """

    run_id: str
    flow: str
    status: str
    steps: tuple[StepOutcome, ...]
    heals: int
    invalid_actions: int
    seconds: float
    error: str = ""
    reward: float | None = None
    heals_by_strategy: dict[str, int] = field(default_factory=dict)
    error_kind: ErrorKind = ""
    total_steps: int = 0
    abstentions: int = 0
    stop_kind: str = ""
    stopped_at: int | None = None
    by_hand: int = 0

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def label(self) -> str:
        """The status as people read it: ``passed with help`` when a person acted in a passed run."""
        return run_label(self.status, self.by_hand)
