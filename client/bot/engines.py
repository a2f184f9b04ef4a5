"""Engines as child processes, each behind the protocol it speaks: GTP, NBoard, the 2010 Tron contest's and
gamenight's JSON lines.

An `Engine` is told the game once (`new_game`), every move as it is played (`observe`: by anyone, in order,
passes included), and asked for its own move (`choose`) with the position, the legal moves and a deadline. It
answers a move in wire notation or raises an `EngineFailure` saying what went wrong (late, crashed, malformed,
illegal, resigned); what a failure costs the seat is the bot runner's rule, not this module's.

Nothing here knows the rules of a game: the engines bring their own, and whatever they need that the protocol
cannot say (a GGF record's start position, the contest's map) is drawn from the server's `view`. The engine's
stderr goes to a log file (or nowhere), never to the server.

A late answer is not lost: the engine may still write it. Each protocol keeps count of the answers it is owed
and reads and drops the stale ones before its next question, within that question's deadline (NBoard
resynchronises with `ping`/`pong`), so a slow move can never be taken as the answer to the next one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import signal
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import IO, Any, ClassVar

START_S = 10.0
"""How long an engine may take to start and answer its first handshake."""
LINE_LIMIT = 1 << 20
"""The longest line an engine may write (a line longer than this is malformed)."""


class Failure(StrEnum):
    """Why an engine gave no usable move."""

    LATE = "late"  # no answer by the deadline
    CRASHED = "crashed"  # the process ended or closed its output
    MALFORMED = "malformed"  # an answer the protocol does not allow
    ILLEGAL = "illegal"  # a well-formed move that is not in `legal`
    RESIGNED = "resigned"  # the engine said it resigns


class EngineFailure(Exception):
    """An engine gave no usable move; `failure` says why, the message what it said or did."""

    def __init__(self, failure: Failure, message: str) -> None:
        super().__init__(f"{failure}: {message}")
        self.failure = failure


@dataclass(frozen=True, slots=True)
class Turn:
    """What an engine is asked to move from.

    `view` and `legal` are the server's (`state.view`, `state.legal`); `deadline` is a `time.monotonic()`
    instant by which the answer must be in; `clock_ms` the engine's remaining time on a game clock, if any.
    """

    game: str
    seat: int
    view: Mapping[str, Any]
    legal: Sequence[str]
    deadline: float
    clock_ms: int | None = None
    moves: Sequence[str] = ()

    @property
    def time_ms(self) -> int:
        """Whole milliseconds left until the deadline (at least 1)."""
        return max(1, int((self.deadline - time.monotonic()) * 1000))


# -- the child process ---------------------------------------------------------------------------------------


class EngineProcess:
    """One engine process: lines to its stdin, lines from its stdout, its stderr to `log` (or discarded)."""

    def __init__(self, command: str | Sequence[str], log: Path | None = None) -> None:
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        self.log = log
        self.proc: asyncio.subprocess.Process | None = None
        self._log_file: IO[bytes] | None = None

    async def start(self) -> None:
        """Start the process; EngineFailure(CRASHED) if it (or its log file) cannot be started."""
        try:
            if self.log is not None:
                self._log_file = self.log.open("ab")
            self.proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=self._log_file if self._log_file is not None else asyncio.subprocess.DEVNULL,
                limit=LINE_LIMIT,
                # Its own process group: a Ctrl-C at the terminal reaches the bot runner (which resigns and ends
                # its engines in order) and not the engines, and a lingering engine is killed with its children.
                start_new_session=True,
            )
        except OSError as exc:
            raise EngineFailure(Failure.CRASHED, f"cannot start {self.argv[0]!r}: {exc}") from None

    @property
    def running(self) -> bool:
        """True while the process has not exited."""
        return self.proc is not None and self.proc.returncode is None

    async def send(self, line: str, lines: int = 1) -> None:
        """Write `line` (`lines` lines joined by newlines: a message of a protocol that has several); EngineFailure
        (CRASHED) if the engine no longer reads, (MALFORMED) for any other line break or control character: what
        the server sends (moves, boards) is never allowed to become a command of its own."""
        assert self.proc is not None and self.proc.stdin is not None
        breaks = line.count("\n")
        if breaks != lines - 1 or any((ord(char) < 0x20 and char != "\n") or ord(char) == 0x7F for char in line):
            raise EngineFailure(Failure.MALFORMED, f"refused to pass a control character to the engine: {line[:60]!r}")
        try:
            self.proc.stdin.write(line.encode() + b"\n")
            await self.proc.stdin.drain()
        except (ConnectionError, RuntimeError) as exc:
            raise EngineFailure(Failure.CRASHED, f"engine stopped reading ({type(exc).__name__})") from None

    async def read_line(self, deadline: float) -> str:
        """The next line of output, without its end; LATE past `deadline`, CRASHED at end of output."""
        assert self.proc is not None and self.proc.stdout is not None
        left = deadline - time.monotonic()
        if left <= 0:
            raise EngineFailure(Failure.LATE, "no answer in time")
        try:
            raw = await asyncio.wait_for(self.proc.stdout.readline(), left)
        except TimeoutError:
            raise EngineFailure(Failure.LATE, "no answer in time") from None
        except ValueError:  # the line passed LINE_LIMIT
            raise EngineFailure(Failure.MALFORMED, f"a line longer than {LINE_LIMIT} bytes") from None
        if not raw:
            raise EngineFailure(Failure.CRASHED, f"engine exited (code {await self._exit_code()})")
        return raw.decode(errors="replace").rstrip("\r\n")

    def _kill_group(self) -> None:
        """SIGKILL the engine's process group (the engine and any process it started)."""
        assert self.proc is not None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    async def _exit_code(self) -> int | None:
        """The exit code once the process has ended (waiting briefly for it)."""
        assert self.proc is not None
        try:
            return await asyncio.wait_for(self.proc.wait(), 1.0)
        except TimeoutError:
            return None

    async def close(self, goodbye: str | None = None, grace_s: float = 1.0) -> None:
        """Say `goodbye` (a quit command) if given, close its input, and kill it if it lingers."""
        if self.proc is not None and self.proc.returncode is None:
            try:
                if goodbye is not None:
                    await self.send(goodbye)
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            except EngineFailure:
                pass
            try:
                await asyncio.wait_for(self.proc.wait(), grace_s)
            except TimeoutError:
                self._kill_group()
                await self.proc.wait()
        if self.proc is not None:
            self._kill_group()  # whatever the engine started and left behind goes with it
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None


