"""The voting server's web application (Starlette): participants' pages, their trials' pictures
and votes, and the admin page.

The study file stays the one truth. Every read and write of it happens on one thread that
owns the study's connection (:class:`StudyDesk`), through the same
:class:`~fminspect.ranking.store.VotingSession` the voting window uses, so a vote is
committed (``synchronous=FULL``) before its answer, which carries the next trial, leaves the
server. The votes cast in browsers and in windows, merged from packs or simulated, are the
same rows, and an active design chooses the next pairs from all of them.

What a participant reaches (see ``tests/web/test_security.py``):

* their own page, state and pictures, through the token of their link, and nothing else: a
  trial's pictures by the trial's number in *their* schedule — never a file name or a path,
  never an item id or a method's name — and the GT only when the study shows it;
* a vote only for the trial they are shown; the same vote sent twice (a double click, a
  retry after a lost answer, the back button) is stored once, and a different answer to a
  trial already answered is refused (the page's undo is the way to change it).

The admin page is behind a token of its own, made when the server starts. Nothing a request
carries is logged, so tokens do not end up in log files.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import sqlite3
import sys
import threading
from collections import OrderedDict, defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import cv2
import numpy as np
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from fminspect.io.atomic import strict_json
from fminspect.io.resources import resource
from fminspect.io.validation import LoadError
from fminspect.ranking import invites
from fminspect.ranking.aggregate import (
    ParticipantStats,
    aggregate,
    default_rule,
    participant_stats,
)
from fminspect.ranking.present import Presenter
from fminspect.ranking.report import group_rows
from fminspect.ranking.schedule import Trial, planned_trials
from fminspect.ranking.store import StudyError, StudyStore, VotingSession
from fminspect.web.limits import Limits, RateLimiter

T = TypeVar("T")
#: Pictures of a trial: the two candidates and up to two references (image, GT).
SLOTS = ("left", "right", "ref0", "ref1")
#: Encoded pictures kept in memory (bytes), shared by every participant.
PICTURE_CACHE_BYTES = 96 * 2**20
NOT_SAVED = "Your answer could not be saved. Every earlier answer is safe — please try again."
HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    ),
}


class Refused(Exception):
    """A request answered with ``status`` and a message for the page (no traceback)."""

    def __init__(self, status: int, message: str, state: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.state = status, message, state


def json_response(body: dict[str, Any], status: int = 200) -> Response:
    """``body`` as strict JSON (NaN and infinities as null, which JavaScript can parse)."""
    return Response(strict_json(body, None), status, media_type="application/json")


class StudyDesk:
    """The study file, owned by one thread: every call runs there, in arrival order."""

    def __init__(self, path: Path, paths: dict[str, str] | None = None) -> None:
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="fminspect-study")
        self.path = path
        self.store: StudyStore = self._thread.submit(self._open, path).result()
        design = self.store.design
        self.design = design.with_paths(paths) if paths else design
        self._sessions: dict[str, VotingSession] = {}
        self._tokens: dict[str, str] = {}  # digest → participant, for tokens seen valid

    @staticmethod
    def _open(path: Path) -> StudyStore:
        store = StudyStore(path)
        invites.ensure_table(store)
        return store

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn, *args)

    def run_now(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn`` on the study thread and wait for it (from outside the event loop)."""
        return self._thread.submit(fn, *args).result()

    def close(self) -> None:
        self._thread.submit(self.store.close).result()
        self._thread.shutdown()

    # ------------------------------------------------------------------ on the study thread
    def participant(self, token: str) -> str | None:
        key = invites.digest(token)
        if key in self._tokens:
            return self._tokens[key]
        who = invites.participant_of(self.store, token)
        if who is not None:
            self._tokens[key] = who
        return who

    def session(self, participant: str) -> VotingSession:
        if participant not in self._sessions:
            self._sessions[participant] = VotingSession(self.store, participant, "web")
        return self._sessions[participant]

    def state(self, participant: str) -> dict[str, Any]:
        """What the page shows now: progress, and the trial to answer with the one after it
        (to load its pictures ahead) — by number only."""
        session = self.session(participant)
        is_open = invites.is_open(self.store)
        trial = session.current()
        following = None if trial is None else session.following(trial)
        d = self.design
        return {
            "study": d.name,
            "participant": participant,
            "status": "closed" if not is_open else ("finished" if trial is None else "vote"),
            "position": session.position,
            "total": session.total,
            "allow_ties": d.allow_ties,
            "show_gt": d.show_gt,
            "last": session.last if is_open else None,
            "trial": None if trial is None else self._trial(trial),
            "next": None if following is None else self._trial(following),
        }

    def _trial(self, trial: Trial) -> dict[str, Any]:
        refs = (["image"] if self.design.show_image else []) + (
            ["ground truth"] if self.design.show_gt else []
        )
        return {"index": trial.index, "references": refs}

    def vote(self, participant: str, index: int, choice: str, rt_ms: float) -> dict[str, Any]:
        if not invites.is_open(self.store):
            raise Refused(403, "The study is closed for now; every answer so far is saved.")
        session = self.session(participant)
        current = session.current()
        if current is not None and current.index == index:
            try:
                session.vote(choice, rt_ms)
            except StudyError as exc:  # 'cannot decide' where the study does not allow it
                raise Refused(409, str(exc), self.state(participant)) from None
            return self.state(participant) | {"saved": True}
        stored = self.store.db.execute(
            "SELECT choice FROM votes WHERE participant = ? AND trial = ?", (participant, index)
        ).fetchone()
        if stored is not None and stored[0] == choice:  # sent twice: stored once
            return self.state(participant) | {"saved": True, "duplicate": True}
        if stored is not None:
            raise Refused(
                409,
                "That pair was already answered; use Undo to change the last answer.",
                self.state(participant),
            )
        if all(t.index != index for t in session.trials):
            raise Refused(403, "That trial is not one of yours.")
        raise Refused(409, "That is not the pair on your screen.", self.state(participant))

    def ahead(self, participant: str) -> None:
        """After an answer has been sent: an active design's next pairs, chosen before the
        participant reaches them (a failure here is retried when they do)."""
        with contextlib.suppress(StudyError, sqlite3.Error, OSError):
            self.session(participant).choose_ahead()

    def undo(self, participant: str, index: int) -> dict[str, Any]:
        if not invites.is_open(self.store):
            raise Refused(403, "The study is closed for now; every answer so far is saved.")
        session = self.session(participant)
        if session.last != index:  # sent twice, or from an old page: nothing to take back
            raise Refused(409, "There is no such answer to take back.", self.state(participant))
        session.undo()
        return self.state(participant)

    def trial(self, participant: str, index: int) -> Trial | None:
        """One of ``participant``'s trials (None when they have no such trial)."""
        session = self.session(participant)
        return next((t for t in session.trials if t.index == index), None)

    def set_open(self, value: bool) -> None:
        invites.set_open(self.store, value)


