"""The voting window: a distraction-free, full-screen pairwise comparison.

Pages: *start* (instructions, participant id, a check that every file of the study can be
read), *vote* (references on top, the two candidates below, a progress bar), *pause*
(a break screen, also offered every ``break_every`` trials) and *finished*.

Keys on the vote page: ← or 1 (left is better), → or 2 (right is better), Space or 0
("cannot decide", when the study allows ties), Backspace (undo the last vote), P or Esc
(pause). Each vote goes through :class:`~fminspect.ranking.store.VotingSession`, which
commits it durably before the next pair is drawn. The response time is measured with a
monotonic clock from the moment the pair is shown, without the time spent paused. Keys
pressed within ``min_view_ms`` of a new pair are ignored (a double press must not vote
twice). Nothing on screen names a model: candidates are "left" and "right".
"""

from __future__ import annotations

import sqlite3
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from fminspect.io.validation import LoadError
from fminspect.ranking.export import local_paths, open_pack, write_results
from fminspect.ranking.present import Presenter, Screen
from fminspect.ranking.store import StudyError, StudyStore, VotingSession

BACKGROUND = "#808080"  # neutral mid-grey, the usual psychophysics surround
TEXT = "#f2f2f2"


def to_qimage(rgb: np.ndarray) -> QtGui.QImage:
    """An RGB uint8 array as a QImage (copied)."""
    rgb = np.ascontiguousarray(rgb)
    h, w = rgb.shape[:2]
    return QtGui.QImage(rgb.data, w, h, 3 * w, QtGui.QImage.Format.Format_RGB888).copy()


class Picture(QtWidgets.QWidget):
    """An image scaled to fit its widget (aspect kept, centred) with a caption right under
    it, at any size; or a message instead of the image."""

    def __init__(
        self,
        caption: str = "",
        caption_points: int = 12,
        bold: bool = False,
        colour: str | None = TEXT,
    ) -> None:
        super().__init__()
        self.colour = colour  # None: the palette's text colour
        self._image: QtGui.QImage | None = None
        self._message = ""
        self.caption = caption
        self._font = QtGui.QFont(self.font())
        self._font.setPointSize(caption_points)
        self._font.setBold(bold)
        self.setSizePolicy(
            QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Expanding
        )
        self.setMinimumSize(40, 40)

    def set_image(
        self, rgb: np.ndarray | None, message: str = "", caption: str | None = None
    ) -> None:
        self._image = to_qimage(rgb) if rgb is not None else None
        self._message = message
        if caption is not None:
            self.caption = caption
        self.update()

    def _caption_height(self) -> int:
        lines = self.caption.count("\n") + 1
        return lines * QtGui.QFontMetrics(self._font).height() + 8 if self.caption else 0

    def image_rect(self) -> QtCore.QRect:
        """Where the image is drawn."""
        if self._image is None:
            return QtCore.QRect()
        room = QtCore.QSize(self.width(), max(1, self.height() - self._caption_height()))
        size = self._image.size().scaled(room, QtCore.Qt.AspectRatioMode.KeepAspectRatio)
        x = (self.width() - size.width()) // 2
        y = (room.height() - size.height()) // 2
        return QtCore.QRect(x, y, size.width(), size.height())

    def paintEvent(self, event: QtGui.QPaintEvent) -> None:
        p = QtGui.QPainter(self)
        p.setPen(
            QtGui.QColor(self.colour)
            if self.colour
            else self.palette().color(QtGui.QPalette.ColorRole.WindowText)
        )
        if self._image is not None:
            p.setRenderHint(QtGui.QPainter.RenderHint.SmoothPixmapTransform)
            r = self.image_rect()
            p.drawImage(r, self._image)
            if self.caption:  # one or more lines, each shortened with … to the width
                p.setFont(self._font)
                metrics = QtGui.QFontMetrics(self._font)
                for k, line in enumerate(self.caption.split("\n")):
                    p.drawText(
                        QtCore.QRect(
                            0, r.bottom() + 4 + k * metrics.height(), self.width(), metrics.height()
                        ),
                        QtCore.Qt.AlignmentFlag.AlignHCenter | QtCore.Qt.AlignmentFlag.AlignTop,
                        metrics.elidedText(line, QtCore.Qt.TextElideMode.ElideMiddle, self.width()),
                    )
        elif self._message:
            p.drawText(
                self.rect().adjusted(8, 8, -8, -8),
                QtCore.Qt.TextFlag.TextWordWrap | QtCore.Qt.AlignmentFlag.AlignCenter,
                self._message,
            )
        p.end()


