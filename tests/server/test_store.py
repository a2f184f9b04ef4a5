"""Persistence: the SQLite schema, its version check and the export command (the store's behaviour on both backends
is in test_store_backends.py)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from gamenight.protocol.messages import CreateRoom, GetGame, Join, ListGames, MakeMove, Resign
from gamenight.server.records import GameFinished, MoveRecorded
from gamenight.server.store import MIGRATIONS, SCHEMA_VERSION, Store, sql_statements

OLD_FILE = Path(__file__).resolve().parent.parent / "data" / "store_v9.sql"  # a file of the store before SqlStore


def shape(db: sqlite3.Connection) -> dict[str, Any]:
    """A file's version, and each table's columns (order, type, NOT NULL, default, key) and indexes (their columns and
    order): what the store relies on, without the CREATE statements' spelling."""
    found: dict[str, Any] = {"version": db.execute("PRAGMA user_version").fetchone()[0]}
    for kind, name, table in db.execute("SELECT type, name, tbl_name FROM sqlite_master ORDER BY name").fetchall():
        if kind == "table":
            found[name] = db.execute(f"PRAGMA table_info({name})").fetchall()
        elif kind == "index":
            found[name] = (table, db.execute(f"PRAGMA index_xinfo({name})").fetchall())
    return found


def test_new_database_gets_current_schema_in_wal_mode(tmp_path):
    """A new file is created at the current schema version, in WAL mode."""
    store = Store(str(tmp_path / "new.db"))
    assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()


def test_a_migration_runs_statement_by_statement_with_semicolons_in_strings_kept(tmp_path):
    """Migrations run one statement at a time in one transaction: a script splits at statement ends only, never at
    a ";" inside a string, and every migration's statements together make the schema `executescript` made."""
    script = "CREATE TABLE t (a TEXT);\nINSERT INTO t VALUES ('x;y');\n  ALTER TABLE t ADD COLUMN b INTEGER\n"
    assert list(sql_statements(script)) == [
        "CREATE TABLE t (a TEXT);",
        "\nINSERT INTO t VALUES ('x;y');",
        "\n  ALTER TABLE t ADD COLUMN b INTEGER\n;",
    ]
    whole, split = sqlite3.connect(tmp_path / "whole.db"), sqlite3.connect(tmp_path / "split.db")
    for version in range(SCHEMA_VERSION):
        whole.executescript(MIGRATIONS[version])
        for statement in sql_statements(MIGRATIONS[version]):
            split.execute(statement)
    schema = "SELECT * FROM sqlite_master ORDER BY name"
    assert split.execute(schema).fetchall() == whole.execute(schema).fetchall()
    whole.close()
    split.close()


def test_database_of_the_first_schema_is_upgraded_in_place(tmp_path):
    """A database written by the first release opens: upgraded to the current schema, its open rooms still load."""
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript(f"{MIGRATIONS[0]}; PRAGMA user_version = 1;")
    db.execute(
        "INSERT INTO rooms (code, game, options, room_options, host_name, private, created_at)"
        " VALUES ('OLD01', 'othello', '{}', '{}', 'ann', 0, 0)"
    )
    db.commit()
    db.close()
    store = Store(str(path))
    assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    (room,) = store.unfinished_rooms()
    assert (room.code, room.host_name, room.host_token_hash) == ("OLD01", "ann", None)
    store.close()


def test_a_new_file_has_exactly_the_schema_the_migrations_give_an_old_one(tmp_path):
    """A file created new (from sqlstore.SCHEMA) has the columns, types, defaults, keys and indexes of a file brought
    up from the first schema by the migrations, so old and new files are read and written alike."""
    Store(str(tmp_path / "new.db")).close()
    old = sqlite3.connect(tmp_path / "old.db")
    for version in range(SCHEMA_VERSION):
        old.executescript(MIGRATIONS[version])
    old.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    new = sqlite3.connect(tmp_path / "new.db")
    assert shape(new) == shape(old)
    new.close()
    old.close()


