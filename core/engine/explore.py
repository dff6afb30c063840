"""Exploration (P4, P8, S6): walk an app without a model, map it into the state graph, find goals.

``steadyhand explore PROJECT [--start URL] [--setup FLOW[:N]] [--budget N] [--depth N]
[--seconds S] [--allow-writes] [--goal "TEXT appears"] [--save NAME]``.

The walk
--------
From the start page (after the optional setup flow - a fixture such as a
sign-in, replayed by the engine with its verification), the explorer
repeatedly picks one untried action of a known state and performs it:

- **candidates**: every visible, enabled, uncovered control of the page;
  clicks on buttons and links, inputs into empty fields (a project
  parameter whose name fits the field, else ``"test"``; a password field
  only takes a declared secret), choices of a select's first option;
- **novelty first** (P4): the action's label tried least often anywhere,
  then the state visited least, then the shallowest, ties by a seeded
  random draw - actions of the current state come first (no replay);
- **never irreversible unless allowed** (S6): an action is tried only when
  :func:`core.act.prior.judge_reversible` is sure it is front-end only
  (when unsure: irreversible); behind that, a :class:`~core.perception.writeguard.WriteGuard`
  aborts any write request before it leaves the browser, and the action that
  sent it is marked irreversible and its state is not explored;
- **loop pruning** (P4): states are the P4 state hash with volatile text
  normalized (:class:`core.state.graph.StateSeen`); reaching a state already
  on the current path is a loop - the path is cut back to it;
- **anti-loop** (P8): the same action on the same state 3 times in the last
  5 is refused (:class:`core.recover.loops.LoopGuard`);
- **every loop bounded**: ``budget`` actions (40), ``depth`` actions from
  the start (8), ``seconds`` of wall time (300), and replays to reach a state
  (at most ``depth`` steps each).  Hitting a bound ends the walk with that
  reason.

To reach a state that is not the current one the explorer reloads the
start page (a full reset of the site and the setup when writes were
allowed, since the data may have changed) and replays the shortest known
path to it, finding each element again with the locator chain (R2).

Every transition goes into the store's state graph ``explore:<start>``
(:mod:`core.store.graphs`), which the studio's graph view shows.

Goals
-----
``--goal "TEXT appears"`` (or just ``TEXT``) is a ``text_appears``
assertion: each new state is checked, and when one holds the walk stops;
``networkx.shortest_path`` over this walk's transitions gives the shortest
path from the start state, saved as a flow file (setup steps first, each
step with the element's full descriptor like a recording, the assertion on
the last step) that ``steadyhand run`` replays.
"""
from __future__ import annotations

import hashlib
import random
import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

import networkx as nx

from core.act.expect import expected_delta
from core.act.prior import judge_reversible
from core.domain import Action, Assertion, Candidate, EpisodeSpec, Flow, Observation, RunResult, Step
from core.locate import resolve
from core.perception.driver import ActionError, NavigationError
from core.perception.writeguard import WriteGuard
from core.plan.decider import NeedsHuman
from core.plan.strategy import Planner, PlanOption
from core.project.params import escape, placeholder
from core.recover.loops import LoopGuard, action_key
from core.state.normalize import normalize_text
from core.state.graph import StateGraph, StateSeen, Transition, target_summary
from core.store.graphs import GraphTable

from .session import ProjectSession, resolve_params

__all__ = ["ExploreSettings", "ExploreReport", "Explorer", "parse_goal", "ExploreError", "Chooser", "options_of"]

_DIGITS = re.compile(r"\d+")
#: Seconds between the two looks at the start page that find a clock (volatile digits).
_CALIBRATE_S = 1.1
_FIELD_ROLES = frozenset({"textbox", "searchbox", "combobox", "spinbutton"})
_CLICK_ROLES = frozenset({"button", "link", "tab", "menuitem", "option", "checkbox", "radio", "switch", "treeitem",
                          "columnheader", "menuitemcheckbox", "menuitemradio"})


class ExploreError(RuntimeError):
    """Bad input (a setup flow that does not exist or does not pass, a start page that cannot be loaded)."""


def parse_goal(text: str) -> str:
    """The text of a goal ``'"Sorted by Employee" appears'`` -> ``Sorted by Employee``.

    Raises
    ------
    ExploreError
        When nothing is left (``--goal ""``).
    """
    t = text.strip()
    t = re.sub(r"\s+appears\s*$", "", t, flags=re.I).strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "\"'":
        t = t[1:-1]
    if not t.strip():
        raise ExploreError(f"--goal {text!r}: say which text must appear (--goal \"TEXT appears\")")
    return t


