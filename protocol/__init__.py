"""The gamenight wire protocol: typed messages, one codec, stable error codes (see docs/protocol.md)."""

from protocol.codec import MAX_FRAME, decode, encode, from_wire, to_wire
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import MESSAGE_TYPES, PROTOCOL_VERSION, Message

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
