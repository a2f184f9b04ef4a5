"""Game review (issue 36): who may ask for a finished game's analysis, the queue of analyses, their bounds, their
store. Sans-I/O: the server hands it requests and finished positions and carries out the `Outbox` it returns; it
asks `next_work` for the next position to assess and runs it in the AI workers (server/app.py), where
server/ai/analysis.py does the thinking.

One analysis per game ever: once made it is stored with the game (`AnalysisSaved`, the `analyses` table) and every
later request, from anyone who may see the game, is answered from the store without a search. While one runs,
everyone asking for the same game waits for that one. An analysis nobody waits for any more (each asker cancelled
or disconnected) stops: its positions not yet handed out are never assessed.

Bounds (`ReviewLimits`): analyses queued or running on the server, analyses one address waits for at once, and new
analyses one person (a claimed name, else a session's token) and one address may start per hour. Asking for a
stored analysis, or for one already running, costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from gamenight.protocol.errors import ErrorCode
from gamenight.protocol.messages import Analyse, Analysis, AnalysisProgress, Error, Queued
from gamenight.server.bucket import Window
from gamenight.server.outbox import Outbox, Refusal
from gamenight.server.records import AnalysisSaved
from gamenight.server.review_report import DEFAULT_BUDGET_MS, GAMES, analyse, units

HOUR_S = 3600.0


class ReviewStore(Protocol):
    """What the review reads from the store (server/sqlstore.py); it writes through `AnalysisSaved` records."""

    def get_game(self, game_id: int, viewer: str | None) -> dict[str, Any] | None: ...

    def analysis(self, game_id: int) -> dict[str, Any] | None: ...


@dataclass(frozen=True, slots=True)
class ReviewLimits:
    """How much reviewing the server does, and for whom (each is a `--limit` of gamenight-server)."""

    review_ms: int = DEFAULT_BUDGET_MS  # thinking time per position
    review_queue: int = 16  # analyses queued or running on the server
    reviews_waited_per_ip: int = 2  # analyses one address waits for at once
    reviews_per_person_hour: int = 10  # new analyses one person starts in an hour
    reviews_per_ip_hour: int = 20  # ... and one address


class Person(Protocol):
    """What the lobby knows of someone asking (server/lobby.py `Client`)."""

    session: str
    name: str
    token_hash: str
    claimed: bool
    ip: str


@dataclass(frozen=True, slots=True)
class Asker:
    """Who asks: their session, the token hash that decides which games they may see, the person the hourly
    bound counts (a claimed name, else the token hash) and their address."""

    session: str
    token_hash: str
    person: str
    ip: str

    @classmethod
    def of(cls, person: Person) -> Asker:
        """The asker a lobby client is: a claimed name counts as the person, else the session's token."""
        return cls(person.session, person.token_hash, person.name if person.claimed else person.token_hash, person.ip)


@dataclass(frozen=True, slots=True)
class Work:
    """One position to assess in a worker: the position before move `ply` of a game (`ply` = len(moves): the end);
    for Tron, the whole game's territories at once (`ply` 0)."""

    game_id: int
    game: str
    options: dict[str, Any]
    moves: tuple[str, ...]
    ply: int
    budget_ms: int


@dataclass(slots=True)
class Job:
    """An analysis being made: its game, the values found so far (one per position; one for a whole Tron game) and
    who waits for it."""

    game_id: int
    game: str
    options: dict[str, Any]
    moves: tuple[str, ...]
    values: list[dict[str, Any] | None]
    waiters: dict[str, str] = field(default_factory=dict)  # session -> its address
    handed: int = 0  # positions handed out to workers so far, in order

    @property
    def done(self) -> int:
        """Positions assessed so far."""
        return sum(value is not None for value in self.values)


