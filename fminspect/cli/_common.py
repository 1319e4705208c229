"""What the subcommands share: the measure-parameter options, messages on stderr, and the
coverage and problem listings printed before and after a run.

Nothing here imports the measures: every ``fminspect`` command builds the whole parser first.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NoReturn

from fminspect.cli.status import ExitStatus

if TYPE_CHECKING:
    from fminspect.batch.cluster import Cluster
    from fminspect.io.discovery import Dataset
    from fminspect.metrics import Params

#: The subcommands; anything else on the command line opens the inspector window.
SUBCOMMANDS = (
    "score",
    "eval",
    "table",
    "figure",
    "qualitative",
    "gallery",
    "compare",
    "measures",
    "meta",
    "rank",
    "screenshots",
    "worker",
)


class Parser(argparse.ArgumentParser):
    """argparse's parser, its errors one line as every other message of fminspect's: the
    problem, then where the options are listed (argparse prints its whole usage block
    first, the problem at the end of a screenful). Exit status 2, as argparse's."""

    def error(self, message: str) -> NoReturn:
        self.exit(
            ExitStatus.USAGE,
            f"{self.prog}: error: {message}; {self.prog} --help lists the options\n",
        )


if TYPE_CHECKING:
    #: What ``parser.add_subparsers()`` returns: each subcommand module adds its parsers to it.
    Subparsers = argparse._SubParsersAction[Parser]


#: The conventions of :mod:`fminspect.pipeline.conventions` (their names, written out so
#: that building the parser imports nothing heavy; a test checks they are the same).
CONVENTION_NAMES = (
    "pysodmetrics",
    "matlab",
    "classic-benchmark",
    "pysodevaltoolkit",
    "context-original",
)


def add_significance_options(parser: argparse.ArgumentParser, title: str, what: str) -> None:
    """``--ci`` (doing ``what``), ``--resamples``, ``--level``, ``--test``, ``--ci-seed``."""
    st = parser.add_argument_group(title)
    st.add_argument("--ci", action="store_true", help=what)
    st.add_argument(
        "--resamples", type=int, default=1000, metavar="B", help="bootstrap resamples (1000)"
    )
    st.add_argument("--level", type=float, default=0.95, help="confidence level (0.95)")
    st.add_argument(
        "--test",
        choices=("bootstrap", "wilcoxon"),
        default="bootstrap",
        help="paired test: the paired bootstrap (every key; default) or Wilcoxon's "
        "signed-rank test on per-image values (keys that are a mean over images)",
    )
    st.add_argument("--ci-seed", type=int, default=0, help="seed of the resampling (0)")


def significance_setup(args: argparse.Namespace) -> Any:
    """The :class:`~fminspect.batch.significance.Setup` the options ask for (None without
    ``--ci``; ``ValueError`` naming a wrong value)."""
    if not args.ci:
        return None
    from fminspect.batch.significance import Setup

    return Setup(args.resamples, args.level, args.ci_seed, args.test)


def add_param_options(parser: argparse.ArgumentParser) -> None:
    """``--convention``, ``--beta2``, ``--alpha``, ``--param``, ``--gt-inclusive``,
    ``--no-stretch``, ``--interpolation``."""
    g = parser.add_argument_group("measure parameters (defaults: the papers' and pysodmetrics')")
    g.add_argument(
        "--convention",
        choices=CONVENTION_NAMES,
        help="set every knob as that implementation does (docs/exactness.md: 'Conventions'); the "
        "options below are applied after it",
    )
    g.add_argument(
        "--beta2",
        type=float,
        help="β² of the F-measure family, adp/mean/maxFm (0.3; F_β is Margolin et al.'s "
        "Eq. (4)); wFm (β² = 1, their Eq. (14)) and relaxFm (β² = 0.3) keep their papers' "
        "values",
    )
    g.add_argument(
        "--alpha",
        type=float,
        help="α of the S-measure, S = α·S_o + (1 − α)·S_r (0.5; Eq. (15) of Cheng & Fan)",
    )
    g.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="any other parameter of a measure, e.g. s_weights=foreground (the S-measure "
        "paper's Eq. (8) weights), wfm_kernel=paper (σ² = 5 of Eq. (11)), "
        "ap_interpolation=11pt, msiou_counting=exact, "
        "hce_relax=3, biou_ratio=0.01 (repeatable; `fminspect measures --parameters` and the "
        "README list them)",
    )
    g.add_argument(
        "--gt-inclusive",
        action="store_true",
        help="binarise the GT with >= 128 (original Context-measure) instead of > 128",
    )
    g.add_argument(
        "--no-stretch",
        action="store_true",
        help="do not min–max stretch predictions (pysodmetrics stretches)",
    )
    g.add_argument(
        "--interpolation",
        choices=["bilinear", "bicubic", "nearest", "area", "lanczos"],
        help="how a prediction of another size is resized to its GT (bilinear; the "
        "convention's with --convention)",
    )


