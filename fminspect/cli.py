"""The ``fminspect`` command.

Subcommands that need no display import no Qt; the GUI is imported only by the GUI
subcommands.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fminspect import __version__


def _add_param_options(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("measure parameters (defaults: the papers' and pysodmetrics')")
    g.add_argument(
        "--beta2",
        type=float,
        default=0.3,
        help="β² of the F-measure family, adp/mean/maxFm (0.3); wFm (β² = 1) and relaxFm "
        "(β² = 0.3) keep their papers' values",
    )
    g.add_argument("--alpha", type=float, default=0.5, help="α of the S-measure (0.5)")
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
        default="bilinear",
        choices=["bilinear", "bicubic", "nearest", "area", "lanczos"],
        help="how a prediction of another size is resized to its GT (bilinear)",
    )


def _params(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from fminspect.metrics import Params

    return Params(
        beta2=args.beta2,
        alpha=args.alpha,
        gt_inclusive=args.gt_inclusive,
        stretch=not args.no_stretch,
    )


def _cmd_score(args: argparse.Namespace) -> int:
    from fminspect.io.validation import LoadError
    from fminspect.metrics import MEASURES
    from fminspect.pipeline.sample import score_files

    params = _params(args)
    try:
        scored = score_files(
            args.pred,
            args.gt,
            image=getattr(args, "img", None),
            params=params,
            interpolation=args.interpolation,
        )
    except LoadError as exc:
        print(f"fminspect: {exc}", file=sys.stderr)
        return 2
    scores = scored.scores()
    notes = [str(n) for n in scored.notes]
    if args.json:
        print(
            json.dumps(
                {
                    "fminspect": __version__,
                    "prediction": str(args.pred),
                    "gt": str(args.gt),
                    "params": {**params.as_dict(), "interpolation": args.interpolation},
                    "normalization": params.norm.label,
                    "scores": scores,
                    "labels": {m.key: m.label(params) for m in MEASURES if m.key in scores},
                    "notes": notes,
                },
                indent=2,
            )
        )
        return 0
    print(
        f"prediction: {args.pred}\nGT:         {args.gt}\n"
        f"normalisation: {params.norm.label}   (fminspect {__version__})\n"
    )
    shown = [m for m in MEASURES if m.key in scores]
    width = max(len(m.label(params)) for m in shown)
    for m in shown:
        arrow = "↑" if m.higher_is_better else "↓"
        print(f"  {m.label(params):<{width}}  {scores[m.key]:.6f} {arrow}")
    for n in notes:
        print(f"note: {n}")
    return 0


def _unknown_methods(datasets, methods) -> str | None:  # type: ignore[no-untyped-def]
    """A message naming the ``--methods`` no dataset has (None when all exist)."""
    known = {m for d in datasets for m in d.method_names}
    unknown = [m for m in methods or [] if m not in known]
    if not unknown:
        return None
    # a folder of that name with no maps in it says more than "no method"
    why = [f"{p.path}: {p.message}" for d in datasets for p in d.problems if p.method in unknown]
    return (
        f"no method named {', '.join(unknown)} (found: {', '.join(sorted(known)) or 'none'})"
        + "".join(f"\n  {w}" for w in why)
    )


def _print_coverage(datasets, methods=None, *, quiet: bool = False) -> None:  # type: ignore[no-untyped-def]
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


def _print_problems(problems: Sequence[Any], per_kind: int = 3) -> None:
    """Every problem on stderr, but at most ``per_kind`` of a kind: the same severity and
    message, numbers aside, whatever the method (a dataset of RGB maps, or of corrupt files
    of different sizes, would otherwise print one line per file)."""
    import re

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


def _cmd_eval(args: argparse.Namespace) -> int:
    if args.jobs <= 1 or args.scheduler:
        return _run_eval(args, None)
    from fminspect.batch.pool import LocalPool

    # the workers import the measures while this process does
    pool = LocalPool(args.jobs, preload=True)
    try:
        return _run_eval(args, pool)
    finally:
        if pool.fallback:
            print(f"fminspect eval: note: {pool.fallback}", file=sys.stderr)
        pool.close()


def _run_eval(args: argparse.Namespace, pool: Any) -> int:
    from fminspect.batch import EvalConfig, evaluate_datasets
    from fminspect.batch.outputs import write_all
    from fminspect.batch.plots import PlotError, PlotProcess
    from fminspect.io.discovery import discover, from_toolkit_configs
    from fminspect.metrics import Params

    try:  # a wrong measure or parameter is reported before the folders are read
        config = EvalConfig(
            _params(args), tuple(args.measures) if args.measures else None, args.interpolation
        )
    except ValueError as exc:
        print(f"fminspect eval: {exc}", file=sys.stderr)
        return 2
    from fminspect.metrics.suite import FIELD_PARAMS, MEASURES

    beta2_keys = [m.key for m in MEASURES if "beta2" in FIELD_PARAMS.get(m.field, ())]
    if args.beta2 != Params().beta2 and args.measures and not set(beta2_keys) & set(args.measures):
        print(
            f"fminspect eval: note: --beta2 {args.beta2:g} changes only {', '.join(beta2_keys)}, "
            "none of which is asked for (wFm keeps β² = 1 and relaxFm β² = 0.3)",
            file=sys.stderr,
        )
    if args.dataset_config or args.method_config:
        if not (args.dataset_config and args.method_config):
            print(
                "fminspect eval: --dataset-config and --method-config go together", file=sys.stderr
            )
            return 2
        datasets, problems = from_toolkit_configs(args.dataset_config, args.method_config)
    elif args.root is None:
        print(
            "fminspect eval: give a dataset folder, or --dataset-config and --method-config",
            file=sys.stderr,
        )
        return 2
    else:
        datasets, problems = discover(args.root)
    if args.datasets:
        unknown = sorted(set(args.datasets) - {d.name for d in datasets})
        if unknown:
            print(
                f"fminspect eval: no dataset named {', '.join(unknown)} (found: "
                f"{', '.join(d.name for d in datasets) or 'none'})",
                file=sys.stderr,
            )
            return 2
        datasets = [d for d in datasets if d.name in args.datasets]
    if not datasets:
        for p in problems:
            print(p, file=sys.stderr)
        return 1
    message = _unknown_methods(datasets, args.methods)
    if message:
        print(f"fminspect eval: {message}", file=sys.stderr)
        return 2
    _print_coverage(datasets, args.methods, quiet=args.quiet)
    out = Path(args.out)
    # a second process imports Matplotlib while the images are scored, then draws the plots
    plotting: Any = contextlib.nullcontext()
    if not args.no_plots:
        try:
            plotting = PlotProcess()
        except OSError as exc:  # no child process possible: the plots are drawn here
            print(f"fminspect eval: plots drawn in this process ({exc})", file=sys.stderr)
    plot_error = ""
    with plotting as plotter:
        report = evaluate_datasets(
            datasets,
            config,
            cache_path=args.cache or out / "cache.sqlite",
            methods=args.methods,
            jobs=args.jobs,
            scheduler=args.scheduler,
            pool=pool,
            progress=None if not args.quiet else False,
            register=True,  # the window opening these datasets finds these results
        )
        try:
            write_all(report, out, plots=not args.no_plots, plotter=plotter)
        except PlotError as exc:  # every other output file is written by then
            plot_error = str(exc)
    for message in getattr(plotter, "messages", ()):
        print(f"plots: {message}", file=sys.stderr)
    _print_problems(report.problems)
    for r in report.results:  # what was found may not all have been readable
        if r.coverage.failed:
            c = r.coverage
            print(
                f"  {r.dataset}/{r.method}: evaluated on {c.label} "
                f"({len(c.failed)} could not be evaluated, see the problems above"
                + (f", {len(c.missing)} missing" if c.missing else "")
                + ")",
                file=sys.stderr,
            )
    if plot_error:
        print(f"fminspect eval: not every plot was written: {plot_error}", file=sys.stderr)
    errors = sum(p.severity == "error" for p in report.problems)
    warnings = sum(p.severity == "warning" for p in report.problems)
    part = (
        f" ({report.partial} of them only for the measures not yet in the cache)"
        if report.partial
        else ""
    )
    print(
        f"{report.evaluated} (image, method) pairs evaluated: {report.computed} computed in "
        f"{report.seconds:.2f} s{part}, {report.reused} wholly from the cache; "
        f"{errors} error{'s' if errors != 1 else ''}, "
        f"{warnings} warning{'s' if warnings != 1 else ''}",
        file=sys.stderr,
    )
    if not args.quiet:
        print((out / "summary.md").read_text(encoding="utf-8"))
    print(f"results written to {out}", file=sys.stderr)
    return 0 if report.evaluated else 1


# --------------------------------------------------------------------------- fminspect meta
def _meta_config(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    from fminspect.meta import MetaConfig

    metas = list(
        args.metas or ["generic", "noise_map", "gt_switch", "noise_injection", "annotation"]
    )
    if args.application and "application" not in metas:
        metas.append("application")
    if args.ranked and "human" not in metas:
        metas.append("human")
    return MetaConfig(
        params=_params(args),
        keys=tuple(args.measures) if args.measures else None,
        metas=tuple(metas),
        seed=args.seed,
        interpolation=args.interpolation,
        circle_radius=args.circle_radius,
        gaussian_sigma=args.gaussian_sigma,
        noise_mean=args.noise_mean,
        noise_std=args.noise_std,
        good_key=args.good_key,
        good_min=args.good_min,
        inject_fraction=args.inject_fraction,
        inject_std=args.inject_std,
        inject_fg_threshold=args.inject_threshold,
        morph_size=args.morph_size,
        morph_iterations=args.morph_iterations,
        application=args.application,
    )


def _cmd_meta(args: argparse.Namespace) -> int:
    from fminspect.io.discovery import discover
    from fminspect.meta import run_meta
    from fminspect.meta.outputs import protocol_caption, write_meta

    try:
        config = _meta_config(args)
    except ValueError as exc:
        print(f"fminspect meta: {exc}", file=sys.stderr)
        return 2
    datasets, problems = discover(args.root) if args.root else ([], [])
    if args.datasets:
        datasets = [d for d in datasets if d.name in args.datasets]
    if not datasets and not args.ranked:
        for p in problems:
            print(p, file=sys.stderr)
        print(
            "fminspect meta: no dataset found (give a dataset folder and/or --ranked DIR)",
            file=sys.stderr,
        )
        return 1
    message = _unknown_methods(datasets, args.methods)
    if message:
        print(f"fminspect meta: {message}", file=sys.stderr)
        return 2
    _print_coverage(datasets, args.methods, quiet=args.quiet)
    out = Path(args.out)
    report = run_meta(
        datasets,
        config,
        cache_path=args.cache or out / "cache.sqlite",
        methods=args.methods,
        jobs=args.jobs,
        scheduler=args.scheduler,
        ranked=args.ranked or (),
        progress=None if not args.quiet else False,
    )
    report.problems = problems + report.problems
    write_meta(report, out, plot=not args.no_plots)
    for p in report.problems:
        print(p, file=sys.stderr)
    if not args.quiet:
        print((out / "summary.md").read_text(encoding="utf-8"))
    else:
        print(protocol_caption(report))
    print(f"{len(report.cases)} cases; results written to {out}", file=sys.stderr)
    return 0 if report.summary else 1


def _add_meta_parser(sub) -> None:  # type: ignore[no-untyped-def]
    from fminspect.meta import META_MEASURES

    m = sub.add_parser(
        "meta",
        help="meta-measures: evaluate the measures themselves, as the papers do",
        description="Run the meta-measures of the S-measure, E-measure, weighted-F and "
        "Context-measure papers on any dataset. Writes cases.csv (every comparison), "
        "summary.{csv,md,tex}, protocol.json and meta.{png,pdf}.",
    )
    m.add_argument(
        "root", type=Path, nargs="?", help="dataset folder (the layouts fminspect eval reads)"
    )
    m.add_argument(
        "--metas",
        nargs="+",
        choices=META_MEASURES,
        metavar="META",
        help=f"which meta-measures ({', '.join(META_MEASURES)}); default: the first five",
    )
    m.add_argument(
        "--measures", nargs="+", metavar="KEY", help="only these measures (default: all)"
    )
    m.add_argument("--methods", nargs="+", help="only these models")
    m.add_argument("--datasets", nargs="+", help="only these datasets")
    m.add_argument(
        "--ranked", type=Path, nargs="+", help="human-ranked dataset folders (adds 'human')"
    )
    m.add_argument(
        "--application", help="application ranking: 'grabcut' or package.module:function"
    )
    m.add_argument("--out", default="fminspect-meta", help="output folder (fminspect-meta)")
    m.add_argument("--jobs", type=int, default=1, help="local worker processes (1)")
    m.add_argument("--scheduler", help="Dask scheduler address")
    m.add_argument(
        "--cache", type=Path, help="result cache (default OUT/cache.sqlite; share fminspect eval's)"
    )
    m.add_argument("--seed", type=int, default=0, help="seed of every random choice (0)")
    m.add_argument("--no-plots", action="store_true")
    m.add_argument("--quiet", action="store_true")
    p = m.add_argument_group("protocol (defaults as in the papers where they state them)")
    p.add_argument(
        "--circle-radius", type=float, default=0.25, help="generic circle radius × min(h, w) (0.25)"
    )
    p.add_argument(
        "--gaussian-sigma", type=float, default=0.25, help="generic Gaussian σ × min(h, w) (0.25)"
    )
    p.add_argument("--noise-mean", type=float, default=0.5, help="noise map mean (0.5)")
    p.add_argument("--noise-std", type=float, default=0.25, help="noise map σ (0.25)")
    p.add_argument(
        "--good-key", default="adpDice", help="GT switch: 'good map' measure (adpDice = F1)"
    )
    p.add_argument("--good-min", type=float, default=0.6, help="GT switch: good when ≥ this (0.6)")
    p.add_argument(
        "--inject-fraction",
        type=float,
        default=0.01,
        help="noise injection: share of the region's pixels (0.01)",
    )
    p.add_argument("--inject-std", type=float, default=0.2, help="noise injection: σ (0.2)")
    p.add_argument(
        "--inject-threshold",
        type=float,
        default=0.5,
        help="noise injection: predicted foreground is map ≥ this (0.5)",
    )
    p.add_argument("--morph-size", type=int, default=3, help="annotation errors: kernel size (3)")
    p.add_argument(
        "--morph-iterations", type=int, default=1, help="annotation errors: iterations (1)"
    )
    _add_param_options(m)
    m.set_defaults(func=_cmd_meta)


# --------------------------------------------------------------------------- fminspect rank
def _fail(message: str, code: int = 2) -> int:
    print(f"fminspect rank: {message}", file=sys.stderr)
    return code


def _open_study(path: Path):  # type: ignore[no-untyped-def]
    from fminspect.ranking.store import StudyStore

    return StudyStore(path)


def _cmd_rank_create(args: argparse.Namespace) -> int:
    from fminspect.io.discovery import discover
    from fminspect.ranking.build import build_design, check_files, groups_from_dataset
    from fminspect.ranking.store import StudyStore

    if args.study.exists():
        return _fail(f"{args.study} already exists; choose another file")
    datasets, problems = discover(args.root)
    for p in problems:
        print(p, file=sys.stderr)
    if args.datasets:
        datasets = [d for d in datasets if d.name in args.datasets]
    if not datasets:
        return _fail(f"no dataset found in {args.root}")
    if args.models and args.auto:
        return _fail("give either --models or --auto, not both")
    known_models = {m for d in datasets for m in d.method_names}
    unknown = [m for m in args.models or [] if m not in known_models]
    if unknown:
        return _fail(
            f"no model named {', '.join(unknown)} (found: {', '.join(sorted(known_models))})"
        )
    known_samples = {s.name for d in datasets for s in d.samples}
    for name in [n for n in args.samples or [] if n not in known_samples]:
        print(f"warning: no sample named {name!r}; left out", file=sys.stderr)
    scores_by_ds: dict[str, dict[str, dict[str, float]]] = {}
    if args.auto:
        from fminspect.ranking.build import score_maps

        print(
            f"scoring every map with {args.by} to pick {args.auto} maps of clearly "
            "different quality…",
            file=sys.stderr,
        )
        unscored: list[Any] = []
        try:
            scores_by_ds = score_maps(
                datasets, args.by, args.study.with_suffix(".cache.sqlite"), args.jobs, unscored
            )
        except ValueError as exc:
            return _fail(f"--by: {exc}")
        for p in unscored:  # these maps cannot be shown either
            print(p, file=sys.stderr)
    groups = []
    for ds in datasets:
        groups += groups_from_dataset(
            ds,
            samples=args.samples,
            models=args.models,
            scores=scores_by_ds.get(ds.name) if args.auto else None,
            per_group=args.auto or 3,
            min_gap=args.min_gap,
            first_index=len(groups) + 1,
        )
    grouped = {(g.dataset, g.sample) for g in groups}
    left_out = [
        f"{ds.name}/{s.name}"
        for ds in datasets
        for s in ds.samples
        if (args.samples is None or s.name in args.samples) and (ds.name, s.name) not in grouped
    ]
    if left_out:
        why = (
            f"fewer than two maps whose {args.by} scores differ by --min-gap {args.min_gap:g}"
            if args.auto
            else "fewer than two of the chosen maps"
        )
        print(
            f"{len(left_out)} sample{'s' if len(left_out) != 1 else ''} left out ({why}): "
            + ", ".join(left_out[:5])
            + (", …" if len(left_out) > 5 else ""),
            file=sys.stderr,
        )
    if args.limit:
        import numpy as np

        keep = sorted(
            np.random.default_rng(args.seed).choice(
                len(groups), min(args.limit, len(groups)), replace=False
            )
        )
        groups = [groups[i] for i in keep]
    if not groups:
        return _fail("no sample has at least two of the chosen maps")
    if args.auto:
        sizes = sorted({len(g.items) for g in groups})
        if sizes != [args.auto]:
            print(
                f"warning: --auto {args.auto}: groups have {', '.join(map(str, sizes))} maps "
                f"(fewer models, or scores closer than --min-gap {args.min_gap:g})",
                file=sys.stderr,
            )
    from fminspect.ranking.design import new_design

    unreadable = check_files(new_design("check", groups))
    if unreadable:
        return _fail(
            "files of the study cannot be read; fix or leave them out (--samples/--models):\n  "
            + "\n  ".join(unreadable),
            1,
        )
    selection = {
        "root": str(args.root.resolve()),
        "datasets": [d.name for d in datasets],
        "models": args.models,
        "auto": args.auto,
        "by": args.by if args.auto else None,
        "min_gap": args.min_gap if args.auto else None,
        "limit": args.limit,
    }
    try:
        design = build_design(
            args.name or args.study.stem,
            groups,
            args.study,
            checks=args.checks,
            seed=args.seed,
            presentation=args.presentation,
            overlay_alpha=args.alpha,
            show_gt=not args.hide_gt,
            show_image=not args.hide_image,
            allow_ties=args.ties,
            repeats=args.repeats,
            selection=selection,
        )
        StudyStore.create(args.study, design).close()
    except (ValueError, OSError) as exc:
        return _fail(str(exc))
    n_pairs = sum(len(g.items) * (len(g.items) - 1) // 2 for g in groups)
    per_person = n_pairs + min(args.repeats, max(0, n_pairs - 3)) + args.checks
    seconds = per_person * 3
    duration = f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds} s"
    print(
        f"study {args.study}: {len(groups)} groups, {n_pairs} pairs; "
        f"each participant sees {per_person} trials (~{duration} at 3 s per vote)"
    )
    print(
        f"vote here:      fminspect rank vote {args.study}\n"
        f"or pack it:     fminspect rank pack {args.study} {args.study.with_suffix('.zip')}"
    )
    return 0


def _cmd_rank_pack(args: argparse.Namespace) -> int:
    from fminspect.ranking.export import write_pack

    with _open_study(args.study) as store:
        out = write_pack(store, args.out)
    print(f"study pack written to {out}; a participant runs:  fminspect rank vote {out.name}")
    return 0


def _no_display(command: str) -> bool:
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


def _cmd_rank_vote(args: argparse.Namespace) -> int:
    if _no_display("rank vote"):
        return 2
    from fminspect.gui.launch import run_voting

    return run_voting(
        args.study, participant=args.participant, folder=args.folder, windowed=args.windowed
    )


def _cmd_rank_analyze(args: argparse.Namespace) -> int:
    if _no_display("rank analyze"):
        return 2
    from fminspect.gui.launch import run_analysis

    return run_analysis(args.study)


def _cmd_rank_export_results(args: argparse.Namespace) -> int:
    from fminspect.ranking.export import write_results

    with _open_study(args.study) as store:
        people = [args.participant] if args.participant else store.participants()
        folder = Path(args.out or ".")
        folder.mkdir(parents=True, exist_ok=True)
        for p in people:
            out = write_results(store, p, folder / f"results_{p}.json")
            print(out)
    return 0


def _cmd_rank_merge(args: argparse.Namespace) -> int:
    from fminspect.ranking.export import merge_results_file
    from fminspect.ranking.store import StudyError

    failed = 0
    with _open_study(args.study) as store:
        for f in args.results:
            try:
                n = merge_results_file(store, f)
                print(f"{f}: {n} votes merged")
            except StudyError as exc:
                failed += 1
                print(f"refused: {exc}", file=sys.stderr)
    return 1 if failed else 0


def _aggregate(args: argparse.Namespace, store):  # type: ignore[no-untyped-def]
    from fminspect.ranking.aggregate import Rule, aggregate
    from fminspect.ranking.store import StudyError

    try:
        rule = Rule.parse(args.rule)
    except ValueError as exc:
        raise StudyError(f"--rule: {exc}") from None
    unknown = [p for p in args.exclude or () if p not in store.participants()]
    if unknown:
        raise StudyError(f"--exclude: no participant named {', '.join(unknown)} in {store.path}")
    result = aggregate(
        store,
        rule,
        exclude_failing=args.exclude_failing,
        min_attention=args.min_attention,
        exclude=args.exclude or (),
    )
    counted = sum(not s.excluded for s in result.participants)
    if rule.name == "k_of_n" and rule.k > counted:
        print(
            f"fminspect rank: note: {rule} needs {rule.k} participants to agree, but only "
            f"{counted} participants' votes are counted, so no group can reach consensus",
            file=sys.stderr,
        )
    return result


def _cmd_rank_aggregate(args: argparse.Namespace) -> int:
    from fminspect.ranking.export import write_votes_csv
    from fminspect.ranking.report import study_summary, write_study_report

    with _open_study(args.study) as store:
        result = _aggregate(args, store)
        if args.out:
            write_study_report(result, args.out)
            write_votes_csv(store, Path(args.out) / "votes.csv")
            print(f"written to {args.out}", file=sys.stderr)
    print(study_summary(result))
    return 0


def _cmd_rank_export(args: argparse.Namespace) -> int:
    from fminspect.ranking.export import export_ranked

    with _open_study(args.study) as store:
        result = _aggregate(args, store)
    if not result.consensual:
        return _fail(
            f"no group reaches consensus under {result.rule}; nothing exported "
            "(fminspect rank aggregate shows why)",
            1,
        )
    out = export_ranked(result, args.out)
    print(
        f"{len(result.consensual)} of {len(result.groups)} groups reached consensus "
        f"({result.rule}); human-ranked dataset written to {out}"
    )
    return 0


def _cmd_rank_report(args: argparse.Namespace) -> int:
    from fminspect.metrics import measure_keys
    from fminspect.ranking.agreement import measures_vs_humans
    from fminspect.ranking.export import load_ranked
    from fminspect.ranking.report import agreement_markdown, ranked_groups, write_agreement
    from fminspect.ranking.store import StudyError

    if (args.study is None) == (args.ranked is None):
        return _fail("give a study file or --ranked DIR (one of them)")
    try:
        if args.ranked is not None:
            groups, problems = load_ranked(args.ranked)
            title = args.ranked.name
        else:
            with _open_study(args.study) as store:
                result = _aggregate(args, store)
            groups, problems = ranked_groups(result)
            title = f"{result.design.name} ({result.rule})"
    except StudyError as exc:
        return _fail(str(exc), 1)
    for p in problems:
        print(f"skipped: {p}", file=sys.stderr)
    if not groups:
        return _fail("no group with a consensus ranking to compare with", 1)
    keys = args.measures or measure_keys(with_images=all(g.image is not None for g in groups))
    try:
        report = measures_vs_humans(
            groups, keys, params=_params(args), seed=args.seed, n_boot=args.bootstrap
        )
    except ValueError as exc:
        return _fail(str(exc))
    print(agreement_markdown(report, title))
    if args.out:
        write_agreement(report, args.out, title)
        print(f"table and bar chart written to {args.out}", file=sys.stderr)
    return 0


def _cmd_rank_simulate(args: argparse.Namespace) -> int:
    from fminspect.ranking.simulate import SimulatedParticipant, simulate, strengths_by_position

    with _open_study(args.study) as store:
        truth = strengths_by_position(store, args.gap)
        for k in range(args.participants):
            who = SimulatedParticipant(
                f"{args.prefix}{k + 1}",
                truth,
                left_bias=args.left_bias,
                lapse=args.lapse,
                tie_margin=args.tie_margin,
                seed=args.seed + k,
            )
            n = simulate(store, who)
            print(f"{who.id}: {n} simulated votes")
    return 0


def _add_rule_options(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("consensus")
    g.add_argument(
        "--rule",
        default="unanimous",
        help="unanimous (FMDatabase), k_of_n:K, majority, or bt:P (default unanimous)",
    )
    g.add_argument(
        "--exclude-failing", action="store_true", help="drop participants failing attention checks"
    )
    g.add_argument(
        "--min-attention",
        type=float,
        default=1.0,
        help="attention-check pass rate needed with --exclude-failing (default 1.0: all)",
    )
    g.add_argument("--exclude", nargs="+", metavar="ID", help="drop these participants")


def _add_rank_parser(sub) -> None:  # type: ignore[no-untyped-def]
    rank = sub.add_parser(
        "rank",
        help="human-ranking studies: create, pack, vote, merge, aggregate, export, report",
        description="Pairwise human-ranking studies (FMDatabase/CamoHR style). "
        "Typical flow: create → vote (or pack → vote elsewhere → merge) → aggregate → "
        "export / report.",
    )
    rs = rank.add_subparsers(dest="rank_command", required=True)
    c = rs.add_parser("create", help="create a study from a dataset folder")
    c.add_argument("study", type=Path, help="the study file to create (.sqlite)")
    c.add_argument("root", type=Path, help="dataset folder (the layouts fminspect eval reads)")
    c.add_argument("--name", help="study name (default: the file name)")
    c.add_argument("--datasets", nargs="+", help="only these datasets")
    c.add_argument("--samples", nargs="+", help="only these samples")
    c.add_argument("--models", nargs="+", help="these models' maps (default: all)")
    c.add_argument(
        "--auto", type=int, metavar="N", help="pick N maps per image of clearly different quality"
    )
    c.add_argument("--by", default="Sm", metavar="KEY", help="measure used by --auto (Sm)")
    c.add_argument(
        "--min-gap", type=float, default=0.05, help="least score gap between picked maps (0.05)"
    )
    c.add_argument("--limit", type=int, help="keep a random subset of this many groups")
    c.add_argument(
        "--presentation",
        choices=["side_by_side", "overlay"],
        default="side_by_side",
        help="maps side by side in grey, or overlaid on the image (CamoHR)",
    )
    c.add_argument("--alpha", type=float, default=0.5, help="overlay opacity (0.5)")
    c.add_argument("--hide-gt", action="store_true", help="do not show the GT as reference")
    c.add_argument("--hide-image", action="store_true", help="do not show the image as reference")
    c.add_argument("--ties", action="store_true", help="allow 'cannot decide'")
    c.add_argument("--repeats", type=int, default=0, help="pairs shown twice (self-consistency)")
    c.add_argument("--checks", type=int, default=0, help="attention checks (GT vs noise/empty)")
    c.add_argument("--seed", type=int, default=0, help="seed of every random choice (0)")
    c.add_argument("--jobs", type=int, default=1, help="worker processes for --auto scoring")
    c.set_defaults(func=_cmd_rank_create)
    p = rs.add_parser("pack", help="write a self-contained study pack (zip) for another computer")
    p.add_argument("study", type=Path)
    p.add_argument("out", type=Path, help="the zip to write")
    p.set_defaults(func=_cmd_rank_pack)
    v = rs.add_parser("vote", help="open the voting window on a study file or a study pack")
    v.add_argument("study", type=Path, help="study file (.sqlite) or study pack (.zip)")
    v.add_argument("--participant", help="participant id (asked for when missing)")
    v.add_argument(
        "--folder", type=Path, help="where to unpack a study pack (default: STEM_study/ beside it)"
    )
    v.add_argument("--windowed", action="store_true", help="a normal window instead of full screen")
    v.set_defaults(func=_cmd_rank_vote)
    a = rs.add_parser("analyze", help="open the analysis window on a study")
    a.add_argument("study", type=Path)
    a.set_defaults(func=_cmd_rank_analyze)
    e = rs.add_parser(
        "export-results", help="write participants' results files (JSON) to send to the lab"
    )
    e.add_argument("study", type=Path)
    e.add_argument("--participant", help="only this participant")
    e.add_argument("--out", type=Path, help="folder (default: current)")
    e.set_defaults(func=_cmd_rank_export_results)
    m = rs.add_parser("merge", help="merge results files into the lab's study (duplicates refused)")
    m.add_argument("study", type=Path)
    m.add_argument("results", type=Path, nargs="+")
    m.set_defaults(func=_cmd_rank_merge)
    g = rs.add_parser(
        "aggregate", help="consensus, participants, agreement; print and write tables"
    )
    g.add_argument("study", type=Path)
    g.add_argument(
        "--out", type=Path, help="write groups/participants/votes CSV and summaries here"
    )
    _add_rule_options(g)
    g.set_defaults(func=_cmd_rank_aggregate)
    x = rs.add_parser("export", help="write the consensus as a human-ranked dataset")
    x.add_argument("study", type=Path)
    x.add_argument("out", type=Path)
    _add_rule_options(x)
    x.set_defaults(func=_cmd_rank_export)
    r = rs.add_parser(
        "report", help="measures against human rankings: θ, error rate, CIs, bar chart"
    )
    r.add_argument("study", type=Path, nargs="?", help="a study file (its consensus is used)")
    r.add_argument("--ranked", type=Path, help="or a human-ranked dataset folder")
    r.add_argument("--measures", nargs="+", metavar="KEY", help="only these measures")
    r.add_argument("--out", type=Path, help="write CSV/Markdown/JSON and the bar chart here")
    r.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples (2000)")
    r.add_argument("--seed", type=int, default=0, help="bootstrap seed (0)")
    _add_rule_options(r)
    _add_param_options(r)
    r.set_defaults(func=_cmd_rank_report)
    s = rs.add_parser(
        "simulate", help="add simulated participants (Bradley–Terry voters) to pilot a design"
    )
    s.add_argument("study", type=Path, help="the study file to add simulated votes to")
    s.add_argument(
        "--participants", type=int, default=10, help="how many simulated participants (10)"
    )
    s.add_argument("--gap", type=float, default=2.0, help="logit gap between adjacent maps (2)")
    s.add_argument("--left-bias", type=float, default=0.0, help="logit added to the left map")
    s.add_argument("--lapse", type=float, default=0.0, help="probability of a random answer")
    s.add_argument(
        "--tie-margin", type=float, default=0.0, help="answer 'cannot decide' below this gap"
    )
    s.add_argument("--prefix", default="sim-", help="participant id prefix (sim-)")
    s.add_argument("--seed", type=int, default=0, help="seed of the simulated answers (0)")
    s.set_defaults(func=_cmd_rank_simulate)


def _cmd_screenshots(args: argparse.Namespace) -> int:
    from fminspect.gui.screenshots import take_screenshots

    for path in take_screenshots(args.outdir, args.only):
        print(path)
    return 0


def _cmd_gui(args: argparse.Namespace) -> int:
    if args.gt is None and (args.pred or args.image):
        print("fminspect: --pred and --image need --gt", file=sys.stderr)
        return 2
    if args.gt is not None and not args.pred:
        print("fminspect: --gt needs at least one --pred", file=sys.stderr)
        return 2
    if _no_display(""):
        return 2
    from fminspect.gui.launch import run_inspector

    return run_inspector(
        str(args.root) if args.root else None,
        gt=str(args.gt) if args.gt else None,
        preds=[str(p) for p in args.pred or []],
        image=str(args.image) if args.image else None,
        theme=args.theme,
        dataset=args.dataset,
        sample=args.sample,
    )


def build_gui_parser() -> argparse.ArgumentParser:
    """``fminspect [ROOT] [--gt G --pred A --pred B --image I]``: open the inspector."""
    parser = argparse.ArgumentParser(
        prog="fminspect",
        description="Open the inspector: on the bundled demo dataset (no argument), on a "
        "dataset folder (ROOT), or on one sample (--gt with --pred …). Subcommands: "
        + ", ".join(SUBCOMMANDS)
        + " (fminspect SUBCOMMAND --help).",
    )
    parser.add_argument("--version", action="version", version=f"fminspect {__version__}")
    parser.add_argument("root", type=Path, nargs="?", help="dataset folder")
    parser.add_argument("--gt", type=Path, help="ground-truth mask of one sample")
    parser.add_argument("--pred", type=Path, action="append", help="a model's map (repeat)")
    parser.add_argument("--image", type=Path, help="the sample's image")
    parser.add_argument("--theme", choices=["system", "light", "dark"], help="colour theme")
    parser.add_argument("--dataset", help="with ROOT: start on this dataset")
    parser.add_argument(
        "--sample", help="with ROOT: start on this sample (e.g. from a meta-measure case)"
    )
    parser.set_defaults(func=_cmd_gui)
    return parser


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for the documentation and the tests)."""
    parser = argparse.ArgumentParser(
        prog="fminspect",
        description="Inspect, explain and rank foreground maps. Without a subcommand, "
        "fminspect opens the inspector window (fminspect --help-gui).",
    )
    parser.add_argument("--version", action="version", version=f"fminspect {__version__}")
    parser.add_argument(  # answered by main() before this parser runs; listed for --help
        "--help-gui",
        action="store_true",
        help="show the options of the inspector window (fminspect without a subcommand)",
    )
    sub = parser.add_subparsers(dest="command")
    score = sub.add_parser(
        "score", help="score one prediction against its GT and print every measure"
    )
    score.add_argument("pred", type=Path, help="prediction map (PNG/JPEG/…, 8 or 16 bit)")
    score.add_argument("gt", type=Path, help="ground-truth mask")
    score.add_argument(
        "--img", type=Path, help="the RGB image, for the camouflage Context-measure (CCm)"
    )
    score.add_argument("--json", action="store_true", help="print JSON instead of a table")
    _add_param_options(score)
    score.set_defaults(func=_cmd_score)
    ev = sub.add_parser("eval", help="evaluate methods × datasets in batch (parallel, cached)")
    ev.add_argument("root", type=Path, nargs="?", help="dataset folder (see README for layouts)")
    ev.add_argument("--methods", nargs="+", help="only these methods")
    ev.add_argument("--datasets", nargs="+", help="only these datasets")
    ev.add_argument(
        "--measures",
        nargs="+",
        metavar="KEY",
        help="only these measure keys (default: all; CCm when images exist)",
    )
    ev.add_argument("--out", default="fminspect-results", help="output folder")
    ev.add_argument("--jobs", type=int, default=1, help="local worker processes (1)")
    ev.add_argument("--scheduler", help="Dask scheduler address, e.g. tcp://host:8786")
    ev.add_argument("--cache", type=Path, help="result cache (default OUT/cache.sqlite)")
    ev.add_argument("--dataset-config", type=Path, help="PySODEvalToolkit dataset JSON")
    ev.add_argument("--method-config", type=Path, help="PySODEvalToolkit method JSON")
    ev.add_argument("--no-plots", action="store_true", help="skip the PNG/PDF curve plots")
    ev.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bar, no table; coverage only of methods with missing or extra maps",
    )
    _add_param_options(ev)
    ev.set_defaults(func=_cmd_eval)
    _add_meta_parser(sub)
    _add_rank_parser(sub)
    shots = sub.add_parser("screenshots", help="render the real window on the demo data to PNGs")
    shots.add_argument("outdir", type=Path)
    shots.add_argument("--only", nargs="+", help="only these screenshots (by name)")
    shots.set_defaults(func=_cmd_screenshots)
    return parser


