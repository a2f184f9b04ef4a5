"""Every message of the wire protocol, as a frozen dataclass; docs/protocol.md describes the same set.

A message's class attribute `type` is its wire `type`. Fields map one to one to wire keys, except
where a field's metadata names another key (`join.as` is `role` here, since `as` is a keyword); nested
maps are the typed payloads of `protocol.vocab`. `protocol.codec` is the only code that turns these into
bytes and back; it checks every incoming field against the table `protocol.schema` builds from the
annotations.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from gamenight.protocol.errors import ErrorCode, ProtocolError
from gamenight.protocol.schema import FieldSpec, field_specs, omitted_when_empty, wire_name
from gamenight.protocol.vocab import (
    ChallengeEnd,
    Clock,
    EventKind,
    EventNote,
    GameDescription,
    LeaderEntry,
    LobbyCounts,
    PlayerInfo,
    PoolRating,
    Result,
    Role,
    RoomStatus,
    RoomSummary,
    SeatSummary,
    TournamentOffer,
    TournamentStatus,
    apply_changes,
)

PROTOCOL_VERSION = 3  # 3: names are claimed by a signed nonce (`hello_nonce`, protocol/identity.py)
ROOMS_PAGE = 50  # rooms in `welcome.rooms` and in a `rooms` reply when `list_rooms` gives no `limit`
MAX_ROOMS_PAGE = 100  # the largest `list_rooms.limit`


@dataclass(frozen=True, slots=True)
class Message:
    """Base of every message. `id` is the client's request id, echoed on every reply to it."""

    type: ClassVar[str] = ""
    id: int | None = field(default=None, kw_only=True)


# -- client to server ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hello(Message):
    """First message of every connection: protocol version, display name, optional resume token.

    `public_key` with `signature` (hex: the connection's `hello_nonce` and `url`, the address the client dialed,
    signed; protocol/identity.py) claims `name` on first use and proves it later; without them you play as a guest
    under a free name. `key` is the secret of protocol 2's claims, sent only to move such a claim to the public key
    (after `old_claim`). `bot` marks a program playing (shown as a bot everywhere).
    """

    type: ClassVar[str] = "hello"
    protocol: int
    name: str
    resume: str | None = None
    public_key: str | None = None
    signature: str | None = None
    url: str = ""
    key: str | None = None
    bot: bool = False
    accepts: list[str] = field(default_factory=list)  # games this session takes challenges for (a bot runner's)


@dataclass(frozen=True, slots=True)
class ListRooms(Message):
    """Ask for one page of the lobby's listed rooms, optionally of one game and one status.

    `offset` counts from the start of the listing (waiting rooms first, then by age); `limit` is 1 to
    MAX_ROOMS_PAGE. The reply, `rooms`, carries the total, so a client can page on.
    """

    type: ClassVar[str] = "list_rooms"
    game: str | None = None
    status: RoomStatus | None = None
    offset: int = 0
    limit: int = ROOMS_PAGE


@dataclass(frozen=True, slots=True)
class LobbyWatch(Message):
    """Subscribe to the lobby's pushes (`on` true) or stop them: batched `lobby` frames (rooms and presence)."""

    type: ClassVar[str] = "lobby_watch"
    on: bool = True


@dataclass(frozen=True, slots=True)
class CreateRoom(Message):
    """Open a room for `game` with `options`; the creator becomes its host (but takes no seat)."""

    type: ClassVar[str] = "create_room"
    game: str
    options: dict[str, Any] = field(default_factory=dict)
    private: bool = False


@dataclass(frozen=True, slots=True)
class Join(Message):
    """Take a seat (`as` = "player", any free seat unless `seat` is given) or watch (`as` = "spectator")."""

    type: ClassVar[str] = "join"
    room: str
    role: Role = field(default=Role.PLAYER, metadata=wire_name("as"))
    seat: int | None = None


@dataclass(frozen=True, slots=True)
class Leave(Message):
    """Give up your seat or stop watching; a seated player leaving a running game resigns it."""

    type: ClassVar[str] = "leave"
    room: str