def add_limit_options(parser: argparse.ArgumentParser) -> None:
    """``--max-pixels``: the largest image a file may declare (checked before decoding)."""
    from fminspect.io.limits import MAX_PIXELS

    parser.add_argument(
        "--max-pixels",
        type=_positive_int,
        default=MAX_PIXELS,
        metavar="N",
        help=f"refuse, before decoding, a file whose header declares more than N pixels "
        f"({MAX_PIXELS:,}; docs/reliability.md: 'Limits')",
    )


def _positive_int(text: str) -> int:
    try:
        value = int(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a number > 0 (finite)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text}")
    return value


def add_cluster_options(parser: argparse.ArgumentParser) -> None:
    """``--scheduler`` and what it needs (see README, 'On a cluster')."""
    g = parser.add_argument_group("on a Dask cluster (docs/evaluation.md: 'On a cluster')")
    g.add_argument("--scheduler", help="Dask scheduler address, e.g. tcp://host:8786")
    g.add_argument(
        "--connect-timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds to reach the scheduler (10)",
    )
    g.add_argument(
        "--worker-timeout",
        type=float,
        default=60.0,
        metavar="S",
        help="seconds to wait for a worker, at the start or when none is left (60)",
    )
    g.add_argument(
        "--allow-version-mismatch",
        action="store_true",
        help="accept workers with another fminspect release or NumPy/SciPy/OpenCV/"
        "scikit-image version (recorded in results.json); never other measure definitions",
    )


def connect_cluster(args: argparse.Namespace, command: str) -> Cluster:
    """The cluster at ``args.scheduler``, reached and checked (raises
    :class:`~fminspect.batch.cluster.ClusterError`, which :func:`fminspect.cli.main`
    prints as one line)."""
    from fminspect.batch.cluster import connect, silence_dask_logs

    silence_dask_logs()
    return connect(
        args.scheduler,
        connect_timeout=args.connect_timeout,
        worker_timeout=args.worker_timeout,
        allow_mismatch=args.allow_version_mismatch,
        on_message=say(f"fminspect {command}: "),
    )


def output_folder_problem(path: os.PathLike[str] | str, option: str = "--out") -> str:
    """Why ``path`` cannot be the output folder ("" if it can): checked before any work,
    by creating it and a temporary file in it (permissions alone say nothing for root or on
    a read-only file system)."""
    import tempfile
    from pathlib import Path

    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        return f"{option} {folder} is a file, not a folder: give a folder (made if needed)"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        return f"{option} {folder}: cannot write there ({exc.strerror or exc})"
    return ""


def batch_options_problem(args: argparse.Namespace) -> str:
    """What is wrong with ``eval``/``meta``'s output folder and worker options ("" if
    nothing), said before the workers, the cluster and the folders are touched."""
    problem = output_folder_problem(args.out)
    if problem:
        return problem
    if args.scheduler and args.jobs != 1:
        return "--jobs is for local processes and --scheduler for a Dask cluster: give one"
    return ""


def params(args: argparse.Namespace) -> Params:
    """The measure parameters of :func:`add_param_options`' options."""
    from fminspect.metrics import Params, parameters

    given: dict[str, Any] = {}
    known = parameters()
    for item in getattr(args, "param", []):
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or name not in known or name in ("beta2", "alpha"):
            valid = ", ".join(n for n in known if n not in ("beta2", "alpha"))
            raise ValueError(
                f"--param {item!r}: give NAME=VALUE with NAME one of {valid} "
                "(--beta2 and --alpha have options of their own)"
            )
        p = known[name]
        try:
            given[name] = text if p.choices else int(text) if p.integer else float(text)
        except ValueError:
            raise ValueError(f"--param {item!r}: {name} takes a number") from None
    if args.beta2 is not None:
        given["beta2"] = args.beta2
    if args.alpha is not None:
        given["alpha"] = args.alpha
    if args.gt_inclusive:
        given["gt_inclusive"] = True
    if args.no_stretch:
        given["stretch"] = False
    base = Params()
    if getattr(args, "convention", None):
        from fminspect.pipeline.conventions import convention

        base = convention(args.convention).apply()
    return replace(base, **given)


def measure_words(args: argparse.Namespace) -> tuple[str, ...] | None:
    """The measures asked for (``--measures``); without them, under a convention that
    reports values of its own (``classic-benchmark``'s max F of the mean P and R), the
    default measures and those; else None (the defaults)."""
    if args.measures:
        return tuple(args.measures)
    if getattr(args, "convention", None):
        from fminspect.pipeline.conventions import convention

        keys = convention(args.convention).keys
        if keys:
            return ("default", *keys)
    return None


def interpolation(args: argparse.Namespace) -> str:
    """The resize rule of :func:`add_param_options`' options (``--interpolation``, else the
    convention's, else bilinear)."""
    if args.interpolation:
        return str(args.interpolation)
    if getattr(args, "convention", None):
        from fminspect.pipeline.conventions import convention

        return convention(args.convention).interpolation
    return "bilinear"


