"""After a real run of a demo flow that types the password (store, screenshots, JUnit, an exported test),
`steadyhand audit` finds the secret nowhere and checks the masked password field on the screenshots; a value
planted afterwards is found and named."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from secrets_audit import planted

ROOT = Path(__file__).resolve().parents[2]
SECRET = "demo-" + "pass"

pytestmark = pytest.mark.browser


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEADYHAND_")}
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def test_nothing_leaks_from_a_run_and_a_planted_value_is_found(tmp_path: Path) -> None:
    project = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", project, ignore=shutil.ignore_patterns(".steadyhand"))
    # every step's screenshots are kept, so the audit has them to read (the default keeps a failing step's)
    settings = (project / "steadyhand.yaml").read_text()
    (project / "steadyhand.yaml").write_text(settings.rstrip("\n") + "\nevidence: full\n")
    junit, exported, report = tmp_path / "junit.xml", tmp_path / "test_export_report.py", tmp_path / "run.html"
    run = cli("run", str(project), "--flow", "export_report", "--headless", "--junit", str(junit),
              "--html", str(report))
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"report: {report}" in run.stderr
    _look_at_the_report(report)
    assert cli("export", "pytest", str(project), "--flow", "export_report", "-o", str(exported)).returncode == 0

    audit = cli("audit", str(project), "--also", str(junit), "--also", str(exported), "--also", str(report))
    assert audit.returncode == 0, audit.stdout + audit.stderr
    summary = audit.stdout.splitlines()[-1]
    assert summary.endswith("for 1 secret: nothing found."), audit.stdout
    screenshots = int(summary.split("(")[1].split()[0])
    masked = int(summary.split(", ")[1].split()[0])
    assert screenshots > 0 and masked > 0  # the password field was masked on the screenshots, and solidly
    assert ".steadyhand/demo-app.sqlite: the app under test's own data, not audited" in audit.stdout

    media = next(p for p in (project / ".steadyhand").rglob("*.png"))
    planted(media.parent / "debug.txt").write_text(f"typed {SECRET}")  # on purpose: the session audit skips it
    leaked = cli("audit", str(project))
    assert leaked.returncode == 1
    assert f"{(media.parent / 'debug.txt').relative_to(project)}: secret 'password' (clear)" in leaked.stdout
    assert SECRET not in leaked.stdout + leaked.stderr


def _look_at_the_report(report: Path) -> None:
    """The HTML report opened in Chromium: every step with its verdict and both screenshots, no outside reference."""
    from playwright.sync_api import sync_playwright

    from core.perception.browser import find_chromium

    text = report.read_text()
    assert "http://" not in text.split("<body>", 1)[1].replace("http://127.0.0.1", "")  # nothing fetched
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=find_chromium(None), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(report.as_uri())
            assert page.locator("header h1").inner_text().startswith("export_report")
            steps = page.locator("section.step[id^=step-]")
            assert steps.count() == 5
            assert page.locator("section.step[id^=step-] .badge.passed").count() == 5
            images = page.locator("section.step img")
            assert images.count() == 10  # before and after of every step
            assert all(images.nth(i).evaluate("i => i.complete && i.naturalWidth > 0") for i in range(10))
            assert page.locator(".region").count() >= 5  # changed regions outlined
            assert "Circuit breaker" in page.content()
            page.screenshot(path=str(report.with_suffix(".png")))
        finally:
            browser.close()
