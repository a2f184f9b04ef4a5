"""The room directory: every room of this server by its code, who hosts it, and how long it stays (sans-I/O).

It owns `rooms`, their hosts, the codes taken offline and the rooms a restart could not bring back. It opens
rooms (the caller checked the caps), looks them up the way requests may see them (a private room is unknown to
whoever is not in it), closes them, and rebuilds the rooms a previous run left open. What the lobby lists is the
listing's business (server/listing.py); who may open a room is admission's (server/admission.py).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from gamenight.protocol.errors import ErrorCode
from gamenight.protocol.messages import Error
from gamenight.protocol.vocab import RoomStatus, RoomSummary
from gamenight.server.games import GAMES
from gamenight.server.games.base import BadOptions, Game
from gamenight.server.records import RoomClosed, StoredRoom
from gamenight.server.room import RUNNING, Outbox, Refusal, Room
from gamenight.server.room_options import split_and_validate
from gamenight.server.sessions import Client, Sessions

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no I/1 or O/0 to misread
CODE_LENGTH = 5
EMPTY_ROOM_GRACE_S = 60.0  # a room nobody is in closes after this long...
EMPTY_AI_ROOM_GRACE_S = 5.0  # ...and an all-AI room nobody watches after this
HELD_GAME_GRACE_S = 24 * 3600.0  # ...unless players hold seats in an unfinished game
PROMPT_CLOSE_S = 10.0  # ...and a room with nothing to wait for (see `awaited`) closes after this
UNAVAILABLE_TEXT = "the server cannot store this room's game (its disk is full or read-only); it is stopped"

Rater = Callable[..., Any]  # `RatingBook.rate`: how a room's finished rated game changes ratings


def validated(game_name: str, options: dict[str, Any]) -> tuple[Game[Any, Any], dict[str, Any], dict[str, Any]]:
    """A game and its options checked as create_room checks them: (game, game options, room options)."""
    game = GAMES.get(game_name)
    if game is None:
        raise Refusal(ErrorCode.BAD_OPTIONS, f"unknown game {game_name[:40]!r}; try one of {', '.join(GAMES)}")
    try:
        game_options, room_options = split_and_validate(game, options)
    except BadOptions as exc:
        raise Refusal(ErrorCode.BAD_OPTIONS, str(exc)) from None
    return game, game_options, room_options


def random_code() -> str:
    """A room code drawn at random."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


