"""What the client knows, kept apart from how it is drawn: the games on offer, the lobby, your room, and
the texts people read about them (results, events, whose turn it is).

Plain data over the protocol's own typed payloads (`GameDescription`, `RoomSummary`, `SeatSummary`,
`Result` from `protocol.vocab`), with no Textual and no network, so the screens only draw it and the
tests can check it directly. Nothing here knows any game's rules or words: the games, their options
and their result reasons come from `welcome.games`, positions from `state.view`. `client.state` applies
the server's messages to these objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gamenight.protocol.errors import ProtocolError
from gamenight.protocol.messages import AddAi, Event, Join, LobbyUpdate, Message, Moved, State, Tick, fold
from gamenight.protocol.vocab import (
    END_REASONS,
    PROVEN_SCORE,
    EndReason,
    EventKind,
    GameDescription,
    LobbyCounts,
    Result,
    Role,
    RoomStatus,
    RoomSummary,
    SeatKind,
    in_opening,
    moves_by_seat,
)

AI_LEVELS = (1, 2, 3, 4, 5)
DEFAULT_AI_LEVEL = 3


# -- the lobby ------------------------------------------------------------------------------------------


class Lobby:
    """The games on offer and the rooms the server lists, kept up to date from its messages.

    The server lists rooms a page at a time (`welcome.rooms` is the first page, `list_rooms` gives the next
    ones) and pushes the changes to a watching client in batches (`lobby`): `rooms` holds the pages loaded so
    far plus the rooms pushes told about, `total` how many the server lists, `counts` its latest counts.
    """

    def __init__(self) -> None:
        self.games: dict[str, GameDescription] = {}
        self.rooms: dict[str, RoomSummary] = {}
        self.counts: LobbyCounts | None = None
        self.total = 0  # rooms the server lists (from the counts or the latest page)
        self.next_offset = 0  # where the next page of the listing starts
        self.page_pending = False  # a page was asked for and has not arrived yet

    def set_games(self, games: Iterable[GameDescription]) -> None:
        """Take the games of a `welcome`."""
        self.games = {g.name: g for g in games}

    def set_rooms(self, rooms: Iterable[RoomSummary]) -> None:
        """Replace the room list with a first page (from `welcome.rooms`, or a `rooms` reply from offset 0)."""
        self.rooms = {s.room: s for s in rooms if s.status != RoomStatus.CLOSED}
        self.next_offset = len(self.rooms)
        self.total = max(self.total if self.counts is not None else 0, len(self.rooms))

    def set_counts(self, counts: LobbyCounts | None) -> None:
        """Take the server's counts (of a `welcome` or a `lobby` push): the total of listed rooms with them."""
        if counts is not None:
            self.counts = counts
            self.total = counts.rooms

    def add_page(self, rooms: Iterable[RoomSummary], offset: int, total: int) -> None:
        """A `rooms` reply: from offset 0 it replaces the list, a later page adds to it."""
        page = [s for s in rooms if s.status != RoomStatus.CLOSED]
        self.page_pending = False
        if offset == 0:
            self.rooms = {}
        self.rooms.update((s.room, s) for s in page)
        self.next_offset = offset + len(page)
        self.total = max(total, len(self.rooms))

    def apply_update(self, update: LobbyUpdate) -> None:
        """A batched `lobby` push: rooms that appeared or changed, rooms gone from the listing, the counts."""
        for summary in update.rooms:
            self.update(summary)
        for code in update.gone:
            self.rooms.pop(code, None)
        self.set_counts(update.counts)

    @property
    def has_more(self) -> bool:
        """True if the server lists rooms that no page loaded yet."""
        return len(self.rooms) < self.total and self.next_offset < self.total

    def update(self, summary: RoomSummary) -> RoomSummary:
        """Apply a pushed room summary: add or change the room, or drop it once closed."""
        if summary.status == RoomStatus.CLOSED:
            self.rooms.pop(summary.room, None)
        else:
            self.rooms[summary.room] = summary
        return summary

    def title(self, game: str) -> str:
        """A game's title, or its wire name if the server did not describe it."""
        info = self.games.get(game)
        return info.title if info else game


