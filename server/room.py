"""One room: its seats, its audience and its game, as a sans-I/O state machine.

A room never touches the network, the disk or the clock. Every method takes what happened (a
request, a tick, an AI's answer, the current time) and returns an `Outbox`: the messages to send and
to whom, the records to store first, and the effects the I/O layer must carry out (ask an AI, start a
tick clock). So the whole referee is testable without sockets, and the network layer only delivers.

Request guards run in a fixed order (membership -> seat -> game over -> turn -> duplicate -> stale ->
legal) and each refusal is a `Refusal` with a stable code; a refused request never changes the room.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from gamenight.protocol.errors import ErrorCode
from gamenight.protocol.messages import Event, Joined, Message, RoomInfo, State, Tick
from gamenight.server.ai.play import fallback_move
from gamenight.server.games.base import Game, GameError, Outcome
from gamenight.server.store import GameFinished, GameStarted, MoveRecorded, Record, RoomSaved, SeatSaved

EVENT_HISTORY = 256  # events kept per room for `sync`
AI_TICK_MARGIN_MS = 40  # a live game's AI must answer this long before the tick


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


@dataclass(frozen=True, slots=True)
class Member:
    """A person as rooms know them: their session, display name and the hash of their resume token."""

    session: str
    name: str
    token_hash: str


@dataclass(slots=True)
class Seat:
    """One seat of a room: empty, a human's (by session id) or an AI's."""

    index: int
    label: str
    holder: Member | None = None
    ai: AiSpec | None = None
    connected: bool = False
    dropped_at: float | None = None  # when a human's connection was lost
    stand_in: AiSpec | None = None  # an AI playing for a dropped human (policy "ai")
    last_move_id: int | None = None  # request id of the holder's last applied move, to drop re-sends

    @property
    def session(self) -> str | None:
        """The holder's session id, if a person sits here."""
        return self.holder.session if self.holder else None

    @property
    def free(self) -> bool:
        """True when nobody, human or AI, sits here."""
        return self.holder is None and self.ai is None

    @property
    def player(self) -> AiSpec | None:
        """The AI that moves for this seat now (its own, or a stand-in), if any."""
        return self.ai or self.stand_in

    def summary(self) -> dict[str, Any]:
        """The seat as shown in the lobby and the room summary."""
        kind = "open" if self.free else ("ai" if self.ai else "human")
        return {
            "seat": self.index,
            "label": self.label,
            "kind": kind,
            "name": self.ai.label if self.ai else (self.holder.name if self.holder else None),
            "level": self.ai.level if self.ai else None,
            "bot": self.ai.bot if self.ai else None,
            "connected": True if self.ai else self.connected,
            "stand_in": self.stand_in.label if self.stand_in else None,
        }

    def record(self, code: str) -> SeatSaved:
        """The seat as stored, so a restart gives it back to the same person."""
        return SeatSaved(code, self.index, self.holder.name if self.holder else None,
                         self.holder.token_hash if self.holder else None,
                         self.ai.level if self.ai else None, self.ai.bot if self.ai else None)


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
    """What a room wants done: records to store, then messages to send, then effects to run."""

    sends: list[Send] = field(default_factory=list)
    effects: list[Any] = field(default_factory=list)
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