@dataclass(frozen=True, slots=True)
class ExploreSettings:
    """Bounds and options of one exploration (every loop bounded).

    Attributes
    ----------
    start : str
        Start URL (relative to the site's base URL); ``""``: the setup flow's
        end, else ``"/"``.
    setup : str
        ``"FLOW"`` or ``"FLOW:N"`` (its first N steps): a fixture replayed
        before the walk, and again on every full reset.
    budget : int
        Exploratory actions at most (40).
    depth : int
        Actions from the start state at most (8).
    seconds : float
        Wall time at most, s (300).
    allow_writes : bool
        Let the explorer do actions it believes irreversible (and let writes
        through the network guard).
    goal : str
        Text that must appear (``text_appears``); ``""`` explores only.
    seed : int
        Seed of the tie-break draw.
    """

    start: str = ""
    setup: str = ""
    budget: int = 40
    depth: int = 8
    seconds: float = 300.0
    allow_writes: bool = False
    goal: str = ""
    seed: int = 0


@dataclass(frozen=True, slots=True)
class _Option:
    """One action the explorer may try in a state."""

    key: str
    kind: str
    label: str
    step: Step
    reversible: bool
    why: str


def options_of(obs: Observation, params: dict[str, str], secret_names: Sequence[str]) -> list[_Option]:
    """The actions the explorer may try on ``obs``: clicks on visible, enabled, uncovered controls and
    inputs into empty fields it has a value for, one per distinct action.

    Two controls that go to the same address under the same words (a navigation link and a tab
    "Requests" to ``/requests``) are one action, not two.
    """
    out: list[_Option] = []
    keys: set[str] = set()
    for c in obs.candidates:
        d = c.descriptor
        if not c.visible or not c.enabled or c.covered or not c.extra.get("in_viewport", True):
            continue
        role = d.role or d.tag
        if c.editable or role in _FIELD_ROLES:
            if c.value.strip():
                continue
            fv = _field_value(c, params, secret_names)
            if fv is None or not fv[1]:
                continue
            kind, shown = "input", fv[1]
        elif d.tag == "select":
            continue  # options are explored by the select's own step when recorded; not by a blind choice
        elif role in _CLICK_ROLES or d.tag in ("button", "a", "summary"):
            kind, shown = "click", ""
        else:
            continue
        reversible, why = judge_reversible(kind, c)
        step = Step(id="", action=Action(kind, shown), name="", target=d, expect="auto", reversible=reversible)
        key = action_key(step, d, shown)
        same_place = f"goto|{normalize_text(d.label_text)}|{d.href}" if kind == "click" and d.href else ""
        if key in keys or (same_place and same_place in keys):
            continue
        keys.add(key)
        if same_place:
            keys.add(same_place)
        label = target_summary(d.role, d.label_text, tag=d.tag)
        out.append(_Option(key, kind, label, step, reversible, why))
    return out


@dataclass
class _Edge:
    source: str
    target: str
    option: _Option
    blocked: bool = False


