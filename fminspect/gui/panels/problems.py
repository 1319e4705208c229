"""The Problems list: every bad file the window met, errors first, each listed once."""

from __future__ import annotations

from PySide6 import QtWidgets

from fminspect.io.validation import Problem


class ProblemsPanel(QtWidgets.QListWidget):
    """A list of :class:`~fminspect.io.validation.Problem`, each shown once."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("problemList")
        self.setWordWrap(True)
        self._listed: set[str] = set()

    def add(self, problems: list[Problem], replace: bool = False) -> list[Problem]:
        """List the problems not listed yet (after clearing the list when ``replace``);
        return those added."""
        if replace:
            self.clear()
            self._listed.clear()
        added = []
        for p in sorted(problems, key=lambda p: p.severity != "error"):
            # a file is unreadable for one reason, which the loader and the browser's batch
            # word differently; a file can have several warnings (16-bit and resized)
            key = f"error: {p.path}" if p.severity == "error" else str(p)
            if key in self._listed:
                continue  # shown already (a sample visited again reports it again)
            self._listed.add(key)
            added.append(p)
            item = QtWidgets.QListWidgetItem(str(p))
            icon = (
                QtWidgets.QStyle.StandardPixmap.SP_MessageBoxCritical
                if p.severity == "error"
                else QtWidgets.QStyle.StandardPixmap.SP_MessageBoxWarning
            )
            item.setIcon(self.style().standardIcon(icon))
            self.addItem(item)
        return added
