"""Step evidence in the store: written, replaced, read back with the step's screenshots, secrets masked."""
from __future__ import annotations

from core.domain import BBox
from core.domain.evidence import AssertionCheck, ConsoleMessage, FailedRequest, ImageDiff, StepEvidence
from core.secrets import Redactor
from core.store import Store, StepEvidenceRecord

SECRET = "tr0ub4dor-and-3"


def _evidence(index: int, note: str = "") -> StepEvidence:
    return StepEvidence(
        index, 2, "click", ImageDiff((BBox(10, 20, 30, 40), BBox(1.5, 2.5, 3, 4)), 0.0125, 1280, 800, 2.0, False, 3.2,
                                     note),
        (ConsoleMessage("error", f"token {SECRET} rejected", "http://127.0.0.1/app.js:3", 12.5),
         ConsoleMessage("exception", "TypeError: x is undefined")),
        (FailedRequest("GET", "http://127.0.0.1/api/r", 500, "fetch", "", 40.0),
         FailedRequest("POST", "http://127.0.0.1/api/s", None, "xhr", "net::ERR_CONNECTION_REFUSED", 41.0)),
        (AssertionCheck("text_appears", "page", "Saved", "text 'Saved' appears", True),),
        120.0, 980.0, (("observe", 30.0), ("act", 50.0)))


def test_evidence_round_trips_with_its_screenshots_and_no_secret(tmp_path, make_observation, make_png) -> None:
    with Store.open(tmp_path / "store.sqlite", redactor=Redactor((SECRET,))) as store:
        run = store.begin_run("p", "f")
        for when in ("before", "after"):
            store.record_observation(run, 0, when, make_observation(png=make_png()))
        store.record_observation(run, 0, "after", make_observation(png=make_png(seed=1)))  # a second attempt: the last one is the step's
        store.record_step_evidence(run, _evidence(0, "first"))
        store.record_step_evidence(run, _evidence(0))  # recorded again: replaced, not doubled
        store.record_step_evidence(run, _evidence(1))
        (a, b) = store.step_evidence(run)
        assert isinstance(a, StepEvidenceRecord) and (a.index, b.index) == (0, 1)
        assert a.evidence.diff is not None and a.evidence.diff.note == ""
        want = _evidence(0)
        assert SECRET not in a.evidence.console[0].text and a.evidence.console[0].text.startswith("token ")
        assert a.evidence.console[0].text.endswith(" rejected") and a.evidence.console[1] == want.console[1]
        assert (a.evidence.diff, a.evidence.failed_requests, a.evidence.assertions, a.evidence.phase_ms) == (
            want.diff, want.failed_requests, want.assertions, want.phase_ms)
        assert (a.evidence.active_ms, a.evidence.wall_ms, a.evidence.paused_ms) == (120.0, 980.0, 860.0)
        assert a.before_screenshot == "screenshots/%s/0000_before_1.png" % run
        assert a.after_screenshot == "screenshots/%s/0000_after_2.png" % run
        assert b.before_screenshot is None
        assert store.step_evidence("unknown-run") == []
        assert [r.failed_requests[1].shown for r in (a.evidence,)] == ["POST /api/s net::ERR_CONNECTION_REFUSED"]
    assert SECRET.encode() not in (tmp_path / "store.sqlite").read_bytes()
    # a second, read-only store reads the same records (the studio's history)
    with Store.open(tmp_path / "store.sqlite", read_only=True) as ro:
        assert [r.index for r in ro.step_evidence(run)] == [0, 1]
