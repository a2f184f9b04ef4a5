"""The challenge dialogs: challenge an online player, answer a challenge offered to you, invite a bot into
your room.

The challenge form is built like the create-room form (client/screens/create.py), from the server's
description of each game: the same option fields, plus the seat you take. It offers only the games the
target takes challenges for.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Select, Static

from gamenight.client.plain import plain
from gamenight.client.presence import Offer, player_label
from gamenight.client.screens.create import FormScreen, apply_preset, option_rows, option_value
from gamenight.protocol.vocab import GameDescription, PlayerInfo

RANDOM_SEAT = -1


@dataclass(frozen=True, slots=True)
class ChallengePlan:
    """What the challenge form asks for: the game, its changed options, and my seat."""

    to: str
    game: str
    options: dict[str, Any]
    seat: int


def seat_options(game: GameDescription, count: int) -> list[tuple[Text, int]]:
    """The entries of the "your seat" selector: each seat by its label, then random."""
    return [(plain(game.seat_label(index)), index) for index in range(count)] + [(plain("random"), RANDOM_SEAT)]


class ChallengeScreen(FormScreen[ChallengePlan]):
    """Challenge `target` to one of the games it takes challenges for: game, options, my seat."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "submit", "Challenge"),
    ]

    def __init__(self, target: PlayerInfo, games: list[GameDescription]) -> None:
        super().__init__()
        self.target = target
        self.games = {game.name: game for game in games}
        self.game = games[0]
        self._building = asyncio.Lock()

    def compose(self) -> ComposeResult:
        """Title, game selector, option rows, seat selector, buttons."""
        with Vertical(classes="dialog", id="challenge-dialog"):
            yield Label(plain(f"Challenge {player_label(self.target)}"), classes="dialog-title")
            with Horizontal(classes="form-row"):
                yield Label("Game", classes="form-label")
                yield Select(
                    [(plain(g.title), g.name) for g in self.games.values()],
                    value=self.game.name,
                    allow_blank=False,
                    id="game",
                    compact=True,
                )
            with Horizontal(classes="form-row"):
                yield Label("Your seat", classes="form-label")
                yield Select(seat_options(self.game, 2), value=0, allow_blank=False, id="seat", compact=True)
            with VerticalScroll(id="challenge-fields"):
                yield Vertical(id="options")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Challenge", variant="primary", id="submit")
                yield Button("Cancel", id="cancel")

    async def on_mount(self) -> None:
        """Build the first game's fields."""
        await self._rebuild()
        self.query_one("#game", Select).focus()

    async def _rebuild(self) -> None:
        """The option rows of the chosen game and its seats."""
        async with self._building:
            container = self.query_one("#options", Vertical)
            await container.remove_children()
            await container.mount_all(option_rows(self.game))
            self._seats()

    def _seats(self) -> None:
        """The seat selector follows the seat count the options give."""
        selector = self.query_one("#seat", Select)
        count = self.game.seat_count(self._raw_values())
        entries = seat_options(self.game, count)
        keep = selector.value if selector.value in {v for _, v in entries} else 0
        selector.set_options(entries)
        selector.value = keep
        # The selector redraws its choice only when its value changes: seat 0 of Othello after seat 0 of Connect
        # Four would still read "red". Redraw it from the new entries.
        selector.mutate_reactive(Select.value)  # type: ignore[misc]  # one descriptor for every Select[T]

    def _raw_values(self) -> dict[str, Any]:
        """Each option's field value, where it parses."""
        values: dict[str, Any] = {}
        for spec in self.game.options:
            matches = self.query(f"#opt-{spec.name}")
            if matches:
                try:
                    values[spec.name] = option_value(spec, matches.first())
                except ValueError:
                    continue
        return values

    def plan(self) -> ChallengePlan:
        """The challenge the form describes (a random seat drawn now); ValueError naming a bad field."""
        options: dict[str, Any] = {}
        for spec in self.game.options:
            value = option_value(spec, self.query_one(f"#opt-{spec.name}"))
            if value is not None and value != spec.default:
                options[spec.name] = value
        seat = self.query_one("#seat", Select).value
        if not isinstance(seat, int) or seat == RANDOM_SEAT:
            seat = random.randrange(self.game.seat_count(options))
        return ChallengePlan(self.target.name, self.game.name, options, seat)

    @on(Select.Changed, "#game")
    async def _game_changed(self, event: Select.Changed) -> None:
        """Another game: its options and seats."""
        event.stop()
        if event.value in self.games and event.value != self.game.name:
            self.game = self.games[str(event.value)]
            await self._rebuild()

    @on(Select.Changed, "#options Select")
    def _option_changed(self, event: Select.Changed) -> None:
        """An option may change the number of seats; a time-control preset fills the clock fields."""
        event.stop()
        if event.select.id == "preset":
            apply_preset(self, event.value)
        self._seats()