def _status(path: Path) -> dict[str, Any]:
    """The admin page's table, on a connection of its own (voting goes on meanwhile): every
    invited or registered participant's progress and the quality flags of their votes."""
    store = StudyStore(path)
    try:
        db = store.db
        origin = dict(db.execute("SELECT id, origin FROM participants ORDER BY rowid"))
        everyone = list(dict.fromkeys(invites.invited(store) + list(origin)))
        votes = defaultdict(list)
        for v in store.votes():
            votes[v.participant].append(v)
        last = dict(db.execute("SELECT participant, MAX(ts) FROM votes GROUP BY participant"))
        stored = dict(db.execute("SELECT participant, COUNT(*) FROM trials GROUP BY participant"))
        special: dict[str, dict[int, Trial]] = defaultdict(dict)  # checks and repeats
        for who, *trial in db.execute(
            "SELECT participant, idx, kind, grp, left_item, right_item, repeat_of, correct "
            "FROM trials WHERE kind != 'pair'"
        ):
            special[who][trial[0]] = Trial(*trial)
        rows: list[dict[str, Any]] = []
        for who in everyone:
            if who not in origin:
                rows.append({"participant": who, "origin": "invited", "started": False})
                continue
            s = participant_stats(store.design, votes[who], special[who])
            planned = stored.get(who, 0)
            if store.design.sampling == "active":
                planned = max(planned, planned_trials(store.design))
            rows.append(
                {
                    "participant": who,
                    "origin": origin[who],
                    "started": bool(votes[who]),
                    "answered": len(votes[who]),
                    "planned": planned,
                    "last_vote": last.get(who),
                    "attention": [s.checks_passed, s.checks],
                    "consistency": [s.consistent, s.repeats],
                    "left_share": s.left_share,
                    "side_bias_p": s.left_bias_p,
                    "median_rt_ms": s.median_rt_ms,
                    "flags": _flags(s),
                }
            )
        return {
            "study": store.design.name,
            "open": invites.is_open(store),
            "design": store.design.sampling,
            "groups": len(store.design.groups),
            "votes": sum(len(v) for v in votes.values()),
            "participants": rows,
        }
    finally:
        store.close()


