"""The store written once in SQL: `SqlStore` writes the records and reads them back on SQLite and PostgreSQL alike.

What differs between the two is small and kept apart:

- `Dialect`: the parameter marker (`?` or `%s`), the column types of `SCHEMA` (booleans, times, 64-bit integers,
  the games' id column) and the leaderboard's order. The statements here are written once, with `?` markers;
  upserts are `INSERT ... ON CONFLICT ... DO UPDATE`, new ids come back with `RETURNING`, booleans are `TRUE` /
  `FALSE` (SQLite stores them as 1 / 0), all of which both databases read alike.
- The backend (server/store.py `Store` for SQLite, server/store_pg.py `PgStore`): connecting, `_session` (a
  cursor, inside a transaction if asked: SQLite's BEGIN IMMEDIATE, PostgreSQL's explicit transaction), the fence
  check of `write` (`_check_fences`) and the schema's bookkeeping with its lock (`_migrate`).

`SCHEMA` is the one description of the tables: a new database of either backend is made from it; older databases
are upgraded by each backend's own migrations (SQLite's file history in server/store.py, PostgreSQL's numbering in
server/store_pg.py).
"""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from typing import Any, Protocol

from gamenight.server.records import (
    VOID,
    AnalysisSaved,
    ClockSaved,
    GameFinished,
    GameStarted,
    Moderated,
    MoveRecorded,
    MovesUndone,
    NameClaimed,
    Record,
    RoomClosed,
    RoomSaved,
    Sanction,
    SeatRated,
    SeatSaved,
    StoredRating,
    StoredRoom,
    StoreError,
    TournamentSaved,
)

RECENT_RATED = 10  # rated games a profile lists

# The tables of the current schema (SQLite's 13, PostgreSQL's 6), in the column order upgrades leave them in. The
# {names} are the dialect's types (`Dialect.types`). JSON values are TEXT in both: written and read whole, never
# queried inside (game_players is the index by player), and TEXT gives them back byte for byte.
SCHEMA = """
CREATE TABLE rooms (
    code TEXT PRIMARY KEY,
    game TEXT NOT NULL,
    options TEXT NOT NULL,
    room_options TEXT NOT NULL,
    host_name TEXT NOT NULL,
    private {bool} NOT NULL,
    created_at {real} NOT NULL,
    game_no INTEGER NOT NULL DEFAULT 0,
    closed {bool} NOT NULL DEFAULT {false},
    host_token_hash TEXT,
    closed_at {real},
    owner_epoch {bigint} NOT NULL DEFAULT 0
);
CREATE INDEX rooms_closed ON rooms(closed, closed_at);
CREATE TABLE seats (
    room TEXT NOT NULL REFERENCES rooms(code),
    seat INTEGER NOT NULL,
    name TEXT,
    token_hash TEXT,
    ai_level INTEGER,
    ai_bot TEXT,
    bot {bool} NOT NULL DEFAULT {false},
    PRIMARY KEY (room, seat)
);
CREATE TABLE moves (
    room TEXT NOT NULL REFERENCES rooms(code),
    game_no INTEGER NOT NULL,
    ply INTEGER NOT NULL,
    move TEXT NOT NULL,
    at {real} NOT NULL,
    spent_ms {bigint},
    PRIMARY KEY (room, game_no, ply)
);
CREATE TABLE clocks (
    room TEXT NOT NULL REFERENCES rooms(code),
    game_no INTEGER NOT NULL,
    ply INTEGER NOT NULL,
    remaining TEXT NOT NULL,
    PRIMARY KEY (room, game_no, ply)
);
CREATE TABLE games (
    id {id},
    room TEXT NOT NULL,
    game_no INTEGER NOT NULL,
    game TEXT NOT NULL,
    options TEXT NOT NULL,
    players TEXT NOT NULL,
    result TEXT NOT NULL,
    reason TEXT NOT NULL,
    moves TEXT NOT NULL,
    transcript TEXT NOT NULL,
    finished_at {real} NOT NULL,
    clock TEXT,
    private {bool} NOT NULL DEFAULT {false}
);
CREATE INDEX games_by_game ON games(game, id);
CREATE INDEX games_by_room ON games(room, game_no);
CREATE TABLE game_players (
    game_id {bigint} NOT NULL REFERENCES games(id),
    seat INTEGER NOT NULL,
    name TEXT,
    token_hash TEXT,
    PRIMARY KEY (game_id, seat)
);
CREATE INDEX game_players_by_name ON game_players(name, game_id);
CREATE INDEX game_players_by_token ON game_players(token_hash, game_id);
CREATE TABLE names (
    name_key TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    key_hash TEXT NOT NULL,
    bot {bool} NOT NULL DEFAULT {false},
    claimed_at {real} NOT NULL,
    public_key TEXT
);
CREATE TABLE ratings (
    player TEXT NOT NULL,
    pool TEXT NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    rating {real} NOT NULL,
    rd {real} NOT NULL,
    vol {real} NOT NULL,
    games INTEGER NOT NULL DEFAULT 0,
    wins INTEGER NOT NULL DEFAULT 0,
    draws INTEGER NOT NULL DEFAULT 0,
    losses INTEGER NOT NULL DEFAULT 0,
    rated_at {real} NOT NULL,
    PRIMARY KEY (player, pool)
);
CREATE INDEX ratings_board ON ratings(pool, {board});
CREATE TABLE rating_changes (
    game_id {bigint} NOT NULL REFERENCES games(id),
    seat INTEGER NOT NULL,
    player TEXT NOT NULL,
    pool TEXT NOT NULL,
    before {real} NOT NULL,
    after {real} NOT NULL,
    rd_before {real} NOT NULL,
    rd_after {real} NOT NULL,
    outcome TEXT NOT NULL,
    PRIMARY KEY (game_id, seat)
);
CREATE INDEX rating_changes_by_player ON rating_changes(player, game_id);
CREATE TABLE tournaments (
    id TEXT PRIMARY KEY,
    data TEXT NOT NULL,
    finished {bool} NOT NULL DEFAULT {false},
    created_at {real} NOT NULL,
    owner_epoch {bigint} NOT NULL DEFAULT 0
);
CREATE TABLE tournament_games (
    tournament TEXT NOT NULL,
    idx {bigint} NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (tournament, idx)
);
CREATE TABLE analyses (
    game_id {bigint} PRIMARY KEY REFERENCES games(id),
    data TEXT NOT NULL,
    created_at {real} NOT NULL
);
CREATE TABLE admins (
    name_key TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    added_at {real} NOT NULL
);
CREATE TABLE sanctions (
    kind TEXT NOT NULL,
    target TEXT NOT NULL,
    until {real} NOT NULL,
    PRIMARY KEY (kind, target)
);
CREATE TABLE voided_games (
    game_id {bigint} PRIMARY KEY REFERENCES games(id),
    voided_at {real} NOT NULL
);
CREATE TABLE audit (
    id {id},
    at {real} NOT NULL,
    admin TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    reason TEXT NOT NULL,
    details TEXT NOT NULL
);
"""