@dataclass(frozen=True, slots=True)
class MakeMove(Message):
    """Play `move` (wire notation) for your seat; `seq` is the state you saw, to reject stale clicks."""

    type: ClassVar[str] = "move"
    room: str
    move: str
    seq: int | None = None


@dataclass(frozen=True, slots=True)
class Chat(Message):
    """Say something to everyone in the room."""

    type: ClassVar[str] = "chat"
    room: str
    text: str


@dataclass(frozen=True, slots=True)
class Resign(Message):
    """Concede the running game."""

    type: ClassVar[str] = "resign"
    room: str


@dataclass(frozen=True, slots=True)
class Rematch(Message):
    """Offer (or accept) a new game in the same room with the seats rotated."""

    type: ClassVar[str] = "rematch"
    room: str


@dataclass(frozen=True, slots=True)
class MoreTime(Message):
    """Give your opponent 15 seconds (clocked games, not correspondence)."""

    type: ClassVar[str] = "moretime"
    room: str


@dataclass(frozen=True, slots=True)
class Takeback(Message):
    """Ask to undo your last move (and the reply to it); sent by the opponent, accept the offer on the table."""

    type: ClassVar[str] = "takeback"
    room: str


@dataclass(frozen=True, slots=True)
class TakebackDecline(Message):
    """Turn down the opponent's takeback offer."""

    type: ClassVar[str] = "takeback_decline"
    room: str


@dataclass(frozen=True, slots=True)
class Abort(Message):
    """End a game whose opponent has not made a first move in time: no winner, not rated."""

    type: ClassVar[str] = "abort"
    room: str


@dataclass(frozen=True, slots=True)
class AddAi(Message):
    """Host only: seat an AI, by `level` (1-5) or by named `bot`, in `seat` or the first free one."""

    type: ClassVar[str] = "add_ai"
    room: str
    seat: int | None = None
    level: int | None = None
    bot: str | None = None


@dataclass(frozen=True, slots=True)
class RemoveAi(Message):
    """Host only: take the AI out of `seat` while the game has not started."""

    type: ClassVar[str] = "remove_ai"
    room: str
    seat: int


@dataclass(frozen=True, slots=True)
class Sync(Message):
    """Ask for what changed in `room` since `seq`: the missed events if kept, else a full state."""

    type: ClassVar[str] = "sync"
    room: str
    seq: int


@dataclass(frozen=True, slots=True)
class ListGames(Message):
    """Ask for finished games, newest first, optionally of one player or one game."""

    type: ClassVar[str] = "list_games"
    player: str | None = None
    game: str | None = None
    limit: int = 20
    room: str | None = None  # only the games played in this room (a tournament game's, say)


@dataclass(frozen=True, slots=True)
class GetGame(Message):
    """Ask for one finished game's full record (for the replay viewer)."""

    type: ClassVar[str] = "get_game"
    game_id: int


@dataclass(frozen=True, slots=True)
class Analyse(Message):
    """Ask for a finished game's review (docs/review.md): `analysis` at once if it is stored, else `queued`, then
    `analysis_progress` and `analysis`. `cancel` withdraws the request (the analysis stops if nobody else waits)."""

    type: ClassVar[str] = "analyse"
    game_id: int
    cancel: bool = False


@dataclass(frozen=True, slots=True)
class Leaderboard(Message):
    """Ask for a page of a rating pool's players, best first: `game` is a game or "<game>-ffa" (Tron, 3-4 riders).

    `offset` 0..10000 and `limit` 1..100; anything else is `bad_options`.
    """

    type: ClassVar[str] = "leaderboard"
    game: str
    offset: int = 0
    limit: int = 20


@dataclass(frozen=True, slots=True)
class Profile(Message):
    """Ask for a player's card: ratings in every pool and latest rated games (`name` a person, "AI level 3" ...)."""

    type: ClassVar[str] = "profile"
    name: str


