"""Typed settings of a run, from the project file to the engine: one object, one default each.

The project file's ``browser``, ``locator``, ``breaker``, ``waits`` and
``max_steps`` sections are validated by :mod:`core.project.schema` and
turned into these frozen dataclasses by :mod:`core.project.loader`; the
engine, the driver and the recorder read nothing else.  Defaults live here
and only here (the schema takes them from these classes).
"""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "STRATEGIES", "UntrustedValue", "LocatorConfig", "BrowserSettings", "BreakerSettings", "WaitSettings", "EngineSettings",
]

class UntrustedValue(str):
    """A setting's value that may not take effect: the project is not trusted on this machine (issue 21 item 2).

    Compares and prints as the value; whoever would use it (``core.perception.browser.find_chromium`` for
    ``browser.executable_path``) raises instead, with :attr:`reason` - the message naming the setting and the
    command that trusts the project (``core.project.trust``).
    """

    reason: str

    def __new__(cls, value: str, reason: str) -> "UntrustedValue":
        obj = super().__new__(cls, value)
        obj.reason = reason
        return obj


#: The levels of the locator chain, fastest first (R2).
STRATEGIES: tuple[str, ...] = ("exact", "fuzzy_text", "semantic", "relative", "visual")


@dataclass(frozen=True, slots=True)
class LocatorConfig:
    """How strict each level of the locator chain is.

    Attributes
    ----------
    margin : float
        Score lead (0..1) the best candidate of a level must have over the
        runner-up; otherwise the level falls through (ties never win).  0.1:
        on the Similo dev half (318 pairs) it gives 0.6 % wrong picks and
        89 % located (``core/bench/similo.py``).
    position_tolerance_px : float
        EXACT accepts a candidate whose box centre moved at most this far
        (CSS px) when both boxes are known.  5 px, R2.
    fuzzy_threshold : float
        FUZZY_TEXT needs a label similarity strictly above this (0..1).
        0.8, R2.
    semantic_min_score : float
        SEMANTIC needs a weighted similarity of at least this (0..1).  0.45,
        tuned on the Similo dev half.
    semantic_min_evidence : float
        When the target has identity attributes (label, text, placeholder,
        alt, title, id, name attribute, test id, href), a SEMANTIC candidate
        may win or block only if one of them agrees at least this much
        (0..1, text similarities rescaled from 0.4..1 to 0..1).  0.7 - about
        a raw label similarity of 0.82, FUZZY_TEXT's bar - tuned on the
        Similo dev half.
    place_tiebreak : bool
        When 2-3 SEMANTIC candidates are tied within the margin, let the one
        clearly (by the margin) closer to the target's place - XPath, page
        region, position - win: the same link in header and footer.
    strategies : tuple[str, ...]
        Enabled levels, a subset of ``("exact", "fuzzy_text", "semantic", "relative", "visual")``;
        they always run in the chain's order (fastest first).
    top_k : int
        How many scored candidates a :class:`~core.domain.Resolution` keeps.
    """

    margin: float = 0.1
    position_tolerance_px: float = 5.0
    fuzzy_threshold: float = 0.8
    semantic_min_score: float = 0.45
    semantic_min_evidence: float = 0.7
    place_tiebreak: bool = True
    strategies: tuple[str, ...] = STRATEGIES
    top_k: int = 5

    def __post_init__(self) -> None:
        if not 0.0 <= self.margin <= 1.0:
            raise ValueError(f"margin must be in [0, 1], got {self.margin}")
        if self.position_tolerance_px < 0:
            raise ValueError("position_tolerance_px must be >= 0")
        if not 0.0 <= self.fuzzy_threshold <= 1.0:
            raise ValueError("fuzzy_threshold must be in [0, 1]")
        if not 0.0 <= self.semantic_min_score <= 1.0:
            raise ValueError("semantic_min_score must be in [0, 1]")
        if not 0.0 <= self.semantic_min_evidence <= 1.0:
            raise ValueError("semantic_min_evidence must be in [0, 1]")
        unknown = set(self.strategies) - set(STRATEGIES)
        if unknown:
            raise ValueError(f"unknown strategies {sorted(unknown)}; known: {STRATEGIES}")
        if self.top_k < 1:
            raise ValueError("top_k must be >= 1")