def _flags(s: ParticipantStats) -> list[str]:
    """What the lab should look at in a participant's votes so far."""
    out = []
    if s.checks and s.checks_passed < s.checks:
        out.append(f"failed {s.checks - s.checks_passed} of {s.checks} attention checks")
    if s.repeats >= 3 and s.consistency < 0.7:
        out.append(f"answered repeated pairs the same way {s.consistency:.0%} of the time")
    if s.left_bias_p < 0.05:
        left = s.left_share
        out.append(
            f"side bias: chose the {'left' if left > 0.5 else 'right'} map "
            f"{max(left, 1 - left):.0%} of the time (binomial p = {s.left_bias_p:.3g}, "
            "not Holm-adjusted)"
        )
    if s.median_rt_ms < 400:
        out.append(f"very fast: median {s.median_rt_ms:.0f} ms per answer")
    return out


class Pictures:
    """A trial's pictures as PNG (maps) or JPEG (the reference photograph) bytes, made from
    the study's files by the voting window's :class:`~fminspect.ranking.present.Presenter`
    and kept, by what they show, for every participant (bounded by
    :data:`PICTURE_CACHE_BYTES`)."""

    def __init__(self, presenter: Presenter, budget: int = PICTURE_CACHE_BYTES) -> None:
        self._presenter = presenter
        self._lock = threading.Lock()
        self._making = threading.Lock()
        self._cache: OrderedDict[tuple[str, ...], tuple[bytes, str]] = OrderedDict()
        self._bytes, self._budget = 0, budget

    def key(self, trial: Trial, slot: str) -> tuple[str, ...]:
        if slot in ("left", "right"):
            return (
                "map",
                (trial.kind == "check" and "check") or "pair",
                trial.group,
                trial.left if slot == "left" else trial.right,
            )
        return ("ref", (trial.kind == "check" and "check") or "pair", trial.group, slot)

    def get(self, trial: Trial, slot: str) -> tuple[bytes, str] | None:
        """The picture in ``slot`` of ``trial`` (None when the study shows none there);
        raises LoadError naming a file that cannot be read. A trial's pictures are made
        together: the page asks for all of them at once."""
        key = self.key(trial, slot)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        with self._making:  # one trial's files decoded at a time; the cache is read meanwhile
            with self._lock:
                if key in self._cache:  # made while this request waited
                    return self._cache[key]
            screen = self._presenter.screen(trial)
            made = {  # the maps lossless, overlaid or not: they are what is judged
                self.key(trial, "left"): _encode(screen.left, photo=False),
                self.key(trial, "right"): _encode(screen.right, photo=False),
            }
            for k, (label, rgb) in enumerate(screen.references):
                made[self.key(trial, f"ref{k}")] = _encode(rgb, photo=label == "image")
        with self._lock:
            for name, picture in made.items():
                if name not in self._cache:
                    self._cache[name] = picture
                    self._bytes += len(picture[0])
            while self._bytes > self._budget and len(self._cache) > 1:
                _, (old, _) = self._cache.popitem(last=False)
                self._bytes -= len(old)
        return made.get(key)


def _encode(rgb: np.ndarray, *, photo: bool) -> tuple[bytes, str]:
    """JPEG (quality 92) for the reference photograph; lossless PNG for a map (overlaid on
    the photograph or not), one channel when it is grey."""
    if photo:
        ok, data = cv2.imencode(
            ".jpg", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 92]
        )
        kind = "image/jpeg"
    else:
        grey = (
            rgb.ndim == 3
            and np.array_equal(rgb[..., 0], rgb[..., 1])
            and np.array_equal(rgb[..., 0], rgb[..., 2])
        )
        pixels = rgb[..., 0] if grey else cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)
        ok, data = cv2.imencode(".png", pixels, [cv2.IMWRITE_PNG_COMPRESSION, 3])
        kind = "image/png"
    if not ok:
        raise ValueError("a picture could not be encoded")
    return data.tobytes(), kind


