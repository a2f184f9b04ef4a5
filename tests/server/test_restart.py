"""A server killed with SIGKILL mid-game comes back with every game, and players resume with their tokens."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from gamenight.protocol import PROTOCOL_VERSION
from gamenight.protocol.messages import AddAi, CreateRoom, Join, MakeMove
from tests.peer import Peer
from tests.server.serverproc import ServerProcess


async def _play(players: dict[int, Peer], code: str, state, rng: random.Random, plies: int | None):
    """Play random legal moves (all of them, or `plies`); returns the last state and the moves made."""
    made = []
    while state.status == "playing" and (plies is None or len(made) < plies):
        mover = players[state.to_move[0]]
        move = rng.choice((await mover.at(code, state.seq)).legal)
        await mover.send(MakeMove(room=code, move=move, seq=state.seq))
        made.append(move)
        state = await players[0].wait(lambda m, s=state.seq: m.type == "state" and m.seq > s)
    return state, made


async def _kill_and_restart(server_process, first: ServerProcess, *peers: Peer) -> tuple[ServerProcess, list[str]]:
    """SIGKILL the server, drop its peers, start a new server on the same database; returns it and their tokens."""
    tokens = [peer.welcome.token for peer in peers]
    first.kill()
    for peer in peers:
        await peer.close()
    return server_process(), tokens


@pytest.mark.parametrize("game", ["othello", "pentago"])
async def test_sigkill_mid_game_then_resume_and_finish(server_process, game):
    """After SIGKILL and a restart on the same database, both players resume their seats and finish the game."""
    first = server_process()
    alice = await Peer.connect(first.url, "alice")
    bob = await Peer.connect(first.url, "bob")
    room = await alice.request(CreateRoom, game=game, options={})
    await alice.request(Join, room=room.room, seat=0)
    await bob.request(Join, room=room.room, seat=1)
    state = await alice.expect("state")
    rng = random.Random(11)
    state, before = await _play({0: alice, 1: bob}, room.room, state, rng, plies=10)
    board_before = state.view["board"]
    second, tokens = await _kill_and_restart(server_process, first, alice, bob)
    alice = await Peer.connect(second.url, "alice", resume=tokens[0])
    bob = await Peer.connect(second.url, "bob", resume=tokens[1])
    resumed = await alice.expect("state")
    await bob.expect("state")
    assert resumed.moves == before and resumed.view["board"] == board_before
    final, after = await _play({0: alice, 1: bob}, room.room, resumed, rng, plies=None)
    assert final.status == "finished" and final.result is not None
    assert final.moves == before + after
    await alice.close()
    await bob.close()
    assert second.stop() == 0


async def test_unknown_resume_token_is_refused(server_process):
    """A resume token the server never issued gets `bad_token`."""
    proc = server_process()
    from websockets.asyncio.client import connect

    from gamenight.protocol.messages import Hello

    peer = Peer(await connect(proc.url))
    await peer.send(Hello(protocol=PROTOCOL_VERSION, name="mallory", resume="not-a-real-token", id=1))
    error = await peer.expect("error")
    assert error.code == "bad_token" and error.id == 1
    await peer.close()


async def test_sigkill_mid_tron_game_restores_paused_then_counts_down(server_process):
    """A live Tron game killed mid-game comes back paused at its last tick and restarts once both players resume."""
    first = server_process()
    one = await Peer.connect(first.url, "one")
    two = await Peer.connect(first.url, "two")
    options = {"map": "joust", "tick_ms": 150, "countdown_ms": 0}  # both ride ~22 squares before a wall
    room = await one.request(CreateRoom, game="tron", options=options)
    await one.request(Join, room=room.room, seat=0)
    await two.request(Join, room=room.room, seat=1)
    await one.expect("state")
    seen = [await one.expect("tick") for _ in range(3)]
    second, tokens = await _kill_and_restart(server_process, first, one, two)
    one = await Peer.connect(second.url, "one", resume=tokens[0])
    paused = await one.expect("state")
    assert paused.status == "paused"
    assert seen[-1].view["tick"] <= paused.view["tick"] <= seen[-1].view["tick"] + 1
    two = await Peer.connect(second.url, "two", resume=tokens[1])
    restarted = await one.wait(lambda m: m.type == "state" and m.status == "playing")
    assert restarted.view["tick"] == paused.view["tick"] and restarted.next_tick_ms == 150  # no countdown, one tick
    nxt = await one.expect("tick")
    assert nxt.view["tick"] == paused.view["tick"] + 1
    over = await one.expect("event", kind="game_over")
    assert over.data["reason"] == "crash"
    await one.close()
    await two.close()


async def test_host_keeps_the_rooms_controls_after_a_restart(server_process):
    """After a restart the room's creator, not whoever sits first, is still the one who may seat an AI."""
    first = server_process()
    host = await Peer.connect(first.url, "host")
    guest = await Peer.connect(first.url, "guest")
    room = await host.request(CreateRoom, game="tron", options={"players": 3, "countdown_ms": 0})
    await guest.request(Join, room=room.room, seat=0)
    await host.request(Join, room=room.room, seat=1)
    second, tokens = await _kill_and_restart(server_process, first, host, guest)
    host = await Peer.connect(second.url, "host", resume=tokens[0])
    guest = await Peer.connect(second.url, "guest", resume=tokens[1])
    refused = await guest.request(AddAi, room=room.room, level=1)
    assert refused.type == "error" and refused.code == "not_allowed"
    seated = await host.request(AddAi, room=room.room, level=1)
    assert seated.type == "room" and seated.host == "host"
    await host.close()
    await guest.close()
    assert second.stop() == 0


HANG_S = 60.0
"""How long the process-tree test waits for a change before calling it a hang (not a speed target)."""


def _descendants(pid: int) -> set[int]:
    """Every living process below `pid` (from /proc: the AI forkserver, its workers, the resource tracker)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the process ended while we looked
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from Linux's /proc")
def test_a_killed_server_leaves_no_ai_workers_behind(server_process):
    """A server killed outright (SIGKILL, an OOM kill) leaves no AI worker or forkserver running on the host,
    even when it dies while its workers are still starting."""
    server = server_process()
    assert server.proc is not None
    deadline = time.monotonic() + HANG_S
    while len(helpers := _descendants(server.proc.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)  # until the forkserver and the first worker appear
    assert len(helpers) >= 2, "the server never started its AI workers"
    server.kill()
    deadline = time.monotonic() + HANG_S  # the workers check every second; this only guards a hang
    while any(_alive(pid) for pid in helpers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in helpers if _alive(pid)]
