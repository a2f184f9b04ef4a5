"""`gamenight-server calibrate`: AI levels and named bots play rated games against each other to seed their ratings.

The games run in this process, without a network or a server: each is a real `Room` with the `rated` option and
AI seats, driven the way the server drives it (AI turns answered by `ai.play.choose_move`, ticks for Tron), rated
by the same `RatingBook` as live games, and each finished game (with its rating changes) is stored through the same
`StoreBackend.write`, so the ratings land in the server's database and the games in its history. Run it while the server
is stopped (a running server keeps the ratings it loaded at start-up in memory).
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gamenight.protocol.vocab import RoomStatus
from gamenight.server.ai.play import choose_move
from gamenight.server.games import GAMES
from gamenight.server.outbox import AiSpec, AiTurn, Outbox
from gamenight.server.rated import Entrant, RatingBook
from gamenight.server.records import GameFinished
from gamenight.server.room import Room, Seat
from gamenight.server.room_options import split_and_validate
from gamenight.server.store import open_store

MAX_PLIES = 5000  # a game longer than this is a bug, not a calibration game


@dataclass(frozen=True, slots=True)
class Calibrated:
    """One entrant's rating after calibration."""

    name: str
    rating: float
    rd: float
    games: int
    wins: int
    draws: int
    losses: int


def parse_entrants(text: str) -> list[AiSpec]:
    """ "1,3,5,classic" as AI specs: numbers are levels, other words named bots."""
    specs = []
    for word in (w.strip() for w in text.split(",")):
        if not word:
            continue
        specs.append(AiSpec(level=int(word)) if word.isdigit() else AiSpec(bot=word))
    if len(specs) < 2:
        raise ValueError("calibration needs at least two levels or bots")
    return specs


def schedule(entrants: Sequence[AiSpec], games: int) -> list[tuple[AiSpec, AiSpec]]:
    """`games` pairings cycling through every pair of entrants, colours swapped on each pass."""
    pairs = list(itertools.combinations(entrants, 2))
    order: list[tuple[AiSpec, AiSpec]] = []
    for n in range(games):
        a, b = pairs[n % len(pairs)]
        order.append((a, b) if (n // len(pairs)) % 2 == 0 else (b, a))
    return order


def play_rated(
    game_name: str,
    first: AiSpec,
    second: AiSpec,
    book: RatingBook,
    ms: int,
    seed: int,
    options: dict[str, Any] | None = None,
) -> tuple[Room, list[GameFinished]]:
    """One rated game between two AIs, driven to its end: the finished room and its history record."""
    game = GAMES[game_name]
    game_options, room_options = split_and_validate(
        game, {**(options or {}), "rated": True, "ai_ms": max(50, ms), "ai_pace_ms": 0, "countdown_ms": 0}
    )
    room = Room("CALIB", game, game_options, room_options, "calibrate", "calibrate")
    room.rater = book.rate
    records: list[Any] = []
    out = room.add_ai("calibrate", 0, first)
    out.extend(room.add_ai("calibrate", 1, second))
    rng = random.Random(seed)
    for _ in range(MAX_PLIES):
        records.extend(out.records)
        if room.status == RoomStatus.FINISHED:
            break
        out = _advance(room, game.simultaneous, out, ms, rng)
    else:
        raise RuntimeError(f"{game_name}: no result after {MAX_PLIES} plies")
    return room, [r for r in records if isinstance(r, GameFinished)]


def _advance(room: Room, live: bool, out: Outbox, ms: int, rng: random.Random) -> Outbox:
    """Answer the AI turns the last outbox asked for (all of them, then the tick, in a live game)."""
    turns = [e for e in out.effects if isinstance(e, AiTurn) and e.seq == room.seq]
    if not live:
        if not turns:
            raise RuntimeError("a turn-based game waits for no AI")
        return room.ai_moved(*_answer(room, turns[0], ms, rng))
    for turn in turns:
        room.ai_moved(*_answer(room, turn, ms, rng))
    return room.tick()


def _answer(room: Room, turn: AiTurn, ms: int, rng: random.Random) -> tuple[int, int, str, dict[str, Any]]:
    """The AI's move for one turn, as `Room.ai_moved` takes it."""
    budget = min(turn.budget_ms, ms)
    move, info = choose_move(
        turn.game,
        turn.state,
        turn.seat,
        level=turn.ai.level,
        bot=turn.ai.bot,
        budget_ms=budget,
        seed=rng.randrange(2**31),
    )
    return turn.seat, turn.seq, move, info


def calibrate(
    db: str,
    game: str,
    games: int,
    entrants: Sequence[AiSpec],
    ms: int = 100,
    seed: int = 1,
    progress: Callable[[int, Room], None] | None = None,
) -> list[Calibrated]:
    """Play `games` rated AI-vs-AI games of `game` into the database `db`; the entrants' ratings, best first."""
    store = open_store(db)
    try:
        book = RatingBook()
        book.load(store.ratings())
        for n, (first, second) in enumerate(schedule(entrants, games)):
            options = {"seed": seed * 1000 + n} if any(spec.name == "seed" for spec in GAMES[game].option_specs) else {}
            room, finished = play_rated(game, first, second, book, ms, seed * 100_003 + n, options)
            store.write(list(finished))
            if progress is not None:
                progress(n, room)
        pool = game
        found = []
        for spec in entrants:
            entrant = Entrant.of(Seat(0, "", ai=spec))
            assert entrant is not None
            standing = book.standings.get((entrant.key, pool))
            if standing is not None:
                found.append(
                    Calibrated(
                        entrant.name,
                        standing.rating.rating,
                        standing.rating.rd,
                        standing.games,
                        standing.wins,
                        standing.draws,
                        standing.losses,
                    )
                )
        return sorted(found, key=lambda c: -c.rating)
    finally:
        store.close()


def table(game: str, rows: Sequence[Calibrated], games: int, seconds: float) -> str:
    """The calibration's result as a text table."""
    lines = [f"{game}: {games} rated games in {seconds:.0f} s", f"{'player':<16} {'rating':>7} {'RD':>5}  games  W-D-L"]
    for r in rows:
        lines.append(f"{r.name:<16} {r.rating:7.0f} {r.rd:5.0f}  {r.games:5d}  {r.wins}-{r.draws}-{r.losses}")
    return "\n".join(lines)


def run(db: str, game: str, games: int, levels: str, ms: int, seed: int) -> int:
    """The command: play, print the table (exit status 0), or say what is wrong (2)."""
    if game not in GAMES:
        print(f"gamenight-server calibrate: unknown game {game!r}; try one of {', '.join(GAMES)}")
        return 2
    started = time.monotonic()

    def tell(n: int, room: Room) -> None:
        if (n + 1) % 10 == 0:
            print(f"  {n + 1}/{games} games", flush=True)

    rows = calibrate(db, game, games, parse_entrants(levels), ms, seed, tell)
    print(table(game, rows, games, time.monotonic() - started))
    return 0
