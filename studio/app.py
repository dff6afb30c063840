"""Entry point of the studio: ``steadyhand studio PROJECT [--run]`` calls :func:`main`."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Callable

from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QMessageBox

from core.domain import RunResult
from core.domain.resources import bundle_root
from core.engine.report import EXIT_ENVIRONMENT, EXIT_ESCALATED, exit_code

from .bridge import EngineFactory
from .main_window import MainWindow, ProjectLoader
from .run_state import RunState
from .theme import apply_theme
from .warmup import start_warmup

__all__ = ["main", "create_app", "RUN_TIMEOUT_S"]

#: Seconds a run may take at most when the studio quits after it (``--quit-after-run``): the four demo
#: flows take about 1-2 minutes on two cores; this leaves room for a loaded machine.
RUN_TIMEOUT_S = 900.0
#: Delay between the run's end and the screenshot/quit, ms: the last events are painted first.
QUIT_SETTLE_MS = 500


def create_app(argv: list[str] | None = None) -> QApplication:
    """The running ``QApplication`` (created when needed) with the studio theme applied."""
    app = QApplication.instance()
    if app is None:
        app = QApplication(argv if argv is not None else sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("Steadyhand Studio")
    app.setOrganizationName("Steadyhand")
    app.setDesktopFileName("steadyhand")  # packaging/steadyhand.desktop: the desktop matches windows to it
    icon = bundle_root() / "packaging" / "icons" / "steadyhand.svg"
    if icon.is_file():
        app.setWindowIcon(QIcon(str(icon)))
    apply_theme(app)
    return app


def _has_display() -> bool:
    """A desktop to show a Chromium window on (recordings then use a visible browser)."""
    if os.environ.get("QT_QPA_PLATFORM", "") in ("offscreen", "minimal"):
        return False
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def main(project: Path, *, run: bool = False, headed: bool = False, engine_factory: EngineFactory | None = None,
         project_loader: ProjectLoader | None = None, screenshot: Path | None = None,
         quit_after_run: bool = False, run_timeout_s: float = RUN_TIMEOUT_S,
         settings: QSettings | None = None) -> int:
    """Open the studio on ``project`` and run the Qt event loop.

    Parameters
    ----------
    project : Path
        Project folder.
    run : bool
        Start all flows as soon as the window is shown.
    headed : bool
        Show the Chromium window of replays as well (needs a display); the
        live view shows screenshots either way.  Recordings use a visible
        Chromium window whenever there is a display, else headless Chromium
        driven through the live view.
    engine_factory, project_loader
        Injected for tests and previews; default the real engine and loader.
    screenshot : Path, optional
        With ``quit_after_run``: where the window's PNG is saved when the
        run ends (or when it times out), as the user saw it.
    quit_after_run : bool
        Close the studio when the run ends (``run`` implied): for smoke
        tests of an installed build.  The exit code then says how the run
        went (see Returns).
    run_timeout_s : float
        With ``quit_after_run``: seconds the run may take at most
        (:data:`RUN_TIMEOUT_S`); past it the studio saves the screenshot and
        exits with 3 (closing the window stops the run).
    settings : QSettings, optional
        Where the window keeps its layout and recent projects; default the
        user's ``QSettings()`` (tests pass a file of their own).

    Returns
    -------
    int
        The event loop's exit code; 2 when the project cannot be opened.
        With ``quit_after_run``: the exit code of ``steadyhand run`` for the
        same results (0 all passed, 1 failed, 3 escalated, 4 environment;
        each flow's status is printed), 3 when the run did not end in time,
        4 when the engine could not run it.
    """
    app = create_app()
    if engine_factory is None and headed:
        from core.engine.runner import EngineRunner

        def engine_factory(p, on_event):  # type: ignore[no-redef]
            return EngineRunner(p, on_event=on_event, headless=False)
    try:
        window = MainWindow(project, run_on_show=run, engine_factory=engine_factory,
                            project_loader=project_loader, record_headless=not (headed or _has_display()),
                            settings=settings if settings is not None else QSettings())
    except Exception as exc:  # noqa: BLE001 - report any load failure as a message, not a traceback
        text = f"cannot open {project}: {type(exc).__name__}: {exc}"
        print(f"steadyhand studio: {text}", file=sys.stderr)
        if os.environ.get("QT_QPA_PLATFORM", "") not in ("offscreen", "minimal"):
            QMessageBox.warning(None, "Steadyhand Studio",  # a missing project path gets a dialog
                                f"Cannot open the project.\n\n{exc}")
        return 2
    if quit_after_run and screenshot is not None:
        window.fit_screen = False  # the picture is of a 1400 x 900 window, whatever the (virtual) screen's size
    window.resize(1400, 900)
    outcome = _quit_after_run(app, window, screenshot, run_timeout_s) if quit_after_run else None
    window.show()
    if engine_factory is None:
        start_warmup()  # the engine's imports and a frozen heap before the first run (studio.warmup)
    code = app.exec()
    if outcome is not None:  # the window closed itself (settings saved, engine stopped) and is deleted
        return outcome()
    window.shutdown()
    return code


def _quit_after_run(app: QApplication, window: MainWindow, screenshot: Path | None,
                    timeout_s: float) -> Callable[[], int]:
    """Quit ``app`` when ``window``'s run ends (or after ``timeout_s``); returns the exit code's getter.

    The codes are ``steadyhand run``'s (:func:`core.engine.report.exit_code`); a run past its limit is an
    escalation (3), an engine that could not run the batch an environment error (4).
    """
    window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # nothing of this run outlives app.exec()
    results: dict[str, RunResult] = {}
    verdict: list[int | None] = [None]
    done = [False]
    window.bridge.flow_finished.connect(lambda e: results.__setitem__(e.result.flow, e.result))

    def finish(code: int | None, reason: str = "") -> None:
        if done[0]:
            return
        done[0], verdict[0] = True, code
        limit.stop()
        if reason:
            print(f"steadyhand studio: {reason}", file=sys.stderr)
        if screenshot is not None:
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            if window.grab().save(str(screenshot), "PNG"):
                print(f"steadyhand studio: screenshot {screenshot}", file=sys.stderr)
            else:
                print(f"steadyhand studio: {screenshot}: cannot write the screenshot", file=sys.stderr)
        for flow, result in results.items():
            print(f"steadyhand studio: {flow} {result.status}", file=sys.stderr)
        # closed as the user would (settings saved, engine stopped); the last window closed ends app.exec().
        # Not app.quit()/exit(): they leave Qt's later event loops in this process unable to run.
        window.close()
        for other in app.topLevelWidgets():
            if other.isVisible():
                other.close()

    def on_state(state: str) -> None:
        if state == RunState.FINISHED.value:  # the last results are painted before the screenshot
            QTimer.singleShot(QUIT_SETTLE_MS, lambda: finish(None))

    window.run_state_changed.connect(on_state)
    window.bridge.engine_error.connect(
        lambda e: QTimer.singleShot(QUIT_SETTLE_MS, lambda: finish(EXIT_ENVIRONMENT, f"engine error: {e.message}")))
    limit = QTimer(window)  # dies with the window: nothing of this run outlives it
    limit.setSingleShot(True)
    limit.setInterval(int(timeout_s * 1000))
    limit.timeout.connect(lambda: finish(
        EXIT_ESCALATED, f"the run did not end within {timeout_s:.0f} s (--quit-after-run's limit)"))
    limit.start()

    def code() -> int:
        if verdict[0] is not None:
            return verdict[0]
        return exit_code(results.values()) if results else EXIT_ENVIRONMENT
    return code


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m studio.app", description="Steadyhand Studio")
    parser.add_argument("project", type=Path)
    parser.add_argument("--run", action="store_true", help="start all flows when the window opens")
    parser.add_argument("--headed", action="store_true",
                        help="show the Chromium window of replays (needed to act on the page during a takeover)")
    parser.add_argument("--quit-after-run", action="store_true", help="close the studio when the run ends")
    parser.add_argument("--screenshot", type=Path, help="with --quit-after-run: save the window as PNG here")
    ns = parser.parse_args()
    sys.exit(main(ns.project, run=ns.run or ns.quit_after_run, headed=ns.headed, screenshot=ns.screenshot,
                  quit_after_run=ns.quit_after_run))
