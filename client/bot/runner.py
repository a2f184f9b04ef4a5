"""`gamenight-bot`: an engine process seated on a gamenight server as a bot player.

The runner is a client without Textual, on the TUI's own `Connection` (client/connection.py: reconnects with the
resume token, a cluster's other nodes, the pace): it says `hello {bot: true, key, accepts: [game]}`, answers every
`challenged` (a challenge, an invite, or an invitation into a tournament) by its accept rules, starts one engine per
game (`EngineSpec.build`), and plays. A tournament it entered seats it in each of its games (a
`joined` naming the tournament): the engine of such a game starts once it is seated. One connection serves every
game: the server lets one session hold seats in several rooms, so each game gets its own `ClientState` (the client's
reducer, which tracks one room) and the connection routes each room's messages to it. Game state is read only
through those reducers (which fold every `moved` and `tick` into the full state), never from raw `state` messages.

The failure rule (docs/bots.md, "What a failing engine costs"): a late answer plays the fallback (the first legal
move; in Tron nothing is sent, so the rider keeps its direction) and is logged; an illegal or malformed answer,
or an engine that resigns, resigns the game; a crash restarts the engine once (fed the game so far), a second
crash resigns.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gamenight.client.bot.engines import Engine, EngineFailure, EngineSpec, Failure, Turn
from gamenight.client.config import KEY_LENGTHS, config_dir, private_folder, write_private
from gamenight.client.connection import (
    RECONNECTING,
    REFUSED,
    REPLACED,
    Connection,
    ConnectionStatus,
    NotConnected,
    Pace,
)
from gamenight.client.state import Changes, ClientState
from gamenight.protocol.errors import ErrorCode
from gamenight.protocol.identity import Identity
from gamenight.protocol.messages import (
    Accept,
    Batch,
    Challenged,
    ChallengeGone,
    Decline,
    Error,
    Event,
    Joined,
    Leave,
    LeaveTournament,
    Left,
    MakeMove,
    Message,
    Moved,
    Resign,
    RoomInfo,
    State,
    Tick,
    TournamentInfo,
    TournamentUpdate,
    Welcome,
)
from gamenight.protocol.vocab import EventKind, Role, RoomStatus

log = logging.getLogger("gamenight.bot")

ACCEPT_RULES = ("humans", "bots", "all")
RATED_RULES = ("yes", "no", "any")  # `--rated`: only rated challenges, only casual ones, or both
DEFAULT_MIN_CLOCK_S = 60.0  # `--min-clock`: shorter clocks leave an engine no time to think (it plays fallbacks)
INCREMENT_MOVES = 40  # a clock's estimated length is its time plus this many increments, as lichess reckons it


def file_label(*parts: str) -> str:
    """A name for an engine's log file from ids the server chose: letters, digits, `_` and `-` only (an id such as
    `../x` from a hostile server must not reach another folder), at most 100 characters."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", "-".join(parts))[:100]


def estimated_clock_s(options: Mapping[str, Any]) -> float | None:
    """How long a game's clock lasts a side, as lichess estimates it (time + 40 increments); None without a clock
    (untimed and correspondence games, and Tron, whose moves come on a tick)."""
    if not options.get("clock_s"):
        return None
    return float(options["clock_s"]) + INCREMENT_MOVES * float(options.get("increment_s") or 0)


DEFAULT_AI_MS = 1000  # a room's `ai_ms` when neither its options nor its summary say
DEFAULT_OVERHEAD_MS = 50
OPEN_TIMEOUT_S = 10.0
MIN_BUDGET_MS = 1
PACE = Pace(rate=15.0, burst=30)  # the bot sends at most 15 messages a second and 30 at once (servers allow 20, 40)
RESEND_S = 0.5  # a move refused as rate_limited is sent again after this long
KEEPALIVE_S = 600.0  # a `list_players` this often keeps a waiting bot's connection from being closed as idle
OVER = ("finished", "cancelled")  # the statuses of a tournament that has no more games


class Refused(Exception):
    """The server refused this bot for good (its name is someone else's, an unknown game, a protocol mismatch)."""


# -- the key file -------------------------------------------------------------------------------------------


def default_key_file(name: str) -> Path:
    """Where a bot's key is kept unless `--key-file` says: next to the client's config, one file per bot name."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "bot"
    return config_dir() / "bots" / f"{slug}.key"


BotKeys = tuple[Identity, str | None]
"""A bot's identity, and the secret key of protocol 2 its name may still be claimed with (None if none)."""

IDENTITY_LINE = "ed25519 "  # a key file's line holding the identity's private key (64 hex digits)
LEGACY_LINE = "legacy "  # ... and the one holding protocol 2's key, while it has one


