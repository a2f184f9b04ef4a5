"""The protocol's vocabulary: the words both sides use (statuses, roles, kinds, reasons) and the typed payloads
nested inside messages (seat and room summaries, game descriptions with their option specs, results).

The server builds these objects and the client reads the same objects back, so no shape is written on one
side and parsed again by hand on the other. Pure data and checks: no msgpack (games import this module).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from gamenight.protocol.schema import Payload, omitted_when_empty, wire_name


class RoomStatus(StrEnum):
    """Where a room is in its life; the server's transition table is in `server/room.py`."""

    WAITING = "waiting"  # seats are being filled
    PLAYING = "playing"
    PAUSED = "paused"  # a live game waiting for a dropped player
    FINISHED = "finished"  # the game is over; a rematch may follow
    CLOSED = "closed"  # gone (only ever seen in the last `room` push about it)


class TournamentStatus(StrEnum):
    """Where a tournament is in its life; the server's transition table is in `server/tournament_host.py`."""

    WAITING = "waiting"  # entries and invitations; it starts at its time once every invitation is answered
    RUNNING = "running"  # its games are played
    FINISHED = "finished"  # every game played (a round robin) or its time is up (an arena): final standings
    CANCELLED = "cancelled"  # called off by its host, or fewer than two entrants accepted


class Role(StrEnum):
    """How a member is in a room."""

    PLAYER = "player"
    SPECTATOR = "spectator"


class SeatKind(StrEnum):
    """Who sits in a seat."""

    OPEN = "open"
    HUMAN = "human"
    AI = "ai"  # the server's own AI
    BOT = "bot"  # a program connected as a player (hello with `bot: true`)


class EventKind(StrEnum):
    """Every `event.kind`; docs/protocol.md gives each one's `data`."""

    MOVE = "move"  # protocol 1 only: version 2 sends the move itself as `moved` (kept so old logs still decode)
    PASS = "pass"  # Othello: a seat with no move passes
    CRASH = "crash"  # Tron: a rider crashed
    RETIRED = "retired"  # Tron with 3-4 riders: a rider resigned or forfeited and stops on the next tick
    JOINED = "joined"
    LEFT = "left"
    CHAT = "chat"
    REMATCH = "rematch"
    GAME_OVER = "game_over"
    MORETIME = "moretime"  # a seat gave its opponent 15 s
    TAKEBACK = "takeback"  # a takeback was offered, accepted or declined
    UNRATED = "unrated"  # a rated game that starts rates nobody (`reason`: a person against their own bot)


@dataclass(frozen=True, slots=True)
class EventNote(Payload):
    """Something that led to a new game state, carried inside the `moved`, `tick` or `state` that shows it."""

    kind: EventKind
    data: dict[str, Any] = field(default_factory=dict)


def apply_changes(view: Mapping[str, Any], cells: list[Any], changed: Mapping[str, Any]) -> dict[str, Any]:
    """The view after a `moved` or `tick`: `view` with its board `cells` set and its `changed` keys replaced.

    Each cell is `[row, col, char]` with `row` indexing `view["board"]` (a list of strings). A pure function of
    plain data, shared by the client (which folds every move into a full view) and the server's tests.
    """
    new = dict(view)
    if cells:
        board = list(new["board"])
        rows: dict[int, list[str]] = {}
        for row, col, char in cells:
            line = rows.get(row)
            if line is None:
                line = rows[row] = list(board[row])
            line[col] = char
        for row, line in rows.items():
            board[row] = "".join(line)
        new["board"] = board
    new.update(changed)
    return new


class ChallengeEnd(StrEnum):
    """Why a challenge (or invite) ended: `challenge_gone.why`."""

    ACCEPTED = "accepted"  # the target took it; `room` is where the game is (`tournament`: which one it entered)
    DECLINED = "declined"  # the target turned it down (`reason` may say why)
    EXPIRED = "expired"  # nobody answered in time (60 s)
    LEFT = "left"  # the challenger's or the target's connection closed
    WITHDRAWN = "withdrawn"  # the challenger took it back (decline of its own challenge)


class EndReason(StrEnum):
    """Result reasons the room itself decides, whatever the game (games describe their own, see `ReasonText`)."""

    RESIGN = "resign"
    FORFEIT = "forfeit"
    TIME = "time"  # the mover's clock reached zero; the other seat wins
    ABORTED = "aborted"  # a player aborted, or a rated game ended in its opening; nobody wins, nothing is rated