def options_summary(summary: RoomSummary, game: GameDescription | None) -> str:
    """The options that differ from their defaults, e.g. "size 10, first white"; "standard" if none."""
    if game is None:
        return ", ".join(f"{k} {v}" for k, v in sorted(summary.options.items())) or "standard"
    changed = [
        f"{spec.title} {_shown(summary.options[spec.name])}"
        for spec in game.options
        # An option without a default (a random seed) is filled in by the server for every room.
        if spec.default is not None and spec.name in summary.options and summary.options[spec.name] != spec.default
    ]
    return ", ".join(changed) or "standard"


def _shown(value: Any) -> str:
    """An option value as people write it."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def seats_summary(summary: RoomSummary) -> str:
    """Who sits in each seat, in seat order, e.g. "ann · AI level 3 · open"."""
    return " · ".join(s.who() for s in summary.seats)


# -- creating a room ------------------------------------------------------------------------------------


OPEN, ME, AI, BOT = "open", "me", "ai", "bot"


@dataclass(frozen=True, slots=True)
class SeatPlan:
    """Who a new room's seat is for: left open, me, an AI level, or a named bot."""

    kind: str = OPEN
    level: int | None = None
    bot: str | None = None


@dataclass(frozen=True, slots=True)
class RoomPlan:
    """Everything the create-room form decided: the game, its options, privacy and each seat."""

    game: str
    options: Mapping[str, Any] = field(default_factory=dict)
    private: bool = False
    seats: tuple[SeatPlan, ...] = ()

    @property
    def my_seat(self) -> int | None:
        """The seat planned for me, if any."""
        return next((i for i, s in enumerate(self.seats) if s.kind == ME), None)

    def follow_up(self, room: str) -> list[Message]:
        """The requests that fill the new room: my join (seat or spectator) first, then each AI."""
        mine = self.my_seat
        requests: list[Message] = [
            Join(room=room, role=Role.PLAYER, seat=mine) if mine is not None else Join(room=room, role=Role.SPECTATOR)
        ]
        for index, seat in enumerate(self.seats):
            if seat.kind == AI:
                requests.append(AddAi(room=room, seat=index, level=seat.level or DEFAULT_AI_LEVEL))
            elif seat.kind == BOT:
                requests.append(AddAi(room=room, seat=index, bot=seat.bot))
        return requests


def quick_game_plan() -> RoomPlan:
    """The fast path: default Othello, me as black, an AI of the middle level as white."""
    return RoomPlan("othello", {}, False, (SeatPlan(ME), SeatPlan(AI, level=DEFAULT_AI_LEVEL)))


# -- the room you are in --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LogLine:
    """One line of a room's log: an event told for people, or a chat line (`spectator`: said by a spectator, shown
    in the game screen's own Spectators tab)."""

    text: str
    style: str = ""
    spectator: bool = False