def test_a_file_written_before_the_shared_sql_store_opens_unchanged_and_reads_back(tmp_path):
    """A database file the earlier store wrote (tests/data/store_v9.sql) opens with its schema untouched but for the
    tables the review's, moderation's and the tournament games' migrations add and the names' public key column: its
    open room, names (with no public key yet), ratings, history and tournaments read back as written, and it takes
    new moves and games."""
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript(OLD_FILE.read_text())
    written = db.execute("SELECT * FROM sqlite_master ORDER BY name").fetchall()
    db.close()
    store = Store(str(path))
    done, room = store.unfinished_rooms()  # written in one batch: by code
    assert (done.code, done.result) == ("DONE1", {"winner": 0, "reason": "resign"})
    assert (room.code, room.host_token_hash, room.moves, room.move_ms) == (
        "OPEN1",
        "hash-ann",
        ["f5", "d6"],
        [1200, 800],
    )
    assert room.clocks == [[300000, 300000], [301800, 300000]] and room.result is None
    assert [(s.name, s.ai_level) for s in room.seats] == [("ann", None), (None, 3)]
    assert [(n.name, n.bot, n.public_key) for n in store.claimed_names()] == [("Ann", False, ""), ("Robo", True, "")]
    total, board = store.leaderboard("othello", 0, 10)
    assert total == 2 and [(e["rank"], e["name"], e["rating"], e["wins"]) for e in board] == [
        (1, "ann", 1662.3, 1),
        (2, "bob", 1337.7, 0),
    ]
    assert [(g["game_id"], g["outcome"]) for g in store.profile("bob", viewer="hash-bob")[1]] == [(1, "loss")]
    assert [g["game_id"] for g in store.list_games()] == [2, 1]
    assert [g["game_id"] for g in store.list_games(viewer="hash-ann")] == [1]
    assert store.get_game(2, viewer="hash-ann") is None and store.get_game(2, viewer="hash-dee") is not None
    replay = store.get_game(1)
    assert replay is not None and replay["moves"] == ["f5", "d6", "c3", "d3"] and replay["clock"]["control"] == "5+3"
    assert store.tournaments() == [{"id": "t1", "game": "othello", "rounds": 2}]
    assert store.claim_room("OPEN1") == 2  # the file's owner epoch was 1
    store.write([MoveRecorded("OPEN1", 0, 2, "c3", 500)], fences={"OPEN1": 2})
    players = [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "eve"}]
    store.write([GameFinished("OPEN1", 0, "othello", {}, players, {"winner": 1, "reason": "resign"}, [], "")])
    assert [g["game_id"] for g in store.list_games(player="ann")] == [3, 1]
    reopened = store.open_room("OPEN1")
    assert reopened is not None and reopened.moves == ["f5", "d6", "c3"]
    store.close()
    db = sqlite3.connect(path)
    schema = db.execute("SELECT * FROM sqlite_master ORDER BY name").fetchall()
    added = {"analyses", "admins", "sanctions", "voided_games", "audit"}  # migrations 9 (review) and 10 (moderation)
    added.add("tournament_games")  # migration 12: a tournament's games as rows of their own
    changed = added | {"names"}  # migration 11 (identity by signature) adds a column to names
    assert [row for row in schema if row[2] not in changed] == [r for r in written if r[2] != "names"]
    assert [row[1] for row in schema if row[2] == "analyses"] == ["analyses"]
    assert {row[2] for row in schema if row[0] == "table"} - {row[2] for row in written} == added
    names = next(row[4] for row in schema if row[1] == "names")
    assert names == next(row[4] for row in written if row[1] == "names").replace(
        "claimed_at REAL NOT NULL\n    )", "claimed_at REAL NOT NULL\n    , public_key TEXT)"
    )
    db.close()


async def test_finished_game_is_listed_fetched_and_exported(tmp_path):
    """A game finished over the wire appears in list_games, get_game returns its record, export prints it."""
    from gamenight.server.app import GameServer, ServerConfig
    from tests.peer import Peer

    db = tmp_path / "games.db"
    server = GameServer(ServerConfig(port=0, db=str(db)))
    await server.start()
    url = f"ws://127.0.0.1:{server.port}"
    try:
        alice = await Peer.connect(url, "alice")
        bob = await Peer.connect(url, "bob")
        room = await alice.request(CreateRoom, game="othello", options={"size": 6})
        await alice.request(Join, room=room.room, seat=0)
        await bob.request(Join, room=room.room, seat=1)
        state = await alice.expect("state")
        await alice.send(MakeMove(room=room.room, move=state.legal[0], seq=state.seq))
        await bob.expect("state", seq=state.seq + 1)
        await bob.send(Resign(room=room.room))
        await alice.expect("event", kind="game_over")
        listed = await alice.request(ListGames, player="bob")
        assert listed.type == "games" and len(listed.games) == 1
        game_id = listed.games[0]["game_id"]
        reply = await alice.request(GetGame, game_id=game_id)
        record = reply.record
        assert len(reply.frames) == 2 and reply.frames[0] == state.view and reply.frames[1]["scores"] == [4, 1]
        assert record["moves"] == [state.legal[0]] and record["result"]["reason"] == "resign"
        assert record["transcript"] == state.legal[0] and record["options"]["size"] == 6
        missing = await alice.request(GetGame, game_id=999)
        assert missing.type == "error" and missing.code == "unknown_game"
        await alice.close()
        await bob.close()
    finally:
        await server.stop()
    out = subprocess.run(
        [sys.executable, "-m", "gamenight.server", "--db", str(db), "export", str(game_id)],
        capture_output=True,
        text=True,
        check=True,
    )
    exported = json.loads(out.stdout)
    assert exported == record
    missing = subprocess.run(
        [sys.executable, "-m", "gamenight.server", "--db", str(db), "export", "999"], capture_output=True, text=True
    )
    assert missing.returncode == 1 and "no finished game" in missing.stderr
