"""The client's connection object (the TUI's and gamenight-bot's, no Textual) against a real server: hello, request
ids, errors, reconnecting, and what a bot asks of it (pace, keepalive, a farewell on close)."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from gamenight.client.config import load_config, save_config
from gamenight.client.connection import (
    CONNECTED,
    RECONNECTING,
    REFUSED,
    REPLACED,
    Connection,
    ConnectionStatus,
    NotConnected,
    Pace,
    PaceBucket,
)
from gamenight.client.link import ConnectionChanged, ServerMessage, open_connection
from gamenight.client.widgets import BOARDS
from gamenight.protocol.errors import ErrorCode
from gamenight.protocol.messages import (
    CreateRoom,
    Error,
    Join,
    Joined,
    Leave,
    ListPlayers,
    ListRooms,
    Message,
    Players,
    RoomInfo,
    Rooms,
    State,
    Welcome,
)
from gamenight.protocol.vocab import RoomStatus
from gamenight.server.app import GameServer, ServerConfig
from tests.peer import identity_of

WAIT_S = 10.0


@pytest.fixture
def url(game_server: GameServer) -> str:
    """These tests use the in-process server (no Textual here), so they can reach into it."""
    return f"ws://127.0.0.1:{game_server.port}"


class Inbox:
    """Collects what the connection hands on: each server message (with its `quiet` mark) and each status."""

    def __init__(self) -> None:
        self.messages: list[tuple[Message, bool]] = []
        self.statuses: list[ConnectionStatus] = []

    def message(self, message: Message, quiet: bool) -> None:
        self.messages.append((message, quiet))

    def status(self, status: ConnectionStatus) -> None:
        self.statuses.append(status)

    def server(self, kind: type) -> list:
        """The server messages of one type, in order."""
        return [message for message, _ in self.messages if isinstance(message, kind)]

    def states(self) -> list[str]:
        """The connection states announced, in order."""
        return [status.state for status in self.statuses]


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
    connection = Connection(url, name, inbox.message, inbox.status, **options)
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
    """A refused request returns the `error`; it is also handed on for the app, marked quiet if asked."""
    async with running(url) as (connection, inbox):
        await until(lambda: connection.connected, "the welcome")
        reply = await connection.request(Join(room="NOPE1"), quiet=True)
        assert isinstance(reply, Error) and reply.code == "unknown_room"
        await until(lambda: inbox.server(Error), "the error handed on")
        assert [quiet for message, quiet in inbox.messages if isinstance(message, Error)] == [True]


async def test_send_while_disconnected_raises(unused_tcp_port):
    """With no server there, requests fail at once and the status counts down to the next try."""
    async with running(f"ws://127.0.0.1:{unused_tcp_port}", first_retry=0.2, max_retry=0.4) as (connection, inbox):
        await until(lambda: RECONNECTING in inbox.states(), "a retry")
        with pytest.raises(NotConnected):
            connection.send(ListRooms())
        retries = [status for status in inbox.statuses if status.retry_in]
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


async def test_the_apps_connection_posts_textual_messages(url):
    """The app's connection hands the app its statuses as `ConnectionChanged` and the server's messages as
    `ServerMessage` (quiet replies marked), as the app's handlers expect them."""
    posted: list[object] = []
    connection = open_connection(url, "ann", posted.append, None)
    task = asyncio.create_task(connection.run())
    try:
        await until(lambda: connection.connected, "the welcome")
        await connection.request(Join(room="NOPE1"), quiet=True)
        await until(lambda: any(isinstance(p, ServerMessage) and p.quiet for p in posted), "the quiet error")
        assert [p.status.state for p in posted if isinstance(p, ConnectionChanged)][-1] == CONNECTED
        assert isinstance(next(p for p in posted if isinstance(p, ServerMessage)).message, Welcome)
    finally:
        await connection.close()
        await task


async def test_a_bot_says_so_in_its_hello(url):
    """A connection made with `bot=True` is listed as a bot, taking challenges for its game."""
    async with running(url, "rhino", bot=True, accepts=("othello",)) as (connection, _inbox):
        await until(lambda: connection.connected, "the welcome")
        players = await connection.request(ListPlayers())
        assert isinstance(players, Players)
        assert [(p.bot, p.games) for p in players.players if p.name == "rhino"] == [(True, ("othello",))]


