"""``steadyhand bench ab``: the same policy with and without state awareness (S8).

Seed 003 reports, for one model with and without its state module:
completion 65% -> 82%, steps per task 31.4 -> 19.2, invalid actions 34% ->
9%, time 52 s -> 38 s.  This benchmark measures the same four figures on
pages we did not write (MiniWoB++ tasks from the installed package) and on
goals in the demo app, in real Chromium.

The policy
----------
The model when the project configures one (``model:`` in steadyhand.yaml of
the demo project, asked through :class:`ModelPolicy`), otherwise a seeded
model-free policy: a uniform draw over the actions the page offers (clicks
on visible controls, inputs of the task's field values into empty fields).
Both arms use the same policy with the same seed per episode; the action
space is the same closed one, and actions that may write data
(:func:`core.act.prior.judge_reversible`) are never offered to either.

What "with state awareness" adds (each from the engine's own modules):

- **pre-check** (S4, :func:`core.act.precheck.precheck` with the belief of
  :mod:`core.state.awareness`): a disabled, hidden or covered target, or any
  target while the belief is "waiting for the server", is not offered;
- **post-verify with expected deltas** (S5, :mod:`core.act.expect`): an
  action whose effect was "unchanged" on a state is not offered again on it;
- **anti-loop** (P8, :class:`core.recover.loops.LoopGuard`) and
  **stagnation** (K2, :class:`core.recover.loops.Stagnation`): the same
  action 3 times in 5 on one state, or an action of rounds that changed
  nothing real, is not offered;
- **adaptive waits** (S7, :class:`core.recover.waits.WaitLearner` with the
  belief): after an action the page is waited for until it is quiet, within
  the learnt budget; a loading page is waited for before choosing.

Without it the policy chooses among everything the page shows and acts
after a fixed pause of :data:`FIXED_PAUSE_S` (300 ms).

Figures (per arm, over every episode): ``completion`` share of episodes
whose goal held (MiniWoB++: a positive reward; demo: the goal text
appeared) within :data:`MAX_STEPS` actions (30, P6); ``steps`` actions per
episode (mean); ``invalid_share`` share of actions whose verdict was
unchanged or changed unexpectedly (S5's judge, applied to both arms alike);
``seconds`` wall time per episode (mean, s).
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from core.bench.ab_model import NoChoice
from core.act.expect import expected_delta, judge, observed_deltas
from core.act.precheck import precheck
from core.act.prior import judge_reversible
from core.domain import Action, Candidate, EpisodeSpec, Flow, Observation, Step
from core.domain.resources import bundled_project
from core.project import load_project
from core.recover.loops import LoopGuard, Stagnation, action_key
from core.recover.waits import WaitLearner
from core.sites.adapters import task_fields
from core.state.awareness import ActionNote, StateAwareness, is_submit

if TYPE_CHECKING:  # imported where a session is made: `steadyhand --help` and the CLI's parser need no engine
    from core.engine.session import ProjectSession

__all__ = ["AbTask", "DEFAULT_TASKS", "MAX_STEPS", "FIXED_PAUSE_S", "run_ab", "format_report", "Arm"]

#: Actions per episode at most (P6: 30 steps per case, its P95).
MAX_STEPS = 30
#: The pause after an action without state awareness, s.
FIXED_PAUSE_S = 0.3
#: Waits for a loading page per episode at most (each bounded by ``loading_max_ms``, S7).
_MAX_WAITS = 3
_FIELD_ROLES = frozenset({"textbox", "searchbox", "combobox", "spinbutton"})
_CLICK_ROLES = frozenset({"button", "link", "tab", "menuitem", "option", "checkbox", "radio", "switch", "treeitem"})


@dataclass(frozen=True, slots=True)
class AbTask:
    """One task: a MiniWoB++ page (``goal`` empty: the reward decides) or a demo-app goal text."""

    name: str
    site: str  # "miniwob" | "demo"
    start: str
    goal: str = ""
    setup: str = ""  # demo: a fixture flow "FLOW:N" (the sign-in)


DEFAULT_TASKS: tuple[AbTask, ...] = (
    AbTask("click-test", "miniwob", "/miniwob/click-test.html"),
    AbTask("click-dialog", "miniwob", "/miniwob/click-dialog.html"),
    AbTask("click-collapsible", "miniwob", "/miniwob/click-collapsible-nodelay.html"),
    AbTask("click-tab", "miniwob", "/miniwob/click-tab.html"),
    AbTask("enter-text", "miniwob", "/miniwob/enter-text.html"),
    AbTask("focus-text", "miniwob", "/miniwob/focus-text.html"),
    AbTask("demo-sort-desc", "demo", "/requests", "Sorted by Employee, descending", "sort_table:3"),
    AbTask("demo-new-request", "demo", "/requests", "All fields are required", "sort_table:3"),
)


@dataclass
class Arm:
    """Sums of one arm."""

    episodes: int = 0
    completed: int = 0
    steps: int = 0
    invalid: int = 0
    seconds: float = 0.0

    def figures(self) -> dict[str, float]:
        n = max(1, self.episodes)
        return {"completion": round(self.completed / n, 3), "steps": round(self.steps / n, 2),
                "invalid_share": round(self.invalid / max(1, self.steps), 3), "seconds": round(self.seconds / n, 2)}


@dataclass
class _Choice:
    kind: str
    cand: Candidate
    value: str
    key: str


def _offers(obs: Observation, values: Sequence[str]) -> list[_Choice]:
    """The closed action space on this page: clicks on controls, inputs of the task's values; never a write."""
    out: list[_Choice] = []
    for c in obs.candidates:
        d = c.descriptor
        role = d.role or d.tag
        if not c.visible:
            continue
        if c.editable or role in _FIELD_ROLES:
            if c.value.strip():
                continue
            for v in values or ("test",):
                out.append(_Choice("input", c, v, ""))
            continue
        if d.tag == "select":
            continue
        if role not in _CLICK_ROLES and d.tag not in ("button", "a"):
            continue
        out.append(_Choice("click", c, "", ""))
    kept = []
    for ch in out:
        ok, _ = judge_reversible(ch.kind, ch.cand)
        # a MiniWoB++ task's own "Submit" ends the episode on the page only; the demo app's writes are never offered
        if not ok and not (ch.kind == "click" and obs.url.find("/miniwob/") >= 0):
            continue
        step = Step(id="", action=Action(ch.kind, ch.value), target=ch.cand.descriptor)
        ch.key = action_key(step, ch.cand.descriptor, ch.value)
        kept.append(ch)
    return kept


