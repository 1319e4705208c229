"""The ranking-study windows the inspector's Tools menu opens: voting and analysis."""

from __future__ import annotations

from PySide6 import QtWidgets

from fminspect.gui.app import resize_for_screen


def choose_study(parent: QtWidgets.QWidget, title: str, packs: bool) -> str | None:
    """Ask for a study file (or a study pack when ``packs``); None when cancelled."""
    filters = "Studies (*.sqlite" + (" *.zip)" if packs else ")") + ";;All files (*)"
    path, _ = QtWidgets.QFileDialog.getOpenFileName(parent, title, "", filters)
    return path or None


def open_voting(
    parent: QtWidgets.QWidget, path: str, participant: str | None = None
) -> QtWidgets.QWidget | None:
    """Open the voting window (full screen) on a study file or a study pack; None, with a
    message, when it cannot be opened."""
    from fminspect.gui.voting import VotingWindow, prepare_study
    from fminspect.ranking.store import StudyError

    try:
        store, paths, results_dir = prepare_study(path)
    except StudyError as exc:
        QtWidgets.QMessageBox.warning(parent, "fminspect", str(exc))
        return None
    window = VotingWindow(store, participant=participant, paths=paths, results_dir=results_dir)
    window.showFullScreen()
    return window


def open_analysis(parent: QtWidgets.QWidget, path: str) -> QtWidgets.QMainWindow | None:
    """Open the analysis window of a study; None, with a message, when it cannot be read."""
    from fminspect.gui.analysis import AnalysisWindow
    from fminspect.ranking.store import StudyError, StudyStore

    try:
        window = AnalysisWindow(StudyStore(path))
    except StudyError as exc:
        QtWidgets.QMessageBox.warning(parent, "fminspect", str(exc))
        return None
    resize_for_screen(window, 1400, 900)
    window.show()
    return window
