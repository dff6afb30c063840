"""``steadyhand bench learn``: the demo flows through UI versions; failures corrected once, then learnt.

The loop (K1-K8, docs/mechanisms.md "The learning benchmark"):

1. A work copy of the demo project with one store for the whole sequence
   (the skill library persists from version to version; the flow files are
   never edited: offered corrections stay offered).
2. For each version (a demo variant, :data:`DEFAULT_VERSIONS`): the
   project's ``site_options.variant`` is set, one
   :class:`~core.engine.session.ProjectSession` runs every flow with
   :class:`~core.bench.learn_correct.ScriptedCorrection` as its run control.
   An escalation is taken over and corrected by the script of the failure
   kind the page shows, through the engine's own takeover path (the
   recording listener on the engine's page, the correction stored at the
   hand-back).
3. After each run with a correction (``approve_after="run"``, the default),
   or after the version (``"version"``), the run's skill proposals
   (:func:`core.skills.learn.learn_from_run`, called by the engine or here
   when the engine did not) are approved by :func:`approve_for_benchmark` -
   the reviewer's part, played by the benchmark alone; it approves only
   what :func:`core.skills.library.approve` accepts (a passing validation),
   never by force.

Figures per version (printed; never asserted by timed tests):

* ``takeovers``: takeovers the runs needed (a person's work).
* ``skill_hit_rate``: where an approved skill applies (a failure kind met
  after a skill was learnt for it), the share resolved by a skill that
  fired and passed without a takeover; ``None`` where no skill applies.  A
  skill whose trigger held on an irreversible step it was not approved for
  does not apply there (the safety bar keeps it back, K6): that takeover is
  counted in ``takeovers`` and listed as ``held_back``, not as a miss.
* ``action_success_rate``: actions that succeeded / actions tried - every
  attempt of a flow step (a failed attempt, a step done by hand count as
  failures) and every skill action.
* ``false_triggers``: skill firings where no page condition of the kind the
  skill was learnt for held (checked independently on the live page, by the
  correction scripts' own ``when``), or whose actions differ from what the
  correction did.
* ``wrong_clicks``: from the demo server's activation log
  (:func:`core.bench.tweaks.judge`: clicks and double-clicks outside the
  flow's expected ids).
* ``steps``: flow steps run plus skill actions run.

JSON: ``{"versions": [{"version", "variant", "takeovers", "skill_hit_rate",
"action_success_rate", "false_triggers", "wrong_clicks", "steps", ...}],
"goals": {...}}``.
"""
from __future__ import annotations

import shutil
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Literal, Mapping, Sequence

import yaml

from core.progress import counted
from core.bench.learn_correct import DEMO_SCRIPTS, CorrectionScript, ScriptedCorrection

__all__ = ["DEFAULT_VERSIONS", "LearnSetupError", "RunFigures", "VersionFigures", "LearnReport", "LearningLoop",
           "approve_for_benchmark", "run_learn_benchmark", "format_report", "add_learn_parser", "learn_command"]

#: The UI versions of the demo, in order: (version, variant) - docs/variants.md.
DEFAULT_VERSIONS: tuple[tuple[str, str], ...] = (
    ("v1", "baseline"), ("v2", "focus-popup"), ("v3", "cookie-banner"), ("v4", "inline-edit"), ("v5", "learn-all"),
)
#: Reason kept with a skill the benchmark approved (the review state says who approved it).
BENCH_APPROVAL = "approved by the learning benchmark (steadyhand bench learn)"


