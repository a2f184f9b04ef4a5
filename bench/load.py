"""Load generator: many real clients playing random games against a real server, with figures and checks.

    python bench/load.py [--connections 1000] [--game othello] [--seconds 10] [--workers 1] [--baseline]
                         [--raw-baseline] [--tron-rooms K --tick-ms T] [--ai-rooms K] [--repeat R] [--json] [--url ws://...]
    python bench/load.py --memory [--connections 1000] [--rooms 200]
    python bench/load.py --cluster N [--connections 200] ...   # N node processes, one redis-server (issue 17)

Starts `python -m gamenight.server --port 0 --db :memory: --metrics` (unless --url is given), opens the connections
from `--workers` processes (each its own asyncio loop and websockets clients), pairs them into rooms and
plays random legal moves as fast as the server answers, for a warm-up then `--seconds` measured seconds.
Reports moves per second, the mover's move -> `moved` round trip, the server's RSS, CPU, event-loop lag
and tick lateness (from GET /metrics, reset when the warm-up ends), and checks every game: the final
`state.moves` of both players equals the moves they sent and saw applied, and their boards agree.
It speaks protocol 2: a player folds each `moved` into its own position, and the report gives the frames and bytes
each player received per move, and the size of a `moved` with and without `legal`. `--baseline` runs the same
clients against bench/echo_server.py (same frames and fan-out, no game) in the same run and prints the ratio;
`--raw-baseline` runs them against `bench/echo_server.py --raw` (one frame per round trip: each move answered to
its sender only) and prints the ratio to that. Everything is bounded: connections, each connection's message rate
(under the server's limit), and time (a hard deadline); the servers it started are always stopped.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import random
import resource
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.request
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State as ConnectionState

ROOT = Path(__file__).resolve().parent.parent
CLIENT_NICENESS = 10  # added to the load workers' nice value (see worker_main)
# Run from a checkout without installing: the repository root holds the `server` and `protocol` packages.
sys.path.insert(0, str(ROOT))

from gamenight.protocol import PROTOCOL_VERSION, decode, encode  # noqa: E402
from gamenight.protocol.codec import MAX_SERVER_FRAME  # noqa: E402
from gamenight.protocol.messages import (  # noqa: E402
    AddAi,
    CreateRoom,
    Error,
    Hello,
    Join,
    Joined,
    MakeMove,
    Message,
    Moved,
    Rematch,
    State,
    Tick,
)
from gamenight.server.metrics import percentiles  # noqa: E402

MAX_CONNECTIONS = 4000
MAX_SECONDS = 600.0
SERVER_RATE = 20.0  # messages per second the server allows a connection (ServerConfig.rate)
DEFAULT_RATE = 15.0  # what each client allows itself, safely under SERVER_RATE
CONNECT_CONCURRENCY = 64  # handshakes in flight per worker (the listen backlog is 100)
SETUP_CONCURRENCY = 32  # rooms being created at once per worker
HUMAN_THINK_S = 0.3  # how long the bot facing an AI waits before it answers
AI_LEVEL = 5
START_TIMEOUT_S = 30.0
SETUP_TIMEOUT_S = 300.0
DRAIN_S = 3.0  # after the stop, how long in-flight moves get to come back
QUIET_S = 0.3  # and how long the last frames get to arrive after that
STOP_GRACE_S = 5.0
MAX_PROBLEMS = 10  # consistency problems listed in the report (all are counted)
SEATS = 2
REVERSE = {1: 3, 2: 4, 3: 1, 4: 2}  # Tron directions N E S W are 1-4
STEPS = {1: (0, -1), 2: (1, 0), 3: (0, 1), 4: (-1, 0)}
LETTERS = {1: "N", 2: "E", 3: "S", 4: "W"}


class SetupError(RuntimeError):
    """The server refused a request the harness needs to build its rooms."""


# -- what a worker is asked to do ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Plan:
    """One worker process's share of the load."""

    url: str
    game: str = "othello"
    pairs: int = 0  # turn-based rooms played as fast as the server answers
    tron_rooms: int = 0
    ai_rooms: int = 0
    idle: int = 0  # connections that only say hello, then listen
    rate: float = DEFAULT_RATE
    tick_ms: int = 100
    tron_size: int = 20
    countdown_ms: int = 3000
    seed: int = 0
    check: bool = True  # consistency checks (meaningless against the echo server)
    deadline: float = 0.0  # time.monotonic() by which the worker must be gone
    urls: tuple[str, ...] = ()  # a cluster's nodes: connection i goes to urls[i % len(urls)] (a room's two differ)


# -- what clients record ----------------------------------------------------------------------------------


@dataclass(slots=True)
class GameLog:
    """What one client saw of one game: its seat, the moves it sent, the applied moves, the last state."""

    seat: int
    sent: list[str] = field(default_factory=list)
    events: list[tuple[int, str]] = field(default_factory=list)  # (seat, move) of each `moved`
    moves: list[str] = field(default_factory=list)  # the game's moves: a state's list, then each `moved`'s move
    ticks: list[int] = field(default_factory=list)  # seq of each tick (live games)
    final: State | None = None  # the last full state


def check_turn_game(logs: list[GameLog]) -> list[str]:
    """Problems with one turn-based game as seen by its players ([] when all is consistent)."""
    if any(log.final is None for log in logs):
        return ["a player never received a state"]
    reference = logs[0]
    assert reference.final is not None
    problems = []
    finished = all(log.final is not None and log.final.status == "finished" for log in logs)
    for log in logs:
        final = log.final
        assert final is not None
        applied = [move for _, move in log.events]
        mine = [move for seat, move in log.events if seat == log.seat]
        if log.moves != reference.moves:
            problems.append(f"moves differ between players ({len(log.moves)} vs {len(reference.moves)})")
        if finished and final.view != reference.final.view:
            problems.append("final boards differ between players")
        if finished and final.moves != log.moves:
            problems.append(f"seat {log.seat}: final state.moves differ from the moves seen ({len(final.moves)})")
        if applied != log.moves[len(log.moves) - len(applied) :] or len(applied) > len(log.moves):
            problems.append(f"seat {log.seat}: {len(applied)} moves seen, {len(log.moves)} in the game")
        if mine != log.sent:
            problems.append(f"seat {log.seat}: sent {len(log.sent)} moves, {len(mine)} applied as its own")
    return problems


def check_live_game(logs: list[GameLog], finished: bool) -> list[str]:
    """Problems with one Tron game: both riders saw the same unbroken run of ticks and the same end."""
    problems = []
    runs = [log.ticks for log in logs]
    if any(ticks and ticks != list(range(ticks[0], ticks[0] + len(ticks))) for ticks in runs):
        problems.append("a rider missed or repeated a tick")
    shortest = min(runs, key=len)
    # A game cut off by the stop may be one tick further along for one rider; a finished one may not.
    if any(ticks[: len(shortest)] != shortest for ticks in runs) or (finished and any(r != shortest for r in runs)):
        problems.append("riders saw different ticks")
    views = [log.final.view if log.final else None for log in logs]
    if finished and any(view != views[0] for view in views):
        problems.append("final boards differ between riders")
    return problems


