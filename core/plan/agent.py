"""The model where it is used: SEMANTIC tie-breaks (R2), goal steps (P3, P5, P6), the goal judge (P7) and
the cross-check of key results (P10), with the cost rules of P9.

:class:`ModelAgent` owns the shared state of one session (clients, decision
cache, judge statistics) and gives the engine:

* :meth:`ModelAgent.tie_break` - the locator chain's tie-breaker
  (``core.locate.resolve(..., tie_breaker=...)``): the tied candidates are
  listed and the model says which one is the recorded element; the chain
  accepts it above 0.7 only and still applies every safety rule;
* :attr:`ModelAgent.decider` - a :class:`ModelDecider` for the decide chain
  (skill > flow > model > human).  It decides goal steps only.

A goal step (``goal:`` in the flow file) repeats at its index: each round
the decider first checks the step's assertions - when they hold it decides
the step's own ``assert`` and the goal is done; otherwise it picks one
action of the closed action space (P5), grounded on the grid and the DOM
boxes (:mod:`core.plan.grounding`).  Without assertions the model judges
whether the goal is reached (P7); every goal passed that way is counted
and the share above 30% raises an alarm (:meth:`ModelAgent.judge_stats`).
A goal marked ``key: true`` (and every judged pass) is confirmed by the
cross-check model when one is configured (P10): they must agree.

Costs (P9): decisions are cached by state digest + goal for
``cache_ttl_s`` (5 min); rules come before the model (the only actionable
element of the page is clicked without asking); one answer may fill several
fields (``fills``), the next rounds take them from the queue.

Never guessed: an unreachable or nonsensical model, a cell outside the
grid, a conflicting answer the rules cannot settle, a hidden / disabled /
covered target - each is :class:`~core.plan.decider.NeedsHuman` with the
reason (the run escalates).  Never obeyed: page text (delimited as data in
every prompt, element names included), the goal's words (they never unlock
an action), an action whose effect is unknown, that opened a dialog or that
wrote earlier in the run (:func:`core.plan.guard.needs_approval`, what the run
saw kept in :attr:`ModelAgent.effects`) without a person's approval (answer
"retry" to approve, or name the control in the step's ``allow``).
"""
from __future__ import annotations

import re

import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

from pydantic import BaseModel, Field

from core.act.space import spec
from core.domain import Action, Assertion, Candidate, ElementDescriptor, Observation, Step
from core.locate.tiebreak import TieChoice
from core.plan.config import ModelSetup
from core.plan.decider import DecideContext, Decision, NeedsApproval, NeedsHuman
from core.plan.grounding import GroundAnswer, GroundingView, grounding_view, intersect, listing_of, rule_fallback
from core.plan.guard import MODEL_ACTIONS, EffectBook, control_of, is_allowed, needs_approval
from core.plan.model import ModelClient, ModelError, image_part, text_part
from core.plan.prompts import load_prompt
from core.project.params import bind, escape_target, placeholders
from core.secrets import Redactor

__all__ = ["GOAL_BUDGET", "JUDGE_ALARM_SHARE", "ACCEPT_CONFIDENCE", "PAGE_TEXT_CHARS", "TieAnswer", "JudgeAnswer",
           "ModelAgent", "ModelDecider", "goal_action_id", "is_goal_action"]

#: Most actions one goal step may take (P6: 30 steps per case, P95).
GOAL_BUDGET = 30
#: Share of goals passed by the model's judgement above which the run report raises an alarm (P7).
JUDGE_ALARM_SHARE = 0.3
#: A model's choice counts only above this confidence (R2).
ACCEPT_CONFIDENCE = 0.7
#: Visible text sent with a prompt, characters.
PAGE_TEXT_CHARS = 1500
#: The prompt versions used.
PROMPTS = {"ground": 2, "tiebreak": 2, "judge": 1}


class TieAnswer(BaseModel):
    element_id: str = ""
    confidence: float = Field(ge=0.0, le=1.0)
    reason: str = ""


class JudgeAnswer(BaseModel):
    reached: bool
    confidence: float = Field(ge=0.0, le=1.0)
    evidence: str = ""


def goal_action_id(step_id: str, n: int) -> str:
    """Id of the ``n``-th action chosen toward goal step ``step_id``: ``"s3~2"``."""
    return f"{step_id}~{n}"


