"""Filters over the list, without Qt: what each clause passes, what it cannot read, and the
walk that follows them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fminspect.batch.filters import Facts, FilterError, parse
from fminspect.batch.scores import ScoreMatrix
from fminspect.inspector.walk import Walk

NAMES = [
    "COD10K-CAM-1-Aquatic-3-Crab-1",
    "COD10K-CAM-1-Aquatic-5-Fish-2",
    "COD10K-CAM-2-Terrestrial-23-Cat-3",
    "img4",
    "img5",
]
KEYS, METHODS = ("Sm", "MAE"), ["FT", "RC"]


def _matrix() -> ScoreMatrix:
    m = ScoreMatrix(NAMES, METHODS, KEYS)
    ft = [0.9, 0.2, 0.5, np.nan, 0.4]
    rc = [0.5, 0.6, 0.45, 0.3, 0.42]
    for i, (a, b) in enumerate(zip(ft, rc, strict=True)):
        m.values[i, 0, 0], m.values[i, 1, 0] = a, b
    return m


def _passed(text: str, tags: dict[str, set[int]] | None = None, **kw: object) -> list[str]:
    flt = parse(text, KEYS, METHODS, {1: "GT error", 2: "boundary"}, **kw)  # type: ignore[arg-type]
    assert flt is not None
    mask = flt.mask(_matrix(), lambda n: frozenset((tags or {}).get(n, ())))
    return [n for n, keep in zip(NAMES, mask, strict=True) if keep]


def test_each_clause_and_their_conjunction() -> None:
    assert _passed("Sm[FT] < 0.5") == [NAMES[1], NAMES[4]]
    assert _passed("Sm[FT] >= 0.5 and Sm[RC] < 0.5") == [NAMES[2]]
    assert _passed("Sm[FT] - Sm[RC] < -0.05") == [NAMES[1]]  # FT worse than RC
    assert _passed("Sm[FT] = 0.500") == [NAMES[2]]  # as printed
    # an unknown score passes neither a clause nor its negation (img4's FT)
    assert NAMES[3] not in _passed("Sm[FT] < 0.5") + _passed("not Sm[FT] < 0.5")
    assert _passed("name ~ crab") == [NAMES[0]]
    assert _passed("name ~ img?") == ["img4", "img5"]
    assert _passed("not name ~ COD10K") == ["img4", "img5"]
    tags = {"img5": {1}, NAMES[0]: {2}}
    assert _passed("tag 1", tags) == ["img5"]
    assert _passed('tag "gt error"', tags) == ["img5"]
    assert _passed("tagged", tags) == [NAMES[0], "img5"]
    assert _passed("untagged and Sm[RC] > 0.4", tags) == [NAMES[1], NAMES[2]]
    # COD10K's classes from the names: the rules of eval --subsets
    assert _passed("cod10k=Aquatic") == NAMES[:2]
    assert _passed("cod10k-sub=Cat") == [NAMES[2]]
    # in any case (a trial typed cod10k=aquatic and got nothing)
    assert _passed("cod10k=aquatic") == _passed("COD10K=AQUATIC") == NAMES[:2]
    assert parse("  ", KEYS, METHODS) is None
    # the dataset (the gallery's several datasets; in the window, the listed one)
    nc4k = parse("dataset = nc4k", KEYS, METHODS)
    cod = parse("dataset ~ COD*", KEYS, METHODS)
    assert nc4k is not None and cod is not None
    assert nc4k.mask(_matrix(), Facts(dataset="NC4K")).all()
    assert not nc4k.mask(_matrix(), Facts(dataset="NC4K-test")).any()  # = is the whole name
    assert cod.mask(_matrix(), Facts(dataset="COD10K")).all()
    assert not cod.mask(_matrix(), Facts(dataset="CAMO")).any()


def test_an_attribute_table_as_eval_reads_it(tmp_path: Path) -> None:
    table = tmp_path / "attrs.csv"
    table.write_text("image,occlusion,size\nimg4,1,small\nimg5,0,large\n")
    assert _passed(f"{table}:occlusion") == ["img4"]
    assert _passed(f"{table}:size=large") == ["img5"]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("Sm[XX] < 0.5", "no model 'XX' (models: FT, RC)"),
        ("wFm[FT] < 0.5", "wFm is not being scored (scored: Sm, MAE)"),
        ("Sm[FT] - MAE[RC] < 0", "a difference of two models is on one measure"),
        ("tag nothing", "no tag 'nothing' (the tags: 1 GT error, 2 boundary)"),
        ("Sm[FT] << 2", "is not a filter; write e.g. Sm[FT] < 0.5"),
        ("nope.csv:x", "nope.csv"),
        ("Sm[FT] < 0.5 and", "'and' joins two filters; one is missing"),
        ('tag "boundary" and', "'and' joins two filters; one is missing"),
        ("and untagged", "'and' joins two filters; one is missing"),
    ],
)
def test_what_cannot_be_read_is_said(text: str, said: str) -> None:
    with pytest.raises(FilterError) as caught:
        parse(text, KEYS, METHODS, {1: "GT error", 2: "boundary"})
    assert said in str(caught.value)
    assert parse("name ~ and", KEYS, METHODS) is not None  # "and" as a name's text is one


def test_the_walk_lists_and_steps_through_what_the_filter_passes() -> None:
    walk = Walk()
    matrix = _matrix()
    walk.set_matrix(matrix, METHODS)
    walk.set_view("Sm", ("FT", "RC"), ("maxFm", "Sm"))
    walk.sort(1)  # FT's Sm, worst first
    walk.set_filter(parse("Sm[FT] < 0.6", KEYS, METHODS))
    assert walk.ordered() == [NAMES[1], NAMES[4], NAMES[2]] and walk.total == 5
    assert walk.neighbour(NAMES[2], 1) == NAMES[1]  # wraps within the filtered list
    # a sample filtered out (the shown one, say): the next step goes to the list's start
    assert walk.row_of(NAMES[0]) is None and walk.neighbour(NAMES[0], 1) == NAMES[1]
    assert walk.neighbour(NAMES[0], -1) == NAMES[2]
    matrix.values[3, 0, 0] = 0.1  # img4's score arrives: it is listed now
    assert walk.scores_changed({3}) and walk.ordered()[0] == "img4"
    tags: dict[str, set[int]] = {}
    walk.tags_of = lambda n: frozenset(tags.get(n, ()))
    walk.set_filter(parse("untagged", KEYS, METHODS))
    assert len(walk.ordered()) == 5
    tags["img4"] = {1}
    assert walk.tags_changed() and "img4" not in walk.ordered()


def test_the_object_s_share_empty_gts_problems_and_the_scatter_s_selection() -> None:
    from fminspect.batch.filters import Facts

    shares = {NAMES[0]: 0.02, NAMES[1]: 0.0, NAMES[2]: 0.4, "img5": 0.1}  # img4: not read yet
    facts = Facts(chosen=frozenset({"img4", NAMES[2]}), shares=shares, problems=frozenset({"img5"}))

    def passed(text: str) -> list[str]:
        flt = parse(text, KEYS, METHODS)
        assert flt is not None and flt.on_facts
        return [n for n, keep in zip(NAMES, flt.mask(_matrix(), facts), strict=True) if keep]

    assert passed("share < 0.05") == NAMES[:2]
    assert passed("empty gt") == [NAMES[1]] == passed("Empty GT")
    # a share not read yet passes neither the clause nor its negation
    assert passed("not empty gt") == [NAMES[0], NAMES[2], "img5"]
    assert passed("not share < 0.05") == [NAMES[2], "img5"]
    assert passed("problems") == ["img5"]
    assert passed("selected") == [NAMES[2], "img4"]
    assert passed("selected and Sm[FT] < 0.6") == [NAMES[2]]
    # without shares (not read yet), a share clause keeps nothing
    flt = parse("share > 0", KEYS, METHODS)
    assert flt is not None and not flt.mask(_matrix(), Facts()).any()
    with pytest.raises(FilterError, match=r"share < 0\.05, empty gt, problems or selected"):
        parse("shares < 0.5", KEYS, METHODS)
