"""Spectators get their room's traffic coalesced: at most one frame per window, however busy the room.

Why: a room's every move, tick, chat line and summary goes to every member. Players need each move at once,
but a room's audience can be 50 spectators (`spectators_per_room`), so a move costs 52 socket writes instead of
2, and 50 connections chatting and watching at the limit (`bench/hostile.py`, attack `chat_fanout`) more than
doubled the round trip of the players in that room. Watchers do not need each move the instant it is made.

What: `GameServer.deliver` hands this module the copies of a room's pushes (`moved`, `tick`, `event`, `state`,
`room`; protocol.messages.BATCHED_TYPES) meant for that room's spectators. They wait in the room's window, and
when it ends (`window_s` after the first of them; in a live game half a tick, so a watcher still sees every
tick on its own) each spectator gets one frame with everything since its last: the message itself if there is
one, else a `batch` of them in order. The messages keep the bytes they were encoded to once; spectators that
are owed the same messages (all of them, usually) share one `batch` frame, encoded once.

The order a spectator sees is the order the server decided, with one exception: errors (e.g. a chat line
refused `rate_limited`) are not held back, so they may overtake the spectator's batched room traffic. Any other
message to a spectator (the reply to a `sync`, `join` or `leave`, a lobby answer) first sends what waits for it
(`take`), and a decision that sends a spectator such a message sends it that decision's room traffic directly.
Nothing is queued here before its decision's records are on disk: the copies come in through the decision's
`stored` hook (server/outgoing.py), which runs only once the records are stored.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from websockets.asyncio.server import ServerConnection

from gamenight.protocol.codec import encode_batch
from gamenight.protocol.messages import BATCHED_TYPES
from gamenight.server.outbox import Send
from gamenight.server.outgoing import Outgoing

log = logging.getLogger("gamenight.server")

Frames = list[tuple[list[ServerConnection], bytes]]
"""Frames to write, each to its connections (as `Outgoing` takes them)."""
Held = tuple[str, bytes, list[ServerConnection], float]
"""A message's copy for spectators: its room, its encoded frame, the spectators' connections, the room's window (s)."""

MAX_BATCH_BYTES = 256 * 1024
"""A window's messages for one spectator beyond this size are split over several `batch` frames (clients accept
1 MiB frames; a window of a busy room holds a few KiB)."""


@dataclass(slots=True)
class Window:
    """One room's spectator traffic since its window opened: each message's bytes and who is still owed it."""

    items: list[tuple[bytes, set[ServerConnection]]] = field(default_factory=list)
    handle: asyncio.TimerHandle | None = None


