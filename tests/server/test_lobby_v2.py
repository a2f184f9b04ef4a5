"""The version 2 lobby: paged and filtered listing, a bounded welcome, pushes only to watchers and batched, and
the rules that keep deserted rooms out of the listing and close rooms with nothing to wait for."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import msgpack
import pytest
from websockets.asyncio.client import connect

from gamenight.protocol import PROTOCOL_VERSION, decode, encode
from gamenight.protocol.codec import MAX_SERVER_FRAME
from gamenight.protocol.messages import (
    MAX_ROOMS_PAGE,
    ROOMS_PAGE,
    CreateRoom,
    Hello,
    Join,
    Leave,
    ListRooms,
    LobbyUpdate,
    LobbyWatch,
    MakeMove,
    Resign,
)
from gamenight.protocol.vocab import RoomStatus
from gamenight.server.admission import LobbyLimits
from gamenight.server.app import GameServer, ServerConfig
from gamenight.server.directory import EMPTY_ROOM_GRACE_S, PROMPT_CLOSE_S
from gamenight.server.lobby import Lobby
from tests.peer import Peer, raw_message
from tests.server.serverproc import NO_ROOM_CAPS

HANG_GUARD_S = 60.0


async def pushes_until(peer: Peer, done) -> list[LobbyUpdate]:
    """The `lobby` pushes (not replies) `peer` receives until `done(pushes)` holds (hang guard: 60 s)."""
    pushes: list[LobbyUpdate] = []

    async def collect() -> None:
        while not done(pushes):
            pushes.append(await peer.wait(lambda m: m.type == "lobby" and m.id is None))

    await asyncio.wait_for(collect(), HANG_GUARD_S)
    return pushes


def listed(pushes: list[LobbyUpdate]) -> dict[str, RoomStatus]:
    """What the pushes say is listed now: each room's latest status, rooms gone removed."""
    rooms: dict[str, RoomStatus] = {}
    for push in pushes:
        for summary in push.rooms:
            rooms[summary.room] = summary.status
        for code in push.gone:
            rooms.pop(code, None)
    return rooms


async def test_a_client_that_does_not_watch_gets_no_lobby_pushes(server_process):
    """Room changes reach only clients that sent lobby_watch: a client in no room that did not ask, or that
    turned it off, gets nothing."""
    server = server_process(*NO_ROOM_CAPS)
    quiet = await Peer.connect(server.url, "quiet")
    watcher = await Peer.connect(server.url, "watcher")
    leaver = await Peer.connect(server.url, "leaver")
    assert (await watcher.request(LobbyWatch, on=True)).watching
    assert (await leaver.request(LobbyWatch, on=True)).watching
    host = await Peer.connect(server.url, "host")
    room = await host.request(CreateRoom, game="othello", options={})
    await pushes_until(watcher, lambda pushes: room.room in listed(pushes))
    await pushes_until(leaver, lambda pushes: room.room in listed(pushes))
    await quiet.request(ListRooms)  # a push sent to `quiet` with the watcher's would have arrived before this reply
    assert not [m for m in quiet.seen if m.type in ("lobby", "room")]
    assert (await leaver.request(LobbyWatch, on=False)).watching is False
    leaver.seen.clear()
    second = await host.request(CreateRoom, game="othello", options={})
    await pushes_until(watcher, lambda pushes: second.room in listed(pushes))
    assert (await leaver.request(ListRooms)).total == 2
    assert not [m for m in leaver.seen if m.type == "lobby" and m.id is None]
    for peer in (quiet, watcher, leaver, host):
        await peer.close()


@pytest.fixture
async def held_pushes(monkeypatch) -> AsyncIterator[GameServer]:
    """An in-process server whose lobby pushes go out only when the test ends an interval (it lasts an hour), and
    whose rooms with nothing to wait for close at the next sweep (a tenth of a second)."""
    monkeypatch.setattr("gamenight.server.directory.PROMPT_CLOSE_S", 0.1)
    monkeypatch.setattr("gamenight.server.app.SWEEP_INTERVAL_S", 0.1)
    limits = LobbyLimits(rooms_per_ip=0, rooms_per_player=0)
    server = GameServer(ServerConfig(port=0, ai_workers=1, lobby_batch_s=3600.0, lobby_limits=limits))
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


async def until(condition, what: str) -> None:
    """Wait (hang guard: 60 s) until `condition()` holds."""
    async with asyncio.timeout(HANG_GUARD_S):
        while not condition():
            await asyncio.sleep(0.02)
    assert condition(), what