@dataclass(frozen=True, slots=True)
class CreateTournament(Message):
    """Host a tournament of `game` (claimed players only): `kind` "round_robin" or "arena".

    `options` are the rooms' options (game and room options, as create_room's); `players` the first entrants
    (claimed names, "AI level N", "bot NAME"); `rounds` how many times a round robin's schedule is played (each
    pair twice per round, colours swapped); `duration_s` an arena's length; `start_in_s` the delay before it starts.
    """

    type: ClassVar[str] = "create_tournament"
    game: str
    kind: str
    options: dict[str, Any] = field(default_factory=dict)
    rated: bool = False
    players: list[str] = field(default_factory=list)
    rounds: int = 1
    duration_s: int = 0
    start_in_s: int = 0


@dataclass(frozen=True, slots=True)
class JoinTournament(Message):
    """Enter a tournament (claimed players; a round robin only before it starts)."""

    type: ClassVar[str] = "join_tournament"
    tournament: str


@dataclass(frozen=True, slots=True)
class LeaveTournament(Message):
    """Leave a tournament: in a round robin your games not yet played are lost by forfeit."""

    type: ClassVar[str] = "leave_tournament"
    tournament: str


@dataclass(frozen=True, slots=True)
class CancelTournament(Message):
    """Its host calls a tournament off: no game starts any more, and games being played count for nothing."""

    type: ClassVar[str] = "cancel_tournament"
    tournament: str


@dataclass(frozen=True, slots=True)
class ListTournaments(Message):
    """Ask for the tournaments, newest first (at most 50)."""

    type: ClassVar[str] = "list_tournaments"


@dataclass(frozen=True, slots=True)
class GetTournament(Message):
    """Ask for one tournament (and its pushes from then on)."""

    type: ClassVar[str] = "get_tournament"
    tournament: str


@dataclass(frozen=True, slots=True)
class ListPlayers(Message):
    """Ask who is online: the `players` reply lists connected people, bots first."""

    type: ClassVar[str] = "list_players"


@dataclass(frozen=True, slots=True)
class ChallengeRequest(Message):
    """Offer `to` (an online player's name) a game of `game` with `options`; you sit in `seat` (default 0)."""

    type: ClassVar[str] = "challenge"
    to: str
    game: str
    options: dict[str, Any] = field(default_factory=dict)
    seat: int = 0


@dataclass(frozen=True, slots=True)
class Invite(Message):
    """Host only: offer the open `seat` of `room` (a game not started) to the online player `to`."""

    type: ClassVar[str] = "invite"
    room: str
    seat: int
    to: str


@dataclass(frozen=True, slots=True)
class Accept(Message):
    """Take a challenge (or invite) you were offered: the room is made (or joined) and you are seated."""

    type: ClassVar[str] = "accept"
    challenge: str


@dataclass(frozen=True, slots=True)
class Decline(Message):
    """Turn down a challenge you were offered (or, sent by its challenger, withdraw it)."""

    type: ClassVar[str] = "decline"
    challenge: str
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Moderate(Message):
    """Admins only (a claimed name the server's operator listed): act on a player, an address, a room or a
    tournament, saying why. `action` is kick, mute, unmute, ban, unban (a name), ban_address, unban_address (an
    address), close_room (with `room`), cancel_tournament (with `tournament`) or void (a player's rated games that
    finished between `since` and `until`, wall-clock seconds); a mute or ban lasts `duration_s`."""

    type: ClassVar[str] = "moderate"
    action: str
    reason: str
    target: str = ""  # a player's name, or an address for ban_address / unban_address
    room: str | None = None
    tournament: str | None = None
    duration_s: int | None = None
    since: float | None = None
    until: float | None = None


# -- server to client ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HelloNonce(Message):
    """The server's first frame on every connection: the nonce a hello signs, and the server's id (both signed)."""

    type: ClassVar[str] = "hello_nonce"
    nonce: str
    server: str