class LearnSetupError(RuntimeError):
    """The benchmark cannot start: ``kind`` ``input`` (bad version, flow, project) or ``environment``."""

    def __init__(self, message: str, kind: str = "input") -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class RunFigures:
    """One flow on one version: what it needed and what the skills did (counts; ``seconds`` wall time, s)."""

    version: str
    variant: str
    flow: str
    status: str
    passed: bool
    seconds: float = 0.0
    takeovers: int = 0
    takeover_kinds: list[str] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    skill_fired: int = 0
    skill_passed: int = 0
    skill_failed: int = 0
    hits: int = 0
    misses: int = 0
    held_back: list[str] = field(default_factory=list)
    false_triggers: int = 0
    false_detail: list[str] = field(default_factory=list)
    wrong_clicks: int = 0
    wrong_activations: list[str] = field(default_factory=list)
    unexpected_writes: dict[str, int] = field(default_factory=dict)
    steps: int = 0
    actions_ok: int = 0
    actions_failed: int = 0
    proposed: list[str] = field(default_factory=list)
    approved: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    stopped_at: str = ""


@dataclass
class VersionFigures:
    """Every flow of one version, and the figures of the JSON row."""

    version: str
    variant: str
    runs: list[RunFigures] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        rs = self.runs
        hits, misses = sum(r.hits for r in rs), sum(r.misses for r in rs)
        ok, bad = sum(r.actions_ok for r in rs), sum(r.actions_failed for r in rs)
        kinds = Counter(k for r in rs for k in r.takeover_kinds)
        return {
            "version": self.version, "variant": self.variant,
            "takeovers": sum(r.takeovers for r in rs),
            "skill_hit_rate": round(hits / (hits + misses), 3) if hits + misses else None,
            "action_success_rate": round(ok / (ok + bad), 3) if ok + bad else None,
            "false_triggers": sum(r.false_triggers for r in rs),
            "wrong_clicks": sum(r.wrong_clicks for r in rs),
            "steps": sum(r.steps for r in rs),
            "flows": len(rs), "passed": sum(r.passed for r in rs),
            "takeovers_by_kind": dict(kinds),
            "skill_fired": sum(r.skill_fired for r in rs), "skill_passed": sum(r.skill_passed for r in rs),
            "skill_applies": hits + misses, "skill_hits": hits,
            "approved": sum(len(r.approved) for r in rs), "refused": sum(len(r.refused) for r in rs),
            "held_back": sum(len(r.held_back) for r in rs),
            "runs": [asdict(r) for r in rs],
        }


@dataclass
class LearnReport:
    """The whole sequence; :meth:`to_json_dict` is the ``--json`` document."""

    versions: list[VersionFigures] = field(default_factory=list)
    approve_after: str = "run"
    latency_ms: int = 0

    def goals(self) -> dict[str, Any]:
        """The issue's goals, judged on the figures: no takeover for a kind after the version it first
        appeared in; hit rate >= 0.9 where a skill applies; 0 false triggers; 0 wrong clicks."""
        first: dict[str, str] = {}
        again: dict[str, list[str]] = {}
        for v in self.versions:
            kinds = {k for r in v.runs for k in r.takeover_kinds}
            for k in sorted(kinds):
                if k in first and first[k] != v.version:
                    again.setdefault(k, []).append(v.version)
                first.setdefault(k, v.version)
        rows = [v.row() for v in self.versions]
        rates = [r["skill_hit_rate"] for r in rows if r["skill_hit_rate"] is not None]
        applies = sum(r["skill_applies"] for r in rows)
        hits = sum(r["skill_hits"] for r in rows)
        return {
            "first_takeover_version": first,
            "takeovers_again": again,
            "no_takeover_after_first": not again,
            "hit_rate_overall": round(hits / applies, 3) if applies else None,
            "hit_rate_at_least_0_9": bool(rates) and min(rates) >= 0.9,
            "false_triggers": sum(r["false_triggers"] for r in rows),
            "wrong_clicks": sum(r["wrong_clicks"] for r in rows),
        }

    def to_json_dict(self) -> dict[str, Any]:
        return {"versions": [v.row() for v in self.versions], "goals": self.goals(),
                "approve_after": self.approve_after, "latency_ms": self.latency_ms}


