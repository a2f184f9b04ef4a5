"""Persistence: rooms, seats, every applied move, and finished games, in SQLite (`Store`) or PostgreSQL.

Rooms describe what happened as `Record` values in their outbox; the network layer hands them to
`Store.write` before it sends the matching broadcast, so a move a player has seen is always on disk.
On start the server reads `unfinished_rooms()` back and replays each move log through the rules, so a
restored position is exactly the one that was played — nothing derived is stored.

The schema is versioned; `MIGRATIONS[n]` upgrades version n to n+1. A database written by a newer
gamenight is refused rather than guessed at.

`StoreBackend` is the interface the server uses; `open_store` picks the backend from `--db`: a
`postgresql://` URL opens `PgStore` (server/store_pg.py, a store every node of a cluster shares; psycopg is
imported only then), anything else the SQLite file as before.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

SCHEMA_VERSION = 9
BUSY_TIMEOUT_MS = 2000  # how long a connection waits for another process's write lock on the file
WAL_RETRY_S = 0.005  # how often the switch to WAL mode is tried again while another process opens the file

MIGRATIONS: dict[int, str] = {
    0: """
    CREATE TABLE rooms (
        code TEXT PRIMARY KEY,
        game TEXT NOT NULL,
        options TEXT NOT NULL,
        room_options TEXT NOT NULL,
        host_name TEXT NOT NULL,
        private INTEGER NOT NULL,
        created_at REAL NOT NULL,
        game_no INTEGER NOT NULL DEFAULT 0,
        closed INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE seats (
        room TEXT NOT NULL REFERENCES rooms(code),
        seat INTEGER NOT NULL,
        name TEXT,
        token_hash TEXT,
        ai_level INTEGER,
        ai_bot TEXT,
        PRIMARY KEY (room, seat)
    );
    CREATE TABLE moves (
        room TEXT NOT NULL REFERENCES rooms(code),
        game_no INTEGER NOT NULL,
        ply INTEGER NOT NULL,
        move TEXT NOT NULL,
        at REAL NOT NULL,
        PRIMARY KEY (room, game_no, ply)
    );
    CREATE TABLE games (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        room TEXT NOT NULL,
        game_no INTEGER NOT NULL,
        game TEXT NOT NULL,
        options TEXT NOT NULL,
        players TEXT NOT NULL,
        result TEXT NOT NULL,
        reason TEXT NOT NULL,
        moves TEXT NOT NULL,
        transcript TEXT NOT NULL,
        finished_at REAL NOT NULL
    );
    CREATE INDEX games_by_game ON games(game, id);
    """,
    # The host's token hash, so the host keeps the room's controls after a restart (NULL for older rooms).
    1: "ALTER TABLE rooms ADD COLUMN host_token_hash TEXT",
    # Clocks: each move's time spent, each position's times (for restarts and takebacks), the replay's timing.
    2: """
    ALTER TABLE moves ADD COLUMN spent_ms INTEGER;
    CREATE TABLE clocks (
        room TEXT NOT NULL REFERENCES rooms(code),
        game_no INTEGER NOT NULL,
        ply INTEGER NOT NULL,
        remaining TEXT NOT NULL,
        PRIMARY KEY (room, game_no, ply)
    );
    ALTER TABLE games ADD COLUMN clock TEXT;
    """,
    # Who played each finished game, indexed by name (list_games {player}) and by token hash (who may see a
    # private room's games); games of private rooms are marked. Older private games have no token hashes, so
    # they become visible to nobody rather than to everybody.
    3: """
    ALTER TABLE games ADD COLUMN private INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE game_players (
        game_id INTEGER NOT NULL REFERENCES games(id),
        seat INTEGER NOT NULL,
        name TEXT,
        token_hash TEXT,
        PRIMARY KEY (game_id, seat)
    );
    CREATE INDEX game_players_by_name ON game_players(name, game_id);
    CREATE INDEX game_players_by_token ON game_players(token_hash, game_id);
    INSERT OR IGNORE INTO game_players (game_id, seat, name)
        SELECT games.id, json_extract(p.value, '$.seat'), json_extract(p.value, '$.name')
        FROM games, json_each(games.players) AS p WHERE json_valid(games.players);
    UPDATE games SET private = COALESCE((SELECT rooms.private FROM rooms WHERE rooms.code = games.room), 0);
    ALTER TABLE rooms ADD COLUMN closed_at REAL;
    UPDATE rooms SET closed_at = created_at WHERE closed = 1;
    CREATE INDEX rooms_closed ON rooms(closed, closed_at);
    """,
    # Player identities: each claimed name by its comparison key (server/text.py name_key), with the hash of the
    # key that claimed it and whether a bot claimed it; seats remember whether a bot holds them.
    4: """
    CREATE TABLE names (
        name_key TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        key_hash TEXT NOT NULL,
        bot INTEGER NOT NULL DEFAULT 0,
        claimed_at REAL NOT NULL
    );
    ALTER TABLE seats ADD COLUMN bot INTEGER NOT NULL DEFAULT 0;
    """,
    # Ratings (server/rated.py): each player's rating per pool (a game, or "<game>-ffa") with their record there,
    # and each rated game's change per seat; the leaderboard reads ratings by pool and rating, a profile by player.
    5: """
    CREATE TABLE ratings (
        player TEXT NOT NULL,
        pool TEXT NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        rating REAL NOT NULL,
        rd REAL NOT NULL,
        vol REAL NOT NULL,
        games INTEGER NOT NULL DEFAULT 0,
        wins INTEGER NOT NULL DEFAULT 0,
        draws INTEGER NOT NULL DEFAULT 0,
        losses INTEGER NOT NULL DEFAULT 0,
        rated_at REAL NOT NULL,
        PRIMARY KEY (player, pool)
    );
    CREATE INDEX ratings_board ON ratings(pool, rating DESC);
    CREATE TABLE rating_changes (
        game_id INTEGER NOT NULL REFERENCES games(id),
        seat INTEGER NOT NULL,
        player TEXT NOT NULL,
        pool TEXT NOT NULL,
        before REAL NOT NULL,
        after REAL NOT NULL,
        rd_before REAL NOT NULL,
        rd_after REAL NOT NULL,
        outcome TEXT NOT NULL,
        PRIMARY KEY (game_id, seat)
    );
    CREATE INDEX rating_changes_by_player ON rating_changes(player, game_id);
    """,
    # Tournaments (server/tournament_host.py): each one's whole state as JSON, rewritten on every change in the
    # transaction of the change (a game's result and the standings it makes are stored together).
    6: """
    CREATE TABLE tournaments (
        id TEXT PRIMARY KEY,
        data TEXT NOT NULL,
        finished INTEGER NOT NULL DEFAULT 0,
        created_at REAL NOT NULL
    );
    CREATE INDEX games_by_room ON games(room, game_no);
    """,
    # Fencing for a cluster of nodes sharing the database (docs/architecture.md, "A cluster"): the epoch of the
    # room's current owner. Claiming a room raises it; a write that holds an older epoch is refused whole, so a
    # node that lost a room (paused, cut off, its lease expired) can never write over the new owner's moves.
    7: "ALTER TABLE rooms ADD COLUMN owner_epoch INTEGER NOT NULL DEFAULT 0",
    # The same for tournaments (server/cluster/tours.py): the node running one claims it by raising its epoch, and
    # its writes carry the epoch as a fence (`tournament_fence`), so a node that lost a tournament cannot store it.
    8: "ALTER TABLE tournaments ADD COLUMN owner_epoch INTEGER NOT NULL DEFAULT 0",
}
TOURNAMENT_FENCE = "tournament:"
"""A `write` fence whose key starts with this names a tournament (the id follows), not a room."""


def tournament_fence(tournament: str) -> str:
    """The fence key of a tournament in `write`'s `fences` (room codes never contain a colon)."""
    return TOURNAMENT_FENCE + tournament


MAX_LEADERBOARD_OFFSET = 10_000  # a leaderboard page starts at most this far down (the index walk stays bounded)
MAX_LEADERBOARD_LIMIT = 100
RECENT_RATED = 10  # rated games a profile lists


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
    """A name was claimed (or its claim turned into a bot's): by its comparison key, with the claiming key's hash."""

    name_key: str
    name: str
    key_hash: str
    bot: bool = False


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
    """A tournament's whole state (server/tournament_host.py), stored as it is now."""

    id: str
    data: dict[str, Any]
    finished: bool = False


@dataclass(frozen=True, slots=True)
class RoomClosed:
    """A room closed; it will not be restored."""

    code: str


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
    """What the server, `export` and `calibrate` use of a store; `Store` (SQLite) and `PgStore` (PostgreSQL) have it.

    Both keep the same records with the same meaning: `write` is one transaction (all of the batch or none of
    it), and its `fences` are checked inside that transaction against the epochs `claim_room` raises.
    """

    def write(self, records: list[Record], fences: Mapping[str, int] | None = None) -> None: ...

    def claim_room(self, code: str) -> int | None: ...

    def claim_tournament(self, tournament: str) -> tuple[int, dict[str, Any]] | None: ...

    def open_room(self, code: str) -> StoredRoom | None: ...

    def unfinished_rooms(self, skipped: list[tuple[str, str]] | None = None) -> list[StoredRoom]: ...

    def purge_closed(self, before: float) -> int: ...

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

    def close(self) -> None: ...


PG_SCHEMES = ("postgresql", "postgres")


def is_postgres(target: str) -> bool:
    """Whether `--db` names a PostgreSQL database (a postgresql:// or postgres:// URL) rather than a SQLite file."""
    return target.split("://", 1)[0].lower() in PG_SCHEMES and "://" in target


def open_store(target: str) -> StoreBackend:
    """The store `--db` names: a `postgresql://` (or `postgres://`) URL opens PostgreSQL, anything else a SQLite
    file (or ":memory:"). StoreError, one line, if it cannot be used."""
    if is_postgres(target):
        from gamenight.server.store_pg import PgStore  # psycopg loads only for a PostgreSQL store

        return PgStore(target)
    return Store(target)


def shown(target: str) -> str:
    """`--db` as it may be printed or logged: a URL's password replaced by ***."""
    if not is_postgres(target):
        return target
    try:
        parts = urlsplit(target)
        if parts.password is None:
            return target
        host = parts.netloc.rsplit("@", 1)[1]
        return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))
    except ValueError:
        return target.split("://", 1)[0] + "://***"


