"""A person's choice on a page we did not write (MiniWoB++ click-test, real Chromium, the engine thread).

The step's button is recorded under a name the page does not have: the locator abstains, the escalation
says so plainly and offers the page's button; the step is irreversible, so an unconfirmed use-once is
not taken (the engine keeps waiting), a confirmed one clicks it and the episode earns its reward.
"""
from __future__ import annotations

import queue
import shutil
from pathlib import Path

import yaml

from core.engine.events import (
    EscalationRaised, FlowFinished, HealProposed, ProposeHeal, Resumed, RunFinished, Start, UseCandidate,
)
from core.engine.runner import EngineRunner
from core.project import load_project

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 90.0


def _next(events: "queue.Queue[object]", kind: type) -> object:
    while True:
        e = events.get(timeout=WAIT_S)
        if isinstance(e, kind):
            return e
        assert not isinstance(e, (FlowFinished, RunFinished)) or kind in (FlowFinished, RunFinished), e


def test_a_confirmed_use_once_clicks_the_offered_button_and_the_episode_is_won(tmp_path: Path) -> None:
    dst = tmp_path / "miniwob"
    shutil.copytree(ROOT / "projects" / "miniwob", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    for f in (dst / "flows").glob("*.yaml"):
        if f.stem != "click-test":
            f.unlink()
    flow = dst / "flows" / "click-test.yaml"
    doc = yaml.safe_load(flow.read_text())
    doc["steps"][0]["target"] = {"tag": "button", "role": "button", "name": "Submit the order"}
    flow.write_text(yaml.safe_dump(doc, sort_keys=False))
    events: "queue.Queue[object]" = queue.Queue()
    runner = EngineRunner(load_project(dst), on_event=events.put, headless=True, use_store=False)
    runner.start()
    try:
        runner.send(Start(flows=("click-test",)))
        esc = _next(events, EscalationRaised)
        assert esc.kind == "abstained" and "use_candidate" in esc.answers
        assert esc.plain.startswith("'Submit the order' was not found")
        offered = next(c for c in esc.candidates if c.label == "Click Me!")
        assert offered.role == "button" and "irreversible" in offered.confirm
        assert f"the closest button is 'Click Me!' ({offered.score:.2f})" in esc.plain, esc.plain

        runner.send(UseCandidate(offered.ref))  # not confirmed: no answer to an irreversible step
        runner.send(ProposeHeal(offered.ref))  # taken in order: proves the use-once was seen and left waiting
        note = _next(events, HealProposed)
        assert note.proposal_id == 0 and "no store" in note.note

        runner.send(UseCandidate(offered.ref, confirmed=True))
        _next(events, Resumed)
        done = _next(events, FlowFinished)
        result = done.result
        assert result.status == "passed", result.error
        assert result.reward is not None and result.reward > 0  # the page's own judge: the right button
        assert [o.resolution.strategy for o in result.steps if o.resolution] == ["chosen"]
    finally:
        runner.close(timeout=15.0)
