"""The lobby's listing: which rooms it shows, the counts, and the batched `lobby` pushes (sans-I/O).

docs/protocol.md "Lobby (version 2)": who watches the listing, what changed since the last `lobby` push, and the
caches rebuilt only after a change (every welcome shows the first page and the counts). A thousand room changes
cost each watcher one frame per push interval, not a thousand frames; so do a thousand arrivals and departures
(`Presence` notes the names, `players_changed`, and each push carries their entries as they are then).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable

from gamenight.protocol.errors import ErrorCode
from gamenight.protocol.messages import MAX_ROOMS_PAGE, ListRooms, LobbyUpdate, RoomInfo, Rooms
from gamenight.protocol.vocab import LobbyCounts, PlayerInfo, RoomStatus, RoomSummary
from gamenight.server.directory import RoomDirectory
from gamenight.server.games import GAMES
from gamenight.server.room import Outbox, Refusal, Room

MAX_BATCH_ROOMS = 200  # room changes in one `lobby` push (the rest go in the next one)
MAX_BATCH_PLAYERS = 200  # presence changes in one `lobby` push (the rest go in the next one)
LISTING_ORDER = {RoomStatus.WAITING: 0, RoomStatus.PLAYING: 1, RoomStatus.PAUSED: 1, RoomStatus.FINISHED: 2}
"""The listing shows joinable (waiting) rooms first, then games in progress, then finished ones; by age within."""


class Listing:
    """The rooms the lobby lists, their counts, and the pushes to those who watch them."""

    def __init__(self, directory: RoomDirectory, online: Callable[[], int]) -> None:
        self.directory = directory
        self.online = online  # sessions connected to this server
        self.watchers: set[str] = set()  # sessions that asked for lobby pushes (`lobby_watch`)
        self.changes: dict[str, None] = {}  # codes of public rooms changed since the last push, in order
        self.counts_changed = False  # the counts changed since the last push
        self.players: dict[str, None] = {}  # names whose presence changed since the last push, in order
        self.online_elsewhere = 0  # in a cluster: sessions connected to the other nodes (from their heartbeats)
        self.cluster_changes: dict[str, None] | None = None  # in a cluster: this node's rooms changed since published
        self._summaries: dict[str, RoomSummary] = {}  # room code -> its summary, until the room changes
        self._listing: list[RoomSummary] | None = None
        self._by_game: dict[str, dict[str, int]] | None = None  # listed rooms by game and status

    def counts_dirty(self) -> None:
        """The sessions online changed: the next push carries the counts."""
        self.counts_changed = True

    def players_changed(self, names: Iterable[str]) -> None:
        """These names arrived, left, or changed what they accept or how many games they play: the next push
        carries their entries (noted only while someone watches: nobody else is pushed presence)."""
        if self.watchers:
            self.players.update(dict.fromkeys(names))

    def watch(self, session: str, on: bool) -> None:
        """Start or stop the `lobby` pushes to a session."""
        if on:
            self.watchers.add(session)
        else:
            self.watchers.discard(session)

    def changed(self, room: Room, out: Outbox) -> None:
        """Tell the room's members what it looks like now, and note a public room's change for the watchers (they
        get it in the next `lobby` push, `batch`, together with every other change since the last one)."""
        if not room.private:
            self._summaries.pop(room.code, None)
            self._invalidate(room.code)
        if self.cluster_changes is not None:
            self.cluster_changes[room.code] = None
        audience = room.audience()
        if audience:
            out.send(audience, RoomInfo.of(self.summary(room)))

    def dropped(self, code: str) -> None:
        """A room left this node without closing (another node owns it now)."""
        self._summaries.pop(code, None)
        self._invalidate(code)

    def remote_room(self, code: str, summary: RoomSummary | None) -> None:
        """Another node's listed room appeared, changed (`summary`) or left the listing (None)."""
        remote = self.directory.remote
        if summary is None:
            if remote.pop(code, None) is None:
                return
        else:
            remote[code] = summary
        self._invalidate(code)

    def _invalidate(self, code: str) -> None:
        """The listing and counts are rebuilt on next use, and `code` goes in the next push."""
        self._listing = self._by_game = None
        self.changes[code] = None

    def summary(self, room: Room) -> RoomSummary:
        """A room's summary (kept until the room changes, for the listing and the pushes)."""
        if room.private or room.code not in self.directory.rooms:
            return room.summary()
        summary = self._summaries.get(room.code)
        if summary is None:
            summary = self._summaries[room.code] = room.summary()
        return summary

    @staticmethod
    def offered(room: Room) -> bool:
        """True if the lobby lists the room: a public room, unless every person holding a seat in it is
        disconnected (nobody would be there to play with whoever joins; it is listed again when one is back)."""
        if room.private:
            return False
        humans = [seat for seat in room.seats if seat.holder is not None]
        return not humans or any(seat.connected for seat in humans)

    def listing(self) -> list[RoomSummary]:
        """Every listed room's summary, in listing order (see LISTING_ORDER); rebuilt only after a change."""
        if self._listing is None:
            rooms = sorted(
                (room for room in self.directory.rooms.values() if self.offered(room)),
                key=lambda room: LISTING_ORDER.get(room.status, 3),
            )
            self._listing = [self.summary(room) for room in rooms]
            remote = self.directory.remote
            if remote:  # a cluster: every node lists every node's rooms, in the same order
                self._listing = sorted(
                    self._listing + [s for code, s in remote.items() if code not in self.directory.rooms],
                    key=lambda summary: LISTING_ORDER.get(summary.status, 3),
                )
        return self._listing

    def counts(self) -> LobbyCounts:
        """The listed rooms by game and status, and the sessions online (`welcome.counts`, `lobby.counts`)."""
        if self._by_game is None:
            self._by_game = {}
            for summary in self.listing():
                by_status = self._by_game.setdefault(summary.game, {})
                by_status[summary.status] = by_status.get(summary.status, 0) + 1
        return LobbyCounts(rooms=len(self.listing()), online=self.online() + self.online_elsewhere, games=self._by_game)

    def page(self, msg: ListRooms) -> Rooms:
        """The `rooms` reply to a `list_rooms`: one page of the listing, filtered, and the total that matches."""
        if not 1 <= msg.limit <= MAX_ROOMS_PAGE:
            raise Refusal(ErrorCode.BAD_OPTIONS, f"limit must be 1 to {MAX_ROOMS_PAGE}, not {msg.limit}")
        if msg.offset < 0:
            raise Refusal(ErrorCode.BAD_OPTIONS, f"offset must be 0 or more, not {msg.offset}")
        if msg.game is not None and msg.game not in GAMES:
            raise Refusal(ErrorCode.BAD_OPTIONS, f"unknown game {msg.game[:40]!r}; try one of {', '.join(GAMES)}")
        if msg.status == RoomStatus.CLOSED:
            raise Refusal(ErrorCode.BAD_OPTIONS, "closed rooms are not listed")
        rooms = self.listing()
        if msg.game is not None or msg.status is not None:
            rooms = [
                s
                for s in rooms
                if (msg.game is None or s.game == msg.game) and (msg.status is None or s.status == msg.status)
            ]
        page = rooms[msg.offset : msg.offset + msg.limit]
        return Rooms(rooms=page, total=len(rooms), offset=msg.offset, id=msg.id)

    def pending(self) -> bool:
        """True if the watchers have a `lobby` push coming (something changed since the last one)."""
        return bool(self.changes) or bool(self.players) or self.counts_changed

    def batch(self, player: Callable[[str], PlayerInfo]) -> tuple[set[str], LobbyUpdate] | None:
        """The next `lobby` push and the watchers it goes to: the latest summary of every listed room changed
        since the last push (at most MAX_BATCH_ROOMS; the rest stay for the next one), the codes of rooms that
        left the listing, the entry of every name whose presence changed (`player`, read now: the latest state
        of each, at most MAX_BATCH_PLAYERS), and the counts. None if nothing changed or nobody watches (the
        changes are dropped).
        """
        if not self.pending():
            return None
        codes = list(itertools.islice(self.changes, MAX_BATCH_ROOMS))
        for code in codes:
            del self.changes[code]
        names = list(itertools.islice(self.players, MAX_BATCH_PLAYERS))
        for name in names:
            del self.players[name]
        self.counts_changed = False
        if not self.watchers:
            return None
        rooms: list[RoomSummary] = []
        gone: list[str] = []
        for code in codes:
            room = self.directory.rooms.get(code)
            if room is not None and self.offered(room):
                rooms.append(self.summary(room))
            elif room is None and code in self.directory.remote:
                rooms.append(self.directory.remote[code])
            else:
                gone.append(code)
        players = [player(name) for name in names]
        return set(self.watchers), LobbyUpdate(rooms=rooms, gone=gone, counts=self.counts(), players=players)