# -- the protocols ------------------------------------------------------------------------------------------


class Engine(ABC):
    """An engine speaking one protocol. Use: `start`, then per game `new_game`, `observe`/`choose`, and `close`."""

    protocol: ClassVar[str]
    games: ClassVar[frozenset[str]]

    def __init__(self, command: str | Sequence[str], log: Path | None = None) -> None:
        self.process = EngineProcess(command, log)
        self.game = ""
        self.seat = 0

    async def start(self) -> None:
        """Start the process and run the protocol's handshake."""
        await self.process.start()
        await self.handshake()

    async def handshake(self) -> None:
        """What the protocol says first (nothing, by default)."""
        return None

    async def new_game(self, game: str, seat: int, start_view: Mapping[str, Any]) -> None:
        """A game begins: `game` played from `seat`, starting at the position `start_view` draws."""
        if game not in self.games:
            raise ValueError(f"a {self.protocol} engine plays {', '.join(sorted(self.games))}, not {game}")
        self.game, self.seat = game, seat

    def observe(self, seat: int, move: str | None) -> None:
        """`seat` played `move` (None: it passed). Every move of the game, in order, whoever made it.

        Protocols that send the whole position with each question (the contest's, JSON lines) need no history.
        """
        return None

    async def choose(self, turn: Turn) -> str:
        """The engine's move for `turn` in wire notation, checked against `turn.legal`."""
        move = await self.ask(turn)
        if move not in turn.legal:
            raise EngineFailure(Failure.ILLEGAL, f"{move!r} is not a legal move here")
        return move

    @abstractmethod
    async def ask(self, turn: Turn) -> str:
        """The engine's answer to `turn`, in wire notation (not yet checked for legality)."""

    async def close(self) -> None:
        """End the engine process."""
        await self.process.close()


