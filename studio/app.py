"""Entry point of the studio: ``steadyhand studio PROJECT [--run]`` calls :func:`main`."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QMessageBox

from .bridge import EngineFactory
from .main_window import MainWindow, ProjectLoader
from .theme import apply_theme

__all__ = ["main", "create_app"]


def create_app(argv: list[str] | None = None) -> QApplication:
    """The running ``QApplication`` (created when needed) with the studio theme applied."""
    app = QApplication.instance()
    if app is None:
        app = QApplication(argv if argv is not None else sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("Steadyhand Studio")
    app.setOrganizationName("Steadyhand")
    apply_theme(app)
    return app


def _has_display() -> bool:
    """A desktop to show a Chromium window on (recordings then use a visible browser)."""
    if os.environ.get("QT_QPA_PLATFORM", "") in ("offscreen", "minimal"):
        return False
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def main(project: Path, *, run: bool = False, headed: bool = False, engine_factory: EngineFactory | None = None,
         project_loader: ProjectLoader | None = None) -> int:
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

    Returns
    -------
    int
        The event loop's exit code; 2 when the project cannot be opened.
    """
    app = create_app()
    if engine_factory is None and headed:
        from core.engine.runner import EngineRunner

        def engine_factory(p, on_event):  # type: ignore[no-redef]
            return EngineRunner(p, on_event=on_event, headless=False)
    try:
        window = MainWindow(project, run_on_show=run, engine_factory=engine_factory,
                            project_loader=project_loader, record_headless=not (headed or _has_display()),
                            settings=QSettings())
    except Exception as exc:  # noqa: BLE001 - report any load failure as a message, not a traceback
        text = f"cannot open {project}: {type(exc).__name__}: {exc}"
        print(f"steadyhand studio: {text}", file=sys.stderr)
        if os.environ.get("QT_QPA_PLATFORM", "") not in ("offscreen", "minimal"):
            QMessageBox.warning(None, "Steadyhand Studio",  # a missing project path gets a dialog
                                f"Cannot open the project.\n\n{exc}")
        return 2
    window.resize(1400, 900)
    window.show()
    code = app.exec()
    window.shutdown()
    return code


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m studio.app", description="Steadyhand Studio")
    parser.add_argument("project", type=Path)
    parser.add_argument("--run", action="store_true", help="start all flows when the window opens")
    parser.add_argument("--headed", action="store_true",
                        help="show the Chromium window of replays (needed to act on the page during a takeover)")
    ns = parser.parse_args()
    sys.exit(main(ns.project, run=ns.run, headed=ns.headed))
