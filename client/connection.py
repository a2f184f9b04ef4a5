"""The one object that owns the websocket: it speaks the codec, numbers requests, and reconnects.

The TUI and `gamenight-bot` both talk to the server through a `Connection` (no Textual here: the app wraps it in
client/link.py). Every frame from the server is decoded here and handed to the `on_message` callback; the
connection's ups and downs go to `on_status` as a `ConnectionStatus`. A dropped connection is retried with a doubling
delay (0.5 s up to 8 s), through the cluster's other nodes in turn when the welcome listed any, and every new `hello`
carries the resume token of the last `welcome` (or, on the first connection, the token saved from the last run), so
the server gives the seats back. A token the server does not know is dropped and a fresh session started. When
another window resumes the same session, the server closes this connection; it then stops instead of taking the
session back. A bot's connection may pace what it sends (`Pace`) and ask something now and then (`keepalive_s`) so
that a connection waiting for challenges is not closed as idle.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from gamenight.client.frames import next_message
from gamenight.protocol import PROTOCOL_VERSION, ErrorCode, encode
from gamenight.protocol.codec import MAX_SERVER_FRAME
from gamenight.protocol.identity import Identity
from gamenight.protocol.messages import Error, Hello, HelloNonce, ListPlayers, Message, Welcome

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
ADMIN_CLOSE = 4000  # the server's close code when one of its admins kicked or banned us (the error before says why)


class NotConnected(RuntimeError):
    """A request was made while there is no connection to the server."""


@dataclass(frozen=True, slots=True)
class ConnectionStatus:
    """Where the connection stands: its state, the server URL, and seconds until the next try."""

    state: str
    url: str
    retry_in: float | None = None
    detail: str = ""
    code: str = ""  # a refusal's error code (e.g. `name_taken`)

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


OnMessage = Callable[[Message, bool], object]
"""Takes each message from the server, and whether it answers a `quiet` request (its error needs no notice)."""

OnStatus = Callable[[ConnectionStatus], object]
"""Takes each change of the connection's status."""


@dataclass(frozen=True, slots=True)
class Pace:
    """A limit on what a connection sends: `rate` messages a second sustained, `burst` at once (a token bucket)."""

    rate: float
    burst: int


