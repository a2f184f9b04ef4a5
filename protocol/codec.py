"""The one place that turns messages into msgpack bytes and back.

`decode` trusts nothing: bytes that are not msgpack, a value that is not a map, an unknown `type`,
a missing or wrongly typed field all raise `ProtocolError`, which the server answers with
`bad_message` while keeping the connection. Sizes are bounded before anything is built.
"""

from __future__ import annotations

from typing import Any

import msgpack  # type: ignore[import-untyped]  # msgpack ships no type information

from gamenight.protocol.errors import ProtocolError
from gamenight.protocol.messages import BATCHED_TYPES, FIELD_SPECS, MESSAGE_TYPES, Batch, Message
from gamenight.protocol.schema import plain, read_fields

MAX_FRAME = 64 * 1024  # a frame larger than this is refused before it is parsed
MAX_SERVER_FRAME = 1024 * 1024  # what a client accepts: a busy lobby's `welcome` lists hundreds of rooms


def to_wire(message: Message) -> dict[str, Any]:
    """The message as a plain map, wire keys and all; `id` only when set, fields marked omittable only when set."""
    wire: dict[str, Any] = {"type": message.type}
    for spec in FIELD_SPECS[type(message)]:
        value = getattr(message, spec.name)
        if spec.name == "id" and value is None:
            continue
        if spec.omit and (value is None or value == [] or value == () or value == {}):
            continue
        wire[spec.wire] = plain(value) if spec.nested else value
    if isinstance(message, Batch):
        wire["messages"] = [to_wire(inner) for inner in message.messages]
    return wire


def encode(message: Message) -> bytes:
    """Serialize one message to the bytes of one binary frame."""
    data: bytes = msgpack.packb(to_wire(message), use_bin_type=True)
    return data


_PACKER = msgpack.Packer(use_bin_type=True)


def encode_batch(room: str, encoded: list[bytes]) -> bytes:
    """The `batch` frame of one room's already-encoded messages, built around their bytes without decoding them
    again (each message is encoded once, whatever number of frames it then travels in)."""
    head: bytes = (
        _PACKER.pack_map_header(3)
        + _PACKER.pack("type")
        + _PACKER.pack(Batch.type)
        + _PACKER.pack("room")
        + _PACKER.pack(room)
        + _PACKER.pack("messages")
        + _PACKER.pack_array_header(len(encoded))
    )
    return head + b"".join(encoded)


def _unpack(data: bytes, limit: int) -> Any:
    """Parse msgpack bytes with size limits, turning every parser failure into ProtocolError."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ProtocolError("frames must be binary msgpack, not text")
    if len(data) > limit:
        raise ProtocolError(f"frame larger than {limit} bytes")
    try:
        return msgpack.unpackb(
            data,
            raw=False,
            strict_map_key=True,
            max_str_len=limit,
            max_bin_len=limit,
            max_array_len=limit // 16,
            max_map_len=limit // 64,
        )
    except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError) as exc:
        raise ProtocolError(f"frame is not a single msgpack value ({type(exc).__name__})") from None
    except RecursionError:
        raise ProtocolError("frame is nested too deeply") from None


def parse(data: bytes, limit: int = MAX_FRAME) -> Any:
    """A frame's plain msgpack value, size-checked but not checked to be a message (the echo baseline's parse)."""
    return _unpack(data, limit)


def _request_id(raw: dict[Any, Any]) -> int | None:
    """The request id of a raw map if it has a usable one, so even a rejection can echo it."""
    rid = raw.get("id")
    return rid if isinstance(rid, int) and not isinstance(rid, bool) else None


def request_id_of(data: Any, limit: int = MAX_FRAME) -> int | None:
    """The `id` of a request frame without building the message (a refusal before decoding still echoes it);
    None when the frame has no usable id or is not a msgpack map."""
    try:
        raw = _unpack(data, limit)
    except ProtocolError:
        return None
    return _request_id(raw) if isinstance(raw, dict) else None


def from_wire(raw: Any) -> Message:
    """Build a message from an already-parsed value, checking its type and every field."""
    if not isinstance(raw, dict):
        raise ProtocolError("a message must be a map")
    rid = _request_id(raw)
    kind = raw.get("type")
    if not isinstance(kind, str):
        raise ProtocolError("a message needs a string field 'type'", rid)
    cls = MESSAGE_TYPES.get(kind)
    if cls is None:
        raise ProtocolError(f"unknown message type {kind[:40]!r}", rid)
    values = read_fields(cls, raw, rid, kind)
    if isinstance(values.get("id"), int) and not -(2**53) <= values["id"] <= 2**53:
        raise ProtocolError("field 'id' is out of range", None)
    if cls is Batch:
        values["messages"] = [_batched(item, values["room"], rid) for item in values.get("messages", [])]
    return cls(**values)


def _batched(raw: Any, room: str, rid: int | None) -> Message:
    """One message inside a `batch`: a map of one of BATCHED_TYPES, of the batch's room."""
    kind = raw.get("type") if isinstance(raw, dict) else None
    if kind not in BATCHED_TYPES:
        raise ProtocolError(f"a batch may not carry {str(kind)[:40]!r}", rid)
    message = from_wire(raw)
    if getattr(message, "room", None) != room:
        raise ProtocolError("a batch carries messages of its own room only", rid)
    return message


def decode(data: bytes, limit: int = MAX_FRAME) -> Message:
    """Parse one frame into a message, or raise ProtocolError saying what is wrong with it.

    `limit` is the largest frame accepted: MAX_FRAME for what clients send (the server's default),
    MAX_SERVER_FRAME for what a server sends (clients pass it).
    """
    return from_wire(_unpack(data, limit))
