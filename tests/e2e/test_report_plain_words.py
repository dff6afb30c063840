"""The HTML report of a passing ``steadyhand run --html`` of the bundled demo's leave_request (real Chromium)
reads in plain words: "11 of 11 steps passed · no heals" (it said "11 of 11 step(s) passed · 0 heal(s)"), each
verdict "expected a dialog opening; saw ..." (it said "expected overlay_open, observed overlay_open, ..."), each
assertion "text appears on ..." (it said "text_appears").  And ``record`` prints a step's expected change in the
same words (it printed "s7 Click Clear all -> overlay_open")."""
from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core.domain import Action, Step
from core.record.command import _Printer
from core.record.events import StepRecorded

ROOT = Path(__file__).resolve().parents[2]


def _text(doc: str) -> str:
    doc = re.sub(r"<style>.*?</style>", "", doc, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", doc)))


@pytest.mark.browser
def test_the_run_report_reads_in_plain_words(tmp_path: Path) -> None:
    project = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", project, ignore=shutil.ignore_patterns(".steadyhand"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEADYHAND_")}
    report = tmp_path / "run.html"
    run = subprocess.run([sys.executable, "-m", "core.cli", "run", str(project), "--flow", "leave_request",
                          "--headless", "--no-screenshots", "--html", str(report)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    doc = report.read_text(encoding="utf-8")
    text = _text(doc)
    assert "11 of 11 steps passed · no heals" in text, text[:600]
    assert "step(s)" not in text and "heal(s)" not in text
    verdicts = re.findall(r"<th>verdict</th><td>(.*?)</td></tr>", doc, flags=re.S)
    assert len(verdicts) == 11
    assert any("expected a dialog opening; saw a dialog opening" in _text(v) for v in verdicts), verdicts
    # the expected and seen changes (the reason below them is the engine's sentence, checked elsewhere)
    shown = [_text(re.sub(r'<div class="muted">.*?</div>', "", v, flags=re.S)) for v in verdicts]
    assert [w for w in shown if re.search(r"_|expected (value|navigation|content|any(?! change))\b|observed", w)] == [], shown
    rows = [_text(r) for r in re.findall(r"<th>assertion</th><td>(.*?)</td></tr>", doc, flags=re.S)]
    assert any(r.strip().startswith("✓ text appears on") for r in rows), rows
    assert not any("_" in r.split(":")[0] for r in rows), rows  # the kind, before its target's colon


def test_record_prints_the_expected_change_in_plain_words(capsys: pytest.CaptureFixture[str]) -> None:
    step = Step(id="s7", name="Click Clear all", action=Action(kind="click"), expect="overlay_open")
    _Printer(quiet=False)(StepRecorded(index=6, step=step))
    assert capsys.readouterr().out == "  s7   Click Clear all  -> a dialog opening\n"