def approve_for_benchmark(table: Any, skill_id: str, *, settings: Any = None) -> tuple[Any, str]:
    """Approve a proposed skill as the benchmark's reviewer (this module's flag; no user command has it).

    Goes through :func:`core.skills.library.approve` without ``force`` and
    without ``irreversible_ok``: a skill whose validation did not pass, or
    that is not legal, stays proposed.  Returns ``(skill, "")`` when
    approved, ``(None, why)`` when refused.
    """
    from core.skills.library import approve

    try:
        skill = approve(table, skill_id, settings=settings)
    except (KeyError, ValueError, RuntimeError) as exc:
        return None, str(exc)
    return skill, ""


def _norm(text: str) -> str:
    return " ".join((text or "").split()).casefold()


def _action_key(kind: str, *texts: str) -> tuple[str, str]:
    return kind, next((_norm(t) for t in texts if t), "")


def _script_keys(script: CorrectionScript) -> list[tuple[str, str]]:
    return [_action_key("dblclick" if a.action == "dblclick" else ("input" if a.action == "type" else a.action),
                        a.name, a.text) for a in script.actions]


def _skill_keys(skill: Any) -> list[tuple[str, str]]:
    out = []
    for a in getattr(skill, "actions", ()) or ():
        t = a.target
        out.append(_action_key(a.action.kind, t.name, t.text, t.label))
    return out


def _same_actions(skill: Any, script: CorrectionScript) -> bool:
    """The skill does what the correction did: the same action kinds on targets of the same name
    (a ``{target...}`` placeholder is bound at run time: only its action kind is compared)."""
    mine, theirs = _skill_keys(skill), _script_keys(script)
    if len(mine) != len(theirs):
        return False
    return all(a[0] == b[0] and (a[1] == b[1] or a[1].startswith("{")) for a, b in zip(mine, theirs, strict=True))


class _Watch:
    """Event sink of one version's session: skill events by run, checked on the live page as they come."""

    def __init__(self, loop: "LearningLoop") -> None:
        self.loop = loop
        self.session: Any = None
        self.events: list[Any] = []
        self.false: list[str] = []
        self.fired_actions: dict[tuple[str, int, str], int] = {}

    def __call__(self, event: Any) -> None:
        self.events.append(event)
        if type(event).__name__ == "SkillFired" and getattr(event, "action_index", 0) in (0, -1, None):
            self._check(event)

    def _check(self, event: Any) -> None:
        """Did the skill fire where the page shows the kind it was learnt for, doing what the correction did?"""
        page = getattr(getattr(self.session, "driver", None), "page", None)
        skill_id = str(getattr(event, "skill_id", ""))
        kind = self.loop.skill_kinds.get(skill_id, "")
        script = next((s for s in self.loop.scripts if s.kind == kind), None)
        where = f"{getattr(event, 'flow', '')} step {int(getattr(event, 'index', -1)) + 1} skill {skill_id}"
        if script is None:
            self.false.append(f"{where}: the skill comes from no known correction")
            return
        shown = [s.kind for s in self.loop.scripts if page is not None and self.loop.control._visible(page, s.when)]
        if kind not in shown:
            self.false.append(f"{where}: fired for {kind} where the page shows {', '.join(shown) or 'none of the kinds'}")
            return
        skill = self.loop.skill_cache.get(skill_id)
        if skill is not None and not _same_actions(skill, script):
            self.false.append(f"{where}: its actions {_skill_keys(skill)} are not the correction's {_script_keys(script)}")

    def take(self, run_id: str) -> tuple[list[Any], list[str]]:
        events = [e for e in self.events if getattr(e, "run_id", None) == run_id]
        self.events = [e for e in self.events if getattr(e, "run_id", None) != run_id]
        false, self.false = self.false, []
        return events, false


Judge = Callable[[str, Any], Mapping[str, Any]]


def _demo_judge(flow: str, session: Any) -> Mapping[str, Any]:
    from core.bench.tweaks import _wait_quiet, judge

    site = session.site.site  # the DemoAdapter's DemoSite
    _wait_quiet(site)
    return judge(flow, site.activations(), site.writes())


def _demo_switch(session: Any, variant: str) -> None:
    """Serve ``variant`` on the running demo site (each flow still starts on a reset site, a fresh context)."""
    session.site.site.set_variant(variant)