def sql_statements(script: str) -> Iterator[str]:
    """The statements of an SQL script, one by one (`execute` runs one; `executescript` would commit first)."""
    statement = ""
    for part in script.split(";"):
        statement += part + ";"
        if sqlite3.complete_statement(statement):  # not a ";" inside a string literal
            if statement.strip() != ";":  # the rest after the last ";"
                yield statement
            statement = ""


class Store:
    """The server's SQLite database (a file, or ":memory:" for tests)."""

    def __init__(self, path: str) -> None:
        self.path = path
        try:
            self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA foreign_keys = ON")
            if path != ":memory:":
                # Another process may share the file (the history reader, cluster nodes on one machine): wait for
                # its write to finish instead of failing at once.
                self.db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                self._wal()
                # NORMAL in WAL mode survives a process crash (the case we promise); only power loss can lose the tail.
                self.db.execute("PRAGMA synchronous = NORMAL")
            self._migrate()
        except sqlite3.Error as exc:  # not a database, unreadable, read-only, a folder: one line, not a traceback
            raise StoreError(f"cannot use the database {path}: {exc}") from None

    def close(self) -> None:
        """Close the database."""
        self.db.close()

    def _wal(self) -> None:
        """Put the file in WAL mode (it stays so): readers and the writer then do not block each other.

        The switch needs the file to itself. When processes open a new file at once, SQLite refuses it at once
        ("database is locked": waiting could deadlock, so the busy timeout does not apply) to all but one; they try
        again until the first has switched, for as long as the busy timeout.
        """
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        while True:
            try:
                self.db.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if exc.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY or time.monotonic() > deadline:
                    raise
            time.sleep(WAL_RETRY_S)

    def _migrate(self) -> None:
        """Bring the schema to SCHEMA_VERSION, refusing a database from a newer version.

        Several processes may open a new file at once (cluster nodes started together, docs/cluster.md): the
        version is read again inside one BEGIN IMMEDIATE transaction, which holds the file's write lock until the
        migrations and the new version are committed, so one process migrates and the others, waiting for the lock,
        then find the version it wrote and change nothing.
        """
        if self._schema_version() == SCHEMA_VERSION:
            return  # the usual start: no write lock taken
        with self._transaction():
            version = self._schema_version()
            while version < SCHEMA_VERSION:
                for statement in sql_statements(MIGRATIONS[version]):
                    self.db.execute(statement)
                version += 1
            self.db.execute(f"PRAGMA user_version = {version}")

    def _schema_version(self) -> int:
        """The file's schema version; StoreError if a newer gamenight wrote it."""
        version = int(self.db.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} was written by a newer gamenight (schema {version}; this one knows "
                f"{SCHEMA_VERSION}); upgrade gamenight or use another --db"
            )
        return version

    # -- writing ------------------------------------------------------------------------------------------
    def write(self, records: list[Record], fences: Mapping[str, int] | None = None) -> None:
        """Store a batch of records in one transaction.

        `fences` maps room codes to the owner epoch the writer holds (a cluster node; the single process passes
        none): if any of those rooms exists with another epoch, the whole batch is refused with `Fenced` and
        nothing is written. A room not stored yet passes (its `RoomSaved` is in the batch, epoch 0).
        """
        if not records:
            return
        now = time.time()
        with self._transaction():
            for code, held in (fences or {}).items():
                if code.startswith(TOURNAMENT_FENCE):
                    row = self.db.execute(
                        "SELECT owner_epoch FROM tournaments WHERE id = ?", (code[len(TOURNAMENT_FENCE) :],)
                    ).fetchone()
                else:
                    row = self.db.execute("SELECT owner_epoch FROM rooms WHERE code = ?", (code,)).fetchone()
                if row is not None and row[0] != held:
                    raise Fenced(code, held, row[0])
            for record in records:
                self._write_one(record, now)

    def claim_room(self, code: str) -> int | None:
        """Take a stored, open room over: raise its owner epoch and return the new one (None: no such open room).

        Every write of an earlier owner that names this room in its fences is refused from now on.
        """
        with self._transaction():
            row = self.db.execute(
                "UPDATE rooms SET owner_epoch = owner_epoch + 1 WHERE code = ? AND closed = 0 RETURNING owner_epoch",
                (code,),
            ).fetchone()
        return None if row is None else int(row[0])

    def claim_tournament(self, tournament: str) -> tuple[int, dict[str, Any]] | None:
        """Take a stored tournament over: raise its owner epoch; returns the new epoch and its stored state (None:
        no such tournament, or its state is not a map). Writes fenced with an older epoch are refused from now on."""
        with self._transaction():
            row = self.db.execute(
                "UPDATE tournaments SET owner_epoch = owner_epoch + 1 WHERE id = ? RETURNING owner_epoch, data",
                (tournament,),
            ).fetchone()
        return claimed_tournament(row)

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """Run the block in BEGIN IMMEDIATE ... COMMIT; if the block or the commit fails, roll back and raise.

        IMMEDIATE takes the write lock first, so a fence check and the writes after it see the same database even
        when another process shares the file (a deferred transaction could not upgrade its read to a write).
        """
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self.db.execute("COMMIT")  # with WAL the pages reach the disk here: a full disk fails here
        except BaseException:
            if self.db.in_transaction:  # SQLite may have rolled back already (a full disk, an I/O error)
                self.db.execute("ROLLBACK")
            raise

    def _write_one(self, record: Record, now: float) -> None:
        """Apply one record to the tables."""
        db = self.db
        match record:
            case RoomSaved():
                db.execute(
                    "INSERT OR REPLACE INTO rooms (code, game, options, room_options, host_name, private,"
                    " created_at, host_token_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        record.code,
                        record.game,
                        json.dumps(record.options),
                        json.dumps(record.room_options),
                        record.host_name,
                        int(record.private),
                        now,
                        record.host_token_hash,
                    ),
                )
            case SeatSaved():
                db.execute(
                    "INSERT OR REPLACE INTO seats (room, seat, name, token_hash, ai_level, ai_bot, bot)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        record.code,
                        record.seat,
                        record.name,
                        record.token_hash,
                        record.ai_level,
                        record.ai_bot,
                        int(record.bot),
                    ),
                )
            case NameClaimed():
                db.execute(
                    "INSERT INTO names (name_key, name, key_hash, bot, claimed_at) VALUES (?, ?, ?, ?, ?)"
                    " ON CONFLICT (name_key) DO UPDATE SET bot = MAX(bot, excluded.bot)",
                    (record.name_key, record.name, record.key_hash, int(record.bot), now),
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
                    "INSERT OR REPLACE INTO clocks VALUES (?, ?, ?, ?)",
                    (record.code, record.game_no, record.ply, json.dumps(record.remaining)),
                )
            case MovesUndone():
                args = (record.code, record.game_no, record.ply)
                db.execute("DELETE FROM moves WHERE room = ? AND game_no = ? AND ply >= ?", args)
                db.execute("DELETE FROM clocks WHERE room = ? AND game_no = ? AND ply > ?", args)
            case GameFinished():
                cursor = db.execute(
                    "INSERT INTO games (room, game_no, game, options, players, result, reason, moves,"
                    " transcript, finished_at, clock, private) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                        int(record.private),
                    ),
                )
                hashes = dict(enumerate(record.token_hashes))
                db.executemany(
                    "INSERT INTO game_players (game_id, seat, name, token_hash) VALUES (?, ?, ?, ?)",
                    [
                        (cursor.lastrowid, p.get("seat", n), p.get("name"), hashes.get(p.get("seat", n)))
                        for n, p in enumerate(record.players)
                    ],
                )
                if record.ratings:
                    self._write_ratings(cursor.lastrowid, record.ratings)
            case TournamentSaved():
                db.execute(
                    "INSERT INTO tournaments (id, data, finished, created_at) VALUES (?, ?, ?, ?)"
                    " ON CONFLICT (id) DO UPDATE SET data = excluded.data, finished = excluded.finished",
                    (record.id, json.dumps(record.data), int(record.finished), now),
                )
            case RoomClosed():
                db.execute("UPDATE rooms SET closed = 1, closed_at = ? WHERE code = ?", (now, record.code))
                db.execute("DELETE FROM moves WHERE room = ?", (record.code,))
                db.execute("DELETE FROM clocks WHERE room = ?", (record.code,))
                db.execute("DELETE FROM seats WHERE room = ?", (record.code,))

    def _write_ratings(self, game_id: int | None, ratings: tuple[SeatRated, ...]) -> None:
        """A rated game's new ratings and its changes per seat (inside the game's transaction)."""
        for r in ratings:
            win, draw, loss = (int(r.outcome == o) for o in ("win", "draw", "loss"))
            self.db.execute(
                "INSERT INTO ratings (player, pool, name, kind, rating, rd, vol, games, wins, draws, losses, rated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?) ON CONFLICT (player, pool) DO UPDATE SET"
                " name = excluded.name, kind = excluded.kind, rating = excluded.rating, rd = excluded.rd,"
                " vol = excluded.vol, games = games + 1, wins = wins + excluded.wins,"
                " draws = draws + excluded.draws, losses = losses + excluded.losses, rated_at = excluded.rated_at",
                (r.player, r.pool, r.name, r.kind, *r.after, win, draw, loss, r.at),
            )
            self.db.execute(
                "INSERT INTO rating_changes (game_id, seat, player, pool, before, after, rd_before, rd_after, outcome)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (game_id, r.seat, r.player, r.pool, r.before[0], r.after[0], r.before[1], r.after[1], r.outcome),
            )

    def purge_closed(self, before: float) -> int:
        """Delete the rows of rooms closed before `before` (a time.time()); their finished games stay."""
        with self._transaction():
            cursor = self.db.execute("DELETE FROM rooms WHERE closed = 1 AND closed_at < ?", (before,))
        return cursor.rowcount

    # -- reading ------------------------------------------------------------------------------------------
    def unfinished_rooms(self, skipped: list[tuple[str, str]] | None = None) -> list[StoredRoom]:
        """Every room not closed, with its seats and the move log of its current game.

        A room whose rows cannot be read (bad JSON, a broken value) is left out and added to `skipped` as
        (code, reason); a database that cannot be read at all raises StoreError.
        """
        rooms = []
        try:
            rows = self.db.execute(
                "SELECT code, game, options, room_options, host_name, private, game_no,"
                " host_token_hash FROM rooms WHERE closed = 0 ORDER BY created_at"
            ).fetchall()
            for row in rows:
                try:
                    rooms.append(self._stored_room(row))
                except (ValueError, TypeError, IndexError) as exc:
                    if skipped is not None:
                        skipped.append((str(row[0]), f"{type(exc).__name__}: {exc}"))
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the database {self.path}: {exc}") from None
        return rooms

    def open_room(self, code: str) -> StoredRoom | None:
        """One open room read back, as `unfinished_rooms` reads each (None if it is closed or unknown).

        A cluster node that claims a room (server/cluster) restores it from this. StoreError if its rows are broken.
        """
        try:
            row = self.db.execute(
                "SELECT code, game, options, room_options, host_name, private, game_no,"
                " host_token_hash FROM rooms WHERE code = ? AND closed = 0",
                (code,),
            ).fetchone()
            return None if row is None else self._stored_room(row)
        except (ValueError, TypeError, IndexError) as exc:
            raise StoreError(f"room {code} cannot be read back: {type(exc).__name__}: {exc}") from None
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the database {self.path}: {exc}") from None

    def _stored_room(self, row: tuple[Any, ...]) -> StoredRoom:
        """One open room's rows read back (ValueError / TypeError if a stored value is broken)."""
        options, room_options = json.loads(row[2]), json.loads(row[3])
        if not isinstance(options, dict) or not isinstance(room_options, dict):
            raise ValueError("options are not a map")
        room = StoredRoom(row[0], row[1], options, room_options, row[4], bool(row[5]), int(row[6]), row[7])
        room.seats = [
            SeatSaved(room.code, seat, name, token_hash, ai_level, ai_bot, bool(bot))
            for seat, name, token_hash, ai_level, ai_bot, bot in self.db.execute(
                "SELECT seat, name, token_hash, ai_level, ai_bot, bot FROM seats WHERE room = ? ORDER BY seat",
                (room.code,),
            )
        ]
        current = (room.code, room.game_no)
        rows = self.db.execute(
            "SELECT move, spent_ms FROM moves WHERE room = ? AND game_no = ? ORDER BY ply", current
        ).fetchall()
        room.moves = [m for m, _ in rows]
        room.move_ms = [ms for _, ms in rows if ms is not None]
        room.clocks = [
            json.loads(times)
            for (times,) in self.db.execute(
                "SELECT remaining FROM clocks WHERE room = ? AND game_no = ? ORDER BY ply", current
            )
        ]
        done = self.db.execute(
            "SELECT result FROM games WHERE room = ? AND game_no = ?", (room.code, room.game_no)
        ).fetchone()
        room.result = json.loads(done[0]) if done else None
        if room.result is not None and not isinstance(room.result, dict):
            raise ValueError("the stored result is not a map")
        return room

    def claimed_names(self) -> list[NameClaimed]:
        """Every claimed name, for the lobby to load at start-up (StoreError if they cannot be read)."""
        try:
            rows = self.db.execute("SELECT name_key, name, key_hash, bot FROM names ORDER BY claimed_at").fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the database {self.path}: {exc}") from None
        return [NameClaimed(str(key), str(name), str(key_hash), bool(bot)) for key, name, key_hash, bot in rows]

    def ratings(self) -> list[StoredRating]:
        """Every stored rating, for the rating book to load at start-up (StoreError if they cannot be read)."""
        try:
            rows = self.db.execute(
                "SELECT player, pool, name, kind, rating, rd, vol, games, wins, draws, losses, rated_at FROM ratings"
            ).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the database {self.path}: {exc}") from None
        return [StoredRating(*row) for row in rows]

    def tournaments(self, limit: int = 200) -> list[dict[str, Any]]:
        """The latest tournaments' stored states, oldest first (StoreError if they cannot be read)."""
        try:
            rows = self.db.execute(
                "SELECT data FROM (SELECT data, created_at FROM tournaments ORDER BY created_at DESC LIMIT ?)"
                " ORDER BY created_at",
                (limit,),
            ).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the database {self.path}: {exc}") from None
        return tournament_states(rows)

    def leaderboard(self, pool: str, offset: int, limit: int) -> tuple[int, list[dict[str, Any]]]:
        """One page of a pool's players by rating, best first: (how many the pool has, the page's entries).

        The page walks the (pool, rating) index from `offset`, which callers bound (MAX_LEADERBOARD_OFFSET).
        """
        total = self.db.execute("SELECT COUNT(*) FROM ratings WHERE pool = ?", (pool,)).fetchone()[0]
        rows = self.db.execute(
            "SELECT name, kind, rating, rd, vol, rated_at, games, wins, draws, losses FROM ratings WHERE pool = ?"
            " ORDER BY rating DESC LIMIT ? OFFSET ?",
            (pool, limit, offset),
        ).fetchall()
        return int(total), leader_entries(offset, rows)

    def profile(self, player: str, viewer: str | None = None) -> tuple[list[StoredRating], list[dict[str, Any]]]:
        """A player's ratings in every pool and their latest rated games (private rooms' only for their players)."""
        ratings = [
            StoredRating(*row)
            for row in self.db.execute(
                "SELECT player, pool, name, kind, rating, rd, vol, games, wins, draws, losses, rated_at FROM ratings"
                " WHERE player = ? ORDER BY games DESC, pool",
                (player,),
            )
        ]
        where, args = "", [player]
        if viewer is not None:
            where = " AND (g.private = 0 OR g.id IN (SELECT game_id FROM game_players WHERE token_hash = ?))"
            args.append(viewer)
        recent = recent_rated(
            self.db.execute(
                "SELECT rc.game_id, rc.pool, rc.seat, rc.before, rc.after, rc.outcome, g.players, g.finished_at"
                " FROM rating_changes AS rc JOIN games AS g ON g.id = rc.game_id WHERE rc.player = ?"
                + where
                + f" ORDER BY rc.game_id DESC LIMIT {RECENT_RATED}",
                args,
            )
        )
        return ratings, recent

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
        sql, args = list_games_query(player, game, limit, viewer, room, "?", "g.private = 0")
        return game_summaries(self.db.execute(sql, args))

    def get_game(self, game_id: int, viewer: str | None = None) -> dict[str, Any] | None:
        """One finished game as a replay record (docs/replay.md), or None (also for a private room's game that
        `viewer`, a token hash, did not play; without `viewer` every game is readable, as for `export`)."""
        if not 0 <= game_id < 2**63:  # SQLite integers are 64-bit: a larger id cannot exist
            return None
        sql = "SELECT id, game, options, players, result, moves, transcript, finished_at, clock FROM games WHERE id = ?"
        args: list[Any] = [game_id]
        if viewer is not None:
            sql += " AND (private = 0 OR id IN (SELECT game_id FROM game_players WHERE token_hash = ?))"
            args.append(viewer)
        row = self.db.execute(sql, args).fetchone()
        if row is None:
            return None
        return replay_record(row)


