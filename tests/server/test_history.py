"""The history: bad ids are a client's mistake, closed rooms leave the database, lookups by player use an index,
and requests are answered in a worker process that neither holds up the games nor outlives the server."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from gamenight.protocol.messages import CreateRoom, GetGame, ListGames, MakeMove, Resign
from gamenight.server.app import HISTORY_RETRY_MS, MAX_HISTORY_PER_SESSION, GameServer, ServerConfig
from gamenight.server.history_worker import WORKER_NAME
from gamenight.server.records import GameFinished
from gamenight.server.store import Store
from tests.peer import Peer, seat_pair
from tests.server.test_restart import _alive, _descendants
from tests.waiting import HANG_S, eventually


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
    monkeypatch.setattr("gamenight.server.directory.EMPTY_ROOM_GRACE_S", 0.1)
    monkeypatch.setattr("gamenight.server.directory.PROMPT_CLOSE_S", 0.1)  # the host left: nothing to wait for
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


async def _finished_game(url: str) -> int:
    """Play one short Othello game to its end (a move, then a resignation); its id in the history."""
    alice, bob = await Peer.connect(url, "alice"), await Peer.connect(url, "bob")
    code, state = await seat_pair(alice, bob)
    await alice.send(MakeMove(room=code, move=state.legal[0], seq=state.seq))
    await alice.expect("state", seq=state.seq + 1)
    await bob.send(Resign(room=code))
    await alice.expect("event", kind="game_over")
    game_id = int((await alice.request(ListGames)).games[0]["game_id"])
    await alice.close()
    await bob.close()
    return game_id


def _worker_pid(server: GameServer) -> int:
    """The running history worker's pid (a history request started it)."""
    assert server.history is not None and server.history.pid is not None
    return server.history.pid


async def test_games_go_on_while_the_history_worker_is_stuck(server, monkeypatch):
    """While the history worker cannot answer (here: stopped outright), moves in another room are still
    answered and the history request waits; once the worker goes on, the replay arrives."""
    monkeypatch.setattr("gamenight.server.app.HISTORY_TIMEOUT_S", 60.0)  # only `rate_limited` would end the wait
    url = f"ws://127.0.0.1:{server.port}"
    game_id = await _finished_game(url)
    pid = _worker_pid(server)
    reader = await Peer.connect(url, "reader")
    os.kill(pid, signal.SIGSTOP)
    try:
        await reader.send(GetGame(game_id=game_id, id=4242))
        one, two = await Peer.connect(url, "one"), await Peer.connect(url, "two")
        other, state = await seat_pair(one, two)
        for _ in range(2):
            mover = one if state.to_move == [0] else two
            legal = (await mover.at(other, state.seq)).legal
            await mover.send(MakeMove(room=other, move=legal[0], seq=state.seq))
            state = await one.expect("state", seq=state.seq + 1)
        assert reader._frames.empty()  # nothing arrived for the reader: its request is still in the worker
    finally:
        os.kill(pid, signal.SIGCONT)
    first = await reader.wait(lambda m: m.id == 4242)
    again = await reader.request(GetGame, game_id=game_id)
    assert first.type == again.type == "game" and len(first.frames) == 2 and first.frames == again.frames


