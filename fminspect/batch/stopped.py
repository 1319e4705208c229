"""A run stopped before its end whose results so far are kept (exit status 130).

Raised by :func:`~fminspect.batch.runner.evaluate_datasets` when the user interrupts it
(Ctrl-C, SIGTERM) and by :mod:`fminspect.batch.cluster` when the cluster goes away; its text
is the whole message for the user, saying how much was kept where and how to resume.
"""

from __future__ import annotations

__all__ = ["EXIT_STOPPED", "RunStopped"]

#: Exit status of a stopped run: 128 + SIGINT, as a shell reports Ctrl-C.
EXIT_STOPPED = 130


class RunStopped(RuntimeError):
    """``what`` happened after ``kept`` of ``total`` images; the caller sets :attr:`cache`
    (where they are kept) when it knows it."""

    def __init__(self, what: str, kept: int = 0, total: int = 0) -> None:
        super().__init__(what)
        self.what = what
        self.kept = kept
        self.total = total
        self.cache = ""

    def __str__(self) -> str:
        if not self.total and not self.cache:  # the message says it all
            return f"{self.what}; rerun the same command to resume"
        where = f" in {self.cache}" if self.cache else ""
        return (
            f"{self.what}: {self.kept} of {self.total} images were done and their results "
            f"are kept{where}; rerun the same command to resume"
        )
