"""Adaptive waits after an action (S7, P6): settle budgets learnt from the page, always bounded.

The driver's ``wait_settled`` returns as soon as a change was seen and the
page is quiet; when nothing is pending it gives up after an *idle* bound,
and while a request or loading indicator is pending it waits up to a
*limit*.  This module chooses both per page pattern and action kind:

- the idle bound starts at ``settle_max_ms`` (500 ms, P6) and learns from
  the page: for each key (URL path pattern, action kind, submit or not) it
  keeps exponentially weighted moving averages of how long the page took to
  show its change, mean and mean deviation (as TCP's retransmission timer
  does, RFC 6298), and uses ``mean + 4 * deviation`` clamped to
  ``[settle_max_ms, settle_learned_max_ms]`` (500 ms .. 5 s, S7's "5 s
  without a change");
- the limit is ``loading_max_ms`` (30 s, S7);
- submits (irreversible steps) get ``submit_factor`` (2x) of both (S7).

A change the wait missed (the page changed only after the idle bound, seen
by the verification's observation) is learnt with the time it was seen, so
the next wait on that page is longer.  A wait that hit its limit teaches
nothing and is reported (:func:`bound_reason`): a reason in the verdict and
the escalation, never a hang.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping
from urllib.parse import urlsplit

from core.domain import WaitSettings
from core.domain.belief import Belief

__all__ = ["url_pattern", "WaitBudget", "WaitLearner", "bound_reason"]

_SEGMENT_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I), "{uuid}"),
    (re.compile(r"^\d+$"), "{n}"),
    (re.compile(r"^[0-9a-f]{12,}$", re.I), "{hex}"),
    (re.compile(r"^(?=.*\d)(?=.*[A-Za-z])[A-Za-z0-9_-]{20,}$"), "{token}"),
)


def url_pattern(url: str) -> str:
    """The URL's path with ids replaced by placeholders: ``/requests/42/edit?x=1`` -> ``/requests/{n}/edit``.

    Host, query and fragment are dropped (a project has one base URL); numeric
    segments, UUIDs, long hex strings and random tokens become ``{n}``,
    ``{uuid}``, ``{hex}``, ``{token}``.
    """
    path = urlsplit(url).path or "/"
    out = []
    for seg in path.split("/"):
        for pattern, repl in _SEGMENT_RULES:
            if pattern.match(seg):
                seg = repl
                break
        out.append(seg)
    return "/".join(out) or "/"


@dataclass(frozen=True, slots=True)
class WaitBudget:
    """The bounds of one after-action wait.

    Attributes
    ----------
    idle_ms : float
        Give up waiting for a change after this when nothing is pending, ms.
    limit_ms : float
        Hard bound while something is pending, ms (30 s, 60 s for submits; S7).
    key : str
        ``"<url pattern> <action kind>[ submit]"``.
    samples : int
        Settle times learnt for this key so far (0: the defaults apply).
    """

    idle_ms: float
    limit_ms: float
    key: str
    samples: int = 0


@dataclass
class _Estimate:
    mean: float
    dev: float
    n: int = 1


@dataclass
class WaitLearner:
    """Learns settle times per page pattern and action kind (S7); one per session, pure.

    Parameters
    ----------
    settings : WaitSettings
        The project's waits (bounds, submit factor, learning weight).
    """

    settings: WaitSettings = field(default_factory=WaitSettings)
    estimates: dict[str, _Estimate] = field(default_factory=dict)
    bound_hits: int = 0

    @staticmethod
    def key(url: str, kind: str, *, long: bool = False) -> str:
        """``"<url pattern> <kind>"``, with ``" submit"`` for a submit."""
        return f"{url_pattern(url)} {kind}" + (" submit" if long else "")

    def budget(self, url: str, kind: str, *, long: bool = False, belief: Belief | None = None) -> WaitBudget:
        """The idle bound and the limit of the next wait after ``kind`` on ``url``.

        ``belief`` (S3): when the engine believes the page is waiting for the
        server (a spinner after a submit), the submit bounds apply (S7: longer
        limits for submits) whatever the step says.
        """
        if belief is not None and belief.state == "waiting_server":
            long = True
        w = self.settings
        factor = w.submit_factor if long else 1.0
        key = self.key(url, kind, long=long)
        est = self.estimates.get(key)
        idle = float(w.settle_max_ms)
        if est is not None:
            idle = min(max(est.mean + 4.0 * est.dev, float(w.settle_max_ms)), float(w.settle_learned_max_ms))
        return WaitBudget(idle * factor, float(w.loading_max_ms) * factor, key, est.n if est else 0)

    def learn(self, budget: WaitBudget, result: Mapping[str, Any], *, late_change_ms: float | None = None) -> None:
        """Learn from one wait.

        Parameters
        ----------
        budget : WaitBudget
            The budget the wait ran with.
        result : Mapping
            The driver's ``{"ms", "changed", "timed_out"}``.
        late_change_ms : float | None
            When the wait saw no change but the verification's observation
            did: ms from the start of the wait until that observation.
        """
        if result.get("timed_out"):
            self.bound_hits += 1
            return  # the limit says nothing about how fast this page settles
        if result.get("changed"):
            sample = float(result.get("ms", 0.0))
        elif late_change_ms is not None:
            sample = float(late_change_ms)
        else:
            return  # nothing changed: no settle time to learn
        factor = self.settings.submit_factor if budget.key.endswith(" submit") else 1.0
        sample /= factor  # kept in the unscaled unit; budget() scales again
        est = self.estimates.get(budget.key)
        if est is None:
            self.estimates[budget.key] = _Estimate(sample, sample / 2.0)  # first sample (RFC 6298, 2.2)
            return
        a = self.settings.learn_alpha
        est.dev = (1.0 - a) * est.dev + a * abs(est.mean - sample)
        est.mean = (1.0 - a) * est.mean + a * sample
        est.n += 1


def bound_reason(budget: WaitBudget, result: Mapping[str, Any]) -> str:
    """``""``, or the sentence saying that the wait hit its bound (S7) - for the verdict and the escalation."""
    if not result.get("timed_out"):
        return ""
    return (f"the page was still loading when the wait hit its bound of {budget.limit_ms / 1000.0:.0f} s "
            f"({float(result.get('ms', budget.limit_ms)):.0f} ms waited)")
