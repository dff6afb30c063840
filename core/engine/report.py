"""Run reports shared by the command line and the studio: pure functions of run results.

What a run came to is read from :attr:`RunResult.error_kind
<core.domain.RunResult>` (an :data:`~core.domain.ErrorKind`), never from
its message.  This module does no I/O: it returns strings, dicts and exit
codes; the caller prints or writes them.

Exit codes of ``steadyhand run`` (most severe wins when flows differ):

- 4 ``EXIT_ENVIRONMENT``: the environment is broken (target unreachable,
  the browser failed);
- 2 ``EXIT_INPUT``: bad input (a parameter without a value);
- 1 ``EXIT_FAILED``: a flow failed (an assertion did not hold, a later page
  did not load, the run was stopped, a defect of Steadyhand, or an
  episode's reward said the engine was wrong);
- 3 ``EXIT_ESCALATED``: a flow needs a human (escalation, step budget) and
  none failed;
- 0 ``EXIT_OK``: every flow passed.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.domain import ErrorKind, RunResult
from core.domain.observation import run_label
# The codes themselves live in core.exitcodes (one table for every command); re-exported here.
from core.exitcodes import EXIT_ENVIRONMENT, EXIT_ESCALATED, EXIT_FAILED, EXIT_INPUT, EXIT_OK
from core.exitcodes import SEVERITY as _SEVERITY

__all__ = [
    "EXIT_OK", "EXIT_FAILED", "EXIT_INPUT", "EXIT_ESCALATED", "EXIT_ENVIRONMENT", "KIND_EXIT",
    "succeeded", "result_label", "results_line", "run_exit_code", "exit_code",
    "FlowStats", "Stop", "steps_passed", "table", "summary_text", "summary_json",
]

#: Exit code of a run that did not succeed, by its error kind.
KIND_EXIT: Mapping[ErrorKind, int] = {
    "assertion": EXIT_FAILED, "refused": EXIT_FAILED, "navigation": EXIT_FAILED, "stopped": EXIT_FAILED, "internal": EXIT_FAILED,
    "escalated": EXIT_ESCALATED, "budget": EXIT_ESCALATED,
    "parameter": EXIT_INPUT,
    "unreachable": EXIT_ENVIRONMENT, "browser": EXIT_ENVIRONMENT,
}


def succeeded(result: RunResult) -> bool:
    """True when the run passed and, for an episode, its reward is positive."""
    return result.status == "passed" and (result.reward is None or result.reward > 0)


def result_label(result: RunResult) -> str:
    """The run's status, with its error kind in brackets when that adds something: ``"error (unreachable)"``.

    An episode's reward is not part of it (the caller shows the reward).
    """
    kind = result.error_kind
    status = result.label  # "passed with help" when a person acted
    return f"{status} ({kind})" if kind and kind != result.status else status


def results_line(results: Iterable[RunResult]) -> str:
    """``"login passed, export escalated"``: one ``flow label`` per run, comma separated."""
    return ", ".join(f"{r.flow} {result_label(r)}" for r in results)


def run_exit_code(result: RunResult) -> int:
    """Exit code of one run (see the module docstring).

    A run that did not succeed and carries no kind is ``EXIT_ESCALATED``
    when its status is ``escalated``, else ``EXIT_FAILED``.
    """
    if succeeded(result):
        return EXIT_OK
    if result.error_kind:
        return KIND_EXIT.get(result.error_kind, EXIT_FAILED)
    return EXIT_ESCALATED if result.status == "escalated" else EXIT_FAILED


def _most_severe(codes: Iterable[int]) -> int:
    return min(codes, key=_SEVERITY.index, default=EXIT_OK)


def exit_code(results: Iterable[RunResult]) -> int:
    """Exit code of a whole run: the most severe code of its runs; ``EXIT_OK`` for none."""
    return _most_severe(run_exit_code(r) for r in results)


@dataclass(frozen=True, slots=True)
class Stop:
    """Where and why one run stopped.

    Attributes
    ----------
    kind : str
        :attr:`RunResult.stop_kind <core.domain.RunResult>`: the escalation
        kind (``breaker_open``, ``loop``, ``stagnation``, ``abstained``...)
        or the error kind.
    reason : str
        The run's error message (secrets masked).
    index : int | None
        0-based index of the step it stopped at (None: before any step).
    step_id, title : str
        That step's id and title ("" when ``index`` is None).
    """

    kind: str
    reason: str
    index: int | None = None
    step_id: str = ""
    title: str = ""

    @classmethod
    def of(cls, r: RunResult) -> "Stop":
        """The stop of a run that did not succeed (a passed episode the reward denied: kind ``reward``)."""
        kind = r.stop_kind or r.error_kind or ("reward" if r.status == "passed" else r.status)
        step = next((o for o in r.steps if o.index == r.stopped_at), None) if r.stopped_at is not None else None
        reason = r.error or (f"the reward was {r.reward:+.2f}" if r.reward is not None else "")
        return cls(kind, reason, r.stopped_at, step.step_id if step else "", step.title if step else "")

    def to_json(self) -> dict[str, Any]:
        """``{"kind", "reason", "step"}``; ``step`` is ``{"index" (0-based), "id", "title"}`` or None."""
        at = None if self.index is None else {"index": self.index, "id": self.step_id, "title": self.title}
        return {"kind": self.kind, "reason": self.reason, "step": at}


@dataclass
class FlowStats:
    """Statistics of one flow over its runs (one run, or one per episode).

    Attributes
    ----------
    flow : str
        Flow name.
    episodes, passed_runs : int
        Runs added and runs that succeeded (:func:`succeeded`).
    steps, heals, invalid : int
        Summed over the runs: steps executed, healed targets, invalid actions.
    seconds : float
        Summed wall-clock time, s.
    statuses, kinds : list[str]
        Per run: status and error kind.
    codes : list[int]
        Per run: its exit code (:func:`run_exit_code`).
    errors : list[str]
        The non-empty error messages.
    rewards : list[float]
        Raw rewards of episodes.
    heals_by : dict[str, int]
        Healed targets by locator strategy.
    wrong_clicks : int
        Episodes the engine passed although the reward said no.
    task : str
        The episode's task (MiniWoB++), ``""`` for ordinary flows.
    ground_truth : dict
        The site's server log after the last run (demo site), else empty.
    steps_passed, steps_total : int
        Summed over the runs: steps that passed (a skill's actions before a
        flow step not counted), and steps in the flow.
    abstentions : int
        Summed: attempts on which the locator abstained (R2).
    by_hand : int
        Summed: hand-backs after a person acted in the page (a run that passed with them is "passed with help").
    stops : list[Stop]
        One per run that did not succeed, in run order.
    """

    flow: str
    episodes: int = 0
    passed_runs: int = 0
    steps: int = 0
    heals: int = 0
    invalid: int = 0
    seconds: float = 0.0
    statuses: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    codes: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    heals_by: dict[str, int] = field(default_factory=dict)
    wrong_clicks: int = 0
    task: str = ""
    ground_truth: dict[str, Any] = field(default_factory=dict)
    steps_passed: int = 0
    steps_total: int = 0
    abstentions: int = 0
    by_hand: int = 0
    stops: list[Stop] = field(default_factory=list)

    def add(self, r: RunResult) -> None:
        """Count one run of the flow."""
        self.episodes += 1
        self.steps_passed += steps_passed(r)
        self.steps_total += r.total_steps or len(r.steps)
        self.abstentions += r.abstentions
        self.by_hand += r.by_hand
        if not succeeded(r):
            self.stops.append(Stop.of(r))
        self.passed_runs += int(succeeded(r))
        self.steps += len(r.steps)
        self.heals += r.heals
        self.invalid += r.invalid_actions
        self.seconds += r.seconds
        self.statuses.append(r.status)
        self.kinds.append(r.error_kind)
        self.codes.append(run_exit_code(r))
        if r.error:
            self.errors.append(r.error)
        if r.reward is not None:
            self.rewards.append(r.reward)
            if r.status == "passed" and r.reward <= 0:
                self.wrong_clicks += 1  # the engine believed it completed; the reward says otherwise
        for k, v in r.heals_by_strategy.items():
            self.heals_by[k] = self.heals_by.get(k, 0) + v

    @property
    def passed(self) -> bool:
        """Every run succeeded (and there was at least one)."""
        return self.episodes > 0 and self.passed_runs == self.episodes

    @property
    def result(self) -> str:
        """``passed``, else the first of error / failed / escalated / stopped among the runs' statuses."""
        if self.passed:
            return "passed"
        for s in ("error", "failed", "escalated", "stopped"):
            if s in self.statuses:
                return s
        return "failed"  # engine passed but the reward said no

    @property
    def exit_code(self) -> int:
        """The most severe exit code of the flow's runs (:func:`run_exit_code`)."""
        return _most_severe(self.codes)

    @property
    def stop(self) -> Stop | None:
        """The stop of the flow's most severe run (the first one), None when every run succeeded."""
        worst = self.exit_code
        failing = [c for c in self.codes if c != EXIT_OK]
        if not failing:
            return None
        return self.stops[failing.index(worst)] if worst in failing else self.stops[0]

    @property
    def error_kind(self) -> str:
        """The error kind of the flow's most severe runs (the first one that has a kind), else ``""``."""
        worst = self.exit_code
        return next((k for k, c in zip(self.kinds, self.codes, strict=True) if k and c == worst), "")


