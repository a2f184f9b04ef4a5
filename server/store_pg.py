"""Persistence in PostgreSQL: the same records, the same meaning as on SQLite, for nodes that share one database.

`gamenight-server --db postgresql://user@host/dbname` opens this store (server/store.py `open_store`; the password
from `--db-password-file`, or libpq's PGPASSWORD / ~/.pgpass, docs/cluster.md "Secrets"). A
cluster's nodes all write here (docs/architecture.md, "A cluster"); one process may use it too. The statements are
server/sqlstore.py's `SqlStore`; this module has what is PostgreSQL's own:

- The connection: psycopg, imported with this module, which `open_store` imports only for a PostgreSQL URL.
- The schema (sqlstore.SCHEMA in PostgreSQL's types: an identity column for games.id, booleans for flags, DOUBLE
  PRECISION for times). Its version is in `gamenight_schema`, in PostgreSQL's own numbering (its version 1 is
  SQLite's 8, version 2 SQLite's 9, version 3 SQLite's 10, version 4 SQLite's 11, version 5 SQLite's 12): a new
  database gets the current schema, `PG_MIGRATIONS[n]` upgrades version n to n+1. Both run under an advisory lock,
  so nodes starting together on an empty database do not race; a database from a newer gamenight is refused.
- `write` is one transaction. Its fences lock the fenced rooms' rows (`SELECT ... FOR UPDATE`, in code order)
  before anything is written: a concurrent `claim_room` (an UPDATE of the same row) waits for the batch to
  commit, and a batch that comes after a claim waits for the claim and then reads the raised epoch (READ
  COMMITTED re-reads a locked row once its lock is released), so the whole batch is refused with `Fenced`.
- Errors reach callers as `StoreError` with one line (`Fenced` stays `Fenced`). A lost connection makes the
  write in flight raise (the outgoing path then stops its rooms loudly, as for a full disk with SQLite); the
  next call connects again. Writes are synchronous, on the event loop, like SQLite's: a connection attempt is
  bounded (CONNECT_TIMEOUT_S, then RECONNECT_PAUSE_S of failing at once), a dead peer is noticed by libpq's TCP
  timeouts (TCP_DEFAULTS) and a row lock is waited for at most LOCK_TIMEOUT.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from gamenight.server.records import TOURNAMENT_FENCE, Fenced, StoreError

try:
    import psycopg
    from psycopg import conninfo
except ImportError as exc:  # the `cluster` extra is not installed
    raise StoreError(
        "a postgresql:// database needs psycopg: pip install 'gamenight[cluster]' (or psycopg[binary])"
    ) from exc

from gamenight.server.sqlstore import POSTGRES, Session, SqlStore, check_version
from gamenight.server.store import shown

PG_SCHEMA_VERSION = 6
CONNECT_TIMEOUT_S = 3  # a server that does not answer fails the start (or the write) instead of hanging it
RECONNECT_PAUSE_S = 5.0  # after a failed reconnect, calls fail at once for this long (the event loop waits on writes)
# libpq's TCP settings: a connection to a server that vanished (power, network) fails within seconds instead of
# the kernel's minutes; each can be overridden in the URL.
TCP_DEFAULTS = {
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 2,
    "keepalives_count": 2,
    "tcp_user_timeout": 5000,
}
LOCK_TIMEOUT = "2s"  # as SQLite's busy_timeout: wait that long for another writer's row lock, then fail
MIGRATION_LOCK = 0x67616D65  # the advisory lock taken while the schema is checked or upgraded ("game")

PG_MIGRATIONS: dict[int, str] = {
    # (Version 0 is an empty database: it gets sqlstore.SCHEMA whole.)
    # SQLite's migration 8: the owner epoch of a tournament (fenced writes of a cluster's tournaments).
    1: "ALTER TABLE tournaments ADD COLUMN owner_epoch BIGINT NOT NULL DEFAULT 0",
    # SQLite's migration 9: each finished game's analysis (game review, issue 36).
    2: "CREATE TABLE analyses (game_id BIGINT PRIMARY KEY REFERENCES games(id), data TEXT NOT NULL,"
    " created_at DOUBLE PRECISION NOT NULL)",
    # SQLite's migration 10: the admins, the bans and mutes, the voided games and the audit log (moderation, issue 37).
    3: "CREATE TABLE admins (name_key TEXT PRIMARY KEY, name TEXT NOT NULL, added_at DOUBLE PRECISION NOT NULL);"
    " CREATE TABLE sanctions (kind TEXT NOT NULL, target TEXT NOT NULL, until DOUBLE PRECISION NOT NULL,"
    " PRIMARY KEY (kind, target));"
    " CREATE TABLE voided_games (game_id BIGINT PRIMARY KEY REFERENCES games(id), voided_at DOUBLE PRECISION NOT NULL);"
    " CREATE TABLE audit (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, at DOUBLE PRECISION NOT NULL,"
    " admin TEXT NOT NULL, action TEXT NOT NULL, target TEXT NOT NULL, reason TEXT NOT NULL, details TEXT NOT NULL)",
    # SQLite's migration 11: a claimed name's Ed25519 public key (identity by signature, issue 33).
    4: "ALTER TABLE names ADD COLUMN public_key TEXT",
    # SQLite's migration 12: a tournament's games as rows of their own (a game's end writes one game, issue 37).
    5: "CREATE TABLE tournament_games (tournament TEXT NOT NULL, idx BIGINT NOT NULL, data TEXT NOT NULL,"
    " PRIMARY KEY (tournament, idx))",
}


def one_line(exc: BaseException) -> str:
    """A psycopg error as one line (libpq's messages run over several, with hints)."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


class PgStore(SqlStore):
    """The server's PostgreSQL database, by URL (`postgresql://user:password@host:port/dbname`)."""

    dialect = POSTGRES

    def __init__(self, url: str) -> None:
        self.url = url
        self.shown = shown(url)  # for messages: the password left out
        try:
            params = conninfo.conninfo_to_dict(url)
        except psycopg.Error as exc:
            raise StoreError(f"bad database URL {self.shown}: {one_line(exc)}") from None
        params.setdefault("connect_timeout", CONNECT_TIMEOUT_S)
        params.setdefault("application_name", "gamenight")
        for name, value in TCP_DEFAULTS.items():
            params.setdefault(name, value)
        self._conninfo = conninfo.make_conninfo("", **params)
        self._lock = threading.Lock()  # one statement sequence at a time on the connection
        self._conn: psycopg.Connection[Any] | None = None
        self._paused_until = 0.0  # monotonic: no reconnect before this (the last one failed)
        self._connect()
        try:
            self._migrate()
        except BaseException:
            self.close()
            raise

    # -- the connection -----------------------------------------------------------------------------
    def _connect(self) -> psycopg.Connection[Any]:
        """The open connection, connecting (again) if there is none or the last one broke."""
        if self._conn is not None and not self._conn.closed and not self._conn.broken:
            return self._conn
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if time.monotonic() < self._paused_until:
            raise StoreError(f"cannot use the database {self.shown}: not reachable a moment ago; retrying soon")
        try:
            # autocommit: each read is its own snapshot (a reader thread never holds an old transaction open);
            # writes open their transaction explicitly.
            conn = psycopg.connect(self._conninfo, autocommit=True)
            conn.execute(f"SET lock_timeout = '{LOCK_TIMEOUT}'")
        except psycopg.Error as exc:
            self._paused_until = time.monotonic() + RECONNECT_PAUSE_S
            raise StoreError(f"cannot use the database {self.shown}: {one_line(exc)}") from None
        self._conn = conn
        return conn

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    @contextmanager
    def _session(self, transaction: bool = False, snapshot: bool = False) -> Iterator[Session]:
        """A cursor on the (re)connected connection, inside a transaction if asked; psycopg errors become StoreError.

        `snapshot`: a read-only REPEATABLE READ transaction, so a room's rows read back together are consistent.
        """
        with self._lock:
            conn = self._connect()
            try:
                if transaction or snapshot:
                    with conn.transaction(), conn.cursor() as cursor:
                        if snapshot:
                            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                        yield Session(cursor, POSTGRES.mark)
                else:
                    with conn.cursor() as cursor:
                        yield Session(cursor, POSTGRES.mark)
            except psycopg.Error as exc:
                lost = " (connection lost; the next call reconnects)" if conn.broken else ""
                raise StoreError(f"database {self.shown}: {one_line(exc)}{lost}") from None

    def _migrate(self) -> None:
        """Bring the schema to PG_SCHEMA_VERSION (a new database gets it whole), refusing one from a newer version."""
        with self._session(transaction=True) as db:
            db.execute("SELECT pg_advisory_xact_lock(?)", (MIGRATION_LOCK,))
            db.execute("CREATE TABLE IF NOT EXISTS gamenight_schema (version INTEGER NOT NULL)")
            row = db.execute("SELECT version FROM gamenight_schema").fetchone()
            if row is None:
                db.execute("INSERT INTO gamenight_schema (version) VALUES (0)")
            version = check_version(0 if row is None else int(row[0]), PG_SCHEMA_VERSION, self.shown)
            if version == 0:
                for statement in POSTGRES.schema():
                    db.execute(statement)
                version = PG_SCHEMA_VERSION
            while version < PG_SCHEMA_VERSION:
                db.execute(PG_MIGRATIONS[version])
                version += 1
            db.execute("UPDATE gamenight_schema SET version = ?", (version,))

    def schema_version(self) -> int:
        """The stored schema version (for tests and diagnostics)."""
        with self._session() as db:
            row = db.execute("SELECT version FROM gamenight_schema").fetchone()
        return int(row[0]) if row else 0

    def _check_fences(self, db: Session, fences: Mapping[str, int]) -> None:
        """Lock the fenced rows and compare their epochs: tournaments first, then rooms, each in order (no two batches
        deadlock); a claim waits for this transaction, a batch after a claim sees the raised epoch."""
        rooms = sorted(key for key in fences if not key.startswith(TOURNAMENT_FENCE))
        tournaments = sorted(key[len(TOURNAMENT_FENCE) :] for key in fences if key.startswith(TOURNAMENT_FENCE))
        locks = (
            (
                "SELECT id, owner_epoch FROM tournaments WHERE id = ANY(?) ORDER BY id FOR UPDATE",
                tournaments,
                TOURNAMENT_FENCE,
            ),
            ("SELECT code, owner_epoch FROM rooms WHERE code = ANY(?) ORDER BY code FOR UPDATE", rooms, ""),
        )
        for sql, keys, prefix in locks:
            if keys:
                for found, current in db.execute(sql, (keys,)).fetchall():
                    key = prefix + found
                    if current != fences[key]:
                        raise Fenced(key, fences[key], int(current))
