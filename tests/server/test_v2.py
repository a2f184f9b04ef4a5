"""Protocol 2's rules in the sans-I/O lobby: one seq rule for every kind of message, one frame per member per move,
`legal` only for the mover, and the mismatches issue 13 listed (each with the behaviour a client relies on)."""

from __future__ import annotations

from typing import Any

from gamenight.protocol import PROTOCOL_VERSION
from gamenight.protocol.codec import encode, from_wire, request_id_of, to_wire
from gamenight.protocol.errors import ErrorCode
from gamenight.protocol.messages import (
    AddAi,
    Chat,
    CreateRoom,
    Error,
    Event,
    Hello,
    Join,
    Leave,
    ListGames,
    MakeMove,
    Message,
    MoreTime,
    Moved,
    Rematch,
    Resign,
    RoomInfo,
    State,
    Sync,
    Takeback,
    Tick,
)
from gamenight.protocol.vocab import EventKind, Role, RoomStatus
from gamenight.server.games.tron import Tron
from gamenight.server.lobby import Lobby
from gamenight.server.outbox import Outbox, StartClock
from gamenight.server.sessions import session_of


def _hello(lobby: Lobby, name: str) -> str:
    """A new session's id."""
    client, _ = lobby.hello(Hello(protocol=PROTOCOL_VERSION, name=name), now=0.0)
    return client.session


def _to(out: Outbox, session: str) -> list[Message]:
    """The messages an outbox sends to one session, in order."""
    return [send.message for send in out.sends if session in send.to]


class Member:
    """What one session received, in order, with the seq rule checked as each message arrives."""

    def __init__(self, session: str) -> None:
        self.session = session
        self.seq = 0
        self.got: list[Message] = []

    def take(self, out: Outbox) -> list[Message]:
        """Receive this session's share of an outbox (room summaries left out), checking the seq rule of
        docs/protocol.md on each message."""
        mine = [m for m in _to(out, self.session) if not isinstance(m, RoomInfo)]
        for msg in mine:
            if isinstance(msg, (Moved, Tick)):
                assert msg.seq == self.seq + 1, f"{msg.type} leads to the next state ({msg.seq} after {self.seq})"
            elif isinstance(msg, State):
                assert msg.seq >= self.seq, f"a state never goes back ({msg.seq} after {self.seq})"
                if msg.events:
                    assert msg.seq == self.seq + 1, "a state carrying events is the state they lead to"
            elif isinstance(msg, Event):
                assert msg.seq == self.seq, f"event {msg.kind} carries the current state's seq ({msg.seq}, {self.seq})"
            if isinstance(msg, (Moved, Tick, State)):
                self.seq = msg.seq
        self.got.extend(mine)
        return mine


def _othello(lobby: Lobby) -> tuple[str, Member, Member, Member]:
    """An Othello room: alice (seat 0, host), bob (seat 1) and a spectator, each checked by the seq rule."""
    alice, bob, carol = (Member(_hello(lobby, n)) for n in ("alice", "bob", "carol"))
    out = lobby.handle(alice.session, CreateRoom(game="othello", id=1), 0.0)
    code = next(m for m in _to(out, alice.session) if isinstance(m, RoomInfo)).room
    for member, join in ((carol, Join(room=code, role=Role.SPECTATOR)), (alice, Join(room=code, seat=0))):
        out = lobby.handle(member.session, join, 0.0)
        for m in (alice, bob, carol):
            m.take(out)
    out = lobby.handle(bob.session, Join(room=code, seat=1), 0.0)
    for m in (alice, bob, carol):
        m.take(out)
    return code, alice, bob, carol


def _kinds(messages: list[Message]) -> list[str]:
    """Message types, with event kinds spelled out."""
    return [f"event {m.kind}" if isinstance(m, Event) else m.type for m in messages]


def test_one_seq_rule_for_joins_moves_chat_leaves_game_over_and_rematch():
    """Every message a member receives follows the one seq rule: changes carry the next seq, events the current."""
    lobby = Lobby()
    code, alice, bob, carol = _othello(lobby)
    everyone = (alice, bob, carol)
    assert "event joined" in _kinds(alice.got) and alice.seq == 1, "the joined event, then the first state"
    out = lobby.handle(alice.session, MakeMove(room=code, move="d3", seq=1, id=5), 1.0)
    for member in everyone:
        (moved,) = member.take(out)
        assert isinstance(moved, Moved) and moved.seq == 2 and moved.move == "d3"
    out = lobby.handle(carol.session, Chat(room=code, text="nice"), 1.0)
    assert all(_kinds(m.take(out)) == ["event chat"] for m in everyone)
    out = lobby.handle(bob.session, Resign(room=code), 2.0)
    for member in everyone:
        (final,) = member.take(out)
        assert isinstance(final, State) and final.status == RoomStatus.FINISHED and final.seq == 3
        assert [note.kind for note in final.events] == [EventKind.GAME_OVER], "game_over rides in the final state"
    out = lobby.handle(alice.session, Rematch(room=code), 3.0)
    assert all(_kinds(m.take(out)) == ["event rematch"] for m in everyone)
    out = lobby.handle(bob.session, Rematch(room=code), 3.0)
    for member in (alice, bob):
        got = member.take(out)
        joined = [m for m in got if m.type == "joined"]
        assert len(joined) == 1 and joined[0].id is None, "the rematch tells each player its new seat, unasked"
        assert got[-1].type == "state" and got[-1].seq == 4
    carol.take(out)
    out = lobby.handle(alice.session, Leave(room=code), 4.0)
    for member in (bob, carol):
        kinds = _kinds(member.take(out))
        assert kinds == ["state", "event left"], kinds