def find_datasets_or_fail(args: argparse.Namespace, command: str) -> list[Any] | int:
    """The datasets of ``args.root`` (or its PySODEvalToolkit configs), restricted to
    ``--datasets``/``--methods``; or the exit status after saying why there are none."""
    from fminspect.batch.workflow import NoDatasetError, SelectionError, find_datasets

    try:
        datasets, _ = find_datasets(
            args.root,
            dataset_config=args.dataset_config,
            method_config=args.method_config,
            datasets=args.datasets,
            methods=args.methods,
            grouped=getattr(args, "groups", None) == "folders",
        )
    except SelectionError as exc:
        return fail(str(exc), command=command)
    except NoDatasetError as exc:
        print_all(exc.problems)
        return 1
    return datasets


def count(n: int, word: str) -> str:
    """``1 group``, ``3 groups``: ``n`` and ``word`` in the singular or plural (``-s``)."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def fail(message: str, code: int = ExitStatus.USAGE, *, command: str = "rank") -> int:
    """Print ``fminspect COMMAND: message`` on stderr; returns ``code`` (the exit status)."""
    print(f"fminspect {command}: {message}", file=sys.stderr)
    return code


def say(prefix: str = "") -> Callable[[str], None]:
    """A function printing its message on stderr after ``prefix``: what the subcommands give
    the library functions as ``on_message``."""

    def print_message(message: str) -> None:
        print(f"{prefix}{message}", file=sys.stderr)

    return print_message


def print_all(lines: Iterable[object]) -> None:
    """Each on its own line on stderr."""
    for line in lines:
        print(line, file=sys.stderr)


def print_coverage(
    datasets: Sequence[Dataset], methods: Sequence[str] | None = None, *, quiet: bool = False
) -> None:
    """Each dataset and each method's coverage on stderr; ``quiet``: only what is wrong (a
    method with missing or extra maps, a dataset without prediction folders)."""
    for ds in datasets:
        if not quiet:
            print(
                f"dataset {ds.name} ({ds.layout}): {len(ds.samples)} GT maps, "
                f"images: {'yes' if ds.image else 'no'}",
                file=sys.stderr,
            )
        elif not ds.method_names:
            print(f"dataset {ds.name}:", file=sys.stderr)
        if not ds.method_names:
            print(
                "  no prediction folders found: put each method's maps in Pred/<method>/ "
                "beside GT/ (Preds/, Predictions/, Results/, Maps/ also work), or give "
                "PySODEvalToolkit configs (README, 'Evaluate whole datasets')",
                file=sys.stderr,
            )
        for m in ds.method_names:
            if methods and m not in methods:
                continue
            cov = ds.coverage[m]
            if quiet and cov.complete and not cov.extra:
                continue
            flag = "" if cov.complete else f"  ⚠ {len(cov.missing)} missing"
            extra = f", {len(cov.extra)} without GT" if cov.extra else ""
            name = f"{ds.name}/{m}" if quiet else m
            print(
                f"  {name:<24} {len(cov.matched):>6}/{len(ds.samples)} matched{extra}{flag}",
                file=sys.stderr,
            )


def print_problems(problems: Sequence[Any], per_kind: int = 3) -> None:
    """Every problem on stderr, but at most ``per_kind`` of a kind: the same severity and
    message, numbers aside, whatever the method (a dataset of RGB maps, or of corrupt files
    of different sizes, would otherwise print one line per file)."""
    counts: dict[tuple[str, str], list[Any]] = {}
    for p in problems:
        kind = (p.severity, re.sub(r"\d+", "#", p.message))
        seen = counts.setdefault(kind, [])
        seen.append(p)
        if len(seen) <= per_kind:
            print(p, file=sys.stderr)
    for (severity, _), group in counts.items():
        if len(group) > per_kind:
            methods = sorted({p.method for p in group if p.method})
            where = f" ({', '.join(methods)})" if methods else ""
            print(
                f"… and {len(group) - per_kind} more {severity}s like “{group[0].message}”"
                f"{where}; problems.csv lists every one",
                file=sys.stderr,
            )


def no_display(command: str) -> bool:
    """Say so and return True when a window cannot be opened: on Linux with no X11 or Wayland
    display and no Qt platform chosen, Qt would abort with its own, less helpful, message."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return False
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return False
    print(
        f"fminspect{' ' + command if command else ''}: no display found (neither DISPLAY "
        "nor WAYLAND_DISPLAY is set), so no window can be opened. Run it on a desktop, "
        "through ssh -X, or under Xvfb (xvfb-run fminspect ...); QT_QPA_PLATFORM=offscreen "
        "runs it without showing anything. `fminspect screenshots DIR` renders every view "
        "to PNG files without a display.",
        file=sys.stderr,
    )
    return True
