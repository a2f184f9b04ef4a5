"""The one interface every game implements, and the small error tree games raise.

A game is a stateless object (a factory and rule book); states are immutable values it hands out.
Nothing here does I/O: the server, the AI and the tests all drive games through this interface, so
a new game is a new module plus one line in the registry.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from gamenight.protocol import vocab
from gamenight.protocol.vocab import EventKind, GameDescription, OptionError, OptionSpec, ReasonText, Result

S = TypeVar("S")
"""A game's state type (immutable)."""
M = TypeVar("M")
"""A game's move type (hashable)."""


class GameError(ValueError):
    """Base of every error a game raises for bad input (never for its own bugs)."""


class IllegalMove(GameError):
    """A move that is well-formed but not allowed here, or that does not parse; the text says why."""


class BadOptions(GameError):
    """Room options a game cannot accept; the text names the option and what is allowed."""


def validate_options(specs: tuple[OptionSpec, ...], raw: Mapping[str, Any] | None) -> dict[str, Any]:
    """Check `raw` against `specs` (protocol.vocab's rules); a refusal is BadOptions, defaults fill the rest."""
    try:
        return vocab.validate_options(specs, raw)
    except OptionError as exc:
        raise BadOptions(str(exc)) from None


@dataclass(frozen=True)
class Outcome:
    """How a finished game ended.

    `winners` holds the winning seats: one seat for a win, several for a shared result among the last
    survivors, empty for a draw in which nobody wins. `reason` is a short stable word ("discs",
    "five", "crash", "resign", "forfeit", ...) that the game lists in `Game.reasons` (or an `EndReason`),
    and `scores` the final per-seat numbers if the game has any.
    """

    winners: tuple[int, ...]
    reason: str
    scores: tuple[int, ...] | None = None

    @property
    def is_draw(self) -> bool:
        """True when no single seat won."""
        return len(self.winners) != 1

    def result(self, loser: int | None = None) -> Result:
        """The outcome as the protocol tells it (`state.result`, the `game_over` event)."""
        return Result.of(self.winners, self.reason, self.scores, loser)


@dataclass(frozen=True, slots=True)
class ViewChanges:
    """What one move changed in a game's `view`: board `cells` as `[row, col, char]` (row indexing
    `view["board"]`), and the other view keys that changed (`keys`), with their new values."""

    cells: list[list[Any]]
    keys: dict[str, Any]


def diff_views(before: Mapping[str, Any], after: Mapping[str, Any]) -> ViewChanges:
    """The changes from one view to another: the board cell by cell (rows of equal length), other keys whole."""
    cells: list[list[Any]] = []
    keys = {key: value for key, value in after.items() if key != "board" and before.get(key) != value}
    old, new = before.get("board"), after.get("board")
    if old != new:
        if not isinstance(old, list) or not isinstance(new, list) or len(old) != len(new):
            keys["board"] = new
        else:
            for row, (was, now) in enumerate(zip(old, new, strict=True)):
                if was == now:
                    continue
                if len(was) != len(now):
                    keys["board"] = new
                    cells = []
                    break
                cells.extend([row, col, char] for col, char in enumerate(now) if char != was[col])
    return ViewChanges(cells, keys)


@dataclass(frozen=True, slots=True)
class Opening:
    """How one pair of AI-vs-AI match games starts: room options and how many random plies open it."""

    options: dict[str, Any]
    random_plies: int
    label: str


@dataclass(frozen=True)
class Notice:
    """Something that happened as a side effect of a move, for the server to announce as an `event`.

    Example: Othello's automatic pass (`Notice(EventKind.PASS, {"seat": 1})`).
    """

    kind: EventKind
    data: dict[str, Any] = field(default_factory=dict)


