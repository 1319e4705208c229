"""``fminspect rank …``: pairwise human-ranking studies (create, pack, vote, merge, aggregate,
export, report, simulate)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fminspect.cli._common import add_param_options, fail, no_display, params

if TYPE_CHECKING:
    from fminspect.cli._common import Subparsers
    from fminspect.ranking.aggregate import StudyResult
    from fminspect.ranking.design import Group
    from fminspect.ranking.store import StudyStore


def _open_study(path: Path) -> StudyStore:
    from fminspect.ranking.store import StudyStore

    return StudyStore(path)


def _cmd_rank_create(args: argparse.Namespace) -> int:
    from fminspect.io.discovery import discover
    from fminspect.ranking.build import build_design, check_files, groups_from_dataset
    from fminspect.ranking.store import StudyStore

    if args.study.exists():
        return fail(f"{args.study} already exists; choose another file")
    datasets, problems = discover(args.root)
    for p in problems:
        print(p, file=sys.stderr)
    if args.datasets:
        datasets = [d for d in datasets if d.name in args.datasets]
    if not datasets:
        return fail(f"no dataset found in {args.root}")
    if args.models and args.auto:
        return fail("give either --models or --auto, not both")
    known_models = {m for d in datasets for m in d.method_names}
    unknown = [m for m in args.models or [] if m not in known_models]
    if unknown:
        return fail(
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
            return fail(f"--by: {exc}")
        for p in unscored:  # these maps cannot be shown either
            print(p, file=sys.stderr)
    groups: list[Group] = []
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
        return fail("no sample has at least two of the chosen maps")
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
        return fail(
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
        return fail(str(exc))
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


def _cmd_rank_vote(args: argparse.Namespace) -> int:
    if no_display("rank vote"):
        return 2
    from fminspect.gui.voting import run_voting

    return run_voting(
        args.study, participant=args.participant, folder=args.folder, windowed=args.windowed
    )


def _cmd_rank_analyze(args: argparse.Namespace) -> int:
    if no_display("rank analyze"):
        return 2
    from fminspect.gui.analysis import run_analysis

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


def _aggregate(args: argparse.Namespace, store: StudyStore) -> StudyResult:
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
        return fail(
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
        return fail("give a study file or --ranked DIR (one of them)")
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
        return fail(str(exc), 1)
    for p in problems:
        print(f"skipped: {p}", file=sys.stderr)
    if not groups:
        return fail("no group with a consensus ranking to compare with", 1)
    keys = args.measures or measure_keys(with_images=all(g.image is not None for g in groups))
    try:
        report = measures_vs_humans(
            groups, keys, params=params(args), seed=args.seed, n_boot=args.bootstrap
        )
    except ValueError as exc:
        return fail(str(exc))
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


def add_parser(sub: Subparsers) -> None:
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
    add_param_options(r)
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