class RoomSession:
    """A room this client is in (or a finished game it replays): your role and seat, the game's description,
    the room's summary, its latest game state, and the log of what happened."""

    def __init__(
        self, code: str, role: Role, seat: int | None, host: bool = False, description: GameDescription | None = None
    ) -> None:
        self.code = code
        self.role = role
        self.seat = seat
        self.host = host
        self.description = description  # the game's description from the welcome (its reason texts, ...)
        self._summary: RoomSummary | None = None
        self.seen_names: dict[int, str] = {}  # each seat's latest occupant, kept after they leave a finished game
        self.state: State | None = None
        self.ai_info: dict[int, dict[str, Any]] = {}
        self.last_ai_seat: int | None = None
        self.games_started = 0
        self.seq = 0  # the latest seq seen, from a state or a tick
        self.syncing = False  # a sync was sent; replayed events are expected until its state arrives
        self.countdown_ms: int | None = None  # the wait before a live game's next tick, when it is starting
        self.takeback_offer: int | None = None  # the seat whose takeback offer waits for an answer
        self.reopening = False  # a seat handed back on launch: the game screen opens only if its state is unfinished
        self.ratings: dict[str, str] = {}  # a rated room's players' ratings in its game ("1500?"), from their cards
        self.ratings_asked: set[str] = set()  # the players whose cards were asked for (once a room)
        self.log: list[LogLine] = []
        self._events_seen: set[tuple[int, str, str]] = set()

    @property
    def summary(self) -> RoomSummary | None:
        """The room as the lobby and its members see it (seats and who sits there); None until known."""
        return self._summary

    @summary.setter
    def summary(self, summary: RoomSummary | None) -> None:
        """Take a new summary, remembering who sat in each seat (`who` still names a player who left a finished
        game: "white (bob) resigned")."""
        self._summary = summary
        for seat in summary.seats if summary is not None else ():
            if not seat.open and seat.name:
                self.seen_names[seat.seat] = seat.name

    @property
    def game(self) -> str:
        """The room's game (its wire name)."""
        if self.state is not None:
            return self.state.game
        if self.summary is not None:
            return self.summary.game
        return self.description.name if self.description else ""

    @property
    def status(self) -> RoomStatus:
        """waiting, playing, paused or finished."""
        if self.state is not None:
            return self.state.status
        return self.summary.status if self.summary else RoomStatus.WAITING

    @property
    def playing(self) -> bool:
        """True when you hold a seat (rather than watch)."""
        return self.role == Role.PLAYER and self.seat is not None

    @property
    def my_turn(self) -> bool:
        """True when the game runs and your seat is among those to move."""
        return (
            self.playing
            and self.status == RoomStatus.PLAYING
            and self.state is not None
            and self.seat in self.state.to_move
        )

    @property
    def live(self) -> bool:
        """True for a simultaneous game (Tron), whose moves carry no seq."""
        if self.description is not None:
            return self.description.simultaneous
        return self.state is not None and self.state.next_tick_ms is not None

    def apply_state(self, state: State) -> bool:
        """Take a full state; True if it starts a new game (the first one seen, or a rematch)."""
        previous = self.state
        self.state = state
        self.seq = state.seq
        self.syncing = False
        before = previous.status if previous is not None else None
        # A live game counts down before its first tick and again when it resumes after a pause.
        first_tick = state.view.get("tick") == 0 or before == RoomStatus.PAUSED
        self.countdown_ms = state.next_tick_ms if state.status == RoomStatus.PLAYING and first_tick else None
        started = state.status == RoomStatus.PLAYING and before in (None, RoomStatus.WAITING, RoomStatus.FINISHED)
        if previous is None or state.moves != previous.moves or state.status != RoomStatus.PLAYING:
            self.takeback_offer = None  # a move (or the end) withdraws an offer, as on the server
        if started:
            self.games_started += 1
            self.ai_info.clear()
            self.last_ai_seat = None
        return started

    def apply_moved(self, moved: Moved) -> bool:
        """Fold a turn-based move into the full state (view, to move, legal for me, moves, clock, the end).

        False (and nothing changes) when it does not follow the state held: a move was missed, so a `sync` is
        needed (or it is a late copy of a state already shown).
        """
        if self.state is None or moved.seq != self.seq + 1:
            return False
        self.state = fold(self.state, moved)
        self.seq = moved.seq
        self.takeback_offer = None  # a move withdraws an offer, as on the server
        if moved.ai is not None:
            self.ai_info[moved.seat] = dict(moved.ai)
            self.last_ai_seat = moved.seat
        return True

    def apply_tick(self, tick: Tick) -> bool:
        """Fold a live game's tick into the full state; False (and nothing changes) if ticks were missed."""
        if self.state is None or tick.seq != self.seq + 1:
            return False
        self.state = fold(self.state, tick)
        self.seq = tick.seq
        self.countdown_ms = None
        return True

    def apply_event(self, event: Event) -> bool:
        """Remember what an event tells (the AI's search figures); False for a replay of one already seen, or an
        earlier chat line (the room's backlog sent on a join) already shown."""
        data = {k: v for k, v in event.data.items() if k != "earlier"}
        earlier = event.data.get("earlier")  # an earlier chat line's key is the seq it was said at
        key = (earlier if isinstance(earlier, int) else event.seq, str(event.kind), repr(sorted(data.items())))
        if (self.syncing or "earlier" in event.data) and key in self._events_seen:
            return False
        self._events_seen.add(key)
        if event.kind == EventKind.TAKEBACK:
            offered = event.data.get("action") == "offer" and isinstance(event.data.get("seat"), int)
            self.takeback_offer = event.data["seat"] if offered else None
        if event.kind == EventKind.MOVE and isinstance(event.data.get("ai"), Mapping):
            seat = event.data.get("seat")
            if isinstance(seat, int):
                self.ai_info[seat] = dict(event.data["ai"])
                self.last_ai_seat = seat
        return True

    def label(self, seat: int | None) -> str:
        """A seat's colour or label, e.g. "black": the room summary's, else the game's (a private room's summary
        comes after its first events); "seat 2" if neither is known yet."""
        info = self.summary.seat(seat) if self.summary else None
        if info is not None and info.label:
            return info.label
        if seat is not None and self.description is not None:
            return self.description.seat_label(seat)
        return f"seat {seat + 1}" if seat is not None else "?"

    def rematch_waits_for(self, votes: object) -> list[str]:
        """Who must still agree to a rematch, given the seats that asked (a `rematch` event's `votes`): their names,
        none when every seated person asked (AIs never vote)."""
        asked = set(votes) if isinstance(votes, list) else set()
        seats = self.summary.seats if self.summary else ()
        return [s.name or s.label for s in seats if s.kind in (SeatKind.HUMAN, SeatKind.BOT) and s.seat not in asked]

    def who(self, seat: int | None) -> str:
        """ "black (ann)", or just "black" when the seat's occupant is not known. After the game, a player who has
        left it is still named ("white (bob) resigned")."""
        info = self.summary.seat(seat) if self.summary else None
        name = info.name if info and not info.open else None
        if name is None and seat is not None and self.status == RoomStatus.FINISHED:
            name = self.seen_names.get(seat)
        if self.playing and seat == self.seat:
            name = "you"
        return f"{self.label(seat)} ({name})" if name else self.label(seat)

    @property
    def clocked(self) -> bool:
        """True when the game shown has a clock."""
        return self.state is not None and self.state.clock is not None

    def can_moretime(self) -> bool:
        """True when you may give your opponent 15 s: a running clocked game that is not correspondence."""
        clock = self.state.clock if self.state is not None else None
        return self.playing and self.status == RoomStatus.PLAYING and clock is not None and not clock.days_per_move

    @property
    def rated(self) -> bool:
        """True when the room's games are rated (its summary's `rated` option)."""
        return self.summary is not None and self.summary.options.get("rated") is True

    def rating_pool(self) -> str:
        """The pool the room's games are rated in: the game, or "<game>-ffa" with more than two seats (Tron 3-4)."""
        seats = self.summary.seats if self.summary is not None else ()
        return f"{self.game}-ffa" if len(seats) > 2 else self.game

    def unasked_ratings(self) -> list[str]:
        """The seated players of a rated room whose cards (and so ratings) were not asked for yet."""
        if not self.rated or self.summary is None:
            return []
        names = [seat.name or seat.who() for seat in self.summary.seats if not seat.open]
        return [name for name in names if name and name not in self.ratings_asked]

    def can_take_back(self) -> bool:
        """True when a takeback key makes sense: accepting the opponent's offer, or asking after a move of yours
        (never in a rated game: the server refuses takebacks there)."""
        if not self.playing or self.status != RoomStatus.PLAYING or self.live or self.state is None or self.rated:
            return False
        if self.takeback_offer is not None:
            return self.takeback_offer != self.seat
        return bool(self.state.moves)

    def can_decline_takeback(self) -> bool:
        """True while the opponent's takeback offer waits for your answer."""
        return self.playing and self.takeback_offer is not None and self.takeback_offer != self.seat

    def can_abort(self) -> bool:
        """True while the server takes an abort: a turn-based game in its opening (some seat has made fewer than
        `OPENING_MOVES` moves, counted from `state.movers` as the server counts them), not a tournament's."""
        return self.summary is not None and self.summary.tournament is None and self._in_opening()

    def _in_opening(self) -> bool:
        """True while you play a turn-based game in its opening (counted as the server counts it)."""
        state, summary = self.state, self.summary
        if not self.playing or self.status != RoomStatus.PLAYING or self.live or state is None or summary is None:
            return False
        return in_opening(moves_by_seat(state.movers, len(summary.seats)))

    def leave_question(self) -> str:
        """What leaving a running game does, asked before you leave: it resigns, except that a rated game ending in
        its opening is aborted instead (a tournament's game is not aborted: its result stands, unrated)."""
        if self.rated and self._in_opening():
            if self.summary is not None and self.summary.tournament is not None:
                return "Leaving resigns this tournament game; in its opening, the result is not rated. Leave?"
            return "Leaving aborts this rated game: it is in its opening, so nobody wins and nothing is rated. Leave?"
        return "Leaving resigns the game. Leave?"

    def flagged(self) -> int | None:
        """The seat that lost on time, once the game ended so."""
        result = self.state.result if self.state is not None else None
        return result.loser if result is not None and result.reason == EndReason.TIME else None

    def can_host(self) -> bool:
        """True when you may seat or remove AIs (you created the room and it has not started)."""
        return self.host and self.status == RoomStatus.WAITING

    def ai_seats(self) -> list[int]:
        """The seats an AI holds, in seat order."""
        return [s.seat for s in self.summary.seats if s.kind == SeatKind.AI] if self.summary else []


