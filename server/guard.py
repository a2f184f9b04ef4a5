"""Frame-level limits of one connection, enforced as bytes arrive, before any message is assembled or decoded.

The message rate limit (`app.TokenBucket`) counts messages. Below it, a client can still make the server work
without sending a single message: pings (each answered with a pong the client need not read), messages cut
into thousands of fragments, or bytes as fast as the link allows. `GuardedConnection` counts what arrives:

- bytes per second and frames per second (token buckets, with bursts of `BURST_FACTOR` seconds' worth);
- pings per second;
- fragments per message (no real client cuts a message of at most 64 KiB into more than a few);
- the bytes written to the connection but not yet taken by the network (pongs included): a client that does
  not read is not allowed to make the server hold more than `max_backlog` bytes for it.

A connection over any limit is aborted at once (a close frame 1008 is written if the socket takes it, then the
transport is dropped; its reason, e.g. "too many fragments", names the limit): asking a flooder to close politely
would wait behind everything it sent. The work spent on it is bounded by one slice of a read: what arrives is
handed to websockets' parser `SLICE_BYTES` at a time and each slice's frames are counted before the next is
parsed. (A read is up to 256 KiB; parsed whole, a read of one-byte fragments was ~37,000 frames, ~100 ms of the
event loop spent before the guard counted the first of them: the `fragments` attack of bench/hostile.py.) Its
address then
may not open a connection for `abort_penalty_s` (the server answers HTTP 429), so a flooder that reconnects
at once costs an HTTP refusal, not a websocket.

That refusal (and the one for an address at its connection cap) is decided when the TCP connection is accepted
(`admit`), before websockets reads the request. No handler task, no HTTP parsing, no response object: the canned
429 response is written, the server's side shut for writing, and whatever the client sends is dropped unread
until it closes (or `REFUSED_LINGER_S` passes; past `REFUSED_READ_LIMIT` bytes it is reset).

The 429 is written `refusal_delay_s` after the accept, not at once (a tarpit). A client that retries as soon as it
is refused (the `ping_flood` attack of bench/hostile.py: four connections cycling accept, 429, reset ~70 times a
second) then waits for its answer instead of making the kernel, the event loop and its own process churn through
new connections; a person refused at the cap reads the same answer a second later. While held, a refusal costs a
socket and a timer. An address may have at most `MAX_HELD_PER_ADDRESS` held at once and the server
`MAX_HELD_REFUSALS` in all; a connection past either is reset on accepting it, the cheapest refusal there is (a
client that opens connections without waiting for answers gets nothing else; such a flood of bare TCP connects is
a firewall's job: docs/security.md).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from websockets.asyncio.server import ServerConnection
from websockets.frames import Close, CloseCode, Frame, Opcode
from websockets.protocol import Event, State

from gamenight.server.bucket import Bucket

log = logging.getLogger("gamenight.server")

BURST_FACTOR = 4.0
"""A bucket holds this many seconds of its rate, so short bursts above the rate pass."""
REFUSED_LINGER_S = 5.0
"""How long a refused connection may stay open after its 429 (the client closes it on reading the response)."""
REFUSED_READ_LIMIT = 8 * 1024
"""Bytes a refused connection may still send (a request, a few frames); past them it is cut off at once (reset), so
a client that floods a refused connection costs one read of its socket, not a read of every chunk for the linger."""
MAX_HELD_PER_ADDRESS = 16
"""Refused connections of one address waiting for their delayed 429 at once; more are reset on accepting them."""
MAX_HELD_REFUSALS = 4096
"""Refused connections of all addresses waiting for their delayed 429 at once (a bound on the sockets they hold)."""
SLICE_BYTES = 2048
"""What websockets' parser is handed at a time: the frames parsed past a limit are at most one slice's (a frame is
at least 6 bytes from a client, so ~340; ~1 ms of parsing), and an honest 64 KiB message costs 32 slices."""


def refusal(text: str) -> bytes:
    """A complete HTTP 429 response saying `text` (written as is to a connection refused on accepting it)."""
    body = text.encode()
    head = (
        "HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


@dataclass(frozen=True, slots=True)
class FrameLimits:
    """What one connection may send below the message level, and what it may leave unread (0: no limit)."""

    bytes_per_s: float = 64 * 1024  # sustained; 4 s worth at once (a 64 KiB frame always fits)
    frames_per_s: float = 200.0  # every frame: data, continuation, ping, pong, close (10x the message rate)
    pings_per_s: float = 2.0  # a keepalive pings every few seconds at most
    max_fragments: int = 16  # frames one message may be cut into
    max_backlog: int = 1 << 20  # bytes written to the connection that the client has not taken yet
    write_stall_s: float = 10.0  # ... and how long its socket may refuse more (writing paused) before it is dropped
    abort_penalty_s: float = 10.0  # after a connection is dropped for a limit, its address may not connect
    refusal_delay_s: float = 1.0  # a connection refused on accepting it gets its 429 this long after (0: at once)


def _bucket(rate: float, floor: float = 1.0) -> Bucket:
    """The server's token bucket (server/bucket.py) at `rate` per second, holding `rate * BURST_FACTOR` (at least
    `floor`), full now; the guard's buckets run on the monotonic clock."""
    return Bucket(rate, max(rate * BURST_FACTOR, floor), time.monotonic())


