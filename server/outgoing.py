"""What one event-loop iteration decided, carried out together: one transaction, one socket write per connection.

Why: at a thousand busy connections the server spent about a third of its time on fixed costs per move: a
SQLite transaction for each move (BEGIN, INSERT, COMMIT) and a socket write for each frame (a move sends an
event and a state to both players: four `send` calls). `Outgoing` queues what the lobby decides and flushes
it at the start of the next loop iteration, so every move handled in one iteration shares one transaction,
and each connection gets its frames, in the order they were decided, in one write.

The order that matters is kept: the records are committed before any frame of the same flush is written, so
a move anybody has seen is on disk, as before.

Writes never wait for a reader (as with `websockets.broadcast`), so a client that stops reading would make
the server hold everything sent to it. A connection whose unsent bytes pass `MAX_BACKLOG` is reported to
`on_backlog` (the server closes it; the player can resume their seats from a fresh connection).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable

from websockets.asyncio.server import ServerConnection
from websockets.protocol import State

from gamenight.server.store import Record, Store

log = logging.getLogger("gamenight.server")

MAX_BACKLOG = 1 << 20
"""Bytes written to a connection but not yet taken by the network beyond which it counts as not reading:
a minute of a busy Tron room is ~150 KiB, so only a client that stopped reading gets near it."""


def write_frames(connection: ServerConnection, frames: list[bytes]) -> int:
    """Send binary messages to one connection with a single transport write; returns the bytes still unsent.

    This is what `websockets.broadcast` does for one message (frame it with the connection's Sans-I/O
    protocol, hand the bytes to the transport), done for several messages at once. Like `broadcast`, it does
    not wait for a slow reader: the frames join the transport's buffer. A connection that is closing is
    skipped (0).
    """
    protocol = connection.protocol
    if protocol.state is not State.OPEN:
        return 0
    try:
        for frame in frames:
            protocol.send_binary(frame)
        connection.transport.write(b"".join(protocol.data_to_send()))
        return connection.transport.get_write_buffer_size()
    except Exception as exc:  # a transport that broke under us: that connection's handler will see it close
        log.warning("could not write to a connection: %s", exc)
        return 0


class Outgoing:
    """Records and frames waiting for the flush at the start of the next loop iteration."""

    def __init__(
        self,
        store: Store | None,
        on_backlog: Callable[[ServerConnection], None] | None = None,
        max_backlog: int = MAX_BACKLOG,
    ) -> None:
        self.store = store
        self.on_backlog = on_backlog
        self.max_backlog = max_backlog
        self.groups: list[list[Record]] = []  # one group per decision: stored together or not at all
        self.frames: dict[ServerConnection, list[bytes]] = {}
        self._handle: asyncio.Handle | None = None

    def add_records(self, records: Iterable[Record]) -> None:
        """Queue one decision's records for the next transaction."""
        self.groups.append(list(records))
        self._schedule()

    def add_frame(self, connections: Iterable[ServerConnection], frame: bytes) -> None:
        """Queue one encoded message for each of `connections` (the bytes are shared, not copied)."""
        for connection in connections:
            queue = self.frames.get(connection)
            if queue is None:
                self.frames[connection] = [frame]
            else:
                queue.append(frame)
        self._schedule()

    def _schedule(self) -> None:
        """Ask the loop for a flush, once per iteration."""
        if self._handle is None:
            self._handle = asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        """Commit the queued records, then write each connection's queued frames in one go.

        The frames are sent even if storing fails: the rooms have already moved on in memory, and players
        seeing the game as it is matters more than the durability of the records that failed (logged).
        """
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        groups, self.groups = self.groups, []
        frames, self.frames = self.frames, {}
        if groups and self.store is not None:
            self._store(groups)
        for connection, queue in frames.items():
            if write_frames(connection, queue) > self.max_backlog and self.on_backlog is not None:
                self.on_backlog(connection)

    def _store(self, groups: list[list[Record]]) -> None:
        """All groups in one transaction; if that fails, each group in its own, so one bad group loses only itself."""
        assert self.store is not None
        try:
            self.store.write([record for group in groups for record in group])
            return
        except Exception:
            if len(groups) == 1:
                log.exception("could not store %d records; the game goes on in memory", len(groups[0]))
                return
        for group in groups:
            try:
                self.store.write(group)
            except Exception:
                log.exception("could not store %d records; the game goes on in memory", len(group))
