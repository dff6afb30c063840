"""steadyhand bench ab on a tiny configuration: the table and the JSON have the right shape (no figure asserted)."""
from __future__ import annotations

import json

from core.cli import main


def test_bench_ab_prints_the_table_and_writes_the_json(tmp_path, capsys):
    path = tmp_path / "ab.json"
    code = main(["bench", "ab", "--tasks", "click-test", "focus-text", "--episodes", "1", "--json", str(path)])
    out = capsys.readouterr().out
    assert code == 0, out
    for row in ("completion", "steps per task", "invalid actions", "seconds per task"):
        assert row in out
    assert "without state awareness" in out and "with state awareness" in out
    data = json.loads(path.read_text())
    assert data["policy"] == "random (seeded, seed 0)"
    for arm in ("with", "without"):
        assert set(data[arm]) == {"completion", "steps", "invalid_share", "seconds"}
        assert 0.0 <= data[arm]["completion"] <= 1.0 and 0.0 <= data[arm]["invalid_share"] <= 1.0
        assert data[arm]["steps"] >= 1  # each episode acted at least once
    assert [t["task"] for t in data["tasks"]] == ["click-test", "focus-text"]


def test_bench_ab_refuses_bad_input(capsys):
    assert main(["bench", "ab", "--episodes", "0"]) == 2
    assert "--episodes must be at least 1" in capsys.readouterr().err


def test_bench_ab_model_reads_the_project_it_is_given(tmp_path, capsys):
    assert main(["bench", "ab", "--model", str(tmp_path / "nope"), "--episodes", "1"]) == 2
    assert "project folder not found" in capsys.readouterr().err
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "steadyhand.yaml").write_text("name: mine\nbase_url: http://127.0.0.1:9/\n")
    assert main(["bench", "ab", "--model", str(tmp_path / "mine"), "--episodes", "1"]) == 4
    err = capsys.readouterr().err
    assert str(tmp_path / "mine" / "steadyhand.yaml") in err and "no model section" in err
