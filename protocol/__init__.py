"""The gamenight wire protocol: typed messages, one codec, stable error codes (see docs/protocol.md).

The names below load lazily, so code that needs only the vocabulary (game rules import
`gamenight.protocol.vocab`) never loads msgpack.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the type checker sees the real names; at run time they load on first use
    from gamenight.protocol.codec import MAX_FRAME, decode, encode, from_wire, to_wire
    from gamenight.protocol.errors import ErrorCode, ProtocolError
    from gamenight.protocol.messages import MESSAGE_TYPES, PROTOCOL_VERSION, Message

_EXPORTS = {
    "MAX_FRAME": "codec",
    "decode": "codec",
    "encode": "codec",
    "from_wire": "codec",
    "to_wire": "codec",
    "ErrorCode": "errors",
    "ProtocolError": "errors",
    "MESSAGE_TYPES": "messages",
    "PROTOCOL_VERSION": "messages",
    "Message": "messages",
}

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


def __getattr__(name: str) -> Any:
    """Load an exported name from its module on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