OTHELLO_COLOURS = ("b", "w")
"""GTP's colour of each seat: seat 0 plays black."""


class GtpEngine(Engine):
    """The Go Text Protocol as Othello engines speak it (GRhino's `gtp-rhino`): `boardsize`, `clear_board`,
    `play <colour> <move>`, `time_left`, `genmove <colour>`. Squares are named as gamenight names them (column
    letter, row 1 at the top). Passes are not sent (see `observe`).

    `genmove` plays the move on the engine's own board, so when the server reports that move back it is not
    sent again. After any failure the engine's board may hold a move the game does not (a late answer, an
    illegal one), so the next question starts from `clear_board` and replays the whole game.
    """

    protocol = "gtp"
    games = frozenset({"othello"})

    def __init__(self, command: str | Sequence[str], log: Path | None = None) -> None:
        super().__init__(command, log)
        self.history: list[str] = []  # a `play` command per move of the game
        self.on_board = 0  # how many of them the engine's board holds
        self.generated: str | None = None  # the engine's last genmove, on its board, not yet in `history`
        self.dirty = False  # the engine's board may differ from the game: rebuild it before the next question
        self.owed = 0  # answers to commands that timed out, to read and drop first

    async def command(self, line: str, deadline: float) -> str:
        """Send one command and return its success text; EngineFailure on `? error` or a broken answer."""
        await self._drain(deadline)
        await self.process.send(line)
        self.owed += 1
        text = await self._answer(deadline)
        self.owed -= 1
        if text.startswith("?"):
            raise EngineFailure(Failure.MALFORMED, f"{line!r} refused: {text[1:].strip()}")
        if not text.startswith("="):
            raise EngineFailure(Failure.MALFORMED, f"{line!r} answered {text!r}")
        return text[1:].strip()

    async def _answer(self, deadline: float) -> str:
        """One answer: its lines up to the empty line that ends it (blank lines before it are skipped)."""
        text = await self.process.read_line(deadline)
        while not text.strip():
            text = await self.process.read_line(deadline)
        while (more := await self.process.read_line(deadline)).strip():
            text += "\n" + more
        return text

    async def _drain(self, deadline: float) -> None:
        """Read and drop the answers still owed to commands that timed out."""
        while self.owed:
            await self._answer(deadline)
            self.owed -= 1

    async def new_game(self, game: str, seat: int, start_view: Mapping[str, Any]) -> None:
        """`boardsize` and `clear_board` (gamenight's games start from the standard position)."""
        await super().new_game(game, seat, start_view)
        self.history, self.on_board, self.generated, self.dirty = [], 0, None, False
        deadline = time.monotonic() + START_S
        await self.command(f"boardsize {int(start_view['size'])}", deadline)
        await self.command("clear_board", deadline)

    def observe(self, seat: int, move: str | None) -> None:
        """Record `play <colour> <move>`; the engine's own generated move is already on its board. An Othello
        pass is forced by the position, so it is not sent: GRhino passes by itself and refuses `play b pass`."""
        if move is None:
            return
        self.history.append(f"play {OTHELLO_COLOURS[seat]} {move}")
        if seat == self.seat and move is not None and move == self.generated and self.on_board == len(self.history) - 1:
            self.on_board += 1
        self.generated = None

    async def choose(self, turn: Turn) -> str:
        """As every engine, but a failure leaves the engine's board to be rebuilt."""
        try:
            return await super().choose(turn)
        except EngineFailure:
            self.dirty, self.generated = True, None
            raise

    async def ask(self, turn: Turn) -> str:
        """Bring the engine's board up to the game, send the time left, then `genmove`."""
        if self.dirty:
            await self.command("clear_board", turn.deadline)
            self.on_board, self.dirty = 0, False
        for line in self.history[self.on_board :]:
            await self.command(line, turn.deadline)
            self.on_board += 1
        colour = OTHELLO_COLOURS[turn.seat]
        if turn.clock_ms is not None:
            await self.command(f"time_left {colour} {max(1, turn.clock_ms // 1000)} 0", turn.deadline)
        answer = (await self.command(f"genmove {colour}", turn.deadline)).lower()
        if answer == "resign":
            raise EngineFailure(Failure.RESIGNED, "the engine resigned")
        self.generated = answer
        return answer

    async def close(self) -> None:
        """`quit`, then end the process."""
        await self.process.close(goodbye="quit")


