"""Anti-loop (P8) and stagnation (K2): pure counters, scripted rounds, no browser."""
from __future__ import annotations

from core.domain import Action, ElementDescriptor, Step
from core.recover.loops import LoopGuard, Stagnation, action_key

GO = ElementDescriptor(tag="button", role="button", name="Go", xpath="/html/body/button[1]")


def click() -> Step:
    return Step("s1", Action("click"))


# --- P8 ------------------------------------------------------------------------------------------


def test_the_same_action_on_the_same_state_a_fourth_time_is_refused() -> None:
    guard, key = LoopGuard(), action_key(click(), GO, "")
    for _ in range(3):
        assert guard.check(key, "A", title="click Go") == ""
        guard.record(key, "A")
    why = guard.check(key, "A", title="click Go")
    assert why.startswith("anti-loop: 'click Go' was already done 3 times on this same page state")
    assert "(at most 3 in 5); not doing it again" in why and "P8" not in why  # no mechanism ID


def test_another_state_or_another_action_is_not_a_loop() -> None:
    guard, key = LoopGuard(), action_key(click(), GO, "")
    for state in ("A", "B", "C", "D"):
        assert guard.check(key, state) == ""
        guard.record(key, state)
    other = action_key(click(), ElementDescriptor(tag="button", role="button", name="Stop",
                                                  xpath="/html/body/button[2]"), "")
    for _ in range(3):
        guard.record(key, "E")
    assert guard.check(other, "E") == ""
    assert guard.check(key, "E") != ""


def test_only_the_last_five_attempts_count() -> None:
    guard, key, noise = LoopGuard(), action_key(click(), GO, ""), "other"
    for _ in range(2):
        guard.record(key, "A")
    for _ in range(3):
        guard.record(noise, "A")
    guard.record(key, "A")  # the oldest fell out: the window holds key, noise x3, key
    assert guard.count(key, "A") == 2
    assert guard.check(key, "A") == ""


def test_a_human_retry_grants_exactly_one_more_attempt() -> None:
    guard, key = LoopGuard(), action_key(click(), GO, "")
    for _ in range(3):
        guard.record(key, "A")
    guard.grant_once()
    assert guard.check(key, "A") == ""
    guard.record(key, "A")
    assert guard.check(key, "A") != ""


def test_the_key_names_the_element_by_place_so_a_toggling_label_stays_one_element() -> None:
    on = ElementDescriptor(tag="button", role="switch", name="On", xpath="/html/body/button[1]")
    off = ElementDescriptor(tag="button", role="switch", name="Off", xpath="/html/body/button[1]")
    assert action_key(click(), on, "") == action_key(click(), off, "")
    typed = Step("s2", Action("input", "x"))
    assert action_key(typed, on, "alice") != action_key(typed, on, "bob")
    assert "alice" not in action_key(typed, on, "alice")  # values are hashed (they may be secrets)


def test_a_target_without_a_place_is_named_by_its_label() -> None:
    a = ElementDescriptor(role="button", name="Save")
    b = ElementDescriptor(role="button", name="Cancel")
    assert action_key(click(), a, "") != action_key(click(), b, "")


# --- K2 ------------------------------------------------------------------------------------------


def test_three_rounds_that_change_nothing_stagnate() -> None:
    s = Stagnation()
    assert s.observe("A", "A", verdict="unchanged", expected="any", where="step 1 attempt 1") == ""
    assert s.observe("A", "A", verdict="unchanged", expected="any", where="step 1 attempt 2") == ""
    why = s.observe("A", "A", verdict="unchanged", expected="any", where="step 1 attempt 3")
    # it said "(limit 3, K2)": a mechanism's ID in a message a person reads
    assert why.startswith("stagnation: 3 rounds in a row without a real state change (at most 3): ")
    assert "step 1 attempt 3: nothing changed" in why


def test_a_toggle_between_two_states_stagnates_on_the_third_revisit() -> None:
    s = Stagnation()
    rounds = [("A", "B"), ("B", "A"), ("A", "B"), ("B", "A")]
    results = [s.observe(b, a, verdict="as_expected", expected="any", key="click switch") for b, a in rounds]
    assert results[:3] == ["", "", ""]
    assert "back to a page state seen before" in results[3]
    assert s.blocks("click switch") == results[3]  # the next toggle is refused...
    assert s.blocks("click save") == ""  # ...another action may lead out
    s.grant_once()
    assert s.blocks("click switch") == ""  # a human's retry lets one more round through


def test_a_failed_round_that_stagnates_leaves_nothing_pending() -> None:
    s = Stagnation()
    for _ in range(3):
        why = s.observe("A", "A", verdict="unchanged", expected="any", key="k")
    assert why and s.pending == "" and s.blocks("k") == ""  # the step itself stops (the caller raises)


def test_progress_clears_a_pending_stagnation() -> None:
    s = Stagnation()
    for b, a in [("A", "B"), ("B", "A"), ("A", "B"), ("B", "A")]:
        s.observe(b, a, verdict="as_expected", expected="any", key="k")
    assert s.blocks("k")
    s.observe("A", "C", verdict="as_expected", expected="any", key="other")
    assert s.blocks("k") == "" and s.count == 0


def test_a_new_state_resets_the_count() -> None:
    s = Stagnation()
    s.observe("A", "A", verdict="unchanged", expected="any")
    s.observe("A", "A", verdict="unchanged", expected="any")
    assert s.observe("A", "B", verdict="as_expected", expected="any") == ""
    assert s.count == 0
    assert s.observe("B", "B", verdict="unchanged", expected="any") == ""


def test_rounds_that_need_no_change_are_neutral() -> None:
    s = Stagnation()
    s.observe("A", "A", verdict="unchanged", expected="any")
    s.observe("A", "A", verdict="unchanged", expected="any")
    for _ in range(5):
        assert s.observe("A", "A", verdict="as_expected", expected="none") == ""  # hover, wait, assert
    assert s.count == 2
    assert s.observe("A", "A", verdict="unchanged", expected="any") != ""


def test_an_expected_change_the_digest_does_not_see_is_progress() -> None:
    s = Stagnation()  # a scroll: the digest is the same, the verdict says the page scrolled as expected
    for _ in range(5):
        assert s.observe("A", "A", verdict="as_expected", expected="scroll") == ""
    assert s.count == 0


def test_a_longer_flow_through_new_states_never_stagnates() -> None:
    s = Stagnation()
    states = [f"S{i}" for i in range(30)]
    pairs = zip(states[:-1], states[1:], strict=True)
    assert all(s.observe(b, a, verdict="as_expected", expected="any") == "" for b, a in pairs)


def test_reset_forgets_the_count_after_a_hand_back() -> None:
    s = Stagnation(rounds=2)
    s.observe("A", "A", verdict="unchanged", expected="any")
    s.reset()
    assert s.observe("A", "A", verdict="unchanged", expected="any") == ""
    assert s.observe("A", "A", verdict="unchanged", expected="any") != ""
