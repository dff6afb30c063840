"""Skills at run time (K6) on the fake driver and a real SQLite store: retrieval, triggers, limits, safety.

The page is scripted (:mod:`core.perception.fake`); the skill library is
the store's real ``skills`` / ``skill_uses`` tables.
"""
from __future__ import annotations

from typing import Any, Sequence

import pytest

from core.domain import Action, ElementDescriptor, EngineSettings, Flow, Observation, Step, WaitSettings
from core.domain.skill import (
    ElementCondition, Skill, SkillAction, SkillProvenance, SkillScope, SkillTrigger, VerifyRule,
)
from core.engine.events import EscalationRaised, SkillConsidered, SkillFinished, SkillFired, StepFinished
from core.engine.executor import FlowExecutor
from core.engine.skilled import skill_decider, skill_line
from core.perception.driver import ActionError
from core.perception.fake import FakeDriver, FakePage, navigate
from core.skills.runtime import guarded_control, retrieve, similarity, task_type_of
from core.store import Store
from core.store.skills import SkillTable
from event_log import EventLog

PRODUCT = "shop"


@pytest.fixture
def store(tmp_path):
    s = Store.open(tmp_path / "store.sqlite")
    yield s
    s.close()


def button(element_id: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"id": element_id, "role": "button", "text": text, **extra}


def cond(name: str, role: str = "button", **kw: Any) -> ElementCondition:
    return ElementCondition(role=role, name=name, **kw)


def act(name: str, kind: str = "click", role: str = "button", value: str = "") -> SkillAction:
    return SkillAction(Action(kind, value), ElementDescriptor(role=role, name=name))


def skill(sid: str, *, required: Sequence[ElementCondition] = (), actions: Sequence[SkillAction] = (),
          kind: str = "do", **kw: Any) -> Skill:
    trig = kw.pop("trigger", None) or SkillTrigger(required=tuple(required))
    return Skill(id=sid, description=kw.pop("description", f"skill {sid}"), trigger=trig, actions=tuple(actions),
                 kind=kind, scope=kw.pop("scope", SkillScope(product=PRODUCT)), state=kw.pop("state", "approved"),
                 quality=kw.pop("quality", 0.5), **kw)  # type: ignore[arg-type]


ACCEPT = skill("sk-000000000001", description="accept the cookie banner", required=[cond("Accept cookies")],
               actions=[act("Accept cookies")], verify=(VerifyRule("absent", cond("Accept cookies")),))


def covered_continue(d: FakeDriver, el: Any, value: str) -> None:
    if any(e["id"] == "accept" for e in d.elements):
        raise ActionError("click failed: element is covered by 'Cookie consent'")
    d.goto("/next")


def remove(element_id: str):
    def react(d: FakeDriver, el: Any, value: str) -> None:
        d.elements[:] = [e for e in d.elements if e["id"] != element_id]
        for e in d.elements:  # the banner gone, nothing covers the page any more
            e["covered"] = False
        d.mutations += 1
    return react


def banner_site(*extra: dict[str, Any], reactions: dict | None = None) -> FakeDriver:
    return FakeDriver(  # the banner covers "Continue" (its centre point is the banner's)
        pages={"/": FakePage([button("go", "Continue", covered=True), button("accept", "Accept cookies"), *extra],
                             title="Shop", text="We use cookies"),
               "/next": FakePage([button("done", "Done")], title="Next", text="Thanks")},
        reactions={("/", "go", "click"): covered_continue, ("/", "accept", "click"): remove("accept"),
                   **(reactions or {})})


CONTINUE = Step(id="s1", action=Action("click"), target=ElementDescriptor(tag="button", role="button",
                                                                           name="Continue", text="Continue"))


def run(fake: FakeDriver, store: Store, steps: Sequence[Step] = (CONTINUE,), *, name: str = "checkout",
        with_skills: bool = True, clock: Any = None):
    log = EventLog()
    dec = skill_decider(store, PRODUCT, log) if with_skills else None
    if dec is not None and clock is not None:
        dec.clock = clock
    ex = FlowExecutor(fake, emit=log, store=store, screenshots=False, project_name=PRODUCT,
                      settings=EngineSettings(waits=WaitSettings(retries=1, retry_delay_ms=0)),
                      deciders=(dec,) if dec is not None else ())
    result = ex.run_flow(Flow(name, "/", tuple(steps)), params={})
    ex.finish(result)
    return result, log, dec