def bot_key(path: Path) -> BotKeys:
    """The identity in the key file `path` (and its old key, if any), made and written there now (mode 0600, in a
    0700 folder) on first run; a file of protocol 2's (one old key) gets an identity beside its key."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    secret = next((line.removeprefix(IDENTITY_LINE) for line in lines if line.startswith(IDENTITY_LINE)), None)
    legacy = next((line.removeprefix(LEGACY_LINE) for line in lines if line.startswith(LEGACY_LINE)), None)
    if secret is None and len(lines) == 1 and len(lines[0].strip()) in KEY_LENGTHS:
        legacy = lines[0].strip()  # a key file of protocol 2: its key claimed the name, it moves that claim
    elif secret is None and lines:
        raise ValueError(f"{path} holds no usable key")
    if secret is not None:
        try:
            return Identity.from_secret(secret.strip()), legacy
        except ValueError as exc:
            raise ValueError(f"{path} holds no usable key ({exc})") from None
    identity = Identity.generate()
    private_folder(path.parent)
    write_private(path, IDENTITY_LINE + identity.secret + "\n" + (LEGACY_LINE + legacy + "\n" if legacy else ""))
    return identity, legacy


# -- configuration --------------------------------------------------------------------------------------------


@dataclass
class BotConfig:
    """What `gamenight-bot` was told on its command line."""

    url: str
    name: str
    game: str
    engine: str
    protocol: str
    key_file: Path | None = None
    accept: str = "all"
    rated: str = "any"
    min_clock_s: float = DEFAULT_MIN_CLOCK_S
    max_games: int = 1
    move_overhead_ms: int = DEFAULT_OVERHEAD_MS
    log_dir: Path | None = None
    engine_options: dict[str, Any] = field(default_factory=dict)
    keepalive_s: float = KEEPALIVE_S

    def engine_spec(self, log_name: str) -> EngineSpec:
        """How to start one engine, its stderr going to `log_name` in the log folder (if there is one)."""
        log_file = self.log_dir / log_name if self.log_dir is not None else None
        return EngineSpec(self.engine, self.protocol, log_file, dict(self.engine_options))


# -- one game ---------------------------------------------------------------------------------------------------


class GameSeat(ABC):
    """The bot's seat in one room: that room's reducer, its engine, and the worker that answers its turns.

    What a question is and what a late answer costs differ by the kind of game, like the server's drivers
    (server/drivers.py): a `TurnSeat` answers its turns in a turn-based game, a `TickSeat` steers a rider each tick
    of a live one (Tron). `seat_kind` picks one from the game's description."""

    def __init__(
        self,
        runner: BotRunner,
        room: str,
        engine: Engine,
        options: dict[str, Any],
        label: str,
        tournament: str | None = None,
    ) -> None:
        self.runner = runner
        self.room = room
        self.engine = engine
        self.options = options  # the challenge's options (filled in by the server)
        self.label = label  # names the engine's stderr log
        self.tournament = tournament  # the tournament that seated the bot here, if one did
        self.state = ClientState(runner.config.name)
        self.history: list[tuple[int, str | None]] = []  # every move and pass of the game, in order
        self.start_view: dict[str, Any] | None = None
        self.begun = False  # the engine was told the game (`new_game`) and its history
        self.crashes = 0
        self.view: dict[str, Any] | None = None  # the current view (the state's, with the moves or ticks folded in)
        self.arrived = time.monotonic()  # when the position to answer arrived
        self.answered: object = None  # the position last answered (a state's seq; a Tron tick)
        self.sync_id: int | None = None  # a sync in flight after a reconnect: live events wait for its reply
        self.done = False
        self.moves_sent = 0
        self.restart_needed = False  # the engine's history was rebuilt: start it afresh before the next question
        self.wake = asyncio.Event()
        self.worker: asyncio.Task[None] | None = None

    # -- messages ----------------------------------------------------------------------------------------------
    def take(self, message: Message) -> None:
        """Apply one of this room's messages to the reducer, feed the engine what was played, wake the worker."""
        changes = self.state.apply(message, quiet=True)
        for request in changes.requests:  # e.g. the sync the reducer asks for after a missed move or tick
            self.runner.send(request)
        state = self._changed_state(message, changes)
        if state is not None:
            self._update(message, state)
        elif isinstance(message, Error) and message.room == self.room:
            log.warning("room %s: the server refused %s: %s", self.room, message.code, message.message)
        if changes.closed or isinstance(message, Left):
            self.done = True
        self.wake.set()

    def _changed_state(self, message: Message, changes: Changes) -> State | None:
        """The room's state, if `message` changed it (a full state, or a move or tick folded into the one held)."""
        session = self.state.room
        if session is None or session.state is None:
            return None
        moved = isinstance(message, Moved) and bool(changes.board)
        return session.state if isinstance(message, State) or changes.tick is not None or moved else None

    def _update(self, message: Message, state: State) -> None:
        """Take the room's new state: a sync answered, what was played, the position to answer (and when it came),
        the game's start and its end."""
        if isinstance(message, State) and message.id is not None and message.id == self.sync_id:
            self.sync_id = None
        self._follow(message, state)
        self.arrived = time.monotonic()
        self.view = dict(state.view)  # the reducer folds every move and tick into its full state
        if self.start_view is None and state.status == RoomStatus.PLAYING and not state.moves:
            self.start_view = dict(state.view)
        if state.status == RoomStatus.FINISHED:
            result = state.result
            log.info("room %s: game over (%s)", self.room, result.reason if result else "no result")
            self.done = True

    @abstractmethod
    def _follow(self, message: Message, state: State) -> None:
        """What this kind of game keeps of each new state (before the position is taken)."""

    def over(self) -> bool:
        """True once the game ended, the room went away, or the runner dropped the seat."""
        return self.done

    # -- the worker --------------------------------------------------------------------------------------------
    async def work(self) -> None:
        """Answer each position where the bot is to move, until the game ends; then leave the room (a bug here
        leaves it too, which resigns a game in progress, rather than holding the seat forever)."""
        try:
            await self._answer_turns()
        except Exception:
            log.exception("room %s: the bot failed; leaving the game", self.room)
        if not self.runner.stopping:
            self.runner.send(Leave(room=self.room))
        await self.runner.finished(self)

    async def _answer_turns(self) -> None:
        """Wake on every change of the room and answer when it is the bot's move."""
        while not self.done:
            await self.wake.wait()
            self.wake.clear()
            if self.over():
                break
            turn = self._turn()
            if turn is not None:
                await self._play(turn)

    def _turn(self) -> Turn | None:
        """The question for the engine now, or None if there is nothing to answer (or it was answered)."""
        session = self.state.room
        if session is None or session.state is None or session.seat is None or self.sync_id is not None:
            return None
        state, seat = session.state, session.seat
        if state.status != RoomStatus.PLAYING or self.view is None:
            return None
        question = self._question(state, seat, self.view)
        legal = list(state.legal)
        if question is None or question.position == self.answered or not legal:
            return None
        self.answered = question.position
        deadline = self.arrived + max(MIN_BUDGET_MS, question.budget_ms) / 1000
        return Turn(session.game, seat, self.view, legal, deadline, question.clock_ms, tuple(state.moves))

    @abstractmethod
    def _question(self, state: State, seat: int, view: dict[str, Any]) -> Question | None:
        """What the engine is asked now (None: the bot has nothing to answer)."""

    async def _play(self, turn: Turn) -> None:
        """Ask the engine and send its move, or act on its failure by the rule."""
        while True:
            try:
                if self.restart_needed:
                    self.restart_needed = False
                    if not await self._restart():
                        self._resign()
                        return
                if not self.begun:
                    await self._begin()
                move = await self.engine.choose(turn)
            except ValueError as exc:  # the engine's protocol cannot play this game as set up
                log.warning("room %s: %s; resigning", self.room, exc)
                self._resign()
                return
            except EngineFailure as failure:
                if await self._restarted_after(turn, failure):
                    continue
                return
            self.runner.answers += 1
            self._send_move(turn, move)
            return

    async def _restarted_after(self, turn: Turn, failure: EngineFailure) -> bool:
        """An engine failed: True if it crashed for the first time and runs again (ask it again); else the rule
        for the failure was applied."""
        if failure.failure != Failure.CRASHED or self.crashes > 0:
            self._failed(turn, failure)
            return False
        self.crashes += 1
        log.warning("room %s: the engine crashed (%s); restarting it once", self.room, failure)
        if await self._restart():
            return True
        log.warning("room %s: the engine could not be restarted; resigning", self.room)
        self._resign()
        return False

    async def _begin(self) -> None:
        """Tell the engine the game and feed it every move so far (a restarted engine, a game joined late)."""
        start = self.start_view if self.start_view is not None else self.view
        assert start is not None
        await self.engine.new_game(
            self.state.room.game if self.state.room else self.runner.config.game, self._seat(), start
        )
        for seat, move in self.history:
            self.engine.observe(seat, move)
        self.begun = True

    def _seat(self) -> int:
        """The bot's seat in this room."""
        session = self.state.room
        assert session is not None and session.seat is not None
        return session.seat

    async def _restart(self) -> bool:
        """A new engine process in place of the crashed one; False if it does not start."""
        await self.engine.close()
        self.engine = self.runner.config.engine_spec(f"{self.label}.stderr.log").build()
        self.begun = False
        try:
            await self.engine.start()
        except EngineFailure as failure:
            log.warning("room %s: restart failed: %s", self.room, failure)
            return False
        return True

    def _failed(self, turn: Turn, failure: EngineFailure) -> None:
        """The rule for a failure other than a first crash: a late answer costs what this kind of game says,
        anything else resigns."""
        if failure.failure == Failure.LATE:
            self._late(turn, failure)
            return
        log.warning("room %s: engine failed (%s); resigning", self.room, failure)
        self._resign()

    @abstractmethod
    def _late(self, turn: Turn, failure: EngineFailure) -> None:
        """The engine did not answer `turn` in time."""

    def _send_move(self, turn: Turn, move: str) -> None:
        """Send a move for the position `turn` asked about (if it still needs one) and count it."""
        session = self.state.room
        if session is None or session.state is None or self.done:
            return
        message = self._move_message(turn, move, session.state)
        if message is not None:
            self.runner.send(message)
            self.moves_sent += 1
            self.runner.moves_sent += 1

    @abstractmethod
    def _move_message(self, turn: Turn, move: str, state: State) -> MakeMove | None:
        """The message that plays `move` now (None: nothing needs to be sent)."""

    def _resign(self) -> None:
        """Concede the game (the room's `game_over` ends the worker)."""
        self.runner.send(Resign(room=self.room))

    @abstractmethod
    def resend_later(self) -> None:
        """The server refused a message for the rate: send again what this kind of game needs sent."""

    def resynced(self, welcome: Welcome) -> None:
        """The connection came back with the session resumed: ask what the room missed (the reducer's sync)."""
        self.state.apply(welcome, resumed=True)
        sync = self.state.syncing()
        if sync is not None:
            log.info("room %s: seat resumed; asking for what it missed since seq %d", self.room, sync.seq)
            self.sync_id = self.runner.send(sync)


