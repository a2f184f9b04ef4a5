"""Reading the server's frames, shared by the TUI's connection and `gamenight-bot` (no Textual here)."""

from __future__ import annotations

import logging

from websockets.asyncio.client import ClientConnection

from gamenight.protocol import ProtocolError, decode
from gamenight.protocol.codec import MAX_SERVER_FRAME
from gamenight.protocol.messages import Message

log = logging.getLogger("gamenight.client")


async def next_message(ws: ClientConnection) -> Message:
    """The next well-formed message; frames that do not decode are logged and skipped."""
    while True:
        frame = await ws.recv()
        try:
            if isinstance(frame, str):
                raise ProtocolError("frames must be binary msgpack, not text")
            return decode(frame, MAX_SERVER_FRAME)
        except ProtocolError as exc:
            log.warning("ignoring a frame from the server: %s", exc)