def clicks(fake: FakeDriver) -> list[str]:
    return [a.element for a in fake.actions if a.kind == "click"]


# --- the loop: fire, do not consume the flow step, fall back -----------------------------------


def test_without_a_skill_the_covered_button_escalates(store) -> None:
    fake = banner_site()
    result, log, dec = run(fake, store, with_skills=False)
    assert result.status == "escalated" and dec is None
    assert "accept" not in clicks(fake)


def test_an_approved_skill_accepts_the_banner_then_the_flow_step_runs_at_the_same_index(store) -> None:
    table = SkillTable(store)
    table.put(ACCEPT)
    fake = banner_site()
    result, log, _ = run(fake, store)
    assert result.status == "passed", result.error
    assert clicks(fake) == ["accept", "go"]
    first, second = result.steps
    assert (first.index, first.source, first.status) == (0, "skill", "passed")
    assert first.step_id == "s1+sk-000000000001.1"
    assert (second.index, second.source, second.step_id, second.status) == (0, "flow", "s1", "passed")
    (fired,) = log.of(SkillFired)
    assert (fired.index, fired.action_index, fired.actions) == (0, 0, 1)
    (done,) = log.of(SkillFinished)
    assert done.outcome == "passed" and "verify rules hold" in done.reason and done.ms >= 0
    assert [e.source for e in log.of(StepFinished)] == ["skill", "flow"]
    (use,) = table.uses(skill_id=ACCEPT.id)
    assert use.outcome == "passed" and use.run_id == result.run_id and use.step_id == "s1"
    again = table.get(ACCEPT.id)
    assert again.successes == 1 and again.quality == pytest.approx(0.6)
    # the store keeps the flow step's record at index 0 (the skill's is its own outcome, not an overwrite)
    (row,) = store.run_detail(result.run_id).steps
    assert (row.index, row.step_id, row.status) == (0, "s1", "passed")
    # R1: the step's baseline is the screen the flow step acted on (after the skill), not the banner's
    base = store.load_baselines("checkout")["s1"].fingerprint
    assert base.elements and not any("Accept cookies" in repr(e) for e in base.elements)
    assert any("Continue" in repr(e) for e in base.elements)
    from core.engine.report import FlowStats

    stats = FlowStats("checkout")
    stats.add(result)
    assert (stats.steps_passed, stats.steps_total, stats.steps) == (1, 1, 2)  # one flow step, two actions
    line = skill_line(done)
    assert line is not None and "skill sk-000000000001 passed" in line and "step 1" in line


def test_a_skill_action_that_fails_falls_back_to_the_chain_and_counts_a_failure(store) -> None:
    table = SkillTable(store)
    table.put(skill("sk-000000000002", required=[cond("Accept cookies")],
                    actions=[act("Accept cookies"), act("Close banner")]))  # its 2nd target is not on the page
    fake = banner_site()
    result, log, _ = run(fake, store)
    assert result.status == "passed", result.error  # the first action removed the banner; the flow step ran
    skipped = [o for o in result.steps if o.source == "skill" and o.status == "skipped"]
    assert len(skipped) == 1 and "the skill gave up" in skipped[0].error
    (done,) = log.of(SkillFinished)
    assert done.outcome == "failed" and "action 2 of 2" in done.reason
    s = table.get("sk-000000000002")
    assert s.failures == 1 and s.quality == pytest.approx(0.0)
    assert not log.of(EscalationRaised)


def test_a_failed_precondition_is_a_negative_sample(store) -> None:
    table = SkillTable(store)
    # the verify rule cannot hold (the banner text stays): a precondition outcome, quality -0.5
    table.put(skill("sk-000000000003", required=[cond("Accept cookies")], actions=[act("Accept cookies")],
                    verify=(VerifyRule("present", cond("Cookie settings saved")),), quality=0.8))
    result, log, _ = run(banner_site(), store)
    assert result.status == "passed"
    (done,) = log.of(SkillFinished)
    assert done.outcome == "precondition" and "verify rules do not hold" in done.reason
    s = table.get("sk-000000000003")
    assert s.failures == 1 and s.quality == pytest.approx(0.3)


