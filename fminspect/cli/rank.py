"""``fminspect rank …``: pairwise human-ranking studies (create, pack, vote, merge, aggregate,
export, report, simulate), through :mod:`fminspect.ranking.create` and
:mod:`fminspect.ranking.workflow`; ``vote`` and ``analyze`` open windows of
:mod:`fminspect.gui`. A study file that cannot be used (:class:`StudyError`) ends any of them
with status 1 (see :func:`fminspect.cli.main`)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fminspect.cli._common import (
    add_param_options,
    count,
    fail,
    no_display,
    params,
    positive_float,
    print_all,
    say,
)

if TYPE_CHECKING:
    from fminspect.cli._common import Subparsers


def _cmd_rank_create(args: argparse.Namespace) -> int:
    from fminspect.batch.subsets import SubsetError, read_image_list
    from fminspect.ranking.create import SECONDS_PER_VOTE, create_study
    from fminspect.ranking.workflow import ArgumentError

    samples = list(args.samples or [])
    if args.samples_from is not None:  # a case list the window exported, or one name a line
        try:
            listed = read_image_list(args.samples_from)
        except SubsetError as exc:
            return fail(str(exc))
        samples += sorted({n for names in listed.names.values() for n in names})
    try:
        created = create_study(
            args.study,
            args.root,
            name=args.name,
            datasets=args.datasets,
            samples=samples or None,
            models=args.models,
            auto=args.auto,
            by=args.by,
            min_gap=args.min_gap,
            limit=args.limit,
            presentation=args.presentation,
            overlay_alpha=args.alpha,
            show_gt=not args.hide_gt,
            show_image=not args.hide_image,
            allow_ties=args.ties,
            repeats=args.repeats,
            checks=args.checks,
            seed=args.seed,
            sampling=args.design,
            per_participant=args.pairs_per_participant,
            coverage=args.coverage,
            jobs=args.jobs,
            cache=args.cache,
            on_message=say(),
            progress=None,
        )
    except ArgumentError as exc:
        return fail(str(exc))
    seconds = created.seconds_per_participant
    duration = f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds} s"
    design = created.design
    print(
        f"study {args.study}: {count(created.groups, 'group')}, {count(created.pairs, 'pair')}, "
        f"{design.sampling} design; each participant sees "
        f"{count(created.trials_per_participant, 'trial')} "
        f"(~{duration} at {SECONDS_PER_VOTE} s per vote)"
    )
    if design.sampling == "incomplete":
        print(
            f"one round is {design.slots} participants: each pair is answered by "
            f"{design.coverage} of them; the next {design.slots} participants cover every pair "
            "again"
        )
    elif design.sampling == "active":
        print("each participant's pairs are chosen from the votes stored when they reach them")
    pack = f"fminspect rank pack {args.study} {args.study.with_suffix('.zip')}"
    if design.sampling != "full":
        pack = (
            f"fminspect rank pack {args.study} p01.zip --participant p01"
            "   (one pack per participant)"
        )
    print(f"vote here:      fminspect rank vote {args.study}\nor pack it:     {pack}")
    return 0


def _cmd_rank_pack(args: argparse.Namespace) -> int:
    from fminspect.ranking.workflow import pack_study

    out = pack_study(args.study, args.out, args.participant, progress=None)
    who = f"participant {args.participant}" if args.participant else "a participant"
    print(f"study pack written to {out}; {who} runs:  fminspect rank vote {out.name}")
    return 0


def _cmd_rank_invite(args: argparse.Namespace) -> int:
    from fminspect.ranking.invites import invite
    from fminspect.ranking.store import StudyStore

    if not args.count and not args.id:
        return fail("say how many participants to invite (--count N) or name them (--id ...)")
    with StudyStore(args.study) as store:
        made = invite(store, args.count or 0, prefix=args.prefix, ids=args.id or ())
    base = args.url.rstrip("/")
    lines = [f"{i.participant},{base}/s/{i.token}" for i in made]
    if args.out:
        from fminspect.io.atomic import replacing

        with replacing(args.out) as tmp:
            os.chmod(tmp, 0o600)  # the links are the participants' keys: readable by the lab only
            tmp.write_text("participant,link\n" + "".join(f"{line}\n" for line in lines))
        print(f"{len(made)} links written to {args.out}", file=sys.stderr)
    else:
        print("participant,link", *lines, sep="\n")
    if args.qr:
        _write_qr(args.qr, [(i.participant, f"{base}/s/{i.token}") for i in made])
    print(
        "each link is shown this once (the study keeps only a hash of it); "
        f"serve the study with:  fminspect rank serve {args.study}{_serve_options(base)}",
        file=sys.stderr,
    )
    return 0


def _serve_options(url: str) -> str:
    """The ``rank serve`` options that make the server answer at ``url``: its port when it
    is this machine's, else ``--url`` (a reverse proxy in front)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.hostname in ("127.0.0.1", "localhost") and parts.scheme == "http":
        return "" if parts.port in (None, 8765) else f" --port {parts.port}"
    return f" --url {url}"