@dataclass(frozen=True, slots=True)
class Welcome(Message):
    """Reply to hello: the session, the games on offer with their options, and your resume token."""

    type: ClassVar[str] = "welcome"
    protocol: int
    session: str
    server: str
    games: list[GameDescription]
    token: str | None = None
    rooms: list[RoomSummary] = field(default_factory=list)  # the first page of the listing (ROOMS_PAGE at most)
    name: str | None = None  # the name you play under (a guest's may differ from the one asked for)
    claimed: bool = False  # true when that name is claimed by your key
    bot: bool = False  # true when you play as a bot
    counts: LobbyCounts | None = None  # the lobby's size: listed rooms by game and status, sessions online
    nodes: list[str] = field(default_factory=list)  # a cluster's nodes' addresses, to reconnect to (else empty)
    admin: bool = False  # true when you are one of the server's admins (you may send `moderate`)


@dataclass(frozen=True, slots=True)
class Rooms(Message):
    """Reply to list_rooms: one page of the listed rooms (same maps as `room.summary`), and how many match."""

    type: ClassVar[str] = "rooms"
    rooms: list[RoomSummary]
    total: int = 0  # rooms matching the request's filters, over every page
    offset: int = 0  # the request's offset: `rooms[0]` is the listing's entry number `offset`


@dataclass(frozen=True, slots=True)
class LobbyUpdate(Message):
    """Pushed to lobby watchers, at most one per LOBBY_BATCH interval: every room and presence change since the last.

    `rooms` holds the latest summary of each listed room that appeared or changed, `gone` the codes of rooms
    that left the listing (closed, or no longer offered); `players` the entry of each name whose presence changed
    (as `players` lists it, `online` false once gone); `counts` is the lobby's size now. Also the reply to
    `lobby_watch` (with its `id`, `watching` saying whether pushes now come, and no rooms).
    """

    type: ClassVar[str] = "lobby"
    rooms: list[RoomSummary] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    counts: LobbyCounts | None = None
    watching: bool = True
    players: list[PlayerInfo] = field(default_factory=list, metadata=omitted_when_empty())


@dataclass(frozen=True, slots=True)
class RoomInfo(Message):
    """One room's summary: pushed to the lobby when it appears, changes or closes (`status` "closed")."""

    type: ClassVar[str] = "room"
    room: str
    game: str
    options: dict[str, Any]
    seats: list[SeatSummary]
    spectators: int
    status: RoomStatus
    private: bool = False
    host: str | None = None
    tournament: str | None = field(default=None, metadata=omitted_when_empty())  # a tournament's game: its id

    @classmethod
    def of(cls, summary: RoomSummary, request_id: int | None = None) -> RoomInfo:
        """The push (or reply) carrying `summary`: the same fields at the top level of the message."""
        return cls(
            room=summary.room,
            game=summary.game,
            options=summary.options,
            seats=list(summary.seats),
            spectators=summary.spectators,
            status=summary.status,
            private=summary.private,
            host=summary.host,
            tournament=summary.tournament,
            id=request_id,
        )

    @property
    def summary(self) -> RoomSummary:
        """The room summary this message carries."""
        return RoomSummary(
            room=self.room,
            game=self.game,
            options=self.options,
            seats=tuple(self.seats),
            spectators=self.spectators,
            status=self.status,
            private=self.private,
            host=self.host,
            tournament=self.tournament,
        )


@dataclass(frozen=True, slots=True)
class Joined(Message):
    """Reply to join (and to a resume): which room, as what, and which seat is yours. `tournament` is set when a
    tournament you entered seated you in its next game. `game` names the room's game, so a client that has no
    summary of the room (a private one) can name its seats before the room's `state` or `room` push comes."""

    type: ClassVar[str] = "joined"
    room: str
    role: Role = field(metadata=wire_name("as"))
    seat: int | None = None
    tournament: str | None = field(default=None, metadata=omitted_when_empty())
    game: str = field(default="", metadata=omitted_when_empty())


@dataclass(frozen=True, slots=True)
class Left(Message):
    """Reply to leave."""

    type: ClassVar[str] = "left"
    room: str


