"""Caps that keep one person or one address from taking the server: rooms, connections, spectators, chat."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from websockets.exceptions import InvalidStatus

from gamenight.protocol.messages import Chat, CreateRoom, Join, ListRooms, MakeMove
from gamenight.server.app import GameServer, ServerConfig
from gamenight.server.guard import SharedBudget
from tests.peer import Peer, seat_pair
from tests.waiting import eventually


def _url(server: GameServer) -> str:
    return f"ws://127.0.0.1:{server.port}"


async def test_throwaway_sessions_cannot_squat_rooms_from_one_address(server_with):
    """Many fresh sessions from one address open at most `rooms_per_ip` rooms; the rest get `too_many`."""
    server = await server_with(rooms_per_ip=5)
    peers = [await Peer.connect(_url(server), f"squat{n}") for n in range(8)]
    replies = [await peer.request(CreateRoom, game="othello", options={}) for peer in peers]
    assert [r.type for r in replies] == ["room"] * 5 + ["error"] * 3
    assert {r.code for r in replies[5:]} == {"too_many"}
    late = await Peer.connect(_url(server), "late")
    assert len(late.welcome.rooms) == 5
    for peer in [*peers, late]:
        await peer.close()


async def test_one_person_hosts_a_bounded_number_of_rooms(server_with):
    """One session opens at most `rooms_per_player` rooms, whatever the address allows."""
    server = await server_with(rooms_per_player=2, rooms_per_ip=0)
    peer = await Peer.connect(_url(server), "host")
    replies = [await peer.request(CreateRoom, game="othello", options={}, private=True) for _ in range(3)]
    assert [r.type for r in replies] == ["room", "room", "error"] and replies[2].code == "too_many"
    await peer.close()


async def test_public_rooms_are_capped_but_private_ones_still_open(server_with):
    """Past `public_rooms` open public rooms a new public room gets `too_many`; a private room still opens."""
    server = await server_with(public_rooms=2, rooms_per_ip=0, rooms_per_player=0)
    peer = await Peer.connect(_url(server), "host")
    public = [await peer.request(CreateRoom, game="othello", options={}) for _ in range(3)]
    assert [r.type for r in public] == ["room", "room", "error"] and public[2].code == "too_many"
    private = await peer.request(CreateRoom, game="othello", options={}, private=True)
    assert private.type == "room"
    await peer.close()


async def test_connections_per_address_are_capped(server_with):
    """The connection past `max_connections_per_ip` is refused with HTTP 429; one closing makes room again."""
    server = await server_with(ServerConfig(port=0, ai_workers=1, max_connections_per_ip=3))
    peers = [await Peer.connect(_url(server), f"p{n}") for n in range(3)]
    with pytest.raises(InvalidStatus) as refused:
        await Peer.connect(_url(server), "one too many")
    assert refused.value.response.status_code == 429
    await peers[0].close()
    for _ in range(50):  # the server notices the close a moment later
        if server.per_ip.get("127.0.0.1", 0) < 3:
            break
        await asyncio.sleep(0.05)
    again = await Peer.connect(_url(server), "again")
    for peer in [*peers[1:], again]:
        await peer.close()


async def test_a_capped_address_is_refused_on_connecting_before_it_sends_anything(server_with, monkeypatch):
    """At its connection cap an address gets HTTP 429 with the reason once its TCP connection is accepted (after the
    refusal delay, before any request is read), and a refused client that never closes is dropped in time."""
    monkeypatch.setattr("gamenight.server.guard.REFUSED_LINGER_S", 0.3)
    server = await server_with(ServerConfig(port=0, ai_workers=1, max_connections_per_ip=1))
    holder = await Peer.connect(_url(server), "holder")
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    async with asyncio.timeout(60):  # guards a hang only: the answer needs no request, and the close no client
        answer = await reader.read()  # everything until the server's side ends, without sending a byte
        assert answer.startswith(b"HTTP/1.1 429 ") and answer.endswith(b"too many connections from your address\n")
        while True:  # the refused client lingers, sending and never closing: the server drops it in time
            writer.write(b"GET / HTTP/1.1\r\n")
            try:
                await writer.drain()
            except ConnectionError:
                break  # reset: the server's side is gone
            await asyncio.sleep(0.05)
    writer.close()
    assert server.per_ip == {"127.0.0.1": 1} and len(server.connections) == 1  # it never became a connection
    await holder.close()


async def test_a_refused_client_that_keeps_sending_is_cut_off_at_once(server_with, monkeypatch):
    """A client that floods a connection refused at the cap (a raw attacker that took the 429 for a handshake) is
    reset after a few KiB, not read for the whole linger: it costs the server a read or two, then a reconnect."""
    monkeypatch.setattr("gamenight.server.guard.REFUSED_LINGER_S", 600.0)  # only the read limit can cut it off
    server = await server_with(ServerConfig(port=0, ai_workers=1, max_connections_per_ip=1))
    holder = await Peer.connect(_url(server), "holder")
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    async with asyncio.timeout(60):  # guards a hang only
        assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 429 ")
        with pytest.raises(ConnectionError):
            while True:
                writer.write(b"\x89\x80" + b"\0" * 4094)  # masked pings' worth of bytes, as fast as taken
                await writer.drain()
                await asyncio.sleep(0.01)
    writer.close()
    assert len(server.connections) == 1
    await holder.close()


async def test_refusals_are_answered_late_and_past_the_held_cap_reset_at_once(server_with, monkeypatch):
    """A refused client gets its 429 only after `refusal_delay_s` (a flooder retrying at once is slowed to one try a
    delay); an address's connections past MAX_HELD_PER_ADDRESS waiting for theirs are reset without an answer."""
    monkeypatch.setattr("gamenight.server.guard.MAX_HELD_PER_ADDRESS", 3)
    config = ServerConfig(port=0, ai_workers=1, max_connections_per_ip=1)
    server = await server_with(replace(config, frame_limits=replace(config.frame_limits, refusal_delay_s=0.5)))
    holder = await Peer.connect(_url(server), "holder")
    loop = asyncio.get_running_loop()

    async def knock() -> tuple[bytes, float]:
        """What a new connection reads until the server's side ends, and how long after connecting that came."""
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        opened = loop.time()
        try:
            answer = await reader.read()
        except ConnectionError:
            answer = b""
        writer.close()
        return answer, loop.time() - opened

    async with asyncio.timeout(60):  # guards a hang only
        results = await asyncio.gather(*(knock() for _ in range(5)))
        answered = [waited for answer, waited in results if answer.startswith(b"HTTP/1.1 429 ")]
        assert len(answered) == 3 and min(answered) >= 0.45  # held for the delay (the clock's grain aside)
        assert sorted(answer for answer, _ in results)[:2] == [b"", b""]  # the other two: reset, nothing read
        answer, waited = await knock()  # the held ones were answered: the next refusal is held again, not reset
        assert answer.startswith(b"HTTP/1.1 429 ") and waited >= 0.45
    await holder.close()