def _write_qr(folder: Path, links: list[tuple[str, str]]) -> None:
    import segno

    folder.mkdir(parents=True, exist_ok=True)
    for who, link in links:
        segno.make(link, error="m").save(str(folder / f"{who}.png"), scale=6, border=2)
    print(f"{len(links)} QR codes written to {folder}", file=sys.stderr)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port (0–65535)")
    return port


def _cmd_rank_serve(args: argparse.Namespace) -> int:
    from fminspect.web.server import serve

    return serve(args.study, host=args.host, port=args.port, url=args.url)


def _cmd_rank_vote(args: argparse.Namespace) -> int:
    if no_display("rank vote"):
        return 2
    from fminspect.gui.launch import run_voting

    return run_voting(
        args.study, participant=args.participant, folder=args.folder, windowed=args.windowed
    )


def _cmd_rank_analyze(args: argparse.Namespace) -> int:
    if no_display("rank analyze"):
        return 2
    from fminspect.gui.launch import run_analysis

    return run_analysis(args.study)


def _cmd_rank_export_results(args: argparse.Namespace) -> int:
    from fminspect.ranking.workflow import export_results

    for path in export_results(args.study, participant=args.participant, out=args.out):
        print(path)
    return 0


def _cmd_rank_merge(args: argparse.Namespace) -> int:
    from fminspect.ranking.workflow import merge_results

    merged = merge_results(args.study, args.results)
    for m in merged:
        if m.refused:
            print(f"refused: {m.refused}", file=sys.stderr)
        else:
            print(f"{m.path}: {m.votes} votes of {m.participant} merged")
            if m.unfinished:
                print(
                    f"  {m.participant} has answered {m.answered} of {m.planned} trials: their "
                    "final results file will add the rest"
                )
    return 1 if any(m.refused for m in merged) else 0


def _rule_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of :func:`fminspect.ranking.workflow.consensus` and the steps
    using it, from :func:`_add_rule_options`' options."""
    return {
        "rule": args.rule,
        "exclude_failing": args.exclude_failing,
        "min_attention": args.min_attention,
        "exclude": args.exclude or (),
        "prior": args.prior,
        "on_message": say("fminspect rank: "),
    }


def _cmd_rank_aggregate(args: argparse.Namespace) -> int:
    from fminspect.ranking.report import study_summary
    from fminspect.ranking.workflow import aggregate_study

    result = aggregate_study(args.study, out=args.out, **_rule_options(args))
    if args.out:
        print(f"written to {args.out}", file=sys.stderr)
    print(study_summary(result))
    return 0


def _cmd_rank_export(args: argparse.Namespace) -> int:
    from fminspect.ranking.workflow import export_consensus

    result, out = export_consensus(args.study, args.out, **_rule_options(args))
    print(
        f"{len(result.consensual)} of {len(result.groups)} groups reached consensus "
        f"({result.rule}); human-ranked dataset written to {out}"
    )
    return 0


def _cmd_rank_report(args: argparse.Namespace) -> int:
    from fminspect.ranking.report import agreement_markdown, write_agreement
    from fminspect.ranking.workflow import ArgumentError, compare_with_humans, human_rankings

    try:
        humans = human_rankings(args.study, ranked=args.ranked, **_rule_options(args))
    except ArgumentError as exc:
        return fail(str(exc))
    print_all(f"skipped: {p}" for p in humans.skipped)
    try:
        report = compare_with_humans(
            humans.groups,
            args.measures,
            params=params(args),
            basis=humans.basis,
            selected_by=humans.selected_by,
        )
    except ValueError as exc:
        return fail(str(exc))
    print(agreement_markdown(report, humans.title))
    if args.out:
        write_agreement(report, args.out, humans.title)
        print(f"table and bar chart written to {args.out}", file=sys.stderr)
    return 0


