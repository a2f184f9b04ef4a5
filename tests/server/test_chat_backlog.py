"""A room keeps its latest chat lines: whoever joins (or comes back) gets the last CHAT_BACKLOG of them after the
state, each an `event chat` marked `earlier` with the seq it was said at, under the one seq rule."""

from __future__ import annotations

from gamenight.protocol.messages import Chat, Event, Join
from gamenight.protocol.vocab import EventKind, Role
from gamenight.server.lobby import Lobby
from gamenight.server.room import CHAT_BACKLOG
from tests.server.test_v2 import Member, _hello, _kinds, _othello


def test_a_late_spectator_gets_the_rooms_latest_chat_lines():
    """A spectator joining after 35 lines gets the last 30 after the state, oldest first, names and seats kept, each
    marked with the seq it was said at; the players' own view is untouched."""
    lobby = Lobby()
    code, alice, bob, carol = _othello(lobby)
    said = 5 + CHAT_BACKLOG
    for n in range(said):
        speaker = carol if n % 2 else alice
        out = lobby.handle(speaker.session, Chat(room=code, text=f"line {n}"), 1.0 + n)  # within the chat allowance
        for member in (alice, bob, carol):
            assert _kinds(member.take(out)) == ["event chat"]
    dave = Member(_hello(lobby, "dave"))
    got = dave.take(lobby.handle(dave.session, Join(room=code, role=Role.SPECTATOR), said + 2.0))
    assert _kinds(got) == ["joined", "state"] + ["event chat"] * CHAT_BACKLOG
    lines = [m for m in got if isinstance(m, Event)]
    assert [m.data["text"] for m in lines] == [f"line {n}" for n in range(said - CHAT_BACKLOG, said)]
    assert all(m.kind == EventKind.CHAT and m.data["earlier"] == 1 for m in lines)  # said at seq 1
    assert lines[-1].data["name"] == "alice" and lines[-1].data["seat"] == 0  # line 34: a player
    assert lines[-2].data["name"] == "carol" and lines[-2].data["seat"] is None  # line 33: the spectator


def test_a_room_without_chat_sends_no_backlog():
    """Joining a room where nobody spoke brings the joined reply and the state only."""
    lobby = Lobby()
    code, _alice, _bob, _carol = _othello(lobby)
    dave = Member(_hello(lobby, "dave"))
    got = dave.take(lobby.handle(dave.session, Join(room=code, role=Role.SPECTATOR), 2.0))
    assert _kinds(got) == ["joined", "state"]