@dataclass(frozen=True, slots=True)
class State(Message):
    """A full snapshot of a room's game; `seq` numbers the game's states (docs/protocol.md, "The seq rule").

    `view` is the game's own drawing data (board, scores, ...). `to_move` lists the seats to move,
    `legal` the legal moves of the seat to move (for simultaneous games, of every living seat). Sent on
    join, resume, `sync`, a game's start and end, and for the rare changes that are not moves (a pause, more
    time, a takeback); `events` lists what led to it (e.g. `game_over`, `moretime`, the takeback's accept).
    """

    type: ClassVar[str] = "state"
    room: str
    seq: int
    game: str
    status: RoomStatus
    view: dict[str, Any]
    to_move: list[Any] = field(default_factory=list)
    legal: list[Any] = field(default_factory=list)
    last_move: str | None = None
    moves: list[Any] = field(default_factory=list)
    movers: list[int] = field(default_factory=list, metadata=omitted_when_empty())
    result: Result | None = None
    next_tick_ms: int | None = None
    clock: Clock | None = None
    events: tuple[EventNote, ...] = field(default=(), metadata=omitted_when_empty())


@dataclass(frozen=True, slots=True)
class Moved(Message):
    """A turn-based game's one message per move: the move, what it changed, and who moves next.

    `cells` are the board cells the move changed (`[row, col, char]`, row indexing `view.board`), `view` the
    other view keys that changed, with their new values: applied to the previous view they give the new one
    (`protocol.vocab.apply_changes`). `legal` is sent only to the seat that must move now, `ai` only for an AI's
    move, `clock` only in clocked games, `events` only when something else happened (a pass, the game's end).
    The mover's own copy echoes its `move` request's `id`.
    """

    type: ClassVar[str] = "moved"
    room: str
    seq: int
    seat: int
    move: str
    cells: list[Any] = field(default_factory=list)
    view: dict[str, Any] = field(default_factory=dict, metadata=omitted_when_empty())
    to_move: list[Any] = field(default_factory=list)
    legal: list[Any] = field(default_factory=list, metadata=omitted_when_empty())
    clock: Clock | None = field(default=None, metadata=omitted_when_empty())
    events: tuple[EventNote, ...] = field(default=(), metadata=omitted_when_empty())
    ai: dict[str, Any] | None = field(default=None, metadata=omitted_when_empty())


@dataclass(frozen=True, slots=True)
class Tick(Message):
    """A simultaneous game's one message per tick (Tron): what changed, in the same form as `moved`.

    `cells` are the riders' new head squares, `view` always holds `tick`, `heads`, `alive` and `dirs`.
    `events` lists the tick's crashes and, on the last tick, `game_over` (then the final `state` follows).
    """

    type: ClassVar[str] = "tick"
    room: str
    seq: int
    cells: list[Any] = field(default_factory=list)
    view: dict[str, Any] = field(default_factory=dict)
    move: str | None = field(default=None, metadata=omitted_when_empty())  # the tick's joint move, e.g. "E W"
    next_tick_ms: int | None = field(default=None, metadata=omitted_when_empty())
    events: tuple[EventNote, ...] = field(default=(), metadata=omitted_when_empty())


@dataclass(frozen=True, slots=True)
class Event(Message):
    """Something that happened in a room (`kind`: move, pass, joined, left, chat, game_over, ...)."""

    type: ClassVar[str] = "event"
    room: str
    kind: EventKind
    seq: int
    data: dict[str, Any] = field(default_factory=dict)


BATCHED_TYPES = frozenset({"moved", "tick", "event", "state", "room"})
"""The message types a `batch` may carry: a room's own traffic (never a reply, never another batch)."""