class Room:
    """A room's referee: seats, spectators, the running game and its history."""

    def __init__(self, code: str, game: Game, options: dict[str, Any], room_options: dict[str, Any],
                 host: str, host_name: str, private: bool = False) -> None:
        self.code = code
        self.game = game
        self.options = options  # the game's own, passed to its rules
        self.room_options = room_options  # ai_ms, ai_pace_ms, ai_level, on_disconnect, grace_s
        self.host = host
        self.host_name = host_name
        self.private = private
        labels = game.seat_names(options)
        self.seats = [Seat(i, labels[i]) for i in range(game.seat_count(options))]
        self.spectators: set[str] = set()
        self.status = "waiting"  # -> playing <-> paused -> finished -> (rematch) playing
        self.state: Any = None
        self.seq = 0
        self.game_no = 0
        self.moves: list[str] = []
        self.last_move: str | None = None
        self.result: Outcome | None = None
        self.events: deque[Event] = deque(maxlen=EVENT_HISTORY)
        self.pending: dict[int, Any] = {}  # simultaneous games: each seat's latest move this tick
        self.retiring: dict[int, Any] = {}  # simultaneous games: seats that resigned, with their retire move
        self.rematch_votes: set[int] = set()
        self.empty_since: float | None = None

    def saved(self) -> RoomSaved:
        """The record that stores this room's settings."""
        return RoomSaved(self.code, self.game.name, self.options, self.room_options, self.host_name, self.private)

    # -- who is here ---------------------------------------------------------------------------
    def audience(self) -> set[str]:
        """Every session that receives this room's states and events."""
        seated = {s.holder.session for s in self.seats if s.holder is not None and s.connected}
        return seated | self.spectators

    def seat_of(self, session: str) -> Seat | None:
        """The seat `session` holds here, if any."""
        return next((s for s in self.seats if s.session == session), None)

    def is_member(self, session: str) -> bool:
        """True if `session` holds a seat or watches."""
        return session in self.spectators or self.seat_of(session) is not None

    def occupied(self) -> bool:
        """True while any person is connected to the room."""
        return bool(self.spectators) or any(s.holder is not None and s.connected for s in self.seats)

    def summary(self) -> RoomInfo:
        """The room as the lobby lists it."""
        return RoomInfo(
            room=self.code, game=self.game.name, options={**self.options, **self.room_options},
            seats=[s.summary() for s in self.seats], spectators=len(self.spectators),
            status=self.status, private=self.private, host=self.host_name,
        )

    # -- joining and leaving ---------------------------------------------------------------------
    def join(self, member: Member, role: str, seat: int | None, request_id: int | None) -> Outbox:
        """Seat a player (any free seat, or the one asked for) or add a spectator."""
        out = Outbox()
        if role == "spectator":
            self._require_not_seated(member.session)
            self.spectators.add(member.session)
            out.changed = True
            return out.extend(self._welcome_member(member.session, None, role, request_id))
        if role != "player":
            raise Refusal(ErrorCode.BAD_MESSAGE, "'as' must be 'player' or 'spectator'")
        mine = self.seat_of(member.session)
        if mine is not None and (seat is None or seat == mine.index):
            return out.extend(self._welcome_member(member.session, mine.index, role, request_id))
        if self.status != "waiting":
            raise Refusal(ErrorCode.ROOM_FULL, "the game has already started; join as a spectator")
        target = self._free_seat(seat)
        if mine is not None:
            self._vacate(mine, out)
        self.spectators.discard(member.session)
        target.holder, target.connected = member, True
        out.records.append(target.record(self.code))
        out.changed = True
        out.extend(self._welcome_member(member.session, target.index, role, request_id))
        out.extend(self._event("joined", {"seat": target.index, "name": member.name}))
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

    def _vacate(self, seat: Seat, out: Outbox) -> None:
        """Empty a human's seat and store that."""
        seat.holder, seat.connected, seat.dropped_at, seat.stand_in = None, False, None, None
        self.rematch_votes.discard(seat.index)
        out.records.append(seat.record(self.code))

    def _welcome_member(self, session: str, seat: int | None, role: str, request_id: int | None) -> Outbox:
        """Reply to a join: which seat, then the full state if a game exists."""
        out = Outbox()
        out.send({session}, Joined(room=self.code, role=role, seat=seat, id=request_id))
        if self.state is not None:
            out.send({session}, self.snapshot())
        return out

    def leave(self, session: str) -> Outbox:
        """A member leaves for good: a seated player in a running game resigns it first."""
        out = Outbox(changed=True)
        mine = self.seat_of(session)
        if mine is None and session not in self.spectators:
            raise Refusal(ErrorCode.NOT_IN_ROOM, f"you are not in room {self.code}")
        self.spectators.discard(session)
        if mine is not None:
            if self.status in ("playing", "paused"):
                out.extend(self._concede(mine.index, "resign"))
            self._vacate(mine, out)
            out.extend(self._event("left", {"seat": mine.index}))
        return out

    def disconnect(self, session: str, now: float) -> Outbox:
        """A member's connection dropped: spectating ends; a seat is handled by the room's policy."""
        out = Outbox()
        if session in self.spectators:
            self.spectators.discard(session)
            out.changed = True
        mine = self.seat_of(session)
        if mine is None or not mine.connected:
            return out
        mine.connected, mine.dropped_at = False, now
        out.changed = True
        out.extend(self._event("left", {"seat": mine.index, "connection": "lost"}))
        if self.status != "playing":
            return out
        policy = self.room_options["on_disconnect"]
        if policy == "ai":
            mine.stand_in = AiSpec(level=self.room_options["ai_level"])
            out.extend(self._ai_turns())
        elif self.game.simultaneous and policy == "wait":
            out.extend(self._pause())
        return out

    def reconnect(self, session: str) -> Outbox:
        """A seat's owner is back (resume): hand the seat back and send them the full state."""
        mine = self.seat_of(session)
        if mine is None:
            return Outbox()
        mine.connected, mine.dropped_at, mine.stand_in = True, None, None
        out = Outbox(changed=True)
        out.extend(self._welcome_member(session, mine.index, "player", None))
        out.extend(self._event("joined", {"seat": mine.index, "name": mine.holder.name, "resumed": True}))
        if self.status == "paused" and self._everyone_back():
            out.extend(self._resume_clock())
        return out

    def _everyone_back(self) -> bool:
        """True when every human seat is connected again."""
        return all(s.connected for s in self.seats if s.holder is not None)

    def _pause(self) -> Outbox:
        """Stop a live game's clock until its players are back."""
        self.status = "paused"
        self.pending.clear()
        self.seq += 1
        out = Outbox(changed=True)
        out.send(self.audience(), self.snapshot())
        return out

    def _resume_clock(self) -> Outbox:
        """Restart a paused live game after a countdown."""
        self.status = "playing"
        self.seq += 1
        out = Outbox(changed=True)
        out.send(self.audience(), self.snapshot(next_tick_ms=self.countdown_ms))
        out.effects.append(StartClock(self.code, self.countdown_ms, self.tick_ms))
        return out.extend(self._ai_turns())

    def expire(self, now: float) -> Outbox:
        """Forfeit seats whose players stayed away longer than the grace period (policy "forfeit")."""
        if self.status != "playing" or self.room_options["on_disconnect"] != "forfeit":
            return Outbox()
        grace = self.room_options["grace_s"]
        for seat in self.seats:
            if seat.holder is not None and not seat.connected and seat.dropped_at is not None \
                    and now - seat.dropped_at >= grace and seat.index in self.game.to_move(self.state) \
                    and seat.index not in self.retiring:
                return self._concede(seat.index, "forfeit")
        return Outbox()

    # -- AI seats -------------------------------------------------------------------------------------
    def add_ai(self, session: str, seat: int | None, ai: AiSpec) -> Outbox:
        """Host only: seat an AI in a free seat while the game waits for players."""
        self._require_host(session, "add an AI")
        if self.status != "waiting":
            raise Refusal(ErrorCode.NOT_ALLOWED, "AIs can only be seated before the game starts")
        target = self._free_seat(seat)
        target.ai, target.connected = ai, True
        out = Outbox(changed=True)
        out.records.append(target.record(self.code))
        out.extend(self._event("joined", {"seat": target.index, "name": ai.label, "ai": True}))
        return out.extend(self._start_if_full())

    def remove_ai(self, session: str, seat: int) -> Outbox:
        """Host only: free an AI's seat while the game waits."""
        self._require_host(session, "remove an AI")
        if self.status != "waiting":
            raise Refusal(ErrorCode.NOT_ALLOWED, "AIs can only be removed before the game starts")
        if not 0 <= seat < len(self.seats) or self.seats[seat].ai is None:
            raise Refusal(ErrorCode.NOT_ALLOWED, f"seat {seat} has no AI")
        self.seats[seat].ai, self.seats[seat].connected = None, False
        out = Outbox(changed=True)
        out.records.append(self.seats[seat].record(self.code))
        return out.extend(self._event("left", {"seat": seat, "ai": True}))

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
        self.retiring.clear()
        self.rematch_votes.clear()
        self.game_no += 1
        self.seq += 1
        out = Outbox(changed=True)
        out.records.append(GameStarted(self.code, self.game_no))
        if self.game.simultaneous:
            out.send(self.audience(), self.snapshot(next_tick_ms=self.countdown_ms))
            out.effects.append(StartClock(self.code, self.countdown_ms, self.tick_ms))
        else:
            out.send(self.audience(), self.snapshot())
        return out.extend(self._ai_turns())

    def ai_pace_ms(self) -> int:
        """Least time between AI moves: the room's option when someone watches, else none."""
        return int(self.room_options["ai_pace_ms"]) if self.occupied() else 0

    @property
    def countdown_ms(self) -> int:
        """The pause before a live game starts or resumes, so players can find their keys."""
        return int(self.room_options["countdown_ms"])

    @property
    def tick_ms(self) -> int:
        """The live game's tick length, clamped to a playable range."""
        return max(50, min(2000, int(self.options.get("tick_ms", 150))))

    def move(self, session: str, text: Any, seq: int | None, request_id: int | None = None) -> Outbox:
        """A player's move, checked by the guards in order, then applied and announced."""
        seat = self._seat_for_move(session)
        if request_id is not None and request_id == seat.last_move_id:
            out = Outbox()  # a re-send after a reconnect: already applied, just show where we are
            out.send({session}, self.snapshot())
            return out
        self._check_turn(seat)
        if seq is not None and seq != self.seq:
            raise Refusal(ErrorCode.STALE, f"that move was made on state {seq}; the room is at {self.seq}")
        move = self._parse(text)
        if self.game.simultaneous:
            if seat.index in self.retiring:
                raise Refusal(ErrorCode.NOT_ALLOWED, "you resigned: your cycle stops on the next tick")
            self.pending[seat.index] = move
            return Outbox()
        out = self._apply({seat.index: move}, {})
        seat.last_move_id = request_id
        return out

    def _seat_for_move(self, session: str) -> Seat:
        """The seat `session` moves for, after the membership and game-over guards."""
        seat = self.seat_of(session)
        if seat is None:
            if session in self.spectators:
                raise Refusal(ErrorCode.NOT_ALLOWED, "spectators cannot move")
            raise Refusal(ErrorCode.NOT_IN_ROOM, f"you have no seat in room {self.code}")
        if self.status == "finished":
            raise Refusal(ErrorCode.GAME_OVER, "the game is over; ask for a rematch or leave")
        return seat

    def _check_turn(self, seat: Seat) -> None:
        """Refuse a move when the game is not running or it is not this seat's turn."""
        if self.status == "paused":
            raise Refusal(ErrorCode.NOT_ALLOWED, "the game is paused until every player is back")
        if self.status != "playing":
            raise Refusal(ErrorCode.NOT_ALLOWED, "the game has not started yet")
        if seat.index not in self.game.to_move(self.state):
            raise Refusal(ErrorCode.NOT_YOUR_TURN, f"it is not {seat.label}'s turn")

    def _parse(self, text: Any) -> Any:
        """Parse a wire move, turning the game's complaint into an illegal_move refusal."""
        try:
            return self.game.parse_move(self.state, text)
        except GameError as exc:
            raise Refusal(ErrorCode.ILLEGAL_MOVE, str(exc)) from None

    def _apply(self, moves: dict[int, Any], ai_info: dict[int, dict[str, Any]]) -> Outbox:
        """Apply one move (or one tick's joint move): store it, then announce events, state, maybe the end."""
        before = self.state
        try:
            after = self.game.apply(before, moves)
        except GameError as exc:
            raise Refusal(ErrorCode.ILLEGAL_MOVE, str(exc)) from None
        notation = self.notation(before, moves)
        self.state, self.last_move = after, notation
        self.moves.append(notation)
        self.seq += 1
        out = Outbox()
        out.records.append(MoveRecorded(self.code, self.game_no, len(self.moves) - 1, notation))
        if not self.game.simultaneous:
            ((seat, _),) = moves.items()
            data: dict[str, Any] = {"seat": seat, "move": notation}
            if seat in ai_info:
                data["ai"] = ai_info[seat]
            out.extend(self._event("move", data))
        for notice in self.game.notices(before, after):
            out.extend(self._event(notice.kind, notice.data))
        outcome = self.game.outcome(after)
        if outcome is not None:
            out.extend(self._finish(outcome))
        out.extend(self._announce_state(before))
        if outcome is not None:
            out.extend(self._event("game_over", outcome.to_wire()))
        return out.extend(self._ai_turns())

    def notation(self, before: Any, moves: dict[int, Any]) -> str:
        """The stored form of a move, or of a whole tick for simultaneous games."""
        if self.game.simultaneous:
            return self.game.format_joint(moves, len(self.seats))  # type: ignore[attr-defined]
        ((_, move),) = moves.items()
        return self.game.format_move(before, move)

    def replay(self, notation: str) -> None:
        """Re-apply a stored move while restoring a room (no messages: nobody is connected yet)."""
        if self.game.simultaneous:
            moves = self.game.parse_joint(self.state, notation)  # type: ignore[attr-defined]
        else:
            (seat,) = self.game.to_move(self.state)
            moves = {seat: self.game.parse_move(self.state, notation)}
        self.state = self.game.apply(self.state, moves)
        self.moves.append(notation)
        self.last_move = notation
        self.seq += 1

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
        riding = sorted(self.game.to_move(self.state))
        chosen = {seat: self.retiring.get(seat, self.pending.get(seat)) for seat in riding}
        moves = {seat: self._unsent(seat) if move is None else move for seat, move in chosen.items()}
        self.pending.clear()
        self.retiring.clear()
        return self._apply(moves, {})

    def _unsent(self, seat: int) -> Any:
        """The move of a seat that sent nothing this tick: a human keeps going; a late AI takes the safe way."""
        if self.seats[seat].player is None:
            return self.game.default_move(self.state, seat)
        return self.game.parse_move(self.state, fallback_move(self.game.name, self.state, seat))

    def ai_moved(self, seat: int, seq: int, text: str, info: dict[str, Any]) -> Outbox:
        """An AI's answer arrived: apply it if the position is still the one it was asked about."""
        if self.status != "playing" or seq != self.seq or self.seats[seat].player is None:
            return Outbox()
        if self.game.simultaneous:
            if seat not in self.retiring:
                self.pending[seat] = self._parse(text)
            return Outbox()
        return self._apply({seat: self._parse(text)}, {seat: info})

    def _ai_turns(self) -> Outbox:
        """Ask for a move from every AI (or stand-in) seat that must move now."""
        out = Outbox()
        if self.status != "playing":
            return out
        for index in sorted(self.game.to_move(self.state)):
            ai = self.seats[index].player
            if ai is not None:
                budget = (self.tick_ms - AI_TICK_MARGIN_MS if self.game.simultaneous
                          else int(self.room_options["ai_ms"]))
                out.effects.append(AiTurn(self.code, index, self.seq, self.game.name, self.state, ai, budget))
        return out

    def resign(self, session: str) -> Outbox:
        """A player concedes: the game ends (the other seats share the win) or, in a live game of three or more,
        the player's rider drops out and the others play on."""
        seat = self.seat_of(session)
        if seat is None:
            raise Refusal(ErrorCode.NOT_IN_ROOM, f"you have no seat in room {self.code}")
        if self.status == "finished":
            raise Refusal(ErrorCode.GAME_OVER, "the game is already over")
        if self.status == "waiting":
            raise Refusal(ErrorCode.NOT_ALLOWED, "the game has not started yet")
        if self.game.simultaneous and seat.index not in self.game.to_move(self.state):
            raise Refusal(ErrorCode.NOT_ALLOWED, "your cycle is already out; the others ride on")
        return self._concede(seat.index, "resign")

    def _concede(self, seat: int, reason: str) -> Outbox:
        """`seat` gives up: in a live game that plays on without it, its rider stops on the next tick; else it ends.

        The retire move goes into that tick's joint move, so the log (and a restored game) has it.
        """
        if self.game.simultaneous and seat not in self.game.to_move(self.state):
            return Outbox()  # already out (crashed earlier): there is nothing left to concede
        retire = self.game.retire_move(self.state, seat) if self.game.simultaneous else None
        if retire is None:
            return self._finish_by(seat, reason)
        self.retiring[seat] = retire
        return self._event("retired", {"seat": seat, "reason": reason})

    def _finish_by(self, loser: int, reason: str) -> Outbox:
        """End the game against `loser` (resignation, forfeit) and announce it."""
        outcome = Outcome(tuple(s.index for s in self.seats if s.index != loser), reason)
        self.seq += 1
        out = self._finish(outcome)
        out.send(self.audience(), self.snapshot())
        return out.extend(self._event("game_over", {**outcome.to_wire(), "loser": loser}))

    def _finish(self, outcome: Outcome) -> Outbox:
        """Record the end of the game, for the room and for the history."""
        self.result = outcome
        self.status = "finished"
        self.pending.clear()
        self.retiring.clear()
        players = [{"seat": s.index, "label": s.label, "name": s.summary()["name"], "ai": s.ai is not None}
                   for s in self.seats]
        out = Outbox(changed=True)
        out.records.append(GameFinished(self.code, self.game_no, self.game.name, self.options, players,
                                        outcome.to_wire(), list(self.moves), self.game.transcript(self.moves)))
        return out

    def rematch(self, session: str) -> Outbox:
        """A player asks for another game; once every seated human asked, it starts with seats rotated.

        If someone left after the game, the rotated room waits for a new player instead.
        """
        seat = self.seat_of(session)
        if seat is None and session != self.host:
            raise Refusal(ErrorCode.NOT_IN_ROOM, f"you have no seat in room {self.code}")
        if self.status != "finished":
            raise Refusal(ErrorCode.NOT_ALLOWED, "a rematch can only follow a finished game")
        if seat is not None:
            self.rematch_votes.add(seat.index)
        humans = {s.index for s in self.seats if s.holder is not None}
        out = self._event("rematch", {"seat": seat.index if seat else None, "votes": sorted(self.rematch_votes)})
        if not humans <= self.rematch_votes:
            return out
        self._rotate_seats(out)
        for seat in self.seats:  # everyone learns their new seat before the new game's state
            if seat.holder is not None and seat.connected:
                out.send({seat.holder.session}, Joined(room=self.code, role="player", seat=seat.index))
        if any(s.free for s in self.seats):
            self.status, self.rematch_votes = "waiting", set()
            out.changed = True
            return out
        return out.extend(self.start_game())

    def _rotate_seats(self, out: Outbox) -> None:
        """Move every occupant one seat on, so colours (and who starts) alternate between games."""
        occupants = [(s.holder, s.ai, s.connected, s.dropped_at) for s in self.seats]
        occupants = occupants[-1:] + occupants[:-1]
        for seat, (holder, ai, connected, dropped_at) in zip(self.seats, occupants, strict=True):
            seat.holder, seat.ai, seat.connected, seat.dropped_at = holder, ai, connected, dropped_at
            seat.stand_in, seat.last_move_id = None, None
            out.records.append(seat.record(self.code))

    def chat(self, session: str, name: str, text: str) -> Outbox:
        """Relay a chat line to the room."""
        if not self.is_member(session):
            raise Refusal(ErrorCode.NOT_IN_ROOM, f"you are not in room {self.code}")
        seat = self.seat_of(session)
        return self._event("chat", {"name": name, "seat": seat.index if seat else None, "text": text})

    # -- messages ----------------------------------------------------------------------------------------
    def _event(self, kind: str, data: dict[str, Any]) -> Outbox:
        """Send an event (stamped with the current seq) to the audience and keep it for `sync`."""
        event = Event(room=self.code, kind=kind, seq=self.seq, data=data)
        self.events.append(event)
        out = Outbox()
        out.send(self.audience(), event)
        return out

    def snapshot(self, next_tick_ms: int | None = None) -> State:
        """The full state message: everything a client needs to draw the game."""
        to_move = sorted(self.game.to_move(self.state)) if self.status == "playing" else []
        legal: list[str] = []
        if to_move:
            legal = self.game.legal_notation(self.state, to_move[0])
        if next_tick_ms is None and self.game.simultaneous and self.status == "playing":
            next_tick_ms = self.tick_ms
        return State(
            room=self.code, seq=self.seq, game=self.game.name, status=self.status,
            view=self.game.view(self.state), to_move=to_move, legal=legal, last_move=self.last_move,
            moves=[] if self.game.simultaneous else list(self.moves),
            result=self.result.to_wire() if self.result else None, next_tick_ms=next_tick_ms,
        )

    def events_since(self, seq: int) -> list[Event] | None:
        """The kept events after `seq`, or None when some of them are no longer kept."""
        if seq > self.seq:
            return None
        if self.events and self.events[0].seq > seq + 1 and len(self.events) == self.events.maxlen:
            return None
        return [e for e in self.events if e.seq > seq]
