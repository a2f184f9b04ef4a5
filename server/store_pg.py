"""Persistence in PostgreSQL: the same records, the same meaning as the SQLite `Store`, for nodes that share it.

`gamenight-server --db postgresql://user:pass@host/dbname` opens this store (server/store.py `open_store`). A
cluster's nodes all write here (docs/architecture.md, "A cluster"); one process may use it too.

- The schema is that of SQLite schema 9 (server/store.py): the same tables, columns and indexes, with
  PostgreSQL's types (an identity column for games.id, booleans for flags, DOUBLE PRECISION for times). JSON
  values are TEXT, as in SQLite: they are written and read whole by this code and never queried inside (the
  game_players table is the index by player), and TEXT gives them back byte for byte — jsonb would reorder
  their keys, so an exported replay would differ between the two backends.
- Its version is in `gamenight_schema`; `PG_MIGRATIONS[n]` upgrades version n to n+1 (PostgreSQL's own
  numbering: its version 1 is SQLite's 8, version 2 SQLite's 9). Migrations run under an advisory lock, so nodes
  starting together on an empty database do not race; a database from a newer gamenight is refused.
- `write` is one transaction. Its fences lock the fenced rooms' rows (`SELECT ... FOR UPDATE`, in code order)
  before anything is written: a concurrent `claim_room` (an UPDATE of the same row) waits for the batch to
  commit, and a batch that comes after a claim waits for the claim and then reads the raised epoch (READ
  COMMITTED re-reads a locked row once its lock is released), so the whole batch is refused with `Fenced`.
- psycopg is imported with this module, which `open_store` imports only for a PostgreSQL URL.
- Errors reach callers as `StoreError` with one line (`Fenced` stays `Fenced`). A lost connection makes the
  write in flight raise (the outgoing path then stops its rooms loudly, as for a full disk with SQLite); the
  next call connects again. Writes are synchronous, on the event loop, like SQLite's: a connection attempt is
  bounded (CONNECT_TIMEOUT_S, then RECONNECT_PAUSE_S of failing at once), a dead peer is noticed by libpq's TCP
  timeouts (TCP_DEFAULTS) and a row lock is waited for at most LOCK_TIMEOUT.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

try:
    import psycopg
    from psycopg import conninfo
except ImportError as exc:  # the `cluster` extra is not installed
    from gamenight.server.store import StoreError

    raise StoreError(
        "a postgresql:// database needs psycopg: pip install 'gamenight[cluster]' (or psycopg[binary])"
    ) from exc

from gamenight.server.store import (
    RECENT_RATED,
    TOURNAMENT_FENCE,
    ClockSaved,
    Fenced,
    GameFinished,
    GameStarted,
    MoveRecorded,
    MovesUndone,
    NameClaimed,
    Record,
    RoomClosed,
    RoomSaved,
    SeatRated,
    SeatSaved,
    StoredRating,
    StoredRoom,
    StoreError,
    TournamentSaved,
    claimed_tournament,
    game_summaries,
    leader_entries,
    list_games_query,
    recent_rated,
    replay_record,
    shown,
    tournament_states,
)

PG_SCHEMA_VERSION = 2
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
    # SQLite's schema 8 (migrations 0-7 of server/store.py), in one step.
    0: """
    CREATE TABLE rooms (
        code TEXT PRIMARY KEY,
        game TEXT NOT NULL,
        options TEXT NOT NULL,
        room_options TEXT NOT NULL,
        host_name TEXT NOT NULL,
        private BOOLEAN NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        game_no INTEGER NOT NULL DEFAULT 0,
        closed BOOLEAN NOT NULL DEFAULT FALSE,
        host_token_hash TEXT,
        closed_at DOUBLE PRECISION,
        owner_epoch BIGINT NOT NULL DEFAULT 0
    );
    CREATE INDEX rooms_closed ON rooms(closed, closed_at);
    CREATE TABLE seats (
        room TEXT NOT NULL REFERENCES rooms(code),
        seat INTEGER NOT NULL,
        name TEXT,
        token_hash TEXT,
        ai_level INTEGER,
        ai_bot TEXT,
        bot BOOLEAN NOT NULL DEFAULT FALSE,
        PRIMARY KEY (room, seat)
    );
    CREATE TABLE moves (
        room TEXT NOT NULL REFERENCES rooms(code),
        game_no INTEGER NOT NULL,
        ply INTEGER NOT NULL,
        move TEXT NOT NULL,
        at DOUBLE PRECISION NOT NULL,
        spent_ms BIGINT,
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
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        room TEXT NOT NULL,
        game_no INTEGER NOT NULL,
        game TEXT NOT NULL,
        options TEXT NOT NULL,
        players TEXT NOT NULL,
        result TEXT NOT NULL,
        reason TEXT NOT NULL,
        moves TEXT NOT NULL,
        transcript TEXT NOT NULL,
        finished_at DOUBLE PRECISION NOT NULL,
        clock TEXT,
        private BOOLEAN NOT NULL DEFAULT FALSE
    );
    CREATE INDEX games_by_game ON games(game, id);
    CREATE INDEX games_by_room ON games(room, game_no);
    CREATE TABLE game_players (
        game_id BIGINT NOT NULL REFERENCES games(id),
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
        bot BOOLEAN NOT NULL DEFAULT FALSE,
        claimed_at DOUBLE PRECISION NOT NULL
    );
    CREATE TABLE ratings (
        player TEXT NOT NULL,
        pool TEXT NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        rating DOUBLE PRECISION NOT NULL,
        rd DOUBLE PRECISION NOT NULL,
        vol DOUBLE PRECISION NOT NULL,
        games INTEGER NOT NULL DEFAULT 0,
        wins INTEGER NOT NULL DEFAULT 0,
        draws INTEGER NOT NULL DEFAULT 0,
        losses INTEGER NOT NULL DEFAULT 0,
        rated_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (player, pool)
    );
    CREATE INDEX ratings_board ON ratings(pool, rating DESC, player);
    CREATE TABLE rating_changes (
        game_id BIGINT NOT NULL REFERENCES games(id),
        seat INTEGER NOT NULL,
        player TEXT NOT NULL,
        pool TEXT NOT NULL,
        before DOUBLE PRECISION NOT NULL,
        after DOUBLE PRECISION NOT NULL,
        rd_before DOUBLE PRECISION NOT NULL,
        rd_after DOUBLE PRECISION NOT NULL,
        outcome TEXT NOT NULL,
        PRIMARY KEY (game_id, seat)
    );
    CREATE INDEX rating_changes_by_player ON rating_changes(player, game_id);
    CREATE TABLE tournaments (
        id TEXT PRIMARY KEY,
        data TEXT NOT NULL,
        finished BOOLEAN NOT NULL DEFAULT FALSE,
        created_at DOUBLE PRECISION NOT NULL
    );
    """,
    # SQLite's migration 8: the owner epoch of a tournament (fenced writes of a cluster's tournaments).
    1: "ALTER TABLE tournaments ADD COLUMN owner_epoch BIGINT NOT NULL DEFAULT 0",
}

ROOM_COLUMNS = "code, game, options, room_options, host_name, private, game_no, host_token_hash"


def one_line(exc: BaseException) -> str:
    """A psycopg error as one line (libpq's messages run over several, with hints)."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


class PgStore:
    """The server's PostgreSQL database, by URL (`postgresql://user:password@host:port/dbname`)."""

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
    def _session(self, transaction: bool = False, snapshot: bool = False) -> Iterator[psycopg.Cursor[Any]]:
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
                        yield cursor
                else:
                    with conn.cursor() as cursor:
                        yield cursor
            except psycopg.Error as exc:
                lost = " (connection lost; the next call reconnects)" if conn.broken else ""
                raise StoreError(f"database {self.shown}: {one_line(exc)}{lost}") from None

    def _migrate(self) -> None:
        """Bring the schema to PG_SCHEMA_VERSION, refusing a database from a newer version."""
        with self._session(transaction=True) as db:
            db.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            db.execute("CREATE TABLE IF NOT EXISTS gamenight_schema (version INTEGER NOT NULL)")
            row = db.execute("SELECT version FROM gamenight_schema").fetchone()
            if row is None:
                db.execute("INSERT INTO gamenight_schema (version) VALUES (0)")
                version = 0
            else:
                version = int(row[0])
            if version > PG_SCHEMA_VERSION:
                raise StoreError(
                    f"{self.shown} was written by a newer gamenight (schema {version}; this one knows "
                    f"{PG_SCHEMA_VERSION}); upgrade gamenight or use another --db"
                )
            while version < PG_SCHEMA_VERSION:
                db.execute(PG_MIGRATIONS[version])
                version += 1
                db.execute("UPDATE gamenight_schema SET version = %s", (version,))

    def schema_version(self) -> int:
        """The stored schema version (for tests and diagnostics)."""
        with self._session() as db:
            row = db.execute("SELECT version FROM gamenight_schema").fetchone()
        return int(row[0]) if row else 0

    # -- writing ------------------------------------------------------------------------------------
    def write(self, records: list[Record], fences: Mapping[str, int] | None = None) -> None:
        """Store a batch of records in one transaction.

        `fences` maps room codes to the owner epoch the writer holds (a cluster node; the single process passes
        none): if any of those rooms exists with another epoch, the whole batch is refused with `Fenced` and
        nothing is written. A room not stored yet passes (its `RoomSaved` is in the batch, epoch 0). The fenced
        rows stay locked until the commit, so no claim can slip between the check and the writes.
        """
        if not records:
            return
        now = time.time()
        with self._session(transaction=True) as db:
            rooms = sorted(c for c in fences or () if not c.startswith(TOURNAMENT_FENCE))
            tournaments = sorted(c[len(TOURNAMENT_FENCE) :] for c in fences or () if c.startswith(TOURNAMENT_FENCE))
            if fences and tournaments:  # tournaments first, then rooms, each in order: no two batches deadlock
                rows = db.execute(
                    "SELECT id, owner_epoch FROM tournaments WHERE id = ANY(%s) ORDER BY id FOR UPDATE",
                    (tournaments,),
                ).fetchall()
                for tournament, current in rows:
                    key = TOURNAMENT_FENCE + tournament
                    if current != fences[key]:
                        raise Fenced(key, fences[key], int(current))
            if fences and rooms:
                rows = db.execute(
                    "SELECT code, owner_epoch FROM rooms WHERE code = ANY(%s) ORDER BY code FOR UPDATE",
                    (rooms,),
                ).fetchall()
                for code, current in rows:
                    if current != fences[code]:
                        raise Fenced(code, fences[code], int(current))
            for record in records:
                self._write_one(db, record, now)

    def claim_room(self, code: str) -> int | None:
        """Take a stored, open room over: raise its owner epoch and return the new one (None: no such open room).

        Every write of an earlier owner that names this room in its fences is refused from now on (a batch
        holding the row's lock finishes first; the claim waits for it).
        """
        with self._session() as db:
            row = db.execute(
                "UPDATE rooms SET owner_epoch = owner_epoch + 1 WHERE code = %s AND NOT closed RETURNING owner_epoch",
                (code,),
            ).fetchone()
        return None if row is None else int(row[0])

    def claim_tournament(self, tournament: str) -> tuple[int, dict[str, Any]] | None:
        """Take a stored tournament over: raise its owner epoch; returns the new epoch and its stored state (None:
        no such tournament, or its state is not a map). Writes fenced with an older epoch are refused from now on."""
        with self._session() as db:
            row = db.execute(
                "UPDATE tournaments SET owner_epoch = owner_epoch + 1 WHERE id = %s RETURNING owner_epoch, data",
                (tournament,),
            ).fetchone()
        return claimed_tournament(row)

    def _write_one(self, db: psycopg.Cursor[Any], record: Record, now: float) -> None:
        """Apply one record to the tables (the statements mirror the SQLite store's, upsert for upsert)."""
        match record:
            case RoomSaved():
                # SQLite's INSERT OR REPLACE: a room saved again under its code starts over (a new room).
                db.execute(
                    "INSERT INTO rooms (code, game, options, room_options, host_name, private, created_at,"
                    " host_token_hash) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (code) DO UPDATE SET"
                    " game = excluded.game, options = excluded.options, room_options = excluded.room_options,"
                    " host_name = excluded.host_name, private = excluded.private, created_at = excluded.created_at,"
                    " host_token_hash = excluded.host_token_hash, game_no = 0, closed = FALSE, closed_at = NULL,"
                    " owner_epoch = 0",
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
            case SeatSaved():
                db.execute(
                    "INSERT INTO seats (room, seat, name, token_hash, ai_level, ai_bot, bot)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (room, seat) DO UPDATE SET"
                    " name = excluded.name, token_hash = excluded.token_hash, ai_level = excluded.ai_level,"
                    " ai_bot = excluded.ai_bot, bot = excluded.bot",
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
                    "INSERT INTO names (name_key, name, key_hash, bot, claimed_at) VALUES (%s, %s, %s, %s, %s)"
                    " ON CONFLICT (name_key) DO UPDATE SET bot = names.bot OR excluded.bot",
                    (record.name_key, record.name, record.key_hash, record.bot, now),
                )
            case GameStarted():
                db.execute("UPDATE rooms SET game_no = %s WHERE code = %s", (record.game_no, record.code))
                db.execute("DELETE FROM moves WHERE room = %s AND game_no = %s", (record.code, record.game_no))
                db.execute("DELETE FROM clocks WHERE room = %s AND game_no = %s", (record.code, record.game_no))
            case MoveRecorded():
                db.execute(
                    "INSERT INTO moves (room, game_no, ply, move, at, spent_ms) VALUES (%s, %s, %s, %s, %s, %s)",
                    (record.code, record.game_no, record.ply, record.move, now, record.spent_ms),
                )
            case ClockSaved():
                db.execute(
                    "INSERT INTO clocks (room, game_no, ply, remaining) VALUES (%s, %s, %s, %s)"
                    " ON CONFLICT (room, game_no, ply) DO UPDATE SET remaining = excluded.remaining",
                    (record.code, record.game_no, record.ply, json.dumps(record.remaining)),
                )
            case MovesUndone():
                args = (record.code, record.game_no, record.ply)
                db.execute("DELETE FROM moves WHERE room = %s AND game_no = %s AND ply >= %s", args)
                db.execute("DELETE FROM clocks WHERE room = %s AND game_no = %s AND ply > %s", args)
            case GameFinished():
                row = db.execute(
                    "INSERT INTO games (room, game_no, game, options, players, result, reason, moves,"
                    " transcript, finished_at, clock, private)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
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
                assert row is not None
                game_id = int(row[0])
                hashes = dict(enumerate(record.token_hashes))
                db.executemany(
                    "INSERT INTO game_players (game_id, seat, name, token_hash) VALUES (%s, %s, %s, %s)",
                    [
                        (game_id, p.get("seat", n), p.get("name"), hashes.get(p.get("seat", n)))
                        for n, p in enumerate(record.players)
                    ],
                )
                if record.ratings:
                    self._write_ratings(db, game_id, record.ratings)
            case TournamentSaved():
                db.execute(
                    "INSERT INTO tournaments (id, data, finished, created_at) VALUES (%s, %s, %s, %s)"
                    " ON CONFLICT (id) DO UPDATE SET data = excluded.data, finished = excluded.finished",
                    (record.id, json.dumps(record.data), record.finished, now),
                )
            case RoomClosed():
                db.execute("UPDATE rooms SET closed = TRUE, closed_at = %s WHERE code = %s", (now, record.code))
                db.execute("DELETE FROM moves WHERE room = %s", (record.code,))
                db.execute("DELETE FROM clocks WHERE room = %s", (record.code,))
                db.execute("DELETE FROM seats WHERE room = %s", (record.code,))

    @staticmethod
    def _write_ratings(db: psycopg.Cursor[Any], game_id: int, ratings: tuple[SeatRated, ...]) -> None:
        """A rated game's new ratings and its changes per seat (inside the game's transaction)."""
        for r in ratings:
            win, draw, loss = (int(r.outcome == o) for o in ("win", "draw", "loss"))
            db.execute(
                "INSERT INTO ratings (player, pool, name, kind, rating, rd, vol, games, wins, draws, losses, rated_at)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, 1, %s, %s, %s, %s) ON CONFLICT (player, pool) DO UPDATE SET"
                " name = excluded.name, kind = excluded.kind, rating = excluded.rating, rd = excluded.rd,"
                " vol = excluded.vol, games = ratings.games + 1, wins = ratings.wins + excluded.wins,"
                " draws = ratings.draws + excluded.draws, losses = ratings.losses + excluded.losses,"
                " rated_at = excluded.rated_at",
                (r.player, r.pool, r.name, r.kind, *r.after, win, draw, loss, r.at),
            )
            db.execute(
                "INSERT INTO rating_changes (game_id, seat, player, pool, before, after, rd_before, rd_after, outcome)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (game_id, r.seat, r.player, r.pool, r.before[0], r.after[0], r.before[1], r.after[1], r.outcome),
            )

    def purge_closed(self, before: float) -> int:
        """Delete the rows of rooms closed before `before` (a time.time()); their finished games stay."""
        with self._session(transaction=True) as db:
            db.execute("DELETE FROM rooms WHERE closed AND closed_at < %s", (before,))
            return db.rowcount

    # -- reading ------------------------------------------------------------------------------------
    def unfinished_rooms(self, skipped: list[tuple[str, str]] | None = None) -> list[StoredRoom]:
        """Every room not closed, with its seats and the move log of its current game (one snapshot).

        A room whose rows cannot be read (bad JSON, a broken value) is left out and added to `skipped` as
        (code, reason); a database that cannot be read at all raises StoreError.
        """
        rooms = []
        with self._session(snapshot=True) as db:
            rows = db.execute(f"SELECT {ROOM_COLUMNS} FROM rooms WHERE NOT closed ORDER BY created_at, code").fetchall()
            for row in rows:
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
            row = db.execute(f"SELECT {ROOM_COLUMNS} FROM rooms WHERE code = %s AND NOT closed", (code,)).fetchone()
            try:
                return None if row is None else self._stored_room(db, row)
            except (ValueError, TypeError, IndexError) as exc:
                raise StoreError(f"room {code} cannot be read back: {type(exc).__name__}: {exc}") from None

    @staticmethod
    def _stored_room(db: psycopg.Cursor[Any], row: tuple[Any, ...]) -> StoredRoom:
        """One open room's rows read back (ValueError / TypeError if a stored value is broken)."""
        options, room_options = json.loads(row[2]), json.loads(row[3])
        if not isinstance(options, dict) or not isinstance(room_options, dict):
            raise ValueError("options are not a map")
        room = StoredRoom(row[0], row[1], options, room_options, row[4], bool(row[5]), int(row[6]), row[7])
        room.seats = [
            SeatSaved(room.code, seat, name, token_hash, ai_level, ai_bot, bool(bot))
            for seat, name, token_hash, ai_level, ai_bot, bot in db.execute(
                "SELECT seat, name, token_hash, ai_level, ai_bot, bot FROM seats WHERE room = %s ORDER BY seat",
                (room.code,),
            ).fetchall()
        ]
        current = (room.code, room.game_no)
        rows = db.execute(
            "SELECT move, spent_ms FROM moves WHERE room = %s AND game_no = %s ORDER BY ply", current
        ).fetchall()
        room.moves = [m for m, _ in rows]
        room.move_ms = [int(ms) for _, ms in rows if ms is not None]
        room.clocks = [
            json.loads(times)
            for (times,) in db.execute(
                "SELECT remaining FROM clocks WHERE room = %s AND game_no = %s ORDER BY ply", current
            ).fetchall()
        ]
        done = db.execute(
            "SELECT result FROM games WHERE room = %s AND game_no = %s ORDER BY id LIMIT 1", current
        ).fetchone()
        room.result = json.loads(done[0]) if done else None
        if room.result is not None and not isinstance(room.result, dict):
            raise ValueError("the stored result is not a map")
        return room

    def claimed_names(self) -> list[NameClaimed]:
        """Every claimed name, for the lobby to load at start-up (StoreError if they cannot be read)."""
        with self._session() as db:
            rows = db.execute(
                "SELECT name_key, name, key_hash, bot FROM names ORDER BY claimed_at, name_key"
            ).fetchall()
        return [NameClaimed(str(key), str(name), str(key_hash), bool(bot)) for key, name, key_hash, bot in rows]

    def ratings(self) -> list[StoredRating]:
        """Every stored rating, for the rating book to load at start-up (StoreError if they cannot be read)."""
        with self._session() as db:
            rows = db.execute(
                "SELECT player, pool, name, kind, rating, rd, vol, games, wins, draws, losses, rated_at FROM ratings"
            ).fetchall()
        return [StoredRating(*row) for row in rows]

    def tournaments(self, limit: int = 200) -> list[dict[str, Any]]:
        """The latest tournaments' stored states, oldest first (StoreError if they cannot be read)."""
        with self._session() as db:
            rows = db.execute(
                "SELECT data FROM (SELECT data, created_at, id FROM tournaments ORDER BY created_at DESC, id DESC"
                " LIMIT %s) AS latest ORDER BY created_at, id",
                (limit,),
            ).fetchall()
        return tournament_states(rows)

    def leaderboard(self, pool: str, offset: int, limit: int) -> tuple[int, list[dict[str, Any]]]:
        """One page of a pool's players by rating, best first: (how many the pool has, the page's entries).

        The page walks the (pool, rating) index from `offset`, which callers bound (MAX_LEADERBOARD_OFFSET).
        """
        with self._session(snapshot=True) as db:
            counted = db.execute("SELECT COUNT(*) FROM ratings WHERE pool = %s", (pool,)).fetchone()
            rows = db.execute(
                "SELECT name, kind, rating, rd, vol, rated_at, games, wins, draws, losses FROM ratings WHERE pool = %s"
                " ORDER BY rating DESC, player LIMIT %s OFFSET %s",
                (pool, limit, offset),
            ).fetchall()
        total = int(counted[0]) if counted else 0
        return total, leader_entries(offset, rows)

    def profile(self, player: str, viewer: str | None = None) -> tuple[list[StoredRating], list[dict[str, Any]]]:
        """A player's ratings in every pool and their latest rated games (private rooms' only for their players)."""
        where, args = "", [player]
        if viewer is not None:
            where = " AND (NOT g.private OR g.id IN (SELECT game_id FROM game_players WHERE token_hash = %s))"
            args.append(viewer)
        with self._session(snapshot=True) as db:
            ratings = [
                StoredRating(*row)
                for row in db.execute(
                    "SELECT player, pool, name, kind, rating, rd, vol, games, wins, draws, losses, rated_at"
                    " FROM ratings WHERE player = %s ORDER BY games DESC, pool",
                    (player,),
                ).fetchall()
            ]
            rows = db.execute(
                "SELECT rc.game_id, rc.pool, rc.seat, rc.before, rc.after, rc.outcome, g.players, g.finished_at"
                " FROM rating_changes AS rc JOIN games AS g ON g.id = rc.game_id WHERE rc.player = %s"
                + where
                + f" ORDER BY rc.game_id DESC LIMIT {RECENT_RATED}",
                args,
            ).fetchall()
        recent = recent_rated(rows)
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
        sql, args = list_games_query(player, game, limit, viewer, room, "%s", "NOT g.private")
        with self._session() as db:
            rows = db.execute(sql, args).fetchall()
        return game_summaries(rows)

    def get_game(self, game_id: int, viewer: str | None = None) -> dict[str, Any] | None:
        """One finished game as a replay record (docs/replay.md), or None (also for a private room's game that
        `viewer`, a token hash, did not play; without `viewer` every game is readable, as for `export`)."""
        if not 0 <= game_id < 2**63:  # BIGINT ids: a larger one cannot exist (and would not bind)
            return None
        sql = (
            "SELECT id, game, options, players, result, moves, transcript, finished_at, clock FROM games WHERE id = %s"
        )
        args: list[Any] = [game_id]
        if viewer is not None:
            sql += " AND (NOT private OR id IN (SELECT game_id FROM game_players WHERE token_hash = %s))"
            args.append(viewer)
        with self._session() as db:
            row = db.execute(sql, args).fetchone()
        if row is None:
            return None
        return replay_record(row)