class PaceBucket:
    """The tokens of one connection's `Pace`: full at the start, refilled at the pace's rate (the clock and the
    sleep are the event loop's unless a test gives its own)."""

    def __init__(
        self,
        pace: Pace,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.pace, self.clock, self.sleep = pace, clock, sleep
        self.tokens = float(pace.burst)
        self.stamp = clock()

    async def take(self) -> None:
        """Wait until a message may go, and count it."""
        now = self.clock()
        self.tokens = min(float(self.pace.burst), self.tokens + (now - self.stamp) * self.pace.rate)
        self.stamp = now
        if self.tokens < 1:
            await self.sleep((1 - self.tokens) / self.pace.rate)
            self.tokens, self.stamp = 1.0, self.clock()
        self.tokens -= 1


def _ignore(_status: ConnectionStatus) -> None:
    """The default `on_status`: nobody is told."""


class Connection:
    """A client connection that keeps itself open: hello, read, dispatch, and reconnect with backoff."""

    def __init__(
        self,
        url: str,
        name: str,
        on_message: OnMessage,
        on_status: OnStatus = _ignore,
        *,
        first_retry: float = FIRST_RETRY_S,
        max_retry: float = MAX_RETRY_S,
        open_timeout: float = OPEN_TIMEOUT_S,
        token: str | None = None,
        identity: Identity | None = None,
        legacy_key: str | None = None,
        accepts: tuple[str, ...] = (),
        bot: bool = False,
        insist_on_accepts: bool = False,
        pace: Pace | None = None,
        keepalive_s: float | None = None,
    ) -> None:
        self.url = url  # where it connects now: the address given, or (in a cluster) another node's after a failure
        self.addresses = [url]  # the address given, then the cluster's other nodes (from the latest welcome)
        self.accepts = accepts  # the games this player takes challenges for (hello `accepts`)
        self.insist_on_accepts = insist_on_accepts  # a refusal of `accepts` is final (else: play on without them)
        self.name = name
        self.identity = identity  # the key pair that claims `name` (None: play as a guest)
        self.legacy_key = legacy_key  # protocol 2's secret, sent only when the server asks to move its claim
        self.bot = bot  # hello `bot`: a program plays under this name
        self.on_message = on_message
        self.on_status = on_status
        self.first_retry = first_retry
        self.max_retry = max_retry
        self.open_timeout = open_timeout
        self.pace = pace  # None: send as fast as requests come
        self.keepalive_s = keepalive_s  # a `list_players` this often while connected (None: never)
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
        self._closed = asyncio.Event()  # set by `close`: ends a wait to retry at once

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
        """Connect, and reconnect whenever the connection drops, until `close` is called (or the server refuses
        us for good, or another connection took the session)."""
        delay = self.first_retry
        while not self._closing:
            self._set_status(ConnectionStatus(CONNECTING if self.welcomes == 0 else RECONNECTING, self.url))
            welcomed, detail = await self._connect_once()
            if welcomed:
                delay = self.first_retry
            if self._closing or self.status.state in (REFUSED, REPLACED):
                break
            self._next_address()
            await self._wait_to_retry(delay, detail)
            delay = min(delay * 2, self.max_retry)
        if self.status.state not in (REFUSED, REPLACED):
            self._set_status(ConnectionStatus(CLOSED, self.url))

    async def close(self, farewell: Sequence[Message] = ()) -> None:
        """Stop reconnecting and close the websocket, sending `farewell` first if connected (the last requests,
        e.g. a bot leaving its rooms: sent at once, in order, unpaced)."""
        self._closing = True
        self._closed.set()
        ws = self._ws
        if ws is None:
            return
        if self.connected:
            with contextlib.suppress(ConnectionClosed):
                for message in farewell:
                    await ws.send(encode(replace(message, id=next(self._ids))))
        await ws.close()

    async def _connect_once(self) -> tuple[bool, str]:
        """One connection, from its opening to its loss: whether it was welcomed, and why it ended."""
        welcomed, detail = False, ""
        try:
            async with connect(
                self.url,
                max_size=MAX_INCOMING,
                open_timeout=self.open_timeout,
                ping_interval=PING_INTERVAL_S,
                compression=None,
            ) as ws:
                self._ws = ws
                welcomed = await self._greet(ws)
                if welcomed:
                    await self._serve(ws)
        except ConnectionClosed as exc:
            detail = str(exc) or type(exc).__name__
            if _taken_over(exc):
                self._set_status(ConnectionStatus(REPLACED, self.url, detail=TAKEN_OVER))
            elif exc.rcvd is not None and exc.rcvd.code == ADMIN_CLOSE:  # kicked or banned: no reconnecting
                text = f"an admin of the server closed the connection ({exc.rcvd.reason})"
                self._set_status(ConnectionStatus(REFUSED, self.url, detail=text, code=exc.rcvd.reason))
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
        return welcomed, detail

    async def _greet(self, ws: ClientConnection) -> bool:
        """Read the server's nonce, then say hello (with the resume token if we have one, the nonce signed if we
        have an identity) until welcomed; False if refused for good."""
        nonce = await next_message(ws)
        if not isinstance(nonce, HelloNonce):
            self._refused(nonce)  # a server of protocol 2 (or not a gamenight server) says nothing first
            return False
        resume, legacy = self.token, None
        while True:
            await ws.send(encode(self._hello(nonce, resume, legacy)))
            reply = await next_message(ws)
            if isinstance(reply, Welcome):
                self._welcomed(reply, resumed=resume is not None)
                return True
            if isinstance(reply, Error) and reply.code == ErrorCode.BAD_TOKEN and resume is not None:
                resume = None  # the server forgot us: start a fresh session
                continue
            if isinstance(reply, Error) and reply.code == ErrorCode.OLD_CLAIM and legacy is None and self.legacy_key:
                legacy = self.legacy_key  # our name's claim is protocol 2's: prove the old key once, with the new one
                continue
            if isinstance(reply, Error) and reply.code == ErrorCode.BAD_OPTIONS and self._may_drop_accepts():
                log.warning("the server refused the games we take challenges for (%s); taking none", reply.message)
                self.accepts = ()  # a server without one of our games: play on, unchallengeable
                continue
            self._refused(reply)
            return False

    def _hello(self, nonce: HelloNonce, resume: str | None, legacy: str | None) -> Hello:
        """The hello for this connection: the public key and the nonce's signature if we have an identity."""
        identity = self.identity
        return Hello(
            protocol=PROTOCOL_VERSION,
            name=self.name,
            resume=resume,
            public_key=identity.public_key if identity is not None else None,
            signature=identity.sign(nonce.server, self.url, nonce.nonce) if identity is not None else None,
            url=self.url,
            key=legacy,
            bot=self.bot,
            accepts=list(self.accepts),
        )

    def _may_drop_accepts(self) -> bool:
        """True if a hello refused for its `accepts` is sent again without them."""
        return bool(self.accepts) and not self.insist_on_accepts

    def _welcomed(self, welcome: Welcome, resumed: bool) -> None:
        """A welcome: the session and its token, the cluster's nodes; connected (a fresh outbox); tell."""
        self.resumed = resumed
        self.session, self.token = welcome.session, welcome.token
        self.addresses = [self.addresses[0], *(node for node in welcome.nodes if node != self.addresses[0])]
        self.welcomes += 1
        self._outbox = asyncio.Queue()  # requests queued on a lost connection are void
        self._set_status(ConnectionStatus(CONNECTED, self.url))
        self.on_message(welcome, False)

    def _refused(self, reply: Message) -> None:
        """The hello was refused for good: say so (and hand on the server's error)."""
        detail = reply.message if isinstance(reply, Error) else f"unexpected {reply.type}"
        code = str(reply.code) if isinstance(reply, Error) else ""
        self._set_status(ConnectionStatus(REFUSED, self.url, detail=detail, code=code))
        if isinstance(reply, Error):
            self.on_message(reply, False)

    async def _serve(self, ws: ClientConnection) -> None:
        """Read and dispatch messages while a writer task sends the queued requests (and the keepalive asks)."""
        helpers = [asyncio.create_task(self._write(ws))]
        if self.keepalive_s is not None:
            helpers.append(asyncio.create_task(self._keep_alive(self.keepalive_s)))
        try:
            while True:
                self._dispatch(await next_message(ws))
        finally:
            for task in helpers:
                task.cancel()
            await asyncio.gather(*helpers, return_exceptions=True)

    async def _write(self, ws: ClientConnection) -> None:
        """Send queued requests in order (at the pace, if there is one)."""
        bucket = PaceBucket(self.pace) if self.pace is not None else None
        while True:
            message = await self._outbox.get()
            if bucket is not None:
                await bucket.take()
            await ws.send(encode(message))

    async def _keep_alive(self, every_s: float) -> None:
        """Ask who is online now and then: a connection that waits in no room (a bot waiting for a challenge) is
        not idle (the server closes those after 30 minutes of silence)."""
        while True:
            await asyncio.sleep(every_s)
            self.send(ListPlayers())

    def _next_address(self) -> None:
        """After a failure, try the next address: in a cluster any node resumes the session with its token, so a
        dead node's players go on through another (a single server has one address: nothing changes)."""
        if len(self.addresses) > 1:
            at = self.addresses.index(self.url) if self.url in self.addresses else -1
            self.url = self.addresses[(at + 1) % len(self.addresses)]

    def _dispatch(self, message: Message) -> None:
        """Complete the request this message answers (if any) and hand it on."""
        if message.id is not None:
            future = self._pending.get(message.id)
            if future is not None and not future.done():
                future.set_result(message)
        self.on_message(message, message.id in self._quiet)

    def _drop_pending(self) -> None:
        """Fail every request still waiting: its answer will never come on a new connection."""
        for future in self._pending.values():
            if not future.done():
                future.set_exception(NotConnected("the connection was lost"))
        self._pending.clear()

    async def _wait_to_retry(self, delay: float, detail: str) -> None:
        """Show the countdown to the next attempt, one status per second (`close` ends it at once)."""
        remaining = delay
        while remaining > 0 and not self._closing:
            self._set_status(ConnectionStatus(RECONNECTING, self.url, retry_in=round(remaining, 1), detail=detail))
            step = min(1.0, remaining)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closed.wait(), step)
            remaining -= step

    def _set_status(self, status: ConnectionStatus) -> None:
        """Record and announce a status change."""
        if status != self.status:
            self.status = status
            self.on_status(status)


def _taken_over(exc: ConnectionClosed) -> bool:
    """True when the server closed us because a newer connection resumed this session."""
    frame = exc.rcvd
    return frame is not None and frame.code == NORMAL_CLOSURE and frame.reason == TAKEN_OVER