def _cmd_rank_simulate(args: argparse.Namespace) -> int:
    from fminspect.ranking.workflow import simulate_participants

    for who, votes in simulate_participants(
        args.study,
        participants=args.participants,
        gap=args.gap,
        left_bias=args.left_bias,
        lapse=args.lapse,
        tie_margin=args.tie_margin,
        prefix=args.prefix,
        seed=args.seed,
    ):
        print(f"{who}: {votes} simulated votes")
    return 0


def _add_rule_options(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("consensus")
    g.add_argument(
        "--rule",
        help="unanimous (FMDatabase), k_of_n:K, majority, or bt:P (default: unanimous for a "
        "full design, bt:0.9 for incomplete and active ones); ',min=N' sets the least number "
        "of participants who must have ranked a group (2)",
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
    g.add_argument(
        "--prior",
        type=positive_float,
        metavar="A",
        help="precision of the Gaussian prior of the Bradley–Terry and JOD scales, in logit "
        "units (default 0.1, i.e. variance 10); it decides the distances of separated groups",
    )


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
    c.add_argument(
        "--samples-from",
        type=Path,
        metavar="FILE",
        help="only the samples named in FILE (the case list the window exports, or one name "
        "a line)",
    )
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
    c.add_argument(
        "--design",
        choices=["full", "incomplete", "active"],
        default="full",
        help="full: every participant sees every pair; incomplete: each sees "
        "--pairs-per-participant of them, every pair seen by --coverage participants per "
        "round; active: each sees --pairs-per-participant pairs chosen by expected "
        "information gain from the votes so far (after ASAP, Mikhailiuk et al. 2020)",
    )
    c.add_argument(
        "--pairs-per-participant",
        type=int,
        metavar="M",
        help="pairs per participant in incomplete and active designs (300: ~15 min)",
    )
    c.add_argument(
        "--coverage",
        type=int,
        metavar="K",
        help="incomplete design: participants who answer each pair in one round (3)",
    )
    c.add_argument("--jobs", type=int, default=1, help="worker processes for --auto scoring")
    c.add_argument(
        "--cache",
        type=Path,
        metavar="FILE",
        help="result cache --auto reads and extends (default: the store `fminspect eval` "
        "filled for the dataset, as the window finds it, else STUDY.cache.sqlite)",
    )
    c.set_defaults(func=_cmd_rank_create)
    p = rs.add_parser("pack", help="write a self-contained study pack (zip) for another computer")
    p.add_argument("study", type=Path)
    p.add_argument("out", type=Path, help="the zip to write")
    p.add_argument(
        "--participant",
        metavar="ID",
        help="make the pack this participant's, with their pairs chosen now (needed by "
        "incomplete and active designs: one pack per participant)",
    )
    p.set_defaults(func=_cmd_rank_pack)
    v = rs.add_parser("vote", help="open the voting window on a study file or a study pack")
    v.add_argument("study", type=Path, help="study file (.sqlite) or study pack (.zip)")
    v.add_argument("--participant", help="participant id (asked for when missing)")
    v.add_argument(
        "--folder", type=Path, help="where to unpack a study pack (default: STEM_study/ beside it)"
    )
    v.add_argument("--windowed", action="store_true", help="a normal window instead of full screen")
    v.set_defaults(func=_cmd_rank_vote)
    i = rs.add_parser(
        "invite", help="make participants' links for voting in a web browser (rank serve)"
    )
    i.add_argument("study", type=Path)
    i.add_argument("--count", type=int, metavar="N", help="invite N participants (p001, p002, …)")
    i.add_argument("--id", nargs="+", metavar="ID", help="invite participants with these ids")
    i.add_argument("--prefix", default="p", help="id prefix with --count (p)")
    i.add_argument(
        "--url",
        default="http://127.0.0.1:8765",
        help="the address participants reach the server at (default http://127.0.0.1:8765)",
    )
    i.add_argument("--out", type=Path, help="write participant,link CSV here (mode 600)")
    i.add_argument("--qr", type=Path, metavar="DIR", help="also write a QR code per link here")
    i.set_defaults(func=_cmd_rank_invite)
    sv = rs.add_parser("serve", help="serve the study to participants' web browsers")
    sv.add_argument("study", type=Path)
    sv.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (127.0.0.1: this machine only)"
    )
    sv.add_argument("--port", type=_port, default=8765, help="port (8765; 0: any free one)")
    sv.add_argument(
        "--url", help="the public address, when a reverse proxy serves it (shown in the links)"
    )
    sv.set_defaults(func=_cmd_rank_serve)
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