class RoomDirectory:
    """The rooms of this server by code, with their hosts; opened, looked up, closed and restored here."""

    def __init__(self, sessions: Sessions, rater: Rater, tournament_of: Callable[[str], str | None]) -> None:
        self.sessions = sessions
        self.rater = rater  # every room rates its finished rated game through this
        self.vetter: Callable[[Room], str | None] = lambda room: None  # why a rated game rates nobody (the lobby's)
        self.tournament_of = tournament_of  # the tournament a room's game belongs to, if any (`Room.tournament_of`)
        self.rooms: dict[str, Room] = {}
        self.hosts: dict[str, tuple[str, str]] = {}  # room code -> (host's token hash, host's address)
        self.played: set[str] = set()  # rooms where a person made a move: only they keep the long grace
        self.offline: set[str] = set()  # rooms taken offline because their records could not be stored
        self.skipped: list[tuple[str, str]] = []  # (code, why) of stored rooms that could not be restored
        self.now = 0.0  # the time of what is being handled; rooms are stamped with it when they are looked up
        # In a cluster (server/cluster): other nodes' rooms -> (host token hash, host address), for the host caps;
        # whether a code is in use anywhere in the cluster; a code reserved for the next room (leased and routable
        # before anyone hears of the room).
        self.remote_hosts: dict[str, tuple[str, str]] = {}
        self.remote: dict[str, RoomSummary] = {}  # in a cluster: other nodes' listed rooms, as their entries say
        self.code_taken: Callable[[str], bool] | None = None
        self.take_code: Callable[[], str | None] | None = None

    # -- looking rooms up ----------------------------------------------------------------------------------------------
    def get(self, code: str, client: Client | None = None) -> Room:
        """The room with this code (case-insensitive), or an unknown_room (or unavailable) refusal.

        With `client`, a private room that person is not in (nor hosts) is refused exactly as a code that does
        not exist, so no request but `join` (rate-limited per address) tells whether a private code is in use.
        """
        room = self.at(code.strip().upper(), self.now)
        if room is not None and client is not None and room.private and not self.inside(room, client):
            room = None
        if room is None:
            if code.strip().upper() in self.offline:
                raise Refusal(ErrorCode.UNAVAILABLE, UNAVAILABLE_TEXT)
            raise Refusal(ErrorCode.UNKNOWN_ROOM, f"there is no room {code[:16]!r}")
        return room

    def at(self, code: str, now: float) -> Room | None:
        """The room `code`, stamped with the time of what it is about to handle (rooms never read the clock)."""
        room = self.rooms.get(code)
        if room is not None:
            room.now = now
        return room

    @staticmethod
    def inside(room: Room, client: Client) -> bool:
        """True if the person sits in, watches or hosts the room."""
        return room.is_member(client.session) or room.host == client.session

    # -- opening -------------------------------------------------------------------------------------------------------
    def open(
        self,
        client: Client,
        rules: tuple[Game[Any, Any], dict[str, Any], dict[str, Any]],
        private: bool,
        now: float,
    ) -> tuple[Room, Outbox]:
        """Make a room hosted by `client` with validated rules (`validated`); its record is in the outbox."""
        game, game_options, room_options = rules
        room = Room(self.new_code(), game, game_options, room_options, client.session, client.name, private)
        room.rater, room.vetter = self.rater, self.vetter
        room.empty_since = room.now = now
        self.rooms[room.code] = room
        self.hosts[room.code] = (client.token_hash, client.ip)
        out = Outbox(changed=True)
        out.records.append(replace(room.saved(), host_token_hash=client.token_hash))
        return room, out

    def add(self, room: Room, host: tuple[str, str], played: bool) -> None:
        """Keep a room made elsewhere (a tournament's game), rating through this directory's rater."""
        room.rater, room.vetter = self.rater, self.vetter
        room.tournament_of = self.tournament_of
        self.rooms[room.code] = room
        self.hosts[room.code] = host
        if played:
            self.played.add(room.code)

    def new_code(self) -> str:
        """A fresh room code that no open room uses (in a cluster, one the node reserved, while it has one)."""
        if self.take_code is not None:
            code = self.take_code()
            if code is not None and code not in self.rooms and code not in self.offline:
                return code
        while True:
            code = random_code()
            if code not in self.rooms and code not in self.offline and not (self.code_taken and self.code_taken(code)):
                return code

    # -- lag compensation ----------------------------------------------------------------------------------------------
    def record_lag(self, session: str, rtt_ms: float) -> None:
        """A ping round trip measured on `session`'s connection, for the lag compensation of its seats."""
        client = self.sessions.clients.get(session)
        for code in sorted(client.rooms) if client else ():
            room = self.rooms.get(code)
            if room is not None:
                room.note_lag(session, rtt_ms)

    def clocked_sessions(self) -> set[str]:
        """Connected sessions seated in a room whose clock runs (their lag is measured)."""
        return {
            seat.holder.session
            for room in self.rooms.values()
            if room.clocked()
            for seat in room.seats
            if seat.holder is not None and seat.connected
        }

    # -- how long a room stays -----------------------------------------------------------------------------------------
    def grace(self, room: Room, in_tournament: bool) -> float:
        """How long an empty room stays open: long while players hold seats in an unfinished game they played.

        A game nobody has made a move in (rooms opened and sat in only to hold them) gets the short grace, and
        an all-AI room nobody watches an even shorter one: its searches use the AI workers others wait for.
        A room with nothing to wait for (no held seat of an unfinished game, its host gone) closes promptly.
        """
        if in_tournament:
            return HELD_GAME_GRACE_S  # a tournament game is played out, watched or not
        if all(s.ai is not None for s in room.seats):
            return min(EMPTY_AI_ROOM_GRACE_S, EMPTY_ROOM_GRACE_S)  # an exhibition nobody watches stops soon
        if not self.awaited(room):
            return PROMPT_CLOSE_S
        held = room.status in RUNNING and room.code in self.played and any(s.holder is not None for s in room.seats)
        return HELD_GAME_GRACE_S if held else EMPTY_ROOM_GRACE_S

    def awaited(self, room: Room) -> bool:
        """True if an empty room has something to wait for: its host still connected (about to sit down or to
        invite someone), or people holding seats in its unfinished game (they may resume)."""
        host = self.sessions.clients.get(room.host)
        if host is not None and host.connected:
            return True
        return room.status != RoomStatus.FINISHED and any(s.holder is not None for s in room.seats)

    # -- closing -------------------------------------------------------------------------------------------------------
    def close(self, code: str) -> tuple[Room, Outbox]:
        """Remove a room and forget it on disk (the `RoomClosed` record is in the outbox)."""
        room = self.rooms.pop(code)
        self._forget(code)
        room.close()
        out = Outbox()
        out.records.append(RoomClosed(code))
        for seat in room.seats:
            self.sessions.left_room(seat.session, code)
        return room, out

    def take_offline(self, code: str, spare: str | None = None) -> tuple[Room | None, Outbox]:
        """The room's records could not be stored: stop it in memory and tell its members (but `spare`).

        Nothing of what it decided since its last stored record was shown to anyone; after a restart it comes
        back as it is on disk. Until then every request for it is refused with `unavailable`.
        """
        room = self.rooms.pop(code, None)
        out = Outbox()
        if room is None:
            return None, out
        self.offline.add(code)
        self._forget(code)
        audience = room.audience()
        room.close()
        for session in audience | {s.session for s in room.seats if s.session} | room.spectators:
            self.sessions.left_room(session, code)
        out.send(audience - {spare}, Error(code=ErrorCode.UNAVAILABLE, message=UNAVAILABLE_TEXT, room=code))
        return room, out

    def drop(self, code: str) -> Room | None:
        """Another node owns this room now: forget it here, writing nothing (its new owner goes on with it)."""
        room = self.rooms.pop(code, None)
        if room is None:
            return None
        self._forget(code)
        for session in {s.session for s in room.seats if s.session} | room.spectators:
            self.sessions.left_room(session, code)
        return room

    def _forget(self, code: str) -> None:
        """Drop what the directory keeps about a room that closed."""
        self.hosts.pop(code, None)
        self.played.discard(code)

    # -- restart -------------------------------------------------------------------------------------------------------
    def restore(self, stored: list[StoredRoom], now: float) -> Outbox:
        """Rebuild the rooms a previous run left open (each room restores itself; the sessions come back with them).

        A room that cannot be rebuilt (a game this version lacks, moves its rules refuse, a broken stored value)
        is left out, on disk as it is, and listed in `skipped`: one bad room never stops the server.
        """
        out = Outbox()
        clients = self.sessions.clients
        for saved in stored:
            game = GAMES.get(saved.game)
            if game is None:
                self.skipped.append((saved.code, f"unknown game {saved.game[:40]!r}"))
                continue
            known = set(clients)
            try:
                room, started = Room.restore(self._checked(saved, game), game, now, self.sessions.held_for)
            except Exception as exc:  # a log the current rules refuse cannot be resumed honestly; leave it out
                self.skipped.append((saved.code, f"{type(exc).__name__}: {exc}"[:200]))
                for session in set(clients) - known:
                    if not clients[session].rooms:
                        self.sessions.forget(clients[session])
                continue
            self.add(room, (saved.host_token_hash or "", ""), played=bool(room.moves))
            if room.rated and room.result is None:  # (nobody's address is known yet: only a shared key counts)
                room.unrated = room.vetter(room)
            for seat in room.seats:
                if seat.holder is not None:
                    clients[seat.holder.session].rooms.add(room.code)
            out.extend(started)
        return out

    @staticmethod
    def _checked(saved: StoredRoom, game: Game[Any, Any]) -> StoredRoom:
        """A stored room with its options validated as a new room's are and its seats in range (else raises)."""
        try:
            options, room_options = split_and_validate(game, {**saved.options, **saved.room_options})
        except BadOptions as exc:
            raise ValueError(f"stored options refused: {exc}") from None
        seats = game.seat_count(options)
        for seat in saved.seats:
            if not 0 <= seat.seat < seats:
                raise ValueError(f"seat {seat.seat} out of range 0..{seats - 1}")
        return replace(saved, options=options, room_options=room_options)
