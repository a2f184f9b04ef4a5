"""The one interface every game implements, and the small error tree games raise.

A game is a stateless object (a factory and rule book); states are immutable values it hands out.
Nothing here does I/O: the server, the AI and the tests all drive games through this interface, so
a new game is a new module plus one line in the registry.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar


class GameError(ValueError):
    """Base of every error a game raises for bad input (never for its own bugs)."""


class IllegalMove(GameError):
    """A move that is well-formed but not allowed here, or that does not parse; the text says why."""


class BadOptions(GameError):
    """Room options a game cannot accept; the text names the option and what is allowed."""


@dataclass(frozen=True)
class OptionSpec:
    """One option a game declares, described well enough for a client to build a form from it.

    `kind` is one of "int", "str", "bool", "choice". `choices` lists the allowed values of a
    "choice" (and may restrict an "int"); `minimum`/`maximum` bound an "int".
    """

    name: str
    kind: str
    default: Any
    help: str = ""
    choices: tuple[Any, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None

    def check(self, value: Any) -> Any:
        """Return `value` converted to this option's type, or raise BadOptions saying what is allowed."""
        if self.kind == "bool":
            if not isinstance(value, bool):
                raise BadOptions(f"option {self.name!r} must be true or false")
            return value
        if self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                raise BadOptions(f"option {self.name!r} must be an integer")
            if self.minimum is not None and value < self.minimum:
                raise BadOptions(f"option {self.name!r} must be at least {self.minimum}")
            if self.maximum is not None and value > self.maximum:
                raise BadOptions(f"option {self.name!r} must be at most {self.maximum}")
        elif self.kind in ("str", "choice") and not isinstance(value, str):
            raise BadOptions(f"option {self.name!r} must be a string")
        if self.choices is not None and value not in self.choices:
            allowed = ", ".join(str(c) for c in self.choices)
            raise BadOptions(f"option {self.name!r} must be one of: {allowed}")
        return value

    def to_wire(self) -> dict[str, Any]:
        """The option as a plain map for `welcome.games`."""
        wire: dict[str, Any] = {"name": self.name, "type": self.kind, "default": self.default, "help": self.help}
        if self.choices is not None:
            wire["choices"] = list(self.choices)
        if self.minimum is not None:
            wire["min"] = self.minimum
        if self.maximum is not None:
            wire["max"] = self.maximum
        return wire


def validate_options(specs: tuple[OptionSpec, ...], raw: Mapping[str, Any] | None) -> dict[str, Any]:
    """Check `raw` against `specs`: unknown names and bad values raise BadOptions; defaults fill the rest."""
    raw = dict(raw or {})
    known = {spec.name: spec for spec in specs}
    unknown = sorted(str(name) for name in raw if name not in known)
    if unknown:
        raise BadOptions(f"unknown option(s): {', '.join(unknown)}")
    return {spec.name: spec.check(raw[spec.name]) if spec.name in raw else spec.default for spec in specs}


@dataclass(frozen=True)
class Outcome:
    """How a finished game ended.

    `winners` holds the winning seats: one seat for a win, several for a shared result among the last
    survivors, empty for a draw in which nobody wins. `reason` is a short stable word ("discs",
    "five", "crash", "resign", "forfeit", ...) and `scores` the final per-seat numbers if the game has any.
    """

    winners: tuple[int, ...]
    reason: str
    scores: tuple[int, ...] | None = None

    @property
    def is_draw(self) -> bool:
        """True when no single seat won."""
        return len(self.winners) != 1

    def to_wire(self) -> dict[str, Any]:
        """The outcome as a plain map for `state.result` and the `game_over` event."""
        winner = self.winners[0] if len(self.winners) == 1 else None
        wire: dict[str, Any] = {"winner": winner, "winners": list(self.winners), "reason": self.reason}
        if self.scores is not None:
            wire["scores"] = list(self.scores)
        return wire


@dataclass(frozen=True)
class Notice:
    """Something that happened as a side effect of a move, for the server to announce as an `event`.

    Example: Othello's automatic pass (`Notice("pass", {"seat": 1})`).
    """

    kind: str
    data: dict[str, Any] = field(default_factory=dict)


class Game(ABC):
    """The rule book of one game. Subclasses are stateless; every method is pure.

    Seats are numbered 0..n-1. Turn-based games have exactly one seat in `to_move`; simultaneous games
    (Tron) have every living seat there, and `apply` takes one move per seat at once. A game's states
    are immutable (or treated as such): `apply` returns a new state and never changes its input.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    simultaneous: ClassVar[bool] = False
    option_specs: ClassVar[tuple[OptionSpec, ...]] = ()

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
    def initial_state(self, options: Mapping[str, Any]) -> Any:
        """The state a new game starts from."""

    # -- the questions a state answers ----------------------------------------------------------
    @abstractmethod
    def to_move(self, state: Any) -> frozenset[int]:
        """Seats that must move now; empty once the game is over."""

    @abstractmethod
    def legal_moves(self, state: Any, seat: int) -> list[Any]:
        """Every legal move of `seat` now (empty if it is not to move)."""

    @abstractmethod
    def apply(self, state: Any, moves: Mapping[int, Any]) -> Any:
        """The state after `moves` (one per seat in `to_move`); raise IllegalMove if any is not legal."""

    @abstractmethod
    def outcome(self, state: Any) -> Outcome | None:
        """The result once the game is over, else None."""

    def notices(self, before: Any, after: Any) -> list[Notice]:
        """Side effects of the transition before -> after worth announcing (passes, crashes)."""
        return []

    def default_move(self, state: Any, seat: int) -> Any:
        """For simultaneous games: the move a seat makes when it sent nothing before the tick."""
        raise IllegalMove(f"{self.name} has no default move")

    # -- the wire ------------------------------------------------------------------------------
    @abstractmethod
    def parse_move(self, state: Any, text: Any) -> Any:
        """Turn a wire move into a move object, or raise IllegalMove saying what is wrong with it."""

    @abstractmethod
    def format_move(self, state: Any, move: Any) -> str:
        """The wire / notation form of `move` made in `state`."""

    def retire_move(self, state: Any, seat: int) -> Any | None:
        """A move taking `seat` out of the game while the others play on, or None: conceding ends the game.

        Games of three or more players override it (a Tron rider who resigns stops on the next tick and the
        others ride on). The move goes into the move log like any other, so a restored game replays it.
        """
        return None

    def legal_notation(self, state: Any, seat: int) -> list[str]:
        """Every legal move of `seat`, formatted: what each `state` message lists (games may do it faster)."""
        return [self.format_move(state, move) for move in self.legal_moves(state, seat)]

    @abstractmethod
    def view(self, state: Any) -> dict[str, Any]:
        """Everything a client needs to draw `state`, as plain msgpack-able values.

        Must include "board" and "scores" (list per seat, or None). The server adds seq, turn, legal
        moves, last move and result, so games need not.
        """

    def delta(self, before: Any, after: Any) -> dict[str, Any] | None:
        """A small view of what changed, for games that send deltas between full states (Tron); else None."""
        return None

    def transcript(self, moves: list[str]) -> str:
        """A finished game's moves in the game's usual written form."""
        return " ".join(moves)

    def describe(self) -> dict[str, Any]:
        """The game as listed in `welcome.games`: name, title, seats and its options."""
        return {
            "name": self.name,
            "title": self.title,
            "simultaneous": self.simultaneous,
            "options": [spec.to_wire() for spec in self.option_specs],
        }
