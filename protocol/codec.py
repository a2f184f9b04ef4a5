"""The one place that turns messages into msgpack bytes and back.

`decode` trusts nothing: bytes that are not msgpack, a value that is not a map, an unknown `type`,
a missing or wrongly typed field all raise `ProtocolError`, which the server answers with
`bad_message` while keeping the connection. Sizes are bounded before anything is built.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import msgpack  # type: ignore[import-untyped]  # msgpack ships no type information

from gamenight.protocol.errors import ProtocolError
from gamenight.protocol.messages import BATCHED_TYPES, FIELD_SPECS, MESSAGE_TYPES, Batch, Message
from gamenight.protocol.schema import plain

MAX_FRAME = 64 * 1024  # a frame larger than this is refused before it is parsed
MAX_SERVER_FRAME = 1024 * 1024  # what a client accepts: a busy lobby's `welcome` lists hundreds of rooms


def to_wire(message: Message) -> dict[str, Any]:
    """The message as a plain map, wire keys and all; `id` only when set, fields marked omittable only when set."""
    return _wire_builder(type(message))(message)


def _compile_builder(cls: type[Message]) -> Callable[[Message], dict[str, Any]]:
    """A function building `cls`'s wire map, generated once from its field table (as `dataclasses` builds
    `__init__`): the keys in field order, with the same rules as a loop over the table would apply, but with
    no loop, `getattr` or table lookups per message. The server encodes a message for every member of a room
    on every move, so this is on its hottest path."""
    lines = ["def build(message):", f"    wire = {{'type': {cls.type!r}}}"]
    for index, spec in enumerate(FIELD_SPECS[cls]):
        if not spec.name.isidentifier():
            raise ValueError(f"{cls.__name__}: field name {spec.name!r} is not an identifier")
        lines.append(f"    value = message.{spec.name}")
        if spec.name == "id":
            lines.append("    if value is not None:")
        elif spec.omit:
            lines.append("    if not (value is None or value == [] or value == () or value == {}):")
        else:
            lines.append("    if True:")
        lines.append(f"        wire[WIRE[{index}]] = {'plain(value)' if spec.nested else 'value'}")
    lines.append("    return wire")
    namespace: dict[str, Any] = {"plain": plain, "WIRE": tuple(spec.wire for spec in FIELD_SPECS[cls])}
    exec("\n".join(lines), namespace)  # the source is built above from field names only
    builder: Callable[[Message], dict[str, Any]] = namespace["build"]
    return builder


_BUILDERS: dict[type[Message], Callable[[Message], dict[str, Any]]] = {}


def _wire_builder(cls: type[Message]) -> Callable[[Message], dict[str, Any]]:
    """The compiled wire-map builder of a message class (made on first use)."""
    builder = _BUILDERS.get(cls)
    if builder is None:
        builder = _BUILDERS[cls] = _batch_wire if cls is Batch else _compile_builder(cls)
    return builder


def _batch_wire(message: Message) -> dict[str, Any]:
    """A `batch` as a plain map: its messages each as their own map (the server builds batch frames around
    encoded messages with `encode_batch` instead; this is for tests and tools)."""
    assert isinstance(message, Batch)
    wire: dict[str, Any] = {"type": Batch.type, "room": message.room}
    if message.id is not None:
        wire["id"] = message.id
    wire["messages"] = [to_wire(inner) for inner in message.messages]
    return wire


_local = threading.local()  # one msgpack Packer per thread (a Packer is reused, and is not safe to share)


def _packer() -> Any:
    """This thread's Packer: reusing one saves building a Packer per message, as `msgpack.packb` does."""
    packer = getattr(_local, "packer", None)
    if packer is None:
        packer = _local.packer = msgpack.Packer(use_bin_type=True)
    return packer


def encode(message: Message) -> bytes:
    """Serialize one message to the bytes of one binary frame."""
    builder = _BUILDERS.get(type(message)) or _wire_builder(type(message))
    data: bytes = _packer().pack(builder(message))
    return data


def encode_batch(room: str, encoded: list[bytes]) -> bytes:
    """The `batch` frame of one room's already-encoded messages, built around their bytes without decoding them
    again (each message is encoded once, whatever number of frames it then travels in)."""
    packer = _packer()
    head: bytes = (
        packer.pack_map_header(3)
        + packer.pack("type")
        + packer.pack(Batch.type)
        + packer.pack("room")
        + packer.pack(room)
        + packer.pack("messages")
        + packer.pack_array_header(len(encoded))
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
    values = (_READERS.get(cls) or _reader(cls))(raw, rid, kind)
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


def _compile_reader(cls: type[Message]) -> Callable[[dict[Any, Any], int | None, str], dict[str, Any]]:
    """A function doing what `schema.read_fields` does for `cls`, generated once from its field table: the same
    checks in the same order, with the same errors, unrolled (every request a client sends is read by one)."""
    lines = ["def read(raw, rid, what):", "    values = {}"]
    for index, spec in enumerate(FIELD_SPECS[cls]):
        if not spec.name.isidentifier():
            raise ValueError(f"{cls.__name__}: field name {spec.name!r} is not an identifier")
        lines += [
            f"    if WIRE[{index}] in raw:",
            "        try:",
            f"            values[{spec.name!r}] = CONVERT[{index}](raw[WIRE[{index}]], rid)",
            "        except ProtocolError as exc:",
            f"            raise ProtocolError(f'field {{WIRE[{index}]!r}}: {{exc}}', rid) from None",
        ]
        if spec.required:
            lines += ["    else:", f"        raise ProtocolError(f'{{what}} needs field {{WIRE[{index}]!r}}', rid)"]
    lines.append("    return values")
    namespace: dict[str, Any] = {
        "ProtocolError": ProtocolError,
        "WIRE": tuple(spec.wire for spec in FIELD_SPECS[cls]),
        "CONVERT": tuple(spec.convert for spec in FIELD_SPECS[cls]),
    }
    exec("\n".join(lines), namespace)  # the source is built above from field names only
    reader: Callable[[dict[Any, Any], int | None, str], dict[str, Any]] = namespace["read"]
    return reader


_READERS: dict[type[Message], Callable[[dict[Any, Any], int | None, str], dict[str, Any]]] = {}


def _reader(cls: type[Message]) -> Callable[[dict[Any, Any], int | None, str], dict[str, Any]]:
    """The compiled field reader of a message class (made on first use)."""
    reader = _READERS[cls] = _compile_reader(cls)
    return reader


def decode(data: bytes, limit: int = MAX_FRAME) -> Message:
    """Parse one frame into a message, or raise ProtocolError saying what is wrong with it.

    `limit` is the largest frame accepted: MAX_FRAME for what clients send (the server's default),
    MAX_SERVER_FRAME for what a server sends (clients pass it).
    """
    return from_wire(_unpack(data, limit))
