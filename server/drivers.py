"""How a room's game advances, chosen once per game kind: by turns (a move applies at once) or by ticks (every
living seat's latest move applies together when the clock fires).

Everything that differs between the two kinds lives here — accepting a move, the AI's time budget, the stored
notation of a move, replaying it, announcing a position, pausing and resuming a clock, conceding — so `Room`
has no branch on the kind of game. A driver works on its room's state and calls back into the room for what
both kinds share (applying a move, finishing, events, snapshots).
"""

from __future__ import annotations

import math
import weakref
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from gamenight.protocol.errors import ErrorCode
from gamenight.protocol.messages import Moved, Tick
from gamenight.protocol.vocab import (
    OPENING_MOVES,
    Clock,
    EndReason,
    EventKind,
    EventNote,
    Result,
    RoomStatus,
    moves_by_seat,
)
from gamenight.server.clock import MORETIME_MS, Charge, GameClock
from gamenight.server.games.base import Game, LiveGame
from gamenight.server.outbox import ArmFlag, Outbox, Refusal, StartClock
from gamenight.server.records import ClockSaved, MovesUndone, StoredRoom

if TYPE_CHECKING:
    from gamenight.server.room import Room

AI_TICK_MARGIN_MS = 40  # a live game's AI must answer this long before the tick
AI_LATE_MS = 2000  # an unclocked AI answer later than its budget plus this is replaced by a fallback move
OPENING_RIDE_MS = 1000  # a live game's opening: every rider rides this long (and OPENING_MOVES ticks at least)