Policy = Callable[[Sequence[_Choice], Observation, random.Random], int]


def random_policy(choices: Sequence[_Choice], obs: Observation, rng: random.Random, goal: str = "") -> int:
    """The seeded model-free policy: a uniform draw."""
    return rng.randrange(len(choices))


class _Episode:
    """One episode of one arm (see the module doc)."""

    def __init__(self, session: ProjectSession, task: AbTask, *, aware: bool, seed: int, policy: Policy,
                 learner: WaitLearner) -> None:
        self.s, self.task, self.aware, self.policy = session, task, aware, policy
        self.rng = random.Random(seed)
        self.seed = seed
        self.learner = learner
        self.values: list[str] = []
        self.goal = ""

    @property
    def d(self) -> Any:
        return self.s.driver

    def _start(self) -> None:
        t = self.task
        if t.site == "miniwob":
            flow = Flow(name=t.name, start_url=t.start, steps=(), episode=EpisodeSpec(Path(t.start).stem))
            self.s.site.before_flow(flow, self.d)
            self.d.goto(t.start)
            params = self.s.site.start_episode(flow, self.d, self.seed)
            self.values = sorted({v for k, v in task_fields(flow, params.get("utterance", "")).items() if v})
            self.goal = str(params.get("utterance", ""))
        else:
            name, _, n = t.setup.partition(":")
            flow = self.s.project.flows[name]
            setup = replace(flow, steps=flow.steps[:int(n)] if n else flow.steps, name=f"{name}_setup")
            result = self.s.run_flow(setup)
            if not result.passed:
                raise RuntimeError(f"{t.name}: the setup flow {name} did not pass: {result.error}")
            self.d.goto(t.start)
            self.values = []
            self.goal = f"make the text {t.goal!r} appear on the page"

    def _done(self, obs: Observation) -> bool | None:
        """True: goal reached; False: the episode ended without it; None: go on."""
        if self.task.site == "miniwob":
            done = bool(self.d.page.evaluate("() => WOB_DONE_GLOBAL === true"))
            if not done:
                return None
            return float(self.d.page.evaluate("() => WOB_RAW_REWARD_GLOBAL")) > 0
        return True if self.task.goal in obs.visible_text else None

    def run(self) -> tuple[bool, int, int, float]:
        """``(completed, steps, invalid actions, seconds)``."""
        self._start()
        t0 = time.monotonic()
        aw, loops, stag = StateAwareness(), LoopGuard(), Stagnation()
        ineffective: set[tuple[str, str]] = set()
        steps = invalid = waits = 0
        obs = self.d.observe(screenshot=False, neighbours=False)
        completed = False
        last: ActionNote | None = None
        while steps < MAX_STEPS:
            state = self._done(obs)
            if state is not None:
                completed = state
                break
            choices = _offers(obs, self.values)
            if self.aware:
                entry = aw.note(obs, index=steps, moment="before" if last is None else "after", action=last)
                belief = entry.belief
                if belief.state in ("loading", "waiting_server") and waits < _MAX_WAITS:
                    waits += 1  # S7: wait for it (bounded), never act on a loading page
                    self.d.wait_loaded(self.learner.settings.loading_max_ms)
                    obs = self.d.observe(screenshot=False, neighbours=False)
                    last = None
                    continue
                digest = obs.signature.digest
                choices = [ch for ch in choices if not precheck(ch.kind, ch.cand, belief) and not ch.cand.covered
                           and (digest, ch.key) not in ineffective and not loops.check(ch.key, digest)
                           and not stag.blocks(ch.key)]
            if not choices:
                break
            try:
                ch = choices[self.policy(choices, obs, self.rng, goal=self.goal)]
            except NoChoice:
                break
            probe = self.d.probe() or {}
            step = Step(id="", action=Action(ch.kind, ch.value), target=ch.cand.descriptor)
            try:
                self.d.perform(step.action, ch.cand.ref, ch.value)
            except Exception:  # noqa: BLE001 - a failed action (disabled, covered, gone) is an invalid step
                steps += 1
                invalid += 1
                obs = self.d.observe(screenshot=False, neighbours=False)
                continue
            steps += 1
            submit = is_submit(ch.kind, ch.cand)
            if self.aware:
                budget = self.learner.budget(obs.url, ch.kind, long=submit, belief=aw.belief)
                settled = self.d.wait_settled(start=dict(probe), long=submit, idle_ms=budget.idle_ms,
                                              limit_ms=budget.limit_ms) or {}
                self.learner.learn(budget, settled)
            else:
                time.sleep(FIXED_PAUSE_S)
            after = self.d.observe(screenshot=False, neighbours=False)
            verdict = judge(expected_delta(step), observed_deltas(obs, after))
            invalid += verdict.invalid
            if self.aware:
                loops.record(ch.key, obs.signature.digest)
                stag.observe(obs.signature.digest, after.signature.digest, verdict=verdict.kind,
                             expected=expected_delta(step), key=ch.key)
                if verdict.kind == "unchanged":
                    ineffective.add((obs.signature.digest, ch.key))
                last = ActionNote(ch.kind, ch.cand.descriptor.label_text[:60], submit)
            obs = after
        else:
            state = self._done(obs)
            completed = bool(state)
        return completed, steps, invalid, time.monotonic() - t0


