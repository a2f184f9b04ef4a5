"""The history: bad ids are a client's mistake, closed rooms leave the database, lookups by player use an index."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from dataclasses import replace

import pytest

from gamenight.protocol.messages import CreateRoom, GetGame, ListGames, MakeMove, Resign
from gamenight.server.app import GameServer, ServerConfig
from gamenight.server.store import GameFinished, Store
from tests.peer import Peer, seat_pair


@pytest.fixture
async def server(tmp_path):
    """A server on a real database file whose closed rooms are purged at once."""
    config = ServerConfig(port=0, ai_workers=1, db=str(tmp_path / "games.db"), closed_room_retention_s=0.0)
    server = GameServer(config)
    await server.start()
    yield server
    await server.stop()


@pytest.mark.parametrize("game_id", [2**63, 2**64 - 1, -(2**63)])
async def test_a_huge_game_id_is_unknown_game_without_a_traceback(server, caplog, game_id):
    """get_game with an id beyond SQLite's integers gets `unknown_game`, and the server logs no error for it."""
    peer = await Peer.connect(f"ws://127.0.0.1:{server.port}", "prober")
    with caplog.at_level(logging.WARNING, logger="gamenight.server"):
        reply = await peer.request(GetGame, game_id=game_id)
    assert reply.type == "error" and reply.code == "unknown_game"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    await peer.close()


async def test_a_closed_room_is_purged_from_the_database(server, monkeypatch):
    """A room that closed is deleted from the database once its retention (here 0 s) has passed."""
    monkeypatch.setattr("gamenight.server.lobby.EMPTY_ROOM_GRACE_S", 0.1)
    monkeypatch.setattr("gamenight.server.lobby.PROMPT_CLOSE_S", 0.1)  # the host left: nothing to wait for
    monkeypatch.setattr("gamenight.server.app.SWEEP_INTERVAL_S", 0.1)
    monkeypatch.setattr("gamenight.server.app.PURGE_INTERVAL_S", 0.0)
    peer = await Peer.connect(f"ws://127.0.0.1:{server.port}", "host")
    code = (await peer.request(CreateRoom, game="othello", options={})).room
    await peer.close()
    assert server.config.db is not None
    for _ in range(100):
        await asyncio.sleep(0.05)
        db = sqlite3.connect(server.config.db)
        rows = db.execute("SELECT closed FROM rooms WHERE code = ?", (code,)).fetchall()
        db.close()
        if not rows:
            break
    assert rows == [] and code not in server.lobby.rooms


def test_games_by_player_are_found_through_the_index(tmp_path):
    """list_games {player} reads the game_players index (no scan of every game) and returns that player's games."""
    store = Store(str(tmp_path / "g.db"))
    finished = GameFinished("R", 1, "othello", {}, [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "bo"}], {}, [], "")
    players = [[{"seat": 0, "name": f"p{n}"}, {"seat": 1, "name": "bo"}] for n in range(50)]
    store.write([replace(finished, players=pair) for pair in players])
    plan = " ".join(
        row[3]
        for row in store.db.execute(
            "EXPLAIN QUERY PLAN SELECT g.id FROM game_players AS gp JOIN games AS g ON g.id = gp.game_id"
            " WHERE gp.name = ? AND (g.private = 0 OR g.id IN (SELECT game_id FROM game_players WHERE token_hash = ?))"
            " ORDER BY gp.game_id DESC LIMIT ?",
            ("p7", "h", 20),
        )
    )
    assert "game_players_by_name" in plan and "SCAN g" not in plan and "SCAN games" not in plan
    assert [g["players"][0]["name"] for g in store.list_games(player="p7", viewer="h")] == ["p7"]
    assert len(store.list_games(player="bo", limit=10)) == 10
    store.close()


async def test_games_go_on_while_a_replay_is_computed(server, monkeypatch):
    """While a long replay is being computed for one client, moves in another room are still answered; the
    replay then arrives, and asking for it again does not replay the game again."""
    from gamenight.server import lobby

    url = f"ws://127.0.0.1:{server.port}"
    alice, bob = await Peer.connect(url, "alice"), await Peer.connect(url, "bob")
    code, state = await seat_pair(alice, bob)
    await alice.send(MakeMove(room=code, move=state.legal[0], seq=state.seq))
    state = await alice.expect("state", seq=state.seq + 1)
    await bob.send(Resign(room=code))
    await alice.expect("event", kind="game_over")
    game_id = (await alice.request(ListGames)).games[0]["game_id"]
    release, replays, original = threading.Event(), [], lobby.replay_frames

    def slow_replay(record):
        replays.append(record["game_id"])
        assert release.wait(20), "the test never released the replay"
        return original(record)

    monkeypatch.setattr(lobby, "replay_frames", slow_replay)
    reader = await Peer.connect(url, "reader")
    await reader.send(GetGame(game_id=game_id, id=4242))
    async with asyncio.timeout(10):  # guards a hang only: the history thread picks the request up
        while not replays:
            await asyncio.sleep(0.01)
    one, two = await Peer.connect(url, "one"), await Peer.connect(url, "two")
    other, state = await seat_pair(one, two)
    for _ in range(2):
        mover = one if state.to_move == [0] else two
        legal = (await mover.at(other, state.seq)).legal
        await mover.send(MakeMove(room=other, move=legal[0], seq=state.seq))
        state = await one.expect("state", seq=state.seq + 1)
    assert replays == [game_id]  # the replay is still running: the moves did not wait for it
    release.set()
    first = await reader.wait(lambda m: m.id == 4242)
    again = await reader.request(GetGame, game_id=game_id)
    assert first.type == again.type == "game" and first.frames == again.frames and replays == [game_id]
