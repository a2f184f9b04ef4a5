"""What a dropped player's seat means, as small classes: each policy says what happens when a seated person's
connection drops (`on_drop`), when they are back (`on_back`) and on every sweep of the clock (`on_sweep`).

A new policy is one class here and one entry in `POLICIES`; the room option `on_disconnect` offers every name
in it. Rooms call the policy only while a game is running; whatever every policy shares (the seat marked
offline or back, a paused game resumed once everyone is back) the room does itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from gamenight.protocol.vocab import EndReason
from gamenight.server.outbox import AiSpec, Outbox

if TYPE_CHECKING:
    from gamenight.server.room import Room, Seat


class DisconnectPolicy:
    """Base policy: nothing happens; the seat simply waits for its owner."""

    name: ClassVar[str]
    help: ClassVar[str]

    def on_drop(self, room: Room, seat: Seat, now: float) -> Outbox:
        """`seat`'s owner lost the connection while the game runs."""
        return Outbox()

    def on_back(self, room: Room, seat: Seat) -> Outbox:
        """`seat`'s owner is back."""
        return Outbox()

    def on_sweep(self, room: Room, now: float) -> Outbox:
        """The server's periodic sweep, while the game runs."""
        return Outbox()


class Wait(DisconnectPolicy):
    """The game waits for the player: a live game pauses; a turn-based one simply waits for their move."""

    name = "wait"
    help = "the game waits for the player (a live game pauses)"

    def on_drop(self, room: Room, seat: Seat, now: float) -> Outbox:
        """Stop the clock, if the game has one."""
        return room.driver.hold()


class StandIn(DisconnectPolicy):
    """An AI of the room's `ai_level` plays for the dropped player until they are back."""

    name = "ai"
    help = "an AI plays for the player until they are back"

    def on_drop(self, room: Room, seat: Seat, now: float) -> Outbox:
        """Seat the stand-in and let it move if it is its turn."""
        seat.stand_in = AiSpec(level=room.room_options["ai_level"])
        return room.ai_turns()

    def on_back(self, room: Room, seat: Seat) -> Outbox:
        """The player takes over again."""
        seat.stand_in = None
        return Outbox()


class Forfeit(DisconnectPolicy):
    """A player away longer than the room's `grace_s` forfeits."""

    name = "forfeit"
    help = "the player forfeits after the grace period"

    def on_sweep(self, room: Room, now: float) -> Outbox:
        """Forfeit the first seat that has been away longer than the grace period."""
        grace = room.room_options["grace_s"]
        for seat in room.seats:
            if (
                seat.holder is not None
                and not seat.connected
                and seat.dropped_at is not None
                and now - seat.dropped_at >= grace
                and room.driver.can_forfeit(seat.index)
            ):
                return room.driver.concede(seat.index, EndReason.FORFEIT)
        return Outbox()


POLICIES: dict[str, DisconnectPolicy] = {policy.name: policy for policy in (Wait(), StandIn(), Forfeit())}
"""Every disconnect policy by the name the `on_disconnect` option gives."""