async def test_a_watcher_gets_one_frame_with_every_change_and_removals(held_pushes):
    """Several rooms created and one filled (three changes to it) within one interval reach a watcher as one push
    holding each room's latest summary; once its players dropped and the rooms nobody sat in closed, the next
    push lists them all as gone."""
    server = held_pushes
    url = f"ws://127.0.0.1:{server.port}"
    host, guest, watcher = [await Peer.connect(url, name) for name in ("host", "guest", "watcher")]
    await watcher.request(LobbyWatch, on=True)
    for n in range(3):
        await host.send(CreateRoom(game="othello", options={}, id=100 + n))
    codes = [(await host.wait(lambda m, n=n: m.id == 100 + n)).room for n in range(3)]
    await host.request(Join, room=codes[0], seat=0)
    await guest.request(Join, room=codes[0], seat=1)
    server._push_lobby()  # the interval ends
    pushes = await pushes_until(watcher, lambda p: len(p) == 1)
    await watcher.request(ListRooms)  # any other push would have arrived before this reply
    assert not [m for m in watcher.inbox if m.type == "lobby"]
    batch = pushes[0]
    assert sorted(s.room for s in batch.rooms) == sorted(codes) and batch.gone == []  # each room once
    assert next(s for s in batch.rooms if s.room == codes[0]).status == RoomStatus.PLAYING  # its latest summary
    assert batch.counts is not None and batch.counts.rooms == 3 and batch.counts.of("othello", "playing") == 1
    await guest.close()
    await host.close()
    lobby = server.lobby
    await until(
        lambda: not lobby.listing.listing() and not set(codes[1:]) & set(lobby.rooms), "the rooms unlisted, closed"
    )
    assert codes[0] in lobby.rooms  # a game in progress waits for its players, unlisted
    server._push_lobby()
    (gone,) = await pushes_until(watcher, lambda p: len(p) == 1)
    assert sorted(gone.gone) == sorted(codes) and gone.rooms == [] and gone.counts.rooms == 0
    await watcher.close()


async def test_list_rooms_pages_and_filters_with_a_total(server_process):
    """list_rooms returns `limit` rooms from `offset` of the listing (waiting rooms first), filtered by game and
    status, with the total that matches; paging to the end visits every room once."""
    server = server_process(*NO_ROOM_CAPS)
    host = await Peer.connect(server.url, "host")
    guest = await Peer.connect(server.url, "guest")
    othello = [(await host.request(CreateRoom, game="othello", options={})).room for _ in range(5)]
    connect4 = [(await host.request(CreateRoom, game="connect4", options={})).room for _ in range(3)]
    await host.request(Join, room=othello[0], seat=0)
    await guest.request(Join, room=othello[0], seat=1)
    await host.expect("state", room=othello[0])
    reader = await Peer.connect(server.url, "reader")
    assert reader.welcome.counts.rooms == 8 and reader.welcome.counts.of("connect4") == 3
    first = await reader.request(ListRooms, limit=3)
    assert (first.total, first.offset, len(first.rooms)) == (8, 0, 3)
    seen: list[str] = []
    for offset in range(0, 9, 3):
        page = await reader.request(ListRooms, offset=offset, limit=3)
        seen += [s.room for s in page.rooms]
    assert sorted(seen) == sorted(othello + connect4)
    assert seen[-1] == othello[0]  # the game in progress comes after every waiting room
    games = await reader.request(ListRooms, game="connect4")
    assert games.total == 3 and {s.room for s in games.rooms} == set(connect4)
    playing = await reader.request(ListRooms, status="playing")
    assert playing.total == 1 and playing.rooms[0].room == othello[0]
    both = await reader.request(ListRooms, game="othello", status="waiting", offset=2, limit=10)
    assert both.total == 4 and len(both.rooms) == 2
    beyond = await reader.request(ListRooms, offset=50)
    assert beyond.total == 8 and beyond.rooms == []
    for peer in (host, guest, reader):
        await peer.close()


async def test_list_rooms_refuses_bad_values_with_the_request_id(server_process):
    """A limit outside 1-100, a negative offset, an unknown game or the status `closed` get bad_options with the
    request's id; a wrongly typed field gets bad_message with it."""
    server = server_process()
    peer = await Peer.connect(server.url, "pager")
    cases = [
        {"limit": 0},
        {"limit": MAX_ROOMS_PAGE + 1},
        {"offset": -1},
        {"game": "chess"},
        {"status": "closed"},
    ]
    for n, fields in enumerate(cases):
        await peer.send(raw_message(type="list_rooms", id=500 + n, **fields))
        reply = await peer.wait(lambda m, n=n: m.id == 500 + n)
        assert (reply.type, reply.code) == ("error", "bad_options"), fields
    await peer.send_raw(msgpack.packb({"type": "list_rooms", "id": 600, "limit": "many"}))
    reply = await peer.wait(lambda m: m.id == 600)
    assert (reply.type, reply.code) == ("error", "bad_message")
    assert (await peer.request(ListRooms, limit=MAX_ROOMS_PAGE)).type == "rooms"
    await peer.close()


