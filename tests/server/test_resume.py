"""Dropped connections: seats are held, resumed with the token, and each disconnect policy does what it says."""

from __future__ import annotations

import asyncio

from gamenight.protocol.messages import Chat, CreateRoom, Join, ListRooms, MakeMove, Sync
from tests.peer import Peer
from tests.waiting import eventually


async def _seated_pair(peers, url: str, options: dict | None = None, game: str = "othello"):
    """Alice (seat 0, host) and Bob (seat 1) in a fresh room (Othello unless told); returns them, the code and the
    first state."""
    alice: Peer = await peers("alice")
    bob: Peer = await peers("bob")
    room = await alice.request(CreateRoom, game=game, options=options or {})
    await alice.request(Join, room=room.room, seat=0)
    await bob.request(Join, room=room.room, seat=1)
    state = await alice.expect("state")
    await bob.expect("state", seq=state.seq)
    return alice, bob, room.room, state


async def test_wait_policy_holds_the_seat_and_resume_returns_it(peers, url):
    """Under `wait`, a dropped player's seat is held (shown as disconnected) and resuming gives it back."""
    alice, bob, code, state = await _seated_pair(peers, url)
    token = alice.welcome.token
    await alice.close()
    lost = await bob.expect("event", kind="left")
    assert lost.data["connection"] == "lost"
    held = await bob.wait(
        lambda m: m.type == "room" and m.room == code and m.seats[0].name == "alice" and not m.seats[0].connected
    )
    assert held.seats[0].kind == "human"
    back = await Peer.connect(url, "alice", resume=token)
    assert back.welcome.session == alice.welcome.session
    joined = await back.expect("joined", room=code)
    assert joined.seat == 0
    resumed = await back.expect("state")
    assert resumed.seq == state.seq and resumed.to_move == [0]
    await back.send(MakeMove(room=code, move=resumed.legal[0], seq=resumed.seq))
    assert (await bob.expect("state", seq=state.seq + 1)).last_move == resumed.legal[0]
    await back.close()


async def test_resent_move_is_not_applied_twice(peers, url):
    """A move re-sent after a reconnect with the same request id is not played a second time."""
    alice, bob, code, state = await _seated_pair(peers, url)
    await alice.send(MakeMove(room=code, move=state.legal[0], seq=state.seq, id=500))
    await bob.expect("state", seq=state.seq + 1)
    token = alice.welcome.token
    await alice.close()
    back = await Peer.connect(url, "alice", resume=token)
    await back.expect("state")
    await back.send(MakeMove(room=code, move=state.legal[0], seq=state.seq, id=500))
    again = await back.expect("state")
    assert again.seq == state.seq + 1 and len(again.moves) == 1 and again.id == 500, "the state, echoing the id"
    await back.close()


async def _resume(peer: Peer, url: str, code: str) -> Peer:
    """Drop `peer`'s connection and resume its session on a new one (its seat's full state read)."""
    token = peer.welcome.token
    await peer.close()
    back = await Peer.connect(url, peer.welcome.name, resume=token)
    await back.expect("state", room=code)
    return back


async def test_resent_move_without_seq_is_not_applied_twice_after_the_reply(peers, url):
    """A move re-sent with the same id but no seq, after the opponent already answered it, is not played again
    (it would be legal): the answer is the current state with the id."""
    alice, bob, code, state = await _seated_pair(peers, url, game="connect4")
    await alice.send(MakeMove(room=code, move="d", id=600))
    await bob.expect("state", seq=state.seq + 1)
    await bob.send(MakeMove(room=code, move="a"))
    await alice.expect("state", seq=state.seq + 2)
    back = await _resume(alice, url, code)
    await back.send(MakeMove(room=code, move="d", id=600))  # alice is to move, and "d" is legal
    copy = await back.wait(lambda m: m.id == 600)
    assert copy.type == "state" and copy.moves == ["d", "a"] and copy.seq == state.seq + 2 and copy.to_move == [0]
    again = await back.request(MakeMove, room=code, move="d")  # the same move with a new id is a new move
    assert again.type == "moved" and again.seq == state.seq + 3
    await back.close()


async def test_resent_winning_move_gets_the_final_state(peers, url):
    """The move that ended the game, re-sent after a reconnect with its id, is answered with the final state (not
    `game_over`, which would leave the client unsure whether its move counted)."""
    alice, bob, code, state = await _seated_pair(peers, url, game="connect4")
    for ply, column in enumerate("aabbcc"):
        mover = (alice, bob)[ply % 2]
        await mover.send(MakeMove(room=code, move=column, seq=state.seq))
        state = await alice.expect("state", seq=state.seq + 1)
    await alice.send(MakeMove(room=code, move="d", seq=state.seq, id=700))
    final = await bob.wait(lambda m: m.type == "state" and m.status == "finished")
    back = await _resume(alice, url, code)
    await back.send(MakeMove(room=code, move="d", seq=state.seq, id=700))
    copy = await back.wait(lambda m: m.id == 700)
    assert copy.type == "state" and copy.status == "finished" and copy.seq == final.seq
    assert copy.moves == final.moves and copy.result is not None and copy.result.winner == 0
    await back.close()