def _label(text: str, size: int = 13, bold: bool = False) -> QtWidgets.QLabel:
    label = QtWidgets.QLabel(text)
    label.setAlignment(QtCore.Qt.AlignmentFlag.AlignCenter)
    label.setWordWrap(True)
    font = label.font()
    font.setPointSize(size)
    font.setBold(bold)
    label.setFont(font)
    return label


class VotingWindow(QtWidgets.QWidget):
    """See the module notes. ``participant`` skips the id field of the start page."""

    def __init__(
        self,
        store: StudyStore,
        *,
        participant: str | None = None,
        paths: dict[str, str] | None = None,
        results_dir: Path | None = None,
        min_view_ms: int = 150,
        break_every: int = 60,
        check_files: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.store = store
        self.design = store.design.with_paths(paths) if paths else store.design
        self.presenter = Presenter(self.design)
        self.results_dir = results_dir
        self.min_view_ms = min_view_ms
        self.break_every = break_every
        self.session: VotingSession | None = None
        self.results_file: Path | None = None
        self._clock = clock  # seconds, monotonic (a test gives its own)
        self._shown_at = clock()
        self._carried_ms = 0.0  # time the current pair was shown before a pause
        self._since_break = 0
        self._shown_index: int | None = None
        self._blocked = False
        self.setWindowTitle(f"fminspect — {self.design.name}")
        self.setObjectName("voting")
        self.setStyleSheet(
            f"#voting, #voting QWidget {{ background: {BACKGROUND}; color: {TEXT}; }}"
            "QLineEdit { background: #f2f2f2; color: #111; padding: 4px; }"
            "QPushButton { background: #5a5a5a; padding: 6px 18px; border: 1px solid #444; }"
            "QProgressBar { border: 1px solid #555; height: 8px; background: #6a6a6a; }"
            "QProgressBar::chunk { background: #d9d9d9; }"
        )
        self.setFocusPolicy(QtCore.Qt.FocusPolicy.StrongFocus)
        self.pages = QtWidgets.QStackedLayout(self)
        self._build_start(participant, check_files)
        self._build_vote()
        self._build_pause()
        self._build_finished()
        if participant and not self._problems:
            self.start(participant)

    # ------------------------------------------------------------------ pages
    def _build_start(self, participant: str | None, check_files: bool) -> None:
        page = QtWidgets.QWidget()
        lay = QtWidgets.QVBoxLayout(page)
        lay.addStretch(1)
        lay.addWidget(_label(self.design.name, 22, True))
        ties = "  ·  Space or 0: cannot decide" if self.design.allow_ties else ""
        lay.addWidget(
            _label(
                "You will see pairs of maps of the same image. Each time, choose the map that better "
                "matches the object"
                + (" outlined by the ground truth" if self.design.show_gt else "")
                + ".\n\n"
                f"← or 1: the left map is better  ·  → or 2: the right map is better{ties}\n"
                "Backspace: undo the last answer  ·  P or Esc: pause",
                13,
            )
        )
        self._problems = self._check_files() if check_files else []
        self.problems_label = _label("\n".join(self._problems[:12]), 11)
        self.problems_label.setVisible(bool(self._problems))
        lay.addWidget(self.problems_label)
        row = QtWidgets.QHBoxLayout()
        row.addStretch(1)
        # a pack made for one participant opens for that participant only
        self.id_edit = QtWidgets.QLineEdit(participant or self.store.pack_for or "")
        self.id_edit.setPlaceholderText("participant id")
        self.id_edit.setMaximumWidth(260)
        self.start_button = QtWidgets.QPushButton("Start")
        self.start_button.clicked.connect(lambda: self.start(self.id_edit.text()))
        self.id_edit.returnPressed.connect(self.start_button.click)
        self.start_button.setEnabled(not self._problems)
        row.addWidget(self.id_edit)
        row.addWidget(self.start_button)
        row.addStretch(1)
        lay.addLayout(row)
        self.start_message = _label("", 12)
        lay.addWidget(self.start_message)
        lay.addStretch(2)
        self.pages.addWidget(page)

    def _check_files(self) -> list[str]:
        from fminspect.ranking.build import check_files

        # (a bar on the terminal that started the window: a study of 1,000 groups has
        # 5,000 files to decode, seconds before the window shows)
        problems = check_files(self.design, progress=None)
        if problems:
            problems.insert(
                0,
                f"This study cannot start: {len(problems)} file(s) cannot be read. "
                "Please tell the experimenter:",
            )
        return problems

    def _build_vote(self) -> None:
        page = QtWidgets.QWidget()
        lay = QtWidgets.QVBoxLayout(page)
        lay.setContentsMargins(24, 16, 24, 12)
        self.ref_row = QtWidgets.QHBoxLayout()
        self.ref_pictures = [Picture(caption_points=11) for _ in range(2)]
        for pic in self.ref_pictures:
            self.ref_row.addWidget(pic)
        lay.addLayout(self.ref_row, 2)
        cands = QtWidgets.QHBoxLayout()
        cands.setSpacing(40)
        self.left_pic = Picture("← or 1", 15, bold=True)
        self.right_pic = Picture("→ or 2", 15, bold=True)
        cands.addWidget(self.left_pic)
        cands.addWidget(self.right_pic)
        lay.addLayout(cands, 5)
        bottom = QtWidgets.QHBoxLayout()
        self.progress = QtWidgets.QProgressBar()
        self.progress.setTextVisible(False)
        self.progress_label = _label("", 11)
        self.progress_label.setMinimumWidth(90)
        hint = "Space: cannot decide  ·  " if self.design.allow_ties else ""
        self.hint = _label(f"{hint}Backspace: undo  ·  P: pause", 11)
        bottom.addWidget(self.progress, 3)
        bottom.addWidget(self.progress_label)
        bottom.addWidget(self.hint, 2)
        lay.addLayout(bottom)
        self.pages.addWidget(page)
        self.vote_page = page

    def _build_pause(self) -> None:
        page = QtWidgets.QWidget()
        lay = QtWidgets.QVBoxLayout(page)
        lay.addStretch(1)
        self.pause_title = _label("Paused", 22, True)
        lay.addWidget(self.pause_title)
        self.pause_text = _label("", 13)
        lay.addWidget(self.pause_text)
        lay.addStretch(1)
        self.pages.addWidget(page)
        self.pause_page = page

    def _build_finished(self) -> None:
        page = QtWidgets.QWidget()
        lay = QtWidgets.QVBoxLayout(page)
        lay.addStretch(1)
        lay.addWidget(_label("Thank you!", 24, True))
        self.finished_text = _label("", 13)
        self.finished_text.setTextInteractionFlags(
            QtCore.Qt.TextInteractionFlag.TextSelectableByMouse
        )
        lay.addWidget(self.finished_text)
        close = QtWidgets.QPushButton("Close")
        close.clicked.connect(self.close)
        row = QtWidgets.QHBoxLayout()
        row.addStretch(1)
        row.addWidget(close)
        row.addStretch(1)
        lay.addLayout(row)
        lay.addStretch(1)
        self.pages.addWidget(page)
        self.finished_page = page

    # ------------------------------------------------------------------ flow
    @property
    def page(self) -> str:
        """'start', 'vote', 'pause' or 'finished'."""
        return ("start", "vote", "pause", "finished")[self.pages.currentIndex()]

    def start(self, participant: str) -> None:
        """Begin (or resume) ``participant``'s session."""
        participant = participant.strip()
        if not participant:
            self.start_message.setText("Please enter your participant id.")
            return
        try:
            self.session = VotingSession(self.store, participant)
        except StudyError as exc:
            self.start_message.setText(str(exc))
            return
        if self.session.position and not self.session.finished:
            self.pause_title.setText("Welcome back")
            self.pause_text.setText(
                f"You have answered {self.session.position} of {self.session.total}. "
                "Press P or Space to continue where you stopped."
            )
            self.pages.setCurrentWidget(self.pause_page)
            self.setFocus()
            return
        self._show_current()
        self.setFocus()

    def _show_current(self, keep_time: bool = False) -> None:
        """Draw the first trial without a vote (or a break, or the end)."""
        assert self.session is not None
        try:  # an active design chooses (and stores) the next chunk of pairs here
            trial = self.session.current()
        except (StudyError, sqlite3.Error) as exc:
            self._shown_index = None
            self.pause_title.setText("The next pairs could not be prepared")
            self.pause_text.setText(
                f"{exc}\nEvery answer so far is saved. Press P or Space to try again, or tell "
                "the experimenter."
            )
            self.pages.setCurrentWidget(self.pause_page)
            return
        if trial is None:
            self._finish()
            return
        if self.break_every and self._since_break >= self.break_every:
            self._since_break = 0
            self._shown_index = None
            self.pause_title.setText("Time for a short break")
            self.pause_text.setText("Rest your eyes for a moment. Press P or Space to continue.")
            self.pages.setCurrentWidget(self.pause_page)
            return
        try:
            screen: Screen | None = self.presenter.screen(trial)
            error = ""
        except (LoadError, ValueError) as exc:
            screen, error = (
                None,
                f"Cannot show this pair: {exc}\nPress P and tell the experimenter.",
            )
        refs = screen.references if screen else ()
        for k, pic in enumerate(self.ref_pictures):
            if k < len(refs):
                pic.set_image(refs[k][1], caption=refs[k][0])
            pic.setVisible(k < len(refs))
        self.left_pic.set_image(screen.left if screen else None, error)
        self.right_pic.set_image(screen.right if screen else None, "")
        self._blocked = screen is None
        self.progress.setMaximum(self.session.total)
        self.progress.setValue(self.session.position)
        self.progress_label.setText(f"{self.session.position + 1} / {self.session.total}")
        self.pages.setCurrentWidget(self.vote_page)
        if not (keep_time and self._shown_index == trial.index):
            self._carried_ms = 0.0
        self._shown_index = trial.index
        self._shown_at = self._clock()

    def _shown_ms(self) -> float:
        """Milliseconds since the shown pair was shown (or shown again after a pause)."""
        return (self._clock() - self._shown_at) * 1e3

    def pause(self) -> None:
        """Show the pause screen; the shown pair's response time stops until it is back."""
        if self.page != "vote" or self.session is None:
            return
        self._carried_ms += self._shown_ms()
        self.pause_title.setText("Paused")
        self.pause_text.setText(
            f"{self.session.position} of {self.session.total} answered — every answer "
            "is saved. Press P or Space to continue."
        )
        self.pages.setCurrentWidget(self.pause_page)

    def _resume(self) -> None:
        if self.session is not None:
            self._show_current(keep_time=True)

    def choose(self, choice: str) -> bool:
        """Vote ``choice`` ('left', 'right', 'tie') on the shown pair; False if not taken."""
        if self.page != "vote" or self.session is None or self._blocked:
            return False
        if choice == "tie" and not self.design.allow_ties:
            return False
        shown_ms = self._shown_ms()
        if shown_ms < self.min_view_ms:
            return False
        rt_ms = self._carried_ms + shown_ms
        # durable before the next pair; an answer that could not be saved is kept and tried
        # again for as long as the participant asks
        session = self.session
        if not self._saved("Your answer", lambda: session.vote(choice, rt_ms)):
            return False
        self._since_break += 1
        self._show_current()
        return True

    def undo(self) -> bool:
        """Take back the last vote and show its pair again."""
        if (
            self.session is None
            or self.page not in ("vote", "finished")
            or not self.session.position
        ):
            return False
        if not self._saved("Taking back your last answer", self.session.undo):
            return False  # nothing changed: the window and the file still agree
        if (
            self.results_file is not None
        ):  # it holds the vote just taken back: written again at the end
            self.results_file.unlink(missing_ok=True)
            self.results_file = None
        self._since_break = max(0, self._since_break - 1)
        self._show_current()
        return True

    def _saved(self, what: str, write: Callable[[], object]) -> bool:
        """Run a write of the study; on failure (a full disk, a lost network drive) say so
        and offer to try again. The store rolls a failed write back, so a retry starts from
        the same state and the window never drifts from the file."""
        while True:
            try:
                write()
                return True
            except (StudyError, sqlite3.Error, OSError) as exc:
                buttons = QtWidgets.QMessageBox.StandardButton
                answer = QtWidgets.QMessageBox.critical(
                    self,
                    "fminspect",
                    f"{what} could not be saved ({exc}). Every earlier answer is safe.\n\n"
                    "Retry: try again now. Cancel: keep this pair on screen and answer it "
                    "again later. If it keeps failing, tell the experimenter.",
                    buttons.Retry | buttons.Cancel,
                    buttons.Retry,
                )
                if answer != buttons.Retry:
                    return False

    def _finish(self) -> None:
        assert self.session is not None
        text = f"You answered all {self.session.total} pairs; every answer is saved."
        if self.results_dir is not None:
            self.results_file = write_results(
                self.store,
                self.session.participant,
                self.results_dir / f"results_{self.session.participant}.json",
            )
            text += f"\n\nPlease send this file to the experimenter:\n{self.results_file}"
        text += "\n\nBackspace: change your last answer."
        self.finished_text.setText(text)
        self.pages.setCurrentWidget(self.finished_page)

    # ------------------------------------------------------------------ keys
    def keyPressEvent(self, event: QtGui.QKeyEvent) -> None:
        k, key = event.key(), QtCore.Qt.Key
        page = self.page
        if page == "vote":
            if k in (key.Key_Left, key.Key_1):
                self.choose("left")
            elif k in (key.Key_Right, key.Key_2):
                self.choose("right")
            elif k in (key.Key_Space, key.Key_0):
                self.choose("tie")
            elif k == key.Key_Backspace:
                self.undo()
            elif k in (key.Key_P, key.Key_Escape):
                self.pause()
            else:
                super().keyPressEvent(event)
        elif page == "pause" and k in (key.Key_P, key.Key_Space, key.Key_Return, key.Key_Enter):
            self._resume()
        elif page == "finished" and k == key.Key_Backspace:
            self.undo()
        elif page == "finished" and k == key.Key_Escape:
            self.close()
        else:
            super().keyPressEvent(event)


def prepare_study(
    path: Path | str, folder: Path | str | None = None
) -> tuple[StudyStore, dict[str, str], Path | None]:
    """Open a study file, or unpack a study pack (into ``folder``, by default next to it):
    the store, the path mapping for the pack's files and where results files go."""
    path = Path(path)
    if not path.exists():
        raise StudyError(f"{path}: no such file")
    if zipfile.is_zipfile(path) or path.suffix.lower() == ".zip":
        target = Path(folder) if folder else path.with_name(path.stem + "_study")
        study = open_pack(path, target)
        return StudyStore(study), local_paths(study), target
    return StudyStore(path), {}, None