def steps_passed(r: RunResult) -> int:
    """Flow steps of ``r`` that passed: a step counts once, by its last outcome (a goal step's actions
    toward its goal and a skill's actions before a step are outcomes at the same index)."""
    last: dict[int, str] = {}
    for o in r.steps:
        last[o.index] = o.status
    return sum(1 for s in last.values() if s == "passed")


def table(rows: Sequence[Sequence[Any]], header: Sequence[str]) -> str:
    """A plain-text table: columns left-aligned, two spaces apart, a dashed rule under the header."""
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*header), fmt.format(*["-" * w for w in widths])]
    lines += [fmt.format(*[str(c) for c in r]) for r in rows]
    return "\n".join(lines)


def _mean_reward(s: FlowStats) -> float:
    return sum(s.rewards) / max(1, len(s.rewards))


def summary_text(stats: Sequence[FlowStats]) -> str:
    """The summary printed after a run (no trailing newline).

    One table row per flow (result, steps as passed / total, heals,
    invalid actions, seconds), up to three distinct errors per flow, the demo site's server
    log when known, and for episodic flows a table per task (success rate,
    mean raw reward, heals by strategy, wrong clicks).
    """
    rows = [[s.flow, s.result if s.episodes == 1 else f"{s.result} ({s.passed_runs}/{s.episodes})",
             f"{s.steps_passed}/{s.steps_total}",
             s.heals, s.invalid, f"{s.seconds:.1f}"] for s in stats]
    lines = [table(rows, ["flow", "result", "steps", "heals", "invalid actions", "seconds"])]
    for s in stats:
        lines += [f"  {s.flow}: {e}" for e in sorted(set(s.errors))[:3]]
    if any(s.ground_truth for s in stats):
        lines += ["", "server log (ground truth, read after each flow):"]
        for s in stats:
            g = s.ground_truth
            if g:
                lines.append(f"  {s.flow}: {g.get('activations', 0)} activations, {g.get('writes', 0)} writes, "
                             f"{g.get('duplicate_writes', 0)} duplicate writes")
    tasks = [s for s in stats if s.task]
    if tasks:
        trows = [[s.task, s.episodes, f"{100.0 * s.passed_runs / s.episodes:.0f}%", f"{_mean_reward(s):+.2f}",
                  ", ".join(f"{k}:{v}" for k, v in sorted(s.heals_by.items())) or "-", s.wrong_clicks] for s in tasks]
        lines += ["", table(trows, ["task", "episodes", "success", "mean raw reward", "heals by strategy",
                                    "wrong clicks"])]
    return "\n".join(lines)


