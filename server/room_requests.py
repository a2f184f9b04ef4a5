"""Requests that concern one room: open, join, leave, move, chat, AI seats and the rest (sans-I/O, part of the lobby).

Each handler finds the room as the requester may see it (server/directory.py), passes the caps that apply
(server/admission.py), lets the room decide, and hands the room's outbox to the lobby's `after` (its listing,
presence and tournament bookkeeping).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gamenight.protocol.errors import ErrorCode
from gamenight.protocol.messages import (
    Abort,
    AddAi,
    Chat,
    CreateRoom,
    Join,
    Leave,
    Left,
    MakeMove,
    Message,
    MoreTime,
    Rematch,
    RemoveAi,
    Resign,
    Sync,
    Takeback,
    TakebackDecline,
)
from gamenight.protocol.vocab import Role
from gamenight.server.admission import Admission
from gamenight.server.directory import RoomDirectory, validated
from gamenight.server.room import Outbox, Refusal, Room
from gamenight.server.sessions import Client
from gamenight.server.text import clean_text

After = Callable[..., Outbox]  # `Lobby.after(room, out, now, players=None)`

ROOM_ACTIONS: dict[type[Message], Callable[[Room, str], Outbox]] = {
    Resign: Room.resign,
    Rematch: Room.rematch,
    MoreTime: Room.moretime,
    Takeback: Room.takeback,
    TakebackDecline: Room.takeback_decline,
    Abort: Room.abort,
}
"""Requests a member makes of their room with nothing but who they are: the room decides."""


class RoomRequests:
    """The handlers of the requests a person makes of one room."""

    def __init__(
        self, directory: RoomDirectory, admission: Admission, ai_bots: dict[str, list[str]], after: After
    ) -> None:
        self.directory = directory
        self.admission = admission
        self.ai_bots = ai_bots  # bot name -> the games it plays
        self.after = after

    def open_room(
        self, client: Client, game_name: str, options: dict[str, Any], private: bool, now: float
    ) -> tuple[Room, Outbox]:
        """Make a room hosted by `client` (the caps and option checks of create_room); its record is in the outbox."""
        rules = validated(game_name, options)
        self.admission.may_host(client, private)
        self.admission.may_rate(client, rules[2])
        return self.directory.open(client, rules, private, now)

    def create(self, client: Client, msg: CreateRoom, now: float) -> Outbox:
        """Open a new room with validated options; the creator is its host."""
        room, out = self.open_room(client, msg.game, msg.options, msg.private, now)
        out.send({client.session}, room.info(msg.id))
        return self.after(room, out, now)

    def join(self, client: Client, msg: Join, now: float) -> Outbox:
        """Take a seat or watch; a refused join leaves the person's rooms as they were."""
        self.admission.guess(client, msg.room, now)
        room = self.directory.get(msg.room)
        if msg.role == Role.SPECTATOR:
            self.admission.may_spectate(room, client)
        out = room.join(client.member, msg.role, msg.seat, msg.id)
        client.rooms.add(room.code)
        return self.after(room, out, now)

    def leave(self, client: Client, msg: Leave, now: float) -> Outbox:
        """Leave a room (a seated player of a running game resigns it by leaving)."""
        room = self.directory.get(msg.room, client)
        players = players_of(room)  # a game the leaver resigns by leaving is still theirs to see
        out = room.leave(client.session)
        client.rooms.discard(room.code)
        out.send({client.session}, Left(room=room.code, id=msg.id))
        return self.after(room, out, now, players)

    def move(self, client: Client, msg: MakeMove, now: float) -> Outbox:
        """A move for the room to check and play."""
        room = self.directory.get(msg.room, client)
        out = room.move(client.session, msg.move, msg.seq, msg.id)
        self.directory.played.add(room.code)
        return self.after(room, out, now)

    def chat(self, client: Client, msg: Chat, now: float) -> Outbox:
        """A chat line for the room, from a member, within the room's allowance."""
        room = self.directory.get(msg.room, client)
        if not room.is_member(client.session):  # checked before any work on the text
            raise Refusal(ErrorCode.NOT_IN_ROOM, f"you are not in room {room.code}")
        self.admission.chat_allowed(room, client, now)
        return room.chat(client.session, client.name, clean_text(msg.text))

    def action(self, client: Client, msg: Any, now: float) -> Outbox:
        """Resign, rematch, more time, takeback (and its decline), abort: the room decides."""
        room = self.directory.get(msg.room, client)
        return self.after(room, ROOM_ACTIONS[type(msg)](room, client.session), now)

    def add_ai(self, client: Client, msg: AddAi, now: float) -> Outbox:
        """Seat an AI (a level or a named bot), within the all-AI rooms an address may run."""
        room = self.directory.get(msg.room, client)
        self.admission.may_add_ai(room, client)
        out = room.add_ai(client.session, msg.seat, self.admission.ai_spec(msg, room, self.ai_bots))
        return self.after(room, reply(client, room.info(msg.id)).extend(out), now)

    def remove_ai(self, client: Client, msg: RemoveAi, now: float) -> Outbox:
        """Free an AI's seat."""
        room = self.directory.get(msg.room, client)
        out = room.remove_ai(client.session, msg.seat)
        return self.after(room, reply(client, room.info(msg.id)).extend(out), now)

    def sync(self, client: Client, msg: Sync, now: float) -> Outbox:
        """Resend a member the room's current state in full (its `room` summary while no game exists yet)."""
        room = self.directory.get(msg.room, client)
        if not room.is_member(client.session):
            raise Refusal(ErrorCode.NOT_IN_ROOM, f"you are not in room {room.code}")
        if room.state is None:
            return reply(client, room.info(msg.id))
        return reply(client, room.snapshot(viewer=client.session, request_id=msg.id))


def players_of(room: Room) -> tuple[str | None, ...]:
    """By seat, the token hash of the person sitting there (None for an AI or an empty seat)."""
    return tuple(s.holder.token_hash if s.holder else None for s in room.seats)


def reply(client: Client, message: Message) -> Outbox:
    """An outbox holding one message for one client."""
    out = Outbox()
    out.send({client.session}, message)
    return out