async def test_welcome_stays_small_with_thousands_of_rooms(server_process):
    """With 2,000 public rooms open, a new client's welcome holds the first page only (and the counts), well
    under a client's frame limit; paging with list_rooms still reaches every room."""
    server = server_process(
        *NO_ROOM_CAPS,
        *("--limit", "public_rooms=0", "--limit", "rate=1000", "--limit", "burst=1000"),
        *("--limit", "messages_per_ip_per_s=0"),
    )
    hosts = [await Peer.connect(server.url, f"host{n}") for n in range(20)]
    for host in hosts:
        for k in range(100):
            await host.send(CreateRoom(game="othello" if k % 2 else "connect4", options={}, id=10_000 + k))
    for host in hosts:
        for k in range(100):
            assert (await host.wait(lambda m, k=k: m.id == 10_000 + k)).type == "room"
    async with connect(server.url, max_size=MAX_SERVER_FRAME) as ws:
        await ws.recv()  # the hello_nonce
        await ws.send(encode(Hello(protocol=PROTOCOL_VERSION, name="newcomer")))
        frame = await asyncio.wait_for(ws.recv(), HANG_GUARD_S)
    welcome = decode(frame, MAX_SERVER_FRAME)
    assert welcome.type == "welcome" and len(welcome.rooms) == ROOMS_PAGE
    assert welcome.counts.rooms == 2000 and welcome.counts.of("othello", "waiting") == 1000
    assert len(frame) < 64 * 1024
    reader = await Peer.connect(server.url, "reader")
    codes: set[str] = set()
    for offset in range(0, 2000, MAX_ROOMS_PAGE):
        page = await reader.request(ListRooms, offset=offset, limit=MAX_ROOMS_PAGE)
        assert page.total == 2000
        codes |= {s.room for s in page.rooms}
    assert len(codes) == 2000
    for peer in [*hosts, reader]:
        await peer.close()


async def test_a_room_whose_players_all_dropped_is_not_listed_until_one_is_back(server_process):
    """A room whose seated person lost the connection leaves the listing (a push says gone) and comes back to it
    when that person resumes."""
    server = server_process(*NO_ROOM_CAPS)
    host = await Peer.connect(server.url, "host")
    room = (await host.request(CreateRoom, game="othello", options={})).room
    await host.request(Join, room=room, seat=0)
    watcher = await Peer.connect(server.url, "watcher")
    await watcher.request(LobbyWatch, on=True)
    assert room in [s.room for s in (await watcher.request(ListRooms)).rooms]
    await host.close()
    await pushes_until(watcher, lambda p: room in {c for push in p for c in push.gone})
    assert (await watcher.request(ListRooms)).total == 0
    assert watcher.welcome.counts.rooms == 1 and (await watcher.request(LobbyWatch, on=True)).counts.rooms == 0
    back = await Peer.connect(server.url, "host", resume=host.welcome.token)
    await pushes_until(watcher, lambda p: room in listed(p))
    assert [s.room for s in (await watcher.request(ListRooms)).rooms] == [room]
    for peer in (back, watcher):
        await peer.close()


# -- the closing rules, on the lobby itself with a fake clock -------------------------------------------------


def _lobby() -> tuple[Lobby, str, str]:
    """A lobby with two connected people (at time 0): their sessions."""
    lobby = Lobby(limits=LobbyLimits())
    ann, _ = lobby.hello(Hello(protocol=PROTOCOL_VERSION, name="ann"), 0.0)
    bob, _ = lobby.hello(Hello(protocol=PROTOCOL_VERSION, name="bob"), 0.0)
    return lobby, ann.session, bob.session


def _open(lobby: Lobby, session: str, now: float = 0.0) -> str:
    """A public Othello room `session` hosts; its code."""
    out = lobby.handle(session, CreateRoom(game="othello", options={}, id=1), now)
    return next(s.message.room for s in out.sends if s.message.type == "room")