# -- texts for people -------------------------------------------------------------------------------------


def read_result(raw: object) -> Result | None:
    """A plain result map (a `game_over` event's data, a record's `result`) as a `Result`; None if it is not one."""
    try:
        return Result.from_plain(raw)
    except ProtocolError:
        return None


def reason_text(reason: str, game: GameDescription | None, draw: bool = False) -> str:
    """What a result reason means, in the game's own words (`GameDescription.reasons`), else in the protocol's
    words for the reasons every game shares (resign, forfeit); the raw word if neither describes it. A draw
    uses the reason's draw text when it has one."""
    texts = game.reason(reason) if game is not None else None
    texts = texts or next((r for r in END_REASONS if r.reason == reason), None)
    if texts is None:
        return reason
    return (texts.draw or texts.win) if draw else texts.win


def describe_result(result: Result, session: RoomSession) -> str:
    """One line saying who won and why, e.g. "black (ann) wins 40-24 (most discs)"."""
    winners = list(result.winners)
    reason = result.reason
    score = "-".join(str(s) for s in result.scores) if result.scores else ""
    if reason in (EndReason.RESIGN, EndReason.FORFEIT) and result.loser is not None:
        verb = "resigned" if reason == EndReason.RESIGN else "forfeited"
        return f"{session.who(result.loser)} {verb}; " + _winners_text(winners, session, "")
    if reason == EndReason.TIME and result.loser is not None:
        return f"{session.who(result.loser)} ran out of time; " + _winners_text(winners, session, "")
    if reason == EndReason.ABORTED:
        return "Game aborted: no winner"
    why = reason_text(reason, session.description, draw=not winners)
    if not winners:
        return "Draw" + (f" {score}" if score else "") + (f": {why}" if why else "")
    return _winners_text(winners, session, score) + (f" ({why})" if why else "")