def _set_variant(root: Path, variant: str, latency_ms: int | None) -> None:
    path = root / "steadyhand.yaml"
    settings = yaml.safe_load(path.read_text(encoding="utf-8"))
    settings.setdefault("site_options", {})["variant"] = variant
    if latency_ms is not None:
        settings["site_options"]["latency_ms"] = str(latency_ms)
    path.write_text(yaml.safe_dump(settings, sort_keys=False), encoding="utf-8")


class LearningLoop:
    """A project copy with one store across versions: run, correct by script, learn, approve, go on.

    Parameters
    ----------
    project_dir : Path
        The project; copied to ``work`` (its own ``.steadyhand`` left out).
    work : Path
        Folder of the copy (the store is ``work/.steadyhand/store.sqlite``).
    scripts : Sequence[CorrectionScript]
        The corrections of the failure kinds (:data:`~core.bench.learn_correct.DEMO_SCRIPTS`).
    approve_after : "run" | "version"
        When proposals are approved.
    judge : Callable[[str, ProjectSession], Mapping] | None
        Ground truth of a flow's run (``wrong_clicks``, ``wrong_activations``,
        ``unexpected_writes``); None: none known (0).
    switch : Callable[[ProjectSession, str], None] | None
        Puts the running site on another version (the demo: ``set_variant``): one
        session and browser serve every version (close the loop after, or use
        it as a context manager).  None: a session per version.
    """

    def __init__(self, project_dir: Path, work: Path, *, scripts: Sequence[CorrectionScript] = DEMO_SCRIPTS,
                 approve_after: Literal["run", "version"] = "run", judge: Judge | None = None,
                 switch: Callable[[Any, str], None] | None = None) -> None:
        self.root = Path(work)
        if self.root.exists():
            shutil.rmtree(self.root)
        shutil.copytree(project_dir, self.root, ignore=shutil.ignore_patterns(".steadyhand"))
        self.scripts = tuple(scripts)
        self.approve_after = approve_after
        self.judge = judge
        self.control = ScriptedCorrection(self.scripts)
        #: skill id -> the failure kind of the correction it was learnt from
        self.skill_kinds: dict[str, str] = {}
        self.skill_cache: dict[str, Any] = {}
        self._pending: list[tuple[RunFigures, str, Any]] = []
        self.switch = switch
        self._session: Any = None
        self._watch = _Watch(self)

    def approved_kinds(self) -> set[str]:
        return {k for sid, k in self.skill_kinds.items() if k and getattr(self.skill_cache.get(sid), "state", "") == "approved"}

    def run_version(self, version: str, variant: str, *, flows: Sequence[str] | None = None,
                    prepare: Callable[[Path], None] | None = None,
                    on_run: Callable[[RunFigures], None] = lambda r: None) -> VersionFigures:
        """Run ``flows`` (default: all) on this version; ``prepare(root)`` edits the copy first (the demo
        sets the variant).  With ``switch`` (see the class) the session of the last version goes on, its site
        switched to ``variant``; else a new session opens and closes.  Raises :class:`LearnSetupError` when
        the project or browser cannot start."""
        from core.engine.session import ProjectSession, SessionError
        from core.perception.browser import BrowserLaunchError
        from core.project import ProjectError, load_project

        if prepare is not None:
            prepare(self.root)
        try:
            project = load_project(self.root)
        except ProjectError as exc:
            raise LearnSetupError(str(exc)) from None
        names = list(flows or project.flows)
        missing = [n for n in names if n not in project.flows]
        if missing:
            raise LearnSetupError(f"{self.root}: no flow named {missing[0]} (flows: {', '.join(project.flows)})")
        figures = VersionFigures(version, variant)
        try:
            if self._session is not None and self.switch is not None:
                session = self._session
                self.switch(session, variant)
            else:
                self.close()
                session = ProjectSession(project, headless=True, control=self.control, emit=self._watch)
                session.open()
                self._session = session
            self._watch.session = session
            try:
                for name in names:
                    run = self._run_one(session, project, name, version, variant, self._watch)
                    figures.runs.append(run)
                    on_run(run)
                self._approve_pending(session)
            finally:
                if self.switch is None:
                    self.close()
        except BrowserLaunchError as exc:
            self.close()
            raise LearnSetupError(str(exc), "environment") from None
        except SessionError as exc:
            self.close()
            raise LearnSetupError(str(exc)) from None
        return figures

    def close(self) -> None:
        """Close the session kept open across versions (idempotent)."""
        if self._session is not None:
            session, self._session = self._session, None
            session.close()

    def __enter__(self) -> "LearningLoop":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run_one(self, session: Any, project: Any, name: str, version: str, variant: str, watch: _Watch) -> RunFigures:
        flow = project.flows[name]
        skilled = self.approved_kinds()
        first_takeover = len(self.control.takeovers)
        started = time.perf_counter()
        result = session.run_flow(flow)
        seconds = time.perf_counter() - started
        takeovers = self.control.takeovers[first_takeover:]
        events, false = watch.take(result.run_id)
        stop = next((o for o in result.steps if o.status not in ("passed", "skipped", "manual")), None)
        run = RunFigures(version=version, variant=variant, flow=name, status=result.status,
                         passed=result.status == "passed", seconds=round(seconds, 3),
                         stopped_at=f"{stop.step_id}: {stop.error[:200]}" if stop else "")
        run.takeovers = len(takeovers)
        run.takeover_kinds = [t.kind or "unknown" for t in takeovers]
        run.unresolved = [f"step {t.index + 1}: {t.error}" for t in takeovers if not t.handed_back]
        # K6 figures from the skill events
        fired = [e for e in events if type(e).__name__ == "SkillFired" and getattr(e, "action_index", 0) in (0, -1, None)]
        finished = [e for e in events if type(e).__name__ == "SkillFinished"]
        run.skill_fired = len(fired)
        run.skill_passed = sum(getattr(e, "outcome", "") == "passed" for e in finished)
        run.skill_failed = sum(getattr(e, "outcome", "") == "failed" for e in finished)
        run.false_triggers, run.false_detail = len(false), false
        run.hits = max(0, run.skill_passed - len(false))
        # a takeover where a skill's trigger held but the safety bar kept it back (an irreversible step it was
        # not approved for) is not a miss of the skill: it is reported apart
        held = {e.index for e in events if type(e).__name__ == "SkillConsidered" and getattr(e, "holds", False)
                and "irreversible" in str(getattr(e, "reason", ""))}
        run.held_back = [f"step {t.index + 1} ({t.kind})" for t in takeovers if t.kind in skilled and t.index in held]
        run.misses = sum(1 for t in takeovers if t.kind in skilled and t.index not in held) + run.skill_failed
        # actions: every attempt of a flow step and every skill action (each an outcome of the run, a skill's
        # at the index of the step it ran before); a step done by hand, or escalated, is a failed action
        for o in result.steps:
            ok = 1 if o.status == "passed" else 0
            run.actions_ok += ok
            run.actions_failed += max(o.attempts - ok, 1 - ok)
        run.steps = len(result.steps)
        if self.judge is not None:
            gt = self.judge(name, session)
            run.wrong_clicks = int(gt.get("wrong_clicks", 0))
            run.wrong_activations = list(gt.get("wrong_activations", []))
            run.unexpected_writes = dict(gt.get("unexpected_writes", {}))
        run.dropped = [str(getattr(e, "reason", "")) for e in events if type(e).__name__ == "SkillDropped"]
        if any(t.handed_back for t in takeovers):
            learnt_here = any(type(e).__name__ in ("SkillProposed", "SkillDropped") for e in events)
            self._pending.append((run, result.run_id, (takeovers, learnt_here)))
            if self.approve_after == "run":
                self._approve_pending(session)
        return run

    def _approve_pending(self, session: Any) -> None:
        """Approve the proposals of the runs waiting (learning them first when the engine did not)."""
        pending, self._pending = self._pending, []
        if not pending or session.store is None:
            return
        from core.store.skills import SkillTable

        table = SkillTable(session.store)
        for run, run_id, (takeovers, learnt_here) in pending:
            if not learnt_here:
                run.dropped += self._learn(session, run_id)
            for skill in table.list(state="proposed"):
                if skill.provenance.run_id != run_id:
                    continue
                run.proposed.append(skill.id)
                kind = next((t.kind for t in takeovers if t.index == skill.provenance.step_index), "")
                if not kind:
                    kind = next((s.kind for s in self.scripts if _same_actions(skill, s)), "")
                self.skill_kinds[skill.id] = kind
                approved, why = approve_for_benchmark(table, skill.id)
                if approved is None:
                    run.refused.append(f"{skill.id}: {why}")
                    self.skill_cache[skill.id] = skill
                else:
                    run.approved.append(skill.id)
                    self.skill_cache[skill.id] = approved

    def _learn(self, session: Any, run_id: str) -> list[str]:
        """Run the learning step on a run the engine did not learn from; what it dropped, with why."""
        try:
            from core.skills.learn import learn_from_run
        except ImportError as exc:
            return [f"no learning step available: {exc}"]
        try:
            report = learn_from_run(session.store, session.project.name, run_id,
                                    settings=getattr(session.project.settings, "skills", None))
        except Exception as exc:  # noqa: BLE001 - one run that cannot be learnt from is a figure, not a crash
            return [f"learning failed: {type(exc).__name__}: {exc}"]
        return [str(getattr(d, "reason", d)) for d in report.dropped]