@dataclass(frozen=True, slots=True)
class Dialect:
    """What one database's SQL says differently from the other's."""

    mark: str  # the parameter marker its driver takes
    types: Mapping[str, str]  # SCHEMA's {names}
    board: str  # the leaderboard's order after the pool (the ratings_board index's columns, so pages walk it)

    def schema(self) -> list[str]:
        """SCHEMA's statements in this dialect."""
        script = SCHEMA.format(board=self.board, **self.types)
        return [statement.strip() for statement in script.split(";") if statement.strip()]


TYPES = {  # SCHEMA's {names}: (SQLite, PostgreSQL). SQLite's are those its migrations gave each column.
    "bool": ("INTEGER", "BOOLEAN"),
    "false": ("0", "FALSE"),
    "real": ("REAL", "DOUBLE PRECISION"),
    "bigint": ("INTEGER", "BIGINT"),
    "id": ("INTEGER PRIMARY KEY AUTOINCREMENT", "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"),
}
SQLITE = Dialect("?", {name: types[0] for name, types in TYPES.items()}, "rating DESC")
POSTGRES = Dialect("%s", {name: types[1] for name, types in TYPES.items()}, "rating DESC, player")
"""PostgreSQL's leaderboard breaks rating ties by player (its index has the player; SQLite's files never had)."""


class Cursor(Protocol):
    """The part of a DB-API cursor the store uses (sqlite3's and psycopg's both have it)."""

    @property
    def rowcount(self) -> int: ...

    def execute(self, sql: str, args: Sequence[Any] = ..., /) -> Any: ...

    def executemany(self, sql: str, args: Iterable[Sequence[Any]], /) -> Any: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Session:
    """A backend's cursor taking the store's statements: their `?` markers become the dialect's (no statement has a
    `?` or `%` of its own)."""

    __slots__ = ("cursor", "mark")

    def __init__(self, cursor: Cursor, mark: str) -> None:
        self.cursor = cursor
        self.mark = mark

    def _sql(self, sql: str) -> str:
        """The statement with the dialect's markers."""
        return sql if self.mark == "?" else sql.replace("?", self.mark)

    def execute(self, sql: str, args: Sequence[Any] = ()) -> Session:
        """Run one statement; its rows are read with fetchone / fetchall."""
        self.cursor.execute(self._sql(sql), args)
        return self

    def executemany(self, sql: str, args: Iterable[Sequence[Any]]) -> None:
        """Run one statement once per argument tuple."""
        self.cursor.executemany(self._sql(sql), args)

    def fetchone(self) -> tuple[Any, ...] | None:
        """The next row of the last statement, or None."""
        row: tuple[Any, ...] | None = self.cursor.fetchone()
        return row

    def fetchall(self) -> list[tuple[Any, ...]]:
        """The remaining rows of the last statement."""
        return list(self.cursor.fetchall())

    @property
    def rowcount(self) -> int:
        """How many rows the last statement changed."""
        return self.cursor.rowcount


ROOM_COLUMNS = "code, game, options, room_options, host_name, private, game_no, host_token_hash"
RATING_COLUMNS = "player, pool, name, kind, rating, rd, vol, games, wins, draws, losses, rated_at"
PRIVATE_SEEN_BY = "(g.private = FALSE OR g.id IN (SELECT game_id FROM game_players WHERE token_hash = ?))"