PROVEN_SCORE = 999_000
"""An AI's `score` (a move's `ai` figures) at or above this is a win its search proved, at or below its negative a
proven loss; the scores in between are the engine's own estimates, in units that mean nothing to a player."""

OPENING_MOVES = 2
"""The moves every seat makes before a game counts, as on lichess: until then any player may abort a turn-based
game, and a rated game that ends sooner, however it ends, is recorded as aborted and changes no rating."""


def moves_by_seat(movers: Iterable[int], seats: int) -> list[int]:
    """How many moves each of `seats` seats made, from who made each move (`state.movers`; -1, a joint move of a
    simultaneous game, counts for nobody). Othello's passes are no one's move: the server makes them."""
    counts = [0] * seats
    for mover in movers:
        if 0 <= mover < seats:
            counts[mover] += 1
    return counts


def in_opening(counts: Sequence[int], needed: int = OPENING_MOVES) -> bool:
    """True while some seat has made fewer than `needed` moves (`counts`: each seat's, as `moves_by_seat` gives)."""
    return any(count < needed for count in counts)


class OptionKind(StrEnum):
    """The type of an option's value."""

    INT = "int"
    STR = "str"
    BOOL = "bool"
    CHOICE = "choice"


class OptionError(ValueError):
    """A value an option does not accept; the text names the option and what is allowed."""


SEATS_OPTION = "players"
"""An option with this name sets how many seats a room has (Tron); other games have fixed seats."""


@dataclass(frozen=True, slots=True)
class OptionSpec(Payload):
    """One option of a game or room, described well enough for a client to build a form field and check it.

    `choices` lists the allowed values of a "choice" (and may restrict an "int"); `minimum`/`maximum` bound
    an "int". `label` is what people read ("AI thinking time"); `name` is what travels in `options`.
    """

    name: str
    kind: OptionKind = field(metadata=wire_name("type"))
    default: Any | None
    help: str = ""
    choices: tuple[Any, ...] | None = None
    minimum: int | None = field(default=None, metadata=wire_name("min"))
    maximum: int | None = field(default=None, metadata=wire_name("max"))
    label: str = ""

    @property
    def title(self) -> str:
        """The name shown to people: the label, else the wire name."""
        return self.label or self.name

    def check(self, value: Any) -> Any:
        """Return `value` if this option accepts it, else raise OptionError saying what is allowed."""
        if self.kind == OptionKind.BOOL:
            if not isinstance(value, bool):
                raise OptionError(f"option {self.name!r} must be true or false")
            return value
        if self.kind == OptionKind.INT:
            if isinstance(value, bool) or not isinstance(value, int):
                raise OptionError(f"option {self.name!r} must be an integer")
            if self.minimum is not None and value < self.minimum:
                raise OptionError(f"option {self.name!r} must be at least {self.minimum}")
            if self.maximum is not None and value > self.maximum:
                raise OptionError(f"option {self.name!r} must be at most {self.maximum}")
        elif not isinstance(value, str):
            raise OptionError(f"option {self.name!r} must be a string")
        if self.choices is not None and value not in self.choices:
            raise OptionError(f"option {self.name!r} must be one of: {', '.join(str(c) for c in self.choices)}")
        return value

    def parse_text(self, text: str) -> Any:
        """The value typed into a form's text field, checked; OptionError in words for the person typing."""
        text = text.strip()
        if self.kind != OptionKind.INT:
            return self.check(text)
        if not text:
            if self.default is None:
                return None
            raise OptionError(f"{self.title} needs a number")
        try:
            value = int(text)
        except ValueError:
            raise OptionError(f"{self.title} must be a whole number") from None
        try:
            return self.check(value)
        except OptionError as exc:
            raise OptionError(str(exc).replace(f"option {self.name!r}", self.title)) from None


def validate_options(specs: tuple[OptionSpec, ...], raw: Mapping[str, Any] | None) -> dict[str, Any]:
    """Check `raw` against `specs`: unknown names and bad values raise OptionError; defaults fill the rest."""
    raw = dict(raw or {})
    known = {spec.name for spec in specs}
    unknown = sorted(str(name) for name in raw if name not in known)
    if unknown:
        raise OptionError(f"unknown option(s): {', '.join(unknown)}")
    return {spec.name: spec.check(raw[spec.name]) if spec.name in raw else spec.default for spec in specs}


