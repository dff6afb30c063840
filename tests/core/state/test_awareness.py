"""State awareness (S2, S3): heavy signatures at key points, the ring buffer, belief and evidence rules."""
from __future__ import annotations

from core.act.precheck import precheck
from core.domain import BBox, Candidate, ElementDescriptor, Observation, StateSignature
from core.domain.belief import Belief
from core.recover.waits import WaitLearner
from core.state.awareness import RING_SIZE, ActionNote, StateAwareness, derive_belief, heavy_signature, is_submit


def cand(ref: str, role: str, name: str, *, tag: str = "", enabled: bool = True, value: str = "",
         editable: bool = False, required: bool = False, container: str = "New request", type_: str = "",
         x: float = 100, y: float = 100) -> Candidate:
    d = ElementDescriptor(tag=tag or ("button" if role == "button" else "input"), role=role, name=name, label=name,
                          text=name if role == "button" else "", container=container, type=type_,
                          bbox=BBox(x, y, 100, 30))
    return Candidate(ref, d, enabled=enabled, editable=editable, value=value, extra={"required": required})


def obs(cands: tuple[Candidate, ...] = (), *, digest: str = "d1", loading: tuple[str, ...] = (),
        modals: tuple[str, ...] = (), errors: int = 0, url: str = "http://127.0.0.1/requests/new") -> Observation:
    sig = StateSignature(url, "New request", len(cands), len(modals), "t", "e", "v", bool(loading), errors, "",
                         digest)
    return Observation(url, "New request", (1280, 800), 1.0, (0, 0), cands, "", sig, modal_titles=modals,
                       loading=loading)


FORM = (cand("0:1", "textbox", "Reason", editable=True, required=True),
        cand("0:2", "textbox", "Start date", editable=True, required=True, value="2026-03-16"),
        cand("0:3", "button", "Submit", enabled=False, type_="submit"))


def test_disabled_submit_is_explained_by_the_empty_required_field():
    b = derive_belief(obs(FORM))
    assert b.state == "incomplete"
    assert b.evidence[0] == "Submit is disabled because Reason is empty"
    assert b.confidence == 0.85
    assert b.why_blocked("0:3") == "Submit is disabled because Reason is empty"
    assert b.why_blocked("0:1") == ""


def test_without_required_attributes_the_explanation_is_a_weaker_guess():
    form = (cand("0:1", "textbox", "Reason", editable=True), cand("0:3", "button", "Save", enabled=False))
    b = derive_belief(obs(form))
    assert b.state == "incomplete" and b.confidence == 0.55
    assert b.evidence[0] == "Save is disabled; Reason is still empty"


def test_fields_of_another_form_do_not_explain_a_disabled_button():
    form = (cand("0:1", "textbox", "Search", editable=True, required=True, container="Filter"),
            cand("0:3", "button", "Save", enabled=False, container="Report"))
    b = derive_belief(obs(form))
    assert b.state == "ready" and b.why_blocked("0:3") == ""


def test_a_spinner_after_a_submit_is_waiting_for_the_server_and_without_one_only_loading():
    spinning = obs(FORM, loading=('aria-busy="true" on form#new',), digest="d2")
    after_submit = derive_belief(spinning, action=ActionNote("click", "Submit", submit=True))
    assert after_submit.state == "waiting_server" and after_submit.confidence == 0.9
    assert after_submit.evidence[0] == "a spinner after 'Submit': waiting for the server (aria-busy=\"true\" on form#new)"
    plain = derive_belief(spinning)
    assert plain.state == "loading" and plain.confidence == 0.7


def test_dialog_errors_and_stuck_rules():
    assert derive_belief(obs(modals=("Export report",))).evidence[0] == \
        "dialog 'Export report' is open: only its controls are reachable"
    assert derive_belief(obs(errors=2)).evidence[0] == "2 validation messages are shown"
    aw = StateAwareness()
    aw.note(obs(digest="a"), index=0, moment="before")
    e = aw.note(obs(digest="a"), index=0, moment="after", action=ActionNote("click", "Menu"))
    assert e.belief.state == "stuck" and e.belief.evidence[0] == "the last action (click 'Menu') changed nothing"
    # a toggle: A -> B -> A
    aw = StateAwareness()
    aw.note(obs(digest="a"), index=0, moment="before")
    aw.note(obs(digest="b"), index=0, moment="after", action=ActionNote("click", "Menu"))
    aw.note(obs(digest="b"), index=1, moment="before")
    e = aw.note(obs(digest="a"), index=1, moment="after", action=ActionNote("click", "Menu"))
    assert e.belief.state == "stuck" and "two actions ago" in e.belief.evidence[0]