def run_learn_benchmark(project_dir: Path | str = "projects/demo", *,
                        versions: Sequence[tuple[str, str]] = DEFAULT_VERSIONS, flows: Sequence[str] | None = None,
                        latency_ms: int = 200, approve_after: Literal["run", "version"] = "run",
                        on_run: Callable[[RunFigures], None] = lambda r: None,
                        on_version: Callable[[str, str], None] = lambda v, variant: None,
                        work_dir: Path | None = None) -> LearnReport:
    """Run the demo flows through ``versions`` with scripted corrections and benchmark approvals.

    Parameters
    ----------
    project_dir : Path | str
        A project on the bundled ``demo`` site (copied; its own store is not touched).
    versions : Sequence[tuple[str, str]]
        (version name, demo variant) in order (:data:`DEFAULT_VERSIONS`;
        variants from :data:`core.sites.demo.SERVED_VARIANTS`).
    flows : Sequence[str] | None
        The flows run on each version (default: all of the project).
    latency_ms : int
        Demo submit latency, ms (the project uses 800).
    approve_after : "run" | "version"
        Approve a run's proposals right after it (the next flow may use them), or after the version.
    work_dir : Path | None
        Where the copy lives (kept); default a temporary folder, removed after.

    Raises
    ------
    LearnSetupError
        Unknown variant or flow, not a demo project, Chromium missing.
    """
    from core.project import ProjectError, load_project
    from core.sites.demo import SERVED_VARIANTS

    project_dir = Path(project_dir)
    try:
        project = load_project(project_dir)
    except ProjectError as exc:
        raise LearnSetupError(str(exc)) from None
    if project.settings.site != "demo":
        raise LearnSetupError(f"{project_dir}: the learning bench needs a project on the bundled demo site (site: demo)")
    bad = [v for _, v in versions if v not in SERVED_VARIANTS]
    if bad:
        raise LearnSetupError(f"unknown variant {bad[0]!r}; expected some of {', '.join(SERVED_VARIANTS)}")
    if latency_ms < 0:
        raise LearnSetupError(f"latency must be 0 ms or more, got {latency_ms}")
    if approve_after not in ("run", "version"):
        raise LearnSetupError(f"approve_after must be 'run' or 'version', not {approve_after!r}")
    missing = [f for f in flows or () if f not in project.flows]
    if missing:
        raise LearnSetupError(f"{project_dir}: no flow named {missing[0]} (flows: {', '.join(project.flows)})")
    report = LearnReport(approve_after=approve_after, latency_ms=latency_ms)
    tmp = None if work_dir is not None else tempfile.TemporaryDirectory(prefix="steadyhand-bench-learn-")
    try:
        work = Path(work_dir) if work_dir is not None else Path(tmp.name) / "project"  # type: ignore[union-attr]
        with LearningLoop(project_dir, work, approve_after=approve_after, judge=_demo_judge,
                          switch=_demo_switch) as loop:
            for version, variant in versions:
                on_version(version, variant)
                report.versions.append(loop.run_version(
                    version, variant, flows=flows, on_run=on_run,
                    prepare=lambda root, v=variant: _set_variant(root, v, latency_ms)))
    finally:
        if tmp is not None:
            tmp.cleanup()
    return report


