"""Stable error codes of the wire protocol, and the exception `decode` raises for bad frames.

The codes are part of the contract in docs/protocol.md: clients branch on them, so they never change
meaning. The human text that goes with them may change freely.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    """Every `code` an `error` message can carry."""

    BAD_MESSAGE = "bad_message"  # not msgpack, not a map, unknown type, missing / wrongly typed field
    UNSUPPORTED_PROTOCOL = "unsupported_protocol"  # hello with a protocol version we do not speak
    NOT_READY = "not_ready"  # anything but hello before hello
    UNKNOWN_ROOM = "unknown_room"  # no room with that code (or it closed)
    ROOM_FULL = "room_full"  # every seat is taken
    SEAT_TAKEN = "seat_taken"  # the asked-for seat is taken
    NOT_IN_ROOM = "not_in_room"  # the request needs you to be in that room (or seated in it)
    NOT_YOUR_TURN = "not_your_turn"  # your seat is not to move
    ILLEGAL_MOVE = "illegal_move"  # the move is not legal here; the state is unchanged
    STALE = "stale"  # the move was made against an older `seq`
    GAME_OVER = "game_over"  # the game has ended; only rematch or leave
    BAD_OPTIONS = "bad_options"  # unknown game, unknown option or a value out of range
    NOT_ALLOWED = "not_allowed"  # you may not do that here (not the host, game already started, ...)
    RATE_LIMITED = "rate_limited"  # too many messages (or a room's chat too fast); slow down
    TOO_MANY = "too_many"  # a cap is reached: rooms per person or address, public rooms, spectators
    NAME_TAKEN = "name_taken"  # the name is claimed by another key; `suggestion` holds a free one
    BAD_SIGNATURE = "bad_signature"  # hello's public key and signature do not sign this connection's nonce
    OLD_CLAIM = "old_claim"  # the name's claim is protocol 2's: send its old `key` once with your public key
    BAD_TOKEN = "bad_token"  # a resume token the server does not know
    UNKNOWN_PLAYER = "unknown_player"  # no one online under that name (challenge, invite)
    UNKNOWN_CHALLENGE = "unknown_challenge"  # no pending challenge with that id offered to you (accept, decline)
    UNKNOWN_GAME = "unknown_game"  # no finished game with that id
    UNAVAILABLE = "unavailable"  # the server cannot store this room's game now (a full or read-only disk)
    BANNED = "banned"  # hello refused: the name or address is banned until `until` (moderation)
    MUTED = "muted"  # chat refused: your name is muted by an admin for now (moderation)
    KICKED = "kicked"  # an admin closed your connection (moderation); you may connect again
    INTERNAL_ERROR = "internal_error"  # a server bug; it is logged there, never described here


class ProtocolError(ValueError):
    """A frame that is not a valid message; the server answers `bad_message` and keeps the connection."""

    def __init__(self, message: str, request_id: int | None = None) -> None:
        super().__init__(message)
        self.request_id = request_id