def test_a_disabled_target_is_a_failed_precondition(store) -> None:
    table = SkillTable(store)
    table.put(skill("sk-000000000004", required=[cond("Accept cookies")], actions=[act("Remind me later")]))
    fake = banner_site(button("later", "Remind me later", enabled=False))
    result, log, _ = run(fake, store)
    (done,) = log.of(SkillFinished)
    assert done.outcome == "precondition", done.reason
    assert "later" not in clicks(fake)


# --- the safety bar ---------------------------------------------------------------------------


def test_a_half_holding_trigger_never_fires_and_is_recorded_once(store) -> None:
    table = SkillTable(store)
    half = skill("sk-000000000005", trigger=SkillTrigger(required=(cond("Accept cookies"),), dialog=True),
                 actions=[act("Accept cookies")])
    table.put(half)
    fake = banner_site()
    result, log, _ = run(fake, store)
    assert result.status == "escalated"
    assert "accept" not in clicks(fake)
    considered = [e for e in log.of(SkillConsidered) if e.skill_id == half.id]
    assert considered and all(e.half and not e.holds for e in considered)
    assert len(considered) >= 2  # considered at each attempt, recorded once
    assert [u.outcome for u in table.uses(skill_id=half.id)] == ["half"]
    assert not log.of(SkillFired)


def test_a_half_holding_trigger_with_no_element_present_is_not_recorded(store) -> None:
    table = SkillTable(store)
    table.put(skill("sk-000000000006", trigger=SkillTrigger(required=(cond("Reject all"),), title="Shop"),
                    actions=[act("Reject all")]))
    run(banner_site(), store)
    assert table.uses(skill_id="sk-000000000006") == []


def test_a_skill_that_would_press_delete_its_trigger_does_not_name_is_refused(store) -> None:
    table = SkillTable(store)
    bad = skill("sk-000000000007", required=[cond("Accept cookies")], actions=[act("Delete account")])
    table.put(bad)
    fake = banner_site(button("del", "Delete account"))
    result, log, _ = run(fake, store)
    assert "del" not in clicks(fake) and not log.of(SkillFired)
    assert any("refused" in e.reason and "Delete account" in e.reason for e in log.of(SkillConsidered))
    (use,) = table.uses(skill_id=bad.id)  # refused once a run, not at every attempt
    assert use.outcome == "failed" and "trigger does not name" in use.reason


def test_a_target_that_turns_out_to_delete_is_refused_live(store) -> None:
    """The skill says 'Dismiss'; the element with that name carries the title 'Delete draft'."""
    table = SkillTable(store)
    table.put(skill("sk-000000000008", required=[cond("Accept cookies")], actions=[act("Dismiss")]))
    fake = banner_site(button("dis", "Dismiss", title="Delete draft"))
    result, log, _ = run(fake, store)
    assert "dis" not in clicks(fake)
    (done,) = log.of(SkillFinished)
    assert done.outcome == "failed" and "refused" in done.reason and "trigger does not name it" in done.reason


def test_a_named_confirming_control_may_be_pressed(store) -> None:
    assert guarded_control(_cand("Accept cookies"), "click")
    assert guarded_control(_cand("Delete"), "click")
    assert guarded_control(_cand("🗑"), "click")
    assert guarded_control(_cand("Go", type="submit"), "click")
    assert not guarded_control(_cand("Close"), "click")
    # every kind with a target goes through the same guard (hover opens menus, check / select / input write)
    for kind in ("hover", "check", "uncheck", "select", "input", "dblclick", "press"):
        assert guarded_control(_cand("Delete"), kind), kind
    assert not guarded_control(_cand("Close"), "check")


def _cand(name: str, **kw: Any):
    from core.domain import Candidate

    return Candidate("e1", ElementDescriptor(role="button", name=name, text=name, **kw))


