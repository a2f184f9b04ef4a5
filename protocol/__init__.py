"""The gamenight wire protocol: typed messages, one codec, stable error codes (see docs/protocol.md)."""

from gamenight.protocol.codec import MAX_FRAME, decode, encode, from_wire, to_wire
from gamenight.protocol.errors import ErrorCode, ProtocolError
from gamenight.protocol.messages import MESSAGE_TYPES, PROTOCOL_VERSION, Message

__all__ = [
    "MAX_FRAME",
    "MESSAGE_TYPES",
    "PROTOCOL_VERSION",
    "ErrorCode",
    "Message",
    "ProtocolError",
    "decode",
    "encode",
    "from_wire",
    "to_wire",
]
