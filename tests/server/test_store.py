"""Persistence: the SQLite schema, its version check, history queries and the export command."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest

from gamenight.protocol.messages import CreateRoom, GetGame, Join, ListGames, MakeMove, Resign
from gamenight.server.store import (
    MIGRATIONS,
    SCHEMA_VERSION,
    Fenced,
    GameFinished,
    MoveRecorded,
    RoomClosed,
    RoomSaved,
    Store,
    StoreError,
)


def test_newer_database_is_refused(tmp_path):
    """A database written by a newer gamenight is refused with a message saying so."""
    path = tmp_path / "future.db"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(StoreError, match="newer gamenight"):
        Store(str(path))


def test_new_database_gets_current_schema_in_wal_mode(tmp_path):
    """A new file is created at the current schema version, in WAL mode."""
    store = Store(str(tmp_path / "new.db"))
    assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()


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


def test_a_failed_batch_writes_nothing(tmp_path):
    """A batch with a bad record is rolled back whole: no half-written move log."""
    store = Store(str(tmp_path / "g.db"))
    store.write([RoomSaved("ROOM1", "othello", {"size": 8}, {}, "ann", False)])
    with pytest.raises(sqlite3.IntegrityError):
        store.write([MoveRecorded("ROOM1", 1, 0, "f5"), MoveRecorded("ROOM1", 1, 0, "d6")])
    assert store.unfinished_rooms()[0].moves == []
    store.close()


def test_a_write_from_an_owner_that_lost_the_room_is_refused_whole(tmp_path):
    """Fencing: once another node claims a room, the old owner's batch is refused and none of it is stored."""
    store = Store(str(tmp_path / "g.db"))
    store.write(
        [RoomSaved("ROOM1", "othello", {}, {}, "ann", False), RoomSaved("ROOM2", "othello", {}, {}, "bo", False)]
    )
    store.write([MoveRecorded("ROOM1", 0, 0, "f5")], fences={"ROOM1": 0})
    assert store.claim_room("ROOM1") == 1
    with pytest.raises(Fenced) as refused:
        store.write(
            [MoveRecorded("ROOM2", 0, 0, "f5"), MoveRecorded("ROOM1", 0, 1, "d6")], fences={"ROOM1": 0, "ROOM2": 0}
        )
    assert (refused.value.code, refused.value.held, refused.value.current) == ("ROOM1", 0, 1)
    assert [r.moves for r in store.unfinished_rooms()] == [["f5"], []]
    store.write([MoveRecorded("ROOM1", 0, 1, "f4")], fences={"ROOM1": 1})
    assert store.open_room("ROOM1").moves == ["f5", "f4"]
    store.close()


def test_a_claim_is_seen_by_another_connection_to_the_same_file(tmp_path):
    """Two processes sharing one database file: a claim made through one fences the other's writes."""
    path = str(tmp_path / "g.db")
    first, second = Store(path), Store(path)
    first.write([RoomSaved("ROOM1", "othello", {}, {}, "ann", False)])
    assert second.claim_room("ROOM1") == 1
    with pytest.raises(Fenced):
        first.write([MoveRecorded("ROOM1", 0, 0, "f5")], fences={"ROOM1": 0})
    second.write([MoveRecorded("ROOM1", 0, 0, "c4")], fences={"ROOM1": 1})
    assert first.open_room("ROOM1").moves == ["c4"]
    first.close()
    second.close()


def test_a_closed_or_unknown_room_cannot_be_claimed_or_read_back(tmp_path):
    """Claiming or reading back a room that closed (or never existed) finds nothing to restore."""
    store = Store(str(tmp_path / "g.db"))
    store.write([RoomSaved("ROOM1", "othello", {}, {}, "ann", False), RoomClosed("ROOM1")])
    assert store.claim_room("ROOM1") is None
    assert store.claim_room("NOPE1") is None
    assert store.open_room("ROOM1") is None
    store.close()


def test_history_filters_by_player_and_game(tmp_path):
    """list_games finds games by player name and by game, newest first."""
    store = Store(str(tmp_path / "h.db"))
    for i, (game, names) in enumerate(
        [("othello", ["ann", "bo"]), ("pentago", ["ann", "cy"]), ("othello", ["cy", "bo"])]
    ):
        players = [{"seat": s, "name": n} for s, n in enumerate(names)]
        store.write([GameFinished(f"R{i}", 1, game, {}, players, {"winner": 0, "reason": "x"}, ["a"], "a")])
    assert [g["game"] for g in store.list_games(player="ann")] == ["pentago", "othello"]
    assert len(store.list_games(game="othello")) == 2
    assert len(store.list_games(player="cy", game="othello")) == 1
    store.close()


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
