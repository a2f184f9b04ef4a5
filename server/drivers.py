"""How a room's game advances, chosen once per game kind: by turns (a move applies at once) or by ticks (every
living seat's latest move applies together when the clock fires).

Everything that differs between the two kinds lives here — accepting a move, the AI's time budget, the stored
notation of a move, replaying it, announcing a position, pausing and resuming a clock, conceding — so `Room`
has no branch on the kind of game. A driver works on its room's state and calls back into the room for what
both kinds share (applying a move, finishing, events, snapshots).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from gamenight.protocol.errors import ErrorCode
from gamenight.protocol.messages import Tick
from gamenight.protocol.vocab import EventKind, RoomStatus
from gamenight.server.games.base import Game, LiveGame
from gamenight.server.outbox import Outbox, Refusal, StartClock

if TYPE_CHECKING:
    from gamenight.server.room import Room

AI_TICK_MARGIN_MS = 40  # a live game's AI must answer this long before the tick


class Driver(ABC):
    """The part of a room that depends on how its game advances."""

    def __init__(self, room: Room) -> None:
        self.room = room

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
    def ai_budget_ms(self) -> int:
        """How long an AI may think about one move."""

    @abstractmethod
    def notation(self, before: Any, moves: Mapping[int, Any]) -> str:
        """The stored form of one applied move (a whole tick for live games)."""

    @abstractmethod
    def replayed(self, state: Any, notation: str) -> dict[int, Any]:
        """A stored move read back as moves by seat (restores and replays)."""

    def move_event(self, moves: Mapping[int, Any], notation: str, ai_info: Mapping[int, dict[str, Any]]) -> Outbox:
        """The events announcing an applied move, before the new state (none for live games: the tick says it)."""
        return Outbox()

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

    @property
    def restored_status(self) -> RoomStatus:
        """The status of an unfinished game restored after a restart."""
        return RoomStatus.PLAYING

    # -- what members see ---------------------------------------------------------------------------------
    def announce(self, before: Any) -> Outbox:
        """Send the position after a move: the full snapshot."""
        out = Outbox()
        out.send(self.room.audience(), self.room.snapshot())
        return out

    def stored_moves(self) -> list[str]:
        """The move list a snapshot carries."""
        return list(self.room.moves)

    def next_tick_ms(self) -> int | None:
        """Milliseconds to the next tick, for snapshots of a running live game."""
        return None


class TurnDriver(Driver):
    """One seat moves at a time; a move applies as soon as it is checked."""

    def move(self, seat: int, move: Any, request_id: int | None) -> Outbox:
        """Apply the move now and remember its request id, so a re-send after a reconnect is recognised."""
        out = self.room.apply({seat: move}, {})
        self.room.seats[seat].last_move_id = request_id
        return out

    def ai_moved(self, seat: int, move: Any, info: dict[str, Any]) -> Outbox:
        """Apply the AI's move now, with its search figures in the move event."""
        return self.room.apply({seat: move}, {seat: info})

    def ai_budget_ms(self) -> int:
        """The room's `ai_ms` option."""
        return int(self.room.room_options["ai_ms"])

    def notation(self, before: Any, moves: Mapping[int, Any]) -> str:
        """The game's notation of the one move."""
        ((_, move),) = moves.items()
        return self.room.game.format_move(before, move)

    def replayed(self, state: Any, notation: str) -> dict[int, Any]:
        """The stored move, for the seat to move."""
        (seat,) = self.room.game.to_move(state)
        return {seat: self.room.game.parse_move(state, notation)}

    def move_event(self, moves: Mapping[int, Any], notation: str, ai_info: Mapping[int, dict[str, Any]]) -> Outbox:
        """`event move {seat, move, ai?}`."""
        ((seat, _),) = moves.items()
        data: dict[str, Any] = {"seat": seat, "move": notation}
        if seat in ai_info:
            data["ai"] = ai_info[seat]
        return self.room.event(EventKind.MOVE, data)

    def started(self) -> Outbox:
        """The first position, to everyone."""
        return self.announce(None)

    def concede(self, seat: int, reason: str) -> Outbox:
        """The game ends against `seat`."""
        return self.room.finish_by(seat, reason)


class TickDriver(Driver):
    """Every living seat moves at once when the clock fires; between ticks each seat's latest move is kept."""

    def __init__(self, room: Room) -> None:
        super().__init__(room)
        self.game: LiveGame[Any, Any] = room.game  # type: ignore[assignment]  # chosen by for_game
        self.pending: dict[int, Any] = {}  # each seat's latest move this tick
        self.retiring: dict[int, Any] = {}  # seats that resigned, with their retire move

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

    def ai_budget_ms(self) -> int:
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
        return self._countdown()

    def _countdown(self) -> Outbox:
        """Announce the position with the countdown to the first tick, and start the clock."""
        room = self.room
        out = Outbox()
        out.send(room.audience(), room.snapshot(next_tick_ms=self.countdown_ms))
        out.effects.append(StartClock(room.code, self.countdown_ms, self.tick_ms))
        return out

    def hold(self) -> Outbox:
        """Pause the game until its players are back."""
        room = self.room
        if room.status != RoomStatus.PLAYING:
            return Outbox()
        room.set_status(RoomStatus.PAUSED)
        self.pending.clear()
        room.seq += 1
        out = Outbox(changed=True)
        out.send(room.audience(), room.snapshot())
        return out

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

    def announce(self, before: Any) -> Outbox:
        """A compact tick delta while the game runs; the full snapshot once it stops."""
        room = self.room
        delta = self.game.delta(before, room.state)
        if delta is None or room.status != RoomStatus.PLAYING:
            return super().announce(before)
        out = Outbox()
        out.send(room.audience(), Tick(room=room.code, seq=room.seq, delta=delta, next_tick_ms=self.tick_ms))
        return out

    def stored_moves(self) -> list[str]:
        """Live games send no move list (the board shows the trails)."""
        return []

    def next_tick_ms(self) -> int | None:
        """The tick length while the game runs."""
        return self.tick_ms if self.room.status == RoomStatus.PLAYING else None