@dataclass
class ExploreReport:
    """What one exploration did (printed by the command, ``as_dict`` for ``--json``).

    Attributes
    ----------
    graph : str
        Name of the stored graph.
    states, transitions : int
        Distinct states and transitions seen in this walk.
    actions : int
        Exploratory actions performed (replays not counted).
    replays : int
        Steps replayed to reach a state.
    skipped_irreversible : list[str]
        Actions not tried because they may write (``"button 'Delete' (named like a write ('delete'))"``).
    blocked_writes : list[str]
        Write requests the network guard aborted (``"POST /api/x"``).
    stop : str
        Why the walk ended (``"goal reached"``, ``"nothing left to try"``, ``"budget of 40 actions spent"``...).
    goal_path : list[str]
        The shortest path's steps, when a goal was reached.
    flow_file : str
        The saved flow file, ``""`` when none.
    seconds : float
        Wall time, s.
    """

    graph: str
    states: int = 0
    transitions: int = 0
    actions: int = 0
    replays: int = 0
    skipped_irreversible: list[str] = field(default_factory=list)
    blocked_writes: list[str] = field(default_factory=list)
    stop: str = ""
    goal: str = ""
    goal_path: list[str] = field(default_factory=list)
    flow_file: str = ""
    seconds: float = 0.0
    loops_pruned: int = 0
    refused_p8: int = 0
    backoffs: int = 0
    planner: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    def lines(self) -> list[str]:
        out = [f"explored {self.states} states, {self.transitions} transitions in {self.actions} actions "
               f"({self.replays} replayed steps, {self.seconds:.1f} s); stored as graph '{self.graph}'",
               f"stopped: {self.stop}"]
        if self.planner:
            out.append(f"planned by {self.planner}; backed off and re-planned {self.backoffs} times")
        if self.loops_pruned:
            out.append(f"loops pruned: {self.loops_pruned}")
        if self.refused_p8:
            out.append(f"actions refused by the anti-loop rule: {self.refused_p8}")
        if self.skipped_irreversible:
            out.append(f"not tried, may write: {len(self.skipped_irreversible)}: "
                       + "; ".join(self.skipped_irreversible[:6]) + (" ..." if len(self.skipped_irreversible) > 6 else ""))
        if self.blocked_writes:
            out.append("writes stopped by the network guard: " + ", ".join(self.blocked_writes))
        if self.goal:
            if self.goal_path:
                out.append(f"goal {self.goal!r} reached in {len(self.goal_path)} steps: " + " -> ".join(self.goal_path))
            else:
                out.append(f"goal {self.goal!r} not reached")
        if self.flow_file:
            out.append(f"saved {self.flow_file}")
        return out


#: A chooser picks the next option among the untried ones of the states it may reach:
#: ``(options: [(state key, option, depth)], current state key) -> index``; the default is novelty-first.
Chooser = Callable[[Sequence[tuple[str, "_Option", int]], str], int]


def _field_value(c: Candidate, params: dict[str, str], secrets: Sequence[str]) -> tuple[str, str] | None:
    """``(value to type, value for the flow file)`` for an empty field; None when it should not be typed into."""
    d = c.descriptor
    words = " ".join((d.label_text, d.name_attr, d.id, d.placeholder)).lower()
    if c.extra.get("is_password") or d.type == "password":
        name = next((s for s in secrets if s.lower() in words), "")
        return (name, placeholder(name)) if name else None  # the bound value comes from the session
    for name, value in params.items():
        if name.lower() in words:
            return value, placeholder(name)
    if d.type in ("email",):
        return "test@example.org", "test@example.org"
    if d.type in ("number", "range"):
        return "1", "1"
    if d.type == "date":
        return "", ""  # a date picker is explored by its buttons, not typed into
    return "test", "test"