class Fanout:
    """Per room, the messages its spectators are owed until the room's window ends."""

    def __init__(self, outgoing: Outgoing) -> None:
        self.outgoing = outgoing  # the frames go out through it, behind everything decided before them
        self.windows: dict[str, Window] = {}
        self.owed: dict[ServerConnection, dict[str, None]] = {}  # connection -> the rooms holding messages for it

    def add(self, room: str, frame: bytes, connections: list[ServerConnection], window_s: float) -> None:
        """Hold one encoded message of `room` for these spectators until the room's window ends."""
        if not connections:
            return
        window = self.windows.get(room)
        if window is None:
            window = self.windows[room] = Window()
            window.handle = asyncio.get_running_loop().call_later(window_s, self._end, room)
        window.items.append((frame, set(connections)))
        for connection in connections:
            rooms = self.owed.get(connection)
            if rooms is None:
                self.owed[connection] = {room: None}
            else:
                rooms[room] = None

    def holds(self, connection: ServerConnection) -> bool:
        """True while messages wait for `connection`."""
        return connection in self.owed

    def take(self, connection: ServerConnection) -> Frames:
        """Everything waiting for one connection, now (so a message sent to it directly comes after them)."""
        rooms = self.owed.pop(connection, None)
        if rooms is None:
            return []
        frames: Frames = []
        for room in rooms:
            window = self.windows.get(room)
            if window is None:
                continue
            parts = []
            for frame, owed in window.items:
                if connection in owed:
                    owed.discard(connection)
                    parts.append(frame)
            frames.extend(([connection], packed) for packed in self._pack(room, parts))
        return frames

    def _end(self, room: str) -> None:
        """A room's window is over: each spectator gets its messages, spectators owed the same ones one shared frame."""
        try:
            self.outgoing.flush()  # the decisions before this moment put their spectators' share in first
            frames = self._due(room)
            if frames:
                self.outgoing.add((), frames)
        except Exception:
            log.exception("bug while sending spectators their batch")

    def _due(self, room: str) -> Frames:
        """Close the room's window and build its frames."""
        window = self.windows.pop(room, None)
        if window is None:
            return []
        by_connection: dict[ServerConnection, list[int]] = {}
        for index, (_, owed) in enumerate(window.items):
            for connection in owed:
                indices = by_connection.get(connection)
                if indices is None:
                    by_connection[connection] = [index]
                else:
                    indices.append(index)
        groups: dict[tuple[int, ...], list[ServerConnection]] = {}
        for connection, indices in by_connection.items():
            groups.setdefault(tuple(indices), []).append(connection)
            rooms = self.owed.get(connection)
            if rooms is not None:
                rooms.pop(room, None)
                if not rooms:
                    del self.owed[connection]
        frames: Frames = []
        for key, connections in groups.items():
            parts = [window.items[i][0] for i in key]
            frames.extend((connections, packed) for packed in self._pack(room, parts))
        return frames

    def _pack(self, room: str, parts: list[bytes]) -> list[bytes]:
        """One frame for these messages: the message itself if it is alone, else `batch` frames of bounded size."""
        if len(parts) <= 1:
            return parts
        packed: list[bytes] = []
        chunk: list[bytes] = []
        size = 0
        for part in parts:
            if chunk and size + len(part) > MAX_BATCH_BYTES:
                packed.append(encode_batch(room, chunk))
                chunk, size = [], 0
            chunk.append(part)
            size += len(part)
        packed.append(encode_batch(room, chunk) if len(chunk) > 1 else chunk[0])
        return packed

    def cancel(self) -> None:
        """Stop every window (the server is closing): what waits is dropped with the connections."""
        for window in self.windows.values():
            if window.handle is not None:
                window.handle.cancel()
        self.windows.clear()
        self.owed.clear()


@dataclass(slots=True)
class Split:
    """How one decision's messages reach spectators: which copies wait in their room's window, and who is sent a
    message of a room directly (what waits for them goes out first)."""

    held: dict[int, frozenset[str]]  # index of a send -> the spectators whose copy waits
    ahead: set[str]  # sessions sent a room's message directly (a reply: `joined`, `left`, a `sync`'s `state`, ...)


def split(sends: list[Send], spectators_of: Callable[[str], set[str] | None], holding: bool) -> Split | None:
    """Decide which copies of a decision's messages wait for spectators' windows; None when none do and nothing
    is waiting anywhere (the usual case of a room nobody watches: everything goes out at once).

    A room's push (BATCHED_TYPES, no request `id`) waits for the spectators of that room it is sent to, except
    those this decision also sends a room's message directly (a reply such as the `joined` and `state` of a join):
    they get all of the decision's messages at once, after what was waiting for them. Errors never wait and
    never send what waits.
    """
    watched = False
    ahead: set[str] = set()
    for send in sends:
        message = send.message
        code = getattr(message, "room", None)
        if code is None:
            continue
        if spectators_of(code):
            watched = True
        if (message.type in BATCHED_TYPES and message.id is None) or message.type == "error":
            continue
        ahead.update(send.to)
    if not watched and not holding:
        return None
    held: dict[int, frozenset[str]] = {}
    for index, send in enumerate(sends):
        message = send.message
        if message.type not in BATCHED_TYPES or message.id is not None:
            continue
        spectators = spectators_of(getattr(message, "room", ""))
        if spectators:
            waiting = (send.to & spectators) - ahead
            if waiting:
                held[index] = waiting
    return Split(held, ahead)
