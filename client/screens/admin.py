"""The admin dialog (moderation, issue 37): for the server's admins only, on a player or a room from the lobby.

On a player it kicks, mutes or bans (for a chosen time), lifts a mute or ban, or voids their rated games of a chosen
time back to now; on a room it closes it. Every action
asks for a reason, which the server keeps in its audit log (docs/security.md, "Moderation"); the server's
`moderated` reply, or its refusal, comes back as a toast.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select

from gamenight.client.plain import plain

PLAYER_ACTIONS = (
    ("Kick", "kick"),
    ("Mute chat", "mute"),
    ("Ban", "ban"),
    ("Unmute", "unmute"),
    ("Unban", "unban"),
    ("Void rated games", "void"),
)
ROOM_ACTIONS = (("Close the room", "close_room"),)
TIMED = frozenset({"mute", "ban", "void"})  # the actions that take a time: how long, or (void) how far back
DURATIONS = (
    ("10 minutes", 600),
    ("1 hour", 3600),
    ("1 day", 86400),
    ("1 week", 7 * 86400),
    ("30 days", 30 * 86400),
)
MAX_REASON = 200  # as many characters as the server keeps


@dataclass(frozen=True, slots=True)
class AdminPlan:
    """What the dialog asks for: the action, on whom (a name, or a room's code), why, and for how long."""

    action: str
    reason: str
    target: str = ""
    room: str | None = None
    duration_s: int | None = None
    since: float | None = None  # void: the window of games, wall-clock seconds
    until: float | None = None


class AdminScreen(ModalScreen[AdminPlan | None]):
    """Act on a player (`name`) or a room (`room`): the action, its duration if it lasts, and the reason."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, name: str | None = None, room: str | None = None) -> None:
        super().__init__()
        self.target = name
        self.room = room

    def compose(self) -> ComposeResult:
        """Title, action and duration selectors, the reason field, buttons."""
        actions = PLAYER_ACTIONS if self.room is None else ROOM_ACTIONS
        subject = f"player {self.target}" if self.room is None else f"room {self.room}"
        with Vertical(classes="dialog", id="admin-dialog"):
            yield Label(plain(f"Admin: {subject}"), classes="dialog-title")
            with Horizontal(classes="form-row"):
                yield Label("Action", classes="form-label")
                yield Select(
                    [(plain(label), value) for label, value in actions],
                    value=actions[0][1],
                    allow_blank=False,
                    id="action",
                    compact=True,
                )
            with Horizontal(classes="form-row", id="duration-row"):
                yield Label("For", classes="form-label", id="duration-label")
                yield Select(
                    [(plain(label), seconds) for label, seconds in DURATIONS],
                    value=DURATIONS[2][1],
                    allow_blank=False,
                    id="duration",
                    compact=True,
                )
            with Horizontal(classes="form-row"):
                yield Label("Reason", classes="form-label")
                yield Input(placeholder="why (kept in the audit log)", max_length=MAX_REASON, id="reason")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Do it", variant="error", id="submit")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        """The duration shows only for an action that lasts; the cursor starts in the reason."""
        self._show_duration()
        self.query_one("#reason", Input).focus()

    def on_select_changed(self, event: Select.Changed) -> None:
        """Another action: show or hide the duration."""
        if event.select.id == "action":
            self._show_duration()

    def _show_duration(self) -> None:
        """The duration row is shown for a mute or a ban ("For"), and for a void ("Last": the games of that time)."""
        action = self.query_one("#action", Select).value
        self.query_one("#duration-row").display = action in TIMED
        self.query_one("#duration-label", Label).update("Last" if action == "void" else "For")

    def on_input_submitted(self) -> None:
        """Enter in the reason does it."""
        self._confirm()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Do it, or cancel."""
        event.stop()
        if event.button.id == "submit":
            self._confirm()
        else:
            self.dismiss(None)

    def _confirm(self) -> None:
        """Close with the plan, if a reason is given (the server refuses an action without one)."""
        reason = self.query_one("#reason", Input).value.strip()
        if not reason:
            self.notify("Say why: the reason goes into the server's audit log", severity="warning")
            return
        action = str(self.query_one("#action", Select).value)
        duration = self.query_one("#duration", Select).value
        seconds = duration if action in TIMED and isinstance(duration, int) else None
        if action == "void" and seconds is not None:
            now = time.time()
            self.dismiss(AdminPlan(action, reason, self.target or "", since=now - seconds, until=now))
            return
        self.dismiss(AdminPlan(action, reason, self.target or "", self.room, seconds))

    def action_cancel(self) -> None:
        """Close without acting."""
        self.dismiss(None)