def _session(site: str) -> ProjectSession:
    from core.engine.session import ProjectSession

    project = load_project(bundled_project(site))
    return ProjectSession(project, headless=True, use_store=False, screenshots=False)


@dataclass
class AbReport:
    policy: str
    with_: Arm = field(default_factory=Arm)
    without: Arm = field(default_factory=Arm)
    tasks: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "with": self.with_.figures(), "without": self.without.figures(),
                "tasks": self.tasks}


def run_ab(tasks: Sequence[AbTask] = DEFAULT_TASKS, *, episodes: int = 2, seed: int = 0,
           policy: Policy | None = None, policy_name: str = "", progress: Callable[[str], None] = lambda s: None
           ) -> dict[str, Any]:
    """Run every task ``episodes`` times in both arms; returns ``{"policy", "with", "without", "tasks"}``.

    Episode ``i`` of a task uses seed ``seed + i`` for the page (MiniWoB++) and the policy in both arms.
    """
    report = AbReport(policy_name or ("model" if policy is not None else f"random (seeded, seed {seed})"))
    pol = policy or random_policy
    for site in ("miniwob", "demo"):
        mine = [t for t in tasks if t.site == site]
        if not mine:
            continue
        with _session(site) as session:
            learner = WaitLearner(session.project.engine_settings.waits)
            for t in mine:
                row: dict[str, Any] = {"task": t.name}
                for aware, arm, label in ((False, report.without, "without"), (True, report.with_, "with")):
                    done = steps = 0
                    for i in range(episodes):
                        ok, n, bad, secs = _Episode(session, t, aware=aware, seed=seed + i, policy=pol,
                                                    learner=learner).run()
                        arm.episodes += 1
                        arm.completed += ok
                        arm.steps += n
                        arm.invalid += bad
                        arm.seconds += secs
                        done += ok
                        steps += n
                    row[label] = {"completed": done, "episodes": episodes, "steps": steps}
                report.tasks.append(row)
                progress(f"{t.name}: without {row['without']['completed']}/{episodes} in {row['without']['steps']} "
                         f"steps; with {row['with']['completed']}/{episodes} in {row['with']['steps']} steps")
    return report.as_dict()


