"""Protocol 2 over real websockets: `rate_limited` echoes the refused request's id with `retry_after_ms`, and a
session keeps its id across a server restart."""

from __future__ import annotations

from gamenight.protocol.codec import encode
from gamenight.protocol.messages import CreateRoom, Join, ListPlayers
from tests.peer import Peer


async def test_rate_limited_echoes_the_request_id_with_retry_after(peers):
    """Past the burst, each refused request gets `rate_limited` with its own id and how long to wait."""
    alice: Peer = await peers("alice")
    sent = list(range(1000, 1050))  # 50 requests at once: the burst is 40
    for rid in sent:
        await alice.ws.send(encode(ListPlayers(id=rid)))
    replies = [await alice.wait(lambda m, r=rid: m.id == r) for rid in sent]
    limited = [m for m in replies if m.type == "error" and m.code == "rate_limited"]
    assert limited, "the burst was exceeded, so some requests were refused"
    assert all(m.retry_after_ms is not None and 0 < m.retry_after_ms <= 1000 for m in limited)
    assert len({m.id for m in replies}) == len(sent), "every request got exactly one reply carrying its id"


async def test_session_survives_a_restart(server_process):
    """A seated player resuming after a server restart gets the same `session` as before."""
    first = server_process()
    alice = await Peer.connect(first.url, "alice")
    room = await alice.request(CreateRoom, game="othello", options={})
    await alice.request(Join, room=room.room, seat=0)
    assert alice.welcome is not None
    session, token = alice.welcome.session, alice.welcome.token
    first.kill()
    await alice.close()
    second = server_process()
    back = await Peer.connect(second.url, "alice", resume=token)
    assert back.welcome is not None and back.welcome.session == session and back.welcome.token == token
    joined = await back.expect("joined", room=room.room)
    assert joined.seat == 0
    await back.close()
    assert second.stop() == 0