SUBCOMMANDS = ("score", "eval", "meta", "rank", "screenshots")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``fminspect`` command.

    ``fminspect SUBCOMMAND …`` runs a subcommand; anything else opens the inspector window.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and (argv[0] in SUBCOMMANDS or argv[0] in ("-h", "--help")):
        args = build_parser().parse_args(argv)
    elif argv and argv[0] == "--help-gui":
        build_gui_parser().print_help()
        return 0
    else:
        args = build_gui_parser().parse_args(argv)
    try:
        if getattr(args, "rank_command", None):
            from fminspect.ranking.store import StudyError

            try:
                return int(args.func(args))
            except StudyError as exc:  # a wrong study/pack/results file: say which and why
                return _fail(str(exc), 1)
        return int(args.func(args))
    except BrokenPipeError:  # `fminspect score … | head`: the reader has gone, stop quietly
        if not _stdout_closed():
            raise  # another pipe (a worker's): a real error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so that flushing at exit cannot fail
        return 141  # 128 + SIGPIPE, as a shell reports a command killed by it


def _stdout_closed() -> bool:
    """Whether nobody reads our standard output any more (a pipe whose reader has gone)."""
    try:
        import select

        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poll.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll() (Windows), no descriptor
        return True


if __name__ == "__main__":
    raise SystemExit(main())
