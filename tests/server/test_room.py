"""The sans-I/O referee: rooms and the lobby decide everything from messages and times, no sockets needed."""

from __future__ import annotations

import pytest

from gamenight.protocol import PROTOCOL_VERSION
from gamenight.protocol.messages import CreateRoom, Hello, Join, Leave, MakeMove, Rematch, Resign
from gamenight.server.directory import EMPTY_ROOM_GRACE_S
from gamenight.server.lobby import Lobby
from gamenight.server.records import (
    GameFinished,
    GameStarted,
    MoveRecorded,
    RoomClosed,
    RoomSaved,
    SeatSaved,
    StoredRoom,
)


def _client(lobby: Lobby, name: str):
    """Say hello and return the new session id."""
    client, _ = lobby.hello(Hello(protocol=PROTOCOL_VERSION, name=name), now=0.0)
    return client.session


def _sent(out, type_: str):
    """The messages of one type an outbox would send, with their recipients."""
    return [(send.to, send.message) for send in out.sends if send.message.type == type_]


def _game(lobby: Lobby, **options):
    """A lobby with an Othello room and two seated players; returns (room, alice, bob)."""
    alice, bob = _client(lobby, "alice"), _client(lobby, "bob")
    out = lobby.handle(alice, CreateRoom(game="othello", options=options), 0.0)
    code = _sent(out, "room")[0][1].room
    lobby.handle(alice, Join(room=code, seat=0), 0.0)
    lobby.handle(bob, Join(room=code, seat=1), 0.0)
    return lobby.rooms[code], alice, bob


def test_a_move_is_recorded_before_it_is_announced():
    """Applying a move yields its MoveRecorded record and one `moved` for each player (legal for the next mover)."""
    lobby = Lobby()
    room, alice, bob = _game(lobby)
    out = lobby.handle(alice, MakeMove(room=room.code, move="d3", seq=room.seq), 1.0)
    assert out.records == [MoveRecorded(room.code, 1, 0, "d3")]
    sent = _sent(out, "moved")
    assert {session for to, _ in sent for session in to} == {alice, bob} and len(sent) == 2
    assert all(moved.move == "d3" and moved.to_move == [1] for _, moved in sent)
    assert [bool(moved.legal) for to, moved in sorted(sent, key=lambda s: s[0] == {alice})] == [True, False]


def test_guards_run_in_order():
    """Game over is reported before turn, turn before staleness, staleness before legality."""
    lobby = Lobby()
    room, alice, bob = _game(lobby)
    assert (
        _sent(lobby.handle(bob, MakeMove(room=room.code, move="zz", seq=0), 0.0), "error")[0][1].code == "not_your_turn"
    )
    assert _sent(lobby.handle(alice, MakeMove(room=room.code, move="zz", seq=0), 0.0), "error")[0][1].code == "stale"
    assert (
        _sent(lobby.handle(alice, MakeMove(room=room.code, move="zz", seq=room.seq), 0.0), "error")[0][1].code
        == "illegal_move"
    )
    lobby.handle(alice, Resign(room=room.code), 0.0)
    assert _sent(lobby.handle(bob, MakeMove(room=room.code, move="zz", seq=0), 0.0), "error")[0][1].code == "game_over"


def test_resign_finishes_and_records_the_game():
    """A resignation ends the game for the other seat and stores the finished game."""
    lobby = Lobby()
    room, alice, _bob = _game(lobby)
    out = lobby.handle(alice, Resign(room=room.code), 0.0)
    finished = [r for r in out.records if isinstance(r, GameFinished)]
    assert finished and finished[0].result["winner"] == 1 and finished[0].result["reason"] == "resign"
    assert room.status == "finished"


def test_rematch_rotates_seats_once_both_ask():
    """A rematch needs every human; then the players swap colours and a new game starts."""
    lobby = Lobby()
    room, alice, bob = _game(lobby)
    lobby.handle(alice, Resign(room=room.code), 0.0)
    first = lobby.handle(alice, Rematch(room=room.code), 0.0)
    assert not _sent(first, "state")
    second = lobby.handle(bob, Rematch(room=room.code), 0.0)
    assert _sent(second, "state")[0][1].status == "playing"
    assert room.seats[0].session == bob and room.seats[1].session == alice
    assert GameStarted(room.code, 2) in second.records


