"""One room: its seats, its audience and its game, as a sans-I/O state machine.

A room never touches the network or the clock. Every method takes what happened (a request, a tick,
an AI's answer, the current time) and returns an `Outbox`: the messages to send and to whom, plus
the effects the I/O layer must carry out (ask an AI, start a tick clock). So the whole referee is
testable without sockets, and the network layer only delivers.

Request guards run in a fixed order (membership -> seat -> game over -> turn -> stale -> legal) and
each refusal is a `Refusal` with a stable code; a refused request never changes the room.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from protocol.errors import ErrorCode
from protocol.messages import Event, Joined, Message, RoomInfo, State, Tick
from server.games.base import Game, GameError, Outcome

EVENT_HISTORY = 256  # events kept per room for `sync`
COUNTDOWN_MS = 3000  # pause before a live game's first tick, so players can find their keys


class Refusal(Exception):
    """A request the room will not carry out; becomes an `error` with `code` for the requester only."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class AiSpec:
    """Who plays an AI seat: a level 1-5 or a named bot."""

    level: int | None = None
    bot: str | None = None

    @property
    def label(self) -> str:
        """How the seat is shown to people, e.g. "AI level 3" or "bot classic"."""
        return f"bot {self.bot}" if self.bot else f"AI level {self.level}"


@dataclass(slots=True)
class Seat:
    """One seat of a room: empty, a human's (by session id) or an AI's."""

    index: int
    label: str
    session: str | None = None
    player: str | None = None
    ai: AiSpec | None = None
    connected: bool = False

    @property
    def free(self) -> bool:
        """True when nobody, human or AI, sits here."""
        return self.session is None and self.ai is None

    def summary(self) -> dict[str, Any]:
        """The seat as shown in the lobby and the room summary."""
        kind = "open" if self.free else ("ai" if self.ai else "human")
        return {
            "seat": self.index,
            "label": self.label,
            "kind": kind,
            "name": self.ai.label if self.ai else self.player,
            "level": self.ai.level if self.ai else None,
            "bot": self.ai.bot if self.ai else None,
            "connected": True if self.ai else self.connected,
        }


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


@dataclass(frozen=True, slots=True)
class StartClock:
    """Effect: run the tick clock of a live game, first tick `delay_ms` from now."""

    room: str
    delay_ms: int
    tick_ms: int


@dataclass(slots=True)
class Outbox:
    """What a room wants done after handling something: messages to send and effects to run."""

    sends: list[Send] = field(default_factory=list)
    effects: list[Any] = field(default_factory=list)
    changed: bool = False  # the room's lobby summary changed

    def send(self, to: frozenset[str] | set[str], message: Message) -> None:
        """Queue `message` for the sessions in `to` (nothing if nobody)."""
        if to:
            self.sends.append(Send(frozenset(to), message))

    def extend(self, other: Outbox) -> Outbox:
        """Append another outbox's work to this one."""
        self.sends.extend(other.sends)
        self.effects.extend(other.effects)
        self.changed = self.changed or other.changed
        return self


