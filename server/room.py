"""One room: its seats, its audience and its game, as a sans-I/O state machine.

A room never touches the network, the disk or the clock. Every method takes what happened (a
request, a tick, an AI's answer, the current time) and returns an `Outbox`: the messages to send and
to whom, the records to store first, and the effects the I/O layer must carry out (ask an AI, start a
tick clock). So the whole referee is testable without sockets, and the network layer only delivers.

The room is split along what varies: how its game advances is its `Driver` (turns or ticks, chosen once
from the game), what a dropped seat means is its `DisconnectPolicy`; the room keeps what every game shares.

Everything that changes the room's status goes through `set_status`, which checks this table:

    waiting  -> playing (the last seat filled), paused | finished (only while restoring)
    playing  -> paused (a live game's player dropped), finished
    paused   -> playing (everyone back), finished
    finished -> playing (rematch), waiting (rematch with a seat left empty)
    any      -> closed (the lobby closes the room)

A move's guards run in a fixed order (membership -> seat -> duplicate -> game over -> turn -> stale ->
legal) and each refusal is a `Refusal` with a stable code; a refused request never changes the room.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from gamenight.protocol.errors import ErrorCode
from gamenight.protocol.messages import Event, Joined, RoomInfo, State
from gamenight.protocol.vocab import (
    EndReason,
    EventKind,
    EventNote,
    RatingChange,
    Result,
    Role,
    RoomStatus,
    RoomSummary,
    SeatKind,
    SeatSummary,
    in_opening,
)
from gamenight.server.clock import Charge
from gamenight.server.drivers import Driver
from gamenight.server.games.base import Game, GameError
from gamenight.server.outbox import AiSpec, AiTurn, Member, Outbox, Refusal, Send, StartClock
from gamenight.server.policies import POLICIES, DisconnectPolicy
from gamenight.server.records import (
    GameFinished,
    GameStarted,
    MoveRecorded,
    RoomSaved,
    SeatRated,
    SeatSaved,
    StoredRoom,
)

Rater = Callable[["Room", Result], tuple[tuple[RatingChange, ...], tuple[SeatRated, ...]]]
"""Rates a finished game (server/rated.py `RatingBook.rate`): the changes players see and the ones stored."""
TournamentOf = Callable[[str], str | None]
"""The tournament whose game the room with this code plays, if any (the lobby asks its tournament host)."""


def _no_tournament(code: str) -> str | None:
    """A room on its own plays for no tournament."""
    return None


def _rated_alike(room: Room) -> str | None:
    """A room on its own rates every rated game it plays."""
    return None


__all__ = ["AiSpec", "AiTurn", "Member", "Outbox", "Refusal", "Room", "Seat", "Send", "StartClock"]

W, PL, PA, F, C = (RoomStatus.WAITING, RoomStatus.PLAYING, RoomStatus.PAUSED, RoomStatus.FINISHED, RoomStatus.CLOSED)
TRANSITIONS: dict[RoomStatus, frozenset[RoomStatus]] = {
    W: frozenset({PL, PA, F, C}),
    PL: frozenset({PA, F, C}),
    PA: frozenset({PL, F, C}),
    F: frozenset({PL, W, C}),
    C: frozenset(),
}
"""The status changes a room may make (the table in the module's docstring)."""
RUNNING = frozenset({PL, PA})
"""Statuses of a game under way."""
CHAT_BACKLOG = 30  # the room's latest chat lines a joiner gets after its state (`event chat` marked `earlier`)


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

    @property
    def name(self) -> str | None:
        """Who sits here as people see it: the AI's label or the person's name."""
        return self.ai.label if self.ai else (self.holder.name if self.holder else None)

    def summary(self) -> SeatSummary:
        """The seat as shown in the lobby and the room summary."""
        kind = SeatKind.OPEN if self.free else (SeatKind.AI if self.ai else SeatKind.HUMAN)
        if self.holder is not None and self.holder.bot:
            kind = SeatKind.BOT
        return SeatSummary(
            seat=self.index,
            label=self.label,
            kind=kind,
            name=self.name,
            level=self.ai.level if self.ai else None,
            bot=self.ai.bot if self.ai else None,
            connected=True if self.ai else self.connected,
            stand_in=self.stand_in.label if self.stand_in else None,
        )

    def record(self, code: str) -> SeatSaved:
        """The seat as stored, so a restart gives it back to the same person."""
        return SeatSaved(
            code,
            self.index,
            self.holder.name if self.holder else None,
            self.holder.token_hash if self.holder else None,
            self.ai.level if self.ai else None,
            self.ai.bot if self.ai else None,
            bool(self.holder and self.holder.bot),
        )


class Room:
    """A room's referee: seats, spectators, the running game and its history."""

    def __init__(
        self,
        code: str,
        game: Game[Any, Any],
        options: dict[str, Any],
        room_options: dict[str, Any],
        host: str,
        host_name: str,
        private: bool = False,
    ) -> None:
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
        self.status = RoomStatus.WAITING
        self.state: Any = None
        self.seq = 0
        self.game_no = 0
        self.moves: list[str] = []
        self.movers: list[int] = []  # who made each of `moves` (-1: a joint move of a simultaneous game)
        self.last_move: str | None = None
        self.result: Result | None = None
        self.rematch_votes: set[int] = set()
        self.empty_since: float | None = None
        self.now = 0.0  # when the request being handled arrived (monotonic seconds), stamped by the lobby
        self.driver = Driver.for_game(self, game)
        self.rater: Rater | None = None  # set by the lobby; rates the games of a room with option `rated`
        self.vetter: Callable[[Room], str | None] = _rated_alike  # set by the lobby: why a rated game rates nobody
        self.unrated: str | None = None  # why the rated game being played rates nobody (None: it is rated)
        self.tournament_of: TournamentOf = _no_tournament  # set by the lobby
        self.started_with: list[tuple[Member | None, AiSpec | None]] = []  # who sat where when the game began
        self.chat_backlog: deque[dict[str, Any]] = deque(maxlen=CHAT_BACKLOG)  # the latest chat lines' data

    @property
    def tournament(self) -> str | None:
        """The tournament this room's game is played for: its games are never aborted (as lichess's mandatory
        games), and one that ends in its opening keeps its result for the standings (unrated all the same)."""
        return self.tournament_of(self.code)

    def in_opening(self) -> bool:
        """True while some seat has made fewer moves than the game's opening asks (`Driver.opening_moves`)."""
        return in_opening(self.driver.moves_made(), self.driver.opening_moves)

    @property
    def policy(self) -> DisconnectPolicy:
        """What a dropped seat means in this room (the `on_disconnect` option)."""
        return POLICIES[self.room_options.get("on_disconnect", "wait")]

    def set_status(self, status: RoomStatus) -> None:
        """The one place the status changes; a change the transition table does not allow is a bug."""
        if status not in TRANSITIONS[self.status]:
            raise AssertionError(f"room {self.code}: no transition {self.status} -> {status}")
        self.status = status

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
        for seat in self.seats:  # a plain loop: asked on every move, where a generator costs more than the search
            if seat.holder is not None and seat.holder.session == session:
                return seat
        return None

    def is_member(self, session: str) -> bool:
        """True if `session` holds a seat or watches."""
        return session in self.spectators or self.seat_of(session) is not None

    def occupied(self) -> bool:
        """True while any person is connected to the room."""
        return bool(self.spectators) or any(s.holder is not None and s.connected for s in self.seats)

    def summary(self) -> RoomSummary:
        """The room as the lobby lists it."""
        return RoomSummary(
            room=self.code,
            game=self.game.name,
            options={**self.options, **self.room_options},
            seats=tuple(s.summary() for s in self.seats),
            spectators=len(self.spectators),
            status=self.status,
            private=self.private,
            host=self.host_name,
            tournament=self.tournament,
        )

    def info(self, request_id: int | None = None) -> RoomInfo:
        """The `room` message: the summary pushed to the lobby, or the reply to a request."""
        return RoomInfo.of(self.summary(), request_id)

    # -- joining and leaving ---------------------------------------------------------------------
    def join(self, member: Member, role: Role, seat: int | None, request_id: int | None) -> Outbox:
        """Seat a player (any free seat, or the one asked for) or add a spectator."""
        out = Outbox()
        if role == Role.SPECTATOR:
            self._require_not_seated(member.session)
            self.spectators.add(member.session)
            out.changed = True
            return out.extend(self._welcome_member(member.session, None, role, request_id))
        self._require_seat_in_range(seat)  # a malformed request, whatever the room's state
        mine = self.seat_of(member.session)
        if mine is not None and (seat is None or seat == mine.index):
            return out.extend(self._welcome_member(member.session, mine.index, role, request_id))
        if self.status != RoomStatus.WAITING:
            raise Refusal(ErrorCode.ROOM_FULL, "the game has already started; join as a spectator")
        self._require_claimed(member)
        target = self._free_seat(seat)
        if mine is not None:
            self._vacate(mine, out)
        self.spectators.discard(member.session)
        target.holder, target.connected = member, True
        out.records.append(target.record(self.code))
        out.changed = True
        out.extend(self._welcome_member(member.session, target.index, role, request_id))
        out.extend(self.event(EventKind.JOINED, {"seat": target.index, "name": member.name}))
        return out.extend(self._start_if_full())

    @property
    def rated(self) -> bool:
        """True for a room whose games are rated (the `rated` option)."""
        return bool(self.room_options.get("rated"))

    def _require_claimed(self, member: Member) -> None:
        """Rated games are for claimed players only: a guest cannot take a seat in one."""
        if self.rated and not member.claimed:
            raise Refusal(
                ErrorCode.NOT_ALLOWED,
                "rated games are for claimed players: connect with a key to claim your name (guests play unrated)",
            )

    def _require_not_seated(self, session: str) -> None:
        """A seated player cannot also watch; they already see everything."""
        if self.seat_of(session) is not None:
            raise Refusal(ErrorCode.NOT_ALLOWED, "you hold a seat here; leave it first to watch")

    def _require_seat_in_range(self, seat: int | None) -> None:
        """Refuse a seat number this room does not have (`bad_message`: the request is malformed)."""
        if seat is not None and not 0 <= seat < len(self.seats):
            raise Refusal(ErrorCode.BAD_MESSAGE, f"seat must be 0..{len(self.seats) - 1}")

    def _free_seat(self, seat: int | None) -> Seat:
        """The seat to give a joining player, or a refusal saying why there is none."""
        if seat is not None:
            self._require_seat_in_range(seat)
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

    def _welcome_member(self, session: str, seat: int | None, role: Role, request_id: int | None) -> Outbox:
        """Reply to a join: which seat, then the full state if a game exists, then the room's latest chat lines."""
        out = Outbox()
        out.send({session}, Joined(room=self.code, role=role, seat=seat, id=request_id, game=self.game.name))
        if self.state is not None:
            out.send({session}, self.snapshot(viewer=session))
        for data in self.chat_backlog:  # what was said before this member came (or came back), at the current seq
            out.send({session}, Event(room=self.code, kind=EventKind.CHAT, seq=self.seq, data=data))
        return out

    def leave(self, session: str) -> Outbox:
        """A member leaves for good: a seated player in a running game resigns it first."""
        out = Outbox(changed=True)
        mine = self.seat_of(session)
        if mine is None and session not in self.spectators:
            raise Refusal(ErrorCode.NOT_IN_ROOM, f"you are not in room {self.code}")
        self.spectators.discard(session)
        if mine is not None:
            if self.status in RUNNING:
                out.extend(self.driver.concede(mine.index, EndReason.RESIGN))
            self._vacate(mine, out)
            out.extend(self.event(EventKind.LEFT, {"seat": mine.index}))
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
        out.extend(self.event(EventKind.LEFT, {"seat": mine.index, "connection": "lost"}))
        if self.status == RoomStatus.PLAYING:
            out.extend(self.policy.on_drop(self, mine, now))
        return out

    def reconnect(self, session: str) -> Outbox:
        """A seat's owner is back (resume): hand the seat back and send them the full state."""
        mine = self.seat_of(session)
        if mine is None or mine.holder is None:
            return Outbox()
        mine.connected, mine.dropped_at = True, None
        out = Outbox(changed=True).extend(self.policy.on_back(self, mine))
        out.extend(self._welcome_member(session, mine.index, Role.PLAYER, None))
        out.extend(self.event(EventKind.JOINED, {"seat": mine.index, "name": mine.holder.name, "resumed": True}))
        if self.status == RoomStatus.PAUSED and self._everyone_back():
            out.extend(self.driver.resume())
        return out

    def _everyone_back(self) -> bool:
        """True when every human seat is connected again."""
        return all(s.connected for s in self.seats if s.holder is not None)

    def sweep(self, now: float) -> Outbox:
        """The server's periodic sweep: the policy's chance to act on seats left too long."""
        if self.status != RoomStatus.PLAYING:
            return Outbox()
        return self.policy.on_sweep(self, now)

    # -- AI seats -------------------------------------------------------------------------------------
    def add_ai(self, session: str, seat: int | None, ai: AiSpec) -> Outbox:
        """Host only: seat an AI in a free seat while the game waits for players."""
        self._require_host(session, "add an AI")
        if self.status != RoomStatus.WAITING:
            raise Refusal(ErrorCode.NOT_ALLOWED, "AIs can only be seated before the game starts")
        target = self._free_seat(seat)
        target.ai, target.connected = ai, True
        out = Outbox(changed=True)
        out.records.append(target.record(self.code))
        out.extend(self.event(EventKind.JOINED, {"seat": target.index, "name": ai.label, "ai": True}))
        return out.extend(self._start_if_full())

    def remove_ai(self, session: str, seat: int) -> Outbox:
        """Host only: free an AI's seat while the game waits."""
        self._require_host(session, "remove an AI")
        if self.status != RoomStatus.WAITING:
            raise Refusal(ErrorCode.NOT_ALLOWED, "AIs can only be removed before the game starts")
        if not 0 <= seat < len(self.seats) or self.seats[seat].ai is None:
            raise Refusal(ErrorCode.NOT_ALLOWED, f"seat {seat} has no AI")
        self.seats[seat].ai, self.seats[seat].connected = None, False
        out = Outbox(changed=True)
        out.records.append(self.seats[seat].record(self.code))
        return out.extend(self.event(EventKind.LEFT, {"seat": seat, "ai": True}))

    def _require_host(self, session: str, what: str) -> None:
        """Refuse anyone but the room's creator."""
        if session != self.host:
            raise Refusal(ErrorCode.NOT_ALLOWED, f"only the host can {what}")

    # -- the game ------------------------------------------------------------------------------------
    def _start_if_full(self) -> Outbox:
        """Start the game once every seat is filled."""
        if self.status != RoomStatus.WAITING or any(s.free for s in self.seats):
            return Outbox()
        return self.start_game()

    def start_game(self) -> Outbox:
        """Begin a new game from the initial position and announce it."""
        self.state = self.game.initial_state(self.options)
        self.set_status(RoomStatus.PLAYING)
        self.moves, self.movers, self.last_move, self.result = [], [], None, None
        self.driver.clear()
        self.rematch_votes.clear()
        self.game_no += 1
        self.seq += 1
        self.started_with = [(s.holder, s.ai) for s in self.seats]  # rated: a leaver is still rated
        self.unrated = self.vetter(self) if self.rated else None
        out = Outbox(changed=True)
        out.records.append(GameStarted(self.code, self.game_no))
        out.extend(self.driver.started())
        if self.unrated is not None:  # a person against their own bot: said once, in everyone's log
            out.extend(self.event(EventKind.UNRATED, {"reason": self.unrated}))
        return out.extend(self.ai_turns())

    def ai_pace_ms(self, seat: int | None = None) -> int:
        """Least time between AI moves: the room's option when someone watches or the game is a tournament's (people
        follow those from the tournament's page; a clock may shorten it), else 0."""
        watched = self.occupied() or self.tournament is not None
        pace = int(self.room_options["ai_pace_ms"]) if watched else 0
        return self.driver.ai_pace_ms(seat, pace)

    def move(self, session: str, text: str, seq: int | None, request_id: int | None = None) -> Outbox:
        """A player's move, checked by the guards in order, then handed to the driver.

        A re-send of the seat's last applied move (the same request id, e.g. after a reconnect) is never applied
        again, even when that move ended the game: its answer is the current state in full, echoing the id.
        """
        seat = self._seat_for_move(session)
        if request_id is not None and request_id == seat.last_move_id:
            out = Outbox()  # already applied: just show where we are
            out.send({session}, self.snapshot(viewer=session, request_id=request_id))
            return out
        self._check_turn(seat)
        if seq is not None and seq != self.seq:
            raise Refusal(ErrorCode.STALE, f"that move was made on state {seq}; the room is at {self.seq}")
        return self.driver.move(seat.index, self._parse(text), request_id)

    def _seat_for_move(self, session: str) -> Seat:
        """The seat `session` moves for, after the membership guard."""
        seat = self.seat_of(session)
        if seat is None:
            if session in self.spectators:
                raise Refusal(ErrorCode.NOT_ALLOWED, "spectators cannot move")
            raise Refusal(ErrorCode.NOT_IN_ROOM, f"you have no seat in room {self.code}")
        return seat

    def _check_turn(self, seat: Seat) -> None:
        """Refuse a move when the game is over or not running, or it is not this seat's turn."""
        if self.status == RoomStatus.FINISHED:
            raise Refusal(ErrorCode.GAME_OVER, "the game is over; ask for a rematch or leave")
        if self.status == RoomStatus.PAUSED:
            raise Refusal(ErrorCode.NOT_ALLOWED, "the game is paused until every player is back")
        if self.status != RoomStatus.PLAYING:
            raise Refusal(ErrorCode.NOT_ALLOWED, "the game has not started yet")
        if seat.index not in self.game.to_move(self.state):
            raise Refusal(ErrorCode.NOT_YOUR_TURN, f"it is not {seat.label}'s turn")

    def _parse(self, text: str) -> Any:
        """Parse a wire move, turning the game's complaint into an illegal_move refusal."""
        try:
            return self.game.parse_move(self.state, text)
        except GameError as exc:
            raise Refusal(ErrorCode.ILLEGAL_MOVE, str(exc)) from None

    def apply(
        self,
        moves: dict[int, Any],
        ai_info: dict[int, dict[str, Any]],
        charge: Charge | None = None,
        request_id: int | None = None,
    ) -> Outbox:
        """Apply one move (or one tick's joint move): store it, then send one message per member saying what
        changed (with the events that led to it), and after the game's last move the final full state.

        `charge` is the move's time, measured by the driver's clock; it is booked only once the move applied.
        `request_id` is the id of the move request, echoed to its sender.
        """
        before = self.state
        try:
            after = self.game.apply(before, moves)
        except GameError as exc:
            raise Refusal(ErrorCode.ILLEGAL_MOVE, str(exc)) from None
        notation = self.driver.notation(before, moves)
        self.state, self.last_move = after, notation
        self.moves.append(notation)
        self.movers.append(_mover(moves))
        self.seq += 1
        self.driver.note_turn(before)
        spent = self.driver.settle(charge)
        out = Outbox()
        out.records.append(MoveRecorded(self.code, self.game_no, len(self.moves) - 1, notation, spent))
        notes = [EventNote(notice.kind, notice.data) for notice in self.game.notices(before, after)]
        outcome = self.game.outcome(after)
        if outcome is not None:
            out.extend(self._finish(outcome.result()))
            if self.result is not None:
                notes.append(EventNote(EventKind.GAME_OVER, self.result.to_plain()))
        out.extend(self.driver.next_turn())
        out.extend(self.driver.announce(before, moves, notation, tuple(notes), ai_info, request_id))
        if outcome is not None:
            self.send_snapshot(out)  # the final state in full, with the same seq
        return self.ai_turns(out)

    def replay(self, notation: str) -> None:
        """Re-apply a stored move while restoring a room (no messages: nobody is connected yet)."""
        moves = self.driver.replayed(self.state, notation)
        self.driver.note_turn(self.state)
        self.state = self.game.apply(self.state, moves)
        self.moves.append(notation)
        self.movers.append(_mover(moves))
        self.last_move = notation
        self.seq += 1

    def tick(self) -> Outbox:
        """A live game's clock fired."""
        return self.driver.tick()

    def ai_moved(self, seat: int, seq: int, text: str, info: dict[str, Any]) -> Outbox:
        """An AI's answer arrived: hand it to the driver if the position is still the one it was asked about."""
        if self.status != RoomStatus.PLAYING or seq != self.seq or self.seats[seat].player is None:
            return Outbox()
        return self.driver.ai_moved(seat, self._parse(text), info)

    def ai_turns(self, out: Outbox | None = None) -> Outbox:
        """Ask for a move from every AI (or stand-in) seat that must move now (added to `out`, if given)."""
        if out is None:
            out = Outbox()
        if self.status != RoomStatus.PLAYING:
            return out
        for index in sorted(self.game.to_move(self.state)):
            ai = self.seats[index].player
            if ai is not None:
                budget = self.driver.ai_budget_ms(index)
                late = self.driver.ai_late_ms(index, budget)
                out.effects.append(AiTurn(self.code, index, self.seq, self.game.name, self.state, ai, budget, late))
        return out

    def resign(self, session: str) -> Outbox:
        """A player concedes: the driver decides whether the game ends or plays on without them."""
        seat = self.seat_of(session)
        if seat is None:
            raise Refusal(ErrorCode.NOT_IN_ROOM, f"you have no seat in room {self.code}")
        if self.status == RoomStatus.FINISHED:
            raise Refusal(ErrorCode.GAME_OVER, "the game is already over")
        if self.status == RoomStatus.WAITING:
            raise Refusal(ErrorCode.NOT_ALLOWED, "the game has not started yet")
        self.driver.check_resign(seat.index)
        return self.driver.concede(seat.index, EndReason.RESIGN)

    def finish_by(self, loser: int, reason: str) -> Outbox:
        """End the game against `loser` (resignation, forfeit, time) and announce it."""
        return self.finish_with(Result.of(tuple(s.index for s in self.seats if s.index != loser), reason, loser=loser))

    def finish_with(self, result: Result) -> Outbox:
        """End the game with `result`, decided by the room rather than the rules, and announce it."""
        self.seq += 1
        out = self._finish(result)
        self.send_snapshot(out, events=(EventNote(EventKind.GAME_OVER, (self.result or result).to_plain()),))
        return out

    def _finish(self, result: Result) -> Outbox:
        """Record the end of the game, for the room and for the history (with its rating changes, if rated).

        A rated game that ends in its opening, however it ends (a resignation, a flag, a player leaving, on the
        board), is aborted instead, as on lichess: nobody wins and no rating moves. A tournament's game keeps its
        result for the standings (the rater rates no opening either).
        """
        rated: tuple[SeatRated, ...] = ()
        if self.rated and result.reason != EndReason.ABORTED and self.tournament is None and self.in_opening():
            result = Result.of((), EndReason.ABORTED)
        if self.rated and self.rater is not None and self.unrated is None:
            changes, rated = self.rater(self, result)
            result = replace(result, ratings=changes)
        self.result = result
        self.set_status(RoomStatus.FINISHED)
        self.driver.clear()
        self.driver.stop()
        players = [
            {"seat": s.index, "label": s.label, "name": s.name, "ai": s.ai is not None}
            | ({"bot": True} if s.holder is not None and s.holder.bot else {})
            for s in self.seats
        ]
        out = Outbox(changed=True)
        out.records.append(
            GameFinished(
                self.code,
                self.game_no,
                self.game.name,
                self.options,
                players,
                result.to_plain(),
                list(self.moves),
                self.game.transcript(self.moves),
                self.driver.clock_record(),
                ratings=rated,
            )
        )
        return out

    def rematch(self, session: str) -> Outbox:
        """A player asks for another game; once every seated human asked, it starts with seats rotated.

        If someone left after the game, the rotated room waits for a new player instead.
        """
        seat = self.seat_of(session)
        if seat is None and session != self.host:
            raise Refusal(ErrorCode.NOT_IN_ROOM, f"you have no seat in room {self.code}")
        if self.status != RoomStatus.FINISHED:
            raise Refusal(ErrorCode.NOT_ALLOWED, "a rematch can only follow a finished game")
        if seat is not None:
            self.rematch_votes.add(seat.index)
        humans = {s.index for s in self.seats if s.holder is not None}
        out = self.event(EventKind.REMATCH, {"seat": seat.index if seat else None, "votes": sorted(self.rematch_votes)})
        if not humans <= self.rematch_votes:
            return out
        self._rotate_seats(out)
        for moved in self.seats:  # everyone learns their new seat before the new game's state
            if moved.holder is not None and moved.connected:
                out.send(
                    {moved.holder.session},
                    Joined(room=self.code, role=Role.PLAYER, seat=moved.index, game=self.game.name),
                )
        if any(s.free for s in self.seats):
            self.set_status(RoomStatus.WAITING)
            self.rematch_votes = set()
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

    # -- time controls, takebacks, aborts -------------------------------------------------------------------
    def _seat_for(self, session: str, what: str) -> Seat:
        """The seat of a player asking for `what`; spectators and strangers are refused."""
        seat = self.seat_of(session)
        if seat is None:
            if session in self.spectators:
                raise Refusal(ErrorCode.NOT_ALLOWED, f"spectators cannot {what}")
            raise Refusal(ErrorCode.NOT_IN_ROOM, f"you have no seat in room {self.code}")
        return seat

    def moretime(self, session: str) -> Outbox:
        """Give the opponent 15 seconds."""
        return self.driver.moretime(self._seat_for(session, "give time").index)

    def takeback(self, session: str) -> Outbox:
        """Ask for a takeback, or accept the opponent's (never in a rated game)."""
        seat = self._seat_for(session, "take moves back")
        if self.rated:
            raise Refusal(ErrorCode.NOT_ALLOWED, "takebacks are not allowed in rated games")
        return self.driver.takeback(seat.index)

    def takeback_decline(self, session: str) -> Outbox:
        """Turn down the opponent's takeback offer."""
        return self.driver.takeback_decline(self._seat_for(session, "answer a takeback").index)

    def abort(self, session: str) -> Outbox:
        """Abort a game in its opening (never a tournament's)."""
        seat = self._seat_for(session, "abort a game")
        if self.tournament is not None and self.status in RUNNING:
            raise Refusal(ErrorCode.NOT_ALLOWED, "a tournament game cannot be aborted; resign instead")
        return self.driver.abort(seat.index)

    def flag(self) -> Outbox:
        """The flag timer fired."""
        return self.driver.flag()

    def note_lag(self, session: str, rtt_ms: float) -> None:
        """A ping round trip measured on the connection of `session` (lag compensation of its seat)."""
        seat = self.seat_of(session)
        if seat is not None:
            self.driver.note_lag(seat.index, rtt_ms)

    def clocked(self) -> bool:
        """True while a clock runs in this room (its players' pings are then measured)."""
        return self.status == RoomStatus.PLAYING and self.driver.has_clock

    def chat(self, session: str, name: str, text: str) -> Outbox:
        """Relay a chat line to the room."""
        if not self.is_member(session):
            raise Refusal(ErrorCode.NOT_IN_ROOM, f"you are not in room {self.code}")
        seat = self.seat_of(session)
        data = {"name": name, "seat": seat.index if seat else None, "text": text}
        self.chat_backlog.append({**data, "earlier": self.seq})  # the seq it was said at: a client's dedup key
        return self.event(EventKind.CHAT, data)

    def close(self) -> None:
        """The lobby closed the room: its last summary says so."""
        self.set_status(RoomStatus.CLOSED)

    # -- restart ------------------------------------------------------------------------------------------
    @classmethod
    def restore(
        cls, saved: StoredRoom, game: Game[Any, Any], now: float, held_for: Callable[[str, str, bool], Member]
    ) -> tuple[Room, Outbox]:
        """Rebuild a room a previous run left open: its seats held for their tokens, its game replayed.

        `held_for(token_hash, name, bot)` gives the member a stored token resumes (the lobby keeps sessions). The
        outbox asks the room's AIs to move. GameError if the current rules refuse the stored moves.
        """
        room = cls(saved.code, game, saved.options, saved.room_options, "", saved.host_name, saved.private)
        if saved.host_token_hash is not None:
            room.host = held_for(saved.host_token_hash, saved.host_name, False).session
        for record in saved.seats:
            seat = room.seats[record.seat]
            if record.ai_level is not None or record.ai_bot is not None:
                seat.ai, seat.connected = AiSpec(record.ai_level, record.ai_bot), True
            elif record.token_hash is not None:
                seat.holder, seat.dropped_at = held_for(record.token_hash, record.name or "player", record.bot), now
                room.host = room.host or seat.holder.session  # schema 1 stored no host: the first seated hosts
        room.now = now
        room._restore_game(saved)
        room.started_with = [(s.holder, s.ai) for s in room.seats]
        room.empty_since = now
        out = room.driver.restored(saved) if saved.game_no else Outbox()
        return room, out.extend(room.ai_turns())

    def _restore_game(self, saved: StoredRoom) -> None:
        """Replay the stored moves of the room's current game and set its status."""
        self.game_no = saved.game_no
        if saved.game_no == 0:
            return
        self.state = self.game.initial_state(self.options)
        self.seq = 1
        for notation in saved.moves:
            self.replay(notation)
        outcome = self.game.outcome(self.state)
        result = outcome.result() if outcome is not None else None
        if saved.result is not None:
            scores = saved.result.get("scores")
            result = Result.of(
                tuple(saved.result.get("winners", ())),
                saved.result.get("reason", "restored"),
                tuple(scores) if scores is not None else None,
                saved.result.get("loser"),
            )
        if result is not None:
            self.result = result
            self.set_status(RoomStatus.FINISHED)
        else:
            self.set_status(self.driver.restored_status)

    # -- messages ----------------------------------------------------------------------------------------
    def event(self, kind: EventKind, data: dict[str, Any]) -> Outbox:
        """Send an event that changes no game state (chat, joins, votes, offers), stamped with the current seq."""
        out = Outbox()
        out.send(self.audience(), Event(room=self.code, kind=kind, seq=self.seq, data=data))
        return out

    def mover_session(self) -> str | None:
        """The connected person who must move now in a turn-based game (the one who gets `legal`), if any."""
        if self.status != RoomStatus.PLAYING or self.game.simultaneous:
            return None
        mover = min(self.game.to_move(self.state), default=None)
        if mover is None:
            return None
        seat = self.seats[mover]
        return seat.holder.session if seat.holder is not None and seat.connected else None

    def send_snapshot(self, out: Outbox, events: tuple[EventNote, ...] = (), next_tick_ms: int | None = None) -> Outbox:
        """Send the full state to the whole audience: `legal` only in the copy of the seat that must move."""
        audience = self.audience()
        mover = self.mover_session()
        if mover is not None and mover in audience:
            out.send({mover}, self.snapshot(viewer=mover, events=events, next_tick_ms=next_tick_ms))
            audience.discard(mover)
        out.send(audience, self.snapshot(viewer="", events=events, next_tick_ms=next_tick_ms))
        return out

    def snapshot(
        self,
        next_tick_ms: int | None = None,
        viewer: str | None = None,
        events: tuple[EventNote, ...] = (),
        request_id: int | None = None,
    ) -> State:
        """The full state message: everything a client needs to draw the game.

        `viewer` is the session it is for: in a turn-based game `legal` is filled in only for the seat that must
        move (None: filled in whoever reads it, for tests and tools).
        """
        to_move = sorted(self.game.to_move(self.state)) if self.status == RoomStatus.PLAYING else []
        with_legal = viewer is None or self.game.simultaneous or viewer == self.mover_session()
        legal = self.game.legal_notation(self.state, to_move[0]) if to_move and with_legal else []
        return State(
            room=self.code,
            seq=self.seq,
            game=self.game.name,
            status=self.status,
            view=self.game.view(self.state),
            to_move=to_move,
            legal=legal,
            last_move=self.last_move,
            moves=self.driver.stored_moves(),
            movers=self.driver.stored_movers(),
            result=self.result,
            next_tick_ms=self.driver.next_tick_ms() if next_tick_ms is None else next_tick_ms,
            clock=self.driver.clock_payload(),
            events=events,
            id=request_id,
        )


def _mover(moves: dict[int, Any]) -> int:
    """The seat that made a move (-1 for a joint move of several seats)."""
    return next(iter(moves)) if len(moves) == 1 else -1