class Explorer:
    """One exploration over an open :class:`ProjectSession` (engine thread; see the module doc).

    Parameters
    ----------
    session : ProjectSession
        Open (site, browser, store).
    settings : ExploreSettings
        Bounds and options.
    progress : Callable[[str], None]
        One line per action (the CLI prints them on stderr).
    chooser : Chooser | None
        Picks the next option (a model, P3); None: novelty first.
    """

    def __init__(self, session: ProjectSession, settings: ExploreSettings, *,
                 progress: Callable[[str], None] = lambda s: None, chooser: Chooser | None = None,
                 planner: Planner | None = None) -> None:
        self.s = session
        self.cfg = settings
        self.progress = progress
        self.chooser = chooser
        #: The model's three-layer planner (P3) when one is configured and a goal is given.
        self.planner = planner
        self.stable = ""
        self.rng = random.Random(settings.seed)
        project = session.project
        self.params = dict(project.settings.params)
        self.secret_names = list(project.settings.secrets)
        #: Parameters and secrets bound (secrets are masked by the session's redactor everywhere they could show).
        self.bound = resolve_params(project, Flow(name="explore", start_url="/", steps=()), {})[0]
        self.setup_flow = self._setup_flow(settings.setup)
        self.start = settings.start or (self.setup_flow.start_url if self.setup_flow and not settings.start else "/")
        self.graph_name = f"explore:{self.start if settings.start or not self.setup_flow else self.setup_flow.name}"
        self.graph = StateGraph(self.graph_name)
        self.walk = nx.MultiDiGraph()  # this walk's transitions, for the goal's shortest path
        self.options: dict[str, list[_Option]] = {}
        self.tried: dict[str, set[str]] = {}
        self.label_count: dict[str, int] = {}
        self.dead: set[str] = set()  # states not to explore (a blocked write's aftermath)
        self.depth_of: dict[str, int] = {}
        self.loops = LoopGuard()
        self.guard: WriteGuard | None = None
        self.root = ""
        self.root_url = ""
        self.current = ""
        self.path: list[str] = []
        self.goal_text = parse_goal(settings.goal) if settings.goal else ""
        self.goal_state = ""
        self.volatile_digits = False
        self.run_id = ""
        self._shots = 0
        self.report = ExploreReport(self.graph_name, goal=self.goal_text)
        self.table = GraphTable(session.store) if session.store is not None else None

    # -- setup and resets -------------------------------------------------------------

    def _setup_flow(self, spec: str) -> Flow | None:
        if not spec:
            return None
        name, _, n = spec.partition(":")
        flows = self.s.project.flows
        if name not in flows:
            raise ExploreError(f"--setup {spec!r}: no flow named {name!r} (flows: {', '.join(flows) or 'none'})")
        flow = flows[name]
        if n:
            if not n.isdigit() or not 1 <= int(n) <= len(flow.steps):
                raise ExploreError(f"--setup {spec!r}: N must be 1..{len(flow.steps)} (the flow's steps)")
            flow = replace(flow, steps=flow.steps[:int(n)], name=f"{flow.name}_setup")
        return flow

    @property
    def _driver(self) -> Any:
        assert self.s.driver is not None
        return self.s.driver

    def _full_reset(self) -> Observation:
        """Reset the site, replay the setup flow, load the start page, guard the writes."""
        assert self.s.site is not None
        if self.setup_flow is not None:
            result = self.s.run_flow(self.setup_flow)
            if not result.passed:
                raise ExploreError(f"the setup flow {self.setup_flow.name!r} did not pass: {result.error or result.status}")
        else:
            self.s.site.before_flow(Flow(name="explore", start_url=self.start, steps=()), self._driver)
        d = self._driver
        if not self.cfg.allow_writes:
            self.guard = WriteGuard(d.page.context, _origin(d.base_url))
        if self.cfg.start or self.setup_flow is None:
            d.goto(self.start)
            self._start_episode()
        return d.observe()

    def _start_episode(self) -> None:
        """An episodic page (a MiniWoB++ task) starts its episode, seeded, as a run of its flow would."""
        if self.s.project.settings.site != "miniwob":
            return
        task = Path(self.start.split("?", 1)[0]).stem
        flow = Flow(name=task, start_url=self.start, steps=(), episode=EpisodeSpec(task))
        assert self.s.site is not None
        self.s.site.start_episode(flow, self._driver, self.cfg.seed)

    def _light_reset(self) -> Observation:
        """Back to the start state: reload its URL (no data changed without writes), else a full reset."""
        if self.cfg.allow_writes or not self.root_url:
            return self._full_reset()
        try:
            self._driver.goto(self.root_url)
            self._start_episode()
        except NavigationError:
            return self._full_reset()
        obs = self._driver.observe()
        if self._identify(obs) != self.root:
            return self._full_reset()
        return obs

    # -- states and options -----------------------------------------------------------

    def _shot(self, obs: Observation) -> str:
        """Store the screenshot of a state not seen before (masked by the driver); its path relative to the media."""
        store = self.s.store
        if store is None or not self.run_id or not obs.screenshot_png or self.graph.identify(self._seen(obs)):
            return ""
        try:
            self._shots += 1
            path = store.record_observation(self.run_id, self._shots, "after", obs)
            return Path(path).resolve().relative_to(store.media_root.resolve()).as_posix() if path else ""
        except Exception:  # noqa: BLE001 - screenshots are best effort
            return ""

    def _seen(self, obs: Observation, shot: str = "") -> StateSeen:
        sig = obs.signature
        if self.volatile_digits:  # a clock on the page: its digits are not part of the state (P4 normalization)
            text = _DIGITS.sub("#", normalize_text(obs.visible_text))[:500]
            sig = replace(sig, text_digest=hashlib.sha1(text.encode("utf-8", "replace") + b"\x1f").hexdigest())
        return StateSeen.of(sig, screenshot_png=obs.screenshot_png if not self.volatile_digits else b"",
                            screenshot=shot)

    def _calibrate(self, obs: Observation) -> Observation:
        """Look at the start page again after :data:`_CALIBRATE_S`: text that changed only in its digits is a
        clock or a counter (volatile, P4), so digits are left out of the state's text from then on."""
        time.sleep(_CALIBRATE_S)
        again = self._driver.observe()
        a, b = normalize_text(obs.visible_text), normalize_text(again.visible_text)
        if a != b and _DIGITS.sub("#", a) == _DIGITS.sub("#", b):
            self.volatile_digits = True
            self.progress("the start page's text changes by itself (a clock or a counter): its digits are "
                          "left out of the state identity")
        return again

    def _identify(self, obs: Observation) -> str:
        seen = self._seen(obs)
        return self.graph.identify(seen) or seen.key

    def _options_of(self, obs: Observation) -> list[_Option]:
        return options_of(obs, self.params, self.secret_names)

    def _register(self, obs: Observation, depth: int) -> str:
        key = self._identify(obs)
        if key not in self.options:
            self.options[key] = self._options_of(obs)
            self.tried.setdefault(key, set())
            self.depth_of[key] = depth
            for o in self.options[key]:
                if not o.reversible and not self.cfg.allow_writes:
                    entry = f"{o.label} ({o.why})"
                    if entry not in self.report.skipped_irreversible:
                        self.report.skipped_irreversible.append(entry)
        return key

    def _untried(self) -> list[tuple[str, _Option, int]]:
        out = []
        for key, opts in self.options.items():
            if key in self.dead or self.depth_of.get(key, 0) >= self.cfg.depth:
                continue
            if key != self.root and not self._reachable(key):
                continue
            for o in opts:
                if o.key in self.tried[key] or (not o.reversible and not self.cfg.allow_writes):
                    continue
                out.append((key, o, self.depth_of.get(key, 0)))
        return out

    def _reachable(self, key: str) -> bool:
        return key in self.walk and self.root in self.walk and nx.has_path(self.walk, self.root, key)

    def _plan(self, options: Sequence[tuple[str, _Option, int]], obs: Observation) -> int:
        """The model's choice (P3) among the untried options; "here" is the current (else the last stable) state."""
        assert self.planner is not None
        here = self.current or self.stable
        return self.planner.choose(obs, [PlanOption(o.kind, o.label, key == here) for key, o, _ in options])

    def _novelty_first(self, options: Sequence[tuple[str, _Option, int]], current: str) -> int:
        def score(i: int) -> tuple[Any, ...]:
            key, o, depth = options[i]
            return (self.label_count.get(o.label, 0), key != current, self.graph.node(key).visits
                    if key in self.graph else 0, depth, self.rng.random())
        return min(range(len(options)), key=score)

    # -- acting -----------------------------------------------------------------------

    def _bind(self, o: _Option) -> str:
        v = o.step.action.value
        m = re.fullmatch(r"\{(\w+)\}", v)
        if not m:
            return v.replace("{{", "{").replace("}}", "}")
        return self.bound.get(m.group(1), "")

    def _find(self, o: _Option, obs: Observation) -> Candidate | None:
        res = resolve(o.step.target, obs.candidates, irreversible=not o.reversible, anchors=obs.anchors)
        if res.abstained or res.ref is None:
            return None
        return next((c for c in obs.candidates if c.ref == res.ref), None)

    def _perform(self, o: _Option, obs: Observation) -> tuple[Observation | None, list[str]]:
        """Do ``o`` on the page of ``obs``; ``(the page after, blocked writes)``; None when the element is gone."""
        cand = self._find(o, obs)
        if cand is None:
            return None, []
        d = self._driver
        probe = d.probe() or {}
        try:
            d.perform(o.step.action, cand.ref, self._bind(o))
        except ActionError as exc:
            self.progress(f"  {o.kind} {o.label} failed: {exc}")
            return None, []
        d.wait_settled(start=dict(probe), long=not o.reversible)
        blocked = [r.shown for r in self.guard.take()] if self.guard is not None else []
        return d.observe(), blocked

    def _go_to(self, key: str) -> Observation | None:
        """Reach state ``key``: reset to the start and replay the shortest known path (bounded by ``depth``)."""
        obs = self._light_reset()
        here = self._identify(obs)
        if here != self.root:
            return None
        try:
            hops = nx.shortest_path(self.walk, self.root, key)
        except (nx.NetworkXNoPath, nx.NodeNotFound):
            return None
        self.path = [self.root]
        for a, b in zip(hops, hops[1:], strict=False):
            edge = next((e["edge"] for e in self.walk.get_edge_data(a, b).values() if not e["edge"].blocked), None)
            if edge is None:
                return None
            after, blocked = self._perform(edge.option, obs)
            self.report.replays += 1
            if after is None or blocked or self._identify(after) != b:
                return None
            obs = after
            self.path.append(b)
        return obs

    def _add(self, before: Observation, after: Observation, o: _Option, src: str, dst: str, *, blocked: bool,
             start: bool) -> None:
        verdict = "unchanged" if src == dst else "as_expected"
        if blocked:
            verdict = "failed"
        t = Transition(self._seen(before, self._shot(before)), self._seen(after, self._shot(after)), o.kind, o.label,
                       verdict=verdict, start=start)
        self.graph.add(t)
        if self.table is not None:
            try:
                self.table.add_transition(self.graph_name, t)
            except Exception as exc:  # noqa: BLE001 - best effort like every store write
                self.progress(f"  graph not stored: {type(exc).__name__}: {exc}")
        self.walk.add_edge(src, dst, edge=_Edge(src, dst, o, blocked))

    # -- the walk ---------------------------------------------------------------------

    def run(self) -> ExploreReport:
        """Walk until the goal holds, nothing is left, or a bound is hit; returns the report."""
        t0 = time.monotonic()
        if self.s.store is not None:  # one run row holds the exploration's screenshots
            try:
                self.run_id = self.s.store.begin_run(self.s.project.name, "explore")
            except Exception:  # noqa: BLE001 - best effort
                self.run_id = ""
        try:
            return self._run(t0)
        finally:
            self._finish_run(t0)

    def _finish_run(self, t0: float) -> None:
        if self.s.store is None or not self.run_id:
            return
        ok = not self.goal_text or bool(self.goal_state)
        try:
            self.s.store.finish_run(self.run_id, RunResult(
                run_id=self.run_id, flow="explore", status="passed" if ok else "failed", steps=(), heals=0,
                invalid_actions=0, seconds=time.monotonic() - t0, error="" if ok else "goal not reached",
                error_kind="" if ok else "assertion"))
        except Exception:  # noqa: BLE001 - best effort
            pass

    def _run(self, t0: float) -> ExploreReport:
        obs = self._calibrate(self._full_reset())
        self.root_url = obs.url
        self.root = self._register(obs, 0)
        self.walk.add_node(self.root)
        self.current, self.path, self.stable = self.root, [self.root], self.root
        if self.goal_text and self._goal_holds(obs):
            self.goal_state = self.root
        choose = self.chooser or self._novelty_first
        first = True
        while not self.goal_state:
            if self.report.actions >= self.cfg.budget:
                self.report.stop = f"budget of {self.cfg.budget} actions spent"
                break
            if time.monotonic() - t0 > self.cfg.seconds:
                self.report.stop = f"wall time of {self.cfg.seconds:.0f} s spent"
                break
            options = self._untried()
            if not options:
                self.report.stop = "nothing left to try"
                break
            try:
                pick = self._plan(options, obs) if self.planner is not None else choose(options, self.current)
            except NeedsHuman as exc:
                self.report.stop = f"the model's plan stopped the walk: {exc.reason}"
                break
            key, o, depth = options[pick]
            self.tried[key].add(o.key)
            if key != self.current:
                reached = self._go_to(key)
                if reached is None:
                    self.progress(f"  could not reach state {key[:8]} again; leaving it")
                    self.dead.add(key)
                    self.current = ""
                    continue
                obs, self.current = reached, key
            why = self.loops.check(o.key, key, title=o.label)
            if why:
                self.report.refused_p8 += 1
                self.progress(f"  {why}")
                continue
            after, blocked = self._perform(o, obs)
            self.report.actions += 1
            self.label_count[o.label] = self.label_count.get(o.label, 0) + 1
            if after is None:
                self.current = ""
                continue
            self.loops.record(o.key, key)
            dst = self._register(after, depth + 1)
            self._add(obs, after, o, key, dst, blocked=bool(blocked), start=first)
            first = False
            note = ""
            if blocked:
                self.report.blocked_writes += blocked
                if dst != self.root:
                    self.dead.add(dst)
                note = f" - write stopped by the guard ({', '.join(blocked)}); marked irreversible"
                self.options[key] = [replace(x, reversible=False, why="it sent a write") if x.key == o.key else x
                                     for x in self.options[key]]
            elif dst in self.path:
                self.report.loops_pruned += 1
                self.path = self.path[:self.path.index(dst) + 1]
                note = " - a state already on this path: not explored again"
            else:
                self.path.append(dst)
            self.progress(f"{self.report.actions:3d}. {o.kind} {o.label}: {key[:8]} -> {dst[:8]}{note}")
            obs, self.current = after, dst
            if blocked:
                self.current = ""
            elif self.goal_text and self._goal_holds(after):
                self.goal_state = dst
            elif self.planner is not None:
                if self.planner.check(after):
                    self.stable = dst
                else:  # P3: the plan did not hold - back off to the last stable state and re-plan
                    why = f"{self.planner.expect!r} did not appear after {o.kind} {o.label}"
                    self.progress(f"     {why}: back to the last stable state {self.stable[:8]}, re-planning")
                    self.planner.replan(why)
                    self.current = ""
                    self.report.backoffs += 1
        if self.goal_state:
            self.report.stop = "goal reached"
            self._shortcut(t0)
        self.report.states = len(self.options)
        self.report.transitions = self.walk.number_of_edges()
        self.report.seconds = time.monotonic() - t0
        return self.report

    def _shortcut(self, t0: float) -> None:
        """Try the action that reached the goal from the earlier states of its path, shallowest first
        (at most ``depth`` tries, within the budget and the wall time): the graph gains the shortcuts
        and the shortest path is taken over them."""
        hops = nx.shortest_path(self.walk, self.root, self.goal_state)
        if len(hops) < 3:
            return
        last = next(e["edge"] for e in self.walk.get_edge_data(hops[-2], hops[-1]).values() if not e["edge"].blocked)
        for key in hops[:-2][: self.cfg.depth]:
            if self.report.actions >= self.cfg.budget or time.monotonic() - t0 > self.cfg.seconds:
                return
            obs = self._go_to(key)
            if obs is None:
                continue
            after, blocked = self._perform(last.option, obs)
            self.report.actions += 1
            if after is None or blocked:
                continue
            dst = self._register(after, self.depth_of.get(key, 0) + 1)
            self._add(obs, after, last.option, key, dst, blocked=False, start=False)
            self.progress(f"{self.report.actions:3d}. shortcut: {last.option.kind} {last.option.label}: "
                          f"{key[:8]} -> {dst[:8]}")
            if self._goal_holds(after):
                if dst != self.goal_state:
                    self.goal_state = dst  # another sighting of the goal, closer to the start
                return

    def _goal_holds(self, obs: Observation) -> bool:
        ok, _ = self._driver.check_assertion(Assertion("text_appears", self.goal_text), None, self.goal_text) \
            if self.goal_text in obs.visible_text else (False, "")
        return bool(ok)

    # -- the goal's flow ---------------------------------------------------------------

    def goal_flow(self, name: str) -> Flow | None:
        """The shortest path from the start state to the goal state as a flow (None without a goal state)."""
        if not self.goal_state:
            return None
        hops = nx.shortest_path(self.walk, self.root, self.goal_state) if self.goal_state != self.root else [self.root]
        steps: list[Step] = list(self.setup_flow.steps) if self.setup_flow is not None else []
        if self.setup_flow is not None and self.cfg.start:
            steps.append(Step(id="", action=Action("navigate", escape(self.start)), name=f"Open {self.start}"))
        path: list[str] = []
        for a, b in zip(hops, hops[1:], strict=False):
            edge = next(e["edge"] for e in self.walk.get_edge_data(a, b).values() if not e["edge"].blocked)
            o = edge.option
            s = replace(o.step, name=f"{'Type into' if o.kind == 'input' else 'Click'} {o.label}")
            s = replace(s, expect=expected_delta(s) if o.kind != "click" else "auto")
            steps.append(s)
            path.append(s.name)
        assertion = Assertion("text_appears", escape(self.goal_text))
        if len(steps) > (len(self.setup_flow.steps) if self.setup_flow else 0):
            steps[-1] = replace(steps[-1], assertions=steps[-1].assertions + (assertion,))
        else:
            steps.append(Step(id="", action=Action("assert"), name=f"Check that {self.goal_text!r} appears",
                              assertions=(assertion,)))
        steps = [replace(s, id=f"s{i + 1}") for i, s in enumerate(steps)]
        self.report.goal_path = path
        start = self.setup_flow.start_url if self.setup_flow is not None else self.start
        return Flow(name=name, start_url=start, steps=tuple(steps),
                    description=f"Found by exploration: the shortest path to a page where {self.goal_text!r} appears.",
                    secrets=tuple(self.setup_flow.secrets) if self.setup_flow else ())


