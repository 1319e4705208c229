"""Opening a window from the command line: the inspector, the voting window, the analysis.

The only module that knows every window; the command line imports it (and only it) for its
GUI subcommands, and nothing in the gui package imports it, so the windows do not depend on
each other through the application set-up.
"""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore

from fminspect.gui.app import application, drop_offscreen_notices, offscreen, resize_for_screen
from fminspect.gui.theme import apply_theme
from fminspect.io.discovery import ToolkitConfigs


def run_inspector(
    root: str | ToolkitConfigs | None = None,
    *,
    gt: str | None = None,
    preds: list[str] | None = None,
    image: str | None = None,
    theme: str | None = None,
    dataset: str | None = None,
    sample: str | None = None,
) -> int:
    """Open the inspector (on ``root`` — a folder or PySODEvalToolkit's configs —, on
    explicit files, or on the demo) and run Qt."""
    from fminspect.gui.main_window import InspectorWindow

    app = application()
    if offscreen():
        QtCore.qInstallMessageHandler(drop_offscreen_notices)
    settings = QtCore.QSettings()
    apply_theme(app, theme or str(settings.value("theme", "system")))
    window = InspectorWindow(settings=settings)
    resize_for_screen(window, 1500, 950)
    if gt is not None:
        window.open_files(Path(gt), [Path(p) for p in preds or []], Path(image) if image else None)
    elif root is not None:  # read while the window shows; then the sample asked for
        window.open_in_background(root, (lambda: window.go_to(sample, dataset)) if sample else None)
    else:
        window.open_demo()
    window.show()
    return app.exec()


def run_analysis(path: Path | str) -> int:
    """``fminspect rank analyze``: open the analysis window and run Qt."""
    from fminspect.gui.analysis import AnalysisWindow
    from fminspect.ranking.store import StudyStore

    app = application()
    apply_theme(app, str(QtCore.QSettings().value("theme", "system")))
    window = AnalysisWindow(StudyStore(path))
    resize_for_screen(window, 1400, 900)
    window.show()
    return app.exec()


def run_voting(
    path: Path | str,
    *,
    participant: str | None = None,
    folder: Path | str | None = None,
    windowed: bool = False,
) -> int:
    """``fminspect rank vote``: open the voting window and run Qt."""
    from fminspect.gui.voting import VotingWindow, prepare_study

    app = application()
    store, paths, results_dir = prepare_study(path, folder)
    window = VotingWindow(store, participant=participant, paths=paths, results_dir=results_dir)
    if windowed:
        resize_for_screen(window, 1280, 860)
        window.show()
    else:
        window.showFullScreen()
    return app.exec()
