"""A node dying (SIGKILL) or Redis restarting mid-game loses no room and no move anybody saw."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from redis.asyncio import Redis

from gamenight.client.connection import Connection
from gamenight.protocol.messages import CreateRoom, Join, MakeMove, Sync
from gamenight.protocol.vocab import Role
from tests.cluster.helpers import HANG_S, eventually, listed, play_out
from tests.cluster.redisproc import RedisProcess
from tests.peer import Peer
from tests.server.serverproc import ServerProcess


async def resume(url: str, name: str, token: str) -> Peer:
    """Reconnect with a resume token, again until the node accepts it (it may still be starting or learning it)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + HANG_S
    while True:
        try:
            return await Peer.connect(url, name, resume=token)
        except Exception:
            if loop.time() > deadline:
                raise
            await asyncio.sleep(0.1)


async def test_owner_killed_mid_clocked_othello(cluster: Callable[..., ServerProcess]) -> None:
    """SIGKILL the node that owns a clocked Othello room mid-game, and drop the other player's connection during the
    handover: another node takes the room over, both players resume through another node with their tokens, the
    board holds every move they saw, and the game is played out."""
    nodes = [cluster("n1"), cluster("n2"), cluster("n3")]
    alice = await Peer.connect(nodes[0].url, "alice")
    bob = await Peer.connect(nodes[1].url, "bob")
    code = (await alice.request(CreateRoom, game="othello", options={"clock_s": 300, "increment_s": 2})).room
    assert (await alice.request(Join, room=code, seat=0)).type == "joined"
    await eventually(lambda: listed(bob, code), "the room listed on n2")
    assert (await bob.request(Join, room=code, seat=1)).type == "joined"
    state = await play_out({0: alice, 1: bob}, code, await alice.at(code, 1), [], moves=8)
    seen = list(state.moves)
    token, bob_token = alice.welcome.token, bob.welcome.token
    nodes[0].kill()  # alice's node and the room's owner
    await alice.close()
    await bob.close()  # bob's connection drops too, mid-handover; he comes back through another node
    alice = await resume(nodes[2].url, "alice", token)
    bob = await resume(nodes[2].url, "bob", bob_token)
    back = await alice.wait(lambda m: m.type == "state" and m.room == code)
    assert back.moves == seen
    assert back.clock is not None
    bob_view = await bob.wait(lambda m: m.type == "state" and m.room == code)
    assert bob_view.moves == seen and bob_view.view == back.view
    final = await play_out({0: alice, 1: bob}, code, back, [])
    assert final.status == "finished" and final.moves[: len(seen)] == seen
    assert (await bob.at(code, final.seq)).view == final.view
    for peer in (alice, bob):
        await peer.close()


@pytest.mark.slow
async def test_owner_killed_mid_tron(cluster: Callable[..., ServerProcess]) -> None:
    """SIGKILL the owner of a live Tron game: the new owner restores it paused at its last tick, restarts it once
    both riders are back on other nodes, and it runs to its end."""
    nodes = [cluster("n1"), cluster("n2"), cluster("n3")]
    one = await Peer.connect(nodes[0].url, "one")
    two = await Peer.connect(nodes[1].url, "two")
    options = {"map": "joust", "tick_ms": 150, "countdown_ms": 0}
    code = (await one.request(CreateRoom, game="tron", options=options)).room
    await one.request(Join, room=code, seat=0)
    await eventually(lambda: listed(two, code), "the room listed on n2")
    await two.request(Join, room=code, seat=1)
    seen = [await one.expect("tick") for _ in range(3)]
    tokens = [one.welcome.token, two.welcome.token]
    nodes[0].kill()
    await one.close()
    await two.close()
    one = await resume(nodes[2].url, "one", tokens[0])
    two = await resume(nodes[1].url, "two", tokens[1])
    restarted = await one.wait(lambda m: m.type == "state" and m.room == code and m.status == "playing")
    assert restarted.view["tick"] >= seen[-1].view["tick"]
    over = await one.expect("event", kind="game_over")
    assert over.data["reason"] == "crash"
    for peer in (one, two):
        await peer.close()