def test_empty_rooms_close_after_grace_but_held_games_stay():
    """A waiting room nobody is in closes after the grace period; a played game with held seats does not, and a
    game nobody moved in (seats taken only to hold the room) closes like an empty room."""
    lobby = Lobby()
    host = _client(lobby, "host")
    code = _sent(lobby.handle(host, CreateRoom(game="othello"), 0.0), "room")[0][1].room
    room, alice, bob = _game(lobby)
    lobby.handle(alice, MakeMove(room=room.code, move="d3", seq=room.seq), 0.5)
    squatted, *squatters = _game(lobby)
    lobby.disconnect(host, 1.0)
    for session in (alice, bob, *squatters):
        lobby.disconnect(session, 1.0)
    out = lobby.sweep(1.0 + EMPTY_ROOM_GRACE_S)
    assert RoomClosed(code) in out.records and code not in lobby.rooms
    assert RoomClosed(squatted.code) in out.records and squatted.code not in lobby.rooms
    assert room.code in lobby.rooms and room.seats[0].holder is not None


def test_restore_replays_the_log_and_holds_seats():
    """A stored room is rebuilt by replaying its moves, seats held for their token hashes."""
    lobby = Lobby()
    stored = StoredRoom(
        "ABCDE",
        "othello",
        {"size": 8, "first": "black"},
        {"ai_ms": 1000, "ai_pace_ms": 0, "countdown_ms": 0, "ai_level": 3, "on_disconnect": "wait", "grace_s": 60},
        "alice",
        False,
        1,
        seats=[SeatSaved("ABCDE", 0, "alice", "h0", None, None), SeatSaved("ABCDE", 1, "bob", "h1", None, None)],
        moves=["d3", "c3", "c4"],
    )
    lobby.restore([stored], now=5.0)
    room = lobby.rooms["ABCDE"]
    assert room.moves == ["d3", "c3", "c4"] and room.status == "playing" and room.game.to_move(room.state) == {1}
    assert [s.holder.name for s in room.seats] == ["alice", "bob"] and not room.seats[0].connected
    assert lobby.sessions.by_token["h0"].rooms == {"ABCDE"}


def test_create_records_the_room():
    """Creating a room stores its settings, and seating stores each seat."""
    lobby = Lobby()
    alice = _client(lobby, "alice")
    out = lobby.handle(alice, CreateRoom(game="othello", options={"size": 6}), 0.0)
    saved = [r for r in out.records if isinstance(r, RoomSaved)]
    assert saved and saved[0].options == {"size": 6, "first": "black"}
    code = saved[0].code
    joined = lobby.handle(alice, Join(room=code), 0.0)
    assert next(r for r in joined.records if isinstance(r, SeatSaved)).name == "alice"


@pytest.mark.parametrize("role", ["player", "spectator"])
def test_join_unknown_room(role):
    """Joining a code no room has is `unknown_room`, and the person's rooms do not change."""
    lobby = Lobby()
    alice = _client(lobby, "alice")
    out = lobby.handle(alice, Join(room="NOPE1", role=role), 0.0)
    assert _sent(out, "error")[0][1].code == "unknown_room" and lobby.clients[alice].rooms == set()


def test_rematch_after_a_player_left_waits_for_a_new_one():
    """If a player left the finished game, a rematch reopens the room for someone new instead of stalling."""
    lobby = Lobby()
    room, alice, bob = _game(lobby)
    lobby.handle(alice, Resign(room=room.code), 0.0)
    lobby.handle(bob, Leave(room=room.code), 0.0)
    lobby.handle(alice, Rematch(room=room.code), 0.0)
    assert room.status == "waiting"
    carol = _client(lobby, "carol")
    out = lobby.handle(carol, Join(room=room.code), 0.0)
    assert _sent(out, "state")[-1][1].status == "playing" and room.game_no == 2


def test_a_resignation_in_a_three_rider_game_takes_out_one_rider():
    """In three-rider Tron a resign drops that rider on the next tick (logged as "x"); the other two play on."""
    lobby = Lobby()
    riders = [_client(lobby, name) for name in ("ann", "bo", "cy")]
    out = lobby.handle(riders[0], CreateRoom(game="tron", options={"players": 3, "seed": 4, "countdown_ms": 0}), 0.0)
    code = _sent(out, "room")[0][1].room
    for seat, session in enumerate(riders):
        lobby.handle(session, Join(room=code, seat=seat), 0.0)
    room = lobby.rooms[code]
    out = lobby.handle(riders[1], Resign(room=code), 0.0)
    assert [m.kind for _, m in _sent(out, "event")] == ["retired"] and room.status == "playing"
    refused = _sent(lobby.handle(riders[1], MakeMove(room=code, move="N"), 0.0), "error")[0][1]
    assert refused.code == "not_allowed"
    out = lobby.tick(code, 1.0)
    assert out.records == [MoveRecorded(code, 1, 0, room.moves[0])] and room.moves[0].split()[1] == "x"
    assert room.status == "playing" and room.state.alive == (True, False, True)
    again = _sent(lobby.handle(riders[1], Resign(room=code), 0.0), "error")[0][1]
    assert again.code == "not_allowed"