def test_an_irreversible_step_is_acted_on_only_by_a_skill_approved_for_exactly_it(store) -> None:
    table = SkillTable(store)
    table.put(ACCEPT)
    irreversible = Step(id="s1", action=Action("click"), reversible=False,
                        target=ElementDescriptor(tag="button", role="button", name="Continue", text="Continue"))
    fake = banner_site()
    result, log, _ = run(fake, store, (irreversible,))
    assert "accept" not in clicks(fake) and result.status == "escalated"
    assert any("irreversible" in e.reason for e in log.of(SkillConsidered))
    approved = skill("sk-000000000009", required=[cond("Accept cookies")], actions=[act("Accept cookies")],
                     irreversible_ok=True, provenance=SkillProvenance(flow="checkout", step_ids=("s1",)))
    table.put(approved)
    other_flow = skill("sk-00000000000a", required=[cond("Accept cookies")], actions=[act("Accept cookies")],
                       irreversible_ok=True, provenance=SkillProvenance(flow="other", step_ids=("s1",)))
    table.put(other_flow)
    fake = banner_site()
    result, log, _ = run(fake, store, (irreversible,))
    assert result.status == "passed", result.error
    assert [e.skill_id for e in log.of(SkillFired)] == [approved.id]


def test_a_retired_skill_stops_firing_at_the_next_decision(store) -> None:
    table = SkillTable(store)
    two = skill("sk-00000000000b", required=[cond("Accept cookies")],
                actions=[act("Accept cookies"), act("Continue")])

    def accept_then_retire(d: FakeDriver, el: Any, value: str) -> None:
        remove("accept")(d, el, value)
        table.set_state(two.id, "retired", reason="steers wrong")  # a person retires it mid-run

    table.put(two)
    fake = banner_site(reactions={("/", "accept", "click"): accept_then_retire})
    result, log, _ = run(fake, store)
    assert result.status == "passed"
    assert clicks(fake) == ["accept", "go"]  # its second action never ran; the flow step did
    (done,) = log.of(SkillFinished)
    assert done.outcome == "failed" and "retired" in done.reason
    # the next run: not registered at all (no approved skill left), nothing fires
    fake = banner_site()
    result, log, dec = run(fake, store)
    assert dec is None and "accept" not in clicks(fake)


def test_a_skill_fires_once_a_step_a_second_hold_is_a_loop(store) -> None:
    from core.perception.fake import change_text

    table = SkillTable(store)
    sticky = skill("sk-00000000000c", required=[cond("Accept cookies")], actions=[act("Accept cookies")])
    table.put(sticky)
    # its click changes the page (the use passes: it has no verify rule) but the banner stays
    fake = banner_site(reactions={("/", "accept", "click"): change_text("Preferences noted")})
    result, log, _ = run(fake, store)
    assert clicks(fake).count("accept") == 1
    assert result.status == "escalated"
    uses = table.uses(skill_id=sticky.id)[::-1]  # oldest first
    assert [u.outcome for u in uses] == ["passed", "failed"]  # it passed; the trouble came back: a loop
    assert "loop" in uses[1].reason
    assert any("loop" in e.reason and not e.half for e in log.of(SkillConsidered))


def test_a_failed_use_is_counted_once_though_its_trigger_still_holds(store) -> None:
    table = SkillTable(store)
    table.put(ACCEPT)
    fake = banner_site(reactions={("/", "accept", "click"): lambda d, el, v: None})  # the click does nothing
    result, log, _ = run(fake, store)
    assert clicks(fake).count("accept") == 1 and result.status == "escalated"
    assert [u.outcome for u in table.uses(skill_id=ACCEPT.id)] == ["failed"]


def test_step_and_time_limits(store) -> None:
    table = SkillTable(store)
    table.put(skill("sk-00000000000d", required=[cond("Accept cookies")],
                    actions=[act("Accept cookies"), act("Continue")], max_steps=1))
    result, log, _ = run(banner_site(), store)
    (done,) = log.of(SkillFinished)
    assert done.outcome == "failed" and "step limit" in done.reason
    table.delete("sk-00000000000d")
    table.put(skill("sk-00000000000e", required=[cond("Accept cookies")],
                    actions=[act("Accept cookies"), act("Continue")], max_ms=1000))
    t = iter([0.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0])
    result, log, _ = run(banner_site(), store, clock=lambda: next(t, 5.0))
    (done,) = log.of(SkillFinished)
    assert done.outcome == "failed" and "time limit" in done.reason