def check_room(players: list[Player]) -> tuple[int, int, list[str]]:
    """(games checked, games finished, problems) of one room, comparing its players' logs game by game."""
    counts = {len(p.games) for p in players}
    if len(counts) != 1:
        return 0, 0, [f"room {players[0].room}: players saw {sorted(counts)} games"]
    problems, finished = [], 0
    for index, logs in enumerate(zip(*(p.games for p in players), strict=True)):
        done = all(log.final is not None and log.final.status == "finished" for log in logs)
        finished += done
        found = check_live_game(list(logs), done) if isinstance(players[0], TronRider) else check_turn_game(list(logs))
        problems.extend(f"room {players[0].room} game {index + 1}: {text}" for text in found)
    return len(players[0].games), finished, problems


# -- clients ----------------------------------------------------------------------------------------------


class Window:
    """The shared clock of one worker: parked until go, measuring from `measure_at`, stopping at `stop_at`."""

    def __init__(self) -> None:
        self.started = False
        self.measure_at = float("inf")
        self.stop_at = float("inf")

    def measuring(self, now: float) -> bool:
        """True inside the measured window."""
        return self.measure_at <= now < self.stop_at

    def stopping(self, now: float) -> bool:
        """True once clients must send nothing new."""
        return now >= self.stop_at


@dataclass(slots=True)
class Tally:
    """A worker's counters over the measured window."""

    rtt_ms: list[float] = field(default_factory=list)
    rtt_at: list[float] = field(default_factory=list)  # when each round trip ended (time.monotonic, as rtt_ms)
    moves: int = 0
    frames: int = 0
    turn_frames: int = 0  # every frame the fast turn-based players received
    turn_bytes: int = 0
    moved_frames: int = 0  # of which per-move messages (`moved`), split by whether they carry `legal`
    moved_bytes: int = 0
    legal_frames: int = 0
    legal_bytes: int = 0
    tron_frames: int = 0
    tron_ticks: int = 0
    ai_moves: int = 0
    ai_fallbacks: int = 0
    paced: int = 0  # sends a client delayed to keep under its rate
    skipped: int = 0  # Tron steers dropped to keep under the rate
    lost: int = 0  # connections the server closed before the stop
    errors: Counter[str] = field(default_factory=Counter)


class Player:
    """One connection: a reader that dispatches frames, replies by request id, and a paced sender."""

    def __init__(self, ws: ClientConnection, window: Window, tally: Tally, rate: float, rng: random.Random) -> None:
        self.ws = ws
        self.window = window
        self.tally = tally
        self.interval = 1.0 / rate
        self.rng = rng
        self.room: str | None = None
        self.seat = 0
        self.seat_told = False  # a `joined` gave our seat since the current game began
        self.games: list[GameLog] = []
        self.replies: dict[int, asyncio.Future[Message]] = {}
        self.next_id = 0
        self.next_send = 0.0  # earliest time the rate allows the next message
        self.busy = False  # thinking or waiting out the rate before a move: the stop must wait for it too
        self.parked: State | None = None  # the state that arrived before the go
        self.sent_at: float | None = None  # when the move awaiting its state was sent
        self.voted = False  # asked for a rematch of the current game

    async def read(self) -> None:
        """Handle every frame until the connection closes."""
        try:
            async for frame in self.ws:
                msg = decode(frame, MAX_SERVER_FRAME)
                if self.window.measuring(time.monotonic()):
                    self.tally.frames += 1
                    if self.counted:
                        self.count(msg, len(frame))
                await self.on_message(msg)
                future = self.replies.pop(msg.id, None) if msg.id is not None else None
                if future is not None and not future.done():
                    future.set_result(msg)
        except ConnectionClosed:
            if not self.window.stopping(time.monotonic()):
                self.tally.lost += 1
        finally:
            for future in self.replies.values():
                if not future.done():
                    future.set_exception(SetupError("connection closed"))

    async def request(self, msg_cls: type[Message], **fields: Any) -> Message:
        """Send a request and wait for the reply carrying its id; an `error` reply raises SetupError."""
        self.next_id += 1
        future = asyncio.get_running_loop().create_future()
        self.replies[self.next_id] = future
        # Set-up requests are few and fit the server's burst allowance, so they skip the pacing.
        await self.ws.send(encode(msg_cls(id=self.next_id, **fields)))
        reply = await asyncio.wait_for(future, SETUP_TIMEOUT_S)
        if isinstance(reply, Error):
            raise SetupError(f"{msg_cls.type} refused: {reply.code} {reply.message}")
        return reply

    async def send(self, msg: Message, timed: bool = False) -> bool:
        """Send one message after waiting out this connection's rate, unless the stop came meanwhile.

        `timed` starts the round-trip clock. The gap to the next message is drawn between one and
        1.5 intervals, so paced clients do not fall into step and hit the server in waves.
        """
        wait = self.next_send - time.monotonic()
        if wait > 0:
            self.tally.paced += 1
            await asyncio.sleep(wait)
            if self.window.stopping(time.monotonic()):
                return False
        now = time.monotonic()
        self.next_send = now + self.interval * (1.0 + 0.5 * self.rng.random())
        if timed:
            self.sent_at = now
        await self.ws.send(encode(msg))
        return True

    counted = False  # the frames and bytes it receives count in the per-move figures

    def count(self, msg: Message, size: int) -> None:
        """Add one received frame to the per-move frame and byte figures."""
        tally = self.tally
        tally.turn_frames += 1
        tally.turn_bytes += size
        if isinstance(msg, Moved):
            if msg.legal:
                tally.legal_frames += 1
                tally.legal_bytes += size
            else:
                tally.moved_frames += 1
                tally.moved_bytes += size

    def may_send_now(self) -> bool:
        """True if a message now would keep this connection under its rate."""
        return time.monotonic() >= self.next_send

    async def on_message(self, msg: Message) -> None:
        """Idle connections only listen; players override this."""
        if isinstance(msg, Error):
            self.tally.errors[msg.code] += 1

    async def start(self) -> None:
        """The go signal: act on the state that arrived while parked."""
        if self.parked is not None:
            parked, self.parked = self.parked, None
            await self.act(parked)

    async def act(self, state: State) -> None:
        """Answer a state: play while the game is on, ask for a rematch once it is over."""
        if self.window.stopping(time.monotonic()):
            return
        if state.status == "finished" and not self.voted:
            self.voted = True
            await self.send(Rematch(room=state.room))
        elif state.status == "playing":
            await self.play(state)

    async def play(self, state: State) -> None:
        """Make this player's move in a running game (idle connections never get one)."""

    def note_new_game(self) -> None:
        """Open a log for a new game; after a rematch the seats have rotated by one, if no `joined` said so."""
        if self.games and not self.seat_told:
            self.seat = (self.seat + 1) % SEATS
        self.seat_told = False
        self.games.append(GameLog(self.seat))
        self.voted = False

    def on_joined(self, joined: Joined) -> None:
        """Our room and seat, on joining and (from servers that say so) after each rematch's rotation."""
        self.room, self.seat, self.seat_told = joined.room, joined.seat or 0, True