@dataclass(frozen=True, slots=True)
class ReasonText(Payload):
    """What a result reason means to people: `win` when one seat wins by it, `draw` when nobody does."""

    reason: str
    win: str
    draw: str | None = None


END_REASONS: tuple[ReasonText, ...] = (
    ReasonText(EndReason.RESIGN, "resignation"),
    ReasonText(EndReason.FORFEIT, "forfeit"),
    ReasonText(EndReason.TIME, "on time"),
    ReasonText(EndReason.ABORTED, "aborted", "the game was aborted"),
)
"""The texts of the reasons every game can end by; the server lists them with each game's own."""


@dataclass(frozen=True, slots=True)
class GameDescription(Payload):
    """A game on offer (`welcome.games`): its seats with default options, its options, reasons and bots."""

    name: str
    title: str
    simultaneous: bool = False
    seats: tuple[str, ...] = ()
    options: tuple[OptionSpec, ...] = ()
    reasons: tuple[ReasonText, ...] = ()
    bots: tuple[str, ...] = ()

    def option(self, name: str) -> OptionSpec | None:
        """The option called `name`, if the game has one."""
        return next((o for o in self.options if o.name == name), None)

    def reason(self, reason: str) -> ReasonText | None:
        """The texts of a result reason, if the game lists it."""
        return next((r for r in self.reasons if r.reason == reason), None)

    def seat_label(self, index: int) -> str:
        """A seat's label as the server names it ("black"); "player 3" past the listed ones."""
        return self.seats[index] if index < len(self.seats) else f"player {index + 1}"

    def seat_count(self, values: Mapping[str, Any]) -> int:
        """How many seats a room with these option values will have."""
        spec = self.option(SEATS_OPTION)
        value = values.get(SEATS_OPTION, spec.default) if spec is not None else None
        return value if isinstance(value, int) and value > 0 else len(self.seats) or 2


@dataclass(frozen=True, slots=True)
class SeatSummary(Payload):
    """One seat of a room as the lobby and the room's members see it."""

    seat: int
    label: str
    kind: SeatKind = SeatKind.OPEN
    name: str | None = None
    level: int | None = None
    bot: str | None = None
    connected: bool = False
    stand_in: str | None = None  # the AI playing for a dropped human, e.g. "AI level 3"

    @property
    def open(self) -> bool:
        """True when nobody sits here."""
        return self.kind == SeatKind.OPEN

    def who(self) -> str:
        """Who sits here, for people: a name ("rhino (bot)" for a bot player), "AI level 3", or "open"."""
        if self.open:
            return "open"
        return (self.name or "?") + (" (bot)" if self.kind == SeatKind.BOT else "")


@dataclass(frozen=True, slots=True)
class PlayerInfo(Payload):
    """One online person as `players` lists them (and a challenge's `from`)."""

    name: str
    bot: bool = False
    claimed: bool = False
    games: tuple[str, ...] = ()  # the games it takes challenges for (empty: none)
    playing: int = 0  # games in progress it holds a seat in
    online: bool = True


@dataclass(frozen=True, slots=True)
class TournamentOffer(Payload):
    """What a tournament invitation offers (`challenged.tournament`): which tournament, how it is played and who is
    in it so far. The games' options are the challenge's `options`."""

    tournament: str  # its id (`get_tournament` shows the whole of it)
    kind: str  # round_robin, arena
    entries: tuple[str, ...] = ()  # the entrants so far (those who accepted, the host if playing, AIs)
    invited: tuple[str, ...] = ()  # everyone whose invitation waits for an answer (you among them)
    rounds: int = 1  # how often a round robin's schedule is played
    duration_s: int = 0  # an arena's length
    starts_in_ms: int = 0  # its start time (it waits past it until every invitation is answered)


@dataclass(frozen=True, slots=True)
class RoomSummary(Payload):
    """A room as the lobby lists it (entries of `welcome.rooms` and `rooms`, and every `room` push)."""

    room: str
    game: str
    options: dict[str, Any]
    seats: tuple[SeatSummary, ...]
    spectators: int = 0
    status: RoomStatus = RoomStatus.WAITING
    private: bool = False
    host: str | None = None
    tournament: str | None = field(default=None, metadata=omitted_when_empty())  # the tournament it plays for

    def seat(self, index: int | None) -> SeatSummary | None:
        """The seat with this index, if it exists."""
        return None if index is None else next((s for s in self.seats if s.seat == index), None)


