"""The exit statuses of every ``fminspect`` command (docs/reliability.md's table lists these,
and ``tests/test_exit_statuses.py`` runs its examples)."""

from __future__ import annotations

import enum

from fminspect.batch.stopped import EXIT_STOPPED


class ExitStatus(enum.IntEnum):
    """What a command's exit status says."""

    #: everything asked for was done
    DONE = 0
    #: some input could not be used (each named), a refused cluster worker, or a file that
    #: could not be read or written (named); the rest was done
    UNUSABLE = 1
    #: wrong options or paths, said before any work
    USAGE = 2
    #: stopped (Ctrl-C, ``kill``, a lost Dask scheduler) with the results so far kept
    STOPPED = EXIT_STOPPED
    #: the reader of the output went away (``… | head``): 128 + SIGPIPE, as a shell says
    READER_GONE = 141