class TurnPlayer(Player):
    """Plays a random legal move the moment its state arrives (after `think_s`); asks for a rematch at the end."""

    think_s = 0.0
    measured = True  # its round trips are the load's figures
    counted = True
    position: State | None = None  # the latest state: the last full one with each `moved` folded in (not the view)

    async def on_message(self, msg: Message) -> None:
        """Route the frames a turn-based player cares about."""
        if isinstance(msg, Moved) and msg.room == self.room:
            await self.on_moved(msg)
        elif isinstance(msg, State) and msg.room == self.room:
            await self.on_state(msg)
        elif isinstance(msg, Joined):
            self.on_joined(msg)
        else:
            await super().on_message(msg)

    async def on_state(self, state: State) -> None:
        """Log a full state (a game's start or end) and answer it."""
        self.timed()
        if not self.games or (state.status == "playing" and not state.moves and self._current_started()):
            self.note_new_game()
        if self.games:
            self.games[-1].final = state
            self.games[-1].moves = list(state.moves)
        self.position = state
        if not self.window.started:
            self.parked = state
            return
        await self.act(state)

    def timed(self) -> None:
        """The answer to our move arrived: count its round trip."""
        now = time.monotonic()
        if self.sent_at is not None:
            if self.measured and self.window.measuring(now):
                self.tally.rtt_ms.append((now - self.sent_at) * 1000)
                self.tally.rtt_at.append(now)
                self.tally.moves += 1
            self.sent_at = None

    async def on_moved(self, moved: Moved) -> None:
        """A move (ours or the opponent's): time it if ours, log it, fold who moves next, and answer it."""
        if moved.seat == self.seat:
            self.timed()
        position = self.position
        if position is None:
            return
        if self.games:
            log = self.games[-1]
            log.events.append((moved.seat, moved.move))
            log.moves.append(moved.move)
        if moved.ai is not None and self.window.measuring(time.monotonic()):
            self.tally.ai_moves += 1
            self.tally.ai_fallbacks += bool(moved.ai.get("fallback"))
        over = any(note.kind == "game_over" for note in moved.events)
        self.position = replace(
            position,
            seq=moved.seq,
            to_move=moved.to_move,
            legal=moved.legal,
            status="finished" if over else position.status,
            moves=[],  # the list is the log's; the state's would grow with every move
        )
        if over:
            return  # the final state follows
        if not self.window.started:
            self.parked = self.position
            return
        await self.act(self.position)

    def _current_started(self) -> bool:
        """True once the current game has moved on from its first state (so a fresh first state is a new game)."""
        log = self.games[-1]
        return bool(log.moves) or (log.final is not None and log.final.status == "finished")

    async def play(self, state: State) -> None:
        """Move if it is our turn."""
        if self.seat in state.to_move and state.legal:
            await self.move(state)

    async def move(self, state: State) -> None:
        """Send a random legal move and start its round-trip clock (a move the stop overtook is not sent)."""
        self.busy = True
        try:
            if self.think_s:
                await asyncio.sleep(self.think_s)
            if self.window.stopping(time.monotonic()):
                return
            move = self.rng.choice(state.legal)
            self.next_id += 1
            log = self.games[-1]
            if await self.send(MakeMove(room=state.room, move=move, seq=state.seq, id=self.next_id), timed=True):
                log.sent.append(move)
        finally:
            self.busy = False


class HumanSpeedPlayer(TurnPlayer):
    """The bot facing an AI: answers like a quick human, ~300 ms after its state arrives."""

    think_s = HUMAN_THINK_S
    measured = False  # it sets the AI's pace; the load's figures are the fast players'
    counted = False


class TronRider(Player):
    """Steers at random each tick, never straight into a wall or trail it can see; rematches at the end."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.width = 0
        self.blocked = bytearray()
        self.head: tuple[int, int] = (0, 0)
        self.heading = 0
        self.alive = False

    async def on_message(self, msg: Message) -> None:
        """Route the frames a rider cares about."""
        if isinstance(msg, Tick) and msg.room == self.room:
            await self.on_tick(msg)
        elif isinstance(msg, State) and msg.room == self.room:
            await self.on_state(msg)
        elif isinstance(msg, Joined):
            self.on_joined(msg)
        else:
            await super().on_message(msg)
        if self.room is not None and self.window.measuring(time.monotonic()):
            self.tally.tron_frames += 1

    async def on_state(self, state: State) -> None:
        """A full state: a new game (draw the arena), a pause, or the end."""
        view = state.view
        if state.status == "playing" and view.get("tick") == 0:
            self.note_new_game()
            self.width = view["width"]
            self.blocked = bytearray(ch != " " for row in view["board"] for ch in row)
            self._moved(view["heads"], view["alive"])
            self.heading = view["dirs"][self.seat]
        if self.games:
            self.games[-1].final = state
        if not self.window.started:
            self.parked = state
            return
        await self.act(state)

    async def on_tick(self, tick: Tick) -> None:
        """Mark the new heads as walls, then steer."""
        if not self.games:
            return
        self.games[-1].ticks.append(tick.seq)
        if self.window.measuring(time.monotonic()):
            self.tally.tron_ticks += 1
        self._moved(tick.view["heads"], tick.view["alive"])
        if self.window.started:
            await self.steer()

    def _moved(self, heads: list[list[int]], alive: list[bool]) -> None:
        """Every head's square is now a trail; remember ours."""
        for x, y in heads:
            self.blocked[y * self.width + x] = 1
        self.head = tuple(heads[self.seat])  # type: ignore[assignment]
        self.alive = bool(alive[self.seat])

    async def play(self, state: State) -> None:
        """Steer in a live game."""
        await self.steer()

    async def steer(self) -> None:
        """Keep on mostly straight, else turn at random to an open square; a move too soon is dropped."""
        if not self.alive or self.window.stopping(time.monotonic()):
            return
        if not self.may_send_now():
            self.tally.skipped += 1
            return
        choice = self._choose()
        self.heading = choice
        await self.send(MakeMove(room=self.room or "", move=LETTERS[choice]))

    def _choose(self) -> int:
        """A direction whose next square is open, preferring the current one."""
        x, y = self.head
        height = len(self.blocked) // self.width
        open_dirs = [
            d
            for d, (dx, dy) in STEPS.items()
            if d != REVERSE.get(self.heading)
            and 0 <= x + dx < self.width
            and 0 <= y + dy < height
            and not self.blocked[(y + dy) * self.width + x + dx]
        ]
        if not open_dirs:
            return self.heading or 1
        if self.heading in open_dirs and self.rng.random() < 0.75:
            return self.heading
        return self.rng.choice(open_dirs)


# -- a worker process -------------------------------------------------------------------------------------


