"""The lobby: every session and every room of one server, and the dispatch of requests to them.

Like `Room`, the lobby is sans-I/O: `hello`, `handle`, `disconnect` and friends return an `Outbox`
of messages and effects. It is an object the network layer creates and passes to each connection
handler, never a module global, so tests can run several side by side.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field, replace
from typing import Any

from protocol.codec import to_wire
from protocol.errors import ErrorCode
from protocol.messages import (
    PROTOCOL_VERSION,
    AddAi,
    Chat,
    CreateRoom,
    Error,
    Hello,
    Join,
    Leave,
    Left,
    ListRooms,
    MakeMove,
    Message,
    Rematch,
    RemoveAi,
    Resign,
    RoomInfo,
    Rooms,
    Sync,
    Welcome,
)
from server.games import GAMES
from server.games.base import BadOptions
from server.room import AiSpec, Outbox, Refusal, Room
from server.room_options import describe, split_and_validate
from server.text import clean_name, clean_text

SERVER_NAME = "gamenight/0.1"
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no I/1 or O/0 to misread
CODE_LENGTH = 5
EMPTY_ROOM_GRACE_S = 60.0  # a room nobody is in closes after this long
AI_LEVELS = range(1, 6)


@dataclass(slots=True)
class Client:
    """One connected (or recently connected) person: their session id, name and rooms."""

    session: str
    name: str
    token: str
    rooms: set[str] = field(default_factory=set)
    rooms_created: int = 0


class Lobby:
    """All rooms and sessions of a server; routes each request to the room it concerns."""

    def __init__(self, *, ai_bots: frozenset[str] = frozenset(), max_rooms_per_client: int = 20) -> None:
        self.rooms: dict[str, Room] = {}
        self.clients: dict[str, Client] = {}
        self.ai_bots = ai_bots
        self.max_rooms_per_client = max_rooms_per_client

    # -- sessions --------------------------------------------------------------------------------------
    def hello(self, msg: Hello) -> tuple[Client, Outbox]:
        """Greet a new connection: check the protocol, make its session, reply `welcome`."""
        if msg.protocol != PROTOCOL_VERSION:
            raise Refusal(ErrorCode.UNSUPPORTED_PROTOCOL,
                          f"this server speaks protocol {PROTOCOL_VERSION}, not {msg.protocol}")
        client = Client(session=secrets.token_hex(8), name=clean_name(msg.name), token=secrets.token_urlsafe(24))
        self.clients[client.session] = client
        out = Outbox()
        out.send({client.session}, Welcome(
            protocol=PROTOCOL_VERSION, session=client.session, server=SERVER_NAME,
            games=[describe(game) for game in GAMES.values()], token=client.token,
            rooms=self._public_summaries(), id=msg.id,
        ))
        return client, out

    def disconnect(self, session: str, now: float) -> Outbox:
        """A connection closed: spectating ends, seats are held, and empty rooms start their grace period."""
        out = Outbox()
        client = self.clients.pop(session, None)
        if client is None:
            return out
        for code in sorted(client.rooms):
            room = self.rooms.get(code)
            if room is not None:
                out.extend(self._after(room, room.disconnect(session), now))
        return out

    # -- requests -----------------------------------------------------------------------------------------
    def handle(self, session: str, msg: Message, now: float) -> Outbox:
        """Carry out one request; a refusal becomes an `error` for the requester alone."""
        try:
            return self._dispatch(self.clients[session], msg, now)
        except Refusal as refusal:
            out = Outbox()
            out.send({session}, Error(code=refusal.code, message=refusal.message, id=msg.id,
                                      room=getattr(msg, "room", None)))
            return out

    def _dispatch(self, client: Client, msg: Message, now: float) -> Outbox:
        """Route a request by its type."""
        match msg:
            case Hello():
                raise Refusal(ErrorCode.BAD_MESSAGE, "hello was already received on this connection")
            case ListRooms():
                out = Outbox()
                out.send({client.session}, Rooms(rooms=self._public_summaries(), id=msg.id))
                return out
            case CreateRoom():
                return self._create(client, msg, now)
            case Join():
                room = self._room(msg.room)
                client.rooms.add(room.code)
                try:
                    return self._after(room, room.join(client.session, client.name, msg.role, msg.seat, msg.id), now)
                except Refusal:
                    if not room.is_member(client.session):
                        client.rooms.discard(room.code)
                    raise
            case Leave():
                room = self._room(msg.room)
                out = room.leave(client.session)
                client.rooms.discard(room.code)
                out.send({client.session}, Left(room=room.code, id=msg.id))
                return self._after(room, out, now)
            case MakeMove():
                room = self._room(msg.room)
                return self._after(room, room.move(client.session, msg.move, msg.seq), now)
            case Chat():
                room = self._room(msg.room)
                return room.chat(client.session, client.name, clean_text(msg.text))
            case Resign():
                room = self._room(msg.room)
                return self._after(room, room.resign(client.session), now)
            case Rematch():
                room = self._room(msg.room)
                return self._after(room, room.rematch(client.session), now)
            case AddAi():
                room = self._room(msg.room)
                return self._after(room, room.add_ai(client.session, msg.seat, self._ai_spec(msg)), now)
            case RemoveAi():
                room = self._room(msg.room)
                return self._after(room, room.remove_ai(client.session, msg.seat), now)
            case Sync():
                return self._sync(client, msg)
        raise Refusal(ErrorCode.BAD_MESSAGE, f"{msg.type} is not a request a client can send")

    def _room(self, code: str) -> Room:
        """The room with this code (case-insensitive), or an unknown_room refusal."""
        room = self.rooms.get(code.strip().upper())
        if room is None:
            raise Refusal(ErrorCode.UNKNOWN_ROOM, f"there is no room {code[:16]!r}")
        return room

    def _create(self, client: Client, msg: CreateRoom, now: float) -> Outbox:
        """Open a new room with validated options; the creator is its host."""
        game = GAMES.get(msg.game)
        if game is None:
            raise Refusal(ErrorCode.BAD_OPTIONS, f"unknown game {msg.game[:40]!r}; try one of {', '.join(GAMES)}")
        if client.rooms_created >= self.max_rooms_per_client:
            raise Refusal(ErrorCode.NOT_ALLOWED, f"you may open at most {self.max_rooms_per_client} rooms")
        try:
            game_options, room_options = split_and_validate(game, msg.options)
        except BadOptions as exc:
            raise Refusal(ErrorCode.BAD_OPTIONS, str(exc)) from None
        room = Room(self._new_code(), game, game_options, room_options, client.session, client.name, msg.private)
        room.empty_since = now
        self.rooms[room.code] = room
        client.rooms_created += 1
        out = Outbox(changed=True)
        out.send({client.session}, replace(room.summary(), id=msg.id))
        return self._after(room, out, now)

    def _new_code(self) -> str:
        """A fresh room code that no open room uses."""
        while True:
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            if code not in self.rooms:
                return code

    def _ai_spec(self, msg: AddAi) -> AiSpec:
        """Check an add_ai request's level or bot name."""
        if (msg.level is None) == (msg.bot is None):
            raise Refusal(ErrorCode.BAD_OPTIONS, "give exactly one of 'level' (1-5) or 'bot'")
        if msg.level is not None and msg.level not in AI_LEVELS:
            raise Refusal(ErrorCode.BAD_OPTIONS, "AI level must be 1 (easy) to 5 (max)")
        if msg.bot is not None and msg.bot not in self.ai_bots:
            names = ", ".join(sorted(self.ai_bots)) or "none"
            raise Refusal(ErrorCode.BAD_OPTIONS, f"unknown bot {msg.bot[:40]!r}; bots: {names}")
        return AiSpec(level=msg.level, bot=msg.bot)

    def _sync(self, client: Client, msg: Sync) -> Outbox:
        """Resend what a member missed: the kept events since `seq` and the current state."""
        room = self._room(msg.room)
        if not room.is_member(client.session):
            raise Refusal(ErrorCode.NOT_IN_ROOM, f"you are not in room {room.code}")
        out = Outbox()
        for event in room.events_since(msg.seq) or []:
            out.send({client.session}, event)
        if room.state is not None:
            out.send({client.session}, room.snapshot())
        return out

    # -- time-driven work -------------------------------------------------------------------------------------
    def tick(self, code: str, now: float) -> Outbox:
        """A live room's clock fired."""
        room = self.rooms.get(code)
        return self._after(room, room.tick(), now) if room else Outbox()

    def ai_moved(self, code: str, seat: int, seq: int, text: str, info: dict[str, Any], now: float) -> Outbox:
        """An AI answered; hand its move to its room."""
        room = self.rooms.get(code)
        if room is None:
            return Outbox()
        try:
            return self._after(room, room.ai_moved(seat, seq, text, info), now)
        except Refusal:
            return Outbox()

    def sweep(self, now: float) -> Outbox:
        """Close rooms that have had nobody in them for the grace period."""
        out = Outbox()
        for code, room in list(self.rooms.items()):
            if room.empty_since is not None and now - room.empty_since >= EMPTY_ROOM_GRACE_S:
                out.extend(self._close(code))
        return out

    def _close(self, code: str) -> Outbox:
        """Remove a room and tell the lobby it is gone."""
        room = self.rooms.pop(code)
        room.status = "closed"
        out = Outbox()
        self._push_summary(room, out)
        return out

    # -- lobby pushes ---------------------------------------------------------------------------------------------
    def _after(self, room: Room, out: Outbox, now: float) -> Outbox:
        """Bookkeeping after a room changed: its empty-since clock and the lobby's view of it."""
        occupied = room.spectators or any(s.session is not None and s.connected for s in room.seats)
        room.empty_since = None if occupied else (room.empty_since or now)
        if out.changed:
            self._push_summary(room, out)
            out.changed = False
        return out

    def _push_summary(self, room: Room, out: Outbox) -> None:
        """Tell every lobby client (or, for a private room, its members) what the room looks like now."""
        members = {s for s, c in self.clients.items() if room.code in c.rooms}
        out.send(members if room.private else set(self.clients), room.summary())

    def _public_summaries(self) -> list[dict[str, Any]]:
        """Every public room's summary as a plain map, for `welcome` and `rooms`."""
        return [_fields(room.summary()) for room in self.rooms.values() if not room.private]


def _fields(info: RoomInfo) -> dict[str, Any]:
    """A RoomInfo's fields as a plain map (wire keys), without type or id."""
    wire = to_wire(info)
    wire.pop("type")
    return wire