class Game(ABC, Generic[S, M]):
    """The rule book of one game, generic over its state type `S` and move type `M`. Subclasses are stateless;
    every method is pure.

    Seats are numbered 0..n-1. Turn-based games have exactly one seat in `to_move`; simultaneous games
    (Tron, subclasses of `LiveGame`) have every living seat there, and `apply` takes one move per seat at
    once. A game's states are immutable (or treated as such): `apply` returns a new state and never changes
    its input. `reasons` describes, for people, every result reason the game's `outcome` can give.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    simultaneous: ClassVar[bool] = False
    option_specs: ClassVar[tuple[OptionSpec, ...]] = ()
    reasons: ClassVar[tuple[ReasonText, ...]] = ()

    # -- options and set-up -------------------------------------------------------------------
    def validate_options(self, raw: Mapping[str, Any] | None) -> dict[str, Any]:
        """Return complete, valid options from a client's partial map, or raise BadOptions."""
        return validate_options(self.option_specs, raw)

    def seat_count(self, options: Mapping[str, Any]) -> int:
        """How many seats a room with these (validated) options has."""
        return 2

    def seat_names(self, options: Mapping[str, Any]) -> list[str]:
        """Display names of the seats, e.g. ["black", "white"]."""
        return [f"player {i + 1}" for i in range(self.seat_count(options))]

    @abstractmethod
    def initial_state(self, options: Mapping[str, Any]) -> S:
        """The state a new game starts from."""

    # -- the questions a state answers ----------------------------------------------------------
    @abstractmethod
    def to_move(self, state: S) -> frozenset[int]:
        """Seats that must move now; empty once the game is over."""

    @abstractmethod
    def legal_moves(self, state: S, seat: int) -> list[M]:
        """Every legal move of `seat` now (empty if it is not to move)."""

    @abstractmethod
    def apply(self, state: S, moves: Mapping[int, M]) -> S:
        """The state after `moves` (one per seat in `to_move`); raise IllegalMove if any is not legal."""

    @abstractmethod
    def outcome(self, state: S) -> Outcome | None:
        """The result once the game is over, else None."""

    def notices(self, before: S, after: S) -> list[Notice]:
        """Side effects of the transition before -> after worth announcing (passes, crashes)."""
        return []

    def plies_left(self, state: S) -> int:
        """An upper estimate of the moves (of all seats) left in the game, for an AI's time management."""
        return 60

    def default_move(self, state: S, seat: int) -> M:
        """For simultaneous games: the move a seat makes when it sent nothing before the tick."""
        raise IllegalMove(f"{self.name} has no default move")

    # -- the wire ------------------------------------------------------------------------------
    @abstractmethod
    def parse_move(self, state: S, text: str) -> M:
        """Turn a wire move into a move object, or raise IllegalMove saying what is wrong with it."""

    @abstractmethod
    def format_move(self, state: S, move: M) -> str:
        """The wire / notation form of `move` made in `state`."""

    def retire_move(self, state: S, seat: int) -> M | None:
        """A move taking `seat` out of the game while the others play on, or None: conceding ends the game.

        Games of three or more players override it (a Tron rider who resigns stops on the next tick and the
        others ride on). The move goes into the move log like any other, so a restored game replays it.
        """
        return None

    def legal_notation(self, state: S, seat: int) -> list[str]:
        """Every legal move of `seat`, formatted: what each `state` message lists (games may do it faster)."""
        return [self.format_move(state, move) for move in self.legal_moves(state, seat)]

    @abstractmethod
    def view(self, state: S) -> dict[str, Any]:
        """Everything a client needs to draw `state`, as plain msgpack-able values.

        Must include "board" and "scores" (list per seat, or None). The server adds seq, turn, legal
        moves, last move and result, so games need not.
        """

    def delta(self, before: S, after: S) -> dict[str, Any] | None:
        """A small view of what changed, for games that send deltas between full states (Tron); else None."""
        return None

    def changes(self, before: S, after: S) -> ViewChanges:
        """What the move (or tick) before -> after changed in `view`, as plain data (see `ViewChanges`).

        The server sends it in place of a full view after every move; `protocol.vocab.apply_changes` applied
        to `view(before)` must give `view(after)` exactly (tests/server/test_changes.py checks every game). This
        default compares the two views; games override it with what they know of the move, which is cheaper.
        """
        return diff_views(self.view(before), self.view(after))

    def transcript(self, moves: list[str]) -> str:
        """A finished game's moves in the game's usual written form."""
        return " ".join(moves)

    def describe(self) -> GameDescription:
        """The game as listed in `welcome.games`, before the server adds the room options, its bots and the
        reasons every game shares."""
        return GameDescription(
            name=self.name,
            title=self.title,
            simultaneous=self.simultaneous,
            seats=tuple(self.seat_names(self.validate_options({}))),
            options=self.option_specs,
            reasons=self.reasons,
        )


class LiveGame(Game[S, M]):
    """A simultaneous game played on a tick clock (Tron): every living seat moves at once, each tick.

    A tick's joint move is stored as one line of notation, so these games say how to write and read it.
    """

    simultaneous: ClassVar[bool] = True

    @abstractmethod
    def format_joint(self, moves: Mapping[int, M], seats: int) -> str:
        """One tick's moves (by seat) as one stored notation."""

    @abstractmethod
    def parse_joint(self, state: S, text: str) -> dict[int, M]:
        """A stored tick back into its moves by seat; IllegalMove if it does not fit `state`."""
