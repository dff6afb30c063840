"""Three-layer planning with a model (P3): goal -> strategy of intermediate states -> action.

Used by exploration (``steadyhand explore --goal`` with a model configured)
and by the state-awareness benchmark's model policy.  The model is asked,
with the ``explore`` prompt (``resources/prompts/explore.v1.md``), for the
strategy (the intermediate states that lead to the goal), the ONE action to
do now among the untried ones it is shown, and the text it expects after it.
When the text does not appear (:meth:`Planner.check`), the plan is wrong:
the caller backs off to the last stable state (the last one where an
expectation held, or the start) and :meth:`Planner.replan` says so to the
model at the next question.

Never guessed: an answer whose ``choice`` is not one of the listed ids, or a
model that cannot be reached, raises :class:`~core.plan.decider.NeedsHuman`
with the reason.  Page text is delimited as data; secrets are removed from
every text before it is sent (the client redacts once more).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from pydantic import BaseModel, Field

from core.domain import Observation
from core.plan.decider import NeedsHuman
from core.plan.model import ModelClient, ModelError, text_part
from core.plan.prompts import load_prompt
from core.secrets import Redactor

__all__ = ["PlanAnswer", "PlanOption", "Planner", "PROMPT_VERSION", "PAGE_TEXT_CHARS"]

#: Version of the ``explore`` prompt template.
PROMPT_VERSION = 2
#: Visible text sent, characters.
PAGE_TEXT_CHARS = 1500


class PlanAnswer(BaseModel):
    """The model's answer (fixed schema)."""

    strategy: list[str] = Field(default_factory=list, max_length=12)
    choice: str = Field(min_length=1, max_length=12)
    expect: str = Field("", max_length=200)
    reason: str = Field("", max_length=500)


@dataclass(frozen=True, slots=True)
class PlanOption:
    """One untried action shown to the model: ``here`` when it starts from the current page."""

    kind: str
    label: str
    here: bool = True


def _data(text: str) -> str:
    return text.replace("<page_data>", "<page-data>").replace("</page_data>", "</page-data>")


@dataclass
class Planner:
    """The P3 planner of one exploration or episode.

    Parameters
    ----------
    client : ModelClient
        The project's primary model.
    goal : str
        What must be reached (a text that must appear, or a task's instruction).
    redactor : Redactor
        Masks secrets in every text sent.
    """

    client: ModelClient
    goal: str
    redactor: Redactor = field(default_factory=lambda: Redactor(()))
    strategy: list[str] = field(default_factory=list)
    expect: str = ""
    last_note: str = ""
    backoffs: int = 0
    calls: int = 0

    def choose(self, obs: Observation, options: Sequence[PlanOption]) -> int:
        """Index of the option the model chooses (the strategy and the expectation are kept).

        Raises
        ------
        NeedsHuman
            The model is unreachable, answered nonsense, or chose an id that was not listed.
        """
        if not options:
            raise NeedsHuman("nothing left to choose from")
        red = self.redactor
        ids = {f"o{i + 1}": i for i in range(len(options))}
        listing = "\n".join(f"o{i + 1} | {'here' if o.here else 'elsewhere'} | {o.kind} | {red.text(o.label)}"
                            for i, o in enumerate(options))
        system, user = load_prompt("explore", PROMPT_VERSION).render({
            "goal": red.text(self.goal), "strategy": _data(" -> ".join(self.strategy) or "(none yet)"),
            "last_note": _data(self.last_note), "options": _data(listing), "url": red.text(obs.url),
            "title": _data(red.text(obs.title)), "text_chars": PAGE_TEXT_CHARS,
            "page_text": _data(red.text(obs.visible_text[:PAGE_TEXT_CHARS]))})
        self.calls += 1
        try:
            ans, _ = self.client.complete_json([{"role": "system", "content": system},
                                                {"role": "user", "content": [text_part(user)]}], PlanAnswer)
        except ModelError as exc:
            raise NeedsHuman(f"the model could not plan: {exc}") from None
        choice = ans.choice.strip()
        if choice not in ids:
            raise NeedsHuman(f"the model chose {choice!r}, which is not one of the listed actions "
                             f"(o1..o{len(options)}); nothing is guessed")
        self.strategy = [s.strip()[:80] for s in ans.strategy if s.strip()][:6]
        self.expect = ans.expect.strip()
        self.last_note = ""
        return ids[choice]

    def check(self, obs: Observation) -> bool:
        """Did the page show what the model expected (True when it expected nothing in particular)?"""
        return not self.expect or self.expect.lower() in obs.visible_text.lower()

    def replan(self, why: str) -> None:
        """The last action did not lead where the plan said: back off and tell the model at the next question."""
        self.backoffs += 1
        self.last_note = (f"Last outcome: {why}. The agent went back to the last state where the plan held; "
                          "make a new plan from there.\n")
        self.strategy, self.expect = [], ""
