"""What a sans-I/O room or lobby hands the network layer: messages to send, records to store first, effects to run.

Also the small values rooms are built from (who a member is, who plays an AI seat) and `Refusal`, the one way
a request is turned down, so the room's parts (`room.py`, `drivers.py`, `policies.py`) share them without
importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gamenight.protocol.errors import ErrorCode
from gamenight.protocol.messages import Message
from gamenight.server.records import Record


class Refusal(Exception):
    """A request the room will not carry out; becomes an `error` with `code` for the requester only."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        suggestion: str | None = None,
        retry_after_ms: int | None = None,
        until: float | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.suggestion = suggestion  # a free name, with `name_taken`
        self.retry_after_ms = retry_after_ms  # how long to wait before asking again, with `rate_limited`
        self.until = until  # when a ban or mute ends (wall-clock seconds), with `banned` and `muted`


@dataclass(frozen=True, slots=True)
class AiSpec:
    """Who plays an AI seat: a level 1-5 or a named bot."""

    level: int | None = None
    bot: str | None = None

    @property
    def label(self) -> str:
        """How the seat is shown to people, e.g. "AI level 3" or "bot classic"."""
        return f"bot {self.bot}" if self.bot else f"AI level {self.level}"


@dataclass(frozen=True, slots=True)
class Member:
    """A person as rooms know them: their session, display name, the hash of their resume token, and whether
    they play as a bot (a program connected with `hello {bot: true}`)."""

    session: str
    name: str
    token_hash: str
    bot: bool = False
    claimed: bool = False  # their name is claimed with a key (only they may play rated games)


@dataclass(frozen=True, slots=True)
class Send:
    """Deliver `message` to each session in `to` (encoded once for all of them)."""

    to: frozenset[str]
    message: Message


@dataclass(frozen=True, slots=True)
class AiTurn:
    """Effect: ask the AI playing `seat` for a move in the state of `seq` (answer with `Room.ai_moved`)."""

    room: str
    seat: int
    seq: int
    game: str
    state: Any
    ai: AiSpec
    budget_ms: int
    late_ms: int | None = None  # how long past its budget an answer is still awaited (None: the server's default)


@dataclass(frozen=True, slots=True)
class StartClock:
    """Effect: run the tick clock of a live game, first tick `delay_ms` from now."""

    room: str
    delay_ms: int
    tick_ms: int


@dataclass(frozen=True, slots=True)
class ArmFlag:
    """Effect: check the room's flag `delay_ms` from now (answer with `Lobby.flag`); replaces the room's last one."""

    room: str
    delay_ms: int


@dataclass(frozen=True, slots=True)
class Disconnect:
    """Effect: close the session's connection once what was queued for it is written (an admin's kick or ban)."""

    session: str
    reason: str


Effect = AiTurn | StartClock | ArmFlag | Disconnect


@dataclass(slots=True)
class Outbox:
    """What a room wants done: records to store, then messages to send, then effects to run."""

    sends: list[Send] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    changed: bool = False  # the room's lobby summary changed

    def send(self, to: frozenset[str] | set[str], message: Message) -> None:
        """Queue `message` for the sessions in `to` (nothing if nobody)."""
        if to:
            self.sends.append(Send(frozenset(to), message))

    def extend(self, other: Outbox) -> Outbox:
        """Append another outbox's work to this one."""
        self.sends.extend(other.sends)
        self.effects.extend(other.effects)
        self.records.extend(other.records)
        self.changed = self.changed or other.changed
        return self