class Room:
    """A room's referee: seats, spectators, the running game and its history."""

    def __init__(self, code: str, game: Game, options: dict[str, Any], room_options: dict[str, Any],
                 host: str, host_name: str, private: bool = False) -> None:
        self.code = code
        self.game = game
        self.options = options  # the game's own, passed to its rules
        self.room_options = room_options  # ai_ms, ai_pace_ms, on_disconnect, grace_s
        self.host = host
        self.host_name = host_name
        self.private = private
        labels = game.seat_names(options)
        self.seats = [Seat(i, labels[i]) for i in range(game.seat_count(options))]
        self.spectators: set[str] = set()
        self.status = "waiting"
        self.state: Any = None
        self.seq = 0
        self.moves: list[str] = []
        self.last_move: str | None = None
        self.result: Outcome | None = None
        self.events: deque[Event] = deque(maxlen=EVENT_HISTORY)
        self.pending: dict[int, Any] = {}  # simultaneous games: each seat's latest move this tick
        self.rematch_votes: set[int] = set()
        self.games_played = 0
        self.empty_since: float | None = None

    # -- who is here ---------------------------------------------------------------------------
    def audience(self) -> set[str]:
        """Every session that receives this room's states and events."""
        seated = {s.session for s in self.seats if s.session is not None and s.connected}
        return seated | self.spectators

    def seat_of(self, session: str) -> Seat | None:
        """The seat `session` holds here, if any."""
        return next((s for s in self.seats if s.session == session), None)

    def is_member(self, session: str) -> bool:
        """True if `session` holds a seat or watches."""
        return session in self.spectators or self.seat_of(session) is not None

    def summary(self) -> RoomInfo:
        """The room as the lobby lists it."""
        return RoomInfo(
            room=self.code, game=self.game.name, options={**self.options, **self.room_options},
            seats=[s.summary() for s in self.seats], spectators=len(self.spectators),
            status=self.status, private=self.private, host=self.host_name,
        )

    # -- joining and leaving ---------------------------------------------------------------------
    def join(self, session: str, name: str, role: str, seat: int | None, request_id: int | None) -> Outbox:
        """Seat a player (any free seat, or the one asked for) or add a spectator."""
        out = Outbox()
        if role == "spectator":
            self._require_not_seated(session)
            self.spectators.add(session)
            out.changed = True
            return out.extend(self._welcome_member(session, None, role, request_id))
        if role != "player":
            raise Refusal(ErrorCode.BAD_MESSAGE, "'as' must be 'player' or 'spectator'")
        mine = self.seat_of(session)
        if mine is not None and (seat is None or seat == mine.index):
            return out.extend(self._welcome_member(session, mine.index, role, request_id))
        if self.status != "waiting":
            raise Refusal(ErrorCode.ROOM_FULL, "the game has already started; join as a spectator")
        target = self._free_seat(seat)
        if mine is not None:
            mine.session, mine.player, mine.connected = None, None, False
        self.spectators.discard(session)
        target.session, target.player, target.connected = session, name, True
        out.changed = True
        out.extend(self._welcome_member(session, target.index, role, request_id))
        out.extend(self._broadcast_event("joined", {"seat": target.index, "name": name}))
        return out.extend(self._start_if_full())

    def _require_not_seated(self, session: str) -> None:
        """A seated player cannot also watch; they already see everything."""
        if self.seat_of(session) is not None:
            raise Refusal(ErrorCode.NOT_ALLOWED, "you hold a seat here; leave it first to watch")

    def _free_seat(self, seat: int | None) -> Seat:
        """The seat to give a joining player, or a refusal saying why there is none."""
        if seat is not None:
            if not 0 <= seat < len(self.seats):
                raise Refusal(ErrorCode.BAD_MESSAGE, f"seat must be 0..{len(self.seats) - 1}")
            if not self.seats[seat].free:
                raise Refusal(ErrorCode.SEAT_TAKEN, f"seat {seat} ({self.seats[seat].label}) is taken")
            return self.seats[seat]
        for candidate in self.seats:
            if candidate.free:
                return candidate
        raise Refusal(ErrorCode.ROOM_FULL, "every seat is taken; join as a spectator")

    def _welcome_member(self, session: str, seat: int | None, role: str, request_id: int | None) -> Outbox:
        """Reply to a join: which seat, then the full state if a game exists."""
        out = Outbox()
        out.send({session}, Joined(room=self.code, role=role, seat=seat, id=request_id))
        if self.state is not None:
            out.send({session}, self.snapshot())
        return out

    def leave(self, session: str) -> Outbox:
        """A member leaves for good: a seated player in a running game resigns it first."""
        out = Outbox()
        mine = self.seat_of(session)
        if mine is None and session not in self.spectators:
            raise Refusal(ErrorCode.NOT_IN_ROOM, f"you are not in room {self.code}")
        self.spectators.discard(session)
        if mine is not None:
            if self.status == "playing":
                out.extend(self._finish_by(mine.index, "resign"))
            mine.session, mine.player, mine.connected = None, None, False
            self.rematch_votes.discard(mine.index)
            out.extend(self._broadcast_event("left", {"seat": mine.index}))
        out.changed = True
        return out

    def disconnect(self, session: str) -> Outbox:
        """A member's connection dropped: a spectator is gone; a player's seat is held for their return."""
        out = Outbox()
        if session in self.spectators:
            self.spectators.discard(session)
            out.changed = True
        mine = self.seat_of(session)
        if mine is not None and mine.connected:
            mine.connected = False
            out.changed = True
            out.extend(self._broadcast_event("left", {"seat": mine.index, "connection": "lost"}))
        return out

    def reconnect(self, session: str) -> Outbox:
        """A seat's owner is back (resume): mark it connected and send them the full state."""
        out = Outbox()
        mine = self.seat_of(session)
        if mine is None:
            return out
        mine.connected = True
        out.changed = True
        out.extend(self._welcome_member(session, mine.index, "player", None))
        out.extend(self._broadcast_event("joined", {"seat": mine.index, "name": mine.player, "resumed": True}))
        return out

    # -- AI seats -------------------------------------------------------------------------------------
    def add_ai(self, session: str, seat: int | None, ai: AiSpec) -> Outbox:
        """Host only: seat an AI in a free seat while the game waits for players."""
        self._require_host(session, "add an AI")
        if self.status != "waiting":
            raise Refusal(ErrorCode.NOT_ALLOWED, "AIs can only be seated before the game starts")
        target = self._free_seat(seat)
        target.ai = ai
        target.connected = True
        out = Outbox(changed=True)
        out.extend(self._broadcast_event("joined", {"seat": target.index, "name": ai.label, "ai": True}))
        return out.extend(self._start_if_full())

    def remove_ai(self, session: str, seat: int) -> Outbox:
        """Host only: free an AI's seat while the game waits."""
        self._require_host(session, "remove an AI")
        if self.status != "waiting":
            raise Refusal(ErrorCode.NOT_ALLOWED, "AIs can only be removed before the game starts")
        if not 0 <= seat < len(self.seats) or self.seats[seat].ai is None:
            raise Refusal(ErrorCode.NOT_ALLOWED, f"seat {seat} has no AI")
        self.seats[seat].ai = None
        self.seats[seat].connected = False
        out = Outbox(changed=True)
        return out.extend(self._broadcast_event("left", {"seat": seat, "ai": True}))

    def _require_host(self, session: str, what: str) -> None:
        """Refuse anyone but the room's creator."""
        if session != self.host:
            raise Refusal(ErrorCode.NOT_ALLOWED, f"only the host can {what}")

    # -- the game ------------------------------------------------------------------------------------
    def _start_if_full(self) -> Outbox:
        """Start the game once every seat is filled."""
        if self.status != "waiting" or any(s.free for s in self.seats):
            return Outbox()
        return self.start_game()

    def start_game(self) -> Outbox:
        """Begin a new game from the initial position and announce it."""
        self.state = self.game.initial_state(self.options)
        self.status = "playing"
        self.moves, self.last_move, self.result = [], None, None
        self.pending.clear()
        self.rematch_votes.clear()
        out = Outbox(changed=True)
        self.seq += 1
        out.send(self.audience(), self.snapshot())
        if self.game.simultaneous:
            out.effects.append(StartClock(self.code, COUNTDOWN_MS, self.tick_ms))
        return out.extend(self._ai_turns())

    def ai_pace_ms(self) -> int:
        """Least time between AI moves: the room's option when someone watches, else none."""
        watched = bool(self.spectators) or any(s.connected and s.session for s in self.seats)
        return int(self.room_options["ai_pace_ms"]) if watched else 0

    @property
    def tick_ms(self) -> int:
        """The live game's tick length, clamped to a playable range."""
        return max(50, min(2000, int(self.options.get("tick_ms", 150))))

    def move(self, session: str, text: Any, seq: int | None) -> Outbox:
        """A player's move, checked by the guards in order, then applied and announced."""
        seat = self._mover(session)
        if seq is not None and seq != self.seq:
            raise Refusal(ErrorCode.STALE, f"that move was made on state {seq}; the room is at {self.seq}")
        if self.game.simultaneous:
            self.pending[seat.index] = self._parse(text)
            return Outbox()
        return self._apply({seat.index: self._parse(text)}, {})

    def _mover(self, session: str) -> Seat:
        """The seat `session` moves for, after the membership, game-over and turn guards."""
        seat = self.seat_of(session)
        if seat is None:
            if session in self.spectators:
                raise Refusal(ErrorCode.NOT_ALLOWED, "spectators cannot move")
            raise Refusal(ErrorCode.NOT_IN_ROOM, f"you have no seat in room {self.code}")
        if self.status == "finished":
            raise Refusal(ErrorCode.GAME_OVER, "the game is over; ask for a rematch or leave")
        if self.status != "playing":
            raise Refusal(ErrorCode.NOT_ALLOWED, "the game has not started yet")
        if seat.index not in self.game.to_move(self.state):
            raise Refusal(ErrorCode.NOT_YOUR_TURN, f"it is not {seat.label}'s turn")
        return seat

    def _parse(self, text: Any) -> Any:
        """Parse a wire move, turning the game's complaint into an illegal_move refusal."""
        try:
            return self.game.parse_move(self.state, text)
        except GameError as exc:
            raise Refusal(ErrorCode.ILLEGAL_MOVE, str(exc)) from None

    def _apply(self, moves: dict[int, Any], ai_info: dict[int, dict[str, Any]]) -> Outbox:
        """Apply one move (or one tick's joint move), then announce it: events, state, maybe the end."""
        before = self.state
        try:
            after = self.game.apply(before, moves)
        except GameError as exc:
            raise Refusal(ErrorCode.ILLEGAL_MOVE, str(exc)) from None
        notation = self._notation(before, moves)
        self.state, self.last_move = after, notation
        self.moves.append(notation)
        self.seq += 1
        out = Outbox()
        if not self.game.simultaneous:
            (seat, _), = moves.items()
            data: dict[str, Any] = {"seat": seat, "move": notation}
            if seat in ai_info:
                data["ai"] = ai_info[seat]
            out.extend(self._broadcast_event("move", data))
        for notice in self.game.notices(before, after):
            out.extend(self._broadcast_event(notice.kind, notice.data))
        outcome = self.game.outcome(after)
        if outcome is not None:
            self._finish(outcome)
            out.changed = True
        out.extend(self._announce_state(before))
        if outcome is not None:
            out.extend(self._broadcast_event("game_over", outcome.to_wire()))
        return out.extend(self._ai_turns())

    def _notation(self, before: Any, moves: dict[int, Any]) -> str:
        """The wire form of a move, or of a whole tick for simultaneous games."""
        if self.game.simultaneous:
            return self.game.format_joint(moves)  # type: ignore[attr-defined]
        (_, move), = moves.items()
        return self.game.format_move(before, move)

    def _announce_state(self, before: Any) -> Outbox:
        """Send the new position: a compact tick delta for live games, else the full snapshot."""
        out = Outbox()
        delta = self.game.delta(before, self.state)
        if delta is not None and self.status == "playing":
            out.send(self.audience(), Tick(room=self.code, seq=self.seq, delta=delta, next_tick_ms=self.tick_ms))
        else:
            out.send(self.audience(), self.snapshot())
        return out

    def tick(self) -> Outbox:
        """A live game's clock fired: apply every living seat's latest move (or its default) at once."""
        if self.status != "playing" or not self.game.simultaneous:
            return Outbox()
        moves = {seat: self.pending.get(seat, self.game.default_move(self.state, seat))
                 for seat in sorted(self.game.to_move(self.state))}
        self.pending.clear()
        return self._apply(moves, {})

    def ai_moved(self, seat: int, seq: int, text: str, info: dict[str, Any]) -> Outbox:
        """An AI's answer arrived: apply it if the position is still the one it was asked about."""
        if self.status != "playing" or seq != self.seq or self.seats[seat].ai is None:
            return Outbox()
        if self.game.simultaneous:
            self.pending[seat] = self._parse(text)
            return Outbox()
        return self._apply({seat: self._parse(text)}, {seat: info})

    def _ai_turns(self) -> Outbox:
        """Ask for a move from every AI seat that must move now."""
        out = Outbox()
        if self.status != "playing":
            return out
        for index in sorted(self.game.to_move(self.state)):
            ai = self.seats[index].ai
            if ai is not None:
                budget = self.tick_ms - 40 if self.game.simultaneous else int(self.room_options["ai_ms"])
                out.effects.append(AiTurn(self.code, index, self.seq, self.game.name, self.state, ai, budget))
        return out

    def resign(self, session: str) -> Outbox:
        """A player concedes; the other seats share the win."""
        seat = self.seat_of(session)
        if seat is None:
            raise Refusal(ErrorCode.NOT_IN_ROOM, f"you have no seat in room {self.code}")
        if self.status == "finished":
            raise Refusal(ErrorCode.GAME_OVER, "the game is already over")
        if self.status != "playing":
            raise Refusal(ErrorCode.NOT_ALLOWED, "the game has not started yet")
        return self._finish_by(seat.index, "resign")

    def _finish_by(self, loser: int, reason: str) -> Outbox:
        """End the game against `loser` (resignation, forfeit) and announce it."""
        winners = tuple(s.index for s in self.seats if s.index != loser)
        outcome = Outcome(winners, reason)
        self._finish(outcome)
        self.seq += 1
        out = Outbox(changed=True)
        out.send(self.audience(), self.snapshot())
        return out.extend(self._broadcast_event("game_over", {**outcome.to_wire(), "loser": loser}))

    def _finish(self, outcome: Outcome) -> None:
        """Record the end of the game."""
        self.result = outcome
        self.status = "finished"
        self.pending.clear()
        self.games_played += 1

    def rematch(self, session: str) -> Outbox:
        """A player asks for another game; once every human seat asked, it starts with seats rotated."""
        seat = self.seat_of(session)
        if seat is None:
            raise Refusal(ErrorCode.NOT_IN_ROOM, f"you have no seat in room {self.code}")
        if self.status != "finished":
            raise Refusal(ErrorCode.NOT_ALLOWED, "a rematch can only follow a finished game")
        self.rematch_votes.add(seat.index)
        humans = {s.index for s in self.seats if s.ai is None}
        out = self._broadcast_event("rematch", {"seat": seat.index, "votes": sorted(self.rematch_votes)})
        if not humans <= self.rematch_votes:
            return out
        self._rotate_seats()
        return out.extend(self.start_game())

    def _rotate_seats(self) -> None:
        """Move every occupant one seat on, so colours (and who starts) alternate between games."""
        occupants = [(s.session, s.player, s.ai, s.connected) for s in self.seats]
        occupants = occupants[-1:] + occupants[:-1]
        for seat, (session, player, ai, connected) in zip(self.seats, occupants, strict=True):
            seat.session, seat.player, seat.ai, seat.connected = session, player, ai, connected

    def chat(self, session: str, name: str, text: str) -> Outbox:
        """Relay a chat line to the room."""
        if not self.is_member(session):
            raise Refusal(ErrorCode.NOT_IN_ROOM, f"you are not in room {self.code}")
        seat = self.seat_of(session)
        return self._broadcast_event("chat", {"name": name, "seat": seat.index if seat else None, "text": text})

    # -- messages ----------------------------------------------------------------------------------------
    def _broadcast_event(self, kind: str, data: dict[str, Any]) -> Outbox:
        """Send an event (stamped with the current seq) to the audience and keep it for `sync`."""
        event = Event(room=self.code, kind=kind, seq=self.seq, data=data)
        self.events.append(event)
        out = Outbox()
        out.send(self.audience(), event)
        return out

    def snapshot(self) -> State:
        """The full state message: everything a client needs to draw the game."""
        to_move = sorted(self.game.to_move(self.state)) if self.status == "playing" else []
        legal: list[str] = []
        if to_move:
            seat = to_move[0]
            legal = [self._format_legal(m) for m in self.game.legal_moves(self.state, seat)]
        return State(
            room=self.code, seq=self.seq, game=self.game.name, status=self.status,
            view=self.game.view(self.state), to_move=to_move, legal=legal, last_move=self.last_move,
            moves=[] if self.game.simultaneous else list(self.moves),
            result=self.result.to_wire() if self.result else None,
            next_tick_ms=self.tick_ms if self.game.simultaneous and self.status == "playing" else None,
        )

    def _format_legal(self, move: Any) -> str:
        """A legal move in wire form."""
        return self.game.format_move(self.state, move)

    def events_since(self, seq: int) -> list[Event] | None:
        """The kept events after `seq`, or None if some of them are no longer kept."""
        if seq > self.seq:
            return None
        newer = [e for e in self.events if e.seq > seq]
        oldest_kept = self.events[0].seq if self.events else self.seq + 1
        if seq + 1 < oldest_kept and self.seq > seq:
            return None
        return newer