class Driver(ABC):
    """The part of a room that depends on how its game advances."""

    def __init__(self, room: Room) -> None:
        # The room owns its driver; a strong reference back would make a cycle, which only the cyclic collector
        # frees, and a running server runs a full collection rarely (`GC_THRESHOLDS`, server/__main__.py): every
        # closed room, its game and its events would stay in memory until then (issue 37's soak found them).
        self._room = weakref.ref(room)

    @property
    def room(self) -> Room:
        """The room this driver advances (alive as long as anybody can reach the driver through it)."""
        room = self._room()
        if room is None:
            raise RuntimeError("a room's driver was used after the room was freed")
        return room

    @staticmethod
    def for_game(room: Room, game: Game[Any, Any]) -> Driver:
        """The driver for `game`'s kind: ticks for live games, turns for the rest."""
        return TickDriver(room) if isinstance(game, LiveGame) else TurnDriver(room)

    # -- moves -------------------------------------------------------------------------------------------
    @abstractmethod
    def move(self, seat: int, move: Any, request_id: int | None) -> Outbox:
        """A seated person's checked move."""

    @abstractmethod
    def ai_moved(self, seat: int, move: Any, info: dict[str, Any]) -> Outbox:
        """An AI's move for `seat`, already known to answer the current position."""

    def tick(self) -> Outbox:
        """The clock fired (only live games have one)."""
        return Outbox()

    @abstractmethod
    def ai_budget_ms(self, seat: int) -> int:
        """How long the AI of `seat` may think about one move."""

    def ai_late_ms(self, seat: int, budget_ms: int) -> int | None:
        """How long past its budget the answer of `seat`'s AI is still awaited (None: the server's default)."""
        return None

    def ai_pace_ms(self, seat: int | None, pace_ms: int) -> int:
        """The least time an AI move of `seat` takes, from the room's pace (a clock may shorten it)."""
        return pace_ms

    # -- the opening (docs/protocol.md "Abort"): until every seat made its first moves nothing counts ----------
    @abstractmethod
    def moves_made(self) -> list[int]:
        """How many moves each seat has made in this game."""

    @property
    def opening_moves(self) -> int:
        """The moves each seat makes before the game counts (`OPENING_MOVES`)."""
        return OPENING_MOVES

    def note_turn(self, before: Any) -> None:
        """A move (or tick) is applied to the position `before`, live or replayed after a restart."""
        return None

    @abstractmethod
    def notation(self, before: Any, moves: Mapping[int, Any]) -> str:
        """The stored form of one applied move (a whole tick for live games)."""

    @abstractmethod
    def replayed(self, state: Any, notation: str) -> dict[int, Any]:
        """A stored move read back as moves by seat (restores and replays)."""

    # -- the clock and the players ------------------------------------------------------------------------
    @abstractmethod
    def started(self) -> Outbox:
        """Announce a game that just started (and start its clock, if it has one)."""

    def hold(self) -> Outbox:
        """A player dropped under the "wait" policy: stop the clock if there is one."""
        return Outbox()

    def resume(self) -> Outbox:
        """Every player is back after a pause: start again."""
        return Outbox()

    def check_resign(self, seat: int) -> None:
        """Refuse a resignation this kind of game cannot take now (turn-based games take one at any time)."""
        return None

    @abstractmethod
    def concede(self, seat: int, reason: str) -> Outbox:
        """`seat` gives up (resignation, forfeit, leaving)."""

    def can_forfeit(self, seat: int) -> bool:
        """True if `seat` still has something to lose by forfeiting."""
        room = self.room
        return room.state is not None and seat in room.game.to_move(room.state)

    def clear(self) -> None:
        """Forget moves collected for a tick that will not come (the game ended or restarts); turns keep none."""
        return None

    # -- time controls (turn-based games only) ---------------------------------------------------------------
    def settle(self, charge: Charge | None) -> int | None:
        """A move was applied: book its time (returns the ms charged, if the game has a clock)."""
        return None

    def next_turn(self) -> Outbox:
        """After a move (and the end, if it ended the game): start the next mover's clock."""
        return Outbox()

    def stop(self) -> None:
        """The game ended: stop the clock where it stands."""
        return None

    def flag(self) -> Outbox:
        """The flag timer fired: end the game if the mover's time is up, else look again later."""
        return Outbox()

    def clock_payload(self) -> Clock | None:
        """The `state.clock` map, if the game has a clock."""
        return None

    def note_lag(self, seat: int, rtt_ms: float) -> None:
        """A ping round trip measured on `seat`'s connection (only clocks use it)."""
        return None

    @property
    def has_clock(self) -> bool:
        """True when the game has a clock."""
        return False

    def clock_record(self) -> dict[str, Any] | None:
        """The time control and each move's time spent, for the finished game's record."""
        return None

    def restored(self, saved: StoredRoom) -> Outbox:
        """After a restart replayed the room's moves: take the stored clocks back and start the mover's."""
        return Outbox()

    def moretime(self, seat: int) -> Outbox:
        """`seat` gives its opponent more time."""
        raise Refusal(ErrorCode.NOT_ALLOWED, "live games have no clock to add time to")

    def takeback(self, seat: int) -> Outbox:
        """`seat` asks for a takeback (or accepts the opponent's)."""
        raise Refusal(ErrorCode.NOT_ALLOWED, "live games have no takebacks")

    def takeback_decline(self, seat: int) -> Outbox:
        """`seat` turns down the opponent's takeback offer."""
        raise Refusal(ErrorCode.NOT_ALLOWED, "live games have no takebacks")

    def abort(self, seat: int) -> Outbox:
        """`seat` aborts a game still in its opening."""
        raise Refusal(ErrorCode.NOT_ALLOWED, "live games cannot be aborted; resign instead")

    @property
    def restored_status(self) -> RoomStatus:
        """The status of an unfinished game restored after a restart."""
        return RoomStatus.PLAYING

    # -- what members see ---------------------------------------------------------------------------------
    @abstractmethod
    def announce(
        self,
        before: Any,
        moves: Mapping[int, Any],
        notation: str,
        events: tuple[EventNote, ...],
        ai_info: Mapping[int, dict[str, Any]],
        request_id: int | None,
    ) -> Outbox:
        """Send the one message per member that says what an applied move (or tick) changed."""

    def stored_moves(self) -> list[str]:
        """The move list a snapshot carries."""
        return list(self.room.moves)

    def stored_movers(self) -> list[int]:
        """Who made each move of the list a snapshot carries."""
        return list(self.room.movers)

    def next_tick_ms(self) -> int | None:
        """Milliseconds to the next tick, for snapshots of a running live game."""
        return None


