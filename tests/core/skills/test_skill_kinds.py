"""Skills of a popup kind (issue 25 items 2-3): the kind by meaning, the choice by role, look-alikes refused."""
from __future__ import annotations

from dataclasses import replace

import pytest

from core.domain import Action
from core.domain.skill import Skill, SkillAction, SkillScope, SkillTrigger, SkillValidation
from core.skills import kinds
from core.skills.library import approval_problem, approve
from core.store import Store
from core.store.skills import SkillTable


def _pop(name: str, text: str, *controls: str, fields: tuple[str, ...] = (), payment: bool = False) -> dict:
    return {"key": "0", "name": name, "text": text, "modal": True, "cover": 1.0, "fields": list(fields),
            "payment": payment, "controls": [{"key": f"0.{i}", "name": c, "enabled": True}
                                             for i, c in enumerate(controls)]}


TARTEAUCITRON = _pop("Cookies management panel", "This site uses cookies and gives you control over what you want "
                     "to activate", "Cookies : OK, accept all", "Cookies : Deny all cookies", "Personalize (modal window)")
COOKIECONSENT = _pop("We use cookies", "Cookies help us run the shop.", "Accept all", "Reject all",
                     "Manage preferences")
OREJIME = _pop("", "We collect and process your personal information for the following purposes: Shop statistics. "
               "To learn more, please read our privacy policy.", "privacy policy", "Accept", "Decline", "Configure")
UPSELL = _pop("Shop Plus", "We use cookies to personalise your offer: try Plus free for 14 days, then $4.99/month.",
              "Accept all", "Close")
NEWSLETTER = _pop("Cookies and news", "Accept our cookies and get the newsletter.", "Accept", "Close",
                  fields=("email",))
DESTRUCTIVE = _pop("Clear your data", "Accept to delete every saved cookie. This cannot be undone.", "Accept", "Cancel")


def _skill(choice: str, *, quality: float = 0.8) -> Skill:
    return Skill(id="sk-00000000ca01", description=f"answer a consent banner: {choice}",
                 trigger=SkillTrigger(popup="consent"),
                 actions=(SkillAction(Action("click"), note="the person's choice", choice=choice),),
                 scope=SkillScope(product="Shop"), state="approved", quality=quality)


@pytest.mark.parametrize("name,role", [
    ("Accept all", "accept"), ("Cookies : OK, accept all", "accept"), ("Tout accepter", "accept"),
    ("Allow all cookies", "accept"), ("Accept and close", "accept"), ("Reject all", "reject"),
    ("Deny all cookies", "reject"), ("Decline", "reject"), ("Only necessary", "reject"), ("Alle ablehnen", "reject"),
    ("Personalize (modal window)", "settings"), ("Manage preferences", "settings"), ("Close", "close"),
    ("×", "close"), ("Accept selected", ""), ("Accept only necessary", ""), ("Don't accept", ""),
    ("Save", ""), ("Next", ""), ("Delete all data", ""), ("Start trial", ""),
])
def test_a_controls_role_is_told_from_its_name_and_an_unclear_name_says_none(name: str, role: str) -> None:
    assert kinds.role_of(name) == role


@pytest.mark.parametrize("pop", [TARTEAUCITRON, COOKIECONSENT, OREJIME])
def test_three_libraries_banners_are_consent_banners(pop: dict) -> None:
    assert kinds.kind_of(pop) == "consent" and kinds.not_the_kind(pop, "consent") == ""


@pytest.mark.parametrize("pop,why", [(UPSELL, "price"), (NEWSLETTER, "text field"), (DESTRUCTIVE, "'delete'")])
def test_look_alikes_using_the_banners_words_are_not_of_the_kind(pop: dict, why: str) -> None:
    assert kinds.kind_of(pop) == "consent"  # they say "cookies"...
    assert why in kinds.not_the_kind(pop, "consent")  # ...and are refused all the same
    assert kinds.answer([_skill("accept")], pop) is None


@pytest.mark.parametrize("choice,pop,pressed", [
    ("accept", TARTEAUCITRON, "Cookies : OK, accept all"), ("reject", TARTEAUCITRON, "Cookies : Deny all cookies"),
    ("accept", COOKIECONSENT, "Accept all"), ("reject", COOKIECONSENT, "Reject all"),
    ("accept", OREJIME, "Accept"), ("reject", OREJIME, "Decline"), ("settings", OREJIME, "Configure"),
])
def test_one_skill_answers_every_library_with_the_persons_choice_by_role(choice: str, pop: dict, pressed: str
                                                                        ) -> None:
    skill, control, reason = kinds.answer([_skill(choice)], pop)
    assert control is not None and control["name"] == pressed and choice in reason


def test_where_the_page_does_not_say_which_button_is_the_choice_the_skill_abstains() -> None:
    vague = _pop("Cookies", "We use cookies.", "Fine", "Continue")
    skill, control, reason = kinds.answer([_skill("reject")], vague)
    assert control is None and "not said" in reason
    two = _pop("Cookies", "We use cookies.", "Accept all", "Accept", "Reject all")
    assert kinds.answer([_skill("accept")], two)[1] is None


def test_a_skill_below_the_review_quality_does_not_answer() -> None:
    assert kinds.answer([_skill("accept", quality=0.2)], COOKIECONSENT) is None


def test_a_takeover_proposes_a_kind_skill_and_its_validation_replays_distinct_failures() -> None:
    skill = kinds.propose(TARTEAUCITRON, "Cookies : OK, accept all", product="Shop")
    assert skill is not None and skill.trigger.popup == "consent" and skill.actions[0].choice == "accept"
    assert kinds.propose(UPSELL, "Accept all", product="Shop") is None  # never learnt on a look-alike
    assert kinds.propose(COOKIECONSENT, "Save", product="Shop") is None  # a control whose meaning is unclear
    # the same failure twice counts once; look-alikes are no cases; all three libraries pass
    cases, passed, reasons = kinds.validate(skill, [TARTEAUCITRON, TARTEAUCITRON, UPSELL, COOKIECONSENT, OREJIME])
    assert (cases, passed) == (3, 3), reasons
    cases, passed, _ = kinds.validate(skill, [TARTEAUCITRON, _pop("Cookies", "We use cookies.", "Fine", "Continue")])
    assert (cases, passed) == (2, 1)


def test_a_kind_skill_validated_on_fewer_than_three_failures_is_not_approved(tmp_path) -> None:
    skill = kinds.propose(TARTEAUCITRON, "Cookies : OK, accept all", product="Shop")
    assert skill is not None
    two = replace(skill, validation=SkillValidation(cases=2, passed=2, reproduced=True))
    assert "at least 3 distinct failures" in approval_problem(two)
    three = replace(skill, validation=SkillValidation(cases=3, passed=3, reproduced=True))
    assert approval_problem(three) == ""
    store = Store.open(tmp_path / "store.sqlite")
    try:
        table = SkillTable(store)
        table.put(three)
        assert approve(table, three.id).state == "approved"  # legal and as the run-time rules allow
        got = table.get(three.id)
        assert got is not None and got.trigger.popup == "consent" and got.actions[0].choice == "accept"
    finally:
        store.close()