async def test_a_busy_history_says_when_to_ask_again(server, monkeypatch):
    """A history request the stuck worker does not answer in time, and one refused at once because the session
    already has its share waiting, both get `rate_limited` with `retry_after_ms`; the history answers once free."""
    monkeypatch.setattr("gamenight.server.app.HISTORY_TIMEOUT_S", 0.2)
    url = f"ws://127.0.0.1:{server.port}"
    game_id = await _finished_game(url)
    pid = _worker_pid(server)
    reader = await Peer.connect(url, "reader")
    os.kill(pid, signal.SIGSTOP)
    try:
        for _ in range(MAX_HISTORY_PER_SESSION):  # each waits in the stopped worker until it times out
            late = await reader.request(GetGame, game_id=game_id)
            assert late.type == "error" and late.code == "rate_limited" and late.retry_after_ms == HISTORY_RETRY_MS
        busy = await reader.request(GetGame, game_id=game_id)  # refused before it reaches the worker
        assert busy.type == "error" and busy.code == "rate_limited" and busy.retry_after_ms == HISTORY_RETRY_MS
        assert "busy" in busy.message
    finally:
        os.kill(pid, signal.SIGCONT)

    async def answered() -> bool:
        reply = await reader.request(GetGame, game_id=game_id)
        return reply.type == "game"

    await eventually(answered, "the history answering again")
    await reader.close()


async def test_a_killed_history_worker_is_replaced(server, caplog):
    """A history worker that dies (SIGKILL) fails the request it held with a clean `rate_limited`, without a
    traceback in the log; the next request is answered by a new worker."""
    url = f"ws://127.0.0.1:{server.port}"
    game_id = await _finished_game(url)
    pid = _worker_pid(server)
    reader = await Peer.connect(url, "reader")
    os.kill(pid, signal.SIGSTOP)  # so that the request is surely in the worker when it dies
    await reader.send(GetGame(game_id=game_id, id=77))
    async with asyncio.timeout(HANG_S):  # guards a hang only: the request reaches the worker's pipe
        while server._history_pending == 0:
            await asyncio.sleep(0.01)
    with caplog.at_level(logging.WARNING, logger="gamenight.server"):
        os.kill(pid, signal.SIGKILL)
        failed = await reader.wait(lambda m: m.id == 77)
        assert failed.type == "error" and failed.code == "rate_limited" and failed.retry_after_ms == HISTORY_RETRY_MS
        answered = await reader.request(GetGame, game_id=game_id)
    assert answered.type == "game" and answered.record["game_id"] == game_id
    assert _worker_pid(server) != pid
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    await reader.close()


def test_a_replay_is_computed_once_for_repeated_requests(tmp_path, monkeypatch):
    """get_game of the same finished game twice replays it once (the replay cache) and returns the same frames."""
    from gamenight.server import history_service

    store = Store(str(tmp_path / "g.db"))
    finished = GameFinished("R", 1, "othello", {}, [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "bo"}], {}, [], "")
    store.write([finished])
    game_id = store.list_games()[0]["game_id"]
    replays, original = [], history_service.replay_frames

    def counted(record):
        replays.append(record["game_id"])
        return original(record)

    monkeypatch.setattr(history_service, "replay_frames", counted)
    service = history_service.HistoryService(store)
    first = service.answer(GetGame(game_id=game_id), "viewer")
    again = service.answer(GetGame(game_id=game_id), "viewer")
    assert first.type == again.type == "game" and first.frames == again.frames and replays == [game_id]
    store.close()


def _history_workers_below(pid: int) -> set[int]:
    """The history workers (process name `gn-history`) among the living processes below `pid` (Linux /proc)."""
    found = set()
    for child in _descendants(pid):
        try:
            if Path(f"/proc/{child}/comm").read_text().strip() == WORKER_NAME:
                found.add(child)
        except OSError:
            continue  # ended while we looked
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from Linux's /proc")
async def test_a_killed_server_leaves_no_history_worker_behind(server_process):
    """A server killed outright (SIGKILL, an OOM kill) leaves no history worker running on the host."""
    server = server_process()
    assert server.proc is not None
    peer = await Peer.connect(server.url, "reader")
    assert (await peer.request(ListGames)).type == "games"  # the first history request starts the worker
    workers = _history_workers_below(server.proc.pid)
    assert len(workers) == 1
    server.kill()
    await peer.close()

    async def all_gone() -> bool:
        return not any(_alive(pid) for pid in workers)

    await eventually(all_gone, "the history worker to notice its server is gone (it checks every second)")