def _origin(url: str) -> str:
    from urllib.parse import urlsplit

    u = urlsplit(url)
    return f"{u.scheme}://{u.netloc}"


def explore(project_root: str | Path, settings: ExploreSettings, *, save: str = "",
            progress: Callable[[str], None] = lambda s: None, headless: bool | None = True,
            use_model: bool = True, force: bool = False) -> ExploreReport:
    """Open the project, explore, save the goal's flow file; returns the report.

    Raises
    ------
    ExploreError, core.project.ProjectError, core.engine.session.SessionError,
    core.perception.browser.BrowserLaunchError
    """
    from core.project import load_project, save_flow
    from core.record.save import flow_path, valid_flow_name

    project = load_project(project_root, skip_invalid=True)
    name = save or (_slug(parse_goal(settings.goal)) if settings.goal else "")
    if name and not valid_flow_name(name):
        raise ExploreError(f"--save {name!r}: a flow name is letters, digits, '_' and '-'")
    if name:
        from core.project import ProjectError
        from core.project.paths import flow_file

        try:
            flow_file(project.root, name, option="--save")  # the flows folder may not lead out of the project
        except ProjectError as exc:
            raise ExploreError(str(exc)) from None
    if name and not force and (flow_path(project.root, name).exists() or name in project.flows):
        raise ExploreError(f"{flow_path(project.root, name)}: a flow named {name!r} exists; pass --force to "
                           f"overwrite it or choose another --save name")
    with ProjectSession(project, headless=headless) as session:
        planner = None
        setup = None
        if settings.goal and use_model:
            from core.plan.config import model_setup

            try:
                setup = model_setup(project, session.redactor)
            except ValueError as exc:  # ModelSetupError: a key that cannot be found (names the file and field)
                raise ExploreError(str(exc)) from None
            if setup is not None:
                planner = Planner(setup.primary, parse_goal(settings.goal), session.redactor)
        ex = Explorer(session, settings, progress=progress, planner=planner)
        if planner is not None:
            ex.report.planner = f"model {setup.primary.config.model}"
        try:
            report = ex.run()
        finally:
            if setup is not None:
                setup.close()
        flow = ex.goal_flow(name) if name else None
        if flow is not None:
            path = flow_path(project.root, name)
            save_flow(flow, path)
            report.flow_file = str(path)
    return report