def test_a_deny_rule_keeps_every_decider_off_its_element(store) -> None:
    table = SkillTable(store)
    deny = skill("sk-00000000000f", kind="deny", trigger=SkillTrigger(required=(cond("Delete account"),),
                                                                       title="Shop"),
                 actions=[act("Delete account")], description="never delete the account from the banner")
    table.put(deny)
    fake = FakeDriver(pages={"/": FakePage([button("del", "Delete account")], title="Shop"),
                             "/gone": FakePage([], title="Gone")},
                      reactions={("/", "del", "click"): navigate("/gone")})
    step = Step(id="s1", action=Action("click"), target=ElementDescriptor(role="button", name="Delete account",
                                                                          text="Delete account"))
    result, log, _ = run(fake, store, (step,))
    assert result.status == "escalated" and clicks(fake) == []
    (esc,) = log.of(EscalationRaised)
    assert esc.reason.startswith("denied by skill sk-00000000000f")
    assert esc.kind == "precondition" and "use_candidate" not in esc.answers  # no use-once offer of it
    assert esc.plain.startswith("'Delete account' was found but cannot be used now: denied by skill")
    assert [u.outcome for u in table.uses(skill_id=deny.id)] == ["denied"]
    assert any(e.outcome == "denied" for e in log.of(SkillFinished))


# --- retrieval ----------------------------------------------------------------------------------


def _obs(url: str = "http://x.test/shop/cart", title: str = "Cart", names: Sequence[str] = ()) -> Observation:
    fake = FakeDriver(pages={"/p": FakePage([button(f"b{i}", n) for i, n in enumerate(names)], title=title)})
    fake.goto("/p")
    o = fake.observe(screenshot=False)
    from dataclasses import replace

    return replace(o, url=url)


def test_task_type_from_the_flow_name_description_or_an_upload_step() -> None:
    assert task_type_of(Flow("sign_in", "/", ())) == "login"
    assert task_type_of(Flow("f", "/", (), description="Export the monthly report")) == "export"
    assert task_type_of(Flow("loginventory", "/", ())) == ""  # whole words only
    up = Step(id="u", action=Action("upload", "a.txt"))
    assert task_type_of(Flow("f", "/", (up,)), up) == "upload"


def test_rule_channel_then_top_three_by_similarity() -> None:
    obs = _obs(names=("Accept cookies", "Continue"))
    login = skill("sk-1", scope=SkillScope(product=PRODUCT, task_type="login"), required=[cond("Nope")],
                  actions=[act("x")])
    export = skill("sk-2", scope=SkillScope(product=PRODUCT, task_type="export"), required=[cond("Accept cookies")],
                   actions=[act("x")])
    near = [skill(f"sk-n{i}", required=[cond("Accept cookies")], actions=[act("x")], quality=q)
            for i, q in enumerate((0.2, 0.9, 0.5, 0.7))]
    elsewhere = skill("sk-e", scope=SkillScope(product=PRODUCT, url_prefix="/admin"),
                      required=[cond("Accept cookies")], actions=[act("x")])
    absent = skill("sk-a", required=[cond("Missing")], actions=[act("x")])
    got = retrieve([login, export, *near, elsewhere, absent], task_type="login", obs=obs)
    assert [s.id for s in got] == ["sk-1", "sk-n1", "sk-n3", "sk-n2"]
    assert similarity(elsewhere, obs) == 0.0
    assert similarity(skill("sk-p", scope=SkillScope(product=PRODUCT, url_prefix="/shop"),
                            required=[cond("Accept cookies")], actions=[act("x")]), obs) == 1.0


def test_the_page_index_ranks_like_the_exact_match_it_stands_for() -> None:
    from core.skills.runtime import PageIndex
    from core.skills.trigger import find

    obs = _obs(names=("Accept cookies", "Continue", "Delete draft", "?"))
    page = PageIndex(obs)
    for c in (cond("Accept cookies"), cond("accept   COOKIES!"), cond("Continue", role="link"), cond("Nope"),
              cond("?"), cond("!"), ElementCondition(text="Delete draft"), ElementCondition()):
        assert page.maybe(c) == bool(find(c, obs, usable=False)), c