async def test_a_refused_hello_says_why_with_its_code(url):
    """A name claimed by another key is refused for good: the status says `refused` with the server's code (so a
    bot can tell its user to use the name's key file), the error is handed on, and no retry follows."""
    async with running(url, "rhino", identity=identity_of("rhino-key")) as (owner, _inbox):
        await until(lambda: owner.connected, "the owner's welcome")
        async with running(url, "rhino", identity=identity_of("other-key"), first_retry=0.05) as (other, inbox):
            await until(lambda: other.status.state == REFUSED, "the refusal")
            assert other.status.code == ErrorCode.NAME_TAKEN and "claimed" in other.status.detail
            assert [e.code for e in inbox.server(Error)] == [ErrorCode.NAME_TAKEN]
            await asyncio.sleep(0.2)  # several retry periods: a refused connection stays away
            assert inbox.states() == [REFUSED]


async def test_a_bot_that_insists_on_its_games_is_refused_by_a_server_without_them(url):
    """With `insist_on_accepts`, a server that refuses the games of the hello's `accepts` refuses the connection
    (a bot for a game the server lacks stops, rather than sitting there unchallengeable)."""
    async with running(url, "rhino", bot=True, accepts=("chess",), insist_on_accepts=True) as (connection, _inbox):
        await until(lambda: connection.status.state == REFUSED, "the refusal")
        assert connection.status.code == ErrorCode.BAD_OPTIONS and connection.accepts == ("chess",)


async def test_a_paced_connection_is_answered_for_every_request(url):
    """A connection with a pace (10 messages a second, a burst of 1) gets every answer to five requests made at once:
    pacing delays messages, it drops none."""
    async with running(url, pace=Pace(rate=10.0, burst=1)) as (connection, _inbox):
        await until(lambda: connection.connected, "the welcome")
        replies = await asyncio.gather(*(connection.request(ListPlayers()) for _ in range(5)))
        assert all(isinstance(reply, Players) for reply in replies)


async def test_a_pace_lets_a_burst_go_then_one_message_per_interval():
    """A pace of 10 messages a second with a burst of 2, on a clock that stands still: two messages go at once, each
    later one waits a tenth of a second; time that passes refills the bucket (a bot never outruns the server's
    rate limit)."""
    now, waits = [100.0], []

    async def sleep(seconds: float) -> None:
        waits.append(round(seconds, 9))
        now[0] += seconds

    bucket = PaceBucket(Pace(rate=10.0, burst=2), clock=lambda: now[0], sleep=sleep)
    for _ in range(5):
        await bucket.take()
    assert waits == [0.1, 0.1, 0.1]
    now[0] += 1.0  # a second later the bucket is full again: a burst of two goes at once
    await bucket.take()
    await bucket.take()
    assert waits == [0.1, 0.1, 0.1]


async def test_keepalive_asks_who_is_online_now_and_then(url):
    """A connection with `keepalive_s` sends `list_players` by itself while connected (a bot waiting for
    challenges is then never an idle connection): the answers arrive without any request made."""
    async with running(url, keepalive_s=0.05) as (connection, inbox):
        await until(lambda: connection.connected, "the welcome")
        await until(lambda: len(inbox.server(Players)) >= 3, "three answers to the keepalive")


async def test_close_sends_the_farewell_first(url):
    """`close(farewell)` sends its messages before the websocket closes: a bot that leaves its game on the way
    out resigns it at once (a player merely disconnected keeps the seat and the game waits for its return)."""
    async with running(url, "bob") as (leaver, _leaver_inbox), running(url, "cid") as (opponent, inbox):
        await until(lambda: leaver.connected and opponent.connected, "the players' welcomes")
        room = (await leaver.request(CreateRoom(game="othello", options={}))).room
        await leaver.request(Join(room=room, seat=0))
        await opponent.request(Join(room=room, seat=1))
        await until(lambda: any(s.status == RoomStatus.PLAYING for s in inbox.server(State)), "the game's start")
        await leaver.close([Leave(room=room)])
        await until(lambda: any(s.status == RoomStatus.FINISHED for s in inbox.server(State)), "the game's end")
        final = inbox.server(State)[-1]
        assert final.result is not None and final.result.reason == "resign" and final.result.loser == 0
