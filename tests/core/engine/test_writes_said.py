"""What a failed irreversible step's message says about its writes (pure)."""
from __future__ import annotations

from types import SimpleNamespace

from core.act.writes import RequestSeen
from core.engine.acting import writes_said


def _ctx(*writes, watched=True):
    return SimpleNamespace(writes=list(writes), watched=watched)


def test_a_refused_write_names_method_path_and_status_never_the_query():
    w = RequestSeen(1.0, "POST", "http://127.0.0.1:5/api/requests?token=s3cret", "fetch", status=500)
    said = writes_said(_ctx(w))
    assert said == "; the server answered POST /api/requests 500" and "s3cret" not in said


def test_a_write_without_answer_is_said_so_and_a_successful_one_is_not_a_failure():
    pending = RequestSeen(1.0, "POST", "http://127.0.0.1:5/api/requests", "fetch")
    ok = RequestSeen(1.0, "POST", "http://127.0.0.1:5/api/other", "fetch", status=201)
    assert writes_said(_ctx(pending, ok)) == "; no answer to POST /api/requests (failed or still pending)"


def test_nothing_is_said_when_the_requests_were_not_watched():
    w = RequestSeen(1.0, "POST", "http://127.0.0.1:5/api/requests", "fetch", status=500)
    assert writes_said(_ctx(w, watched=False)) == "" and writes_said(_ctx()) == ""
