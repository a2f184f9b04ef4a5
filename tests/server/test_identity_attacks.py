"""Attacks on identity by signature (issue 33), on real servers over loopback: what a hostile server or an
eavesdropper gets from a client's hello is no use for playing as that client anywhere."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve

from gamenight.client.connection import REFUSED, Connection
from gamenight.protocol import decode
from gamenight.protocol.messages import CreateRoom, Error, Hello, Message, Welcome
from gamenight.server.app import GameServer
from tests.peer import Peer, identity_of
from tests.waiting import eventually

VICTIM = identity_of("the victim's own key")


class LoggingRelay:
    """A hostile server: it hands each client the nonce of a connection it opened to the honest server (so the
    client signs for that connection), logs every frame the client sends, and passes the hello on."""

    def __init__(self, honest_url: str) -> None:
        self.honest_url = honest_url
        self.logged: list[bytes] = []  # every frame its clients sent, in order
        self.answers: list[Message] = []  # what the honest server answered each relayed hello

    async def handle(self, ws: ServerConnection) -> None:
        """One victim's connection, relayed to the honest server until its hello is answered."""
        async with connect(self.honest_url) as upstream:
            await ws.send(await upstream.recv())  # the honest server's hello_nonce, as its own
            hello = await ws.recv()
            assert isinstance(hello, bytes)
            self.logged.append(hello)
            await upstream.send(hello)
            answer = await upstream.recv()
            self.answers.append(decode(answer))
            await ws.send(answer)


async def _now(value: bool) -> bool:
    """`value`, as the awaitable check `eventually` polls."""
    return value


async def honest_server(server_with) -> GameServer:
    """A server that knows the address it is reached by (`--reached-as`)."""
    server: GameServer = await server_with()
    server.config = replace(server.config, reached_as=(f"ws://127.0.0.1:{server.port}",))
    return server


async def test_a_hostile_server_relaying_or_logging_hellos_never_plays_as_the_victim(server_with):
    """A client that claimed its name on an honest server then visits a hostile one: the hostile server relays the
    honest server's nonce for the client to sign and passes the hello on live, and later replays what it logged;
    the honest server refuses both (`bad_signature`), and the hello never carried a secret (no `key`)."""
    honest = await honest_server(server_with)
    honest_url = f"ws://127.0.0.1:{honest.port}"
    owner = await Peer.connect(honest_url, "victim", identity=VICTIM)
    assert owner.welcome.claimed
    await owner.close()

    relay = LoggingRelay(honest_url)
    async with serve(relay.handle, "127.0.0.1", 0) as hostile:
        hostile_url = f"ws://127.0.0.1:{hostile.sockets[0].getsockname()[1]}"
        victim = Connection(hostile_url, "victim", lambda _m, _q: None, identity=VICTIM, first_retry=30)
        running = asyncio.create_task(victim.run())
        await eventually(lambda: _now(victim.status.state == REFUSED), "the relayed hello's refusal")
        await victim.close()
        await running
    assert [(a.type, getattr(a, "code", None)) for a in relay.answers] == [("error", "bad_signature")]
    hello = decode(relay.logged[0])
    assert isinstance(hello, Hello) and hello.public_key == VICTIM.public_key and hello.key is None

    for frame in relay.logged:  # replayed later, on a connection of its own
        replay = await Peer.open(honest_url)
        await replay.send_raw(frame)
        answer = await replay.wait(lambda m: m.type in ("welcome", "error"))
        assert isinstance(answer, Error) and answer.code == "bad_signature"
        await replay.close()
    again = await Peer.connect(honest_url, "victim", identity=VICTIM)
    assert again.welcome.claimed and again.welcome.name == "victim"
    await again.close()


async def test_a_captured_session_replayed_on_the_same_server_plays_as_nobody(server_with):
    """Every frame a claimed player sent in one whole session (hello, create_room, ...), captured on the wire and
    sent again on a new connection, gets `bad_signature` for the hello and nothing but `not_ready` after it."""
    honest = await honest_server(server_with)
    url = f"ws://127.0.0.1:{honest.port}"
    victim = await Peer.open(url)
    sent: list[bytes] = []
    send = victim.ws.send

    async def captured(data: bytes) -> None:
        sent.append(data)
        await send(data)

    victim.ws.send = captured  # type: ignore[method-assign]
    await victim.send(victim.hello("victim", VICTIM, id=1))
    assert isinstance(await victim.wait(lambda m: m.id == 1), Welcome)
    await victim.request(CreateRoom, game="othello", options={})
    await victim.close()

    replay = await Peer.open(url)
    for frame in sent:
        await replay.send_raw(frame)
    answers = []
    for rid in [decode(frame).id for frame in sent]:
        answers.append(await replay.wait(lambda m, rid=rid: m.id == rid))
    await replay.close()
    assert [getattr(a, "code", a.type) for a in answers] == ["bad_signature", "not_ready"]


def test_reached_as_takes_ws_urls_only():
    """`--reached-as` is repeatable and takes ws:// or wss:// URLs; anything else stops the server at the command
    line rather than refusing every claim later."""
    from gamenight.server.__main__ import parse_args

    args = parse_args(["--reached-as", "wss://games.example.org", "--reached-as", "ws://10.0.0.5:8765"])
    assert args.reached_as == ["wss://games.example.org", "ws://10.0.0.5:8765"]
    with pytest.raises(SystemExit):
        parse_args(["--reached-as", "games.example.org"])
