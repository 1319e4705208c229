"""The library API: every ``fminspect`` subcommand as a function, for notebooks and scripts.

Each function takes its subcommand's arguments (options spelled in snake_case, measure
parameters as one :class:`Params`), runs the same library code as the command, and returns
what the command prints or writes, as Python objects. With ``out``, the same files are
written as by the command given ``--out``.

============================================  ==================================
command                                       function
============================================  ==================================
``fminspect score PRED GT``                   :func:`score_pair`
``fminspect eval ROOT``                       :func:`evaluate_dataset`
``fminspect meta ROOT``                       :func:`run_meta`
``fminspect rank create STUDY ROOT``          :func:`create_study`
``fminspect rank simulate STUDY``             :func:`simulate_votes`
``fminspect rank aggregate STUDY``            :func:`aggregate_study`
``fminspect rank export STUDY OUT``           :func:`export_consensus`
``fminspect rank report [STUDY] [--ranked]``  :func:`human_agreement`
``fminspect rank pack STUDY OUT``             :func:`pack_study`
``fminspect rank export-results STUDY``       :func:`export_results`
``fminspect rank merge STUDY RESULTS…``       :func:`merge_results`
``fminspect qualitative ROOT --out F``        :func:`qualitative_figure`
``fminspect gallery ROOT --out DIR``          :func:`gallery_site`
============================================  ==================================

Errors are typed and say what is wrong: :class:`LoadError` (a file that cannot be read),
:class:`SelectionError` and :class:`NoDatasetError` (datasets and methods asked for),
:class:`ArgumentError` (study options that cannot work) and :class:`StudyError` (a study,
pack or results file that cannot be used). The windows (``fminspect``, ``rank vote``,
``rank analyze``) are in :mod:`fminspect.gui`. No Qt is imported here.

Examples
--------
>>> from fminspect.api import Params, evaluate_dataset, score_pair   # doctest: +SKIP
>>> score_pair("pred.png", "gt.png", params=Params(beta2=1)).scores()["maxFm"]  # doctest: +SKIP
0.91...
>>> evaluate_dataset("data/COD10K", measures=["Sm", "MAE"]).summary()  # doctest: +SKIP
{'COD10K': {'SINet': {'MAE': 0.043..., 'Sm': 0.776...}, ...}}
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fminspect.batch.workflow import NoDatasetError, SelectionError
from fminspect.io.validation import LoadError
from fminspect.metrics import Params
from fminspect.pipeline.pair import PairScore, score_pair
from fminspect.ranking.create import CreatedStudy, create_study
from fminspect.ranking.store import StudyError
from fminspect.ranking.workflow import (
    ArgumentError,
    Merged,
    aggregate_study,
    export_consensus,
    export_results,
    merge_results,
    pack_study,
)

if TYPE_CHECKING:
    from fminspect.batch.evaluation import EvalReport
    from fminspect.meta.runner import MetaReport
    from fminspect.ranking.aggregate import Rule
    from fminspect.ranking.agreement import HumanAgreementReport

__all__ = [
    "ArgumentError",
    "CreatedStudy",
    "LoadError",
    "Merged",
    "NoDatasetError",
    "PairScore",
    "Params",
    "SelectionError",
    "StudyError",
    "aggregate_study",
    "create_study",
    "evaluate_dataset",
    "export_consensus",
    "export_results",
    "gallery_site",
    "human_agreement",
    "merge_results",
    "pack_study",
    "qualitative_figure",
    "run_meta",
    "score_pair",
    "simulate_votes",
]


def evaluate_dataset(
    root: Path | str | None = None,
    *,
    out: Path | str | None = None,
    measures: Sequence[str] | None = None,
    params: Params | None = None,
    interpolation: str = "bilinear",
    datasets: Sequence[str] | None = None,
    methods: Sequence[str] | None = None,
    dataset_config: Path | str | None = None,
    method_config: Path | str | None = None,
    jobs: int = 1,
    scheduler: Any = None,
    cache: Path | str | None = None,
    plots: bool = True,
    progress: bool | None = None,
    images: Path | str | None = None,
    exclude_images: Path | str | None = None,
    subsets: str | None = None,
    groups: str | None = None,
    exclude_empty_gt: bool = False,
    ci: bool = False,
    resamples: int = 1000,
    level: float = 0.95,
    test: str = "bootstrap",
    ci_seed: int = 0,
) -> EvalReport:
    """Evaluate every method of every dataset in ``root``: ``fminspect eval``.

    Parameters
    ----------
    root : path, optional
        A dataset folder (any layout ``fminspect eval`` reads), or give ``dataset_config``
        and ``method_config`` (PySODEvalToolkit's JSON configs) instead.
    out : path, optional
        Write every output file there, as the command does (summary.{json,csv,md,tex},
        per_image.csv, problems.csv, curves, and with ``plots`` the PNG/PDF plots); the
        results are then cached in ``OUT/cache.sqlite`` and the window opening these
        datasets finds them. Without ``out`` nothing is written but the cache, by default the
        user's result store (the window's).
    measures : list of str, optional
        Only these measure keys (default: all; CCm for datasets with images).
    params : Params, optional
        The measures' parameters (default: the papers' and pysodmetrics').
    interpolation : str
        How a prediction of another size is resized to its GT.
    datasets, methods : list of str, optional
        Only these datasets and methods.
    jobs : int
        Local worker processes; ``scheduler``: a Dask scheduler address or client instead.
    cache : path, optional
        The result store (shared between runs, so a second run computes only what changed).
    progress : bool, optional
        A progress bar or periodic lines on stderr (default: as the command), or none.
    images, exclude_images : path, optional
        Only the images an image list or case list names, or all but those, as
        ``--images`` and ``--exclude-images``; what they kept or left out (and names found
        in no dataset) is said by a :class:`UserWarning` each.
    subsets, groups : str, optional
        ``cod10k``, ``cod10k-sub`` or an attribute table, as ``--subsets``; a grouping rule,
        as ``--groups``.
    exclude_empty_gt : bool
        Leave images whose GT is empty out of the dataset values.
    ci, resamples, level, test, ci_seed :
        Bootstrap intervals and paired tests between methods, as ``--ci`` and its options
        (``report.statistics``; with ``out``, statistics.json and significance.csv).

    Returns
    -------
    EvalReport
        ``report.summary()`` is ``{dataset: {method: {measure: value}}}`` (summary.json);
        ``report.per_image``, ``report.results`` (with coverage and mean curves) and
        ``report.problems`` hold the rest.

    Raises
    ------
    SelectionError
        A dataset or method asked for is not there, or the configs are not given together.
    fminspect.batch.subsets.SubsetError
        An image list, case list or subset rule that cannot be used.
    NoDatasetError
        Nothing found (``exc.problems`` says why).
    ValueError
        An unknown measure key or a bad parameter.

    Warns
    -----
    RuntimeWarning
        With ``out``: a plot could not be written (every other file was).

    Examples
    --------
    >>> report = evaluate_dataset("data/COD10K", out="results", jobs=2)  # doctest: +SKIP
    >>> report.summary()["COD10K"]["SINet"]["Sm"]                        # doctest: +SKIP
    0.776...
    """
    from fminspect.batch.runner import evaluate_datasets
    from fminspect.batch.significance import Setup
    from fminspect.batch.subsets import select
    from fminspect.batch.workflow import evaluate_to_folder, find_datasets
    from fminspect.pipeline.config import EvalConfig
    from fminspect.pipeline.store import default_store_path

    config = EvalConfig(params or Params(), tuple(measures) if measures else None, interpolation)
    setup = Setup(resamples, level, ci_seed, test) if ci else None
    found, _ = find_datasets(
        root,
        dataset_config=dataset_config,
        method_config=method_config,
        datasets=datasets,
        methods=methods,
    )
    found, selection, lines = select(
        found,
        images=images,
        exclude_images=exclude_images,
        subsets=subsets,
        groups=groups,
        exclude_empty_gt=exclude_empty_gt,
    )
    for line in lines:
        warnings.warn(line, UserWarning, 2)
    if out is None:
        return evaluate_datasets(
            found,
            config,
            cache_path=cache or default_store_path(),
            methods=methods,
            jobs=jobs,
            scheduler=scheduler,
            progress=progress,
            significance=setup,
            selection=selection,
        )
    run = evaluate_to_folder(
        found,
        config,
        out,
        cache=cache,
        methods=methods,
        jobs=jobs,
        scheduler=scheduler,
        plots=plots,
        progress=progress,
        significance=setup,
        selection=selection,
    )
    if run.plot_error:
        warnings.warn(f"not every plot was written: {run.plot_error}", RuntimeWarning, 2)
    return run.report


def qualitative_figure(
    root: Path | str | None = None,
    *,
    samples: Sequence[str] = (),
    out: Path | str,
    samples_from: Path | str | None = None,
    datasets: Sequence[str] | None = None,
    methods: Sequence[str] = (),
    formats: Sequence[str] = (),
    width: float | str = 7.0,
    dpi: int = 300,
    transpose: bool = False,
    aliases: dict[str, str] | None = None,
    highlight: Sequence[str] = (),
    show_image: bool = True,
    show_gt: bool = True,
    sample_names: bool = False,
    insets: Mapping[str, Sequence[float]] | None = None,
    inset_corner: str = "lower right",
    inset_size: float = 0.45,
    style: Path | str | Mapping[str, Any] | None = None,
    latex: bool = True,
    dataset_config: Path | str | None = None,
    method_config: Path | str | None = None,
) -> Any:
    """The paper's qualitative figure: ``fminspect qualitative``.

    Parameters
    ----------
    root : path, optional
        A dataset folder (or give ``dataset_config`` and ``method_config``).
    samples : list of str
        One row each, in this order (``NAME`` or ``DATASET/NAME``).
    samples_from : path, optional
        A case list or image list, as ``--samples-from`` (its samples after ``samples``).
    datasets : list of str, optional
        Only these datasets.
    out : path
        The figure; its suffix (``.pdf``, ``.svg``, ``.png``) is its format unless
        ``formats`` names several. With ``latex``, the snippet including it is written beside
        it as ``.tex``.
    methods : list of str, optional
        One column each, in this order (default: all).
    formats : list of str, optional
        Of ``pdf``, ``svg``, ``png``: each written beside ``out`` with its suffix (default:
        ``out``'s own).
    width : float or str
        Inches, or ``"column"`` (3.5) or ``"page"`` (7), as ``--width``.
    dpi : int
        Resolution of the pictures in the file (and of a PNG).
    transpose : bool
        One column per sample instead of one row.
    aliases : dict, optional
        Method → printed name; ``highlight``: methods printed in bold.
    show_image, show_gt, sample_names : bool
        The image and GT columns, and each sample's name beside its row.
    insets : dict, optional
        Sample name → ``(x, y, w, h)``, a region of its image (pixels) outlined in every
        cell of its row and shown enlarged in the cell's ``inset_corner`` ('lower right',
        'lower left', 'upper right' or 'upper left'; 'lower-right' … as the command),
        ``inset_size`` of the cell's width (0.2–0.8).
    style : path or dict, optional
        Matplotlib rcParams, as ``--style``: a YAML or JSON file (PySODEvalToolkit's style
        files among them) or the mapping itself (the names' size is chosen to fit, not
        ``font.size``).
    latex : bool
        Write the LaTeX snippet that includes the figure.
    dataset_config, method_config : path, optional
        PySODEvalToolkit's configs, in place of ``root``.

    Returns
    -------
    fminspect.batch.qualitative.Made
        ``made.written`` (the files) and ``made.notes`` (missing or unreadable maps).

    Raises
    ------
    fminspect.batch.qualitative.QualitativeError
        An unknown sample or method, a region outside its image, a format not written.
    fminspect.batch.figures.FigureError
        A style that cannot be read or that Matplotlib refuses (``QualitativeError`` is a
        kind of it: ``except FigureError`` catches both).

    Examples
    --------
    >>> qualitative_figure("data/COD10K", samples=["COD10K-CAM-1-Aquatic-3-Crab-154"],
    ...                    methods=["OurNet", "SINet"], out="fig.pdf")  # doctest: +SKIP
    """
    from fminspect.batch import figures
    from fminspect.batch import qualitative as qual
    from fminspect.batch.workflow import find_datasets

    if isinstance(style, Mapping):
        rc = figures.checked_style(style, "style")
    else:
        rc = figures.read_style(style) if style else {}
    found, _ = find_datasets(
        root, dataset_config=dataset_config, method_config=method_config, datasets=datasets
    )
    wanted = list(samples)
    if samples_from is not None:
        from fminspect.batch.subsets import SubsetError, read_image_list

        try:
            listed = read_image_list(samples_from, [d.name for d in found])
        except SubsetError as exc:
            raise qual.QualitativeError(str(exc)) from None
        wanted += [f"{d}/{n}" if d else n for d, n in listed.order]
    rows = qual.find_samples(found, wanted)
    regions = {}
    for name, r in (insets or {}).items():
        if len(r) != 4:
            raise qual.QualitativeError(f"the inset of {name!r} is not (x, y, w, h): {r!r}")
        regions[name] = qual.Region.checked(r[0], r[1], r[2], r[3])
    spec = qual.QualitativeSpec(
        methods=qual.find_methods(found, methods),
        labels=aliases or {},
        highlight=tuple(highlight),
        show_image=show_image,
        show_gt=show_gt,
        transpose=transpose,
        width=_figure_width(width),
        dpi=dpi,
        insets=qual.find_insets(found, rows, regions),
        inset_corner=inset_corner,
        inset_share=inset_size,
        sample_labels=sample_names,
        style=rc,
    )
    return qual.make(rows, spec, out, formats, latex=latex)


def _figure_width(width: float | str) -> float:
    """``width`` in inches: a number, or a name of
    :data:`fminspect.batch.qualitative.WIDTHS` (``QualitativeError`` otherwise)."""
    from fminspect.batch import qualitative as qual

    if isinstance(width, str):
        if width in qual.WIDTHS:
            return qual.WIDTHS[width]
        raise qual.QualitativeError(
            f"width {width!r} is not {' or '.join(qual.WIDTHS)} or a number of inches"
        )
    return float(width)


def gallery_site(
    root: Path | str | None = None,
    *,
    out: Path | str,
    by: str = "Sm",
    method: str | None = None,
    count: int = 100,
    filter: str = "",
    methods: Sequence[str] = (),
    measures: Sequence[str] | None = None,
    params: Params | None = None,
    cache: Path | str | None = None,
    jobs: int = 1,
    progress: bool | None = None,
    dataset_config: Path | str | None = None,
    method_config: Path | str | None = None,
    datasets: Sequence[str] | None = None,
    samples_from: Path | str | None = None,
    show: Sequence[str] = (),
    aliases: dict[str, str] | None = None,
    title: str = "",
) -> Any:
    """A static HTML site of the worst (or filtered) cases: ``fminspect gallery``.

    Parameters
    ----------
    root : path, optional
        A dataset folder (or give ``dataset_config`` and ``method_config``).
    out : path
        The folder the site is written into (``index.html``, ``cases/``, ``img/``).
    by, method : str
        The measure the cases are ordered by, worst first, and whose score (default: the
        mean over the methods).
    count : int
        How many cases (0: every sample chosen).
    filter : str
        The window's filter language (``"Sm[A] - Sm[B] < -0.1 and cod10k=Aquatic"``).
    measures, params, cache : optional
        As for :func:`evaluate_dataset`: scores an earlier ``eval`` stored are read.
    datasets : list of str, optional
        Only these datasets.
    samples_from : path, optional
        The cases of a case list (or image list), in its order, as ``--samples-from``.
    show, aliases, title : optional
        The measures shown beside ``by``, printed names of methods, the page's title, as
        ``--show``, ``--aliases`` (here a mapping) and ``--title``.

    Returns
    -------
    fminspect.batch.gallery.Written
        ``written.index`` (the page to open), the counts of cases, files and bytes.

    Raises
    ------
    fminspect.batch.gallery.GalleryError
        A measure not scored, an unknown method, a filter or case list that cannot be read
        or keeps nothing.

    Examples
    --------
    >>> gallery_site("data/COD10K", out="site", by="Sm", method="SINet")  # doctest: +SKIP
    """
    from fminspect.batch.gallery import GalleryError, make_gallery
    from fminspect.batch.subsets import SubsetError, read_image_list
    from fminspect.batch.workflow import find_datasets
    from fminspect.pipeline.config import EvalConfig
    from fminspect.pipeline.tags import existing_tags

    found, _ = find_datasets(
        root, dataset_config=dataset_config, method_config=method_config, datasets=datasets
    )
    config = EvalConfig(params or Params(), tuple(measures) if measures else None)
    try:  # a case list that cannot be read is the gallery's error, as the figure's is its
        listed = read_image_list(samples_from).order if samples_from is not None else ()
    except SubsetError as exc:
        raise GalleryError(str(exc)) from None
    folder = Path(root) if root is not None else Path(str(dataset_config)).parent
    return make_gallery(
        found,
        out,
        config,
        methods=methods,
        by=by,
        method=method,
        count=count,
        shown=show,
        labels=aliases or {},
        title=title,
        filter_text=filter,
        listed=listed,
        store=cache,
        tags=existing_tags(folder),
        jobs=jobs,
        progress=progress,
    )


def run_meta(
    root: Path | str | None = None,
    *,
    out: Path | str | None = None,
    ranked: Sequence[Path | str] = (),
    measures: Sequence[str] | None = None,
    metas: Sequence[str] | None = None,
    params: Params | None = None,
    application: str | None = None,
    datasets: Sequence[str] | None = None,
    methods: Sequence[str] | None = None,
    jobs: int = 1,
    scheduler: Any = None,
    cache: Path | str | None = None,
    plots: bool = True,
    progress: bool | None = None,
    **protocol: Any,
) -> MetaReport:
    """Run the meta-measures (evaluate the measures themselves) on ``root``: ``fminspect meta``.

    Parameters
    ----------
    root : path, optional
        A dataset folder; optional when human-ranked folders (``ranked``) are given.
    out : path, optional
        Write every output file there, as the command does (cases.csv,
        summary.{csv,md,tex}, protocol.json, and with ``plots`` meta.{png,pdf}); the models'
        scores are then cached in ``OUT/cache.sqlite`` (without ``out``: in ``cache``, by
        default the user's result store).
    ranked : list of path
        Human-ranked dataset folders: adds the ``'human'`` meta-measure.
    measures : list of str, optional
        Only these measures (default: all).
    metas : list of str, optional
        Which meta-measures (default: generic, noise_map, gt_switch, noise_injection,
        annotation); ``application`` (``'grabcut'`` or ``'package.module:function'``) adds
        ``'application'``.
    params : Params, optional
        The measures' parameters.
    datasets, methods : list of str, optional
        Only these datasets and models.
    jobs, scheduler, cache, progress
        As :func:`evaluate_dataset`.
    **protocol
        ``protocol`` (a preset of :mod:`fminspect.meta.protocols`: ``'default'``,
        ``'context2025'``, ``'smeasure2021'``, ``'emeasure2018'``, ``'margolin2014'``,
        ``'ours'``) and any of its settings, as the command's options: ``seed``,
        ``interpolation``, ``circle_radius``, ``gaussian_sigma``, ``noise_mean``,
        ``noise_std``, ``good_key`` (or ``'self'``), ``good_min``, ``good_top``,
        ``switches``, ``inject_fraction``, ``inject_of``, ``inject_std``,
        ``inject_fg_threshold`` (``--inject-threshold``), ``morph_size``,
        ``morph_iterations`` (see :func:`fminspect.meta.workflow.meta_config`).

    Returns
    -------
    MetaReport
        ``report.summary`` (rows of summary.csv; ``report.value(dataset, meta, statistic,
        measure)`` picks one), ``report.cases`` (cases.csv) and ``report.problems``.

    Raises
    ------
    ValueError
        An unknown meta-measure or measure, or an application that cannot be loaded.
    NoDatasetError, SelectionError
        As :func:`evaluate_dataset`.

    Examples
    --------
    >>> report = run_meta("data/COD10K", measures=["Sm", "MAE"], seed=1)  # doctest: +SKIP
    >>> report.value("COD10K", "generic", "error rate (circle)", "Sm")   # doctest: +SKIP
    0.0
    """
    from fminspect.meta.runner import run_meta as run_meta_on
    from fminspect.meta.workflow import find_datasets, meta_config, meta_to_folder
    from fminspect.pipeline.store import default_store_path

    config = meta_config(
        params=params,
        measures=measures,
        metas=metas,
        application=application,
        ranked=bool(ranked),
        **protocol,
    )
    found, problems = find_datasets(root, datasets=datasets, methods=methods, ranked=ranked)
    if out is None:
        report = run_meta_on(
            found,
            config,
            cache_path=cache or default_store_path(),
            methods=methods,
            jobs=jobs,
            scheduler=scheduler,
            ranked=[Path(r) for r in ranked],
            progress=progress,
        )
        report.problems = problems + report.problems
        return report
    return meta_to_folder(
        found,
        config,
        out,
        problems=problems,
        cache=cache,
        methods=methods,
        jobs=jobs,
        scheduler=scheduler,
        ranked=ranked,
        progress=progress,
        plots=plots,
    )


def simulate_votes(
    study: Path | str,
    *,
    participants: int = 10,
    gap: float = 2.0,
    left_bias: float = 0.0,
    lapse: float = 0.0,
    tie_margin: float = 0.0,
    prefix: str = "sim-",
    seed: int = 0,
) -> dict[str, int]:
    """Add simulated participants (Bradley–Terry voters ranking each group's maps in their
    listed order, ``gap`` logits apart) to ``study``, to pilot a design: ``fminspect rank
    simulate``. Returns each participant's id and number of votes.

    ``left_bias`` is added to the left map's logit, ``lapse`` is the probability of a
    random answer, below ``tie_margin`` a participant answers "cannot decide" (when the
    study allows it); participant ``k`` uses the seed ``seed + k``.

    Examples
    --------
    >>> simulate_votes("pilot.sqlite", participants=3, lapse=0.1)  # doctest: +SKIP
    {'sim-1': 30, 'sim-2': 30, 'sim-3': 30}
    """
    from fminspect.ranking.workflow import simulate_participants

    return dict(
        simulate_participants(
            study,
            participants=participants,
            gap=gap,
            left_bias=left_bias,
            lapse=lapse,
            tie_margin=tie_margin,
            prefix=prefix,
            seed=seed,
        )
    )


def human_agreement(
    study: Path | str | None = None,
    *,
    ranked: Path | str | None = None,
    measures: Sequence[str] | None = None,
    params: Params | None = None,
    rule: str | Rule | None = None,
    exclude_failing: bool = False,
    min_attention: float = 1.0,
    exclude: Sequence[str] = (),
    prior: float | None = None,
    out: Path | str | None = None,
) -> HumanAgreementReport:
    """How each measure agrees with people's rankings: ``fminspect rank report``.

    θ = 1 − Spearman ρ and the error rate (share of groups ordered differently), each with
    a 95 % interval (θ: betting; error rates: Clopper–Pearson; see
    :mod:`fminspect.ranking.intervals`), over the consensual groups
    of ``study`` (under ``rule`` and the exclusions, as :func:`aggregate_study`) or the
    groups of a human-ranked dataset folder ``ranked`` — one of the two. With ``out``, the
    table (CSV, Markdown, JSON) and its bar chart are written there.
    :func:`fminspect.ranking.report.agreement_markdown` gives the table the command prints.
    A group whose files cannot be read is left out with a warning.

    Raises
    ------
    ArgumentError
        Both or neither of ``study`` and ``ranked``.
    StudyError
        The study or folder cannot be read, or no group has a consensus ranking.
    ValueError
        An unknown measure or a bad parameter.

    Warns
    -----
    UserWarning
        ``skipped: …`` for each group left out.

    Examples
    --------
    >>> report = human_agreement(ranked="CamoHR", measures=["Sm", "Cm"])  # doctest: +SKIP
    >>> report.row("Sm").theta, report.row("Sm").error_rate            # doctest: +SKIP
    (0.41..., 0.35...)
    """
    from fminspect.ranking.report import write_agreement
    from fminspect.ranking.workflow import compare_with_humans, human_rankings

    humans = human_rankings(
        study,
        ranked=ranked,
        rule=rule,
        exclude_failing=exclude_failing,
        min_attention=min_attention,
        exclude=exclude,
        prior=prior,
    )
    for why in humans.skipped:
        warnings.warn(f"skipped: {why}", UserWarning, 2)
    report = compare_with_humans(
        humans.groups,
        measures,
        params=params,
        basis=humans.basis,
        selected_by=humans.selected_by,
    )
    if out is not None:
        write_agreement(report, out, humans.title)
    return report
