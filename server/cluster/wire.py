"""The envelope of what nodes tell each other over Redis: a JSON header line, then opaque bytes.

A forwarded client frame or a batch of server frames is carried as it came (msgpack bytes the protocol's codec
made), so a node never re-encodes what it relays; only the small header is JSON.

Several messages for one channel that the bus sends together travel as one *batch* (`pack_batch`): the header
`{"t":"b"}` and the messages, each length-prefixed (`join_frames`). The bus's listener opens batches before the
node sees them (`unpack_batch`), so a batch is one PUBLISH and the node handles its messages one by one, in order.

On Redis, each PUBLISH (a message or a batch) is followed by 32 bytes: its HMAC-SHA256 under the cluster secret,
bound to the channel (server/cluster/trust.py). The bus adds it when it publishes and checks and strips it before
anything here sees the bytes; a message that fails is dropped.
"""

from __future__ import annotations

import json
import struct
from typing import Any

_LENGTH = struct.Struct(">I")
BATCH = b'{"t":"b"}\n'
"""How a batch starts (what `pack({"t": "b"}, ...)` makes)."""


def pack(header: dict[str, Any], body: bytes = b"") -> bytes:
    """One bus message: `header` (JSON, one line) and `body`."""
    return json.dumps(header, separators=(",", ":")).encode() + b"\n" + body


def unpack(data: bytes) -> tuple[dict[str, Any], bytes]:
    """The header and body of a bus message (ValueError if it is not one)."""
    line, sep, body = data.partition(b"\n")
    if not sep:
        raise ValueError("no header line")
    header = json.loads(line)
    if not isinstance(header, dict):
        raise ValueError("the header is not a map")
    return header, body


def join_frames(frames: list[bytes]) -> bytes:
    """Several frames as one body: each prefixed with its length (4 bytes, big-endian)."""
    return b"".join(_LENGTH.pack(len(frame)) + frame for frame in frames)


def split_frames(body: bytes) -> list[bytes]:
    """The frames `join_frames` joined (ValueError if the body is cut short)."""
    frames, at = [], 0
    while at < len(body):
        if at + 4 > len(body):
            raise ValueError("a frame length is cut short")
        (length,) = _LENGTH.unpack_from(body, at)
        at += 4
        if at + length > len(body):
            raise ValueError("a frame is cut short")
        frames.append(body[at : at + length])
        at += length
    return frames


def pack_batch(messages: list[bytes]) -> bytes:
    """Several bus messages as one (in order); one message is sent as it is."""
    if len(messages) == 1:
        return messages[0]
    return BATCH + join_frames(messages)


def unpack_batch(data: bytes) -> list[bytes]:
    """The messages of a batch, in order, or `[data]` for a message that is not one (ValueError if a batch is cut
    short)."""
    if not data.startswith(BATCH):
        return [data]
    return split_frames(data[len(BATCH) :])
