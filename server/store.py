"""The store's entry and its SQLite backend: `open_store` picks the backend from `--db`; `Store` is SQLite's.

Rooms describe what happened as `Record` values (server/records.py); the network layer hands them to `write` before
it sends the matching broadcast, so a move a player has seen is always on disk. On start the server reads
`unfinished_rooms()` back and replays each move log through the rules, so a restored position is exactly the one
that was played — nothing derived is stored. The statements are server/sqlstore.py's `SqlStore`, the same on both
backends; this module has what is SQLite's own: the connection (WAL mode, a busy timeout), BEGIN IMMEDIATE
transactions, the fence check, and the file's schema history.

A new file gets the current schema (sqlstore.SCHEMA) at once; the file's version is PRAGMA user_version, and
`MIGRATIONS[n]` upgrades a file of version n (written by an older gamenight) to n+1. A database written by a newer
gamenight is refused rather than guessed at.

A `postgresql://` URL opens `PgStore` (server/store_pg.py, a store every node of a cluster shares; psycopg is
imported only then), anything else the SQLite file as before.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

from gamenight.server.records import TOURNAMENT_FENCE, Fenced, StoreBackend, StoreError
from gamenight.server.sqlstore import SQLITE, Session, SqlStore, check_version

SCHEMA_VERSION = 13
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
    # Game review (issue 36, server/review.py): each finished game's analysis, made once and kept with the game.
    9: """
    CREATE TABLE analyses (
        game_id INTEGER PRIMARY KEY REFERENCES games(id),
        data TEXT NOT NULL,
        created_at REAL NOT NULL
    );
    """,
    # Moderation (issue 37, server/moderation.py): the server's admins by name key (set by `gamenight-server admin`),
    # the bans and mutes running (by kind and name key or address, until a wall-clock time), the rated games an
    # admin voided, and the audit log.
    10: """
    CREATE TABLE admins (
        name_key TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        added_at REAL NOT NULL
    );
    CREATE TABLE sanctions (
        kind TEXT NOT NULL,
        target TEXT NOT NULL,
        until REAL NOT NULL,
        PRIMARY KEY (kind, target)
    );
    CREATE TABLE voided_games (
        game_id INTEGER PRIMARY KEY REFERENCES games(id),
        voided_at REAL NOT NULL
    );
    CREATE TABLE audit (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at REAL NOT NULL,
        admin TEXT NOT NULL,
        action TEXT NOT NULL,
        target TEXT NOT NULL,
        reason TEXT NOT NULL,
        details TEXT NOT NULL
    );
    """,
    # Identity by signature (issue 33): a claimed name's Ed25519 public key (hex). Claims made before it keep their
    # key hash and no public key until their owner proves both once (server/sessions.py `_move`).
    11: "ALTER TABLE names ADD COLUMN public_key TEXT",
    # A tournament's games as rows of their own (issue 37): a game's end writes that game and the tournament's
    # header, not every game played so far. Tournaments stored before keep their games in their state, read as they
    # are; their next change writes them all as rows.
    12: """
    CREATE TABLE tournament_games (
        tournament TEXT NOT NULL,
        idx INTEGER NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (tournament, idx)
    );
    """,
}

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
    return masked(target) if is_postgres(target) else target


def masked(url: str) -> str:
    """A URL as it may be printed or logged (a database's, Redis's): its password replaced by ***."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        host = parts.netloc.rsplit("@", 1)[1]
        return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))
    except ValueError:
        return url.split("://", 1)[0] + "://***"


def sql_statements(script: str) -> Iterator[str]:
    """The statements of an SQL script, one by one (`execute` runs one; `executescript` would commit first)."""
    statement = ""
    for part in script.split(";"):
        statement += part + ";"
        if sqlite3.complete_statement(statement):  # not a ";" inside a string literal
            if statement.strip() != ";":  # the rest after the last ";"
                yield statement
            statement = ""


class Store(SqlStore):
    """The server's SQLite database (a file, or ":memory:" for tests)."""

    dialect = SQLITE

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
        """Bring the schema to SCHEMA_VERSION: a new file gets the current schema, an older one its migrations.

        Several processes may open a new file at once (cluster nodes started together, docs/cluster.md): the
        version is read again inside one BEGIN IMMEDIATE transaction, which holds the file's write lock until the
        schema and the new version are committed, so one process creates it and the others, waiting for the lock,
        then find the version it wrote and change nothing.
        """
        if self._schema_version() == SCHEMA_VERSION:
            return  # the usual start: no write lock taken
        with self._transaction():
            version = self._schema_version()
            if version == 0:
                for statement in SQLITE.schema():
                    self.db.execute(statement)
                version = SCHEMA_VERSION
            while version < SCHEMA_VERSION:
                for statement in sql_statements(MIGRATIONS[version]):
                    self.db.execute(statement)
                version += 1
            self.db.execute(f"PRAGMA user_version = {version}")

    def _schema_version(self) -> int:
        """The file's schema version; StoreError if a newer gamenight wrote it."""
        return check_version(int(self.db.execute("PRAGMA user_version").fetchone()[0]), SCHEMA_VERSION, self.path)

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

    @contextmanager
    def _session(self, transaction: bool = False, snapshot: bool = False) -> Iterator[Session]:
        """A cursor; a write's in BEGIN IMMEDIATE (its sqlite3 errors reach the writer as they are), a read's in
        autocommit (each statement sees the last commit; WAL lets it read while another process writes), its errors
        one-line StoreErrors."""
        if transaction:
            with self._transaction():
                yield Session(self.db.cursor(), SQLITE.mark)
            return
        try:
            yield Session(self.db.cursor(), SQLITE.mark)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the database {self.path}: {exc}") from None

    def _check_fences(self, db: Session, fences: Mapping[str, int]) -> None:
        """Each fenced room's or tournament's epoch, read under the file's write lock (BEGIN IMMEDIATE)."""
        for key, held in fences.items():
            if key.startswith(TOURNAMENT_FENCE):
                sql, arg = "SELECT owner_epoch FROM tournaments WHERE id = ?", key[len(TOURNAMENT_FENCE) :]
            else:
                sql, arg = "SELECT owner_epoch FROM rooms WHERE code = ?", key
            row = db.execute(sql, (arg,)).fetchone()
            if row is not None and row[0] != held:
                raise Fenced(key, held, row[0])