def is_goal_action(step: Step | None) -> bool:
    """True for an action the model chose toward a goal (the goal step repeats after it)."""
    return step is not None and "~" in step.id


def _data(text: str) -> str:
    """Page text made safe to sit between the data markers (it cannot close them)."""
    return text.replace("<page_data>", "<page-data>").replace("</page_data>", "</page-data>")


@dataclass
class _Pending:
    """Fills still queued from one answer (P9), for one goal step on one URL."""

    url: str
    fills: list[tuple[str, ElementDescriptor, str]] = field(default_factory=list)  # (id, descriptor, value)


class ModelAgent:
    """The model's services for one session.

    Parameters
    ----------
    setup : ModelSetup
        Clients (primary, cross-check) and options of the project's ``model:`` section.
    redactor : Callable[[], Redactor]
        The session's current redactor (secret values grow as flows bind them).
    check_assertion : Callable[[Assertion], tuple[bool, str]] | None
        Checks one page-level assertion on the live page (the driver's).
    secret_names : Callable[[], set[str]] | None
        Names of the parameters that are secret (their values never enter a prompt: ``{name}`` stays).
    clock : Callable[[], float]
        Monotonic seconds (tests pass their own).
    """

    def __init__(self, setup: ModelSetup, *, redactor: Callable[[], Redactor] = lambda: Redactor(()),
                 check_assertion: Callable[[Assertion], tuple[bool, str]] | None = None,
                 secret_names: Callable[[], set[str]] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.setup = setup
        self.options = setup.options
        self._redactor = redactor
        self.check_assertion = check_assertion
        self.secret_names = secret_names or (lambda: set())
        self.clock = clock
        self._cache: dict[tuple[str, str], tuple[float, GroundAnswer]] = {}
        self._lock = threading.Lock()
        self.rule_decisions = 0
        self.goals_passed = 0
        self.goals_judged = 0
        self.cross_checks = 0
        self.cross_disagreements = 0
        #: What using each control did in each run (fed after every step: :meth:`learn_effect`).
        self.effects = EffectBook()
        self.decider = ModelDecider(self)
        self.last_observation: Observation | None = None

    # --- shared helpers -------------------------------------------------------------
    @property
    def redactor(self) -> Redactor:
        return self._redactor().extended(self.setup.secrets)

    @property
    def clients(self) -> tuple[ModelClient, ...]:
        c = self.setup.cross_check
        return (self.setup.primary,) if c is None else (self.setup.primary, c)

    def counters(self) -> dict[str, float]:
        """Totals of every client plus the cost and judge figures (P7, P9)."""
        out: dict[str, float] = {}
        for c in self.clients:
            for k, v in c.counters.snapshot().items():
                out[k] = out.get(k, 0) + v
        out["rule_decisions"] = self.rule_decisions
        out["goals_passed"] = self.goals_passed
        out["goals_judged"] = self.goals_judged
        out["cross_checks"] = self.cross_checks
        out["cross_disagreements"] = self.cross_disagreements
        return out

    def judge_stats(self) -> tuple[float, bool]:
        """(share of goals passed by the model's judgement 0..1, alarm: share above ``judge_alarm_share``) (P7)."""
        share = self.goals_judged / self.goals_passed if self.goals_passed else 0.0
        return share, share > self.options.judge_alarm_share

    def _page_values(self, obs: Observation) -> dict[str, Any]:
        red = self.redactor
        return {"url": red.text(obs.url), "title": _data(red.text(obs.title)), "text_chars": PAGE_TEXT_CHARS,
                "page_text": _data(red.text(obs.visible_text[:PAGE_TEXT_CHARS]))}

    def _goal_text(self, step: Step, params: Mapping[str, str], flow_secrets: Sequence[str]) -> str:
        """The goal with public parameters bound and secret ones left as ``{name}`` (never sent in clear)."""
        secret = set(self.secret_names()) | set(flow_secrets)
        public = {k: v for k, v in params.items() if k not in secret}
        keep = {n: "{" + n + "}" for n in placeholders(step.goal) if n not in public}
        try:
            return bind(step.goal, {**public, **keep})
        except Exception:  # noqa: BLE001 - an unbindable goal is sent as written
            return step.goal

    def learn_effect(self, run_id: str, cand: Candidate, known: str, url: str = "") -> None:
        """Record what acting on ``cand`` did in run ``run_id`` (``"none"``, ``"wrote"`` or ``"dialog"``),
        on the page at ``url``: the guard reads it before the model's next action (:func:`needs_approval`)."""
        if known in ("none", "wrote", "dialog"):
            self.effects.learn(run_id, control_of(cand), known, url)  # type: ignore[arg-type]

    # --- R2: the SEMANTIC tie-break ------------------------------------------------------
    def tie_break(self, target: ElementDescriptor, tied: Sequence[Candidate]) -> TieChoice | None:
        """The tied candidate the model takes for ``target``; None when the model failed (the level abstains)."""
        if not self.options.tie_break or not tied:
            return None
        red = self.redactor
        ids, listing = listing_of(tied, red)
        t = target
        what = " | ".join(x for x in (t.role or t.tag, repr(red.text(t.label_text)[:60]) if t.label_text else "",
                                      f"in {red.text(t.container)[:40]!r}" if t.container else "",
                                      f"near {red.text(', '.join(t.neighbours[:3]))[:60]!r}" if t.neighbours else "")
                          if x)
        system, user = load_prompt("tiebreak", PROMPTS["tiebreak"]).render(
            {"target": _data(what), "step": "", "candidates": _data(listing)})
        try:
            ans, _ = self.setup.primary.complete_json(
                [{"role": "system", "content": system}, {"role": "user", "content": user}], TieAnswer)
        except ModelError:
            return None
        cand = ids.get(ans.element_id.strip())
        return TieChoice(cand.ref if cand is not None else "", ans.confidence, red.text(ans.reason))

    # --- P7 / P10: judge and cross-check -----------------------------------------------------
    def judge(self, client: ModelClient, goal: str, obs: Observation) -> JudgeAnswer:
        """Ask ``client`` whether ``goal`` is reached on ``obs`` (screenshot masked, page text as data).

        Raises
        ------
        ModelError
        """
        view = grounding_view(obs, redactor=self.redactor, rows=self.options.grid_rows, cols=self.options.grid_cols,
                              width=self.options.screenshot_width)
        system, user = load_prompt("judge", PROMPTS["judge"]).render({"goal": goal, **self._page_values(obs)})
        content: list[dict[str, Any]] = [text_part(user)]
        if view.png:
            content.append(image_part(view.png))
        ans, _ = client.complete_json([{"role": "system", "content": system}, {"role": "user", "content": content}],
                                      JudgeAnswer)
        return ans

    def cross_check(self, goal: str, obs: Observation) -> str:
        """"" when the cross-check model agrees the goal is reached (or none is configured), else why not (P10)."""
        client = self.setup.cross_check
        if client is None:
            return ""
        self.cross_checks += 1
        try:
            ans = self.judge(client, goal, obs)
        except ModelError as exc:
            self.cross_disagreements += 1
            return f"the cross-check model could not confirm: {exc.reason}"
        if ans.reached and ans.confidence > ACCEPT_CONFIDENCE:
            return ""
        self.cross_disagreements += 1
        return (f"the cross-check model does not confirm the goal (reached={ans.reached}, confidence "
                f"{ans.confidence:.2f}: {self.redactor.text(ans.evidence)[:80]})")

    # --- P9: cache ---------------------------------------------------------------------
    def cached(self, state: str, goal: str) -> GroundAnswer | None:
        with self._lock:
            hit = self._cache.get((state, goal))
            if hit is None:
                return None
            if self.clock() - hit[0] > self.options.cache_ttl_s:
                del self._cache[(state, goal)]
                return None
        self.setup.primary.counters.cache_hit()
        return hit[1]

    def remember(self, state: str, goal: str, answer: GroundAnswer) -> None:
        if self.options.cache_ttl_s > 0 and state:
            with self._lock:
                self._cache[(state, goal)] = (self.clock(), answer)

    def forget(self, state: str, goal: str) -> None:
        with self._lock:
            self._cache.pop((state, goal), None)


class ModelDecider:
    """The decide chain's model link: decides goal steps only (a recorded step is the flow decider's)."""

    name = "model"

    def __init__(self, agent: ModelAgent) -> None:
        self.agent = agent
        self._pending: dict[tuple[str, int], _Pending] = {}
        #: (flow, index) -> (state digest, action key) of the last action decided, to see a retry on the same page.
        self._last: dict[tuple[str, int], tuple[str, str]] = {}
        #: Decisions that wait for a person's approval: (flow, index, state digest) -> decision.
        self._awaiting: dict[tuple[str, int, str], Decision] = {}

    def decide(self, ctx: DecideContext) -> Decision | None:
        step = ctx.flow_step
        if step is None or not step.goal:
            return None
        try:
            return self._decide(ctx, step)
        except ModelError as exc:
            raise NeedsHuman(f"goal {step.goal[:60]!r}: {exc.reason}; nothing is guessed") from None

    # ------------------------------------------------------------------------------
    def _done(self, ctx: DecideContext, step: Step, why: str, *, judged: bool) -> Decision:
        a = self.agent
        if step.key or judged:
            refused = a.cross_check(a._goal_text(step, ctx.params, ctx.flow.secrets), ctx.observation)
            if refused:
                raise NeedsHuman(f"goal {step.goal[:60]!r}: {refused}")
        a.goals_passed += 1
        a.goals_judged += int(judged)
        self._pending.pop((ctx.flow.name, ctx.index), None)
        return Decision(step, "model", why, 1.0)

    def _decide(self, ctx: DecideContext, step: Step) -> Decision:
        a, obs = self.agent, ctx.observation
        a.last_observation = obs
        key = (ctx.flow.name, ctx.index)
        rounds = sum(1 for o in ctx.history if o.index == ctx.index)
        goal = a._goal_text(step, ctx.params, ctx.flow.secrets)
        state = obs.signature.digest
        # an approval is good for the very next decision only, and only when it is a retry (the person's answer)
        approved = self._awaiting.pop((ctx.flow.name, ctx.index, state), None)
        for k in [k for k in self._awaiting if k[:2] == key]:
            del self._awaiting[k]
        if approved is not None and ctx.attempt > 1:
            return approved
        if rounds == 0 and ctx.attempt == 1:  # the goal starts (again): nothing of an earlier run carries over
            self._pending.pop(key, None)
            self._last.pop(key, None)
        # 1. the assertions decide first (P7)
        if step.assertions and a.check_assertion is not None:
            results = [a.check_assertion(_bound(x, ctx.params)) for x in step.assertions]
            if all(ok for ok, _ in results):
                return self._done(ctx, step, "the goal's assertions hold", judged=False)
        elif not step.assertions and rounds:  # no assertion: the model judges, after at least one action (P7)
            ans = a.judge(a.setup.primary, goal, obs)
            if ans.reached and ans.confidence > ACCEPT_CONFIDENCE:
                return self._done(ctx, step, f"judged reached by the model: {a.redactor.text(ans.evidence)[:80]}",
                                  judged=True)
        if rounds >= GOAL_BUDGET:
            raise NeedsHuman(f"goal {step.goal[:60]!r} not reached after {GOAL_BUDGET} actions (the step's budget)")
        # 2. queued fills of the last answer (P9)
        queued = self._from_queue(ctx, key, obs, step, rounds)
        if queued is not None:
            return queued
        # 3. rules before the model (P9): the only actionable element of the page
        only = [c for c in obs.candidates if c.visible and c.enabled and not c.covered]
        if (len(only) == 1 and (only[0].descriptor.role in ("button", "link") or only[0].descriptor.tag == "button")
                and not only[0].descriptor.title and _names_goal(only[0], goal)
                and not self._approval_needed(ctx, step, only[0], "click")):
            a.rule_decisions += 1
            ans = GroundAnswer(grid="A1", element_desc=only[0].descriptor.label_text, action="click",
                               reason="the only actionable element of the page (rule, no model call)")
            return self._decision(ctx, step, rounds, only[0], ans, 1.0, "rule")
        # 4. the model, grounded (P1, P2), cached by state + goal (P9)
        last = self._last.get(key)
        # the page is where the last answer was taken (it failed, or changed nothing the state shows): ask afresh
        retry = last is not None and last[0] == state
        ans = None if retry else a.cached(state, goal)
        view = grounding_view(obs, redactor=a.redactor, rows=a.options.grid_rows, cols=a.options.grid_cols,
                              width=a.options.screenshot_width)
        if ans is None:
            if retry:
                a.forget(state, goal)
            ans = self._ask(ctx, step, goal, view, rounds, retry_of=last[1] if retry else "")
            a.remember(state, goal, ans)
        if ans.action in MODEL_ACTIONS and spec(ans.action).target in ("none", "selector"):
            return self._targetless(ctx, step, rounds, ans)  # scroll the window, wait, back: no element to ground
        grounded = rule_fallback(ans, view, intersect(ans, view))
        if not grounded.ok:
            a.forget(state, goal)
            raise NeedsHuman(f"goal {step.goal[:60]!r}: {grounded.reason}")
        if ans.action not in MODEL_ACTIONS:
            raise NeedsHuman(f"goal {step.goal[:60]!r}: the model chose {ans.action!r}, which a goal step may not do")
        if ans.confidence <= ACCEPT_CONFIDENCE and grounded.verdict != "agree":
            raise NeedsHuman(f"goal {step.goal[:60]!r}: the model is not sure ({ans.confidence:.2f}): "
                             f"{grounded.reason}")
        assert grounded.candidate is not None
        self._queue_fills(key, obs, view, ans, grounded.element_id)
        return self._decision(ctx, step, rounds, grounded.candidate, ans, grounded.confidence, grounded.reason)

    def _ask(self, ctx: DecideContext, step: Step, goal: str, view: GroundingView, rounds: int,
             retry_of: str) -> GroundAnswer:
        a = self.agent
        history = [f"{i + 1}. {a.redactor.text(o.title)} -> {o.status}"
                   for i, o in enumerate(o for o in ctx.history if o.index == ctx.index)][-10:]
        rows = a.options.grid_rows
        system, user = load_prompt("ground", PROMPTS["ground"]).render({
            "rows": rows, "cols": a.options.grid_cols, "last_row": chr(ord("A") + rows - 1),
            "actions": ", ".join(MODEL_ACTIONS), "goal": goal,
            "history": _data("\n".join(history) or "(none yet)"),
            "retry_note": ("The last action (the last of the steps listed) did not change the page; choose another "
                           "one.\n" if retry_of else ""),
            "candidates": _data(view.listing), **a._page_values(ctx.observation)})
        content: list[dict[str, Any]] = [text_part(user)]
        if view.png:
            content.append(image_part(view.png))
        ans, _ = a.setup.primary.complete_json(
            [{"role": "system", "content": system}, {"role": "user", "content": content}], GroundAnswer)
        return ans

    def _queue_fills(self, key: tuple[str, int], obs: Observation, view: GroundingView, ans: GroundAnswer,
                     first_id: str) -> None:
        fills = []
        for f in ans.fills:
            c = view.ids.get(f.element_id)
            if c is None or f.element_id == first_id or not c.editable:
                continue  # an id that is not an editable listed field is dropped, never guessed
            fills.append((f.element_id, c.descriptor, f.value))
        self._pending[key] = _Pending(obs.url, fills) if fills else _Pending(obs.url)

    def _from_queue(self, ctx: DecideContext, key: tuple[str, int], obs: Observation, step: Step,
                    rounds: int) -> Decision | None:
        p = self._pending.get(key)
        if p is None or not p.fills:
            return None
        if p.url != obs.url:
            self._pending.pop(key, None)
            return None
        _, desc, value = p.fills.pop(0)
        cand = next((c for c in obs.candidates if c.descriptor.bbox == desc.bbox and c.descriptor.label_text ==
                     desc.label_text and c.editable and c.visible), None)
        if cand is None:
            self._pending.pop(key, None)
            return None
        self.agent.setup.primary.counters.cache_hit()
        ans = GroundAnswer(grid="A1", element_desc=desc.label_text, action="input", value=value,
                           reason="batched with the previous answer")
        return self._decision(ctx, step, rounds, cand, ans, 1.0,
                              "batched fill (one answer filled several fields)")

    def _targetless(self, ctx: DecideContext, step: Step, rounds: int, ans: GroundAnswer) -> Decision:
        value = self._value(ctx, step, ans, None)
        action = Action(kind=ans.action, value=value, direction=ans.direction)  # type: ignore[arg-type]
        decided = Step(id=goal_action_id(step.id, rounds + 1), action=action,
                       name=f"{ans.action} {ans.direction if ans.action == 'scroll' else value}".strip()
                       + " (toward the goal)")
        self._last[(ctx.flow.name, ctx.index)] = (ctx.observation.signature.digest, ans.action)
        return Decision(decided, "model", self.agent.redactor.text(ans.reason)[:200], ans.confidence)

    def _value(self, ctx: DecideContext, step: Step, ans: GroundAnswer, cand: Candidate | None) -> str:
        """The value to type or choose; a secret ``{name}`` goes into a password field only, never a literal."""
        goal = step.goal
        value = ans.value if spec(ans.action).value != "none" else ""
        names = placeholders(value)
        unknown = [n for n in names if n not in ctx.params]
        if unknown:
            raise NeedsHuman(f"goal {goal[:60]!r}: the model's value names {{{unknown[0]}}}, which is no parameter "
                             "of the run")
        secret = set(self.agent.secret_names()) | set(ctx.flow.secrets)
        password = cand is not None and bool(cand.extra.get("is_password") or cand.descriptor.type == "password")
        if any(n in secret for n in names) and not password:
            raise NeedsHuman(f"goal {goal[:60]!r}: the model would type a secret into "
                             f"{(cand.descriptor.label_text if cand else 'the page')[:40]!r}, which is not a password "
                             "field: refused")
        if ans.action == "input" and password and value and not names:
            raise NeedsHuman(f"goal {goal[:60]!r}: the model typed a literal into a password field; only a "
                             "declared secret {name} may go there")
        return value

    def _decision(self, ctx: DecideContext, step: Step, rounds: int, cand: Candidate, ans: GroundAnswer,
                  confidence: float, why: str) -> Decision:
        a = self.agent
        goal = step.goal
        kind = ans.action
        value = self._value(ctx, step, ans, cand)
        why_ask = self._approval_needed(ctx, step, cand, kind)
        # irreversible (never retried blindly, S6) unless its effect is known to keep nothing, allowed or not
        writes = bool(why_ask or self._approval_needed(ctx, replace(step, allow=(), allow_irreversible=False),
                                                       cand, kind))
        action = Action(kind=kind, value=value)  # type: ignore[arg-type]
        name = f"{kind} {cand.descriptor.label_text[:40]!r} (toward the goal)"
        decided = Step(id=goal_action_id(step.id, rounds + 1), action=action, name=name,
                       target=escape_target(cand.descriptor), reversible=not writes, reversible_declared=writes)
        reason = a.redactor.text(f"{why}; {ans.reason}")[:200]
        decision = Decision(decided, "model", reason, confidence)
        state = ctx.observation.signature.digest
        self._last[(ctx.flow.name, ctx.index)] = (state, f"{kind} {cand.descriptor.label_text[:40]!r}")
        if why_ask:
            self._awaiting[(ctx.flow.name, ctx.index, state)] = decision
            role, label = cand.descriptor.role or cand.descriptor.tag, cand.descriptor.label_text[:40]
            raise NeedsApproval(f"goal {goal[:60]!r}: the model chose {kind} {label!r}, which may write data "
                                f"({why_ask}): a person approves it (answer retry to approve, or allow this "
                                f"control on the step: allow: [{{role: {role}, name: {label!r}}}])", cand, kind)
        return decision

    def _approval_needed(self, ctx: DecideContext, step: Step, cand: Candidate, kind: str) -> str:
        """Why ``kind`` on ``cand`` waits for a person ("" when it may go on): :func:`needs_approval` with what
        the run saw of the control and the step's allowances (never the goal's words)."""
        obs = ctx.observation
        known = self.agent.effects.known(ctx.run_id, control_of(cand), obs.url)
        return needs_approval(cand, kind, known=known, dialog_open=bool(obs.modal_titles),
                              allowed=is_allowed(cand, step.allow), allow_all=step.allow_irreversible)


def _bound(assertion: Assertion, params: Mapping[str, str]) -> Assertion:
    """The assertion with its ``{name}`` placeholders bound (an unbindable one is checked as written)."""
    try:
        return Assertion(assertion.kind, bind(assertion.expected, params), bind(assertion.selector, params))
    except Exception:  # noqa: BLE001
        return assertion


def _names_goal(cand: Candidate, goal: str) -> bool:
    """True when the element's name shares a word (3+ letters) with the goal: the rule "the only actionable
    element" is used only when that element is plainly what the goal asks for (P9: rules for trivial actions)."""
    words = {w for w in re.findall(r"[a-z]{3,}", (cand.descriptor.label_text or "").lower())}
    return bool(words & set(re.findall(r"[a-z]{3,}", goal.lower())))