class NboardEngine(Engine):
    """The NBoard protocol of Othello engines (Edax, NTest): `nboard 2`, `set depth`, `set game <GGF>`, `go`,
    answered by `=== move[/eval[/time]]`; `ping n` / `pong n` to know the engine has caught up."""

    protocol = "nboard"
    games = frozenset({"othello"})

    def __init__(self, command: str | Sequence[str], log: Path | None = None, depth: int | None = None) -> None:
        super().__init__(command, log)
        self.depth = depth
        self.pings = 0
        self.start_board = ""
        self.history: list[tuple[int, str | None]] = []

    async def handshake(self) -> None:
        """`nboard 2` (and `set depth`), then a ping the engine must answer."""
        await self.process.send("nboard 2")
        if self.depth is not None:
            await self.process.send(f"set depth {self.depth}")
        await self._sync(time.monotonic() + START_S)

    async def _sync(self, deadline: float) -> None:
        """Ping and drop every line until the matching pong: anything older is stale."""
        self.pings += 1
        await self.process.send(f"ping {self.pings}")
        while (await self.process.read_line(deadline)).strip() != f"pong {self.pings}":
            pass

    async def new_game(self, game: str, seat: int, start_view: Mapping[str, Any]) -> None:
        """Keep the start position (GGF's `BO[...]`) and clear the move list."""
        await super().new_game(game, seat, start_view)
        self.start_board = ggf_board(start_view)
        self.history = []

    def observe(self, seat: int, move: str | None) -> None:
        """Every move (and pass) goes into the GGF record sent with the next question."""
        self.history.append((seat, move))

    def record(self) -> str:
        """The game so far as a GGF record."""
        moves = "".join(f"{'BW'[seat]}[{move or 'PA'}]" for seat, move in self.history)
        return f"(;GM[Othello]PC[gamenight]PB[black]PW[white]RE[?]TY[{self.start_board.split()[0]}]" + (
            f"BO[{self.start_board}]{moves};)"
        )

    async def ask(self, turn: Turn) -> str:
        """Resynchronise, send the game, `go`, and read lines until `=== move`."""
        await self._sync(turn.deadline)
        await self.process.send(f"set game {self.record()}")
        await self.process.send("go")
        while True:
            line = (await self.process.read_line(turn.deadline)).strip()
            if line.startswith("==="):
                move = line[3:].strip().split("/")[0].strip().lower()
                if not move:
                    raise EngineFailure(Failure.MALFORMED, f"{line!r} names no move")
                return "pass" if move == "pa" else move
            # status, nodestats, search lines and the like carry nothing the bot needs

    async def close(self) -> None:
        """End the process (NBoard has no quit command; closing its input is the end)."""
        await self.process.close()


GGF_SQUARES = str.maketrans(".BW", "-*O")
"""gamenight's Othello squares as GGF writes them."""


def ggf_board(view: Mapping[str, Any]) -> str:
    """GGF's `BO[...]` of an Othello view: the size, the squares row by row ("-" empty, "*" black, "O" white),
    and the side to move ("*": gamenight's games start with black to move)."""
    squares = "".join(row for row in view["board"]).translate(GGF_SQUARES)
    return f"{int(view['size'])} {squares} *"


TRON_DIRECTIONS = {"1": "N", "2": "E", "3": "S", "4": "W"}
"""The 2010 contest's answers (1 north, 2 east, 3 south, 4 west) as gamenight's moves."""