class TurnDriver(Driver):
    """One seat moves at a time; a move applies as soon as it is checked. The clock, if any, lives here."""

    def __init__(self, room: Room) -> None:
        super().__init__(room)
        self.clock: GameClock | None = None
        self.takeback_offer: int | None = None  # the seat whose takeback offer is on the table

    def move(self, seat: int, move: Any, request_id: int | None) -> Outbox:
        """Apply the move now and remember its request id, so a re-send after a reconnect is recognised.

        A move that arrives after the mover's flag fell (its lag refund counted) loses on time instead.
        """
        charge = self._measure(seat)
        if charge is not None and charge.flagged:
            return self.room.finish_by(seat, EndReason.TIME)
        out = self.room.apply({seat: move}, {}, charge, request_id)
        self.room.seats[seat].last_move_id = request_id
        return out

    def ai_moved(self, seat: int, move: Any, info: dict[str, Any]) -> Outbox:
        """Apply the AI's move now, with its search figures in the move event (an AI flags like anyone)."""
        charge = self._measure(seat)
        if charge is not None and charge.flagged:
            return self.room.finish_by(seat, EndReason.TIME)
        return self.room.apply({seat: move}, {seat: info}, charge)

    def moves_made(self) -> list[int]:
        """Each seat's moves in the move list (Othello's passes are nobody's), as a client counts them."""
        return moves_by_seat(self.room.movers, len(self.room.seats))

    def _measure(self, seat: int) -> Charge | None:
        """What a move by `seat` now costs, if the game has a clock."""
        return self.clock.measure(seat, self.room.now) if self.clock is not None else None

    def _moves_left(self, seat: int) -> int:
        """The moves `seat` can still expect to make (its share of the plies left)."""
        room = self.room
        return -(-room.game.plies_left(room.state) // len(room.seats))

    def ai_budget_ms(self, seat: int) -> int:
        """The room's `ai_ms`, or less when the clock says so (`GameClock.ai_budget_ms`)."""
        ai_ms = int(self.room.room_options["ai_ms"])
        if self.clock is None:
            return ai_ms
        pace = self.ai_pace_ms(seat, self.room.ai_pace_ms())
        return self.clock.ai_budget_ms(seat, self.room.now, self._moves_left(seat), ai_ms, pace)

    def ai_late_ms(self, seat: int, budget_ms: int) -> int | None:
        """With a clock: half the time the AI would still have after its budget (so a stuck AI never flags)."""
        if self.clock is None:
            return None
        slack = self.clock.left_ms(seat, self.room.now) - budget_ms
        return max(50, min(AI_LATE_MS, slack // 2))

    def ai_pace_ms(self, seat: int | None, pace_ms: int) -> int:
        """The room's pace, but at most half an AI's share of its clock."""
        if self.clock is None or seat is None:
            return pace_ms
        return self.clock.ai_pace_ms(seat, self.room.now, self._moves_left(seat), pace_ms)

    def notation(self, before: Any, moves: Mapping[int, Any]) -> str:
        """The game's notation of the one move."""
        ((_, move),) = moves.items()
        return self.room.game.format_move(before, move)

    def replayed(self, state: Any, notation: str) -> dict[int, Any]:
        """The stored move, for the seat to move."""
        (seat,) = self.room.game.to_move(state)
        return {seat: self.room.game.parse_move(state, notation)}

    def announce(
        self,
        before: Any,
        moves: Mapping[int, Any],
        notation: str,
        events: tuple[EventNote, ...],
        ai_info: Mapping[int, dict[str, Any]],
        request_id: int | None,
    ) -> Outbox:
        """One `moved` per member: the same frame for everyone but the seat to move (which also gets `legal`) and
        the sender of the move request (whose copy echoes its `id`).

        Built for the hot path (every move of every turn-based room): the room's state and members are read
        once, `legal` is computed only when the seat to move is here to receive it, and the common case of a
        mover and a next mover who are both connected costs three `Moved`s at most (two with no spectator)."""
        room = self.room
        game, state = room.game, room.state
        ((seat, _),) = moves.items()
        changes = game.changes(before, state)
        playing = room.status == RoomStatus.PLAYING
        to_move = sorted(game.to_move(state)) if playing else []
        fields: dict[str, Any] = {
            "room": room.code,
            "seq": room.seq,
            "seat": seat,
            "move": notation,
            "cells": changes.cells,
            "view": changes.keys,
            "to_move": to_move,
            "clock": self.clock_payload(),
            "events": events,
            "ai": ai_info.get(seat),
        }
        out, audience = Outbox(), room.audience()
        mover = None  # the connected person who must move now (room.mover_session, without asking twice)
        if to_move:
            next_seat = room.seats[to_move[0]]
            if next_seat.holder is not None and next_seat.connected:
                mover = next_seat.holder.session
        holder = room.seats[seat].holder
        sender = holder.session if request_id is not None and holder is not None else None
        if mover is not None and mover in audience:
            audience.discard(mover)
            legal = game.legal_notation(state, to_move[0])
            out.send({mover}, Moved(**fields, legal=legal, id=request_id if mover == sender else None))
        if sender is not None and sender != mover and sender in audience:
            audience.discard(sender)
            out.send({sender}, Moved(**fields, id=request_id))
        if audience:
            out.send(audience, Moved(**fields))
        return out

    def started(self) -> Outbox:
        """Start the first mover's clock (if the room has one), then the first position, to everyone."""
        room = self.room
        self.clock = GameClock.from_options(room.room_options, len(room.seats))
        self.takeback_offer = None
        out = self.next_turn(first=True)
        return self.room.send_snapshot(out)

    def concede(self, seat: int, reason: str) -> Outbox:
        """The game ends against `seat`."""
        return self.room.finish_by(seat, reason)

    # -- the clock --------------------------------------------------------------------------------------------
    def _mover(self) -> int | None:
        """The seat to move while the game runs."""
        room = self.room
        if room.status != RoomStatus.PLAYING:
            return None
        return min(room.game.to_move(room.state), default=None)

    def settle(self, charge: Charge | None) -> int | None:
        """Book the move's time and withdraw a takeback offer the move overtook."""
        self.takeback_offer = None
        if self.clock is None or charge is None:
            return None
        self.clock.settle(charge)
        return charge.spent_ms

    def next_turn(self, first: bool = False) -> Outbox:
        """Start the next mover's clock, store every seat's time for this position, and arm the flag."""
        room, out = self.room, Outbox()
        mover = self._mover()
        if self.clock is None:
            return out
        if first:
            self.clock.start(mover, room.now)
        else:
            self.clock.pass_turn(mover, room.now)
        out.records.append(ClockSaved(room.code, room.game_no, len(room.moves), list(self.clock.remaining)))
        return out.extend(self._arm())

    def _arm(self) -> Outbox:
        """An effect to look at the flag when the mover's time (and grace) runs out."""
        out = Outbox()
        deadline = self.clock.deadline_ms(self.room.now) if self.clock is not None else None
        if deadline is not None:
            out.effects.append(ArmFlag(self.room.code, max(0, deadline)))
        return out

    def stop(self) -> None:
        """Freeze the mover's time where it stands (at zero for a flag)."""
        clock = self.clock
        if clock is not None and clock.running is not None:
            clock.remaining[clock.running] = max(0, clock.left_ms(clock.running, self.room.now))
            clock.running = None
        self.takeback_offer = None

    def flag(self) -> Outbox:
        """End the game on time if the mover's flag fell; a timer that fired early just looks again later."""
        clock = self.clock
        if self.room.status != RoomStatus.PLAYING or clock is None or clock.running is None:
            return Outbox()
        if clock.out_of_time(self.room.now):
            return self.room.finish_by(clock.running, EndReason.TIME)
        return self._arm()

    @property
    def has_clock(self) -> bool:
        """True when the room's options asked for a clock."""
        return self.clock is not None

    def note_lag(self, seat: int, rtt_ms: float) -> None:
        """A ping round trip measured on `seat`'s connection."""
        if self.clock is not None:
            self.clock.lag[seat].record(rtt_ms)

    def clock_payload(self) -> Clock | None:
        """Every seat's time now, and who runs."""
        return self.clock.payload(self.room.now) if self.clock is not None else None

    def clock_record(self) -> dict[str, Any] | None:
        """The time control and each move's time spent, for the replay."""
        clock = self.clock
        if clock is None:
            return None
        return {
            "initial_ms": clock.initial_ms,
            "increment_ms": clock.increment_ms,
            "days_per_move": clock.days_per_move,
            "move_ms": list(clock.spent),
            "seats": list(self.room.movers),
        }

    def restored(self, saved: StoredRoom) -> Outbox:
        """Take back the stored times; the mover's clock starts again now (the downtime is charged to nobody)."""
        room = self.room
        self.clock = GameClock.from_options(room.room_options, len(room.seats))
        mover = self._mover()
        if self.clock is None:
            return Outbox()
        self.clock.restored(saved.clocks, saved.move_ms, len(room.moves))
        self.clock.start(mover, room.now)
        return self._arm()

    def _position_at(self, ply: int) -> Any:
        """The current game's position before its move `ply` (replayed from the start)."""
        room = self.room
        state = room.game.initial_state(room.options)
        for seat, notation in zip(room.movers[:ply], room.moves[:ply], strict=True):
            state = room.game.apply(state, {seat: room.game.parse_move(state, notation)})
        return state

    # -- moretime, takeback, abort ------------------------------------------------------------------------------
    def _require_running(self) -> None:
        """Refuse a request that needs a game under way."""
        status = self.room.status
        if status == RoomStatus.FINISHED:
            raise Refusal(ErrorCode.GAME_OVER, "the game is over")
        if status != RoomStatus.PLAYING:
            raise Refusal(ErrorCode.NOT_ALLOWED, "the game has not started yet")

    def moretime(self, seat: int) -> Outbox:
        """Give every other seat 15 s, store it, and tell everyone."""
        self._require_running()
        clock, room = self.clock, self.room
        if clock is None:
            raise Refusal(ErrorCode.NOT_ALLOWED, "this game has no clock")
        if clock.correspondence:
            raise Refusal(ErrorCode.NOT_ALLOWED, "a correspondence game has no time to give")
        others = [s.index for s in room.seats if s.index != seat]
        for other in others:
            clock.add_time(other, MORETIME_MS)
        room.seq += 1
        out = Outbox()
        out.records.append(ClockSaved(room.code, room.game_no, len(room.moves), list(clock.remaining)))
        given = EventNote(EventKind.MORETIME, {"seat": seat, "to": others, "ms": MORETIME_MS})
        room.send_snapshot(out, events=(given,))
        return out.extend(self._arm())

    def takeback(self, seat: int) -> Outbox:
        """Offer a takeback of `seat`'s last move, or accept the opponent's offer; an AI opponent accepts."""
        self._require_running()
        room = self.room
        offer = self.takeback_offer
        if offer is not None and offer != seat:
            return self._take_back(offer, seat)
        if offer == seat:
            raise Refusal(ErrorCode.NOT_ALLOWED, "you already asked; wait for the answer")
        if seat not in self.room.movers:
            raise Refusal(ErrorCode.NOT_ALLOWED, "you have made no move to take back")
        self.takeback_offer = seat
        out = room.event(EventKind.TAKEBACK, {"seat": seat, "action": "offer"})
        opponents = [s for s in room.seats if s.index != seat]
        if opponents and all(s.player is not None for s in opponents):
            out.extend(self._take_back(seat, opponents[0].index))
        return out

    def _take_back(self, asker: int, by: int) -> Outbox:
        """Undo `asker`'s last move and every move after it: the board and the clocks go back exactly."""
        room = self.room
        ply = max(i for i, mover in enumerate(room.movers) if mover == asker)
        undone = len(room.moves) - ply
        room.state, room.moves, room.movers = self._position_at(ply), room.moves[:ply], room.movers[:ply]
        room.last_move = room.moves[-1] if room.moves else None
        room.seq += 1
        self.takeback_offer = None
        out = Outbox()
        out.records.append(MovesUndone(room.code, room.game_no, ply))
        if self.clock is not None:
            self.clock.undo(undone, asker, room.now)
            out.extend(self._arm())
        accepted = EventNote(EventKind.TAKEBACK, {"seat": by, "action": "accept", "to": asker, "plies": undone})
        room.send_snapshot(out, events=(accepted,))
        return out.extend(room.ai_turns())

    def takeback_decline(self, seat: int) -> Outbox:
        """Turn down the opponent's offer."""
        self._require_running()
        if self.takeback_offer is None or self.takeback_offer == seat:
            raise Refusal(ErrorCode.NOT_ALLOWED, "there is no takeback offer from your opponent to decline")
        self.takeback_offer = None
        return self.room.event(EventKind.TAKEBACK, {"seat": seat, "action": "decline"})

    def abort(self, seat: int) -> Outbox:
        """End the game without a result while it is in its opening: any seat, at once, whoever is to move."""
        self._require_running()
        if not self.room.in_opening():
            raise Refusal(
                ErrorCode.NOT_ALLOWED,
                f"a game can be aborted only until every side has made {OPENING_MOVES} moves; resign instead",
            )
        return self.room.finish_with(Result.of((), EndReason.ABORTED))


class TickDriver(Driver):
    """Every living seat moves at once when the clock fires; between ticks each seat's latest move is kept."""

    def __init__(self, room: Room) -> None:
        super().__init__(room)
        self.game: LiveGame[Any, Any] = room.game  # type: ignore[assignment]  # chosen by for_game
        self.pending: dict[int, Any] = {}  # each seat's latest move this tick
        self.retiring: dict[int, Any] = {}  # seats that resigned, with their retire move
        self.ridden = [0] * len(room.seats)  # the ticks each seat rode in this game (the one it went out on too)

    @property
    def tick_ms(self) -> int:
        """The tick length, clamped to a playable range."""
        return max(50, min(2000, int(self.room.options.get("tick_ms", 150))))

    @property
    def countdown_ms(self) -> int:
        """The pause before a live game starts or resumes, so players can find their keys."""
        return int(self.room.room_options["countdown_ms"])

    def move(self, seat: int, move: Any, request_id: int | None) -> Outbox:
        """Keep the move for the next tick (a later one replaces it)."""
        if seat in self.retiring:
            raise Refusal(ErrorCode.NOT_ALLOWED, "you resigned: your cycle stops on the next tick")
        self.pending[seat] = move
        return Outbox()

    def ai_moved(self, seat: int, move: Any, info: dict[str, Any]) -> Outbox:
        """Keep the AI's move for the next tick."""
        if seat not in self.retiring:
            self.pending[seat] = move
        return Outbox()

    def tick(self) -> Outbox:
        """Apply every riding seat's move (a retire move, its latest, or what it does when it sent none)."""
        room = self.room
        if room.status != RoomStatus.PLAYING:
            return Outbox()
        riding = sorted(self.game.to_move(room.state))
        chosen = {seat: self.retiring.get(seat, self.pending.get(seat)) for seat in riding}
        moves = {seat: self._unsent(seat) if move is None else move for seat, move in chosen.items()}
        self.clear()
        return room.apply(moves, {})

    def _unsent(self, seat: int) -> Any:
        """The move of a seat that sent nothing this tick: a human keeps going; a late AI takes the safe way."""
        room = self.room
        if room.seats[seat].player is None:
            return self.game.default_move(room.state, seat)
        from gamenight.server.ai.play import fallback_move  # only when an AI is late: the loop rarely pays for it

        return self.game.parse_move(room.state, fallback_move(self.game.name, room.state, seat))

    def moves_made(self) -> list[int]:
        """Each seat's move count is the ticks it rode in: every tick is a move for each rider still riding."""
        return list(self.ridden)

    @property
    def opening_moves(self) -> int:
        """The ticks of the first `OPENING_RIDE_MS` of riding (`OPENING_MOVES` at least): a rider out sooner
        (crashed, resigned, left) did not really play, as a board game's player who never made two moves."""
        return max(OPENING_MOVES, math.ceil(OPENING_RIDE_MS / self.tick_ms))

    def note_turn(self, before: Any) -> None:
        """Every seat riding into this tick rode one more."""
        for seat in self.game.to_move(before):
            self.ridden[seat] += 1

    def ai_budget_ms(self, seat: int) -> int:
        """The tick, less a margin for the answer to arrive."""
        return self.tick_ms - AI_TICK_MARGIN_MS

    def notation(self, before: Any, moves: Mapping[int, Any]) -> str:
        """The tick's joint move."""
        return self.game.format_joint(moves, len(self.room.seats))

    def replayed(self, state: Any, notation: str) -> dict[int, Any]:
        """A stored tick's moves by seat."""
        return self.game.parse_joint(state, notation)

    def started(self) -> Outbox:
        """The first position with the countdown, and the clock."""
        self.ridden = [0] * len(self.room.seats)
        return self._countdown()

    def _countdown(self) -> Outbox:
        """Announce the position with the countdown to the first tick, and start the clock."""
        room = self.room
        first_ms = self.countdown_ms + self.tick_ms  # the riders always get one tick to steer
        out = room.send_snapshot(Outbox(), next_tick_ms=first_ms)
        out.effects.append(StartClock(room.code, first_ms, self.tick_ms))
        return out

    def hold(self) -> Outbox:
        """Pause the game until its players are back."""
        room = self.room
        if room.status != RoomStatus.PLAYING:
            return Outbox()
        room.set_status(RoomStatus.PAUSED)
        self.pending.clear()
        room.seq += 1
        return room.send_snapshot(Outbox(changed=True))

    def resume(self) -> Outbox:
        """Count down again, then ride on."""
        room = self.room
        room.set_status(RoomStatus.PLAYING)
        room.seq += 1
        out = Outbox(changed=True).extend(self._countdown())
        return out.extend(room.ai_turns())

    def check_resign(self, seat: int) -> None:
        """A rider already out has nothing left to resign."""
        if seat not in self.game.to_move(self.room.state):
            raise Refusal(ErrorCode.NOT_ALLOWED, "your cycle is already out; the others ride on")

    def concede(self, seat: int, reason: str) -> Outbox:
        """With three or more riders, the rider stops on the next tick and the others ride on; else the game ends.

        The retire move goes into that tick's joint move, so the log (and a restored game) has it.
        """
        state = self.room.state
        if seat not in self.game.to_move(state):
            return Outbox()  # already out (crashed earlier): there is nothing left to concede
        retire = self.game.retire_move(state, seat)
        if retire is None:
            return self.room.finish_by(seat, reason)
        self.retiring[seat] = retire
        return self.room.event(EventKind.RETIRED, {"seat": seat, "reason": reason})

    def can_forfeit(self, seat: int) -> bool:
        """A rider still riding and not already retiring."""
        return super().can_forfeit(seat) and seat not in self.retiring

    def clear(self) -> None:
        """Forget this tick's collected moves and retirements."""
        self.pending.clear()
        self.retiring.clear()

    @property
    def restored_status(self) -> RoomStatus:
        """A live game waits for its players after a restart, then counts down again."""
        return RoomStatus.PAUSED

    def announce(
        self,
        before: Any,
        moves: Mapping[int, Any],
        notation: str,
        events: tuple[EventNote, ...],
        ai_info: Mapping[int, dict[str, Any]],
        request_id: int | None,
    ) -> Outbox:
        """One `tick` for everyone, the last one included (the room then sends the final state)."""
        room = self.room
        changes = self.game.changes(before, room.state)
        tick = Tick(
            room=room.code,
            seq=room.seq,
            cells=changes.cells,
            view=changes.keys,
            move=notation,
            next_tick_ms=self.next_tick_ms(),
            events=events,
        )
        out = Outbox()
        out.send(room.audience(), tick)
        return out

    def stored_moves(self) -> list[str]:
        """Live games send no move list (the board shows the trails)."""
        return []

    def stored_movers(self) -> list[int]:
        """Nor who made them."""
        return []

    def next_tick_ms(self) -> int | None:
        """The tick length while the game runs."""
        return self.tick_ms if self.room.status == RoomStatus.PLAYING else None