@dataclass(frozen=True, slots=True)
class LobbyCounts(Payload):
    """The lobby's size (`welcome.counts`, `lobby.counts`): what a client shows without every room listed."""

    rooms: int = 0  # rooms listed (public, and offered: see docs/protocol.md "Lobby (version 2)")
    online: int = 0  # sessions connected to the server
    games: dict[str, Any] = field(default_factory=dict)  # game -> {status: rooms listed}; statuses with none left out

    def of(self, game: str, status: str | None = None) -> int:
        """The listed rooms of one game (and one status)."""
        by_status = self.games.get(game, {})
        if not isinstance(by_status, Mapping):
            return 0
        if status is not None:
            value = by_status.get(status, 0)
            return value if isinstance(value, int) else 0
        return sum(v for v in by_status.values() if isinstance(v, int))


@dataclass(frozen=True, slots=True)
class Clock(Payload):
    """A turn-based game's clocks (`state.clock`), as they stood at the server time `at_ms`.

    `remaining_ms` holds each seat's time left; the seat in `running` is thinking, so its time keeps falling
    from `at_ms` on (a client counts down locally between states). `days_per_move` > 0 is a correspondence
    clock (every move resets the mover's time to that many days); `increment_ms` is added after each move.
    `at_ms` is the server's monotonic clock in ms: only differences between two states mean anything.
    """

    remaining_ms: tuple[int, ...]
    running: int | None = None
    increment_ms: int = 0
    days_per_move: int = 0
    at_ms: int = 0

    def left_ms(self, seat: int, elapsed_ms: float) -> int:
        """Seat `seat`'s time `elapsed_ms` after this clock was sent: falling only for the running seat."""
        left = self.remaining_ms[seat] if 0 <= seat < len(self.remaining_ms) else 0
        return max(0, int(left - elapsed_ms)) if seat == self.running else left


@dataclass(frozen=True, slots=True)
class RatingChange(Payload):
    """One seat's rating change at the end of a rated game (in `result.ratings`).

    `pool` is the rating it moved: the game's name, or "<game>-ffa" for Tron with 3-4 riders. `rd` is the new
    rating deviation; `provisional` while it is 110 or more (shown with "?").
    """

    seat: int
    name: str
    pool: str
    before: float
    after: float
    rd: float
    provisional: bool = False

    @property
    def delta(self) -> float:
        """How far the rating moved."""
        return self.after - self.before


@dataclass(frozen=True, slots=True)
class Result(Payload):
    """How a game ended (`state.result`, and the `game_over` event's data).

    `winners` holds the winning seats: one for a win, several for a shared result among the last survivors,
    none for a draw; `winner` is the single winner or null. `reason` is a game's own word (described in its
    `GameDescription.reasons`) or an `EndReason`; `loser` names who resigned or forfeited.
    """

    winners: tuple[int, ...]
    reason: str
    winner: int | None = None
    scores: tuple[int, ...] | None = None
    loser: int | None = None
    ratings: tuple[RatingChange, ...] = ()  # rated games: each seat's rating change

    @classmethod
    def of(
        cls, winners: tuple[int, ...], reason: str, scores: tuple[int, ...] | None = None, loser: int | None = None
    ) -> Result:
        """A result with `winner` filled in from `winners`."""
        return cls(winners, reason, winners[0] if len(winners) == 1 else None, scores, loser)


@dataclass(frozen=True, slots=True)
class LeaderEntry(Payload):
    """One line of a leaderboard: place, who, rating and RD, and their record in that pool.

    `kind` is "human", "bot" (a program connected as a player) or "ai" (a server AI level or named bot).
    """

    rank: int
    name: str
    rating: float
    rd: float
    provisional: bool
    games: int
    kind: str = "human"
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def bot(self) -> bool:
        """True for a program (a connected bot or a server AI)."""
        return self.kind != "human"


@dataclass(frozen=True, slots=True)
class PoolRating(Payload):
    """A player's rating in one pool (a game, or "<game>-ffa"), with games played and won / drawn / lost."""

    pool: str
    rating: float
    rd: float
    provisional: bool
    games: int
    wins: int = 0
    draws: int = 0
    losses: int = 0