class SecurityHeaders:
    """Adds :data:`HEADERS` to every response (pure ASGI: streaming bodies pass untouched)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                have = {k.lower() for k, _ in message.get("headers", [])}
                extra = [
                    (k.lower().encode(), v.encode())
                    for k, v in HEADERS.items()
                    if k.lower().encode() not in have
                ]
                message["headers"] = list(message.get("headers", [])) + extra
            await send(message)

        await self.app(scope, receive, with_headers)


async def _body(request: Request, limit: int) -> dict[str, Any]:
    """The request's JSON object, read no further than ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise Refused(413, "request too large")
    data = b""
    async for chunk in request.stream():
        data += chunk
        if len(data) > limit:
            raise Refused(413, "request too large")
    try:
        body = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise Refused(400, "the request is not JSON") from None
    if not isinstance(body, dict):
        raise Refused(400, "the request is not a JSON object")
    return body


def _index(body: dict[str, Any]) -> int:
    index = body.get("trial")
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < 10**7:
        raise Refused(400, "no trial number")
    return index


class Endpoints:
    """The routes' handlers over one :class:`StudyDesk`."""

    def __init__(
        self, desk: StudyDesk, admin_token: str, limits: Limits, log: Callable[[str], None]
    ) -> None:
        self.desk, self.limits, self.log = desk, limits, log
        self.pictures = Pictures(Presenter(desk.design, cache_size=32))
        self.per_link = RateLimiter(limits.rate, limits.burst)
        self.bad_tokens = RateLimiter(limits.bad_tokens / 60.0, float(limits.bad_tokens))
        self.admin_digest = hashlib.sha256(admin_token.encode()).digest()
        self.scale_lock = asyncio.Lock()
        self._later: set[asyncio.Future[None]] = set()  # referenced until they are done
        self.scale_cache: dict[str, Any] = {}
        self.pages = resource("web")

    def _stranger(self, request: Request, status: int, message: str) -> Refused:
        """A request whose token opens nothing: 404, or 429 past the address's budget."""
        host = request.client.host if request.client else "?"
        return Refused(status if self.bad_tokens.allow(host) else 429, message)

    async def who(self, request: Request) -> str:
        """The participant whose link the request carries (or a refusal)."""
        participant = await self.desk.run(self.desk.participant, request.path_params["token"])
        if participant is None:
            raise self._stranger(
                request, 404, "This link is not valid. Please check it, or ask the lab."
            )
        if not self.per_link.allow(participant):
            raise Refused(429, "too many requests; slow down")
        return participant

    def admin(self, request: Request) -> None:
        """Refuse a request without the admin token."""
        token = request.path_params["token"].encode("utf-8", "replace")
        if not hmac.compare_digest(hashlib.sha256(token).digest(), self.admin_digest):
            raise self._stranger(request, 404, "not found")
        if not self.per_link.allow("admin"):
            raise Refused(429, "too many requests")

    # ------------------------------------------------------------------ participants
    async def participant_page(self, request: Request) -> Response:
        """The page, for a link that opens nothing too (it then says so, as a page)."""
        try:
            await self.who(request)
        except Refused as exc:
            if exc.status != 404:
                raise
            return FileResponse(self.pages / "vote.html", 404, media_type="text/html")
        return FileResponse(self.pages / "vote.html", media_type="text/html")

    async def state(self, request: Request) -> Response:
        participant = await self.who(request)
        return json_response(await self.desk.run(self.desk.state, participant))

    async def vote(self, request: Request) -> Response:
        participant = await self.who(request)
        body = await _body(request, self.limits.body_bytes)
        choice = body.get("choice")
        if choice not in ("left", "right", "tie"):
            raise Refused(400, "choice must be left, right or tie")
        rt = body.get("rt_ms")
        if not isinstance(rt, int | float) or isinstance(rt, bool) or not 0 <= rt < 8.64e7:
            raise Refused(400, "rt_ms must be a number of milliseconds")
        desk = self.desk
        answer = await desk.run(desk.vote, participant, _index(body), choice, rt)
        if desk.design.sampling == "active":  # after this answer, on the study's thread
            self._later.add(asyncio.ensure_future(desk.run(desk.ahead, participant)))
            self._later = {task for task in self._later if not task.done()}
        return json_response(answer)

    async def undo(self, request: Request) -> Response:
        participant = await self.who(request)
        body = await _body(request, self.limits.body_bytes)
        return json_response(await self.desk.run(self.desk.undo, participant, _index(body)))

    async def picture(self, request: Request) -> Response:
        participant = await self.who(request)
        slot = request.path_params["slot"]
        if slot not in SLOTS:
            raise Refused(404, "no such picture")
        trial = await self.desk.run(self.desk.trial, participant, request.path_params["index"])
        if trial is None:
            raise Refused(404, "no such picture")
        loop = asyncio.get_running_loop()
        try:
            made = await loop.run_in_executor(None, self.pictures.get, trial, slot)
        except (LoadError, ValueError) as exc:
            # the lab's terminal names the file; the participant is asked to tell the lab
            self.log(f"fminspect rank serve: trial {trial.index} cannot be shown: {exc}")
            raise Refused(500, "This pair cannot be shown; please tell the lab.") from None
        if made is None:
            raise Refused(404, "no such picture")
        data, kind = made
        return Response(data, media_type=kind, headers={"Cache-Control": "private, max-age=86400"})

    # ------------------------------------------------------------------ the lab
    async def admin_page(self, request: Request) -> Response:
        self.admin(request)
        return FileResponse(self.pages / "admin.html", media_type="text/html")

    async def admin_status(self, request: Request) -> Response:
        self.admin(request)
        loop = asyncio.get_running_loop()
        return json_response(await loop.run_in_executor(None, _status, self.desk.path))

    async def admin_open(self, request: Request) -> Response:
        self.admin(request)
        action = request.path_params["action"]
        if action not in ("stop", "reopen"):
            raise Refused(404, "not found")
        await self.desk.run(self.desk.set_open, action == "reopen")
        loop = asyncio.get_running_loop()
        return json_response(await loop.run_in_executor(None, _status, self.desk.path))

    async def admin_scale(self, request: Request) -> Response:
        """The current scale of every group (the study's default rule), computed on a
        connection of its own so voting goes on meanwhile; kept until a vote changes it."""
        self.admin(request)
        db = self.desk.store.db
        count, last = await self.desk.run(
            lambda: db.execute("SELECT COUNT(*), MAX(rowid) FROM votes").fetchone()
        )
        async with self.scale_lock:
            if self.scale_cache.get("key") != (count, last):
                loop = asyncio.get_running_loop()
                rows = await loop.run_in_executor(None, _scale, self.desk.path)
                self.scale_cache.update(key=(count, last), rows=rows)
        return json_response({"votes": count, "groups": self.scale_cache["rows"]})


