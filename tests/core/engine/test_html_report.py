"""The HTML report of a stored run: found by a unique prefix, refused with a clear error otherwise, texts escaped."""
from __future__ import annotations

import pytest

from core.engine.html_report import ReportError, html_report
from core.store import Store


def test_prefixes_unknown_runs_and_escaping(tmp_path) -> None:
    with Store.open(tmp_path) as store:
        a = store.begin_run("Demo", "<b>checkout</b>", run_id="aaaa-1")
        store.begin_run("Demo", "other", run_id="aaab-2")
        with pytest.raises(ReportError, match="'aaa' is ambiguous: 2 runs start with it: aaab-2 .*aaaa-1"):
            html_report(store, "aaa")
        with pytest.raises(ReportError, match="no run id starts with 'zzz'"):
            html_report(store, "zzz")
        doc = html_report(store, "aaaa")
        assert a == "aaaa-1"
        assert "&lt;b&gt;checkout&lt;/b&gt;" in doc and "<b>checkout</b>" not in doc
        assert "No step ran." in doc and "<script" not in doc


def test_the_index_links_each_report_and_the_step_a_failed_run_stopped_at() -> None:
    from core.domain import RunResult, StepOutcome
    from core.engine.html_report import html_index, index_entry

    def outcome(i: int, status: str) -> StepOutcome:
        return StepOutcome(index=i, step_id=f"s{i + 1}", title="t", status=status, resolution=None, verdict=None,
                           attempts=1, ms=1.0, error="")

    ok = RunResult(run_id="r1", flow="<ok>", status="passed", steps=(outcome(0, "passed"),), heals=0,
                   invalid_actions=0, seconds=1.0, total_steps=1)
    bad = RunResult(run_id="r2", flow="bad", status="failed", steps=(outcome(0, "passed"), outcome(1, "failed")),
                    heals=1, invalid_actions=0, seconds=2.0, error="expected 'Saved'", error_kind="assertion",
                    total_steps=3, stop_kind="assertion", stopped_at=1)
    doc = html_index("Demo", [index_entry(ok, "r-ok-1.html"), index_entry(bad, "r-bad-2.html")],
                     environment={"browser": "Chromium 1 (/usr/bin/chromium)"}, base_url="http://127.0.0.1:1")
    assert 'href="r-ok-1.html"' in doc and 'href="r-bad-2.html#step-2"' in doc and "expected &#39;Saved&#39;" in doc
    assert "&lt;ok&gt;" in doc and "<ok>" not in doc and "1 of 2 passed" in doc and "1 of 3" in doc
    assert "Chromium 1 (/usr/bin/chromium)" in doc and "<script" not in doc
    assert index_entry(bad, "")["stop_href"] == ""  # no report written: no link
