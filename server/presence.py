"""Presence: who is online, what they take challenges for, how many games they are playing (sans-I/O).

The `players` list answers a request; the lobby's batched `lobby` pushes (server/listing.py) tell those watching
it (`lobby_watch`) who arrived, left, or started or ended a game since the last push (presence follows games:
`note_busy`), one entry per name as it is when the push is built.
"""

from __future__ import annotations

from gamenight.protocol.vocab import PlayerInfo
from gamenight.server.directory import RoomDirectory
from gamenight.server.listing import Listing
from gamenight.server.room import RUNNING, Room
from gamenight.server.sessions import Sessions
from gamenight.server.text import name_key

MAX_PLAYERS_LISTED = 200  # entries in a `players` reply


class Presence:
    """Who is online, and what changed for the lobby's watchers."""

    def __init__(self, sessions: Sessions, directory: RoomDirectory, listing: Listing) -> None:
        self.sessions = sessions
        self.directory = directory
        self.listing = listing  # whose pushes carry the changes to its watchers
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

    def changed(self, name: str) -> None:
        """`name` arrived, left or changed what it accepts: everyone watching the lobby (`lobby_watch`) is told
        how it looks then in the next `lobby` push (`online` false once gone)."""
        self.listing.players_changed((name,))

    def note_busy(self, room: Room) -> None:
        """Presence follows games: each name whose count of games in progress just changed goes in the next push
        (the room's game started or ended, a seated player left or sat down, the room closed)."""
        seated: frozenset[str] = frozenset()
        clients = self.sessions.clients
        if room.code in self.directory.rooms and room.status in RUNNING:
            seated = frozenset(c.name for seat in room.seats if (c := clients.get(seat.session or "")) is not None)
        before = self._busy.pop(room.code, frozenset())
        if seated:
            self._busy[room.code] = seated
        self.listing.players_changed(sorted(before ^ seated))
