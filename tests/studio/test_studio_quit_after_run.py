"""``steadyhand studio PROJECT --quit-after-run --screenshot PNG``: the studio replays, saves its window, exits.

The smoke test of the bundle (packaging/smoke_bundle.sh) relies on it; here it
runs over the scripted FakeEngine (real window, real event loop, offscreen).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QImage

from core.cli import main as cli_main
from core.engine.report import EXIT_ENVIRONMENT, EXIT_ESCALATED, EXIT_INPUT, EXIT_OK
from studio.app import main
from studio.testing import FakeEngine


def _own_settings(folder: Path) -> QSettings:
    """Settings in a file of the test's own: the user's QSettings stay untouched."""
    return QSettings(str(folder / "studio.ini"), QSettings.Format.IniFormat)


def test_quits_when_the_run_ends_with_a_screenshot_and_the_run_exit_code(
        qtbot, project, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    shot = tmp_path / "shots" / "studio.png"
    code = main(project.root, run=True, engine_factory=FakeEngine.factory(scripts={}),
                project_loader=lambda _p: project, quit_after_run=True, screenshot=shot, run_timeout_s=60,
                settings=_own_settings(tmp_path))
    err = capsys.readouterr().err
    assert code == EXIT_OK
    assert "login_lockout passed" in err and "export_report passed" in err
    image = QImage(str(shot))
    assert (image.width(), image.height()) == (1400, 900)  # the window as the user saw it
    assert f"screenshot {shot}" in err
    assert str(project.root) in str(_own_settings(tmp_path).value("recentProjects"))  # closed as a user would


def test_a_run_that_waits_for_the_user_past_the_limit_exits_as_an_escalation(
        qtbot, project, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    """The default sample script escalates at step 6 and waits for an answer that never comes."""
    shot = tmp_path / "late.png"
    code = main(project.root, run=True, engine_factory=FakeEngine.factory(), project_loader=lambda _p: project,
                quit_after_run=True, screenshot=shot, run_timeout_s=1.5,
                settings=_own_settings(tmp_path))
    err = capsys.readouterr().err
    assert code == EXIT_ESCALATED
    assert "did not end within 2 s" in err
    assert not QImage(str(shot)).isNull()  # the window at the moment it gave up: the open escalation


def test_the_cli_refuses_a_screenshot_without_quit_after_run(capsys: pytest.CaptureFixture[str]) -> None:
    demo = Path(__file__).resolve().parents[2] / "projects" / "demo"
    assert cli_main(["studio", str(demo), "--screenshot", "/tmp/never.png"]) == EXIT_INPUT
    assert "--screenshot: needs --quit-after-run" in capsys.readouterr().err


def test_the_cli_says_plainly_that_the_studio_needs_a_display(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    # without one Qt aborted the process (exit 134) blaming libxcb-cursor0 and suggesting a reinstall
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    demo = Path(__file__).resolve().parents[2] / "projects" / "demo"
    assert cli_main(["studio", str(demo)]) == EXIT_ENVIRONMENT
    err = capsys.readouterr().err
    assert "needs a display" in err and "--headless" in err and "xvfb-run" in err
