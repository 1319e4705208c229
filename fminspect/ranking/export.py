"""Moving studies and their results between computers, and publishing the consensus.

* **Study pack** (:func:`write_pack`): a zip with every file the study shows, the design
  (paths made relative) and a manifest of SHA-256 digests. A participant elsewhere opens it
  (:func:`open_pack`), votes, and sends back a results JSON
  (:meth:`StudyStore.export_results`), which the lab merges (:meth:`StudyStore.merge_results`).
* **Human-ranked dataset** (:func:`export_ranked`), one folder per group::

      OUT/manifest.json          format "fminspect-human-ranked/1": study, rule, groups
      OUT/manifest.csv           group, rank, file, model, bt, bt_sd, wins, kendall_w,
                                 participants, jod, jod_low, jod_high
      OUT/<group>/image.<ext>    the image (when the study has one)
      OUT/<group>/gt.png         the GT
      OUT/<group>/rank1.png …    the maps, best first

  :func:`load_ranked` reads it back, and also reads FMDatabase/CamoHR-style folders: one
  folder per group holding an image, a GT (``gt*``/``GT*``/``mask*``) and maps whose names
  start with their rank (``1.png``, ``rank2_x.png``, ``3-model.png``).
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import shutil
import zipfile
import zlib
from pathlib import Path

from fminspect.io.atomic import atomic_open, replacing, strict_json, write_bytes, write_text
from fminspect.io.limits import (
    MAX_JSON_BYTES,
    MAX_PACK_MEMBER,
    MAX_PACK_RATIO,
    MAX_PACK_TOTAL,
    FileTooLarge,
    read_text,
)
from fminspect.io.loading import load_image, load_map
from fminspect.ranking.aggregate import StudyResult
from fminspect.ranking.agreement import RankedGroup
from fminspect.ranking.design import Design
from fminspect.ranking.schedule import Trial
from fminspect.ranking.store import StudyError, StudyStore

PACK_FORMAT = "fminspect-study-pack/1"
RANKED_FORMAT = "fminspect-human-ranked/1"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _pack_names(design: Design) -> dict[str, str]:
    """Each file of the study → its name inside a pack (``files/00000.png`` …), in the order of
    :meth:`Design.files`; packing and unpacking both derive it from the design."""
    return {f: f"files/{i:05d}{Path(f).suffix.lower()}" for i, f in enumerate(design.files())}


def write_pack(
    store: StudyStore,
    out: Path | str,
    participant: str | None = None,
    *,
    progress: bool | None = False,
) -> Path:
    """Write a self-contained study pack (zip) for participants on other computers.

    With ``participant``, the pack is that participant's: they are registered here and
    given their trials now (an incomplete design's slot, or every pair an active design
    chooses for them from the votes merged so far), the pack carries those trials and
    opens for that participant only, and their results merge into this registration. An
    incomplete or active design needs it (whoever votes elsewhere must get pairs this lab
    knows about); a full design's pack serves any number of participants.

    Refused when a file of the study is missing or cannot be read as an image (every file is
    decoded first; ``progress`` as :func:`~fminspect.ranking.build.check_files`')."""
    from fminspect.ranking.build import check_files

    out = Path(out)
    design = store.design
    if participant is None and design.sampling != "full":
        raise StudyError(
            f"a pack of an {design.sampling} design is made for one participant, who is given "
            "their pairs now: add --participant ID (one pack per participant)"
        )
    problems = check_files(design, progress=progress)
    if problems:
        raise StudyError("cannot pack: " + "; ".join(problems))
    names = _pack_names(design)
    manifest = {arc: _sha256(Path(f)) for f, arc in names.items()}
    given = None
    if participant is not None:
        participant = participant.strip()
        if participant in store.participants() and store.votes(participant):
            raise StudyError(f"participant {participant!r} has already voted in this study")
        trials = store.register(participant, origin=f"pack:{out.name}", whole=True)
        while len(trials) < store.planned(participant):  # registered earlier, in part
            trials += store.extend(participant)
        given = {
            "participant": participant,
            "slot": store.slot(participant),
            "trials": [t._asdict() for t in trials],
        }
    with replacing(out) as tmp, zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr(
            "manifest.json",
            json.dumps(
                {
                    "format": PACK_FORMAT,
                    "study_id": design.study_id,
                    "design_fingerprint": design.fingerprint,
                    "name": design.name,
                    "files": manifest,
                    "participant": participant,
                },
                indent=1,
            ),
        )
        z.writestr("design.json", design.to_json())
        if given is not None:
            z.writestr("participant.json", json.dumps(given, indent=1))
        for f, arc in names.items():
            z.write(f, arc)
    return out


def open_pack(pack: Path | str, folder: Path | str) -> Path:
    """Unpack a study pack into ``folder`` and create its local study file; returns its path.

    Refuses (StudyError naming the pack) anything that is not an intact fminspect pack: a
    damaged zip, a manifest that does not match the design, a member whose digest differs,
    and a folder already holding another version of the study. Sizes are checked before
    anything is inflated (:mod:`fminspect.io.limits`): the manifest and design against
    :data:`MAX_JSON_BYTES`; each file against :data:`MAX_PACK_MEMBER` and
    :data:`MAX_PACK_RATIO`, all of them against :data:`MAX_PACK_TOTAL` and the free disk
    space. Files are inflated in chunks, their digests checked as they are written, and only
    under names made from the design (never paths taken from the zip).
    """
    pack, folder = Path(pack), Path(folder)
    try:
        with zipfile.ZipFile(pack) as z:
            manifest = json.loads(_member(z, pack, "manifest.json", MAX_JSON_BYTES))
            design = Design.from_json(_member(z, pack, "design.json", MAX_JSON_BYTES).decode())
            names = _pack_names(design)
            if (
                not isinstance(manifest, dict)
                or manifest.get("format") != PACK_FORMAT
                or manifest.get("design_fingerprint") != design.fingerprint
                or set(manifest.get("files", {})) != set(names.values())
            ):
                raise StudyError(
                    f"{pack}: manifest and design do not match (damaged or edited pack)"
                )
            study = folder / "study.sqlite"
            if study.exists():
                with StudyStore(study) as existing:
                    if existing.design.fingerprint != design.fingerprint:
                        raise StudyError(
                            f"{folder} already holds another version of this study; "
                            "unpack into a new folder"
                        )
            given = None
            if manifest.get("participant") is not None:
                given = _given(
                    json.loads(_member(z, pack, "participant.json", MAX_JSON_BYTES)),
                    manifest["participant"],
                    design,
                    pack,
                )
            infos = [_checked_info(z, pack, arc) for arc in names.values()]
            _check_total(pack, folder, infos)
            folder.mkdir(parents=True, exist_ok=True)
            for info in infos:  # names made here, never paths taken from the zip
                target = folder / info.filename
                target.parent.mkdir(parents=True, exist_ok=True)
                _extract(z, pack, info, target, manifest["files"][info.filename])
    except StudyError:
        raise
    except (
        zipfile.BadZipFile,
        zlib.error,
        OSError,
        KeyError,
        ValueError,
        TypeError,
        EOFError,
    ) as exc:
        raise StudyError(
            f"{pack}: not a study pack, or a damaged one ({type(exc).__name__}: {exc})"
        ) from None
    if not study.exists():
        # the local study keeps the lab's design (same fingerprint), with local file paths
        StudyStore.create(study, design).close()
    if given is not None:
        with StudyStore(study) as local:
            if local.pack_for not in (None, given[0]):
                raise StudyError(
                    f"{folder} already holds this study for participant {local.pack_for!r}; "
                    "unpack into a new folder"
                )
            local.adopt(*given)
    write_text(
        folder / "paths.json",
        json.dumps({f: str((folder / a).resolve()) for f, a in names.items()}),
    )
    return study


def _given(
    raw: object, participant: object, design: Design, pack: Path
) -> tuple[str, list[Trial], int | None]:
    """The participant, trials and slot a pack was made for, checked against its design."""
    refused = StudyError(
        f"{pack}: the participant's trials do not match the study (damaged or edited pack)"
    )
    groups = {g.id: {i.id for i in g.items} for g in design.groups}
    checks = {c.id: {c.good.id, c.bad.id} for c in design.checks}
    try:
        if not (
            isinstance(raw, dict)
            and isinstance(participant, str)
            and participant.strip()
            and raw["participant"] == participant
            and (raw["slot"] is None or isinstance(raw["slot"], int))
        ):
            raise refused
        trials = [Trial(**t) for t in raw["trials"]]
    except (KeyError, TypeError):
        raise refused from None
    for k, t in enumerate(trials):
        known = checks if t.kind == "check" else groups
        if not (
            t.index == k
            and t.kind in ("pair", "repeat", "check")
            and t.left != t.right
            and {t.left, t.right} <= known.get(t.group, set())
        ):
            raise refused
    return participant, trials, raw["slot"]


def _member(z: zipfile.ZipFile, pack: Path, name: str, limit: int) -> bytes:
    """A small member read whole, after its declared size is checked (a JSON bomb is not)."""
    size = z.getinfo(name).file_size
    if size > limit:
        raise StudyError(f"{pack}: {name} would inflate to {size:,} bytes (limit {limit:,})")
    return z.read(name)


def _checked_info(z: zipfile.ZipFile, pack: Path, arc: str) -> zipfile.ZipInfo:
    """The member ``arc``, refused when its declared size or compression ratio is that of a
    decompression bomb rather than of an image file."""
    info = z.getinfo(arc)
    if info.file_size > MAX_PACK_MEMBER:
        raise StudyError(
            f"{pack}: {arc} would inflate to {info.file_size:,} bytes, more than any image of "
            f"a study (limit {MAX_PACK_MEMBER:,})"
        )
    ratio = info.file_size / max(info.compress_size, 1)
    if info.file_size > 2**20 and ratio > MAX_PACK_RATIO:
        raise StudyError(
            f"{pack}: {arc} would inflate {ratio:,.0f}-fold ({info.compress_size:,} → "
            f"{info.file_size:,} bytes): a decompression bomb, not an image (limit "
            f"{MAX_PACK_RATIO}-fold)"
        )
    return info


def _check_total(pack: Path, folder: Path, infos: list[zipfile.ZipInfo]) -> None:
    total = sum(i.file_size for i in infos)
    if total > MAX_PACK_TOTAL:
        raise StudyError(
            f"{pack}: its files would inflate to {total:,} bytes (limit {MAX_PACK_TOTAL:,})"
        )
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    free = shutil.disk_usage(existing).free
    if total + 2**26 > free:
        raise StudyError(
            f"{pack}: its files need {total / 2**20:,.0f} MB and {existing} has "
            f"{free / 2**20:,.0f} MB free"
        )


def _extract(
    z: zipfile.ZipFile, pack: Path, info: zipfile.ZipInfo, target: Path, digest: str
) -> None:
    """Inflate one member into ``target`` in 1 MB chunks (atomically), checking its digest."""
    sha = hashlib.sha256()
    with replacing(target) as tmp, z.open(info) as src, open(tmp, "wb") as dst:
        # zipfile stops at the declared size (checked above) and checks the CRC at the end
        while chunk := src.read(2**20):
            sha.update(chunk)
            dst.write(chunk)
        if sha.hexdigest() != digest:
            raise StudyError(f"{pack}: {info.filename} is damaged (digest mismatch)")


def local_paths(study: Path | str) -> dict[str, str]:
    """For a study opened from a pack: the lab's paths → the unpacked files (else empty)."""
    p = Path(study).with_name("paths.json")
    return json.loads(read_text(p, what="paths file")) if p.exists() else {}


def write_results(store: StudyStore, participant: str, out: Path | str) -> Path:
    """A participant's results file (JSON) to send back to the lab."""
    out = Path(out)
    write_text(out, json.dumps(store.export_results(participant), indent=1))
    return out


def merge_results_file(store: StudyStore, path: Path | str) -> int:
    """Merge a results JSON into the lab's study (see :meth:`StudyStore.merge_results`)."""
    path = Path(path)
    try:
        results = json.loads(read_text(path, what="results file"))
    except FileTooLarge as exc:
        raise StudyError(str(exc)) from None
    except (OSError, ValueError) as exc:
        raise StudyError(f"{path}: cannot read the results ({exc})") from None
    if not isinstance(results, dict):
        raise StudyError(f"{path}: not an fminspect results file")
    return store.merge_results(results, str(path))


VOTE_COLUMNS = (
    "observer",
    "session",
    "scene",
    "condition_A",
    "condition_B",
    "selection",
    "trial",
    "kind",
    "item_A",
    "item_B",
    "chosen_item",
    "chosen_model",
    "rt_ms",
    "timestamp",
    "app_version",
    "study_id",
)


def write_votes_csv(store: StudyStore, out: Path | str) -> Path:
    """Every vote as a tidy CSV, one row per vote, in the column style of pwcmp (Mantiuk's
    pairwise-comparison toolbox): ``observer``, ``session``, ``scene`` (the group's sample),
    ``condition_A``/``condition_B`` (the models shown left/right) and ``selection`` (1 = A
    chosen, 0 = B, 0.5 = cannot decide), then fminspect's own columns."""
    out = Path(out)
    design = store.design
    models: dict[str, str] = {i.id: i.model for g in design.groups for i in g.items}
    models.update({i.id: i.model for c in design.checks for i in (c.good, c.bad)})
    scenes = {g.id: g.sample for g in design.groups} | {
        c.id: f"check:{c.kind}" for c in design.checks
    }
    with atomic_open(out, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(VOTE_COLUMNS)
        for v in store.votes():
            selection = {"left": 1, "right": 0, "tie": 0.5}[v.choice]
            w.writerow(
                [
                    v.participant,
                    design.name,
                    scenes.get(v.group, v.group),
                    models[v.left],
                    models[v.right],
                    selection,
                    v.trial,
                    v.kind,
                    v.left,
                    v.right,
                    v.chosen or "",
                    models.get(v.chosen, "") if v.chosen else "",
                    f"{v.rt_ms:.1f}",
                    v.ts,
                    v.app_version,
                    design.study_id,
                ]
            )
    return out


# --------------------------------------------------------------------------- ranked datasets
def export_ranked(result: StudyResult, out: Path | str) -> Path:
    """Write the consensual groups as a human-ranked dataset (layout in the module notes)."""
    from fminspect.ranking.report import scales_basis

    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise StudyError(
            f"{out} is not empty; export into a new folder (old groups would stay behind)"
        )
    out.mkdir(parents=True, exist_ok=True)
    design = result.design
    rows, groups = [], []
    for g in result.consensual:
        assert g.consensus is not None  # consensual groups have a consensus
        grp = design.group(g.group)
        folder = out / g.group
        folder.mkdir(exist_ok=True)
        if grp.image:
            shutil.copyfile(grp.image, folder / f"image{Path(grp.image).suffix.lower()}")
        if grp.gt:
            write_bytes(folder / "gt.png", _png(grp.gt))
        ranked = []
        for rank, item_id in enumerate(g.consensus, start=1):
            k = g.items.index(item_id)
            item = grp.item(item_id)
            name = f"rank{rank}.png"
            write_bytes(folder / name, _png(item.path))
            entry = {
                "rank": rank,
                "file": f"{g.group}/{name}",
                "item": item_id,
                "model": item.model,
                "bt": float(g.bt[k]),
                "bt_sd": float(g.bt_sd[k]),
                "wins": float(g.wins[k].sum()),
                "jod": float(g.jod.scores[k]) if g.jod else None,
                "jod_low": float(g.jod.low[k]) if g.jod else None,
                "jod_high": float(g.jod.high[k]) if g.jod else None,
            }
            ranked.append(entry)
            rows.append(
                [
                    g.group,
                    rank,
                    entry["file"],
                    item.model,
                    entry["bt"],
                    entry["bt_sd"],
                    entry["wins"],
                    g.kendall_w,
                    g.voters,
                    entry["jod"],
                    entry["jod_low"],
                    entry["jod_high"],
                ]
            )
        groups.append(
            {
                "group": g.group,
                "dataset": grp.dataset,
                "sample": grp.sample,
                "image": f"{g.group}/image{Path(grp.image).suffix.lower()}" if grp.image else None,
                "gt": f"{g.group}/gt.png",
                "ranked": ranked,
                "kendall_w": g.kendall_w,
                "participants": g.voters,
                "reason": g.reason,
                "separated": g.separation,
            }
        )
    manifest = {
        "format": RANKED_FORMAT,
        "study": design.name,
        "study_id": design.study_id,
        "rule": str(result.rule),
        "design": design.sampling,
        "scales": scales_basis(result),
        "excluded_participants": result.excluded,
        "groups": groups,
        "rejected": [
            {"group": g.group, "reason": g.reason} for g in result.groups if g.consensus is None
        ],
    }
    write_text(out / "manifest.json", strict_json(manifest))
    with atomic_open(out / "manifest.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(
            [
                "group",
                "rank",
                "file",
                "model",
                "bt",
                "bt_sd",
                "wins",
                "kendall_w",
                "participants",
                "jod",
                "jod_low",
                "jod_high",
            ]
        )
        w.writerows(rows)
    return out


def _png(path: str) -> bytes:
    import cv2

    ok, buf = cv2.imencode(".png", load_map(path).array)
    if not ok:
        raise StudyError(f"{path}: could not be encoded as PNG")
    return buf.tobytes()


_RANK = re.compile(r"^(?:rank)?[_-]?(\d+)(?:[_\-. ].*)?$", re.IGNORECASE)


def load_ranked(root: Path | str) -> tuple[list[RankedGroup], list[str]]:
    """Read a human-ranked dataset (fminspect's layout or rank-named folders; module notes).

    Returns the groups and a message for each group that could not be read (left out)."""
    from fminspect.io.validation import LoadError

    root = Path(root)
    if not root.is_dir():
        raise StudyError(f"{root}: no such folder")
    manifest = root / "manifest.json"
    out, problems = [], []
    if manifest.exists():
        try:
            data = json.loads(read_text(manifest, what="manifest"))
        except FileTooLarge as exc:
            raise StudyError(str(exc)) from None
        except (OSError, ValueError) as exc:
            raise StudyError(f"{manifest}: not valid JSON ({exc})") from None
        if not isinstance(data, dict) or data.get("format") != RANKED_FORMAT:
            raise StudyError(f"{manifest}: not a {RANKED_FORMAT} manifest")
        for k, g in enumerate(data.get("groups", [])):
            try:
                ranked = sorted(g["ranked"], key=lambda r: r["rank"])
                maps = tuple(load_map(root / r["file"]).array for r in ranked)
                image = load_image(root / g["image"]) if g.get("image") else None
                gt = load_map(root / g["gt"]).array
                out.append(
                    RankedGroup(
                        str(g["group"]), gt, maps, image, tuple(str(r["model"]) for r in ranked)
                    )
                )
            except LoadError as exc:
                problems.append(f"{g.get('group', k + 1)}: {exc}")
            except (KeyError, TypeError, AttributeError):
                problems.append(f"{manifest}: group entry {k + 1} is malformed; left out")
        if not out:
            raise StudyError(
                f"{manifest}: no readable group" + "".join(f"\n  {p}" for p in problems)
            )
        return out, problems
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        files = sorted(f for f in folder.iterdir() if f.is_file() and not f.name.startswith("."))
        gt_file = next((f for f in files if f.stem.lower().startswith(("gt", "mask"))), None)
        image_file = next((f for f in files if f.stem.lower().startswith(("image", "img"))), None)
        ranked = sorted(
            (int(m.group(1)), f)
            for f in files
            if f not in (gt_file, image_file) and (m := _RANK.match(f.stem))
        )
        if gt_file is None or len(ranked) < 2:
            if files:
                problems.append(
                    f"{folder}: skipped (needs a GT named gt*/mask* and at least two maps "
                    "named by rank)"
                )
            continue
        try:
            maps = tuple(load_map(f).array for _, f in ranked)
            out.append(
                RankedGroup(
                    folder.name,
                    load_map(gt_file).array,
                    maps,
                    load_image(image_file) if image_file else None,
                    tuple(f.stem for _, f in ranked),
                )
            )
        except LoadError as exc:
            problems.append(f"{folder.name}: {exc}")
    if not out:
        raise StudyError(
            f"{root}: no ranked groups found (need a manifest.json, or folders with a "
            "GT and maps named by rank)" + "".join(f"\n  {p}" for p in problems)
        )
    return out, problems
