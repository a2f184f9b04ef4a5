"""The one object that owns the websocket: it speaks the codec, numbers requests, and reconnects.

Screens never see bytes. Every frame from the server is decoded here and handed on as a Textual
`ServerMessage`; the connection's ups and downs arrive as `ConnectionChanged`. A dropped connection is
retried with a doubling delay (0.5 s up to 8 s), and every new `hello` carries the resume token of the
last `welcome` (or, on the first connection, the token saved from the last run), so the server gives the
seats back. A token the server does not know is dropped and a fresh session started. When another window
resumes the same session, the server closes this connection; it then stops instead of taking the session back.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from textual.message import Message as TextualMessage
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from gamenight.client.config import identity_key, takes_challenges
from gamenight.client.frames import next_message
from gamenight.client.widgets import BOARDS
from gamenight.protocol import PROTOCOL_VERSION, ErrorCode, encode
from gamenight.protocol.codec import MAX_SERVER_FRAME
from gamenight.protocol.messages import Error, Hello, Message, Welcome

log = logging.getLogger("gamenight.client")

FIRST_RETRY_S = 0.5
MAX_RETRY_S = 8.0
OPEN_TIMEOUT_S = 5.0
REQUEST_TIMEOUT_S = 10.0
MAX_INCOMING = MAX_SERVER_FRAME  # a `lobby` push may carry 200 room summaries
PING_INTERVAL_S = 20.0

CONNECTING = "connecting"
CONNECTED = "connected"
RECONNECTING = "reconnecting"
REFUSED = "refused"
REPLACED = "replaced"
CLOSED = "closed"
NORMAL_CLOSURE = 1000
TAKEN_OVER = "resumed on another connection"  # the server's close reason when a newer hello took the session


class NotConnected(RuntimeError):
    """A request was made while there is no connection to the server."""


@dataclass(frozen=True, slots=True)
class ConnectionStatus:
    """Where the connection stands: its state, the server URL, and seconds until the next try."""

    state: str
    url: str
    retry_in: float | None = None
    detail: str = ""

    def describe(self) -> str:
        """A short text for the header, e.g. "connected to ws://..." or "reconnecting in 2 s"."""
        if self.state == CONNECTED:
            return f"connected to {self.url}"
        if self.state == RECONNECTING and self.retry_in is not None:
            return f"connection lost; reconnecting in {self.retry_in:g} s"
        if self.state == REFUSED:
            return f"refused by {self.url}: {self.detail}"
        if self.state == REPLACED:
            return "disconnected: this session continues in another gamenight window"
        return f"{self.state} {self.url}" if self.state != CLOSED else "disconnected"


class ServerMessage(TextualMessage):
    """A decoded message from the server, posted to the app; `quiet` replies need no error notice."""

    def __init__(self, message: Message, quiet: bool = False) -> None:
        super().__init__()
        self.message = message
        self.quiet = quiet


class ConnectionChanged(TextualMessage):
    """The connection's status changed (posted to the app)."""

    def __init__(self, status: ConnectionStatus) -> None:
        super().__init__()
        self.status = status


Post = Callable[[TextualMessage], Any]
"""Where a connection hands what it receives (the app's `post_message`)."""


class ServerLink(Protocol):
    """What the app needs of a connection: the real `Connection`, or a test's scripted stand-in."""

    name: str
    token: str | None
    resumed: bool

    @property
    def connected(self) -> bool:
        """True between a welcome and the loss of the connection."""
        ...

    def send(self, message: Message) -> int:
        """Queue a request and return its id; NotConnected if there is no connection."""
        ...

    async def request(self, message: Message, timeout: float = ..., quiet: bool = False) -> Message:
        """Send a request and wait for its reply."""
        ...

    async def run(self) -> None:
        """Connect and stay connected until closed."""
        ...

    async def close(self) -> None:
        """Stop."""
        ...


Connect = Callable[[str, str, Post, str | None], ServerLink]
"""Makes the app's connection: (url, name, post, saved resume token)."""