def _winners_text(winners: list[int], session: RoomSession, score: str) -> str:
    """ "black (ann) wins 40-24", "shared by player 1, player 3", or "nobody wins"."""
    tail = f" {score}" if score else ""
    if len(winners) == 1:
        return f"{session.who(winners[0])} wins{tail}"
    if not winners:
        return f"nobody wins{tail}"
    return "shared by " + ", ".join(session.who(w) for w in winners) + tail


def headline(result: Result, session: RoomSession) -> str:
    """The game-over title: "You won!", "You lost", "Draw", "Shared win" (for players), else "Game over"."""
    if result.reason == EndReason.ABORTED:
        return "Aborted"
    if not result.winners:
        return "Draw"
    if not session.playing:
        return "Game over"
    if session.seat not in result.winners:
        return "You lost"
    return "You won!" if len(result.winners) == 1 else "Shared win"


SEAT_EVENTS: dict[str, str] = {
    EventKind.PASS: "has no move and passes",
    EventKind.CRASH: "crashed",
    EventKind.REMATCH: "wants a rematch",
}
"""Events the log tells as "<who> <what>", by kind."""


def describe_event(event: Event, session: RoomSession) -> str | None:
    """A line for the room's log, or None for events the log does not show (moves)."""
    data = event.data
    seat = data.get("seat") if isinstance(data.get("seat"), int) else None
    if event.kind == EventKind.CHAT:
        return f"{data.get('name', '?')}: {data.get('text', '')}"
    if event.kind == EventKind.JOINED:
        what = "is back" if data.get("resumed") else "sits down"
        return f"{data.get('name') or '?'} {what} as {session.label(seat)}"
    if event.kind == EventKind.LEFT:
        return f"{session.label(seat)} {'lost the connection' if data.get('connection') == 'lost' else 'left'}"
    if event.kind in SEAT_EVENTS:
        return f"{session.who(seat)} {SEAT_EVENTS[event.kind]}"
    if event.kind == EventKind.RETIRED:
        verb = "forfeits" if data.get("reason") == EndReason.FORFEIT else "resigns"
        return f"{session.who(seat)} {verb} and drops out"
    if event.kind == EventKind.MORETIME:
        return f"{session.who(seat)} gives {data.get('ms', 0) // 1000} s more"
    if event.kind == EventKind.TAKEBACK:
        action = data.get("action")
        if action == "offer":
            return f"{session.who(seat)} asks to take back their last move"
        if action == "accept":
            return f"{session.who(seat)} accepts the takeback"
        return f"{session.who(seat)} declines the takeback"
    if event.kind == EventKind.UNRATED:
        return f"This game is not rated: {data.get('reason', '')}"
    if event.kind == EventKind.GAME_OVER:
        result = read_result(data)
        return "Game over: " + describe_result(result, session) if result is not None else "Game over"
    return None


