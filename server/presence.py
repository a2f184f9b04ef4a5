"""Presence: who is online, what they take challenges for, how many games they are playing (sans-I/O).

The `players` list answers a request; a `player` push tells those watching the lobby (`lobby_watch`) when one
person arrives, leaves, or starts or ends a game (presence follows games: `note_busy`).
"""

from __future__ import annotations

from gamenight.protocol.messages import Player
from gamenight.protocol.vocab import PlayerInfo
from gamenight.server.directory import RoomDirectory
from gamenight.server.listing import Listing
from gamenight.server.room import RUNNING, Outbox, Room
from gamenight.server.sessions import Sessions
from gamenight.server.text import name_key

MAX_PLAYERS_LISTED = 200  # entries in a `players` reply


class Presence:
    """Who is online, and the `player` pushes to the lobby's watchers."""

    def __init__(self, sessions: Sessions, directory: RoomDirectory, listing: Listing) -> None:
        self.sessions = sessions
        self.directory = directory
        self.listing = listing  # whose watchers get the pushes
        self._busy: dict[str, frozenset[str]] = {}  # room code -> the names seated there while its game runs

    def info(self, name: str) -> PlayerInfo:
        """One person as `players` shows them: every connected session under exactly this name, together."""
        sessions = [c for c in self.sessions.clients.values() if c.connected and c.name == name]
        rooms = self.directory.rooms
        playing = {
            code
            for c in sessions
            for code in c.rooms
            if (room := rooms.get(code)) is not None and room.status in RUNNING and room.seat_of(c.session) is not None
        }
        return PlayerInfo(
            name=name,
            bot=any(c.bot for c in sessions),
            claimed=any(c.claimed for c in sessions),
            games=tuple(sorted({g for c in sessions for g in c.accepts})),
            playing=len(playing),
            online=bool(sessions),
        )

    def online(self) -> list[PlayerInfo]:
        """The `players` list: one entry per name online, bots first, then by name; at most MAX_PLAYERS_LISTED."""
        names = sorted(
            {(not c.bot, name_key(c.name), c.name) for c in self.sessions.clients.values() if c.connected},
        )
        seen: list[str] = []
        for _, _, name in names:
            if name not in seen:
                seen.append(name)
            if len(seen) >= MAX_PLAYERS_LISTED:
                break
        return [self.info(name) for name in seen]

    def push(self, name: str, out: Outbox, skip: str | None = None) -> None:
        """Tell everyone watching the lobby (`lobby_watch`) how `name` looks now (`online` false once gone)."""
        watchers = self.listing.watchers
        browsing = watchers - {skip} if skip is not None else watchers
        if browsing:
            out.send(browsing, Player.of(self.info(name)))

    def note_busy(self, room: Room, out: Outbox) -> None:
        """Presence follows games: a `player` push for each name whose count of games in progress just changed
        (the room's game started or ended, a seated player left or sat down, the room closed)."""
        seated: frozenset[str] = frozenset()
        clients = self.sessions.clients
        if room.code in self.directory.rooms and room.status in RUNNING:
            seated = frozenset(c.name for seat in room.seats if (c := clients.get(seat.session or "")) is not None)
        before = self._busy.pop(room.code, frozenset())
        if seated:
            self._busy[room.code] = seated
        if self.listing.watchers:
            for name in sorted(before ^ seated):
                self.push(name, out)