def test_an_edit_or_retire_from_another_connection_is_read_at_the_next_decision(store, tmp_path) -> None:
    from dataclasses import replace

    table = SkillTable(store)
    table.put(ACCEPT)
    other = Store.open(tmp_path / "store.sqlite")  # the studio or the command line, another connection
    try:
        dec = skill_decider(store, PRODUCT, EventLog())
        assert [s.description for s in dec.approved()] == ["accept the cookie banner"]
        SkillTable(other).put(replace(ACCEPT, description="accept the consent banner"), replace_approved=True)
        assert [s.description for s in dec.approved()] == ["accept the consent banner"]
        SkillTable(other).set_state(ACCEPT.id, "retired", reason="gone")
        assert dec.approved() == []
    finally:
        other.close()


def test_a_deny_rule_holds_a_skill_back_too_and_the_skill_falls_back(store) -> None:
    table = SkillTable(store)
    table.put(ACCEPT)
    table.put(skill("sk-000000000010", kind="deny", trigger=SkillTrigger(title="Shop"),
                    actions=[act("Accept cookies")], description="accepting cookies here is not ours to do"))
    fake = banner_site()
    result, log, _ = run(fake, store)
    assert "accept" not in clicks(fake)
    assert result.status == "escalated"  # the flow step then meets the banner and a person is asked
    by_skill = {e.skill_id: e for e in log.of(SkillFinished)}
    assert by_skill["sk-000000000010"].outcome == "denied"
    assert by_skill[ACCEPT.id].outcome == "failed" and "denied by skill sk-000000000010" in by_skill[ACCEPT.id].reason
    assert table.get(ACCEPT.id).failures == 1


def test_a_skill_never_types_a_secret_and_its_refusal_carries_none(store) -> None:
    """A skill naming a declared secret ({code}) is refused before it fires: the field is never typed into."""
    secret = "pa" + "ss-9f3k"  # a made-up value, never a real credential
    table = SkillTable(store)
    table.put(skill("sk-000000000011", required=[cond("Accept cookies")],
                    actions=[act("Accept cookies"), act("Code", kind="input", role="textbox", value="{code}")],
                    description="accept, then type the code"))
    fake = banner_site({"id": "code", "role": "textbox", "label": "Code", "name": "Code"})
    log = EventLog()
    dec = skill_decider(store, PRODUCT, log)
    ex = FlowExecutor(fake, emit=log, store=store, screenshots=False, project_name=PRODUCT,
                      settings=EngineSettings(waits=WaitSettings(retries=1, retry_delay_ms=0)), deciders=(dec,))
    flow = Flow("checkout", "/", (CONTINUE,), secrets=("code",))
    result = ex.run_flow(flow, params={"code": secret})
    assert not [a for a in fake.actions if a.element == "code"] and "accept" not in clicks(fake)
    assert result.status == "escalated" and not log.of(SkillFired)
    (use,) = table.uses(skill_id="sk-000000000011")
    assert use.outcome == "failed" and "never types a secret" in use.reason and "{code}" in use.reason
    # a project secret (not the flow's own) is refused the same way
    dec = skill_decider(store, PRODUCT, log, secrets=("code",))
    assert dec is not None
    assert "never types a secret" in dec._unsafe(table.get("sk-000000000011"), CONTINUE, {"code": secret})
    assert all(secret not in repr(e) for e in log.events if not hasattr(e, "observation"))
    assert all(secret not in (u.reason + u.step_id) for u in table.uses())
    assert all(secret not in o.title + o.error for o in result.steps)


def test_a_skill_that_would_navigate_away_is_refused(store) -> None:
    table = SkillTable(store)
    table.put(skill("sk-000000000012", required=[cond("Accept cookies")],
                    actions=[SkillAction(Action("navigate", "http://elsewhere.test/"))]))
    fake = banner_site()
    run(fake, store)
    assert fake.visits == ["/"]
    (use,) = table.uses(skill_id="sk-000000000012")
    assert use.outcome == "failed" and "navigate" in use.reason


# --- the flow step first; the guard names by the very words; quality holds ---------------------


