"""The long-table benchmark (failure kind 6) in real Chromium: the work done, never the time."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.bench.table import format_report, run_table_benchmark, table_page
from core.cli import main as cli_main

pytestmark = pytest.mark.browser


def test_the_page_has_one_edit_button_per_row() -> None:
    html = table_page(3)
    assert html.count('class="button edit">Edit</button>') == 3
    assert "User 0003" in html and "user2@example.test" in html


def test_each_targets_row_is_located_among_a_thousand_alike_buttons() -> None:
    report = run_table_benchmark(1000, repeat=1)
    assert [t.row for t in report.targets] == [1, 500, 1000]
    for t in report.targets:
        # 1,000 Edit buttons, 1,000 id links, the search box, its submit button, the pager link
        assert t.candidates == 2003
        assert t.located_row == t.row and t.correct, t
        assert t.strategy == "exact"
        assert t.observe_ms > 0 and t.resolve_ms > 0
        # observed as a recording sees it: the row's own e-mail cell is among its nearest texts
        assert f"user{t.row}@example.test" in t.neighbours
    # only the first row is in the 1280 x 720 viewport; rows 500 and 1000 are located off-screen
    assert [t.in_viewport for t in report.targets] == [True, False, False]
    text = format_report(report)
    assert "1000" in text and "yes" in text and "NO" not in text


def test_the_cli_writes_the_json_summary(tmp_path: Path, capsys) -> None:
    out = tmp_path / "table.json"
    assert cli_main(["bench", "table", "--rows", "40", "--repeat", "1", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["rows"] == 40 and [t["row"] for t in data["targets"]] == [1, 20, 40]
    assert all(t["correct"] and t["candidates"] == 83 for t in data["targets"])
    assert "observe ms" in capsys.readouterr().out
