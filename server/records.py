"""What the store keeps, as values: the records rooms write, what start-up reads back, and the store's interface.

Rooms, drivers, the lobby and the cluster describe what happened as `Record` values (server/outbox.py); the network
layer hands them to a `StoreBackend` (server/sqlstore.py `SqlStore`, on SQLite or PostgreSQL) before it sends the
matching broadcast. This module holds only the values and the interface, so the sans-I/O parts import no database.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

TOURNAMENT_FENCE = "tournament:"
"""A `write` fence whose key starts with this names a tournament (the id follows), not a room."""


def tournament_fence(tournament: str) -> str:
    """The fence key of a tournament in `write`'s `fences` (room codes never contain a colon)."""
    return TOURNAMENT_FENCE + tournament


MAX_LEADERBOARD_OFFSET = 10_000  # a leaderboard page starts at most this far down (the index walk stays bounded)
MAX_LEADERBOARD_LIMIT = 100


class StoreError(RuntimeError):
    """The database cannot be used (e.g. it was written by a newer gamenight)."""


class Fenced(StoreError):
    """A write for a room was refused: another owner claimed the room since this writer's epoch (nothing written)."""

    def __init__(self, code: str, held: int, current: int) -> None:
        super().__init__(f"room {code} is owned under epoch {current}; this writer holds {held}")
        self.code = code
        self.held = held
        self.current = current


@dataclass(frozen=True, slots=True)
class RoomSaved:
    """A room was created (or its settings must be stored)."""

    code: str
    game: str
    options: dict[str, Any]
    room_options: dict[str, Any]
    host_name: str
    private: bool
    host_token_hash: str | None = None  # whose resume token holds the host's rights


@dataclass(frozen=True, slots=True)
class SeatSaved:
    """Who holds a seat now: a person (by name and token hash), an AI, or nobody."""

    code: str
    seat: int
    name: str | None
    token_hash: str | None
    ai_level: int | None
    ai_bot: str | None
    bot: bool = False  # the person holding it plays as a bot


@dataclass(frozen=True, slots=True)
class NameClaimed:
    """A name was claimed (or its claim turned into a bot's, or moved to a public key): by its comparison key,
    with the claimant's Ed25519 public key (hex; protocol 3) or, for a claim of protocol 2 not moved yet, the hash
    of its secret key (`key_hash`, "" once moved)."""

    name_key: str
    name: str
    key_hash: str
    bot: bool = False
    public_key: str = ""


@dataclass(frozen=True, slots=True)
class GameStarted:
    """A new game (the first, or a rematch) began in a room; its moves start from ply 0."""

    code: str
    game_no: int


@dataclass(frozen=True, slots=True)
class MoveRecorded:
    """One applied move (or one tick's joint move) in wire notation."""

    code: str
    game_no: int
    ply: int
    move: str
    spent_ms: int | None = None  # the mover's charged time, in clocked games


@dataclass(frozen=True, slots=True)
class ClockSaved:
    """Every seat's time at the start of ply `ply` (after a move, a moretime, or at the start)."""

    code: str
    game_no: int
    ply: int
    remaining: list[int]


@dataclass(frozen=True, slots=True)
class MovesUndone:
    """A takeback: the moves from ply `ply` on are gone (and the times of the positions after it)."""

    code: str
    game_no: int
    ply: int


@dataclass(frozen=True, slots=True)
class SeatRated:
    """One seat's rating change in a rated game (stored with the game, see server/rated.py)."""

    seat: int
    player: str  # the rating key: a name key, or "ai:level N" / "ai:bot:NAME"
    pool: str
    name: str
    kind: str  # human, bot or ai
    before: tuple[float, float, float]  # rating, RD, volatility
    after: tuple[float, float, float]
    outcome: str  # win, draw or loss
    at: float  # wall-clock seconds


@dataclass(frozen=True, slots=True)
class StoredRating:
    """A player's rating in one pool as stored."""

    player: str
    pool: str
    name: str
    kind: str
    rating: float
    rd: float
    vol: float
    games: int
    wins: int
    draws: int
    losses: int
    rated_at: float


@dataclass(frozen=True, slots=True)
class GameFinished:
    """A game ended; its full record goes to the history."""

    code: str
    game_no: int
    game: str
    options: dict[str, Any]
    players: list[dict[str, Any]]
    result: dict[str, Any]
    moves: list[str]
    transcript: str
    clock: dict[str, Any] | None = None  # the time control and each move's time spent (ms), in clocked games
    private: bool = False  # a private room's game: only its players see it in the history
    token_hashes: tuple[str | None, ...] = ()  # by seat: whose resume token played it (None for an AI)
    ratings: tuple[SeatRated, ...] = ()  # a rated game's changes, stored in the same transaction