async def test_redis_restart_mid_game_loses_nothing(cluster: Callable[..., ServerProcess], redis_server: RedisProcess):
    """Redis restarts empty mid-game: the nodes reconnect, re-take their rooms and the game goes on to its end
    across nodes, with every move kept."""
    nodes = [cluster("n1"), cluster("n2")]
    alice = await Peer.connect(nodes[0].url, "alice")
    bob = await Peer.connect(nodes[1].url, "bob")
    code = (await alice.request(CreateRoom, game="othello", options={})).room
    await alice.request(Join, room=code, seat=0)
    await eventually(lambda: listed(bob, code), "the room listed on n2")
    await bob.request(Join, room=code, seat=1)
    state = await play_out({0: alice, 1: bob}, code, await alice.at(code, 1), [], moves=6)
    seen = list(state.moves)
    redis_server.restart()
    final = await play_out({0: alice, 1: bob}, code, state, [])
    assert final.status == "finished" and final.moves[:6] == seen
    assert (await bob.at(code, final.seq)).moves == final.moves
    await eventually(lambda: listed(bob, code), "the room listed again on n2 after the restart")
    for peer in (alice, bob):
        await peer.close()


@pytest.mark.slow
async def test_node_restarted_under_its_old_id_gets_its_rooms_run_again(cluster: Callable[..., ServerProcess]):
    """A node killed and started again at once under the same --node-id (before its lease expired): its rooms are
    run again (by it or another node) and the players finish the game."""
    nodes = [cluster("n1"), cluster("n2")]
    alice = await Peer.connect(nodes[0].url, "alice")
    bob = await Peer.connect(nodes[1].url, "bob")
    code = (await alice.request(CreateRoom, game="othello", options={})).room
    await alice.request(Join, room=code, seat=0)
    await eventually(lambda: listed(bob, code), "the room listed on n2")
    await bob.request(Join, room=code, seat=1)
    state = await play_out({0: alice, 1: bob}, code, await alice.at(code, 1), [], moves=4)
    seen = list(state.moves)
    token = alice.welcome.token
    nodes[0].kill()
    await alice.close()
    again = cluster("n1")
    alice = await resume(again.url, "alice", token)
    back = await alice.wait(lambda m: m.type == "state" and m.room == code)
    assert back.moves == seen
    final = await play_out({0: alice, 1: bob}, code, back, [])
    assert final.status == "finished" and final.moves[:4] == seen
    for peer in (alice, bob):
        await peer.close()


async def test_a_move_sent_as_the_owner_dies_is_played_by_the_new_owner(cluster: Callable[..., ServerProcess]):
    """The player to move sends its move (once) right after the room's owner was killed, before anyone noticed:
    the edge holds it, and once another node owns the room the move is played there; both players see it."""
    nodes = [cluster("n1"), cluster("n2"), cluster("n3")]
    host = await Peer.connect(nodes[0].url, "host")
    code = (await host.request(CreateRoom, game="othello", options={})).room
    alice = await Peer.connect(nodes[1].url, "alice")
    bob = await Peer.connect(nodes[2].url, "bob")
    for peer, seat_no in ((alice, 0), (bob, 1)):
        await eventually(lambda peer=peer: listed(peer, code), "the room listed")
        assert (await peer.request(Join, room=code, seat=seat_no)).type == "joined"
    state = await play_out({0: alice, 1: bob}, code, await alice.at(code, 1), [], moves=2)
    mover = alice if state.to_move == [0] else bob
    move = (await mover.at(code, state.seq)).legal[0]
    nodes[0].kill()
    await mover.send(MakeMove(room=code, move=move, seq=state.seq))
    for peer in (alice, bob):
        after = await peer.wait(lambda m: m.type == "state" and m.room == code and m.seq > state.seq)
        assert after.moves == [*state.moves, move]
    await host.close()
    for peer in (alice, bob):
        await peer.close()