def _handled(
    fn: Callable[[Request], Awaitable[Response]],
) -> Callable[[Request], Awaitable[Response]]:
    """``fn`` answering a refusal, or a study file that could not be written, as JSON."""

    async def endpoint(request: Request) -> Response:
        try:
            return await fn(request)
        except Refused as exc:
            body: dict[str, Any] = {"error": exc.message}
            if exc.state is not None:
                body["state"] = exc.state
            return json_response(body, exc.status)
        except (sqlite3.Error, OSError) as exc:  # a full disk, a lost drive
            return json_response({"error": NOT_SAVED, "detail": type(exc).__name__}, 503)

    return endpoint


def _no_icon(request: Request) -> Response:
    return Response(status_code=204)


def make_app(
    study: Path | str,
    admin_token: str,
    *,
    paths: dict[str, str] | None = None,
    limits: Limits | None = None,
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),  # noqa: T201
) -> Starlette:
    """The web application for ``study``; ``admin_token`` opens the admin page; ``log``
    takes the lines for the lab's terminal (never a token)."""
    desk = StudyDesk(Path(study), paths)
    e = Endpoints(desk, admin_token, limits or Limits(), log)
    routes = [
        Route("/s/{token}", _handled(e.participant_page)),
        Route("/s/{token}/state", _handled(e.state)),
        Route("/s/{token}/vote", _handled(e.vote), methods=["POST"]),
        Route("/s/{token}/undo", _handled(e.undo), methods=["POST"]),
        Route("/s/{token}/img/{index:int}/{slot}", _handled(e.picture)),
        Route("/admin/{token}", _handled(e.admin_page)),
        Route("/admin/{token}/status", _handled(e.admin_status)),
        Route("/admin/{token}/scale", _handled(e.admin_scale)),
        Route("/admin/{token}/{action:str}", _handled(e.admin_open), methods=["POST"]),
        Route("/favicon.ico", _no_icon),
        Mount("/static", StaticFiles(directory=e.pages / "static"), name="static"),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        desk.close()

    app = Starlette(routes=routes, lifespan=lifespan)
    app.add_middleware(SecurityHeaders)
    app.state.desk = desk
    return app


def _scale(path: Path) -> list[dict[str, Any]]:
    store = StudyStore(path)
    try:
        result = aggregate(store, default_rule(store.design))
    finally:
        store.close()
    keep = (
        "group",
        "sample",
        "consensus",
        "reason",
        "bt_order",
        "jod",
        "separated",
        "votes",
        "participants",
    )
    return [{k: r[k] for k in keep} for r in group_rows(result)]