class Connection:
    """A client connection that keeps itself open: hello, read, dispatch, and reconnect with backoff."""

    def __init__(
        self,
        url: str,
        name: str,
        post: Post,
        *,
        first_retry: float = FIRST_RETRY_S,
        max_retry: float = MAX_RETRY_S,
        token: str | None = None,
        key: str | None = None,
        accepts: tuple[str, ...] = (),
    ) -> None:
        self.url = url  # where it connects now: the address given, or (in a cluster) another node's after a failure
        self.addresses = [url]  # the address given, then the cluster's other nodes (from the latest welcome)
        self.accepts = accepts  # the games this player takes challenges for (hello `accepts`)
        self.name = name
        self.key = key  # the secret that claims `name` (None: play as a guest)
        self.post = post
        self.first_retry = first_retry
        self.max_retry = max_retry
        self.session: str | None = None  # from the latest welcome
        self.token = token  # resume token: the latest welcome's, or the one saved from a previous run
        self.resumed = False  # whether the latest welcome continued the session of the token sent
        self.welcomes = 0  # how many welcomes this connection object has had
        self.status = ConnectionStatus(CONNECTING, url)
        self._ids = itertools.count(1)
        self._ws: ClientConnection | None = None
        self._outbox: asyncio.Queue[Message] = asyncio.Queue()
        self._pending: dict[int, asyncio.Future[Message]] = {}
        self._quiet: set[int] = set()
        self._closing = False

    # -- sending -------------------------------------------------------------------------------------
    @property
    def connected(self) -> bool:
        """True between a welcome and the loss of the connection."""
        return self.status.state == CONNECTED

    def send(self, message: Message) -> int:
        """Queue a request with a fresh id and return the id; NotConnected if there is no connection."""
        if not self.connected:
            raise NotConnected(f"not connected to {self.url}")
        rid = next(self._ids)
        self._outbox.put_nowait(replace(message, id=rid))
        return rid

    async def request(self, message: Message, timeout: float = REQUEST_TIMEOUT_S, quiet: bool = False) -> Message:
        """Send a request and wait for the first reply that echoes its id (an `error` reply included).

        A `quiet` request's error reply is marked so, for callers that handle the refusal themselves.
        """
        rid = self.send(message)
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._pending[rid] = future
        if quiet:
            self._quiet.add(rid)
        try:
            return await asyncio.wait_for(future, timeout)
        finally:
            self._pending.pop(rid, None)
            self._quiet.discard(rid)

    # -- the connection's life -------------------------------------------------------------------------
    async def run(self) -> None:
        """Connect, and reconnect whenever the connection drops, until `close` is called."""
        delay = self.first_retry
        while not self._closing:
            self._set_status(ConnectionStatus(CONNECTING if self.welcomes == 0 else RECONNECTING, self.url))
            detail = ""
            try:
                async with connect(
                    self.url,
                    max_size=MAX_INCOMING,
                    open_timeout=OPEN_TIMEOUT_S,
                    ping_interval=PING_INTERVAL_S,
                    compression=None,
                ) as ws:
                    self._ws = ws
                    if await self._greet(ws):
                        delay = self.first_retry
                        await self._serve(ws)
            except ConnectionClosed as exc:
                detail = str(exc) or type(exc).__name__
                if _taken_over(exc):
                    self._set_status(ConnectionStatus(REPLACED, self.url, detail=TAKEN_OVER))
            except (OSError, TimeoutError, InvalidHandshake, InvalidURI) as exc:
                detail = str(exc) or type(exc).__name__
            except asyncio.CancelledError:
                self._closing = True
                raise
            except Exception as exc:  # a bug here must not leave the app without a connection
                log.exception("connection loop failed")
                detail = type(exc).__name__
            finally:
                self._ws = None
                self._drop_pending()
            if self._closing or self.status.state in (REFUSED, REPLACED):
                break
            self._next_address()
            await self._wait_to_retry(delay, detail)
            delay = min(delay * 2, self.max_retry)
        if self.status.state not in (REFUSED, REPLACED):
            self._set_status(ConnectionStatus(CLOSED, self.url))

    async def close(self) -> None:
        """Stop reconnecting and close the websocket."""
        self._closing = True
        if self._ws is not None:
            await self._ws.close()

    async def _greet(self, ws: ClientConnection) -> bool:
        """Say hello (with the resume token if we have one) until welcomed; False if refused for good."""
        resume = self.token
        while True:
            hello = Hello(
                protocol=PROTOCOL_VERSION, name=self.name, resume=resume, key=self.key, accepts=list(self.accepts)
            )
            await ws.send(encode(hello))
            reply = await next_message(ws)
            if isinstance(reply, Welcome):
                self.resumed = resume is not None
                self.session, self.token = reply.session, reply.token
                self.addresses = [self.addresses[0], *(node for node in reply.nodes if node != self.addresses[0])]
                self.welcomes += 1
                self._outbox = asyncio.Queue()  # requests queued on a lost connection are void
                self._set_status(ConnectionStatus(CONNECTED, self.url))
                self.post(ServerMessage(reply))
                return True
            if isinstance(reply, Error) and reply.code == ErrorCode.BAD_TOKEN and resume is not None:
                resume = None  # the server forgot us: start a fresh session
                continue
            if isinstance(reply, Error) and reply.code == ErrorCode.BAD_OPTIONS and self.accepts:
                log.warning("the server refused the games we take challenges for (%s); taking none", reply.message)
                self.accepts = ()  # a server without one of our games: play on, unchallengeable
                continue
            detail = reply.message if isinstance(reply, Error) else f"unexpected {reply.type}"
            self._set_status(ConnectionStatus(REFUSED, self.url, detail=detail))
            if isinstance(reply, Error):
                self.post(ServerMessage(reply))
            return False

    async def _serve(self, ws: ClientConnection) -> None:
        """Read and dispatch messages while a writer task sends the queued requests."""
        writer = asyncio.create_task(self._write(ws))
        try:
            while True:
                self._dispatch(await next_message(ws))
        finally:
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writer

    async def _write(self, ws: ClientConnection) -> None:
        """Send queued requests in order."""
        while True:
            message = await self._outbox.get()
            await ws.send(encode(message))

    def _next_address(self) -> None:
        """After a failure, try the next address: in a cluster any node resumes the session with its token, so a
        dead node's players go on through another (a single server has one address: nothing changes)."""
        if len(self.addresses) > 1:
            at = self.addresses.index(self.url) if self.url in self.addresses else -1
            self.url = self.addresses[(at + 1) % len(self.addresses)]

    def _dispatch(self, message: Message) -> None:
        """Complete the request this message answers (if any) and hand it to the app."""
        if message.id is not None:
            future = self._pending.get(message.id)
            if future is not None and not future.done():
                future.set_result(message)
        self.post(ServerMessage(message, quiet=message.id in self._quiet))

    def _drop_pending(self) -> None:
        """Fail every request still waiting: its answer will never come on a new connection."""
        for future in self._pending.values():
            if not future.done():
                future.set_exception(NotConnected("the connection was lost"))
        self._pending.clear()

    async def _wait_to_retry(self, delay: float, detail: str) -> None:
        """Show the countdown to the next attempt, one status per second."""
        remaining = delay
        while remaining > 0 and not self._closing:
            self._set_status(ConnectionStatus(RECONNECTING, self.url, retry_in=round(remaining, 1), detail=detail))
            step = min(1.0, remaining)
            await asyncio.sleep(step)
            remaining -= step

    def _set_status(self, status: ConnectionStatus) -> None:
        """Record and announce a status change."""
        if status != self.status:
            self.status = status
            self.post(ConnectionChanged(status))


def _taken_over(exc: ConnectionClosed) -> bool:
    """True when the server closed us because a newer connection resumed this session."""
    frame = exc.rcvd
    return frame is not None and frame.code == NORMAL_CLOSURE and frame.reason == TAKEN_OVER


def open_connection(url: str, name: str, post: Post, token: str | None) -> Connection:
    """The app's real connection to `url`, claiming `name` with this player's key (client.config), taking
    challenges for every game the client has a board for (unless the config turns challenges off)."""
    accepts = tuple(sorted(BOARDS)) if takes_challenges() else ()
    return Connection(url, name, post, token=token, key=identity_key(), accepts=accepts)