async def test_rooms_held_only_by_squatters_close_after_the_short_grace(server_with, monkeypatch):
    """Seats taken in a game nobody moved in do not keep the room for 24 hours; a game that was played stays."""
    monkeypatch.setattr("gamenight.server.directory.EMPTY_ROOM_GRACE_S", 0.2)
    monkeypatch.setattr("gamenight.server.app.SWEEP_INTERVAL_S", 0.1)
    server = await server_with()
    url = _url(server)
    squatters = [await Peer.connect(url, "s1"), await Peer.connect(url, "s2")]
    squatted, _ = await seat_pair(*squatters)
    players = [await Peer.connect(url, "alice"), await Peer.connect(url, "bob")]
    played, state = await seat_pair(*players)
    await players[0].send(MakeMove(room=played, move=state.legal[0], seq=state.seq))
    await players[1].expect("state", seq=state.seq + 1)
    for peer in squatters + players:
        await peer.close()
    for _ in range(100):
        if squatted not in server.lobby.rooms:
            break
        await asyncio.sleep(0.05)
    assert squatted not in server.lobby.rooms and played in server.lobby.rooms


async def test_spectators_per_room_are_capped(server_with):
    """The spectator past `spectators_per_room` gets `too_many`; the players are unaffected."""
    server = await server_with(spectators_per_room=2)
    url = _url(server)
    code, _ = await seat_pair(await Peer.connect(url, "alice"), await Peer.connect(url, "bob"))
    watchers = [await Peer.connect(url, f"w{n}") for n in range(3)]
    replies = [await w.request(Join, room=code, role="spectator") for w in watchers]
    assert [r.type for r in replies] == ["joined", "joined", "error"] and replies[2].code == "too_many"


async def test_spectator_chat_cannot_drown_the_room(server_with):
    """Spectators chatting flat out share one small allowance per room; the players' own lines still go through."""
    server = await server_with(spectator_chat_per_s=1.0, player_chat_per_s=5.0)
    url = _url(server)
    alice, bob = await Peer.connect(url, "alice"), await Peer.connect(url, "bob")
    code, _ = await seat_pair(alice, bob)
    watchers = [await Peer.connect(url, f"w{n}") for n in range(4)]
    for w in watchers:
        await w.request(Join, room=code, role="spectator")
    for n in range(5):
        for w in watchers:
            await w.send(Chat(room=code, text=f"spam {n}"))
    refused = await watchers[-1].expect("error", code="rate_limited")
    assert refused.room == code
    assert 0 < refused.retry_after_ms <= 1000, "told when the room takes a line again (one a second)"
    await alice.send(Chat(room=code, text="still here"))
    await bob.wait(lambda m: m.type == "event" and m.kind == "chat" and m.data["text"] == "still here")
    relayed = [m for m in bob.seen if m.type == "event" and m.kind == "chat" and m.data["text"].startswith("spam")]
    assert len(relayed) <= 4  # about two seconds' worth of one line per second, not twenty lines