def test_a_skill_waits_while_the_flow_steps_target_is_usable_and_fires_once_it_is_covered(store) -> None:
    table = SkillTable(store)
    table.put(ACCEPT)
    fake = FakeDriver(pages={"/": FakePage([button("go", "Continue"), button("accept", "Accept cookies")],
                                           title="Shop")},
                      reactions={("/", "go", "click"): navigate("/next")})
    fake.pages["/next"] = FakePage([button("done", "Done")], title="Next")
    result, log, _ = run(fake, store)
    assert result.status == "passed" and clicks(fake) == ["go"] and not log.of(SkillFired)
    assert any("present and usable" in e.reason for e in log.of(SkillConsidered))
    # a goal step keeps the old behaviour: the model's step has no recorded target to go first
    goal = Step(id="s1", action=Action("assert"), goal="reach the next page")
    fake = banner_site()
    result, log, _ = run(fake, store, (goal,))
    assert clicks(fake)[:1] == ["accept"]


def test_the_trigger_must_name_a_destructive_control_by_the_words_that_make_it_destructive() -> None:
    from core.domain import Candidate
    from core.skills.runtime import guard_problem

    tips = Candidate("e1", ElementDescriptor(role="button", name="Tips", text="Yes, delete all"))
    assert "'Yes, delete all'" in guard_problem(tips, "click", named=[cond("Tips")])
    assert guard_problem(tips, "click", named=[ElementCondition(role="button", text="Yes, delete all")]) == ""
    # a guarded word in a text no condition can name (a title, the value, a live description) never passes
    titled = Candidate("e2", ElementDescriptor(role="button", name="Dismiss", text="Dismiss", title="Delete draft"))
    assert "title 'Delete draft'" in guard_problem(titled, "click", named=[cond("Dismiss")])
    plain = Candidate("e3", ElementDescriptor(role="button", name="Later", text="Later"))
    assert "aria-description" in guard_problem(plain, "click", named=[cond("Later")],
                                               live={"aria-description": "Removes your card"})
    # the option being selected counts as the element's own words
    sel = Candidate("e4", ElementDescriptor(role="combobox", label="Saved addresses"))
    assert "selecting 'Delete all saved addresses'" in guard_problem(sel, "select", value="Delete all saved addresses")
    assert guard_problem(sel, "select", value="Keep them") == ""


def test_a_skill_below_the_review_quality_stops_firing_and_says_why(store) -> None:
    table = SkillTable(store)
    table.put(skill("sk-000000000020", required=[cond("Accept cookies")], actions=[act("Accept cookies")],
                    quality=0.2))
    fake = banner_site()
    result, log, _ = run(fake, store)
    assert "accept" not in clicks(fake) and not log.of(SkillFired)
    (use,) = table.uses(skill_id="sk-000000000020")
    assert use.outcome == "precondition" and "below the review threshold 0.30" in use.reason
    assert "approves it anew" in use.reason
    assert table.get("sk-000000000020").failures == 0  # held, not counted against it again


def test_a_skill_stands_aside_where_a_later_step_of_the_flow_answers_the_same_dialog(store) -> None:
    SkillTable(store).put(ACCEPT)
    fake = FakeDriver(
        pages={"/": FakePage([button("go", "Continue", covered=True),
                              button("accept", "Accept cookies", container="Cookie consent"),
                              button("reject", "Reject cookies", container="Cookie consent")], title="Shop")},
        reactions={("/", "go", "click"): covered_continue, ("/", "accept", "click"): remove("accept")})
    reject = Step(id="s2", action=Action("click"), target=ElementDescriptor(tag="button", role="button",
                                                                             name="Reject cookies"))
    result, log, _ = run(fake, store, (CONTINUE, reject))
    assert "accept" not in clicks(fake)  # the flow answers this banner itself, later, and otherwise
    assert result.status != "passed" and not [f for f in log.of(SkillFinished) if f.outcome == "passed"]


def test_a_skill_never_types_words_that_confirm_or_delete() -> None:
    from core.skills.runtime import guard_problem

    from core.domain import Candidate

    note = Candidate("e2", ElementDescriptor(role="textbox", name="Note", label="Note"), editable=True)
    assert "typing 'delete'" in guard_problem(note, "input", value="delete", named=[cond("Note", role="textbox")])
    assert guard_problem(note, "input", value="Alice Martin", named=[cond("Note", role="textbox")]) == ""
    assert guarded_control(_cand("Clear them all"), "click")  # clearing destroys, like deleting