@dataclass(frozen=True, slots=True)
class Batch(Message):
    """Several of one room's messages in one frame, in the order the server decided them: read it as its
    `messages`, one after the other, exactly as if each had come in a frame of its own.

    Spectators get their room's traffic this way, at most one frame per window (docs/protocol.md,
    "Spectators"); `messages` holds `moved`, `tick`, `event`, `state` and `room` messages of `room` only (the
    codec builds and checks them: a nested batch, another room's message or another type is `bad_message`).
    """

    type: ClassVar[str] = "batch"
    room: str
    messages: list[Any]


@dataclass(frozen=True, slots=True)
class Games(Message):
    """Reply to list_games: finished games, newest first."""

    type: ClassVar[str] = "games"
    games: list[Any]


@dataclass(frozen=True, slots=True)
class GameRecord(Message):
    """Reply to get_game: one finished game in the replay format of docs/replay.md, and its positions.

    `frames[0]` is the starting `view`; `frames[i]` the position after move i: a full `view`, or for
    live games (Tron) the tick's `delta`, so a replay viewer needs no rules of its own.
    """

    type: ClassVar[str] = "game"
    record: dict[str, Any]
    frames: list[Any] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Queued(Message):
    """Reply to analyse when the analysis is not stored yet: it runs after `ahead` other analyses."""

    type: ClassVar[str] = "queued"
    game_id: int
    ahead: int = 0


@dataclass(frozen=True, slots=True)
class AnalysisProgress(Message):
    """Pushed to those waiting for an analysis while it runs: `done` of `total` positions are assessed. The reply to
    a cancelling analyse has `waiting` false."""

    type: ClassVar[str] = "analysis_progress"
    game_id: int
    done: int
    total: int
    waiting: bool = True


@dataclass(frozen=True, slots=True)
class Analysis(Message):
    """A finished game's review (docs/review.md): per move its values, the best move and a label; per seat a
    summary. The reply to analyse when stored, else pushed to everyone waiting once it is done."""

    type: ClassVar[str] = "analysis"
    game_id: int
    moves: list[Any]
    summary: list[Any]
    budget_ms: int = 0


@dataclass(frozen=True, slots=True)
class Leaders(Message):
    """Reply to leaderboard: one page of the pool, with how many players it has in all."""

    type: ClassVar[str] = "leaders"
    game: str
    offset: int
    total: int
    entries: list[LeaderEntry]


@dataclass(frozen=True, slots=True)
class PlayerCard(Message):
    """Reply to profile: the player's name and kind, ratings by pool, and latest rated games, newest first.

    Each `recent` entry: game_id, pool, seat, before, after, outcome (win / draw / loss), players, finished_at.
    """

    type: ClassVar[str] = "player_card"
    name: str
    kind: str
    ratings: list[PoolRating]
    recent: list[Any] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class TournamentInfo(Message):
    """A tournament: the reply to create / join / leave / get_tournament, and pushed to its entrants and watchers
    when it changes. `standings` rows: {rank, player, points, tie_break, games, wins, draws, losses}; `games`:
    {players, room, places, forfeit} in schedule order (room null until it starts, places null until it ends)."""

    type: ClassVar[str] = "tournament"
    tournament: str
    game: str
    kind: str
    status: TournamentStatus
    host: str
    rated: bool
    entries: list[str]
    standings: list[Any]
    games: list[Any]
    options: dict[str, Any] = field(default_factory=dict)
    starts_in_ms: int = 0
    ends_in_ms: int | None = None
    invited: list[str] = field(default_factory=list)  # people whose invitation waits for an answer
    dropped: list[str] = field(default_factory=list)  # people invited who declined or did not answer in time


@dataclass(frozen=True, slots=True)
class TournamentUpdate(Message):
    """A tournament's change, pushed to its entrants and watchers who were sent the whole `tournament` before: its
    size does not grow with the games played. `games`: the games added, started or ended since the last push, each
    `{index, players, room, places, forfeit}` (`index`: its place in schedule order); `game_count`: how many games
    it has now (an arena forgets a game whose room was lost: a longer list is cut to it); `standings`: the rows that
    changed; `order`: every player of the standings in their order; the rest as in `tournament`. `fold_tournament`
    applies it to the `tournament` it follows."""

    type: ClassVar[str] = "tournament_update"
    tournament: str
    status: TournamentStatus
    game_count: int
    games: list[Any]
    standings: list[Any]
    order: list[str]
    entries: list[str]
    starts_in_ms: int = 0
    ends_in_ms: int | None = None
    invited: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Tournaments(Message):
    """Reply to list_tournaments: summaries {tournament, game, kind, status, host, entries, starts_in_ms}."""

    type: ClassVar[str] = "tournaments"
    tournaments: list[Any]