class SharedBudget:
    """A message budget several connections share (one address's): turns are served in arrival order.

    Waiting connections queue; one timer wakes the first waiter when a token is due. Each token wakes exactly one
    connection, so a flood from many connections costs one wake-up per message let through, not one per waiting
    connection per token (which, with 60 waiting connections at 100 messages a second, was 6,000 wake-ups a second
    of event-loop time taken from every other room).
    """

    __slots__ = ("_timer", "bucket", "waiters")

    def __init__(self, rate: float) -> None:
        self.bucket = _bucket(rate)
        self.waiters: deque[asyncio.Future[None]] = deque()
        self._timer: asyncio.TimerHandle | None = None

    async def turn(self) -> bool:
        """Return when this connection may have its next message read: False at once if nobody waits and a token is
        here, True after waiting for one (the address is over its budget)."""
        if not self.waiters and self.bucket.take(time.monotonic()):
            return False
        waiter = asyncio.get_running_loop().create_future()
        self.waiters.append(waiter)
        self._arm()
        await waiter  # a connection closed while waiting is cancelled here; `_release` skips its place
        return True

    def _arm(self) -> None:
        """Start the timer for the first waiter's token, unless it runs already."""
        if self._timer is None and self.waiters:
            self._timer = asyncio.get_running_loop().call_later(self.bucket.delay(time.monotonic()), self._release)

    def _release(self) -> None:
        """Wake as many waiters, first come first, as there are tokens; then wait for the next token."""
        self._timer = None
        waiters = self.waiters
        while waiters:
            if waiters[0].done():  # cancelled: its connection went away
                waiters.popleft()
                continue
            if not self.bucket.take(time.monotonic()):
                break
            waiters.popleft().set_result(None)
        self._arm()

    def close(self) -> None:
        """The address's last connection closed: stop the timer."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class GuardedConnection(ServerConnection):
    """A server connection that enforces `FrameLimits` (set per server by subclassing with `limits`, and
    `on_abort`, told the reason of each connection it drops)."""

    limits = FrameLimits()
    on_abort: Callable[[ServerConnection, str], None] | None = None
    admit: Callable[[object], bytes | None] | None = None  # peername -> a refusal to write, or None to go on
    held: ClassVar[dict[str, int]] = {}  # refusals waiting for their 429, per address ("" counts all); one per server
    refusing = False  # refused on accepting it: websockets never sees this connection
    refused: asyncio.TimerHandle | None = None  # a refused connection's timer: its delayed 429, then its linger
    refused_transport: asyncio.WriteTransport
    refused_bytes = 0  # what a refused connection sent since (dropped unread; past REFUSED_READ_LIMIT it is cut off)
    held_address: str | None = None  # the address a held refusal counts against, until its 429 is written
    stall: asyncio.TimerHandle | None = None  # armed while the socket takes no more writes (`write_stall_s`)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        peername = transport.get_extra_info("peername")
        answer = self.admit(peername) if self.admit is not None else None
        if answer is not None:  # refused before websockets sees it: see the module's docstring
            assert isinstance(transport, asyncio.WriteTransport)
            self.refusing = True
            self.refused_transport = transport
            self._refuse(answer, str(peername[0]) if isinstance(peername, tuple) and peername else "?")
            return
        super().connection_made(transport)
        limits = self.limits
        self._bytes = _bucket(limits.bytes_per_s, floor=128 * 1024) if limits.bytes_per_s else None
        self._frames = _bucket(limits.frames_per_s) if limits.frames_per_s else None
        self._pings = _bucket(limits.pings_per_s) if limits.pings_per_s else None
        self._fragments = 0
        self.aborted: str | None = None  # why the guard dropped the connection

    def _refuse(self, answer: bytes, address: str) -> None:
        """Hold the refused connection for `refusal_delay_s`, then answer; past the caps on those held, reset it."""
        delay, held = self.limits.refusal_delay_s, self.held
        if not delay:
            self._answer(answer)
        elif held.get(address, 0) >= MAX_HELD_PER_ADDRESS or held.get("", 0) >= MAX_HELD_REFUSALS:
            self.refused_transport.abort()
        else:
            held[address] = held.get(address, 0) + 1
            held[""] = held.get("", 0) + 1
            self.held_address = address
            self.refused = asyncio.get_running_loop().call_later(delay, self._answer, answer)

    def _answer(self, answer: bytes) -> None:
        """Write the 429 and shut our side; the client has `REFUSED_LINGER_S` to read it and close."""
        self._release()
        transport = self.refused_transport
        transport.write(answer)
        transport.write_eof()
        self.refused = asyncio.get_running_loop().call_later(REFUSED_LINGER_S, transport.abort)

    def _release(self) -> None:
        """This refusal no longer counts as held (answered, or the connection is gone)."""
        address, held = self.held_address, self.held
        if address is None:
            return
        self.held_address = None
        for key in (address, ""):
            if held[key] <= 1:
                del held[key]
            else:
                held[key] -= 1

    def data_received(self, data: bytes) -> None:
        """Count the bytes before websockets parses them, and hand them on a slice at a time (`SLICE_BYTES`: what
        is parsed after a limit trips is one slice, not the read); after the automatic replies, check the backlog."""
        if self.refusing:
            self.refused_bytes += len(data)
            if self.refused_bytes > REFUSED_READ_LIMIT:
                self.refused_transport.abort()
            return
        if self.aborted is not None:
            return
        if self._bytes is not None and not self._bytes.take(time.monotonic(), len(data)):
            self.abort("too many bytes")
            return
        self._parse(data)
        backlog = self.limits.max_backlog
        if self.aborted is None and backlog and self.transport.get_write_buffer_size() > backlog:
            self.abort("not reading")

    def _parse(self, data: bytes) -> None:
        """Hand `data` to websockets `SLICE_BYTES` at a time, each slice's frames counted (`process_event`) before
        the next is parsed; once a limit has tripped, the rest is never parsed."""
        for start in range(0, len(data), SLICE_BYTES):
            if self.aborted is not None:
                return
            super().data_received(data[start : start + SLICE_BYTES])

    def pause_writing(self) -> None:
        """The socket takes no more for now: a client that does not read again within `write_stall_s` is dropped.
        This holds whatever fills its buffer, and whether or not the server still reads from it (the backlog check
        in `data_received` needs a frame to arrive to run)."""
        super().pause_writing()
        if not self.refusing and self.limits.write_stall_s and self.stall is None:
            self.stall = asyncio.get_running_loop().call_later(self.limits.write_stall_s, self.abort, "not reading")

    def resume_writing(self) -> None:
        """The client read again: its stall timer stops."""
        super().resume_writing()
        self._unstall()

    def _unstall(self) -> None:
        """Cancel the stall timer, if armed."""
        if self.stall is not None:
            self.stall.cancel()
            self.stall = None

    def eof_received(self) -> None:
        """A refused client closed its side: asyncio then closes ours (as for every connection: this returns None)."""
        if not self.refusing:
            super().eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        """A refused connection ends without websockets (which never saw it); others as websockets does."""
        if self.refusing:
            if self.refused is not None:
                self.refused.cancel()
            self._release()
            return
        self._unstall()
        super().connection_lost(exc)

    def process_event(self, event: Event) -> None:
        """Count frames, pings and fragments; hand on only what is within the limits."""
        if self.aborted is not None:
            return
        if isinstance(event, Frame):
            if self._frames is not None and not self._frames.take(time.monotonic()):
                self.abort("too many frames")
                return
            if event.opcode is Opcode.PING and self._pings is not None and not self._pings.take(time.monotonic()):
                self.abort("too many pings")
                return
            if event.opcode in (Opcode.TEXT, Opcode.BINARY):
                self._fragments = 1
            elif event.opcode is Opcode.CONT:
                self._fragments += 1
                if self.limits.max_fragments and self._fragments > self.limits.max_fragments:
                    self.abort("too many fragments")
                    return
        super().process_event(event)

    def abort(self, reason: str) -> None:
        """Drop the connection now: a close frame if the socket takes it at once, then the transport goes."""
        if self.aborted is not None:
            return
        self.aborted = reason
        log.warning("aborting a connection from %s: %s", self._peer(), reason)
        if self.on_abort is not None:
            self.on_abort(self, reason)
        if self.protocol.state is State.OPEN and self.transport.get_write_buffer_size() == 0:
            # A fresh close frame, framed by hand: the protocol's own queue may hold megabytes of pongs.
            payload = Close(CloseCode.POLICY_VIOLATION, reason).serialize()
            self.transport.write(Frame(Opcode.CLOSE, payload).serialize(mask=False, extensions=[]))
        self.transport.abort()

    def _peer(self) -> str:
        """The remote address, for the log."""
        try:
            return str(self.remote_address[0])
        except Exception:
            return "?"