def summary_json(stats: Sequence[FlowStats]) -> dict[str, Any]:
    """The JSON summary (``steadyhand run --json``).

    ``{"passed": bool, "flows": [{"flow", "passed", "error_kind", "steps",
    "heals", "invalid_actions", "seconds", "steps_passed", "steps_total",
    "heals_by_strategy", "abstentions", "by_hand", "result", "stop"}], "tasks": [...]}``;
    ``steps`` counts the steps executed, ``steps_passed`` / ``steps_total``
    those that passed and those the flow has (summed over episodes);
    ``heals_by_strategy`` maps a strategy other than exact to the passed
    steps it resolved; ``abstentions`` counts attempts on which the locator
    abstained; ``by_hand`` counts hand-backs after a person acted and
    ``result`` is ``passed with help`` when the flow passed with any, else
    ``passed`` / the most severe status (:attr:`FlowStats.result`); ``stop`` is None when the flow passed, else
    :meth:`Stop.to_json` of its most severe run (the stop reason and the
    step it stopped at); ``tasks``
    (``task``, ``episodes``, ``success_rate`` 0..1, ``mean_raw_reward``,
    ``heals_by_strategy``, ``wrong_clicks``) only when a flow is episodic.
    ``error_kind`` is :attr:`FlowStats.error_kind`; seconds are rounded to ms.
    """
    doc: dict[str, Any] = {
        "passed": all(s.passed for s in stats),
        "flows": [{"flow": s.flow, "passed": s.passed, "error_kind": s.error_kind, "steps": s.steps,
                   "heals": s.heals, "invalid_actions": s.invalid, "seconds": round(s.seconds, 3),
                   "steps_passed": s.steps_passed, "steps_total": s.steps_total,
                   "heals_by_strategy": dict(sorted(s.heals_by.items())), "abstentions": s.abstentions,
                   "by_hand": s.by_hand,
                   "result": run_label(s.result, s.by_hand),
                   "stop": s.stop.to_json() if s.stop else None} for s in stats],
    }
    tasks = [s for s in stats if s.task]
    if tasks:
        doc["tasks"] = [{"task": s.task, "episodes": s.episodes, "success_rate": s.passed_runs / s.episodes,
                         "mean_raw_reward": _mean_reward(s), "heals_by_strategy": dict(sorted(s.heals_by.items())),
                         "wrong_clicks": s.wrong_clicks} for s in tasks]
    return doc