class OfferScreen(ModalScreen[bool | None]):
    """A challenge (or invite) offered to me: accept (y) or decline (n); it closes by itself once the offer ends."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Accept"),
        Binding("n,escape", "answer(False)", "Decline"),
    ]

    def __init__(self, offer: Offer, text: str) -> None:
        super().__init__()
        self.offer = offer
        self.text = text
        self.deadline = time.monotonic() + offer.expires_ms / 1000
        self.ended = False  # the server ended the offer while another screen covered this one

    def compose(self) -> ComposeResult:
        """The offer, its countdown and the two answers."""
        with Vertical(classes="dialog", id="offer"):
            if self.offer.tournament is not None:
                title = "A tournament invitation"
            else:
                title = "An invitation" if self.offer.room is not None else "A challenge"
            yield Label(title, classes="dialog-title")
            yield Static(plain(self.text), id="offer-text")
            yield Static(id="offer-expiry")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Accept (y)", variant="primary", id="accept")
                yield Button("Decline (n)", id="decline")

    def on_mount(self) -> None:
        """Start the countdown; the safe button has the focus."""
        self._countdown()
        self.set_interval(1.0, self._countdown)
        self.query_one("#decline", Button).focus()

    def _countdown(self) -> None:
        """How long the offer stands (the server's word ends it: `withdraw` closes this dialog)."""
        left = max(0, round(self.deadline - time.monotonic()))
        self.query_one("#offer-expiry", Static).update(f"It expires in {left} s unless you answer.")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Answer by button."""
        event.stop()
        self.dismiss(event.button.id == "accept")

    def action_answer(self, accept: bool) -> None:
        """Answer by key."""
        self.dismiss(accept)

    def withdraw(self) -> None:
        """The offer ended (expired, withdrawn, the challenger left): close without an answer, now if this
        dialog is on top, else as soon as it is."""
        self.ended = True
        if self.is_current:
            self.dismiss(None)

    def on_screen_resume(self) -> None:
        """Back on top: an offer that ended meanwhile closes."""
        if self.ended:
            self.dismiss(None)


@dataclass(frozen=True, slots=True)
class InvitePlan:
    """Which open seat to offer to whom."""

    seat: int
    to: str


class InviteScreen(ModalScreen[InvitePlan | None]):
    """Offer an open seat of my room to an online player who takes challenges for its game (bots first)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "submit", "Invite"),
    ]

    def __init__(self, seats: list[tuple[str, int]], takers: list[PlayerInfo]) -> None:
        super().__init__()
        self.seats = seats
        self.takers = takers

    def compose(self) -> ComposeResult:
        """The seat and player selectors, and the buttons."""
        with Vertical(classes="dialog", id="invite-dialog"):
            yield Label("Invite a player into this room", classes="dialog-title")
            with Horizontal(classes="form-row"):
                yield Label("Seat", classes="form-label")
                yield Select(
                    [(plain(label), seat) for label, seat in self.seats],
                    value=self.seats[0][1],
                    allow_blank=False,
                    id="invite-seat",
                    compact=True,
                )
            with Horizontal(classes="form-row"):
                yield Label("Player", classes="form-label")
                yield Select(
                    [(plain(player_label(p)), p.name) for p in self.takers],
                    value=self.takers[0].name,
                    allow_blank=False,
                    id="invite-to",
                    compact=True,
                )
            with Horizontal(classes="dialog-buttons"):
                yield Button("Invite", variant="primary", id="submit")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        """The player selector has the focus."""
        self.query_one("#invite-to", Select).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Invite or cancel."""
        event.stop()
        if event.button.id == "submit":
            self.action_submit()
        else:
            self.action_cancel()

    def action_submit(self) -> None:
        """Close with the seat and the player chosen."""
        seat, to = self.query_one("#invite-seat", Select).value, self.query_one("#invite-to", Select).value
        if isinstance(seat, int) and isinstance(to, str):
            self.dismiss(InvitePlan(seat, to))

    def action_cancel(self) -> None:
        """Close without inviting."""
        self.dismiss(None)