def test_seq_rule_for_more_time_and_takebacks():
    """More time and an accepted takeback are full states carrying their event and the next seq; an offer is an
    event at the current seq."""
    lobby = Lobby()
    alice, bob = (Member(_hello(lobby, n)) for n in ("alice", "bob"))
    out = lobby.handle(alice.session, CreateRoom(game="othello", options={"clock_s": 60}, id=1), 0.0)
    code = next(m for m in _to(out, alice.session) if m.id == 1).room  # type: ignore[attr-defined]
    for member, seat in ((alice, 0), (bob, 1)):
        out = lobby.handle(member.session, Join(room=code, seat=seat), 0.0)
        alice.take(out), bob.take(out)
    out = lobby.handle(alice.session, MakeMove(room=code, move="d3", seq=1), 1.0)
    alice.take(out), bob.take(out)
    out = lobby.handle(alice.session, MoreTime(room=code), 2.0)
    for member in (alice, bob):
        (given,) = member.take(out)
        assert isinstance(given, State) and given.seq == 3 and [n.kind for n in given.events] == [EventKind.MORETIME]
    out = lobby.handle(alice.session, Takeback(room=code), 3.0)
    for member in (alice, bob):
        assert _kinds(member.take(out)) == ["event takeback"]
    out = lobby.handle(bob.session, Takeback(room=code), 4.0)
    for member in (alice, bob):
        (back,) = member.take(out)
        assert isinstance(back, State) and back.seq == 4 and back.moves == [] and back.events[0].kind == "takeback"


def test_one_frame_per_member_per_move_and_legal_only_for_the_mover():
    """A move sends each member exactly one `moved`; only the seat to move gets `legal`, the sender gets its id."""
    lobby = Lobby()
    code, alice, bob, carol = _othello(lobby)
    out = lobby.handle(alice.session, MakeMove(room=code, move="d3", seq=1, id=42), 1.0)
    a, b, c = (_to(out, m.session) for m in (alice, bob, carol))
    assert len(a) == len(b) == len(c) == 1
    assert isinstance(b[0], Moved) and b[0].legal and b[0].id is None, "the seat to move gets its legal moves"
    assert isinstance(a[0], Moved) and not a[0].legal and a[0].id == 42, "the sender's copy echoes its request id"
    assert isinstance(c[0], Moved) and not c[0].legal and c[0].id is None, "a spectator gets neither"
    wire = to_wire(c[0])
    assert "legal" not in wire and "clock" not in wire and "events" not in wire, "empty optional fields stay off"
    assert b[0].cells and b[0].view["scores"] == [4, 1]
    assert len(encode(c[0])) <= 120, "an Othello move costs a non-mover at most 120 bytes"


def test_sync_in_a_room_without_a_game_is_answered_with_the_room():
    """`sync` before any game started replies with the room's summary (echoing the id), not with silence."""
    lobby = Lobby()
    alice = _hello(lobby, "alice")
    out = lobby.handle(alice, CreateRoom(game="othello", id=1), 0.0)
    code = _to(out, alice)[0].room  # type: ignore[attr-defined]
    lobby.handle(alice, Join(room=code, seat=0), 0.0)
    (reply,) = _to(lobby.handle(alice, Sync(room=code, seq=0, id=9), 0.0), alice)
    assert isinstance(reply, RoomInfo) and reply.id == 9 and reply.room == code


def test_sync_replies_with_the_full_state_and_its_id():
    """`sync` in a game replies with one full state carrying the request's id (legal only if you are to move)."""
    lobby = Lobby()
    code, alice, bob, _ = _othello(lobby)
    (reply,) = _to(lobby.handle(bob.session, Sync(room=code, seq=0, id=3), 0.0), bob.session)
    assert isinstance(reply, State) and reply.id == 3 and reply.seq == 1 and reply.legal == []
    (reply,) = _to(lobby.handle(alice.session, Sync(room=code, seq=0, id=4), 0.0), alice.session)
    assert isinstance(reply, State) and reply.legal, "the seat to move gets its legal moves in a sync too"


def test_list_games_refuses_a_bad_limit():
    """`list_games` with a limit outside 1-200 is refused with bad_message (not silently clamped)."""
    lobby = Lobby()
    alice = _hello(lobby, "alice")
    for limit in (0, -5, 201, 10_000):
        (reply,) = _to(lobby.handle(alice, ListGames(limit=limit, id=7), 0.0), alice)
        assert isinstance(reply, Error) and reply.code == ErrorCode.BAD_MESSAGE and reply.id == 7