def test_a_room_whose_host_left_without_sitting_down_closes_promptly():
    """A room nobody sat in closes PROMPT_CLOSE_S after its host disconnected (nothing to wait for)."""
    lobby, ann, _ = _lobby()
    code = _open(lobby, ann)
    lobby.disconnect(ann, 1.0)
    lobby.sweep(PROMPT_CLOSE_S - 0.5)
    assert code in lobby.rooms
    lobby.sweep(PROMPT_CLOSE_S + 0.5)
    assert code not in lobby.rooms


def test_a_room_whose_host_is_still_connected_keeps_the_usual_grace():
    """A room its connected host has not sat in yet stays open past PROMPT_CLOSE_S, until the empty-room grace."""
    lobby, ann, _ = _lobby()
    code = _open(lobby, ann)
    lobby.sweep(PROMPT_CLOSE_S + 1.0)
    assert code in lobby.rooms
    lobby.sweep(EMPTY_ROOM_GRACE_S + 0.5)
    assert code not in lobby.rooms


def test_a_finished_game_everybody_left_closes_promptly():
    """After the game ends and both players' connections drop, the room closes PROMPT_CLOSE_S later."""
    lobby, ann, bob = _lobby()
    code = _open(lobby, ann)
    lobby.handle(ann, Join(room=code, seat=0, id=2), 0.0)
    lobby.handle(bob, Join(room=code, seat=1, id=3), 0.0)
    lobby.handle(ann, MakeMove(room=code, move="d3", id=4), 1.0)
    lobby.handle(bob, Resign(room=code, id=5), 2.0)
    assert lobby.rooms[code].status == RoomStatus.FINISHED
    lobby.disconnect(ann, 3.0)
    lobby.disconnect(bob, 3.0)
    lobby.sweep(3.0 + PROMPT_CLOSE_S - 0.5)
    assert code in lobby.rooms
    lobby.sweep(3.0 + PROMPT_CLOSE_S + 0.5)
    assert code not in lobby.rooms


def test_a_game_in_progress_waits_for_its_dropped_players():
    """A played game whose players both dropped is held (not listed) long past PROMPT_CLOSE_S and the empty grace."""
    lobby, ann, bob = _lobby()
    code = _open(lobby, ann)
    lobby.handle(ann, Join(room=code, seat=0, id=2), 0.0)
    lobby.handle(bob, Join(room=code, seat=1, id=3), 0.0)
    lobby.handle(ann, MakeMove(room=code, move="d3", id=4), 1.0)
    lobby.disconnect(ann, 2.0)
    lobby.disconnect(bob, 2.0)
    lobby.sweep(2.0 + EMPTY_ROOM_GRACE_S * 2)
    assert code in lobby.rooms and code not in [s.room for s in lobby.listing.listing()]


def test_a_waiting_room_whose_player_dropped_is_hidden_then_closes_after_the_grace():
    """A seated person who dropped before the game started may come back: the room is hidden from the listing
    but kept for the empty-room grace, not closed promptly."""
    lobby, ann, _ = _lobby()
    code = _open(lobby, ann)
    lobby.handle(ann, Join(room=code, seat=0, id=2), 0.0)
    lobby.disconnect(ann, 1.0)
    assert code not in [s.room for s in lobby.listing.listing()] and lobby.listing.counts().rooms == 0
    lobby.sweep(1.0 + PROMPT_CLOSE_S + 1.0)
    assert code in lobby.rooms
    lobby.sweep(1.0 + EMPTY_ROOM_GRACE_S + 0.5)
    assert code not in lobby.rooms


def test_a_batch_coalesces_changes_and_goes_to_watchers_only():
    """The lobby's next push holds each changed room once (its latest summary) and the rooms gone, and is
    addressed to the watchers alone; with nobody watching there is no push at all."""
    lobby, ann, bob = _lobby()
    lobby.listing.batch(lobby.presence.info)  # the hellos' count change, with nobody watching: dropped
    assert lobby.listing.batch(lobby.presence.info) is None
    lobby.handle(bob, LobbyWatch(on=True, id=9), 0.0)
    first, second = _open(lobby, ann), _open(lobby, ann)
    lobby.handle(ann, Join(room=first, seat=0, id=2), 0.0)
    lobby.handle(ann, Leave(room=first, id=3), 0.0)
    lobby.handle(ann, Join(room=second, seat=0, id=4), 0.0)
    lobby.disconnect(ann, 0.0)
    batch = lobby.listing.batch(lobby.presence.info)
    assert batch is not None
    to, update = batch
    assert to == {bob}
    assert [s.room for s in update.rooms] == [first] and update.gone == [second]
    assert update.counts is not None and update.counts.rooms == 1 and update.counts.online == 1
    assert lobby.listing.batch(lobby.presence.info) is None