class Tron2010Engine(Engine):
    """The 2010 Google AI Challenge's own protocol, for unmodified contest bots (two riders): each tick the
    map from the bot's point of view — `W H`, then H rows of `#` (walls and every trail), space (empty), `1`
    (its head) and `2` (the opponent's head) — and one line back, 1-4."""

    protocol = "tron2010"
    games = frozenset({"tron"})

    def __init__(self, command: str | Sequence[str], log: Path | None = None) -> None:
        super().__init__(command, log)
        self.owed = 0

    async def new_game(self, game: str, seat: int, start_view: Mapping[str, Any]) -> None:
        """Contest bots play two-rider games only."""
        if len(start_view.get("heads", ())) != 2:
            raise ValueError("the 2010 contest protocol has two riders")
        await super().new_game(game, seat, start_view)

    async def ask(self, turn: Turn) -> str:
        """Send this tick's map; the answer is a line 1-4 (late answers of earlier ticks are dropped first)."""
        while self.owed:  # a late engine answers the old tick first; it must catch up within this tick
            await self.process.read_line(turn.deadline)
            self.owed -= 1
        await self.process.send(contest_map(turn.view, turn.seat), lines=int(turn.view["height"]) + 1)
        self.owed += 1
        answer = (await self.process.read_line(turn.deadline)).strip()
        self.owed -= 1
        if answer not in TRON_DIRECTIONS:
            raise EngineFailure(Failure.MALFORMED, f"{answer!r} is not 1, 2, 3 or 4")
        return TRON_DIRECTIONS[answer]


def contest_map(view: Mapping[str, Any], seat: int) -> str:
    """The 2010 contest's map of a Tron view from `seat`'s side (without the final newline)."""
    rows = [["#" if cell != " " else " " for cell in row] for row in view["board"]]
    for rider, (x, y) in enumerate(view["heads"]):
        rows[y][x] = "1" if rider == seat else "2"
    return "\n".join([f"{int(view['width'])} {int(view['height'])}", *("".join(row) for row in rows)])


class JsonLinesEngine(Engine):
    """gamenight's own protocol, for any game: one JSON object a line per turn (the game, your seat, the
    server's view, the legal moves, the moves so far, your time), answered by one line holding a move from
    `legal` (the bare move, a JSON string, or `{"move": ...}`)."""

    protocol = "jsonl"
    games = frozenset({"othello", "pentago", "tron", "connect4"})

    def __init__(self, command: str | Sequence[str], log: Path | None = None) -> None:
        super().__init__(command, log)
        self.owed = 0

    async def ask(self, turn: Turn) -> str:
        """Send the turn as one JSON line and read the move (answers owed to late turns are dropped first)."""
        while self.owed:  # answers to turns that timed out come first: drop them
            await self.process.read_line(turn.deadline)
            self.owed -= 1
        message = {
            "type": "turn",
            "game": turn.game,
            "seat": turn.seat,
            "view": dict(turn.view),
            "legal": list(turn.legal),
            "moves": list(turn.moves),
            "time_ms": turn.time_ms,
            "clock_ms": turn.clock_ms,
        }
        await self.process.send(json.dumps(message, separators=(",", ":")))
        self.owed += 1
        answer = (await self.process.read_line(turn.deadline)).strip()
        self.owed -= 1
        return parse_jsonl_answer(answer)


def parse_jsonl_answer(line: str) -> str:
    """A JSON-lines answer's move: the bare text, a JSON string, or a JSON object's `move`."""
    if line[:1] in ('"', "{"):
        try:
            value = json.loads(line)
        except ValueError:
            raise EngineFailure(Failure.MALFORMED, f"{line[:80]!r} is not JSON") from None
        if isinstance(value, dict):
            value = value.get("move")
        if not isinstance(value, str):
            raise EngineFailure(Failure.MALFORMED, f"{line[:80]!r} holds no move")
        return value.strip()
    if not line:
        raise EngineFailure(Failure.MALFORMED, "an empty answer")
    return line


PROTOCOLS: dict[str, type[Engine]] = {
    engine.protocol: engine for engine in (GtpEngine, NboardEngine, Tron2010Engine, JsonLinesEngine)
}
"""Every engine protocol by the name `--protocol` takes."""


@dataclass
class EngineSpec:
    """How to run an engine: its command line, its protocol, and where its stderr goes."""

    command: str
    protocol: str
    log: Path | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def build(self) -> Engine:
        """A new, not yet started engine."""
        try:
            kind = PROTOCOLS[self.protocol]
        except KeyError:
            raise ValueError(f"unknown engine protocol {self.protocol!r}; known: {', '.join(PROTOCOLS)}") from None
        return kind(self.command, self.log, **self.options)