@dataclass(frozen=True, slots=True)
class Question:
    """What a seat asks its engine: the position (answered once), the time for the answer, the clock's time left."""

    position: object
    budget_ms: int
    clock_ms: int | None = None


class TurnSeat(GameSeat):
    """A seat in a turn-based game: the engine is told every move and pass and answers when the seat is to move; a
    late answer plays the first legal move; a move refused for the rate goes again."""

    unconfirmed: MakeMove | None = None  # the last move sent, until a state shows the game moved on

    def _follow(self, message: Message, state: State) -> None:
        """A move sent is confirmed by any new position; a move and its passes go to the engine; moves it was not
        told (a full state after a reconnect) rebuild its history."""
        if self.unconfirmed is not None and state.seq != self.unconfirmed.seq:
            self.unconfirmed = None
        if isinstance(message, Moved):
            self._observe(message.seat, message.move)
            for note in message.events:
                seat = note.data.get("seat")
                if note.kind == EventKind.PASS and isinstance(seat, int):
                    self._observe(seat, None)
        if sum(1 for _, move in self.history if move is not None) != len(state.moves):
            self._catch_up(state)

    def _observe(self, seat: int, move: str | None) -> None:
        """A move or pass: into the history and to the engine."""
        self.history.append((seat, move))
        if self.begun:
            self.engine.observe(seat, move)

    def _catch_up(self, state: State) -> None:
        """The game has moves the engine was not told (missed while the connection was down: a full state replaced
        them). The state's `movers` says who made each move, so the passes among them are known (a server of an
        older version sends none: the moves are then taken to alternate), and the engine is restarted on that
        history."""
        told = [move for _, move in self.history if move is not None]
        if told != list(state.moves[: len(told)]):
            log.warning("room %s: the game's moves differ from those the engine was told; rebuilding", self.room)
            self.history, told = [], []
        if len(state.movers) == len(state.moves):
            pairs = list(zip(state.movers, state.moves, strict=True))
            self.history = with_passes(pairs, self._seat_count(), state.to_move)
        else:
            self._alternate(state.moves[len(told) :])
        log.warning(
            "room %s: %d moves missed; the engine is restarted on the game so far",
            self.room,
            len(state.moves) - len(told),
        )
        self.restart_needed = True

    def _alternate(self, moves: Sequence[str]) -> None:
        """Moves whose movers are not known, into the history: taken to alternate from the last known mover (from
        the first seat, or the second when the options say white moves first)."""
        seats = self._seat_count()
        last = self.history[-1][0] if self.history else None
        mover = 0 if last is None else (last + 1) % seats
        if last is None and self.options.get("first") == "white":
            mover = 1
        for move in moves:
            self.history.append((mover, move))
            mover = (mover + 1) % seats

    def _seat_count(self) -> int:
        """How many seats the room has (two until its summary says)."""
        session = self.state.room
        return len(session.summary.seats) if session is not None and session.summary is not None else 2

    def _question(self, state: State, seat: int, view: dict[str, Any]) -> Question | None:
        """The seat's turn, once per position (its seq), with the time the room gives a move."""
        if seat not in state.to_move:
            return None
        budget_ms, clock_ms = self._budget(state, seat)
        return Question(state.seq, budget_ms, clock_ms)

    def _budget(self, state: State, seat: int) -> tuple[int, int | None]:
        """The time for this move in ms (less the overhead) and the clock's time left, if the game has a clock."""
        overhead = self.runner.config.move_overhead_ms
        clock = state.clock
        if clock is not None and not clock.days_per_move and seat < len(clock.remaining_ms):
            left = clock.remaining_ms[seat]
            return left - overhead, left
        summary = self.state.room.summary if self.state.room is not None else None
        options = summary.options if summary is not None else self.options
        ai_ms = options.get("ai_ms", self.options.get("ai_ms", DEFAULT_AI_MS))
        return (int(ai_ms) if isinstance(ai_ms, int) else DEFAULT_AI_MS) - overhead, None

    def _late(self, turn: Turn, failure: EngineFailure) -> None:
        """A late answer plays the first legal move in its place."""
        fallback = turn.legal[0]
        log.warning("room %s: engine late (%s); fallback move %s played", self.room, failure, fallback)
        self._send_move(turn, fallback)

    def _move_message(self, turn: Turn, move: str, state: State) -> MakeMove | None:
        """The move for the position's seq (kept until a new position confirms it)."""
        self.unconfirmed = MakeMove(room=self.room, move=move, seq=state.seq)
        return self.unconfirmed

    def resend_later(self) -> None:
        """The server refused a message for the rate: send the move not yet seen played again, after a pause."""
        move = self.unconfirmed
        if move is None:
            return

        async def again() -> None:
            await asyncio.sleep(RESEND_S)
            if self.unconfirmed is move and not self.done:
                log.info("room %s: sending %s again (it was refused for the rate)", self.room, move.move)
                self.runner.send(move)

        self.runner.background(again())