class SqlStore(ABC):
    """The records written and read back in SQL; a subclass connects to its database (SQLite, PostgreSQL).

    `write` is one transaction (all of the batch or none of it), and its `fences` are checked inside that transaction
    against the epochs `claim_room` and `claim_tournament` raise.
    """

    dialect: Dialect

    # -- what a backend provides ----------------------------------------------------------------------------------
    @abstractmethod
    def _session(self, transaction: bool = False, snapshot: bool = False) -> AbstractContextManager[Session]:
        """A session on the database: in one transaction that commits at the end if `transaction` (a write); a
        consistent read of several statements if `snapshot` and the backend can give one cheaply."""

    @abstractmethod
    def _check_fences(self, db: Session, fences: Mapping[str, int]) -> None:
        """Raise `Fenced` if a fenced room or tournament is stored under another epoch, in `write`'s transaction,
        so that no claim can come between the check and the batch's writes."""

    @abstractmethod
    def close(self) -> None:
        """Close the connection."""

    # -- writing --------------------------------------------------------------------------------------------------
    def write(self, records: list[Record], fences: Mapping[str, int] | None = None) -> None:
        """Store a batch of records in one transaction.

        `fences` maps room codes (and `tournament_fence` keys) to the owner epoch the writer holds (a cluster node;
        the single process passes none): if any of them is stored with another epoch, the whole batch is refused
        with `Fenced` and nothing is written. A room not stored yet passes (its `RoomSaved` is in the batch).
        """
        if not records:
            return
        now = time.time()
        with self._session(transaction=True) as db:
            if fences:
                self._check_fences(db, fences)
            for record in records:
                self._write_one(db, record, now)

    def claim_room(self, code: str) -> int | None:
        """Take a stored, open room over: raise its owner epoch and return the new one (None: no such open room).

        Every write of an earlier owner that names this room in its fences is refused from now on (a batch that
        holds the room's lock finishes first; the claim waits for it).
        """
        with self._session(transaction=True) as db:
            row = db.execute(
                "UPDATE rooms SET owner_epoch = owner_epoch + 1 WHERE code = ? AND closed = FALSE"
                " RETURNING owner_epoch",
                (code,),
            ).fetchone()
        return None if row is None else int(row[0])

    def claim_tournament(self, tournament: str) -> tuple[int, dict[str, Any]] | None:
        """Take a stored tournament over: raise its owner epoch; returns the new epoch and its stored state (None:
        no such tournament, or its state is not a map). Writes fenced with an older epoch are refused from now on."""
        with self._session(transaction=True) as db:
            row = db.execute(
                "UPDATE tournaments SET owner_epoch = owner_epoch + 1 WHERE id = ? RETURNING owner_epoch, data",
                (tournament,),
            ).fetchone()
            claimed = claimed_tournament(row)
            if claimed is not None:
                with_games(db, [claimed[1]])
        return claimed

    def _write_one(self, db: Session, record: Record, now: float) -> None:
        """Apply one record to the tables."""
        match record:
            case RoomSaved():
                self._write_room(db, record, now)
            case SeatSaved():
                db.execute(
                    "INSERT INTO seats (room, seat, name, token_hash, ai_level, ai_bot, bot)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (room, seat) DO UPDATE SET name = excluded.name,"
                    " token_hash = excluded.token_hash, ai_level = excluded.ai_level, ai_bot = excluded.ai_bot,"
                    " bot = excluded.bot",
                    (
                        record.code,
                        record.seat,
                        record.name,
                        record.token_hash,
                        record.ai_level,
                        record.ai_bot,
                        record.bot,
                    ),
                )
            case NameClaimed():
                db.execute(
                    # A claim moves to a public key once (its key hash goes with it); a public key never changes.
                    "INSERT INTO names (name_key, name, key_hash, bot, claimed_at, public_key)"
                    " VALUES (?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT (name_key) DO UPDATE SET bot = names.bot OR excluded.bot,"
                    " key_hash = CASE WHEN names.public_key IS NULL AND excluded.public_key IS NOT NULL"
                    " THEN excluded.key_hash ELSE names.key_hash END,"
                    " public_key = COALESCE(names.public_key, excluded.public_key)",
                    (record.name_key, record.name, record.key_hash, record.bot, now, record.public_key or None),
                )
            case GameStarted():
                db.execute("UPDATE rooms SET game_no = ? WHERE code = ?", (record.game_no, record.code))
                db.execute("DELETE FROM moves WHERE room = ? AND game_no = ?", (record.code, record.game_no))
                db.execute("DELETE FROM clocks WHERE room = ? AND game_no = ?", (record.code, record.game_no))
            case MoveRecorded():
                db.execute(
                    "INSERT INTO moves (room, game_no, ply, move, at, spent_ms) VALUES (?, ?, ?, ?, ?, ?)",
                    (record.code, record.game_no, record.ply, record.move, now, record.spent_ms),
                )
            case ClockSaved():
                db.execute(
                    "INSERT INTO clocks (room, game_no, ply, remaining) VALUES (?, ?, ?, ?)"
                    " ON CONFLICT (room, game_no, ply) DO UPDATE SET remaining = excluded.remaining",
                    (record.code, record.game_no, record.ply, json.dumps(record.remaining)),
                )
            case MovesUndone():
                args = (record.code, record.game_no, record.ply)
                db.execute("DELETE FROM moves WHERE room = ? AND game_no = ? AND ply >= ?", args)
                db.execute("DELETE FROM clocks WHERE room = ? AND game_no = ? AND ply > ?", args)
            case GameFinished():
                self._write_game(db, record, now)
            case TournamentSaved():
                self._write_tournament(db, record, now)
            case AnalysisSaved():
                # One analysis per game ever: a second one (two nodes of a cluster racing) leaves the first.
                db.execute(
                    "INSERT INTO analyses (game_id, data, created_at) VALUES (?, ?, ?)"
                    " ON CONFLICT (game_id) DO NOTHING",
                    (record.game_id, json.dumps(record.analysis), now),
                )
            case RoomClosed():
                db.execute("UPDATE rooms SET closed = TRUE, closed_at = ? WHERE code = ?", (now, record.code))
                for table in ("moves", "clocks", "seats"):
                    db.execute(f"DELETE FROM {table} WHERE room = ?", (record.code,))
            case Moderated():
                self._write_moderated(db, record)

    @staticmethod
    def _write_tournament(db: Session, record: TournamentSaved, now: float) -> None:
        """A tournament's header, and its games changed (rows of their own, so a game's end writes one game, not all
        of them); rows past its game count go (an arena forgets a game whose room was lost)."""
        db.execute(
            "INSERT INTO tournaments (id, data, finished, created_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (id) DO UPDATE SET data = excluded.data, finished = excluded.finished",
            (record.id, json.dumps(record.data), record.finished, now),
        )
        if record.count is None:
            return
        db.executemany(
            "INSERT INTO tournament_games (tournament, idx, data) VALUES (?, ?, ?)"
            " ON CONFLICT (tournament, idx) DO UPDATE SET data = excluded.data",
            [(record.id, index, json.dumps(game)) for index, game in record.games],
        )
        db.execute("DELETE FROM tournament_games WHERE tournament = ? AND idx >= ?", (record.id, record.count))

    @staticmethod
    def _write_room(db: Session, record: RoomSaved, now: float) -> None:
        """A room's row; a room saved again under its code starts over (a new room: game 0, open, epoch 0)."""
        db.execute(
            "INSERT INTO rooms (code, game, options, room_options, host_name, private, created_at, host_token_hash)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (code) DO UPDATE SET game = excluded.game,"
            " options = excluded.options, room_options = excluded.room_options, host_name = excluded.host_name,"
            " private = excluded.private, created_at = excluded.created_at, host_token_hash = excluded.host_token_hash,"
            " game_no = 0, closed = FALSE, closed_at = NULL, owner_epoch = 0",
            (
                record.code,
                record.game,
                json.dumps(record.options),
                json.dumps(record.room_options),
                record.host_name,
                record.private,
                now,
                record.host_token_hash,
            ),
        )

    def _write_game(self, db: Session, record: GameFinished, now: float) -> None:
        """A finished game's history row, its players by seat, and a rated game's rating changes."""
        row = db.execute(
            "INSERT INTO games (room, game_no, game, options, players, result, reason, moves, transcript, finished_at,"
            " clock, private) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (
                record.code,
                record.game_no,
                record.game,
                json.dumps(record.options),
                json.dumps(record.players),
                json.dumps(record.result),
                record.result.get("reason", ""),
                json.dumps(record.moves),
                record.transcript,
                now,
                json.dumps(record.clock) if record.clock is not None else None,
                record.private,
            ),
        ).fetchone()
        assert row is not None  # RETURNING gives the inserted row
        game_id = int(row[0])
        hashes = dict(enumerate(record.token_hashes))
        db.executemany(
            "INSERT INTO game_players (game_id, seat, name, token_hash) VALUES (?, ?, ?, ?)",
            [
                (game_id, p.get("seat", n), p.get("name"), hashes.get(p.get("seat", n)))
                for n, p in enumerate(record.players)
            ],
        )
        self._write_ratings(db, game_id, record.ratings)

    @staticmethod
    def _write_ratings(db: Session, game_id: int, ratings: tuple[SeatRated, ...]) -> None:
        """A rated game's new ratings and its changes per seat (inside the game's transaction)."""
        for r in ratings:
            win, draw, loss = (int(r.outcome == o) for o in ("win", "draw", "loss"))
            db.execute(
                f"INSERT INTO ratings ({RATING_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)"
                " ON CONFLICT (player, pool) DO UPDATE SET name = excluded.name, kind = excluded.kind,"
                " rating = excluded.rating, rd = excluded.rd, vol = excluded.vol, games = ratings.games + 1,"
                " wins = ratings.wins + excluded.wins, draws = ratings.draws + excluded.draws,"
                " losses = ratings.losses + excluded.losses, rated_at = excluded.rated_at",
                (r.player, r.pool, r.name, r.kind, *r.after, win, draw, loss, r.at),
            )
            db.execute(
                "INSERT INTO rating_changes (game_id, seat, player, pool, before, after, rd_before, rd_after, outcome)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (game_id, r.seat, r.player, r.pool, r.before[0], r.after[0], r.before[1], r.after[1], r.outcome),
            )

    def _write_moderated(self, db: Session, record: Moderated) -> None:
        """An admin's action in the audit log, and the ban or mute it sets or lifts, or the rated games it voids
        (server/moderation.py)."""
        details = record.details
        if record.action == VOID:
            player, since, until = str(details["player"]), float(details["since"]), float(details["until"])
            details = {**details, "games": self._void(db, player, since, until, record.at)}
        db.execute(
            "INSERT INTO audit (at, admin, action, target, reason, details) VALUES (?, ?, ?, ?, ?, ?)",
            (record.at, record.admin, record.action, record.target, record.reason, json.dumps(details)),
        )
        if record.kind is None or record.key is None:
            return
        if record.until is None:
            db.execute("DELETE FROM sanctions WHERE kind = ? AND target = ?", (record.kind, record.key))
            return
        db.execute(
            "INSERT INTO sanctions (kind, target, until) VALUES (?, ?, ?)"
            " ON CONFLICT (kind, target) DO UPDATE SET until = excluded.until",
            (record.kind, record.key, record.until),
        )

    @staticmethod
    def _void(db: Session, player: str, since: float, until: float, at: float) -> int:
        """Void `player`'s rated games that finished in [since, until] (not voided before); returns how many.

        Each game stops counting for everyone in it: it leaves their game counts, and its rating change is undone
        for the voided player and refunded to each opponent who lost points (lichess's refund: an opponent who
        gained points from the game keeps them). RD and volatility stay as they are; later games are not replayed.
        """
        games = [
            int(game_id)
            for (game_id,) in db.execute(
                "SELECT rc.game_id FROM rating_changes AS rc JOIN games AS g ON g.id = rc.game_id"
                " WHERE rc.player = ? AND g.finished_at >= ? AND g.finished_at <= ?"
                " AND rc.game_id NOT IN (SELECT game_id FROM voided_games) ORDER BY rc.game_id",
                (player, since, until),
            ).fetchall()
        ]
        for game_id in games:
            seats = db.execute(
                "SELECT player, pool, before, after, outcome FROM rating_changes WHERE game_id = ?", (game_id,)
            ).fetchall()
            for who, pool, before, after, outcome in seats:
                refund = before - after if who == player or after < before else 0.0
                win, draw, loss = (int(outcome == o) for o in ("win", "draw", "loss"))
                db.execute(
                    "UPDATE ratings SET rating = rating + ?, games = games - 1, wins = wins - ?, draws = draws - ?,"
                    " losses = losses - ? WHERE player = ? AND pool = ?",
                    (refund, win, draw, loss, who, pool),
                )
            db.execute("INSERT INTO voided_games (game_id, voided_at) VALUES (?, ?)", (game_id, at))
        return len(games)

    def purge_closed(self, before: float) -> int:
        """Delete the rows of rooms closed before `before` (a time.time()); their finished games stay."""
        with self._session(transaction=True) as db:
            return db.execute("DELETE FROM rooms WHERE closed = TRUE AND closed_at < ?", (before,)).rowcount

    def expire_claims(self, before: float) -> list[str]:
        """Delete the claims made before `before` (a time.time()) whose name was never played under: in no finished
        game and no seat of an open room. Their name keys, as stored."""
        unused = (
            "claimed_at < ? AND NOT EXISTS (SELECT 1 FROM game_players WHERE game_players.name = names.name)"
            " AND NOT EXISTS (SELECT 1 FROM seats WHERE seats.name = names.name)"
        )
        with self._session(transaction=True) as db:
            keys = [
                str(row[0]) for row in db.execute(f"SELECT name_key FROM names WHERE {unused}", (before,)).fetchall()
            ]
            db.execute(f"DELETE FROM names WHERE {unused}", (before,))
        return keys

    # -- reading --------------------------------------------------------------------------------------------------
    def unfinished_rooms(self, skipped: list[tuple[str, str]] | None = None) -> list[StoredRoom]:
        """Every room not closed, with its seats and the move log of its current game.

        A room whose rows cannot be read (bad JSON, a broken value) is left out and added to `skipped` as
        (code, reason); a database that cannot be read at all raises StoreError.
        """
        rooms = []
        with self._session(snapshot=True) as db:
            rows = db.execute(f"SELECT {ROOM_COLUMNS} FROM rooms WHERE closed = FALSE ORDER BY created_at, code")
            for row in rows.fetchall():
                try:
                    rooms.append(self._stored_room(db, row))
                except (ValueError, TypeError, IndexError) as exc:
                    if skipped is not None:
                        skipped.append((str(row[0]), f"{type(exc).__name__}: {exc}"))
        return rooms

    def open_room(self, code: str) -> StoredRoom | None:
        """One open room read back, as `unfinished_rooms` reads each (None if it is closed or unknown).

        A cluster node that claims a room (server/cluster) restores it from this. StoreError if its rows are broken.
        """
        with self._session(snapshot=True) as db:
            row = db.execute(f"SELECT {ROOM_COLUMNS} FROM rooms WHERE code = ? AND closed = FALSE", (code,)).fetchone()
            try:
                return None if row is None else self._stored_room(db, row)
            except (ValueError, TypeError, IndexError) as exc:
                raise StoreError(f"room {code} cannot be read back: {type(exc).__name__}: {exc}") from None

    @staticmethod
    def _stored_room(db: Session, row: tuple[Any, ...]) -> StoredRoom:
        """One open room's rows read back (ValueError / TypeError if a stored value is broken)."""
        options, room_options = json.loads(row[2]), json.loads(row[3])
        if not isinstance(options, dict) or not isinstance(room_options, dict):
            raise ValueError("options are not a map")
        room = StoredRoom(row[0], row[1], options, room_options, row[4], bool(row[5]), int(row[6]), row[7])
        room.seats = [
            SeatSaved(room.code, seat, name, token_hash, ai_level, ai_bot, bool(bot))
            for seat, name, token_hash, ai_level, ai_bot, bot in db.execute(
                "SELECT seat, name, token_hash, ai_level, ai_bot, bot FROM seats WHERE room = ? ORDER BY seat",
                (room.code,),
            ).fetchall()
        ]
        current = (room.code, room.game_no)
        rows = db.execute("SELECT move, spent_ms FROM moves WHERE room = ? AND game_no = ? ORDER BY ply", current)
        moves = rows.fetchall()
        room.moves = [m for m, _ in moves]
        room.move_ms = [int(ms) for _, ms in moves if ms is not None]
        clocks = db.execute("SELECT remaining FROM clocks WHERE room = ? AND game_no = ? ORDER BY ply", current)
        room.clocks = [json.loads(times) for (times,) in clocks.fetchall()]
        done = db.execute(
            "SELECT result FROM games WHERE room = ? AND game_no = ? ORDER BY id LIMIT 1", current
        ).fetchone()
        room.result = json.loads(done[0]) if done else None
        if room.result is not None and not isinstance(room.result, dict):
            raise ValueError("the stored result is not a map")
        return room

    def claimed_names(self) -> list[NameClaimed]:
        """Every claimed name, for the lobby to load at start-up (StoreError if they cannot be read)."""
        with self._session() as db:
            rows = db.execute(
                "SELECT name_key, name, key_hash, bot, public_key FROM names ORDER BY claimed_at, name_key"
            ).fetchall()
        return [
            NameClaimed(str(key), str(name), str(key_hash), bool(bot), str(public_key or ""))
            for key, name, key_hash, bot, public_key in rows
        ]

    def admins(self) -> list[tuple[str, str]]:
        """The server's admins as (name key, name), by name key (StoreError if they cannot be read)."""
        with self._session() as db:
            rows = db.execute("SELECT name_key, name FROM admins ORDER BY name_key").fetchall()
        return [(str(key), str(name)) for key, name in rows]

    def set_admin(self, name_key: str, name: str, admin: bool) -> bool:
        """Make `name_key` an admin (shown as `name`), or no longer one; False if nothing changed."""
        with self._session(transaction=True) as db:
            if not admin:
                return db.execute("DELETE FROM admins WHERE name_key = ?", (name_key,)).rowcount > 0
            return (
                db.execute(
                    "INSERT INTO admins (name_key, name, added_at) VALUES (?, ?, ?) ON CONFLICT (name_key) DO NOTHING",
                    (name_key, name, time.time()),
                ).rowcount
                > 0
            )

    def sanctions(self, now: float) -> list[Sanction]:
        """The bans and mutes still running at `now` (wall-clock seconds), for the lobby to load at start-up."""
        with self._session() as db:
            rows = db.execute(
                "SELECT kind, target, until FROM sanctions WHERE until > ? ORDER BY kind, target", (now,)
            ).fetchall()
        return [Sanction(str(kind), str(key), float(until)) for kind, key, until in rows]

    def audit(self, limit: int = 100) -> list[dict[str, Any]]:
        """The latest `limit` admin actions, oldest first: when, who, what, on whom, why, and the details."""
        with self._session() as db:
            rows = db.execute(
                "SELECT id, at, admin, action, target, reason, details FROM"
                " (SELECT * FROM audit ORDER BY id DESC LIMIT ?) AS latest ORDER BY id",
                (limit,),
            ).fetchall()
        keys = ("id", "at", "admin", "action", "target", "reason")
        return [dict(zip(keys, row[:6], strict=True), details=json.loads(row[6])) for row in rows]

    def ratings(self) -> list[StoredRating]:
        """Every stored rating, for the rating book to load at start-up (StoreError if they cannot be read)."""
        with self._session() as db:
            rows = db.execute(f"SELECT {RATING_COLUMNS} FROM ratings").fetchall()
        return [StoredRating(*row) for row in rows]

    def tournaments(self, limit: int = 200) -> list[dict[str, Any]]:
        """Every unfinished tournament and the latest `limit` finished ones, oldest first (StoreError if they cannot
        be read): a restart brings back every tournament still to be played, however many finished since."""
        with self._session() as db:
            rows = db.execute(
                "SELECT data FROM (SELECT data, created_at, id FROM tournaments WHERE NOT finished"
                " UNION ALL SELECT data, created_at, id FROM (SELECT data, created_at, id FROM tournaments"
                " WHERE finished ORDER BY created_at DESC, id DESC LIMIT ?) AS done) AS kept ORDER BY created_at, id",
                (limit,),
            ).fetchall()
            return with_games(db, tournament_states(rows))

    def leaderboard(self, pool: str, offset: int, limit: int) -> tuple[int, list[dict[str, Any]]]:
        """One page of a pool's players by rating, best first: (how many the pool has, the page's entries).

        The page walks the (pool, rating) index from `offset`, which callers bound (MAX_LEADERBOARD_OFFSET).
        """
        with self._session(snapshot=True) as db:
            counted = db.execute("SELECT COUNT(*) FROM ratings WHERE pool = ?", (pool,)).fetchone()
            rows = db.execute(
                "SELECT name, kind, rating, rd, vol, rated_at, games, wins, draws, losses FROM ratings WHERE pool = ?"
                f" ORDER BY {self.dialect.board} LIMIT ? OFFSET ?",
                (pool, limit, offset),
            ).fetchall()
        total = int(counted[0]) if counted else 0
        return total, leader_entries(offset, rows)

    def profile(self, player: str, viewer: str | None = None) -> tuple[list[StoredRating], list[dict[str, Any]]]:
        """A player's ratings in every pool and their latest rated games; with `viewer`, private rooms' games are
        left out of the game counts and the list unless that person played them (the ratings still include them)."""
        where, args = "", [player]
        if viewer is not None:
            where = f" AND {PRIVATE_SEEN_BY}"
            args.append(viewer)
        with self._session(snapshot=True) as db:
            ratings = db.execute(
                f"SELECT {RATING_COLUMNS} FROM ratings WHERE player = ? ORDER BY games DESC, pool", (player,)
            ).fetchall()
            recent = db.execute(
                "SELECT rc.game_id, rc.pool, rc.seat, rc.before, rc.after, rc.outcome, g.players, g.finished_at"
                " FROM rating_changes AS rc JOIN games AS g ON g.id = rc.game_id WHERE rc.player = ?"
                " AND rc.game_id NOT IN (SELECT game_id FROM voided_games)"
                + where
                + f" ORDER BY rc.game_id DESC LIMIT {RECENT_RATED}",
                args,
            ).fetchall()
            hidden = (
                []
                if viewer is None
                else db.execute(
                    "SELECT rc.pool, rc.outcome, COUNT(*) FROM rating_changes AS rc"
                    " JOIN games AS g ON g.id = rc.game_id"
                    f" WHERE rc.player = ? AND NOT {PRIVATE_SEEN_BY}"
                    " AND rc.game_id NOT IN (SELECT game_id FROM voided_games) GROUP BY rc.pool, rc.outcome",
                    [player, viewer],
                ).fetchall()
            )
        return without_hidden([StoredRating(*row) for row in ratings], hidden), recent_rated(recent)

    def list_games(
        self,
        player: str | None = None,
        game: str | None = None,
        limit: int = 20,
        viewer: str | None = None,
        room: str | None = None,
    ) -> list[dict[str, Any]]:
        """Finished games, newest first, optionally of one game kind or with one player (by name).

        With `viewer` (a token hash), games of private rooms are listed only if that person played them. The
        player filter goes through the game_players index, so its cost follows `limit`, not the history's size.
        """
        sql, args = list_games_query(player, game, limit, viewer, room)
        with self._session() as db:
            rows = db.execute(sql, args).fetchall()
        return game_summaries(rows)

    def get_game(self, game_id: int, viewer: str | None = None) -> dict[str, Any] | None:
        """One finished game as a replay record (docs/replay.md), or None (also for a private room's game that
        `viewer`, a token hash, did not play; without `viewer` every game is readable, as for `export`)."""
        if not 0 <= game_id < 2**63:  # ids are 64-bit in both: a larger one cannot exist (and would not bind)
            return None
        sql = "SELECT g.id, g.game, g.options, g.players, g.result, g.moves, g.transcript, g.finished_at, g.clock"
        sql += " FROM games AS g WHERE g.id = ?"
        args: list[Any] = [game_id]
        if viewer is not None:
            sql += f" AND {PRIVATE_SEEN_BY}"
            args.append(viewer)
        with self._session() as db:
            row = db.execute(sql, args).fetchone()
        return None if row is None else replay_record(row)

    def analysis(self, game_id: int) -> dict[str, Any] | None:
        """A finished game's stored review (docs/review.md), or None if it has none yet. Who may see it is the
        caller's check (`get_game` with the viewer)."""
        if not 0 <= game_id < 2**63:
            return None
        with self._session() as db:
            row = db.execute("SELECT data FROM analyses WHERE game_id = ?", (game_id,)).fetchone()
        return None if row is None else dict(json.loads(row[0]))