async def test_the_bundled_client_fails_over_to_another_node(cluster: Callable[..., ServerProcess]) -> None:
    """The terminal client, given one node's address, learns the cluster's nodes from `welcome`; when that node
    dies it reconnects to another by itself and resumes its session with its token: its room is there again."""
    nodes = [cluster("n1"), cluster("n2")]

    async def both_advertised() -> bool:
        probe = await Peer.connect(nodes[0].url, "probe")
        await probe.close()
        return sorted(probe.welcome.nodes) == sorted(node.url for node in nodes)

    await eventually(both_advertised, "n1's welcome listing both nodes")
    connection = Connection(nodes[0].url, "alice", lambda message, quiet: None, first_retry=0.1, max_retry=0.5)
    running = asyncio.create_task(connection.run())

    async def welcomed(times: int) -> bool:
        return connection.connected and connection.welcomes == times

    await eventually(lambda: welcomed(1), "the first welcome")
    assert sorted(connection.addresses) == sorted(node.url for node in nodes)
    session = connection.session
    code = (await connection.request(CreateRoom(game="othello", options={}))).room
    assert (await connection.request(Join(room=code, seat=0))).type == "joined"
    nodes[0].kill()
    await eventually(lambda: welcomed(2), "a welcome from the surviving node")
    assert connection.url == nodes[1].url and connection.resumed and connection.session == session
    back = await connection.request(Sync(room=code, seq=0))
    assert back.type == "room" and back.room == code  # its room info (no game started yet): it is back
    await connection.close()
    await asyncio.wait_for(running, HANG_S)


async def test_a_room_its_creator_heard_of_survives_its_node_dying_at_once(
    cluster: Callable[..., ServerProcess], redis_server: RedisProcess
) -> None:
    """A room is confirmed to its creator only under a code already in the cluster's directory: with Redis
    holding every write back (CLIENT PAUSE), a room created and joined on n1 right before n1 is killed is found,
    taken over and restored by n2, and its creator resumes there in its seat."""
    nodes = [cluster("n1"), cluster("n2")]
    alice = await Peer.connect(nodes[0].url, "alice")
    redis = Redis.from_url(redis_server.admin_url)
    try:
        await redis.execute_command("CLIENT", "PAUSE", 1500, "WRITE")  # n1 cannot publish anything meanwhile
        code = (await alice.request(CreateRoom, game="othello", options={})).room
        assert (await alice.request(Join, room=code, seat=0)).type == "joined"
        nodes[0].kill()
        token = alice.welcome.token
        await alice.close()
        alice = await resume(nodes[1].url, "alice", token)
        back = await alice.request(Sync, room=code, seq=0)
        assert back.type == "room" and back.room == code
        assert back.seats[0].name == "alice"
    finally:
        await redis.aclose()
    await alice.close()


async def test_a_spectator_goes_on_watching_a_room_taken_over(cluster: Callable[..., ServerProcess]) -> None:
    """A spectator connected to a surviving node keeps watching when the room's owner dies: its node joins the
    room again on its behalf with the new owner, so it gets the restored state and every move after it."""
    nodes = [cluster("n1"), cluster("n2"), cluster("n3")]
    host = await Peer.connect(nodes[0].url, "host")
    code = (await host.request(CreateRoom, game="othello", options={})).room
    alice = await Peer.connect(nodes[1].url, "alice")
    bob = await Peer.connect(nodes[1].url, "bob")
    carol = await Peer.connect(nodes[2].url, "carol")
    for peer in (alice, bob, carol):
        await eventually(lambda peer=peer: listed(peer, code), "the room listed")
    assert (await alice.request(Join, room=code, seat=0)).type == "joined"
    assert (await bob.request(Join, room=code, seat=1)).type == "joined"
    assert (await carol.request(Join, room=code, role=Role.SPECTATOR)).type == "joined"
    state = await play_out({0: alice, 1: bob}, code, await alice.at(code, 1), [carol], moves=4)
    carol.inbox.clear()  # what carol saw before: the next state she gets comes after the takeover
    nodes[0].kill()
    back = await carol.wait(lambda m: m.type == "state" and m.room == code and m.seq >= state.seq)
    assert back.moves == state.moves
    final = await play_out({0: alice, 1: bob}, code, await alice.at(code, state.seq), [carol], moves=4)
    assert (await carol.at(code, final.seq)).view == final.view
    for peer in (host, alice, bob, carol):
        await peer.close()