def _rate(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def format_report(report: LearnReport) -> str:
    """The table of ``steadyhand bench learn``: one row per version, then the goals and what did not pass."""
    rows = [v.row() for v in report.versions]
    header = ["version", "variant", "takeovers", "skill hit rate", "action success", "false triggers",
              "wrong clicks", "steps", "passed", "approved"]
    cells = [header] + [[r["version"], r["variant"], str(r["takeovers"]), _rate(r["skill_hit_rate"])
                         + (f" ({r['skill_hits']}/{r['skill_applies']})" if r["skill_applies"] else ""),
                         _rate(r["action_success_rate"]), str(r["false_triggers"]), str(r["wrong_clicks"]),
                         str(r["steps"]), f"{r['passed']}/{r['flows']}", str(r["approved"])] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(header))]
    line = lambda c: "  ".join(x.ljust(w) for x, w in zip(c, widths, strict=True))  # noqa: E731
    out = [f"Learning bench: {len(report.versions)} UI versions of the demo; scripted corrections through the "
           f"takeover path; proposals approved after each {report.approve_after}; submit latency "
           f"{report.latency_ms} ms.", "", line(cells[0]), "  ".join("-" * w for w in widths)]
    out += [line(c) for c in cells[1:]]
    g = report.goals()
    out += ["", "Takeovers by kind: " + "; ".join(
        f"{r['version']} " + (", ".join(f"{k} {n}" for k, n in sorted(r["takeovers_by_kind"].items())) or "none")
        for r in rows)]
    out.append("Goals: " + "; ".join([
        "no takeover for a kind after its first version: " + ("yes" if g["no_takeover_after_first"] else
                                                              f"NO ({g['takeovers_again']})"),
        f"hit rate where a skill applies {_rate(g['hit_rate_overall'])} (>= 90% each version: "
        f"{'yes' if g['hit_rate_at_least_0_9'] else 'no'})",
        f"false triggers {g['false_triggers']}", f"wrong clicks {g['wrong_clicks']}"]))
    notes = []
    for v in report.versions:
        for r in v.runs:
            extra = []
            if not r.passed:
                extra.append(f"{r.status} at {r.stopped_at or '-'}")
            extra += r.unresolved + r.false_detail
            extra += [f"held back by the safety bar at {x}: a takeover" for x in r.held_back]
            if r.wrong_activations:
                extra.append(f"wrong activations {r.wrong_activations}")
            extra += [f"not approved: {x}" for x in r.refused] + [f"dropped: {x}" for x in r.dropped]
            if extra:
                notes.append(f"  {r.version} {r.flow}: " + "; ".join(extra))
    if notes:
        out += ["", "Notes:"] + notes
    return "\n".join(out)