@dataclass(frozen=True, slots=True)
class Players(Message):
    """Reply to list_players: the online people (at most 200), bots first, then by name."""

    type: ClassVar[str] = "players"
    players: list[PlayerInfo]


@dataclass(frozen=True, slots=True)
class ChallengeSent(Message):
    """Reply to challenge or invite: the id of the challenge now waiting for its target's answer (pushed to the host
    of a new tournament for each person it invites, with `tournament`)."""

    type: ClassVar[str] = "challenge_sent"
    challenge: str
    to: str
    expires_ms: int
    tournament: str | None = field(default=None, metadata=omitted_when_empty())


@dataclass(frozen=True, slots=True)
class Challenged(Message):
    """Pushed to the target: a challenge (or, with `room`, an invite; with `tournament`, an invitation to enter a
    tournament, whose games the server seats you in: `seat` is then 0 and means nothing); `seat` is the seat you
    would take."""

    type: ClassVar[str] = "challenged"
    challenge: str
    sender: PlayerInfo = field(metadata=wire_name("from"))
    game: str
    options: dict[str, Any]
    seat: int
    expires_ms: int
    room: str | None = None
    tournament: TournamentOffer | None = field(default=None, metadata=omitted_when_empty())


@dataclass(frozen=True, slots=True)
class ChallengeGone(Message):
    """A challenge ended: `why` accepted (with its `room`, or its `tournament`), declined (with `reason`), expired,
    left or withdrawn."""

    type: ClassVar[str] = "challenge_gone"
    challenge: str
    why: ChallengeEnd
    room: str | None = None
    reason: str | None = None
    tournament: str | None = field(default=None, metadata=omitted_when_empty())


@dataclass(frozen=True, slots=True)
class Moderated(Message):
    """Reply to moderate, sent once the action is in the audit log on disk: what was done, to whom, and until when
    (wall-clock seconds, for a mute or ban)."""

    type: ClassVar[str] = "moderated"
    action: str
    target: str
    until: float | None = None


@dataclass(frozen=True, slots=True)
class Error(Message):
    """Something the client asked for was refused; `code` is stable, `message` is for a human.

    `suggestion` comes with `name_taken`: a free name the hello could use instead; `until` with `banned` and
    `muted`: when it ends (wall-clock seconds).
    """

    type: ClassVar[str] = "error"
    code: ErrorCode
    message: str
    room: str | None = None
    suggestion: str | None = None
    retry_after_ms: int | None = field(default=None, metadata=omitted_when_empty())  # with `rate_limited`
    until: float | None = field(default=None, metadata=omitted_when_empty())  # with `banned` and `muted`