class Worker:
    """Opens a plan's connections, builds its rooms, plays through the window, then checks and reports."""

    def __init__(self, plan: Plan, pipe: Connection) -> None:
        self.plan = plan
        self.pipe = pipe
        self.window = Window()
        self.tally = Tally()
        self.players: list[Player] = []
        self.rooms: list[list[Player]] = []
        self.readers: list[asyncio.Task[None]] = []
        self.rng = random.Random(plan.seed)

    async def run(self) -> dict[str, Any]:
        """The worker's whole life: connect, set up, report ready, play on go, stop, check."""
        await self.build()
        self.pipe.send(("ready", len(self.players)))
        measure_at, stop_at = await self.wait_for_go()
        self.window.measure_at, self.window.stop_at, self.window.started = measure_at, stop_at, True
        await asyncio.gather(*(p.start() for p in self.players))
        await asyncio.sleep(max(0.0, measure_at - time.monotonic()))
        cpu_start = _own_cpu_s()
        await asyncio.sleep(max(0.0, stop_at - time.monotonic()))
        cpu_used = _own_cpu_s() - cpu_start
        await self.drain()
        result = self.report(cpu_used / max(1e-9, stop_at - measure_at))
        await self.close()
        return result

    async def build(self) -> None:
        """Open every connection, then every room."""
        plan = self.plan
        kinds: list[type[Player]] = (
            [Player] * plan.idle
            + [TurnPlayer] * (SEATS * plan.pairs)
            + [TronRider] * (SEATS * plan.tron_rooms)
            + [HumanSpeedPlayer] * plan.ai_rooms
        )
        gate = asyncio.Semaphore(CONNECT_CONCURRENCY)
        self.players = list(await asyncio.gather(*(self.open(kind, i, gate) for i, kind in enumerate(kinds))))
        seated = self.players[plan.idle :]
        turn, rest = seated[: SEATS * plan.pairs], seated[SEATS * plan.pairs :]
        tron, humans = rest[: SEATS * plan.tron_rooms], rest[SEATS * plan.tron_rooms :]
        gate = asyncio.Semaphore(SETUP_CONCURRENCY)
        jobs = [self.pair(turn[i : i + 2], plan.game, {}, gate) for i in range(0, len(turn), 2)]
        tron_options = {
            "width": plan.tron_size,
            "height": plan.tron_size,
            "tick_ms": plan.tick_ms,
            "countdown_ms": plan.countdown_ms,
        }
        jobs += [self.pair(tron[i : i + 2], "tron", tron_options, gate) for i in range(0, len(tron), 2)]
        jobs += [self.against_ai(human, plan.game, gate) for human in humans]
        await asyncio.gather(*jobs)

    async def open(self, kind: type[Player], index: int, gate: asyncio.Semaphore) -> Player:
        """One connection, greeted, with its reader running."""
        async with gate:
            url = self.plan.urls[index % len(self.plan.urls)] if self.plan.urls else self.plan.url
            ws = await connect(url, max_size=2**20, compression=None, open_timeout=SETUP_TIMEOUT_S, ping_interval=None)
            player = kind(ws, self.window, self.tally, self.plan.rate, random.Random(self.rng.random()))
            self.readers.append(asyncio.get_running_loop().create_task(player.read()))
            await player.request(Hello, protocol=PROTOCOL_VERSION, name=f"load{os.getpid() % 1000}-{index}")
            return player

    async def pair(self, players: list[Player], game: str, options: dict[str, Any], gate: asyncio.Semaphore) -> None:
        """A room for two players: the first creates it, both take a seat, the game starts."""
        first, second = players
        async with gate:
            info = await first.request(CreateRoom, game=game, options=options)
            code = info.room  # type: ignore[attr-defined]
            await first.request(Join, room=code, seat=0)
            await second.request(Join, room=code, seat=1)
        self.rooms.append(players)

    async def against_ai(self, human: Player, game: str, gate: asyncio.Semaphore) -> None:
        """A room where the creator takes seat 0 and seats a level-5 AI opposite."""
        async with gate:
            info = await human.request(CreateRoom, game=game, options={})
            code = info.room  # type: ignore[attr-defined]
            await human.request(Join, room=code, seat=0)
            await human.send(AddAi(room=code, level=AI_LEVEL))
        self.rooms.append([human])

    async def wait_for_go(self) -> tuple[float, float]:
        """Block (off the loop) until the parent says go; give up at the deadline."""
        left = self.plan.deadline - time.monotonic()
        ready = await asyncio.to_thread(self.pipe.poll, max(0.0, left))
        if not ready:
            raise TimeoutError("no go from the parent before the deadline")
        _, measure_at, stop_at = self.pipe.recv()
        return measure_at, stop_at

    async def drain(self) -> None:
        """Let in-flight moves come back (bounded), then the last frames arrive."""
        until = time.monotonic() + DRAIN_S
        while time.monotonic() < until and any(p.busy or p.sent_at is not None for p in self.players):
            await asyncio.sleep(0.05)
        await asyncio.sleep(QUIET_S)

    def report(self, cpu_share: float) -> dict[str, Any]:
        """The worker's figures and consistency findings, as plain data for the parent."""
        checked = finished = 0
        problems: list[str] = []
        if self.plan.check:
            for players in self.rooms:
                games, done, found = check_room(players)
                checked, finished = checked + games, finished + done
                problems.extend(found)
        tally = asdict(self.tally)
        tally["errors"] = dict(self.tally.errors)
        held = sum(p.ws.state is ConnectionState.OPEN for p in self.players)
        return {
            "tally": tally,
            "connections": len(self.players),
            "held": held,
            "cpu_share": cpu_share,
            "games_checked": checked,
            "games_finished": finished,
            "problem_count": len(problems),
            "problems": problems[:MAX_PROBLEMS],
        }

    async def close(self) -> None:
        """Close every connection, bounded in time."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(
                asyncio.gather(*(p.ws.close() for p in self.players), return_exceptions=True), STOP_GRACE_S
            )
        for reader in self.readers:
            reader.cancel()


def _own_cpu_s() -> float:
    """CPU seconds this process has used."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def raise_file_limit() -> None:
    """Allow as many open sockets as the hard limit does (each connection is a file)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def worker_main(plan: Plan, pipe: Connection) -> None:
    """Entry point of a worker process: run the plan, send back the result (or the failure).

    Workers run at a lower priority (nice +CLIENT_NICENESS): on a small machine the load generator shares the
    cores with the server it measures, and with the scheduler's fair shares two busy workers would hold the
    server to two thirds of a core. Real players' clients run on their own machines; niced, the workers
    get what the server leaves, for the echo baseline and the game server alike.
    """
    os.nice(CLIENT_NICENESS)
    raise_file_limit()
    try:
        result = asyncio.run(asyncio.wait_for(Worker(plan, pipe).run(), plan.deadline - time.monotonic()))
        pipe.send(("done", result))
    except Exception:
        # The parent reports it and stops everything; the whole traceback is what helps here.
        pipe.send(("failed", traceback.format_exc()))


# -- servers ----------------------------------------------------------------------------------------------


@dataclass
class Target:
    """The server under load: its URL, and its process when this run started it."""

    url: str
    proc: subprocess.Popen[str] | None = None
    has_metrics: bool = True
    urls: tuple[str, ...] = ()  # a cluster: every node's URL (the figures are the first node's, `url`)
    others: list[subprocess.Popen[Any]] = field(default_factory=list)  # a cluster's other nodes and its redis

    @property
    def http(self) -> str:
        """The same host and port, for plain HTTP."""
        return "http" + self.url[len("ws") :]

    def metrics(self, reset: bool = False) -> dict[str, Any] | None:
        """GET /metrics (optionally resetting the samples); None if the server has none."""
        if not self.has_metrics:
            return None
        with urllib.request.urlopen(self.http + ("/metrics?reset=1" if reset else "/metrics"), timeout=30) as reply:
            return json.loads(reply.read())

    def pid(self) -> int | None:
        """The server's process id, if it runs on this machine."""
        if self.proc is not None:
            return self.proc.pid
        snapshot = self.metrics()
        return snapshot.get("pid") if snapshot else None

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it lingers (every process of a cluster, Redis last)."""
        for proc in [self.proc, *self.others]:
            if proc is None or proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(STOP_GRACE_S)


NO_CAPS = tuple(
    arg
    for name in ("max_connections_per_ip", "messages_per_ip_per_s", "rooms_per_ip", "rooms_per_player", "public_rooms")
    for arg in ("--limit", f"{name}=0")
)
"""All the load comes from 127.0.0.1, so the per-address caps (docs/security.md) are off for the bench."""


def start_target(
    kind: str, game: str, ai_workers: int | None, db: str = ":memory:", extra: tuple[str, ...] = ()
) -> Target:
    """Start the game server ("game", storing into `db`, with `extra` arguments), the fan-out echo server ("echo") or
    the raw echo server ("raw": one frame back to the sender per move) on a free loopback port."""
    if kind in ("echo", "raw"):
        command = [sys.executable, str(ROOT / "bench" / "echo_server.py"), "--port", "0", "--game", game]
        command += ["--raw"] if kind == "raw" else []
    else:
        command = [
            sys.executable,
            "-m",
            "gamenight.server",
            "--port",
            "0",
            "--db",
            db,
            "--metrics",
            "--log-level",
            "warning",
            *NO_CAPS,
        ]
        if ai_workers is not None:
            command += ["--ai-workers", str(ai_workers)]
        command += extra
    proc, url = launch(command)
    return Target(url, proc, has_metrics=kind == "game")


def start_cluster(nodes: int, ai_workers: int | None, db: str, folder: str) -> Target:
    """A cluster on this machine: a redis-server on a free port and `nodes` node processes sharing `db`."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    redis_server = shutil.which("redis-server") or "/usr/bin/redis-server"
    redis = subprocess.Popen(
        [redis_server, "--port", str(port), "--bind", "127.0.0.1", "--dir", folder, "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    procs: list[subprocess.Popen[Any]] = [redis]
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)
        urls = []
        os.environ.setdefault("GAMENIGHT_CLUSTER_SECRET", secrets.token_hex(32))  # the nodes' (inherited)
        for k in range(nodes):
            command = [sys.executable, "-m", "gamenight.server", "--port", "0", "--db", db, "--metrics"]
            command += ["--log-level", "warning", *NO_CAPS, "--cluster", f"redis://127.0.0.1:{port}/0"]
            command += ["--node-id", f"n{k + 1}"] + (["--ai-workers", str(ai_workers)] if ai_workers else [])
            proc, url = launch(command)
            procs.insert(len(procs) - 1, proc)  # nodes stop before Redis
            urls.append(url)
    except BaseException:
        for proc in procs:
            proc.kill()
        raise
    return Target(urls[0], procs[0], urls=tuple(urls), others=procs[1:])


def launch(command: list[str]) -> tuple[subprocess.Popen[str], str]:
    """Start a server that prints "... listening on URL" first; returns the process and the URL (the rest of its
    output is drained in the background). RuntimeError, the process killed, if it does not say so in time."""
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    line = _first_line(proc)
    if "listening on" not in line:
        proc.kill()
        raise RuntimeError(f"{' '.join(command[:3])} did not start: {line!r}")
    return proc, line.split("listening on", 1)[1].strip()


def _first_line(proc: subprocess.Popen[str]) -> str:
    """The child's first stdout line (within START_TIMEOUT_S); the rest is drained in the background."""
    assert proc.stdout is not None
    lines: list[str] = []
    got = threading.Event()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if not lines:
                lines.append(line)
                got.set()
        got.set()

    threading.Thread(target=pump, daemon=True).start()
    got.wait(START_TIMEOUT_S)
    return lines[0] if lines else ""


def proc_sample(pid: int | None) -> dict[str, float]:
    """RSS (KiB) and CPU seconds of a local process, from /proc."""
    if pid is None:
        return {}
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        with open(f"/proc/{pid}/status") as status:
            rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    except (OSError, StopIteration):
        return {}
    ticks = os.sysconf("SC_CLK_TCK")
    return {"rss_kib": rss, "cpu_s": (int(fields[11]) + int(fields[12])) / ticks}


# -- running a load ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Load:
    """What one run puts on the server."""

    game: str = "othello"
    connections: int = 0
    tron_rooms: int = 0
    ai_rooms: int = 0
    idle: int = 0
    workers: int = 1
    rate: float = DEFAULT_RATE
    tick_ms: int = 100
    tron_size: int = 20
    countdown_ms: int = 3000
    warmup: float = 2.0
    seconds: float = 10.0
    seed: int = 0

    def plans(self, url: str, check: bool, deadline: float, urls: tuple[str, ...] = ()) -> list[Plan]:
        """Split the load over the workers; a room's players always share a worker."""

        def share(total: int, k: int) -> int:
            return total // self.workers + (k < total % self.workers)

        return [
            Plan(
                url=url,
                game=self.game,
                pairs=share(self.connections // SEATS, k),
                tron_rooms=share(self.tron_rooms, k),
                ai_rooms=share(self.ai_rooms, k),
                idle=share(self.idle, k),
                rate=self.rate,
                tick_ms=self.tick_ms,
                tron_size=self.tron_size,
                countdown_ms=self.countdown_ms,
                seed=self.seed * 1000 + k,
                check=check,
                deadline=deadline,
                urls=urls,
            )
            for k in range(self.workers)
        ]

    def budget_s(self) -> float:
        """The hard limit on one run, start to finish."""
        return START_TIMEOUT_S + SETUP_TIMEOUT_S + self.warmup + self.seconds + DRAIN_S + QUIET_S + 2 * STOP_GRACE_S


class Run:
    """One load run against one target: workers spawned, synchronised, measured, collected, stopped."""

    def __init__(self, load: Load, target: Target, check: bool) -> None:
        self.load = load
        self.target = target
        self.deadline = time.monotonic() + load.budget_s()
        self.plans = load.plans(target.url, check, self.deadline, target.urls)
        self.context = multiprocessing.get_context("spawn")
        self.workers: list[tuple[multiprocessing.process.BaseProcess, Connection]] = []

    def execute(self) -> dict[str, Any]:
        """Run the load and return its figures."""
        try:
            began = time.monotonic()
            for plan in self.plans:
                self.spawn(plan)
            for _, pipe in self.workers:
                self.expect(pipe, "ready")
            setup_s = time.monotonic() - began
            measure_at = time.monotonic() + self.load.warmup
            stop_at = measure_at + self.load.seconds
            for _, pipe in self.workers:
                pipe.send(("go", measure_at, stop_at))
            before, after = self.measure(measure_at, stop_at)
            results = [self.expect(pipe, "done") for _, pipe in self.workers]
        finally:
            self.stop_workers()
        return {**summarize(self.load, results, before, after), "setup_s": round(setup_s, 2)}

    def spawn(self, plan: Plan) -> None:
        """Start one worker process."""
        parent, child = self.context.Pipe()
        process = self.context.Process(target=worker_main, args=(plan, child), daemon=True)
        process.start()
        self.workers.append((process, parent))

    def expect(self, pipe: Connection, what: str) -> Any:
        """The worker's next message, which must be `what`; fails at the deadline or on a worker failure."""
        if not pipe.poll(max(0.0, self.deadline - time.monotonic())):
            raise TimeoutError(f"a worker sent no {what!r} before the deadline")
        try:
            kind, payload = pipe.recv()
        except EOFError:
            raise RuntimeError(f"a worker died before sending {what!r}") from None
        if kind != what:
            raise RuntimeError(f"a worker failed: {payload}")
        return payload

    def measure(self, measure_at: float, stop_at: float) -> tuple[dict[str, Any], dict[str, Any]]:
        """Reset the server's samples when the warm-up ends; read everything at the window's edges."""
        time.sleep(max(0.0, measure_at - time.monotonic()))
        pid = self.target.pid()
        before = {"metrics": self.target.metrics(reset=True), "proc": proc_sample(pid), "at": time.monotonic()}
        time.sleep(max(0.0, stop_at - time.monotonic()))
        after = {"metrics": self.target.metrics(), "proc": proc_sample(pid), "at": time.monotonic()}
        return before, after

    def stop_workers(self) -> None:
        """Wait briefly for the workers to exit, then end any that did not."""
        for process, _ in self.workers:
            process.join(STOP_GRACE_S)
            if process.is_alive():
                process.kill()
                process.join(STOP_GRACE_S)


def summarize(
    load: Load, results: list[dict[str, Any]], before: dict[str, Any], after: dict[str, Any]
) -> dict[str, Any]:
    """Sum the workers' figures and add the server's, per second of the measured window."""
    seconds = after["at"] - before["at"]
    tallies = [r["tally"] for r in results]
    total = {
        key: sum(t[key] for t in tallies)
        for key in (
            "moves",
            "frames",
            "turn_frames",
            "turn_bytes",
            "moved_frames",
            "moved_bytes",
            "legal_frames",
            "legal_bytes",
            "tron_frames",
            "tron_ticks",
            "ai_moves",
            "ai_fallbacks",
            "paced",
            "skipped",
            "lost",
        )
    }
    errors: Counter[str] = Counter()
    for tally in tallies:
        errors.update(tally["errors"])
    rtts = [ms for t in tallies for ms in t["rtt_ms"]]
    figures = {
        "moves_per_s": round(total["moves"] / load.seconds, 1),
        "rtt_ms": percentiles(rtts),
        "connections": sum(r["held"] for r in results),
        "lost": total["lost"],
        "client_frames_per_s": round(total["frames"] / load.seconds, 1),
        "client_cpu": round(sum(r["cpu_share"] for r in results), 3),
        "paced": total["paced"],
        "errors": dict(errors),
        "consistency": {
            "games": sum(r["games_checked"] for r in results),
            "finished": sum(r["games_finished"] for r in results),
            "problems": sum(r["problem_count"] for r in results),
            "examples": [p for r in results for p in r["problems"]][:MAX_PROBLEMS],
        },
    }
    if total["moves"] and total["turn_frames"]:
        members = total["moves"] * SEATS  # every measured move reaches both players of its room
        figures["per_move"] = {
            "frames_per_member": round(total["turn_frames"] / members, 3),
            "bytes_per_member": round(total["turn_bytes"] / members, 1),
            "moved_bytes_non_mover": round(total["moved_bytes"] / max(1, total["moved_frames"]), 1),
            "moved_bytes_mover": round(total["legal_bytes"] / max(1, total["legal_frames"]), 1),
        }
    figures["server"] = _server_figures(before, after, seconds)
    if total["moves"] and figures["server"].get("cpu"):
        # CPU per move holds up when other work shares the cores; moves per second does not.
        figures["server"]["cpu_us_per_move"] = round(figures["server"]["cpu"] * seconds * 1e6 / total["moves"], 1)
    if load.tron_rooms:
        figures["tron"] = {
            "ticks_per_s": round(total["tron_ticks"] / load.seconds, 1),
            "frames_per_s": round(total["tron_frames"] / load.seconds, 1),
            "skipped_steers": total["skipped"],
        }
    if load.ai_rooms:
        figures["ai"] = {"moves": total["ai_moves"], "fallbacks": total["ai_fallbacks"]}
    return figures


def _server_figures(before: dict[str, Any], after: dict[str, Any], seconds: float) -> dict[str, Any]:
    """RSS and CPU share of the server process, and its own lag and tick-lateness percentiles."""
    figures: dict[str, Any] = {}
    if after["proc"]:
        figures["rss_kib"] = after["proc"]["rss_kib"]
        figures["cpu"] = round((after["proc"]["cpu_s"] - before["proc"]["cpu_s"]) / seconds, 3)
    if after["metrics"]:
        figures["loop_lag_ms"] = after["metrics"]["loop_lag_ms"]
        figures["tick_late_ms"] = after["metrics"]["tick_late_ms"]
        figures["clocks"] = after["metrics"].get("clocks")
    return figures


def run_against(
    kind: str, load: Load, url: str | None, ai_workers: int | None, db: str | None, cluster: int = 0
) -> dict[str, Any]:
    """Start the target (unless given), run the load, always stop what was started.

    The game server stores into `db`; None means a fresh SQLite file in a temporary folder, as a real server
    keeps its games (":memory:" leaves out the cost of the file). With `cluster`, the game server is that many
    node processes sharing one redis-server and the database file.
    """
    with tempfile.TemporaryDirectory(prefix="gamenight-load-") as folder:
        database = db or str(Path(folder) / "load.db")
        if cluster and kind == "game" and not url:
            target = start_cluster(cluster, ai_workers, database, folder)
        else:
            target = Target(url) if url else start_target(kind, load.game, ai_workers, database)
        try:
            return Run(load, target, check=kind == "game").execute()
        finally:
            target.stop()


# -- memory ------------------------------------------------------------------------------------------------


def measure_memory(idle: int, rooms: int, load: Load, ai_workers: int | None) -> dict[str, Any]:
    """Server RSS with nothing, with `idle` greeted connections, then with `rooms` rooms playing too."""
    target = start_target("game", load.game, ai_workers)
    context = multiprocessing.get_context("spawn")
    deadline = time.monotonic() + load.budget_s()
    workers: list[tuple[multiprocessing.process.BaseProcess, Connection]] = []
    try:
        time.sleep(1.0)
        empty = proc_sample(target.pid())["rss_kib"]
        idle_rss = _with_worker(context, workers, Plan(url=target.url, idle=idle, deadline=deadline), target)
        playing = Plan(url=target.url, game=load.game, pairs=rooms, rate=load.rate, deadline=deadline)
        active_rss = _with_worker(context, workers, playing, target, play_s=load.seconds)
    finally:
        for process, _ in workers:
            process.kill()
            process.join(STOP_GRACE_S)
        target.stop()
    per_conn = (idle_rss - empty) / idle if idle else 0.0
    per_room = (active_rss - idle_rss) / rooms if rooms else 0.0
    return {
        "rss_empty_kib": empty,
        "rss_idle_kib": idle_rss,
        "rss_active_kib": active_rss,
        "idle": idle,
        "rooms": rooms,
        "kib_per_idle_connection": round(per_conn, 1),
        "kib_per_active_room": round(per_room, 1),
        "kib_per_room_without_its_connections": round(per_room - SEATS * per_conn, 1),
    }


def _with_worker(context: Any, workers: list[Any], plan: Plan, target: Target, play_s: float = 0.0) -> int:
    """Start a worker on `plan`, let it play `play_s` seconds (or settle), and return the server's RSS then."""
    parent, child = context.Pipe()
    process = context.Process(target=worker_main, args=(plan, child), daemon=True)
    process.start()
    workers.append((process, parent))
    if not parent.poll(max(0.0, plan.deadline - time.monotonic())):
        raise TimeoutError("the memory worker did not get ready in time")
    kind, payload = parent.recv()
    if kind != "ready":
        raise RuntimeError(f"the memory worker failed: {payload}")
    now = time.monotonic()
    parent.send(("go", now, plan.deadline))  # stays connected (and playing) until killed
    time.sleep(max(1.0, play_s))
    return proc_sample(target.pid())["rss_kib"]


# -- the command line ---------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, with every bound checked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=1000, help="turn-based players (2 per room; default 1000)")
    parser.add_argument("--game", choices=["othello", "pentago"], default="othello")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured seconds (default 10)")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds played before measuring (default 2)")
    parser.add_argument("--workers", type=int, default=1, help="client processes (default 1)")
    parser.add_argument(
        "--rate",
        type=float,
        default=DEFAULT_RATE,
        help=f"most messages per second a client sends (default {DEFAULT_RATE:g}, under the "
        f"server's {SERVER_RATE:g}); a low rate such as 1 gives a paced, human-like load",
    )
    parser.add_argument("--tron-rooms", type=int, default=0, help="Tron rooms with random-steering riders")
    parser.add_argument("--tick-ms", type=int, default=100, help="Tron tick (default 100)")
    parser.add_argument("--tron-size", type=int, default=20, help="Tron random arena side (default 20)")
    parser.add_argument("--countdown-ms", type=int, default=3000, help="Tron countdown before each game (default 3000)")
    parser.add_argument("--ai-rooms", type=int, default=0, help="rooms where a level-5 AI faces a human-speed bot")
    parser.add_argument("--ai-workers", type=int, default=None, help="the server's AI processes (default: per core)")
    parser.add_argument("--baseline", action="store_true", help="also run against bench/echo_server.py, print ratio")
    parser.add_argument(
        "--raw-baseline",
        action="store_true",
        help="also run against bench/echo_server.py --raw (one frame per round trip), print the ratio to it",
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs to take the median of (default 1)")
    parser.add_argument("--memory", action="store_true", help="KiB per idle connection and per active room")
    parser.add_argument("--rooms", type=int, default=200, help="active rooms for --memory (default 200)")
    parser.add_argument("--url", help="load a server that is already running (loopback only)")
    parser.add_argument(
        "--db",
        help="the server's database (default: a new SQLite file in a temporary folder; ':memory:' leaves the file out)",
    )
    parser.add_argument(
        "--cluster",
        type=int,
        default=0,
        metavar="N",
        help="run the game server as N cluster nodes (one redis-server, one SQLite file); a room's two players are"
        " on different nodes; the server figures are the first node's (see also bench/cluster.py)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print one machine-readable line")
    args = parser.parse_args(argv)
    _check_bounds(parser, args)
    return args


def _check_bounds(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse loads this tool must not generate."""
    total = args.connections + SEATS * args.tron_rooms + args.ai_rooms + (SEATS * args.rooms if args.memory else 0)
    if not 0 < total <= MAX_CONNECTIONS or args.connections < 0 or args.tron_rooms < 0 or args.ai_rooms < 0:
        parser.error(f"between 1 and {MAX_CONNECTIONS} connections in all")
    if not 0 < args.seconds <= MAX_SECONDS or not 0 <= args.warmup <= MAX_SECONDS:
        parser.error(f"--seconds must be in (0, {MAX_SECONDS:g}] and --warmup in [0, {MAX_SECONDS:g}]")
    if not 0 < args.rate < SERVER_RATE:
        parser.error(f"--rate must be between 0 and {SERVER_RATE:g} (the server's limit)")
    if not 1 <= args.workers <= 16 or not 1 <= args.repeat <= 20:
        parser.error("--workers must be 1-16 and --repeat 1-20")
    if args.url and not args.url.startswith(("ws://127.0.0.1:", "ws://localhost:", "ws://[::1]:")):
        parser.error("--url must be a loopback ws:// address")
    if args.cluster and (args.url or args.memory or not 1 <= args.cluster <= 5 or args.db == ":memory:"):
        parser.error("--cluster takes 1-5 nodes sharing a database file, without --url, --memory or --db :memory:")
    if (args.baseline or args.raw_baseline) and args.url:
        parser.error("--baseline and --raw-baseline start the servers themselves; leave out --url")


def load_from(args: argparse.Namespace) -> Load:
    """The Load the arguments describe."""
    return Load(
        game=args.game,
        connections=args.connections,
        tron_rooms=args.tron_rooms,
        ai_rooms=args.ai_rooms,
        workers=args.workers,
        rate=args.rate,
        tick_ms=args.tick_ms,
        tron_size=args.tron_size,
        countdown_ms=args.countdown_ms,
        warmup=args.warmup,
        seconds=args.seconds,
        seed=args.seed,
    )


def median_of(runs: list[dict[str, Any]], *path: str) -> float | None:
    """The median of one figure over runs (None when no run has it)."""
    values = []
    for run in runs:
        value: Any = run
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, int | float):
            values.append(value)
    return round(statistics.median(values), 3) if values else None


def run_all(args: argparse.Namespace) -> dict[str, Any]:
    """Every repetition (echo then game when --baseline), with medians and the throughput ratio."""
    load = load_from(args)
    report: dict[str, Any] = {
        "load": asdict(load),
        "machine": {"nproc": os.cpu_count(), "python": sys.version.split()[0]},
        "runs": [],
    }
    for _ in range(args.repeat):
        entry: dict[str, Any] = {}
        echo_load = Load(**{**asdict(load), "tron_rooms": 0, "ai_rooms": 0})
        if args.raw_baseline:
            entry["raw"] = run_against("raw", echo_load, None, None, None)
        if args.baseline:
            entry["echo"] = run_against("echo", echo_load, None, None, None)
        entry["game"] = run_against("game", load, args.url, args.ai_workers, args.db, args.cluster)
        if args.raw_baseline and entry["raw"]["moves_per_s"]:
            entry["raw_ratio"] = round(entry["game"]["moves_per_s"] / entry["raw"]["moves_per_s"], 3)
        if args.baseline and entry["echo"]["moves_per_s"]:
            entry["ratio"] = round(entry["game"]["moves_per_s"] / entry["echo"]["moves_per_s"], 3)
            costs = [entry[kind]["server"].get("cpu_us_per_move") for kind in ("echo", "game")]
            if all(costs):
                entry["cpu_ratio"] = round(costs[0] / costs[1], 3)  # echo's CPU per move over ours
        report["runs"].append(entry)
    report["median"] = _medians(report["runs"])
    return report


MEDIAN_FIGURES = (
    ("game", "moves_per_s"),
    ("game", "rtt_ms", "p50"),
    ("game", "rtt_ms", "p99"),
    ("game", "server", "cpu"),
    ("game", "server", "rss_kib"),
    ("game", "server", "loop_lag_ms", "p50"),
    ("game", "server", "loop_lag_ms", "p99"),
    ("game", "server", "tick_late_ms", "p50"),
    ("game", "server", "tick_late_ms", "p99"),
    ("game", "server", "tick_late_ms", "max"),
    ("game", "tron", "frames_per_s"),
    ("game", "client_cpu"),
    ("game", "setup_s"),
    ("game", "server", "cpu_us_per_move"),
    ("game", "per_move", "frames_per_member"),
    ("game", "per_move", "bytes_per_member"),
    ("game", "per_move", "moved_bytes_non_mover"),
    ("game", "per_move", "moved_bytes_mover"),
    ("raw", "moves_per_s"),
    ("raw", "rtt_ms", "p99"),
    ("raw_ratio",),
    ("echo", "moves_per_s"),
    ("echo", "rtt_ms", "p99"),
    ("echo", "server", "cpu"),
    ("echo", "server", "cpu_us_per_move"),
    ("ratio",),
    ("cpu_ratio",),
)


def _medians(runs: list[dict[str, Any]]) -> dict[str, float]:
    """The median of each headline figure over the repetitions."""
    medians = {".".join(path): median_of(runs, *path) for path in MEDIAN_FIGURES}
    return {key: value for key, value in medians.items() if value is not None}


def print_report(report: dict[str, Any]) -> None:
    """The human-readable summary."""
    load = report["load"]
    print(
        f"gamenight load: {load['connections']} {load['game']} players ({load['connections'] // SEATS} rooms), "
        f"{load['tron_rooms']} tron rooms, {load['ai_rooms']} AI rooms; {load['workers']} worker(s); "
        f"{load['seconds']:g} s measured after {load['warmup']:g} s; "
        f"{report['machine']['nproc']} cores, Python {report['machine']['python']}"
    )
    for number, entry in enumerate(report["runs"], 1):
        for kind in ("raw", "echo", "game"):
            if kind in entry:
                print(f"run {number} {kind:4}: " + _one_line(entry[kind]))
        if "raw_ratio" in entry:
            print(f"run {number} game/raw echo: throughput ratio {entry['raw_ratio']:.3f}")
        if "ratio" in entry:
            print(
                f"run {number} game/echo: throughput ratio {entry['ratio']:.3f}, "
                f"server CPU per move ratio (echo/game) {entry.get('cpu_ratio', 0):.3f}"
            )
    print("median: " + ", ".join(f"{key} {value:g}" for key, value in report["median"].items()))


def _one_line(figures: dict[str, Any]) -> str:
    """One run's figures on one line."""
    rtt, server, check = figures["rtt_ms"], figures["server"], figures["consistency"]
    parts = [f"{figures['moves_per_s']:.0f} moves/s"]
    if rtt.get("n"):
        parts.append(f"rtt ms p50 {rtt['p50']:.2f} p90 {rtt['p90']:.2f} p99 {rtt['p99']:.2f} max {rtt['max']:.1f}")
    parts.append(f"{figures['connections']} conns ({figures['lost']} lost)")
    if server:
        parts.append(
            f"server cpu {server.get('cpu', 0):.0%} ({server.get('cpu_us_per_move', 0):.0f} us/move) "
            f"rss {server.get('rss_kib', 0) / 1024:.0f} MiB"
        )
    if "loop_lag_ms" in server and server["loop_lag_ms"].get("n"):
        parts.append(f"lag ms p50 {server['loop_lag_ms']['p50']:.2f} p99 {server['loop_lag_ms']['p99']:.2f}")
    if "per_move" in figures:
        per = figures["per_move"]
        parts.append(
            f"per move per member {per['frames_per_member']:.2f} frames {per['bytes_per_member']:.0f} B "
            f"(moved: {per['moved_bytes_non_mover']:.0f} B, with legal {per['moved_bytes_mover']:.0f} B)"
        )
    if "tron" in figures:
        late = server.get("tick_late_ms", {})
        if late.get("n"):
            parts.append(f"tick late ms p50 {late['p50']:.2f} p99 {late['p99']:.2f} max {late['max']:.1f}")
        parts.append(f"tron {figures['tron']['frames_per_s']:.0f} frames/s")
    if "ai" in figures:
        parts.append(f"ai moves {figures['ai']['moves']} ({figures['ai']['fallbacks']} fallbacks)")
    parts.append(f"clients cpu {figures['client_cpu']:.0%}, set-up {figures['setup_s']:.1f} s")
    parts.append(f"games {check['games']} ({check['finished']} finished), {check['problems']} problems")
    if figures["errors"]:
        parts.append(f"errors {figures['errors']}")
    return "; ".join(parts)


def main(argv: list[str] | None = None) -> int:
    """Entry point: exit status 1 when any game was inconsistent or any connection was lost."""
    args = parse_args(argv)
    raise_file_limit()
    if args.memory:
        report = {"memory": measure_memory(args.connections, args.rooms, load_from(args), args.ai_workers)}
        print(json.dumps(report) if args.json else "\n".join(f"{k}: {v}" for k, v in report["memory"].items()))
        return 0
    report = run_all(args)
    if args.json:
        print(json.dumps(report))
    else:
        print_report(report)
    bad = any(e["game"]["consistency"]["problems"] or e["game"]["lost"] for e in report["runs"])
    for entry in report["runs"]:
        for example in entry["game"]["consistency"]["examples"]:
            print(f"inconsistent: {example}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
