"""The client's connection object against a real server: hello, request ids, errors, and reconnecting."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from gamenight.client.config import load_config, save_config
from gamenight.client.connection import (
    CONNECTED,
    RECONNECTING,
    REPLACED,
    Connection,
    ConnectionChanged,
    NotConnected,
    ServerMessage,
    open_connection,
)
from gamenight.client.widgets import BOARDS
from gamenight.protocol.messages import (
    CreateRoom,
    Error,
    Join,
    Joined,
    ListPlayers,
    ListRooms,
    Players,
    RoomInfo,
    Rooms,
    Welcome,
)
from gamenight.server.app import GameServer, ServerConfig

WAIT_S = 10.0


@pytest.fixture
def url(game_server: GameServer) -> str:
    """These tests use the in-process server (no Textual here), so they can reach into it."""
    return f"ws://127.0.0.1:{game_server.port}"


class Inbox:
    """Collects what the connection posts (as the Textual app would receive it)."""

    def __init__(self) -> None:
        self.posted: list[object] = []

    def __call__(self, message: object) -> None:
        self.posted.append(message)

    def server(self, kind: type) -> list:
        """The server messages of one type, in order."""
        return [p.message for p in self.posted if isinstance(p, ServerMessage) and isinstance(p.message, kind)]

    def states(self) -> list[str]:
        """The connection states announced, in order."""
        return [p.status.state for p in self.posted if isinstance(p, ConnectionChanged)]


async def until(condition, what: str) -> None:
    """Wait (polling) until `condition()` holds; WAIT_S only guards against a hang, it measures nothing."""
    try:
        async with asyncio.timeout(WAIT_S):
            while not condition():
                await asyncio.sleep(0.01)
    except TimeoutError:
        raise AssertionError(f"{what} never happened") from None


@contextlib.asynccontextmanager
async def running(url: str, name: str = "ann", **options):
    """A connection running in a task for the duration of the block."""
    inbox = Inbox()
    connection = Connection(url, name, inbox, **options)
    task = asyncio.create_task(connection.run())
    try:
        yield connection, inbox
    finally:
        await connection.close()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_hello_welcome_and_numbered_requests(url):
    """The connection says hello, reports "connected", and matches each reply to its request by id."""
    async with running(url) as (connection, inbox):
        await until(lambda: connection.connected, "the welcome")
        welcome = inbox.server(Welcome)[0]
        assert connection.session == welcome.session and connection.token == welcome.token
        assert CONNECTED in inbox.states()
        created = await connection.request(CreateRoom(game="othello", options={}))
        listed = await connection.request(ListRooms())
        assert isinstance(created, RoomInfo) and isinstance(listed, Rooms)
        assert created.id is not None and listed.id == created.id + 1
        assert created.room in {r.room for r in listed.rooms}


async def test_error_reply_is_returned_and_posted(url):
    """A refused request returns the `error`; it is also posted for the app, marked quiet if asked."""
    async with running(url) as (connection, _inbox):
        await until(lambda: connection.connected, "the welcome")
        reply = await connection.request(Join(room="NOPE1"), quiet=True)
        assert isinstance(reply, Error) and reply.code == "unknown_room"
        await until(lambda: _inbox.server(Error), "the posted error")
        posted = next(p for p in _inbox.posted if isinstance(p, ServerMessage) and isinstance(p.message, Error))
        assert posted.quiet


async def test_send_while_disconnected_raises(unused_tcp_port):
    """With no server there, requests fail at once and the status counts down to the next try."""
    async with running(f"ws://127.0.0.1:{unused_tcp_port}", first_retry=0.2, max_retry=0.4) as (connection, inbox):
        await until(lambda: RECONNECTING in inbox.states(), "a retry")
        with pytest.raises(NotConnected):
            connection.send(ListRooms())
        retries = [p.status for p in inbox.posted if isinstance(p, ConnectionChanged) and p.status.retry_in]
        assert retries[0].describe().startswith("connection lost; reconnecting in")


async def test_reconnects_and_resumes_the_session(game_server: GameServer, url):
    """When the server drops the connection of a seated player, the client reconnects after a short wait
    and, by sending its resume token, gets the same session and its seat back."""
    async with running(url, first_retry=0.1) as (connection, inbox):
        await until(lambda: connection.connected, "the welcome")
        room = await connection.request(CreateRoom(game="othello", options={}))
        await connection.request(Join(room=room.room, seat=0))
        first = connection.session
        await game_server.connections[first].close()
        await until(lambda: len(inbox.server(Welcome)) == 2, "the second welcome")
        assert RECONNECTING in inbox.states() and connection.connected
        assert connection.session == first
        await until(lambda: len(inbox.server(Joined)) == 2, "the seat given back")
        assert inbox.server(Joined)[-1].seat == 0


async def test_unknown_token_starts_a_fresh_session(unused_tcp_port):
    """After a server restart without memory, the old token is refused and a fresh hello is welcomed."""
    config = ServerConfig(host="127.0.0.1", port=unused_tcp_port, ai_workers=1)
    server = GameServer(config)
    await server.start()
    try:
        async with running(f"ws://127.0.0.1:{unused_tcp_port}", first_retry=0.1) as (connection, inbox):
            await until(lambda: connection.connected, "the welcome")
            first = connection.session
            await server.stop()
            server = GameServer(config)
            await server.start()
            await until(lambda: len(inbox.server(Welcome)) == 2, "the welcome of the new server")
            assert connection.connected and connection.session != first
    finally:
        await server.stop()


async def test_first_hello_resumes_a_saved_token(url):
    """A token saved by an earlier run is sent in the very first hello: same session, the seat comes back."""
    async with running(url) as (first, _inbox):
        await until(lambda: first.connected, "the first welcome")
        room = await first.request(CreateRoom(game="othello", options={}))
        await first.request(Join(room=room.room, seat=0))
        session, token = first.session, first.token
    async with running(url, token=token) as (again, inbox):
        await until(lambda: again.connected, "the welcome of the next run")
        assert again.session == session and again.resumed
        await until(lambda: inbox.server(Joined), "the seat given back")
        assert inbox.server(Joined)[0].room == room.room and inbox.server(Joined)[0].seat == 0


async def test_a_refused_saved_token_starts_fresh(url):
    """A saved token the server does not know is dropped: a fresh session, not a refusal."""
    async with running(url, token="not-a-token-of-this-server") as (connection, inbox):
        await until(lambda: connection.connected, "the welcome")
        assert not connection.resumed and connection.token == inbox.server(Welcome)[0].token
        assert connection.token != "not-a-token-of-this-server"


async def test_a_session_taken_over_elsewhere_stops_reconnecting(url):
    """When another window resumes the same session, this connection says so and does not take it back."""
    async with running(url, first_retry=0.05) as (first, first_inbox):
        await until(lambda: first.connected, "the first welcome")
        async with running(url, token=first.token, first_retry=0.05) as (second, _inbox):
            await until(lambda: second.connected and second.resumed, "the second window's welcome")
            await until(lambda: REPLACED in first_inbox.states(), "the first window's notice")
            await asyncio.sleep(0.3)  # several retry periods: the first window must stay away
            assert second.connected and not first.connected
            assert len(first_inbox.server(Welcome)) == 1


async def test_hello_says_which_games_it_takes_challenges_for(url):
    """The games a connection takes challenges for go in its hello: `list_players` shows them for its name."""
    async with running(url, accepts=("othello", "tron")) as (connection, _inbox):
        await until(lambda: connection.connected, "the welcome")
        players = await connection.request(ListPlayers())
        assert isinstance(players, Players)
        assert [p.games for p in players.players if p.name == "ann"] == [("othello", "tron")]


async def test_a_server_without_one_of_the_games_still_welcomes_us(url):
    """A server that refuses the hello's `accepts` (a game it does not have) gets the hello again without it:
    the player connects, taking no challenges, with no error shown."""
    async with running(url, accepts=("othello", "chess")) as (connection, inbox):
        await until(lambda: connection.connected, "the welcome")
        assert connection.accepts == () and not inbox.server(Error)
        players = await connection.request(ListPlayers())
        assert isinstance(players, Players) and [p.games for p in players.players if p.name == "ann"] == [()]


def test_the_app_takes_challenges_for_its_boards_unless_turned_off():
    """The app's connection takes challenges for every game the client draws; config `challenges: false` stops it."""
    assert open_connection("ws://x.test:1", "ann", lambda _: None, None).accepts == tuple(sorted(BOARDS))
    save_config({**load_config(), "challenges": False})
    assert open_connection("ws://x.test:1", "ann", lambda _: None, None).accepts == ()