# -- rows as the server reads them ------------------------------------------------------------------------------------
def tournament_states(rows: Iterable[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """The stored tournament states that parse as maps (a broken one is left out)."""
    found = []
    for (data,) in rows:
        try:
            value = json.loads(data)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def with_games(db: Session, states: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Stored tournament headers with their games (`games`, read from their rows in order) put back; a state stored
    whole (no `game_count`: written before games had rows) is left as it is."""
    for state in states:
        if "game_count" in state:
            rows = db.execute(
                "SELECT data FROM tournament_games WHERE tournament = ? ORDER BY idx", (state.get("id"),)
            ).fetchall()
            state["games"] = [json.loads(data) for (data,) in rows]
    return states


def claimed_tournament(row: tuple[Any, ...] | None) -> tuple[int, dict[str, Any]] | None:
    """A `claim_tournament` row (new epoch, stored state) as returned: None if no such tournament or no map."""
    if row is None:
        return None
    states = tournament_states([(row[1],)])
    return (int(row[0]), states[0]) if states else None


def leader_entries(offset: int, rows: Iterable[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """A leaderboard page's rows (name, kind, rating, rd, vol, rated_at, games, wins, draws, losses), ranked from
    `offset` (the RD as stored: the lobby grows it for the time since `rated_at`)."""
    return [
        {
            "rank": offset + n + 1,
            "name": name,
            "kind": kind,
            "rating": round(rating, 2),
            "rd": rd,
            "vol": vol,
            "rated_at": rated_at,
            "games": games,
            "wins": wins,
            "draws": draws,
            "losses": losses,
        }
        for n, (name, kind, rating, rd, vol, rated_at, games, wins, draws, losses) in enumerate(rows)
    ]


def without_hidden(ratings: list[StoredRating], hidden: Iterable[tuple[str, str, int]]) -> list[StoredRating]:
    """The ratings with the games a viewer may not see taken out of each pool's counts (`hidden`: pool, outcome,
    how many)."""
    by_pool = {r.pool: r for r in ratings}
    for pool, outcome, count in hidden:
        r = by_pool.get(pool)
        if r is not None and outcome in ("win", "draw", "loss"):
            field = {"win": "wins", "draw": "draws", "loss": "losses"}[outcome]
            by_pool[pool] = replace(r, games=r.games - count, **{field: getattr(r, field) - count})
    return [by_pool[r.pool] for r in ratings]


def recent_rated(rows: Iterable[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """A profile's latest rated games (game id, pool, seat, before, after, outcome, players, finished at)."""
    return [
        {
            "game_id": game_id,
            "pool": pool,
            "seat": seat,
            "before": round(before, 2),
            "after": round(after, 2),
            "outcome": outcome,
            "players": json.loads(players),
            "finished_at": finished_at,
        }
        for game_id, pool, seat, before, after, outcome, players, finished_at in rows
    ]


def game_summaries(rows: Iterable[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """`list_games` rows (id, game, players, result, finished at) as the `games` reply lists them."""
    return [
        {"game_id": r[0], "game": r[1], "players": json.loads(r[2]), "result": json.loads(r[3]), "finished_at": r[4]}
        for r in rows
    ]


def replay_record(row: tuple[Any, ...]) -> dict[str, Any]:
    """A finished game's row (id, game, options, players, result, moves, transcript, finished at, clock) as a replay
    record (docs/replay.md)."""
    record = {
        "format": "gamenight-replay",
        "version": 1,
        "game_id": row[0],
        "game": row[1],
        "options": json.loads(row[2]),
        "players": json.loads(row[3]),
        "result": json.loads(row[4]),
        "moves": json.loads(row[5]),
        "transcript": row[6],
        "finished_at": row[7],
    }
    if row[8] is not None:
        record["clock"] = json.loads(row[8])
    return record


def list_games_query(
    player: str | None, game: str | None, limit: int, viewer: str | None, room: str | None
) -> tuple[str, list[Any]]:
    """The `list_games` query and its arguments. With `player` it starts from the game_players index, so its cost
    follows `limit`, not the history's size."""
    where: list[str] = ["1 = 1"]
    args: list[Any] = []
    if viewer is not None:
        where.append(PRIVATE_SEEN_BY)
        args.append(viewer)
    if game is not None:
        where.append("g.game = ?")
        args.append(game)
    if room is not None:  # through the games_by_room index
        where.append("g.room = ?")
        args.append(room.strip().upper()[:16])
    columns = "SELECT g.id, g.game, g.players, g.result, g.finished_at"
    if player is not None:
        sql = (
            f"{columns} FROM game_players AS gp JOIN games AS g ON g.id = gp.game_id WHERE gp.name = ? AND "
            + " AND ".join(where)
            + " ORDER BY gp.game_id DESC LIMIT ?"
        )
        args.insert(0, player)
    else:
        sql = f"{columns} FROM games AS g WHERE " + " AND ".join(where) + " ORDER BY g.id DESC LIMIT ?"
    args.append(max(1, min(limit, 200)))
    return sql, args


def check_version(version: int, latest: int, shown: str) -> int:
    """A stored schema version, or StoreError if a newer gamenight wrote the database."""
    if version > latest:
        raise StoreError(
            f"{shown} was written by a newer gamenight (schema {version}; this one knows {latest}); upgrade gamenight"
            " or use another --db"
        )
    return version