class ReviewService:
    """The queue of analyses, its bounds and the stored analyses (see the module docstring)."""

    def __init__(self, store: ReviewStore | None, limits: ReviewLimits | None = None) -> None:
        self.store = store
        self.limits = limits or ReviewLimits()
        self.jobs: dict[int, Job] = {}  # by game id, oldest first
        self.started = Window(HOUR_S)  # by person or address: when its analyses of the last hour started
        self.searches = 0  # positions handed to workers since the start (what a stored analysis saves)

    # -- requests ---------------------------------------------------------------------------------------------------
    def request(self, asker: Asker, msg: Analyse, now: float) -> Outbox:
        """Answer `analyse`: the stored analysis, or `queued` (joining a running one or starting one), or a refusal;
        with `cancel`, stop waiting."""
        out = Outbox()
        if msg.cancel:
            job = self.jobs.get(msg.game_id)
            done, total = (job.done, len(job.values)) if job is not None else (0, 0)
            self._stop_waiting(asker.session, msg.game_id)
            out.send({asker.session}, AnalysisProgress(game_id=msg.game_id, done=done, total=total, waiting=False))
            return out
        if self.store is None:
            raise Refusal(ErrorCode.NOT_ALLOWED, "this server keeps no game history")
        record = self.store.get_game(msg.game_id, asker.token_hash)
        if record is None:
            raise Refusal(ErrorCode.UNKNOWN_GAME, f"there is no finished game {msg.game_id}")
        if record["game"] not in GAMES:
            raise Refusal(ErrorCode.NOT_ALLOWED, f"{record['game']} games are not reviewed")
        stored = self.store.analysis(msg.game_id)
        if stored is not None:
            out.send({asker.session}, _analysis(msg.game_id, stored, msg.id))
            return out
        job = self.jobs.get(msg.game_id)
        if job is None:
            self._may_start(asker, now)
            job = self.jobs[msg.game_id] = Job(
                msg.game_id,
                record["game"],
                record["options"],
                tuple(record["moves"]),
                [None] * units(record["game"], record["moves"]),
            )
        elif asker.session not in job.waiters:
            self._may_wait(asker)
        job.waiters[asker.session] = asker.ip
        out.send({asker.session}, Queued(game_id=msg.game_id, ahead=self._ahead(msg.game_id), id=msg.id))
        return out

    def _may_wait(self, asker: Asker) -> None:
        """Refuse a wait past the address's share of analyses."""
        waiting = sum(asker.ip in job.waiters.values() for job in self.jobs.values())
        if waiting >= self.limits.reviews_waited_per_ip:
            raise Refusal(
                ErrorCode.TOO_MANY,
                f"your address already waits for {waiting} analyses; wait for one to finish",
            )

    def _may_start(self, asker: Asker, now: float) -> None:
        """Refuse a new analysis past the server's queue, the address's share or an hourly allowance; else count it."""
        if len(self.jobs) >= self.limits.review_queue:
            raise Refusal(ErrorCode.RATE_LIMITED, "the server is busy reviewing games", retry_after_ms=60_000)
        self._may_wait(asker)
        bounds = (
            (f"person:{asker.person}", self.limits.reviews_per_person_hour),
            (f"ip:{asker.ip}", self.limits.reviews_per_ip_hour),
        )
        for key, per_hour in bounds:
            if self.started.count(key, now) >= per_hour:
                retry_ms = int(self.started.retry_after_s(key, now) * 1000) + 1
                text = f"at most {per_hour} new analyses an hour"
                raise Refusal(ErrorCode.RATE_LIMITED, text, retry_after_ms=retry_ms)
        for key, _ in bounds:
            self.started.add(key, now)

    def _ahead(self, game_id: int) -> int:
        """Analyses queued or running before this one."""
        return list(self.jobs).index(game_id)

    def _stop_waiting(self, session: str, game_id: int | None = None) -> None:
        """`session` waits no more (for `game_id`, or for anything); analyses nobody waits for stop."""
        for job in list(self.jobs.values()):
            if game_id is None or job.game_id == game_id:
                job.waiters.pop(session, None)
                if not job.waiters:
                    del self.jobs[job.game_id]

    def gone(self, session: str) -> None:
        """A session ended: it waits for nothing any more."""
        self._stop_waiting(session)

    # -- the work ---------------------------------------------------------------------------------------------------
    def next_work(self) -> Work | None:
        """The next position to assess (the oldest analysis first), now counted as handed out; None if none."""
        for job in self.jobs.values():
            if job.handed < len(job.values):
                job.handed += 1
                self.searches += 1
                return Work(job.game_id, job.game, job.options, job.moves, job.handed - 1, self.limits.review_ms)
        return None

    def done(self, work: Work, value: dict[str, Any]) -> Outbox:
        """A position was assessed: tell the waiters how far it is; once every position is, store the analysis and
        send it to them. Nothing if the analysis was cancelled meanwhile."""
        out = Outbox()
        job = self.jobs.get(work.game_id)
        if job is None:
            return out
        job.values[work.ply] = value
        if job.done < len(job.values):
            out.send(set(job.waiters), AnalysisProgress(game_id=job.game_id, done=job.done, total=len(job.values)))
            return out
        del self.jobs[job.game_id]
        values = [value for value in job.values if value is not None]
        analysis = analyse(job.game, job.options, job.moves, values, work.budget_ms)
        out.records.append(AnalysisSaved(job.game_id, analysis))
        out.send(set(job.waiters), _analysis(job.game_id, analysis, None))
        return out

    def failed(self, work: Work) -> Outbox:
        """A position could not be assessed (a worker died): the analysis is dropped and its waiters told."""
        out = Outbox()
        job = self.jobs.pop(work.game_id, None)
        if job is not None:
            text = f"the analysis of game {work.game_id} failed; ask again later"
            out.send(set(job.waiters), Error(code=ErrorCode.UNAVAILABLE, message=text))
        return out


def _analysis(game_id: int, analysis: dict[str, Any], request_id: int | None) -> Analysis:
    """The `analysis` message of a stored or new analysis."""
    return Analysis(
        game_id=game_id,
        moves=analysis["moves"],
        summary=analysis["summary"],
        budget_ms=analysis.get("budget_ms", 0),
        id=request_id,
    )