# -- rows as the server reads them (both backends: the SQL differs by dialect, what a row means does not) ----------
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
    player: str | None, game: str | None, limit: int, viewer: str | None, room: str | None, mark: str, public: str
) -> tuple[str, list[Any]]:
    """The `list_games` query and its arguments, in a dialect: `mark` is its parameter marker ("?" or "%s"),
    `public` its test that a game is not a private room's ("g.private = 0", "NOT g.private"). With `player` it
    starts from the game_players index, so its cost follows `limit`, not the history's size."""
    where: list[str] = ["1 = 1"]
    args: list[Any] = []
    if viewer is not None:
        where.append(f"({public} OR g.id IN (SELECT game_id FROM game_players WHERE token_hash = {mark}))")
        args.append(viewer)
    if game is not None:
        where.append(f"g.game = {mark}")
        args.append(game)
    if room is not None:  # through the games_by_room index
        where.append(f"g.room = {mark}")
        args.append(room.strip().upper()[:16])
    columns = "SELECT g.id, g.game, g.players, g.result, g.finished_at"
    if player is not None:
        sql = (
            f"{columns} FROM game_players AS gp JOIN games AS g ON g.id = gp.game_id WHERE gp.name = {mark} AND "
            + " AND ".join(where)
            + f" ORDER BY gp.game_id DESC LIMIT {mark}"
        )
        args.insert(0, player)
    else:
        sql = f"{columns} FROM games AS g WHERE " + " AND ".join(where) + f" ORDER BY g.id DESC LIMIT {mark}"
    args.append(max(1, min(limit, 200)))
    return sql, args
