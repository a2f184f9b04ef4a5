"""What one event-loop iteration decided, carried out together: one transaction, one socket write per connection.

Why: at a thousand busy connections the server spent about a third of its time on fixed costs per move: a
SQLite transaction for each move (BEGIN, INSERT, COMMIT) and a socket write for each frame (a move sends an
event and a state to both players: four `send` calls). `Outgoing` queues what the lobby decides and flushes
it at the start of the next loop iteration, so every move handled in one iteration shares one transaction,
and each connection gets its frames, in the order they were decided, in one write.

The order that matters is kept: the records are committed before any frame of the same flush is written, so
a move anybody has seen is on disk. A decision whose records cannot be stored (a full disk, a read-only file)
sends none of its frames: its `on_lost` is told instead, and the server takes the room offline.

Writes never wait for a reader (as with `websockets.broadcast`), so a client that stops reading would make
the server hold everything sent to it. A connection whose unsent bytes pass `MAX_BACKLOG` is reported to
`on_backlog` (the server aborts it; the player can resume their seats from a fresh connection).
"""

from __future__ import annotations

import asyncio
import logging
import struct
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from websockets.asyncio.server import ServerConnection
from websockets.frames import Frame, Opcode
from websockets.protocol import State

from gamenight.server.records import Record, StoreBackend

log = logging.getLogger("gamenight.server")

MAX_BACKLOG = 1 << 20
"""Bytes written to a connection but not yet taken by the network beyond which it counts as not reading:
a minute of a busy Tron room is ~150 KiB, so only a client that stopped reading gets near it."""


class Relay(ABC):
    """A connection another node of a cluster holds: frames for it are handed to `relay` (server/cluster/node.py)."""

    @abstractmethod
    def relay(self, frames: list[bytes]) -> None:
        """Pass the frames (already framed, see `frame`) on, in order."""


def frame(message: bytes) -> bytes:
    """One binary message as a complete websocket frame from the server: FIN and opcode 2, the length, no mask
    (RFC 6455 section 5.2; a server never masks, and this server negotiates no extension). The bytes are what
    `protocol.send_binary` would produce; built once per message, they serve every connection it goes to."""
    length = len(message)
    if length < 126:
        return bytes((0x82, length)) + message
    if length < 65536:
        return struct.pack("!BBH", 0x82, 126, length) + message
    return struct.pack("!BBQ", 0x82, 127, length) + message


def write_frames(connection: ServerConnection, frames: list[bytes]) -> int:
    """Send framed binary messages (`frame`) to one connection with a single transport write; returns the bytes
    still unsent.

    This is what `websockets.broadcast` does for one message (hand the framed bytes to the transport), done for
    several messages at once, with frames built once for all their connections. Like `broadcast`, it does not
    wait for a slow reader: the frames join the transport's buffer. A connection that is closing is skipped (0).
    Anything websockets itself still has to send goes first; with its frame logging on (debug), the frames go
    through websockets so that they are logged.
    """
    if isinstance(connection, Relay):
        connection.relay(frames)
        return 0
    protocol = connection.protocol
    if protocol.state is not State.OPEN:
        return 0
    try:
        if protocol.debug:
            for framed in frames:
                protocol.send_frame(Frame(Opcode.BINARY, framed[_header_size(framed) :]))
            data = b"".join(protocol.data_to_send())
        elif protocol.writes:
            data = b"".join(protocol.data_to_send() + frames)
        else:
            data = b"".join(frames)
        connection.transport.write(data)
        return connection.transport.get_write_buffer_size()
    except Exception as exc:  # a transport that broke under us: that connection's handler will see it close
        log.warning("could not write to a connection: %s", exc)
        return 0


def _header_size(framed: bytes) -> int:
    """The length of the header `frame` put before a message."""
    return 2 if framed[1] < 126 else 4 if framed[1] == 126 else 10


@dataclass(slots=True)
class Decision:
    """What one lobby decision wants done: its records (stored together or not at all), then its frames."""

    records: list[Record]
    frames: list[tuple[list[ServerConnection], bytes]] = field(default_factory=list)
    on_lost: Callable[[list[Record], Exception], None] | None = None  # told when the records could not be stored
    # Called at the flush once the records are stored (in decision order); the frames it returns are written
    # ahead of the decision's own. Spectator batching (server/fanout.py) takes its share of the decision here.
    stored: Callable[[], list[tuple[list[ServerConnection], bytes]]] | None = None