@dataclass(frozen=True, slots=True)
class TournamentSaved:
    """A tournament's change (server/tournament_host.py): its header as it is now (`data`: everything but its games),
    the games changed since it was last stored, by index, and how many games it has (stored games past it go). With
    `count` None, `data` is written alone (a whole state, as stored before games had rows of their own)."""

    id: str
    data: dict[str, Any]
    finished: bool = False
    games: tuple[tuple[int, dict[str, Any]], ...] = ()
    count: int | None = None


@dataclass(frozen=True, slots=True)
class AnalysisSaved:
    """A finished game's review (server/review.py, docs/review.md), made once and kept with the game."""

    game_id: int
    analysis: dict[str, Any]


@dataclass(frozen=True, slots=True)
class RoomClosed:
    """A room closed; it will not be restored."""

    code: str


VOID = "void"  # the moderation action that voids a player's rated games in a window (its details: player, since, until)


@dataclass(frozen=True, slots=True)
class Moderated:
    """An admin's action (server/moderation.py), for the audit log; a ban or mute also sets (or lifts, `until`
    None) the sanction on `kind` ("name" / "address" / "mute") and `key` (a name key or an address)."""

    at: float  # wall-clock seconds
    admin: str
    action: str
    target: str
    reason: str
    details: dict[str, Any] = field(default_factory=dict)
    kind: str | None = None
    key: str | None = None
    until: float | None = None


@dataclass(frozen=True, slots=True)
class Sanction:
    """A ban or mute as stored: `kind` "name" / "address" (banned) or "mute", on `key`, until a wall-clock time."""

    kind: str
    key: str
    until: float


Record = (
    RoomSaved
    | SeatSaved
    | GameStarted
    | MoveRecorded
    | ClockSaved
    | MovesUndone
    | GameFinished
    | RoomClosed
    | NameClaimed
    | TournamentSaved
    | AnalysisSaved
    | Moderated
)


@dataclass(slots=True)
class StoredRoom:
    """An open room as read back at start-up: enough to rebuild it by replaying its moves."""

    code: str
    game: str
    options: dict[str, Any]
    room_options: dict[str, Any]
    host_name: str
    private: bool
    game_no: int
    host_token_hash: str | None = None
    seats: list[SeatSaved] = field(default_factory=list)
    moves: list[str] = field(default_factory=list)
    result: dict[str, Any] | None = None  # set when the current game already finished
    move_ms: list[int] = field(default_factory=list)  # each stored move's time spent (clocked games)
    clocks: list[list[int]] = field(default_factory=list)  # each position's times, from ply 0 (clocked games)


class StoreBackend(Protocol):
    """What the server, `export` and `calibrate` use of a store: a `SqlStore` (SQLite's `Store`, or `PgStore`).

    Both keep the same records with the same meaning: `write` is one transaction (all of the batch or none of
    it), and its `fences` are checked inside that transaction against the epochs `claim_room` raises.
    """

    def write(self, records: list[Record], fences: Mapping[str, int] | None = None) -> None: ...

    def claim_room(self, code: str) -> int | None: ...

    def claim_tournament(self, tournament: str) -> tuple[int, dict[str, Any]] | None: ...

    def open_room(self, code: str) -> StoredRoom | None: ...

    def unfinished_rooms(self, skipped: list[tuple[str, str]] | None = None) -> list[StoredRoom]: ...

    def purge_closed(self, before: float) -> int: ...

    def expire_claims(self, before: float) -> list[str]: ...

    def claimed_names(self) -> list[NameClaimed]: ...

    def ratings(self) -> list[StoredRating]: ...

    def tournaments(self, limit: int = 200) -> list[dict[str, Any]]: ...

    def leaderboard(self, pool: str, offset: int, limit: int) -> tuple[int, list[dict[str, Any]]]: ...

    def profile(self, player: str, viewer: str | None = None) -> tuple[list[StoredRating], list[dict[str, Any]]]: ...

    def list_games(
        self,
        player: str | None = None,
        game: str | None = None,
        limit: int = 20,
        viewer: str | None = None,
        room: str | None = None,
    ) -> list[dict[str, Any]]: ...

    def get_game(self, game_id: int, viewer: str | None = None) -> dict[str, Any] | None: ...

    def analysis(self, game_id: int) -> dict[str, Any] | None: ...

    def admins(self) -> list[tuple[str, str]]: ...

    def set_admin(self, name_key: str, name: str, admin: bool) -> bool: ...

    def sanctions(self, now: float) -> list[Sanction]: ...

    def audit(self, limit: int = 100) -> list[dict[str, Any]]: ...

    def close(self) -> None: ...