def format_report(report: dict[str, Any]) -> str:
    """Seed 003's table: completion, steps per task, invalid-action share, seconds, without and with."""
    w, a = report["without"], report["with"]
    rows = [("completion", f"{w['completion']:.0%}", f"{a['completion']:.0%}", "65% -> 82%"),
            ("steps per task", f"{w['steps']:.1f}", f"{a['steps']:.1f}", "31.4 -> 19.2"),
            ("invalid actions", f"{w['invalid_share']:.0%}", f"{a['invalid_share']:.0%}", "34% -> 9%"),
            ("seconds per task", f"{w['seconds']:.1f}", f"{a['seconds']:.1f}", "52 -> 38")]
    head = ("measure", "without state awareness", "with state awareness", "seed 003 (S8)")
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(4)]
    lines = [f"policy: {report['policy']}; {len(report['tasks'])} tasks"]
    for r in [head, tuple("-" * n for n in widths)] + rows:
        lines.append("  ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip())
    return "\n".join(lines)


def add_ab_parser(bsub: Any) -> Any:
    """Register ``steadyhand bench ab`` on the bench subparsers; returns the parser."""
    names = [t.name for t in DEFAULT_TASKS]
    b = bsub.add_parser("ab", help="the same policy with and without state awareness on MiniWoB++ tasks and demo "
                                   "goals (seed 003's table)",
                        description="Example: steadyhand bench ab --episodes 3 --json /tmp/ab.json\n"
                                    "         steadyhand bench ab --model projects/mine --episodes 1")
    b.add_argument("--episodes", type=int, default=2, help="episodes per task and arm (default 2)")
    b.add_argument("--tasks", nargs="+", metavar="TASK", choices=names, help=f"tasks to run (default all: {', '.join(names)})")
    b.add_argument("--seed", type=int, default=0, help="first seed of the pages and the policy (default 0)")
    b.add_argument("--model", nargs="?", const=str(bundled_project("demo")), default=None, metavar="PROJECT",
                   help="use the model configured in PROJECT's steadyhand.yaml as the policy "
                        "(default PROJECT: the bundled projects/demo)")
    b.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")
    b.set_defaults(func=ab_command)
    return b


def ab_command(args: Any) -> int:
    """``steadyhand bench ab`` (exit 0: the figures are the output; 2 bad input; 4 no model reachable)."""
    import json
    import sys

    from core.exitcodes import EXIT_ENVIRONMENT, EXIT_INPUT, EXIT_OK

    def err(msg: str, code: int = EXIT_INPUT) -> int:
        print(f"steadyhand: error: {msg}", file=sys.stderr)
        return code

    if args.episodes < 1:
        return err(f"--episodes must be at least 1, got {args.episodes}")
    if args.json:
        try:
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).touch()
        except OSError:
            return err(f"{args.json}: cannot write the JSON summary there")
    tasks = [t for t in DEFAULT_TASKS if not args.tasks or t.name in args.tasks]
    policy, name = None, ""
    if args.model:
        from core.project.loader import ProjectError

        from .ab_model import model_policy

        try:
            policy, name = model_policy(Path(args.model))
        except ProjectError as exc:
            return err(str(exc))
        except RuntimeError as exc:
            return err(str(exc), EXIT_ENVIRONMENT)
    from core.progress import Progress

    with Progress(len(tasks), "tasks", advance_on=lambda line: True) as bar:  # one line per task, both arms done
        report = run_ab(tasks, episodes=args.episodes, seed=args.seed, policy=policy, policy_name=name, progress=bar)
    print(format_report(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2), encoding="utf-8")
    return EXIT_OK