async def test_forfeit_policy_ends_the_game_after_grace(peers, url):
    """Under `forfeit`, a player who stays away past `grace_s` loses the game."""
    alice, bob, _code, _state = await _seated_pair(peers, url, {"on_disconnect": "forfeit", "grace_s": 1})
    await alice.close()
    over = await bob.expect("event", kind="game_over")
    assert over.data["reason"] == "forfeit" and over.data["winner"] == 1


async def test_sync_resends_the_current_state(peers, url):
    """`sync {seq}` returns one full state with the request's id, showing what was missed (the move)."""
    alice, bob, code, state = await _seated_pair(peers, url)
    await alice.send(MakeMove(room=code, move=state.legal[0], seq=state.seq))
    await alice.send(Chat(room=code, text="good luck"))
    await bob.expect("event", kind="chat")
    await bob.send(Sync(room=code, seq=state.seq, id=77))
    reply = await bob.wait(lambda m: m.id == 77)
    assert reply.type == "state" and reply.seq == state.seq + 1 and reply.moves == [state.legal[0]]
    assert reply.legal, "bob is to move, so his copy lists his legal moves"
    await bob.send(Chat(room=code, text="after"))
    assert (await bob.expect("event", kind="chat")).data["text"] == "after"
    assert not [m for m in bob.inbox if m.id == 77], "the sync's reply is the one state"


async def test_spectator_cannot_move(peers, url):
    """A spectator's move is refused with `not_allowed` and changes nothing."""
    _alice, _bob, code, state = await _seated_pair(peers, url)
    carol: Peer = await peers("carol")
    await carol.request(Join, room=code, role="spectator")
    reply = await carol.request(MakeMove, room=code, move=state.legal[0], seq=state.seq)
    assert reply.type == "error" and reply.code == "not_allowed"


async def test_private_room_needs_its_code(peers):
    """A private room is not listed to others, and a wrong code is `unknown_room`."""
    alice: Peer = await peers("alice")
    bob: Peer = await peers("bob")
    room = await alice.request(CreateRoom, game="othello", options={}, private=True)
    listed = await bob.request(ListRooms)
    assert room.room not in {r["room"] for r in listed.rooms}
    wrong = await bob.request(Join, room="ZZZZZ")
    assert wrong.type == "error" and wrong.code == "unknown_room"
    joined = await bob.request(Join, room=room.room.lower())
    assert joined.type == "joined" and joined.seat == 0


async def test_chat_is_cleaned(peers, url):
    """Chat text reaches the room with control characters removed and its length bounded."""
    alice, bob, code, _state = await _seated_pair(peers, url)
    await alice.send(Chat(room=code, text="hi\x1b[2J there\x07" + "x" * 1000))
    line = await bob.expect("event", kind="chat")
    assert line.data["text"].startswith("hi [2J there") and "\x1b" not in line.data["text"]
    assert len(line.data["text"]) <= 300 and line.data["name"] == "alice"


async def test_resumed_session_replaces_the_old_connection(peers, url):
    """Resuming while the old connection is still open moves the session to the new one and closes the old."""
    alice, _bob, code, _state = await _seated_pair(peers, url)
    twin = await Peer.connect(url, "alice", resume=alice.welcome.token)
    await twin.expect("joined", room=code)
    await asyncio.wait_for(alice.ws.wait_closed(), 10)
    assert alice.ws.close_code == 1000
    await twin.close()


async def test_a_host_without_a_seat_resumes_after_a_drop(game_server, url):
    """A room's host who never sat down (nor anyone watching) keeps their session for a while after the connection
    drops: the token resumes it, as docs/protocol.md promises, and the room is still theirs to fill (issue 33: the
    token died with the connection, `bad_token`). Past the grace the session is forgotten."""
    from websockets.asyncio.client import connect

    from gamenight.protocol import PROTOCOL_VERSION
    from gamenight.protocol.messages import AddAi, Hello
    from gamenight.server.sessions import SESSION_GRACE_S

    host = await Peer.connect(url, "hostess")
    room = (await host.request(CreateRoom, game="othello", options={})).room
    token = host.welcome.token
    await host.close()
    back = await Peer.connect(url, "hostess", resume=token)
    assert back.welcome.session == host.welcome.session and back.welcome.name == "hostess"
    added = await back.request(AddAi, room=room, seat=1, level=1)
    assert added.type == "room", added  # host rights came back with the session
    await back.close()
    lobby = game_server.lobby
    session = host.welcome.session

    async def dropped() -> bool:
        return not lobby.clients[session].connected

    await eventually(dropped, "the server to see the connection close")
    loop = asyncio.get_running_loop()
    lobby.sweep(loop.time() + SESSION_GRACE_S + 1)
    assert session not in lobby.clients
    late = Peer(await connect(url))
    await late.send(Hello(protocol=PROTOCOL_VERSION, name="hostess", resume=token, id=1))
    error = await late.expect("error")
    assert error.code == "bad_token" and error.id == 1
    await late.close()