def _slug(text: str) -> str:
    s = re.sub(r"[^A-Za-z0-9]+", "_", text.strip().lower()).strip("_")[:40] or "goal"
    return f"reach_{s}"


def explore_command(args: Any) -> int:
    """``steadyhand explore``: exit 0 explored (goal reached when one was given), 1 goal not reached,
    2 bad input, 4 environment broken."""
    import json
    import sys

    from core.exitcodes import EXIT_ENVIRONMENT, EXIT_FAILED, EXIT_INPUT, EXIT_OK
    from core.perception.browser import BrowserLaunchError
    from core.project import ProjectError

    from .session import SessionError

    def err(msg: str) -> int:
        print(f"steadyhand: error: {msg}", file=sys.stderr)
        return EXIT_INPUT

    if args.budget < 1 or args.depth < 1 or args.seconds <= 0:
        return err("--budget and --depth must be at least 1 and --seconds above 0")
    settings = ExploreSettings(start=args.start, setup=args.setup, budget=args.budget, depth=args.depth,
                               seconds=args.seconds, allow_writes=args.allow_writes, goal=args.goal, seed=args.seed)
    try:
        report = explore(args.project, settings, save=args.save,
                         progress=lambda line: print(line, file=sys.stderr, flush=True),
                         headless=False if args.headed else None, use_model=not args.no_model,
                         force=args.force)
    except (ExploreError, ProjectError) as exc:
        return err(str(exc))
    except (SessionError, BrowserLaunchError, NavigationError) as exc:
        print(f"steadyhand: error: {exc}", file=sys.stderr)
        return EXIT_ENVIRONMENT
    for line in report.lines():
        print(line, file=sys.stderr if args.json == "-" else sys.stdout)
    if args.json == "-":  # the JSON alone on stdout, the report lines on stderr
        print(json.dumps(report.as_dict(), indent=2))
    elif args.json:
        Path(args.json).write_text(json.dumps(report.as_dict(), indent=2), encoding="utf-8")
    return EXIT_FAILED if settings.goal and not report.flow_file else EXIT_OK