@dataclass(frozen=True, slots=True)
class BrowserSettings:
    """How Chromium is started and sized.

    Attributes
    ----------
    headless : bool
        Run without a window.
    executable_path : str | None
        Chromium binary; env ``STEADYHAND_CHROMIUM`` overrides; None = search.  An
        :class:`UntrustedValue` in a project not trusted on this machine: refused where used.
    viewport_width, viewport_height : int
        Viewport in CSS px (1280 x 800).
    device_scale_factor : float
        Device pixels per CSS px (1.0).
    slow_mo_ms : int
        Delay Playwright adds to each operation, ms (0).
    locale, timezone : str
        ``"en-US"``, ``"UTC"``.
    action_timeout_ms : int
        Per-action timeout, ms (5000, P6).
    navigation_timeout_ms : int
        Per-navigation timeout, ms (15000).
    endpoint_hosts : tuple[str, ...]
        Hosts off this machine that ``run --browser-endpoint`` may reach (a project trusted on this machine
        only: :func:`core.project.trust.endpoint_refusal`); empty: this machine's browsers only.
    """

    headless: bool = True
    executable_path: str | None = None
    viewport_width: int = 1280
    viewport_height: int = 800
    device_scale_factor: float = 1.0
    slow_mo_ms: int = 0
    locale: str = "en-US"
    timezone: str = "UTC"
    action_timeout_ms: int = 5000
    navigation_timeout_ms: int = 15000
    endpoint_hosts: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class BreakerSettings:
    """Circuit breaker thresholds (R4).

    Attributes
    ----------
    threshold : int
        Consecutive failed attempts that open it when the failing step is an
        ordinary reversible one (3, R4).
    read_only_threshold : int
        The same for read-only actions, which tolerate more (5, R4).
    write_threshold : int
        The same for writes (irreversible steps), which tolerate fewer (2:
        "writes fewer", R4; the number is ours).
    recovery_timeout_s : float
        Seconds from open to half-open (300, R4).
    max_failed_probes : int
        Half-open probes that may fail in a row before a human is no longer
        offered "retry" (skip, stop or take over remain): every loop has a
        limit, also one a person or a script keeps answering (3).
    loop_repeats, loop_window : int
        Anti-loop: the same action on the same page state done
        ``loop_repeats`` times within the last ``loop_window`` attempts may
        not be done again (3 in 5, P8); retries count.
    stagnation_rounds : int
        Rounds (attempts that acted, retries included) in a row without a
        real state change that stop the run (3, K2).
    """

    threshold: int = 3
    read_only_threshold: int = 5
    write_threshold: int = 2
    recovery_timeout_s: float = 300.0
    max_failed_probes: int = 3
    loop_repeats: int = 3
    loop_window: int = 5
    stagnation_rounds: int = 3

    def __post_init__(self) -> None:
        for name in ("threshold", "read_only_threshold", "write_threshold", "max_failed_probes", "loop_repeats",
                     "stagnation_rounds"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.loop_window < self.loop_repeats:
            raise ValueError(f"loop_window ({self.loop_window}) must be >= loop_repeats ({self.loop_repeats})")
        if self.recovery_timeout_s < 0:
            raise ValueError("recovery_timeout_s must be >= 0")


@dataclass(frozen=True, slots=True)
class WaitSettings:
    """Waits and retries of the step loop (P6, S7).

    Attributes
    ----------
    retries : int
        Extra attempts of a failed reversible step (2, P6).
    retry_delay_ms : int
        Pause before a retry, ms (300, P6).
    settle_max_ms : int
        Upper bound of the after-action wait when nothing is pending, ms (500, P6).
    quiet_ms : int
        No DOM mutation for this long counts as quiet, ms (120).
    loading_max_ms : int
        Longest wait while a request or loading indicator is pending, ms
        (30000, S7); submits (irreversible steps) get twice as long.
    assertion_timeout_ms : int
        How long an assertion is polled before it fails, ms (2000).
    settle_learned_max_ms : int
        Most the learnt after-action wait may grow to when nothing is
        pending, ms (5000: S7's "5 s without a change"); it never goes below
        ``settle_max_ms``.
    submit_factor : float
        Submits (irreversible steps) wait this many times longer, both the
        learnt idle wait and the loading limit (2.0, S7).
    learn_alpha : float
        Weight of a new sample in the learnt settle time's moving averages
        (0.25; TCP's retransmission timer uses 1/8 for the mean, 1/4 for the
        deviation, RFC 6298).
    """

    retries: int = 2
    retry_delay_ms: int = 300
    settle_max_ms: int = 500
    quiet_ms: int = 120
    loading_max_ms: int = 30000
    assertion_timeout_ms: int = 2000
    settle_learned_max_ms: int = 5000
    submit_factor: float = 2.0
    learn_alpha: float = 0.25


@dataclass(frozen=True, slots=True)
class EngineSettings:
    """Everything the engine needs to know about a project's run, in one object.

    Attributes
    ----------
    browser, locator, breaker, waits
        See the classes above.
    max_steps : int
        Steps one run may take beyond the flow's own steps (30, after the
        paper's 30 steps per case, P6): steps run again after a hand-back to
        an earlier step, loops.  A budget of the run, not a limit on a flow
        file's length: a flow of any length loads, and its run may start
        :meth:`run_budget` steps; the next one ends the run with an
        escalation of kind ``budget``.
    evidence : str
        ``"full"``, ``"failures"`` or ``"off"``: which steps of a run get the
        full look - screenshots, image differences, the state graph's image
        hashes (``full``: every step; ``failures``, the default of
        ``steadyhand run``: only a step whose attempt failed or whose target
        needed more than the exact level; ``off``: none).  Issue 20 item 2.
    """

    browser: BrowserSettings = field(default_factory=BrowserSettings)
    locator: LocatorConfig = field(default_factory=LocatorConfig)
    breaker: BreakerSettings = field(default_factory=BreakerSettings)
    waits: WaitSettings = field(default_factory=WaitSettings)
    max_steps: int = 30
    evidence: str = "failures"

    def run_budget(self, flow_steps: int) -> int:
        """Most steps one run of a flow of ``flow_steps`` steps may start: each step once plus ``max_steps``."""
        return max(0, flow_steps) + self.max_steps
