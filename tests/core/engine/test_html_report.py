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