class Outgoing:
    """Decisions waiting for the flush at the start of the next loop iteration."""

    def __init__(
        self,
        store: StoreBackend | None,
        on_backlog: Callable[[ServerConnection], None] | None = None,
        max_backlog: int = MAX_BACKLOG,
    ) -> None:
        self.store = store
        self.on_backlog = on_backlog
        self.max_backlog = max_backlog
        self.decisions: list[Decision] = []
        self.failure: str | None = None  # why the last write to the store failed; None once one succeeds
        # In a cluster: the owner epochs a batch's rooms are written under (server/cluster; Store.write's fences).
        self.fences: Callable[[list[Record]], dict[str, int]] | None = None
        self._handle: asyncio.Handle | None = None

    def add(
        self,
        records: Iterable[Record],
        frames: Iterable[tuple[list[ServerConnection], bytes]] = (),
        on_lost: Callable[[list[Record], Exception], None] | None = None,
        stored: Callable[[], list[tuple[list[ServerConnection], bytes]]] | None = None,
    ) -> None:
        """Queue one decision: its records, and the frames (each for its connections) that may go out once stored."""
        self.decisions.append(Decision(list(records), [(list(c), f) for c, f in frames if c], on_lost, stored))
        self._schedule()

    def add_records(self, records: Iterable[Record]) -> None:
        """Queue one decision's records alone."""
        self.add(records)

    def add_frame(self, connections: Iterable[ServerConnection], frame: bytes) -> None:
        """Queue one encoded message for each of `connections` (the bytes are shared, not copied)."""
        self.add((), [(list(connections), frame)])

    def _schedule(self) -> None:
        """Ask the loop for a flush, once per iteration."""
        if self._handle is None:
            self._handle = asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        """Commit the queued records, then write each connection's frames, in decision order, in one go.

        A decision whose records could not be stored sends none of its frames (nobody is told of a move that
        is not on disk); its `on_lost` is told instead, after the others' frames are written.
        """
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        decisions, self.decisions = self.decisions, []
        lost = self._store(decisions) if self.store is not None else {}
        queues: dict[ServerConnection, list[bytes]] = {}
        for index, decision in enumerate(decisions):
            if index in lost:
                continue
            frames = decision.frames
            if decision.stored is not None:
                frames = self._stored(decision.stored) + frames
            for connections, message in frames:
                framed = frame(message)  # once per message, whatever the number of its connections
                for connection in connections:
                    queue = queues.get(connection)
                    if queue is None:
                        queues[connection] = [framed]
                    else:
                        queue.append(framed)
        for connection, queue in queues.items():
            unsent = write_frames(connection, queue)
            if self.max_backlog and unsent > self.max_backlog and self.on_backlog is not None:
                self.on_backlog(connection)
        for index, exc in lost.items():
            on_lost = decisions[index].on_lost
            if on_lost is not None:
                on_lost(decisions[index].records, exc)

    @staticmethod
    def _stored(
        stored: Callable[[], list[tuple[list[ServerConnection], bytes]]],
    ) -> list[tuple[list[ServerConnection], bytes]]:
        """A decision's `stored` hook (a bug in it is logged, never raised into the flush)."""
        try:
            return stored()
        except Exception:
            log.exception("bug in a decision's stored hook")
            return []

    def _store(self, decisions: list[Decision]) -> dict[int, Exception]:
        """All decisions' records in one transaction; if that fails, each decision's in its own.

        Returns the decisions (by index) whose records are not on disk, with the reason.
        """
        assert self.store is not None
        groups = [(i, d.records) for i, d in enumerate(decisions) if d.records]
        if not groups:
            return {}
        try:
            batch = [record for _, records in groups for record in records]
            self.store.write(batch, self.fences(batch) if self.fences is not None else None)
            self.failure = None
            return {}
        except Exception as exc:
            if len(groups) == 1:
                return self._failed({groups[0][0]: exc}, len(groups[0][1]))
        lost: dict[int, Exception] = {}
        for index, records in groups:
            try:
                self.store.write(records, self.fences(records) if self.fences is not None else None)
            except Exception as exc:
                lost[index] = exc
        if len(lost) < len(groups):
            self.failure = None
        return self._failed(lost, sum(len(decisions[i].records) for i in lost)) if lost else lost

    def _failed(self, lost: dict[int, Exception], count: int) -> dict[int, Exception]:
        """Log a failed write loudly (once per flush) and remember why, for the health check."""
        reason = next(iter(lost.values()))
        self.failure = f"{type(reason).__name__}: {reason}"
        log.error("could not store %d records (%s); their rooms stop until the database is writable", count, reason)
        return lost


class Batcher:
    """Runs `emit` at most once per `interval` seconds, `interval` after the first `poke` since the last run.

    The lobby's pushes use it: the first room change arms it, every change in the next `interval` joins the same
    `lobby` frame, so N changes cost each watcher one frame per interval instead of N frames. `emit` may poke
    again (changes left for the next frame): that arms the next run, a full interval later.
    """

    def __init__(self, interval: float, emit: Callable[[], None]) -> None:
        self.interval = interval
        self.emit = emit
        self._handle: asyncio.TimerHandle | None = None

    def poke(self) -> None:
        """Something changed: run `emit` at the end of the current interval (arming one if none runs)."""
        if self._handle is None:
            self._handle = asyncio.get_running_loop().call_later(self.interval, self._run)

    def _run(self) -> None:
        """The interval is over: emit (a bug in it is logged, never raised into the event loop)."""
        self._handle = None
        try:
            self.emit()
        except Exception:
            log.exception("bug while sending a lobby push")

    def cancel(self) -> None:
        """Stop (the server is closing)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
