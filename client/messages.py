"""The Textual messages of the client (not the protocol's): what screens and boards ask the app to do,
and the one message the app sends down when the state changed.

Attributes down, messages up: a screen reads `ClientState` and redraws on `ModelChanged`; what the user
does becomes one of the requests below, posted up to the app, which turns it into protocol messages.
Screens never call the app's own methods.
"""

from __future__ import annotations

from typing import Any

from textual.message import Message

from gamenight.client.model import RoomPlan
from gamenight.client.state import Changes
from gamenight.protocol.messages import ListGames
from gamenight.protocol.vocab import Role


class ModelChanged(Message, bubble=False):
    """Down, from the app to each screen: the client state changed as `changes` says."""

    def __init__(self, changes: Changes) -> None:
        super().__init__()
        self.changes = changes


# -- up: from the lobby ---------------------------------------------------------------------------------


class QuickGame(Message):
    """Start a game against the AI now: the quick menu's plan (Othello against AI level 3 without one)."""

    def __init__(self, plan: RoomPlan | None = None) -> None:
        super().__init__()
        self.plan = plan


class CreateRoom(Message):
    """Create the room the form planned, then sit down (or watch) and seat its AIs."""

    def __init__(self, plan: RoomPlan) -> None:
        super().__init__()
        self.plan = plan


class JoinRoom(Message):
    """Sit down in (or, as a spectator, watch) a room; a player who finds no free seat watches instead."""

    def __init__(self, code: str, role: Role = Role.PLAYER) -> None:
        super().__init__()
        self.code = code
        self.role = role


class RefreshRooms(Message):
    """Ask the server for the room list again."""


class WatchLobby(Message):
    """Ask the server for the lobby's pushes (the lobby is shown) or stop them (it is hidden)."""

    def __init__(self, on: bool) -> None:
        super().__init__()
        self.on = on


class MoreRooms(Message):
    """Load the next page of the room list."""


class OpenHistory(Message):
    """Show the history of finished games."""


class RefreshPlayers(Message):
    """Ask the server who is online again."""


class Challenge(Message):
    """Offer the online player `to` a new game of `game` with `options`, me in `seat`."""

    def __init__(self, to: str, game: str, options: dict[str, Any], seat: int) -> None:
        super().__init__()
        self.to, self.game, self.options, self.seat = to, game, options, seat


class Withdraw(Message):
    """Take back one of my challenges (or invites) still waiting for an answer."""

    def __init__(self, challenge: str) -> None:
        super().__init__()
        self.challenge = challenge


class AnswerOffer(Message):
    """Accept or decline a challenge (or invite) offered to me."""

    def __init__(self, challenge: str, accept: bool) -> None:
        super().__init__()
        self.challenge, self.accept = challenge, accept


# -- up: from the history -------------------------------------------------------------------------------


class LoadHistory(Message):
    """Ask for the finished games these filters select."""

    def __init__(self, request: ListGames) -> None:
        super().__init__()
        self.request = request


class OpenReplay(Message):
    """Fetch one finished game and open the replay viewer on it."""

    def __init__(self, game_id: int) -> None:
        super().__init__()
        self.game_id = game_id


class OpenReview(Message):
    """Fetch one finished game (by id, or the latest of a room) and open the review screen on it (issue 36)."""

    def __init__(self, game_id: int | None = None, room: str | None = None) -> None:
        super().__init__()
        self.game_id = game_id
        self.room = room


# -- up: from the room ----------------------------------------------------------------------------------


class MoveChosen(Message):
    """A move picked on a board, in the game's wire notation."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class Premove(Message):
    """A move picked (typed or clicked) while the opponent is to move: queued for your next turn."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class Ring(Message):
    """Ring the terminal bell (unless the player asked for quiet): your clock is low."""


class SendChat(Message):
    """Say something in the room."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class AddAi(Message):
    """Seat an AI in the first open seat (host, before the start)."""

    def __init__(self, level: int | None = None) -> None:
        super().__init__()
        self.level = level


class RemoveAi(Message):
    """Free the last seat an AI holds (host, before the start)."""


class Rematch(Message):
    """Offer (or accept) a rematch."""


class Resign(Message):
    """Concede the game (already confirmed)."""


class MoreTime(Message):
    """Give the opponent 15 seconds."""


class Takeback(Message):
    """Ask to take back your last move, or accept the opponent's request."""


class TakebackDecline(Message):
    """Turn down the opponent's takeback request."""


class Abort(Message):
    """Abort a game still in its opening (already confirmed)."""


class OpenInvite(Message):
    """Show the invite dialog: offer an open seat of my room to someone online (host, before the start)."""


class Invite(Message):
    """Offer the open `seat` of my room to the online player `to` (host, before the start)."""

    def __init__(self, seat: int, to: str) -> None:
        super().__init__()
        self.seat, self.to = seat, to


class LeaveRoom(Message):
    """Leave the room (already confirmed); the reply takes you back to the lobby."""


class CopyCode(Message):
    """Put my room's code on the clipboard for a friend (a room waiting for a player)."""


class Moderate(Message):
    """An admin's action (the admin dialog, client/screens/admin.py): sent as `moderate` with its reason."""

    def __init__(
        self,
        action: str,
        reason: str,
        target: str = "",
        room: str | None = None,
        duration_s: int | None = None,
        since: float | None = None,
        until: float | None = None,
    ) -> None:
        super().__init__()
        self.action, self.reason, self.target, self.room, self.duration_s = action, reason, target, room, duration_s
        self.since, self.until = since, until  # void: the window of games