def add_learn_parser(bsub: Any) -> Any:
    """Register ``steadyhand bench learn`` on the bench subparsers; returns the parser."""
    b = bsub.add_parser("learn", help="demo flows through UI versions: failures corrected once by a scripted "
                                      "takeover, learnt as skills, and not needing a person again",
                        description="Example: steadyhand bench learn --json /tmp/learn.json")
    b.add_argument("--project", default="projects/demo", help="a project on the bundled demo site")
    b.add_argument("--versions", nargs="+", metavar="VERSION=VARIANT",
                   help="versions in order (default: " + " ".join(f"{v}={x}" for v, x in DEFAULT_VERSIONS) + ")")
    b.add_argument("--flows", nargs="+", metavar="FLOW", help="flows to run on each version (default: all)")
    b.add_argument("--approve-after", choices=("run", "version"), default="run",
                   help="approve a run's proposals right after it (default) or after the whole version")
    b.add_argument("--latency-ms", type=int, default=200, help="demo submit latency, ms (default 200)")
    b.add_argument("--libraries", action="store_true",
                   help="instead of the demo: an order app over real popup libraries from the npm registry "
                        "(vendored at pinned versions) and look-alike traps (core.bench.learn_libs)")
    b.add_argument("--choice", choices=("accept", "reject"), default="accept",
                   help="with --libraries: the person's answer to a consent banner (default accept)")
    b.add_argument("--runs", type=int, default=3, help="with --libraries: runs per version after approval (default 3)")
    b.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")
    b.set_defaults(func=learn_command)
    return b