async def test_an_address_flooding_from_many_connections_is_slowed_not_refused(server_with):
    """Connections of one address share a message budget: past it their requests are answered later (not refused)."""
    server = await server_with(ServerConfig(port=0, ai_workers=1, messages_per_ip_per_s=2.0))
    peers = [await Peer.connect(_url(server), f"p{n}") for n in range(4)]  # 4 hellos spent 4 of the 8 at once
    started = asyncio.get_running_loop().time()
    for peer in peers:
        for k in range(3):
            await peer.send(ListRooms(id=100 + k))
    replies = [await peer.wait(lambda m, k=k: m.id == 100 + k) for peer in peers for k in range(3)]
    assert {r.type for r in replies} == {"rooms"}
    # 12 requests, 4 tokens left: the other 8 came in at 2 a second, so no sooner than ~4 s.
    assert asyncio.get_running_loop().time() - started >= 3.0
    for peer in peers:
        await peer.close()


async def test_a_flooding_address_whose_connections_closed_gets_its_places_back_at_once(server_with, monkeypatch):
    """Connections over their address's message budget that close are let go with what they left queued unread, so
    a flooder that quits does not hold its address's connection places while its backlog drains at the budget."""
    server = await server_with(ServerConfig(port=0, ai_workers=1, messages_per_ip_per_s=2.0))
    handled: list[object] = []
    receive = server.receive

    def counting(ws, session, frame):
        handled.append(ws)
        return receive(ws, session, frame)

    monkeypatch.setattr(server, "receive", counting)
    flooders = [await Peer.connect(_url(server), f"f{n}") for n in range(3)]
    for flooder in flooders:
        for k in range(30):  # 90 requests at an address allowed 2 a second: most wait, queued in the server
            await flooder.send(ListRooms(id=k))
    await flooders[0].wait(lambda m: m.id == 0)  # the budget is serving them
    for flooder in flooders:
        flooder.ws.transport.abort()  # gone, without a close handshake, like a killed process
    at_close = len(handled)

    async def released() -> bool:
        return "127.0.0.1" not in server.per_ip

    await eventually(released, "the flooders' connections to be let go")
    # Each may have had one request past its turn, and up to 4 more read before the server saw it close (websockets
    # reads on only once its queue is below a quarter of max_queue, 16); without the drop, all 90 are served.
    assert len(handled) - at_close <= 5 * len(flooders)


async def test_an_address_budget_serves_its_connections_in_turn_and_skips_those_gone():
    """Connections waiting on their address's budget are let through first come first served, one per token; a
    connection that closed while waiting takes no token from the others."""
    budget = SharedBudget(rate=200.0)
    budget.bucket.tokens = 0.0  # spent: everyone waits
    order: list[int] = []

    async def connection(n: int) -> None:
        await budget.turn()
        order.append(n)

    tasks = [asyncio.create_task(connection(n)) for n in range(6)]
    await asyncio.sleep(0)  # all six queue, in order
    tasks[2].cancel()
    await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 60)
    assert order == [0, 1, 3, 4, 5]
    assert not budget.waiters and budget._timer is None
    budget.close()


def test_the_limits_are_set_from_the_command_line():
    """`gamenight-server --limit NAME=VALUE` sets a server, lobby or frame limit; an unknown name is an error."""
    from gamenight.server.__main__ import apply_limits, parse_args

    args = parse_args(["--limit", "rooms_per_ip=3", "--limit", "max-backlog=4096", "--limit", "rate=5"])
    config = apply_limits(ServerConfig(), args.limit)
    assert config.lobby_limits.rooms_per_ip == 3 and config.frame_limits.max_backlog == 4096 and config.rate == 5
    with pytest.raises(SystemExit):
        parse_args(["--limit", "rooms=3"])


@pytest.mark.parametrize(
    ("remote", "counted_as"),
    [
        (("203.0.113.7", 5000), "203.0.113.7"),
        (("2001:db8:1:2:aaaa::1", 5000, 0, 0), "2001:db8:1:2::/64"),
        (("2001:db8:1:2:ffff::9", 5000, 0, 0), "2001:db8:1:2::/64"),
        (("::ffff:198.51.100.4", 5000, 0, 0), "198.51.100.4"),
    ],
)
def test_an_ipv6_network_counts_as_one_address(remote, counted_as):
    """The per-address caps count an IPv6 /64 (which one host usually holds) as one address, IPv4 as itself."""
    from gamenight.server.app import _address

    class Remote:
        remote_address = remote

    assert _address(Remote()) == counted_as  # type: ignore[arg-type]