def test_a_belief_seen_again_gains_confidence_up_to_the_cap():
    aw = StateAwareness()
    confs = [aw.note(obs(FORM, digest=f"d{i}"), index=i, moment="before").belief.confidence for i in range(5)]
    assert confs == [0.85, 0.9, 0.95, 0.99, 0.99]


def test_ring_buffer_keeps_the_last_30_states_and_heavy_signatures_only_at_key_points():
    aw = StateAwareness()
    first = aw.note(obs(digest="s0"), index=-1, moment="before")
    assert first.key_point == "run start" and first.heavy is not None
    light = aw.note(obs(digest="s1"), index=0, moment="before")
    assert light.key_point == "" and light.heavy is None
    opened = aw.note(obs(digest="s2", modals=("Export report",)), index=0, moment="after",
                     action=ActionNote("click", "Export report"))
    assert opened.key_point == "dialog opened: Export report" and opened.heavy is not None
    closed = aw.note(obs(digest="s3"), index=1, moment="after", action=ActionNote("click", "Cancel"))
    assert closed.key_point == "dialog closed" and closed.heavy is not None
    before = aw.note(obs(FORM, digest="s4"), index=2, moment="before", submit_next=True)
    assert before.key_point == "before submit" and before.heavy is not None
    after = aw.note(obs(digest="s5", loading=("spinner",)), index=2, moment="after",
                    action=ActionNote("click", "Submit", submit=True))
    assert after.key_point == "after submit" and after.belief.state == "waiting_server"
    for i in range(40):
        aw.note(obs(digest=f"x{i}"), index=3 + i, moment="before")
    assert len(aw.ring) == RING_SIZE == 30
    assert [e.digest for e in aw.recent(2)] == ["x38", "x39"]
    assert aw.ring[0].seq == 17  # 46 noted, the first 16 forgotten


def test_mark_submit_gives_the_latest_state_its_heavy_signature():
    aw = StateAwareness()
    aw.note(obs(digest="s0"), index=-1, moment="before")
    aw.note(obs(FORM, digest="s1"), index=0, moment="before")
    e = aw.mark_submit(obs(FORM, digest="s1"))
    assert e is not None and e.key_point == "before submit" and e.heavy is not None and aw.last is e


def test_heavy_signature_is_insensitive_to_small_shifts_and_sees_a_moved_control():
    a = heavy_signature(obs((cand("0:1", "button", "Save", x=100, y=100),)))
    b = heavy_signature(obs((cand("0:1", "button", "Save", x=102, y=101),)))
    c = heavy_signature(obs((cand("0:1", "button", "Save", x=600, y=100),)))
    assert a.digest == b.digest != c.digest
    assert a.elements[0][0] == "button" and a.disabled == 0


def test_is_submit():
    assert is_submit("click", FORM[2])
    assert is_submit("click", cand("0:9", "button", "Delete request"))
    assert not is_submit("click", cand("0:9", "button", "Next month"))
    assert is_submit("input", None, reversible=False)
    assert not is_submit("input", FORM[0])


def test_precheck_explains_a_refusal_with_the_belief_and_refuses_while_the_server_works():
    b = derive_belief(obs(FORM))
    assert precheck("click", FORM[2], b) == "target is disabled: Submit is disabled because Reason is empty"
    assert precheck("click", FORM[2]) == "target is disabled"
    waiting = Belief("waiting_server", 0.9, ("a spinner after 'Submit': waiting for the server (spinner)",))
    ok = cand("0:4", "button", "Submit")
    assert precheck("click", ok, waiting) == \
        "the page is waiting for the server (a spinner after 'Submit': waiting for the server (spinner))"
    assert precheck("click", ok, Belief("ready", 0.7)) == ""


def test_waits_take_the_submit_bounds_while_the_server_works():
    w = WaitLearner()
    plain = w.budget("http://h/requests/new", "click")
    busy = w.budget("http://h/requests/new", "click", belief=Belief("waiting_server", 0.9))
    assert busy.limit_ms == 2 * plain.limit_ms and busy.key.endswith(" submit")