def _versions(specs: Iterable[str] | None) -> list[tuple[str, str]]:
    if not specs:
        return list(DEFAULT_VERSIONS)
    out = []
    for i, spec in enumerate(specs):
        name, sep, variant = spec.partition("=")
        out.append((name, variant) if sep else (f"v{i + 1}", name))
    return out


def learn_command(args: Any) -> int:
    """``steadyhand bench learn`` (exit 0: the figures are the output; 2 bad input; 3 environment)."""
    import json
    import sys

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    def err(msg: str, code: int = 2) -> int:
        print(f"steadyhand: error: {msg}", file=sys.stderr)
        return code

    if getattr(args, "libraries", False):
        return _libraries_command(args)
    versions = _versions(args.versions)
    if args.json:
        try:
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).touch()
        except OSError as exc:
            return err(f"{args.json}: cannot write the JSON summary there ({exc.strerror})")
    try:
        from core.project import load_project

        n_flows = len(args.flows or load_project(args.project).flows)
    except Exception as exc:  # noqa: BLE001 - reported below by the benchmark with its own message
        n_flows = 1
        del exc
    console = Console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=False) as progress:
        task = progress.add_task("learning bench", total=len(versions) * n_flows)

        def on_run(r: RunFigures) -> None:
            progress.advance(task)
            progress.console.print(f"  {r.version} {r.variant}/{r.flow}: {r.status}, {counted(r.takeovers, 'takeover')}"
                                   f"{' ' + str(r.takeover_kinds) if r.takeovers else ''}, skills fired "
                                   f"{r.skill_fired} passed {r.skill_passed}, approved {len(r.approved)}, "
                                   f"wrong clicks {r.wrong_clicks}, {r.seconds:.1f}s", highlight=False)

        def on_version(v: str, variant: str) -> None:
            progress.update(task, description=f"{v} ({variant})")

        try:
            report = run_learn_benchmark(args.project, versions=versions, flows=args.flows,
                                         latency_ms=args.latency_ms, approve_after=args.approve_after,
                                         on_run=on_run, on_version=on_version)
        except LearnSetupError as exc:
            return err(str(exc), 3 if exc.kind == "environment" else 2)
    print(format_report(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_json_dict(), indent=2), encoding="utf-8")
    return 0


def _libraries_command(args: Any) -> int:
    """``steadyhand bench learn --libraries`` (:mod:`core.bench.learn_libs`): the table, and the JSON with ``--json``."""
    import sys

    from core.bench.learn_libs import format_library_report, run_library_benchmark

    if args.runs < 1:
        print("steadyhand: error: --runs is at least 1", file=sys.stderr)
        return 2

    def on_row(r: Any) -> None:
        print(f"  {r.phase} {r.package}: {counted(r.runs, 'run')}, {counted(r.takeovers, 'takeover')}, {counted(r.hits, 'hit')}", file=sys.stderr)

    report = run_library_benchmark(choice=args.choice, runs=args.runs, on_row=on_row)
    print(format_library_report(report))
    if args.json:
        import json

        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report.to_json_dict(), indent=2), encoding="utf-8")
    return 0