def test_official_tron_maps_report_their_true_size_and_no_seed():
    """A room on an official map lists the map's own width and height and no seed; random arenas keep theirs."""
    tron = Tron()
    options = tron.validate_options({"map": "duel-small", "width": 40, "seed": 7})
    chosen = tron.map_for(options)
    assert (options["width"], options["height"], options["seed"]) == (chosen.width, chosen.height, None)
    assert tron.validate_options(options) == options, "validated options come back unchanged"
    arena = tron.validate_options({"width": 12, "height": 9})
    assert (arena["width"], arena["height"]) == (12, 9) and isinstance(arena["seed"], int)
    lobby = Lobby()
    alice = _hello(lobby, "alice")
    out = lobby.handle(alice, CreateRoom(game="tron", options={"map": "duel-small"}, id=1), 0.0)
    (info,) = [m for m in _to(out, alice) if m.id == 1]
    assert isinstance(info, RoomInfo)
    assert (info.options["width"], info.options["height"], info.options["seed"]) == (chosen.width, chosen.height, None)


def _tron_room(lobby: Lobby, **options: Any) -> tuple[str, str, Outbox]:
    """A Tron room with alice riding against an AI; returns the code, alice and the outbox that started it."""
    alice = _hello(lobby, "alice")
    out = lobby.handle(alice, CreateRoom(game="tron", options=options, id=1), 0.0)
    code = _to(out, alice)[0].room  # type: ignore[attr-defined]
    lobby.handle(alice, Join(room=code, seat=0), 0.0)
    return code, alice, lobby.handle(alice, AddAi(room=code, level=1), 0.0)


def test_tron_first_tick_comes_a_tick_after_the_start_even_without_countdown():
    """With `countdown_ms: 0` the first tick is `tick_ms` away (announced in `next_tick_ms`), so riders can steer."""
    lobby = Lobby()
    _, alice, out = _tron_room(lobby, countdown_ms=0, tick_ms=150)
    (clock,) = [e for e in out.effects if isinstance(e, StartClock)]
    assert clock.delay_ms == 150 and clock.tick_ms == 150
    (state,) = [m for m in _to(out, alice) if isinstance(m, State)]
    assert state.next_tick_ms == 150
    _, alice, out = _tron_room(lobby, countdown_ms=1000, tick_ms=200)
    (clock,) = [e for e in out.effects if isinstance(e, StartClock)]
    assert clock.delay_ms == 1200, "the countdown, then one tick to steer"


def test_tron_ticks_are_one_frame_each_and_the_last_is_a_tick_then_the_final_state():
    """Every tick is one `tick` per member (the last too, with game_over inside), then the final `state`."""
    lobby = Lobby()
    code, alice, out = _tron_room(lobby, countdown_ms=0, tick_ms=100, width=8, height=8)
    member = Member(alice)
    member.take(out)
    room = lobby.rooms[code]
    ticks = 0
    while room.status == RoomStatus.PLAYING and ticks < 500:
        got = member.take(room.tick())
        ticks += 1
        assert isinstance(got[0], Tick) and len([m for m in got if isinstance(m, Tick)]) == 1
    assert room.status == RoomStatus.FINISHED
    last, final = member.got[-2:]
    assert isinstance(last, Tick) and [n.kind for n in last.events][-1] == EventKind.GAME_OVER
    assert isinstance(final, State) and final.status == RoomStatus.FINISHED and final.seq == last.seq


def test_session_is_derived_from_the_token():
    """The session id is a function of the resume token's hash, so a restarted server gives the same one back."""
    lobby = Lobby()
    client, out = lobby.hello(Hello(protocol=PROTOCOL_VERSION, name="alice"), now=0.0)
    (welcome,) = _to(out, client.session)
    assert welcome.session == client.session == session_of(client.token_hash)  # type: ignore[attr-defined]
    assert welcome.token is not None and welcome.token not in client.session  # type: ignore[attr-defined]


def test_hello_with_protocol_1_is_refused():
    """This server speaks only protocol 2: a version 1 hello gets unsupported_protocol."""
    lobby = Lobby()
    try:
        lobby.hello(Hello(protocol=1, name="old"), now=0.0)
    except Exception as exc:
        assert getattr(exc, "code", None) == ErrorCode.UNSUPPORTED_PROTOCOL
    else:
        raise AssertionError("a version 1 hello was accepted")


def test_request_id_is_read_without_decoding_the_message():
    """A refusal before decoding (rate_limited) can still echo the id; junk frames give none."""
    assert request_id_of(encode(Chat(room="ABCDE", text="hi", id=77))) == 77
    assert request_id_of(b"\xc1junk") is None and request_id_of(b"\x93\x01\x02\x03") is None
    error = from_wire({"type": "error", "code": "rate_limited", "message": "slow", "id": 77, "retry_after_ms": 50})
    assert isinstance(error, Error) and error.retry_after_ms == 50