def ai_info_text(info: Mapping[str, Any]) -> str:
    """An AI's search figures, e.g. "depth 6 · 12,345 nodes · sees a forced win"."""
    if info.get("fallback"):
        return "fell back to a quick move"
    parts = []
    for key, value in info.items():
        if key == "nodes" and isinstance(value, int):
            parts.append(f"{value:,} nodes")
        elif key == "score":
            if isinstance(value, (int, float)) and abs(value) >= PROVEN_SCORE:
                parts.append("sees a forced win" if value > 0 else "sees a forced loss")
            # Any other score is the engine's estimate in its own units ("+999547", "+37"): not shown.
        elif key == "ms" and isinstance(value, (int, float)):
            parts.append(f"{value:g} ms")
        elif isinstance(value, (int, float, str)) and not isinstance(value, bool):
            parts.append(f"{key.replace('_', ' ')} {value}")
    return " · ".join(parts)


def status_text(session: RoomSession) -> str:
    """What the room is waiting for, in one line: whose turn, who is missing, or the result."""
    if session.status == RoomStatus.WAITING:
        seats = session.summary.seats if session.summary else ()
        filled = sum(1 for s in seats if not s.open)
        return f"Waiting for players: {filled} of {len(seats)} seats filled" if seats else "Waiting for players"
    state = session.state
    if state is None:
        return ""
    if state.status == RoomStatus.PAUSED:
        return "Paused until every player is back"
    if state.status == RoomStatus.FINISHED:
        return describe_result(state.result, session) if state.result is not None else "Game over"
    if len(state.to_move) > 1 or state.next_tick_ms is not None:  # a live game: all riders move at once
        return "Ride! Steer with the arrows or WASD" if session.my_turn else "Watching the riders"
    if session.my_turn:
        return f"Your move ({session.label(session.seat)})"
    if state.to_move:
        return f"{session.who(state.to_move[0])} to move"
    return ""


def numbered_moves(moves: Iterable[str]) -> list[str]:
    """The move list as "1. f5", "2. d6", ..."""
    return [f"{number}. {move}" for number, move in enumerate(moves, start=1)]