def fold(state: State, change: Moved | Tick) -> State:
    """The full state after a `moved` or `tick` that follows `state` (its seq is `state.seq + 1`).

    The view gets the change's cells and keys; a `moved` also sets who moves, `legal` (the recipient's: empty
    unless it must move), the last move, the move list (and who made it, while `movers` keeps up with it) and
    the clock; a tick sets the riders still to move. A `game_over` among the change's events finishes the game
    with its result. The full `state` that follows a game's end repeats the seq and replaces the folded one.
    """
    status, result = state.status, state.result
    for note in change.events:
        if note.kind == EventKind.GAME_OVER:
            status, result = RoomStatus.FINISHED, Result.from_plain(note.data)
    view = apply_changes(state.view, change.cells, change.view)
    playing = status == RoomStatus.PLAYING
    if isinstance(change, Moved):
        return replace(
            state,
            seq=change.seq,
            status=status,
            view=view,
            to_move=list(change.to_move),
            legal=list(change.legal),
            last_move=change.move,
            moves=[*state.moves, change.move],
            movers=[*state.movers, change.seat] if len(state.movers) == len(state.moves) else state.movers,
            result=result,
            clock=change.clock if change.clock is not None else state.clock,
            events=change.events,
            id=None,
        )
    return replace(
        state,
        seq=change.seq,
        status=status,
        view=view,
        to_move=[seat for seat, alive in enumerate(view.get("alive", ())) if alive] if playing else [],
        legal=state.legal if playing else [],
        last_move=change.move if change.move is not None else state.last_move,
        result=result,
        next_tick_ms=change.next_tick_ms if playing else None,
        events=change.events,
        id=None,
    )


def fold_tournament(info: TournamentInfo, update: TournamentUpdate) -> TournamentInfo:
    """The whole tournament after `update`, from the `tournament` (or folded one) before it.

    The games list is cut to `game_count`, then each game of the update replaces the one at its index or, at the
    end of the list, is added; the standings are the rows before with the update's replacing theirs, in its
    `order`. ProtocolError if the update does not follow `info` (another tournament, a game's index past the end).
    """
    if update.tournament != info.tournament:
        raise ProtocolError(f"an update of {update.tournament[:16]!r} does not follow {info.tournament[:16]!r}")
    games = list(info.games[: max(0, update.game_count)])
    for change in update.games:
        index = change.get("index") if isinstance(change, dict) else None
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index <= len(games):
            raise ProtocolError(f"a tournament game's index {str(index)[:20]} does not follow the games known")
        game = {k: v for k, v in change.items() if k != "index"}
        if index == len(games):
            games.append(game)
        else:
            games[index] = game
    rows = {row.get("player"): row for row in [*info.standings, *update.standings] if isinstance(row, dict)}
    return replace(
        info,
        status=update.status,
        entries=list(update.entries),
        standings=[rows[player] for player in update.order if player in rows],
        games=games,
        starts_in_ms=update.starts_in_ms,
        ends_in_ms=update.ends_in_ms,
        invited=list(update.invited),
        dropped=list(update.dropped),
        id=None,
    )


CLIENT_MESSAGES: tuple[type[Message], ...] = (
    Hello,
    ListRooms,
    LobbyWatch,
    CreateRoom,
    Join,
    Leave,
    MakeMove,
    Chat,
    Resign,
    Rematch,
    MoreTime,
    Takeback,
    TakebackDecline,
    Abort,
    AddAi,
    RemoveAi,
    Sync,
    ListGames,
    GetGame,
    Analyse,
    ListPlayers,
    ChallengeRequest,
    Invite,
    Accept,
    Decline,
    Leaderboard,
    Profile,
    CreateTournament,
    JoinTournament,
    LeaveTournament,
    CancelTournament,
    ListTournaments,
    GetTournament,
    Moderate,
)
SERVER_MESSAGES: tuple[type[Message], ...] = (
    HelloNonce,
    Welcome,
    Rooms,
    LobbyUpdate,
    RoomInfo,
    Joined,
    Left,
    State,
    Moved,
    Tick,
    Event,
    Batch,
    Games,
    GameRecord,
    Queued,
    AnalysisProgress,
    Analysis,
    Players,
    ChallengeSent,
    Challenged,
    ChallengeGone,
    Error,
    Leaders,
    PlayerCard,
    TournamentInfo,
    TournamentUpdate,
    Tournaments,
    Moderated,
)
MESSAGE_TYPES: dict[str, type[Message]] = {cls.type: cls for cls in CLIENT_MESSAGES + SERVER_MESSAGES}


FIELD_SPECS: dict[type[Message], tuple[FieldSpec, ...]] = {cls: field_specs(cls) for cls in MESSAGE_TYPES.values()}
"""Each message class's field table (see `protocol.schema`), built once at import."""