class TickSeat(GameSeat):
    """A seat in a live game (Tron): each tick while its rider lives, the engine has the tick's time less the
    overhead; a late answer keeps the rider's direction (nothing is sent), as does an answer that would not turn it."""

    next_tick_ms: int | None = None  # the time until the next tick, as the latest state or tick said

    def _follow(self, message: Message, state: State) -> None:
        """The time to the next tick."""
        self.next_tick_ms = state.next_tick_ms

    def _question(self, state: State, seat: int, view: dict[str, Any]) -> Question | None:
        """Each tick while the seat's rider lives, with the tick's time (the overhead takes at most half of it, or
        fast ticks leave nothing)."""
        alive = view.get("alive", [])
        if seat >= len(alive) or not alive[seat]:
            return None
        tick_ms = self.next_tick_ms or 0
        return Question(("tick", view.get("tick")), tick_ms - min(self.runner.config.move_overhead_ms, tick_ms // 2))

    def _late(self, turn: Turn, failure: EngineFailure) -> None:
        """A late answer sends nothing: the rider keeps its direction."""
        tick = turn.view.get("tick")
        log.warning("room %s: engine late for tick %s (%s); fallback: keep direction", self.room, tick, failure)

    def resend_later(self) -> None:
        """Nothing: a rider's turn refused for the rate is not sent again (the next tick asks the engine anew)."""

    def _move_message(self, turn: Turn, move: str, state: State) -> MakeMove | None:
        """The turn, unless the tick it answers has gone by (dropped) or it keeps the rider's direction (the rider
        keeps it by itself: no message needed, and none to rate-limit)."""
        if self.view is None or self.view.get("tick") != turn.view.get("tick"):
            log.info("room %s: answer for tick %s came after the next tick; dropped", self.room, turn.view.get("tick"))
            return None
        if move == _heading(self.view, turn.seat):
            return None
        return MakeMove(room=self.room, move=move)


def seat_kind(welcome: Welcome | None, game: str) -> type[GameSeat]:
    """The kind of seat for `game`: a `TickSeat` if the server describes it as simultaneous (Tron), else a
    `TurnSeat`."""
    games = welcome.games if welcome is not None else ()
    return TickSeat if any(g.name == game and g.simultaneous for g in games) else TurnSeat


# -- the runner ---------------------------------------------------------------------------------------------------


@dataclass
class Pending:
    """A challenge being accepted: its engine is starting, then the `accept` waits for its `joined`."""

    offer: Challenged
    engine: Engine | None = None
    accept_id: int | None = None
    task: asyncio.Task[None] | None = None
    label: str = ""


class BotRunner:
    """One bot on one server: its connection (the TUI's `Connection`: reconnects, resume, a cluster's other nodes,
    the pace), the accept rules, and a `GameSeat` per game."""

    def __init__(self, config: BotConfig, keys: BotKeys | None) -> None:
        self.config = config
        if config.log_dir is not None:
            config.log_dir.mkdir(parents=True, exist_ok=True)
        identity, legacy = keys if keys is not None else (None, None)
        self.welcome: Welcome | None = None
        self.seats: dict[str, GameSeat] = {}
        self.pending: dict[str, Pending] = {}  # by challenge id
        self.entered: dict[str, dict[str, Any]] = {}  # tournaments it accepted and that are not over -> their options
        self.entering: dict[int, str] = {}  # the request id of an invitation's accept -> its tournament
        self.games_played = 0
        self.moves_sent = 0  # moves sent over all games (the engine's own or the fallback)
        self.answers = 0  # answers engines gave in time, over all games (a Tron rider's "keep going" included)
        self.stopping = False
        self.connection = Connection(
            config.url,
            config.name,
            self._received,
            self._status_changed,
            open_timeout=OPEN_TIMEOUT_S,
            identity=identity,
            legacy_key=legacy,
            accepts=(config.game,),
            bot=True,
            insist_on_accepts=True,  # a server without the bot's game refuses it: nothing to wait for there
            pace=PACE,
            keepalive_s=config.keepalive_s,
        )
        self._stop = asyncio.Event()
        self._turned_away: str | None = None  # why the runner ends refused (found in a welcome)
        self._retrying = False  # a wait to reconnect is under way (its countdown is not logged again)
        self._closing: set[asyncio.Task[None]] = set()  # game workers, and engines being ended: awaited at the end

    # -- lifecycle -----------------------------------------------------------------------------------------------
    def stop(self) -> None:
        """Ask the runner to end: leave every game (resigning those in progress), end the engines, disconnect."""
        self.stopping = True
        self._stop.set()

    async def run(self) -> None:
        """Connect, play, and reconnect whenever the connection drops, until `stop`; Refused if turned away."""
        link = asyncio.create_task(self.connection.run())
        stopper = asyncio.create_task(self._stop.wait())
        try:
            await asyncio.wait({link, stopper}, return_when=asyncio.FIRST_COMPLETED)
            if not link.done():
                await self.connection.close(self._farewell() if self.stopping else ())
                await link
            link.result()
        finally:
            for task in (link, stopper):
                task.cancel()
            await asyncio.gather(link, stopper, return_exceptions=True)
            await self._close_all()
        self._raise_refusal()

    def _farewell(self) -> list[Message]:
        """What a stopping bot sends last: leaving its rooms resigns the games in progress (nobody waits for a bot
        gone), challenges being accepted are declined, and the tournaments it entered are left (their games not
        played yet are lost now, not after a grace)."""
        farewell: list[Message] = [Leave(room=code) for code in self.seats]
        farewell += [Decline(challenge=p.offer.challenge, reason="the bot is stopping") for p in self.pending.values()]
        farewell += [LeaveTournament(tournament=tournament) for tournament in self.entered]
        return farewell

    def _raise_refusal(self) -> None:
        """Refused, if the server turned the bot away for good (or another connection took its session)."""
        status = self.connection.status
        if self._turned_away is not None:
            raise Refused(self._turned_away)
        if status.state == REFUSED and status.code == ErrorCode.NAME_TAKEN:
            raise Refused(f"{status.detail} (use another --name, or this name's key file)")
        if status.state == REFUSED:
            raise Refused(status.detail)
        if status.state == REPLACED:
            raise Refused("this bot's session was resumed on another connection")

    def _status_changed(self, status: ConnectionStatus) -> None:
        """Log a lost connection once per wait to reconnect."""
        waiting = status.state == RECONNECTING and status.retry_in is not None
        if waiting and not self._retrying:
            log.warning("connection to %s lost: %s", status.url, status.detail or "closed")
            log.info("reconnecting in %g s", status.retry_in)
        self._retrying = waiting

    def _welcomed(self, welcome: Welcome) -> None:
        """A welcome: a server without the bot's game refuses it; challenges being accepted are void (the server
        ended them with the old connection); a resumed session asks what its games missed, a new one lost them."""
        self.welcome = welcome
        if not any(g.name == self.config.game for g in welcome.games):
            self._turned_away = f"this server has no game {self.config.game!r}"
            self._stop.set()
            return
        for pending in list(self.pending.values()):
            self._release(pending)
        claimed = ", name claimed" if welcome.claimed else ""
        log.info("connected to %s as %r (bot%s)", self.connection.url, welcome.name, claimed)
        if self.connection.resumed:
            for seat in self.seats.values():
                seat.resynced(welcome)
        elif self.seats:
            log.warning("the server forgot this session; its games are lost")
            self._drop_seats()

    def send(self, message: Message) -> int | None:
        """Queue a request; its id, or None when there is no connection (a request made while disconnected is
        dropped: its answer could not come on a new connection)."""
        try:
            return self.connection.send(message)
        except NotConnected:
            return None

    # -- dispatch ------------------------------------------------------------------------------------------------
    def _received(self, message: Message, _quiet: bool) -> None:
        """The connection's callback: every message from the server."""
        self._dispatch(message)

    def _dispatch(self, message: Message) -> None:
        """Route one message: offers to the accept rules, a room's messages to its seat."""
        match message:
            case Batch():  # a room's traffic in one frame (sent to spectators): its messages one by one
                for inner in message.messages:
                    self._dispatch(inner)
            case Challenged():
                self._offered(message)
            case ChallengeGone():
                self._gone(message)
            case TournamentInfo():
                self._tournament(message)
            case TournamentUpdate():
                self._followed(message.tournament, message.status, message.entries, None)
            case Welcome():
                self._welcomed(message)
            case Joined():
                self._joined(message)
            case Error():
                self._error(message)
            case _:
                self._to_seat(message)

    def _joined(self, joined: Joined) -> None:
        """A seat: the answer to an accept, a tournament's next game, or news of a room the bot plays in."""
        if joined.id is not None and self._accepted(joined.id) is not None:
            self._seated(joined)
        elif joined.tournament is not None and joined.room not in self.seats:
            self._tournament_seat(joined, joined.tournament)
        else:
            self._to_seat(joined)

    def _error(self, error: Error) -> None:
        """A refusal: of an accept (its challenge is dropped), of entering a tournament, of the hello (`run` raises
        it), of something in a room (its seat hears it), or of anything else (logged; for the rate, the moves not
        yet seen played go again, whichever request the refusal was for)."""
        pending = self._accepted(error.id) if error.id is not None else None
        if pending is not None:
            log.warning("accept of %s refused: %s", pending.offer.challenge, error.message)
            self._release(pending)
        elif error.id is not None and error.id in self.entering:
            tournament = self.entering.pop(error.id)
            log.warning("entering tournament %s refused: %s", tournament, error.message)
            self.entered.pop(tournament, None)
        elif self.connection.connected and not self._to_seat(error):
            log.warning("the server refused a request: %s: %s", error.code, error.message)
            if error.code == ErrorCode.RATE_LIMITED:
                for seat in self.seats.values():
                    seat.resend_later()

    def _to_seat(self, message: Message) -> bool:
        """Hand a room's message to the bot's seat in that room; False if it has none there."""
        room = getattr(message, "room", None)
        seat = self.seats.get(room) if isinstance(room, str) else None
        if seat is None or not isinstance(message, RoomInfo | State | Moved | Tick | Event | Joined | Left | Error):
            return False
        seat.take(message)
        return True

    def _accepted(self, request_id: int) -> Pending | None:
        """The pending challenge whose accept has this request id."""
        return next((p for p in self.pending.values() if p.accept_id == request_id), None)

    def _offered(self, offer: Challenged) -> None:
        """A challenge or invite: accept it if the rules allow (starting the engine first), else decline why."""
        reason = self._refusal(offer)
        who = f"{offer.sender.name} ({'bot' if offer.sender.bot else 'human'})"
        if reason is not None:
            log.info("declined %s from %s: %s", offer.game, who, reason)
            self.send(Decline(challenge=offer.challenge, reason=reason))
            return
        if offer.tournament is not None:  # its games come one by one, each `joined` naming it: no engine yet
            tournament = offer.tournament.tournament
            log.info("entering tournament %s of %s from %s", tournament, offer.game, who)
            self.entered[tournament] = dict(offer.options)
            rid = self.send(Accept(challenge=offer.challenge))
            if rid is not None:
                self.entering[rid] = tournament
            return
        log.info("accepting %s from %s", offer.game, who)
        pending = Pending(offer, label=file_label(offer.game, offer.challenge))
        self.pending[offer.challenge] = pending
        pending.task = _watched(asyncio.create_task(self._accept(pending)))

    def _refusal(self, offer: Challenged) -> str | None:
        """Why this bot will not take `offer` (None: it will)."""
        config = self.config
        if offer.game != config.game:
            return f"{config.name} plays {config.game} only"
        if config.accept == "humans" and offer.sender.bot:
            return f"{config.name} takes challenges from humans only"
        if config.accept == "bots" and not offer.sender.bot:
            return f"{config.name} takes challenges from bots only"
        if (reason := self._terms_refusal(offer)) is not None:
            return reason
        between = set(self.entered) - {seat.tournament for seat in self.seats.values()}  # entered, not seated now
        busy = len(self.seats) + len(self.pending) + len(between)
        if busy >= config.max_games:
            return f"busy: {config.name} plays at most {config.max_games} game(s) at once"
        if config.protocol == "tron2010" and offer.options.get("players", 2) != 2:
            return "a 2010 contest bot plays two-rider Tron only"
        return None

    def _terms_refusal(self, offer: Challenged) -> str | None:
        """Why the offer's terms do not suit this bot (`--rated`, `--min-clock`); None when they do."""
        config, rated = self.config, bool(offer.options.get("rated"))
        if config.rated == "yes" and not rated:
            return f"{config.name} plays rated games only"
        if config.rated == "no" and rated:
            return f"{config.name} plays casual games only"
        clock = estimated_clock_s(offer.options)
        if clock is not None and clock < config.min_clock_s:
            return f"{config.name} needs a clock of at least {config.min_clock_s:g} s (time + 40 increments)"
        return None

    async def _accept(self, pending: Pending) -> None:
        """Start the engine, then accept (an engine that does not start declines the challenge)."""
        engine = self.config.engine_spec(f"{pending.label}.stderr.log").build()
        pending.engine = engine
        try:
            await engine.start()
        except EngineFailure as failure:
            log.error("the engine did not start: %s", failure)
            self.send(Decline(challenge=pending.offer.challenge, reason="the bot's engine did not start"))
            self._release(pending)
            return
        if self.pending.get(pending.offer.challenge) is pending:
            pending.accept_id = self.send(Accept(challenge=pending.offer.challenge))

    def _gone(self, message: ChallengeGone) -> None:
        """A challenge ended before (or while) it was accepted: its engine is not needed."""
        pending = self.pending.get(message.challenge)
        if pending is not None and message.why != "accepted":
            log.info("challenge %s gone: %s", message.challenge, message.why)
            self._release(pending)

    def _release(self, pending: Pending) -> None:
        """Forget a challenge that will not become a game, ending its engine."""
        self.pending.pop(pending.offer.challenge, None)
        if pending.task is not None and not pending.task.done():
            pending.task.cancel()
        if pending.engine is not None:
            self._close_later(pending.engine)

    def _close_later(self, engine: Engine) -> None:
        """End an engine in the background (awaited before the runner returns)."""
        self.background(engine.close())

    def background(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` as a task the runner awaits before it returns."""
        task = _watched(asyncio.create_task(work))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def _seated(self, joined: Joined) -> None:
        """The accept was answered with a seat: the game's own reducer and worker take over."""
        pending = self._accepted(joined.id or 0)
        assert pending is not None and pending.engine is not None and self.welcome is not None
        self.pending.pop(pending.offer.challenge, None)
        if joined.role != Role.PLAYER or joined.seat is None:
            self._close_later(pending.engine)
            return
        kind = seat_kind(self.welcome, self.config.game)
        seat = kind(self, joined.room, pending.engine, dict(pending.offer.options), pending.label)
        seat.state.apply(self.welcome)
        self.seats[joined.room] = seat
        seat.take(joined)
        log.info("room %s: seated as %d (%s)", joined.room, joined.seat, pending.label)
        seat.worker = _watched(asyncio.create_task(seat.work()))
        self._closing.add(seat.worker)
        seat.worker.add_done_callback(self._closing.discard)

    def _tournament(self, info: TournamentInfo) -> None:
        """A tournament's reply or whole push: one it entered is followed until it is over (or it left)."""
        if info.id is not None:
            self.entering.pop(info.id, None)
        self._followed(info.tournament, info.status, info.entries, info.options)

    def _followed(self, tournament: str, status: str, entries: list[str], options: dict[str, Any] | None) -> None:
        """A tournament's news (whole, or a `tournament_update`, which carries no options): one it entered is
        forgotten once it is over or the bot is no longer an entrant."""
        me = self.welcome.name if self.welcome is not None else self.config.name
        if status in OVER or me not in entries:
            if self.entered.pop(tournament, None) is not None:
                log.info("tournament %s: %s", tournament, status if status in OVER else "left")
        elif tournament in self.entered and options is not None:
            self.entered[tournament] = dict(options)

    def _tournament_seat(self, joined: Joined, tournament: str) -> None:
        """A tournament seated the bot in its next game: the game gets its reducer and worker now, its engine
        starts while the game does (the clock may be running)."""
        if joined.role != Role.PLAYER or joined.seat is None or self.welcome is None:
            return
        label = file_label(self.config.game, tournament, joined.room)
        engine = self.config.engine_spec(f"{label}.stderr.log").build()
        options = self.entered.get(tournament, {})
        seat = seat_kind(self.welcome, self.config.game)(self, joined.room, engine, dict(options), label, tournament)
        seat.state.apply(self.welcome)
        self.seats[joined.room] = seat
        seat.take(joined)
        log.info("room %s: seated as %d by tournament %s", joined.room, joined.seat, tournament)
        seat.worker = _watched(asyncio.create_task(self._tournament_game(seat)))
        self._closing.add(seat.worker)
        seat.worker.add_done_callback(self._closing.discard)

    async def _tournament_game(self, seat: GameSeat) -> None:
        """Start a tournament game's engine, then play the game (an engine that does not start resigns it)."""
        try:
            await seat.engine.start()
        except EngineFailure as failure:
            log.error("room %s: the engine did not start (%s); resigning", seat.room, failure)
            seat.done = True
            self.send(Resign(room=seat.room))
            self.send(Leave(room=seat.room))
            await self.finished(seat)
            return
        await seat.work()

    async def finished(self, seat: GameSeat) -> None:
        """A game ended (or the room went away): end its engine and free its place."""
        self.seats.pop(seat.room, None)
        self.games_played += 1
        await seat.engine.close()

    def _drop_seats(self) -> None:
        """Every game is lost (a new session): their workers and engines are stopped (in the background)."""
        for seat in list(self.seats.values()):
            seat.done = True
            self.background(self._end_seat(seat))
        self.seats.clear()

    @staticmethod
    async def _end_seat(seat: GameSeat) -> None:
        """Stop a dropped game's worker, then its engine."""
        if seat.worker is not None:
            seat.worker.cancel()
            await asyncio.gather(seat.worker, return_exceptions=True)
        await seat.engine.close()

    async def _close_all(self) -> None:
        """At the end: every worker stopped and every engine process ended."""
        for pending in list(self.pending.values()):
            self._release(pending)
        for seat in list(self.seats.values()):
            if seat.worker is not None:
                seat.worker.cancel()
                await asyncio.gather(seat.worker, return_exceptions=True)
            await seat.engine.close()
        self.seats.clear()
        await asyncio.gather(*self._closing, return_exceptions=True)


def _heading(view: dict[str, Any], seat: int) -> str | None:
    """A Tron rider's current direction as a move letter (None before the first tick)."""
    dirs = view.get("dirs", [])
    direction = dirs[seat] if seat < len(dirs) else 0
    return "NESW"[direction - 1] if isinstance(direction, int) and 1 <= direction <= 4 else None


def _watched(task: asyncio.Task[None]) -> asyncio.Task[None]:
    """`task`, with any exception it ends with logged (a bug in a game's worker must not pass silently)."""

    def report(done: asyncio.Task[None]) -> None:
        if not done.cancelled() and done.exception() is not None:
            log.error("%s failed", done.get_name(), exc_info=done.exception())

    task.add_done_callback(report)
    return task


def with_passes(moves: list[tuple[int, Any]], seats: int, to_move: list[Any]) -> list[tuple[int, Any]]:
    """A turn-based game's history, passes included, from who made each move: the seats skipped between one
    mover and the next passed (as do those between the last mover and the seat to move now)."""
    history: list[tuple[int, Any]] = []
    expected: int | None = None

    def passes_until(seat: int) -> None:
        nonlocal expected
        for _ in range(seats):  # (bounded: a seat number out of range adds no more than a round of passes)
            if expected is None or expected == seat:
                return
            history.append((expected, None))
            expected = (expected + 1) % seats

    for seat, move in moves:
        passes_until(seat)
        history.append((seat, move))
        expected = (seat + 1) % max(seats, 1)
    if to_move and isinstance(to_move[0], int):
        passes_until(to_move[0])
    return history
