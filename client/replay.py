"""Finished games as the history screen lists them and the replay viewer steps through them.

Plain data built from `games` and `game` messages, with no Textual: a `HistoryEntry` per listed game,
and a `Replay` that knows the record, its frames and which move is shown. The server replays the rules
(`game.frames`): a full view per move, or for a live game one tick's delta, which the game's board module
folds onto the last full view (the `fold` a `Replay` is given), exactly as live ticks are.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gamenight.client.model import RoomSession, describe_result, read_result
from gamenight.protocol.vocab import (
    Clock,
    GameDescription,
    Result,
    Role,
    RoomStatus,
    RoomSummary,
    SeatKind,
    SeatSummary,
)

DATE_FORMAT = "%Y-%m-%d %H:%M"
FULL_VIEW_KEY = "board"  # a frame with a board is a whole position; one without is a live tick's delta

Fold = Callable[[Mapping[str, Any], Sequence[Mapping[str, Any]]], Mapping[str, Any]]
"""A full view with some deltas applied in order, as a full view again (a live game's replay frames)."""


def finished_on(timestamp: object) -> str:
    """A game's end time in the user's local time, e.g. "2026-11-21 22:45" ("?" if unknown)."""
    if not isinstance(timestamp, (int, float)) or isinstance(timestamp, bool):
        return "?"
    return time.strftime(DATE_FORMAT, time.localtime(timestamp))


def players_session(game: str, players: Sequence[Any], description: GameDescription | None = None) -> RoomSession:
    """A watcher's session of a finished game's seats, so results read "black (ann) wins 40-24"."""
    seats = tuple(
        SeatSummary(
            seat=int(p.get("seat", index)),
            label=str(p.get("label", "")),
            name=p.get("name"),
            kind=SeatKind.AI if p.get("ai") else (SeatKind.BOT if p.get("bot") else SeatKind.HUMAN),
            connected=True,
        )
        for index, p in enumerate(players)
        if isinstance(p, Mapping)
    )
    session = RoomSession("", Role.SPECTATOR, None, description=description)
    session.summary = RoomSummary(room="", game=game, options={}, seats=seats, status=RoomStatus.FINISHED)
    return session


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One finished game of `list_games`: its id, game, players, result and end time."""

    game_id: int
    game: str
    players: tuple[Mapping[str, Any], ...]
    result: Result | None
    finished_at: float | None

    @classmethod
    def from_wire(cls, raw: Mapping[str, Any]) -> HistoryEntry:
        """Build from one entry of a `games` message."""
        players = tuple(p for p in raw.get("players") or [] if isinstance(p, Mapping))
        stamp = raw.get("finished_at")
        return cls(
            game_id=int(raw.get("game_id", 0)),
            game=str(raw.get("game", "")),
            players=players,
            result=read_result(raw.get("result")),
            finished_at=float(stamp) if isinstance(stamp, (int, float)) else None,
        )

    def players_text(self) -> str:
        """Who played, in seat order: "ann · AI level 3"."""
        return " · ".join(str(p.get("name") or "?") for p in self.players)

    def result_text(self, description: GameDescription | None = None) -> str:
        """Who won and why: "white (bob) wins (resignation)", in the words of the game's description."""
        if self.result is None:
            return "?"
        return describe_result(self.result, players_session(self.game, self.players, description))

    def date_text(self) -> str:
        """When it ended, in local time."""
        return finished_on(self.finished_at)


class Replay:
    """A finished game being stepped through: step 0 is the start, step n the position after move n."""

    def __init__(
        self,
        record: Mapping[str, Any],
        frames: Sequence[Any],
        description: GameDescription | None = None,
        fold: Fold | None = None,
    ) -> None:
        self.record = record
        self.frames: list[Mapping[str, Any]] = [f for f in frames if isinstance(f, Mapping)]
        self.game = str(record.get("game", ""))
        self.game_id = record.get("game_id")
        self.moves = [str(m) for m in record.get("moves") or []]
        players = record.get("players")
        self.session = players_session(self.game, players if isinstance(players, list) else [], description)
        self.result = read_result(record.get("result"))
        self.fold = fold
        # A record whose frames are missing or short can still be stepped through as far as they go.
        self.last = max(0, min(len(self.moves), len(self.frames) - 1))
        self.step = 0

    def go(self, step: int) -> bool:
        """Show another step (clamped to start..end); False if it is the one already shown."""
        step = max(0, min(self.last, step))
        changed = step != self.step
        self.step = step
        return changed

    @property
    def at_end(self) -> bool:
        """True on the final position."""
        return self.step == self.last

    @property
    def last_move(self) -> str | None:
        """The move that led to the shown position (None at the start)."""
        return self.moves[self.step - 1] if 0 < self.step <= len(self.moves) else None

    def view(self) -> Mapping[str, Any]:
        """The shown position as a full view."""
        if not self.frames:
            return {}
        frame = self.frames[self.step]
        if FULL_VIEW_KEY in frame:
            return frame
        return self._folded(self.step)

    def _folded(self, step: int) -> Mapping[str, Any]:
        """A delta frame's position: the last full frame before it, with every delta since applied."""
        start = max((i for i in range(step + 1) if FULL_VIEW_KEY in self.frames[i]), default=None)
        if start is None:
            return self.frames[step]
        if self.fold is None:  # no board module folds this game's deltas: the last full position
            return self.frames[start]
        return self.fold(self.frames[start], self.frames[start + 1 : step + 1])

    def clock(self) -> Clock | None:
        """Every seat's time after the shown step, from the record's time control and its moves' times (None
        for a game without a clock, or a record that does not say who made each move)."""
        timing = self.record.get("clock")
        if not isinstance(timing, Mapping):
            return None
        spent, seats = timing.get("move_ms"), timing.get("seats")
        initial, increment = timing.get("initial_ms"), timing.get("increment_ms", 0)
        days = timing.get("days_per_move", 0)
        if not (isinstance(spent, list) and isinstance(seats, list) and isinstance(initial, int)):
            return None
        if not isinstance(increment, int) or not isinstance(days, int):
            return None
        count = len(self.session.summary.seats) if self.session.summary else 2
        remaining = [initial] * count
        for ms, seat in list(zip(spent, seats, strict=False))[: self.step]:
            if isinstance(ms, int) and isinstance(seat, int) and 0 <= seat < count:
                remaining[seat] = initial if days else remaining[seat] - ms + increment
        return Clock(tuple(remaining), None, increment, days)

    def status_text(self) -> str:
        """Where the replay is: "Start", "Move 12 of 60: f5", or the end with its result."""
        if self.at_end:
            return f"End after {len(self.moves)} moves: {self.result_text()}"
        if self.step == 0:
            return f"Start ({len(self.moves)} moves)"
        return f"Move {self.step} of {len(self.moves)}: {self.last_move}"

    def result_text(self) -> str:
        """Who won and why."""
        return describe_result(self.result, self.session) if self.result is not None else "no result recorded"
