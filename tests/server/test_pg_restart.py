"""End to end on PostgreSQL: a real server process on `--db postgresql://...`, killed and restarted on that database."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator

import pytest

from gamenight.protocol.messages import CreateRoom, GetGame, Join, ListGames, MakeMove, Resign
from tests.peer import Peer
from tests.server.serverproc import ServerProcess


@pytest.fixture
def pg_servers(pg_url: str) -> Iterator[list[ServerProcess]]:
    """The server processes a test starts on its PostgreSQL database; killed after it if still running."""
    started: list[ServerProcess] = []
    yield started
    for proc in started:
        if proc.proc is not None and proc.proc.poll() is None:
            proc.kill()


async def test_sigkill_then_restart_on_postgres_resumes_the_exact_board(
    pg_url: str, pg_servers: list[ServerProcess]
) -> None:
    """On PostgreSQL a server killed mid-game restarts with the board exact (tokens resume); the game replays after."""
    first = ServerProcess(pg_url).start()
    pg_servers.append(first)
    alice = await Peer.connect(first.url, "alice")
    bob = await Peer.connect(first.url, "bob")
    room = await alice.request(CreateRoom, game="othello", options={})
    await alice.request(Join, room=room.room, seat=0)
    await bob.request(Join, room=room.room, seat=1)
    state = await alice.expect("state")
    players, rng, made = {0: alice, 1: bob}, random.Random(7), []
    while len(made) < 8:
        mover = players[state.to_move[0]]
        move = rng.choice((await mover.at(room.room, state.seq)).legal)
        await mover.send(MakeMove(room=room.room, move=move, seq=state.seq))
        made.append(move)
        state = await alice.wait(lambda m, s=state.seq: m.type == "state" and m.seq > s)
    tokens = [alice.welcome.token, bob.welcome.token]
    first.kill()
    await alice.close()
    await bob.close()

    second = ServerProcess(pg_url).start()
    pg_servers.append(second)
    alice = await Peer.connect(second.url, "alice", resume=tokens[0])
    bob = await Peer.connect(second.url, "bob", resume=tokens[1])
    resumed = await alice.expect("state")
    await bob.expect("state")
    assert resumed.moves == made and resumed.view["board"] == state.view["board"] and resumed.seq == state.seq
    await bob.send(Resign(room=room.room))
    await alice.expect("event", kind="game_over")
    listed = await alice.request(ListGames, player="bob")
    assert listed.type == "games" and [g["game"] for g in listed.games] == ["othello"]
    game_id = listed.games[0]["game_id"]
    replay = await alice.request(GetGame, game_id=game_id)  # read and replayed in the history worker, on PostgreSQL
    assert replay.type == "game" and replay.record["moves"] == made and len(replay.frames) == len(made) + 1
    await alice.close()
    await bob.close()
    assert second.stop() == 0
    out = subprocess.run(
        [sys.executable, "-m", "gamenight.server", "--db", pg_url, "export", str(game_id)],
        capture_output=True,
        text=True,
        check=True,
    )
    exported = json.loads(out.stdout)
    assert exported["moves"] == made and exported["result"]["reason"] == "resign"


def test_a_server_given_an_unreachable_postgres_says_so_in_one_line() -> None:
    """`--db postgresql://...` naming no running server: the server exits 2 with one line, the password hidden
    (given in the environment, as docs/cluster.md says; given in the URL, a warning line first says it is on the
    command line)."""
    from tests.pg import free_port

    port = free_port()
    for url, env, lines in (
        (f"postgresql://gamenight@127.0.0.1:{port}/games", {"PGPASSWORD": "s3cret"}, 1),
        (f"postgresql://gamenight:s3cret@127.0.0.1:{port}/games", {}, 2),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "gamenight.server", "--port", "0", "--db", url],
            capture_output=True,
            text=True,
            env={**os.environ, **env},
        )
        assert done.returncode == 2
        assert done.stderr.count("\n") == lines and "cannot use the database" in done.stderr.splitlines()[-1]
        assert "s3cret" not in done.stderr
