"""The small modal dialogs: your name, a room code, a yes/no question, the game's result, and help."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Markdown, Static

from gamenight.client.config import MAX_NAME, clean_name
from gamenight.client.plain import plain


class NameScreen(ModalScreen[str]):
    """Asks for the player's name once; it is remembered for next time.

    With `taken` (the name the server refused: someone else claimed it) it says so and offers `suggestion`,
    the free name the server proposed, in the field.
    """

    def __init__(self, taken: str | None = None, suggestion: str | None = None) -> None:
        super().__init__()
        self.taken = taken
        self.suggestion = suggestion

    def compose(self) -> ComposeResult:
        """The dialog's text, field and buttons."""
        with Vertical(classes="dialog"):
            if self.taken is None:
                yield Label("Welcome to gamenight!", classes="dialog-title")
                yield Static("What name should other players see?")
            else:
                yield Label("That name is taken", classes="dialog-title")
                offer = f" {self.suggestion!r} is free: keep it or type another." if self.suggestion else ""
                yield Static(plain(f"Someone else has claimed {self.taken!r} on this server.{offer}"), id="taken")
            yield Input(self.suggestion or "", placeholder="your name", max_length=MAX_NAME, id="name")
            with Horizontal(classes="dialog-buttons"):
                yield Button("OK", variant="primary", id="ok")

    def on_mount(self) -> None:
        """Put the cursor in the field (or on the safe button)."""
        self.query_one("#name", Input).focus()

    def on_input_submitted(self) -> None:
        """Enter confirms."""
        self._confirm()

    def on_button_pressed(self) -> None:
        """OK confirms."""
        self._confirm()

    def _confirm(self) -> None:
        """Close with the name if it is not blank."""
        name = clean_name(self.query_one("#name", Input).value)
        if name:
            self.dismiss(name)
        else:
            self.notify("Please type a name", severity="warning")


class RoomCodeScreen(ModalScreen[str | None]):
    """Asks for the code of a room to join (a friend's private room, say)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def compose(self) -> ComposeResult:
        """The dialog's text, field and buttons."""
        with Vertical(classes="dialog"):
            yield Label("Join a room by its code", classes="dialog-title")
            yield Input(placeholder="e.g. K7QXM", max_length=16, id="code")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Join", variant="primary", id="join")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        """Put the cursor in the field (or on the safe button)."""
        self.query_one("#code", Input).focus()

    def on_input_submitted(self) -> None:
        """Enter joins."""
        self._confirm()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Join or cancel."""
        if event.button.id == "join":
            self._confirm()
        else:
            self.dismiss(None)

    def _confirm(self) -> None:
        """Close with the code typed, if any."""
        code = self.query_one("#code", Input).value.strip().upper()
        self.dismiss(code or None)

    def action_cancel(self) -> None:
        """Close without joining."""
        self.dismiss(None)


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question (y / n / Esc)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    def __init__(self, question: str, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self.question = question
        self.yes, self.no = yes, no

    def compose(self) -> ComposeResult:
        """The dialog's text, field and buttons."""
        with Vertical(classes="dialog"):
            yield Static(self.question, classes="dialog-title")
            with Horizontal(classes="dialog-buttons"):
                yield Button(self.yes, variant="error", id="yes")
                yield Button(self.no, variant="primary", id="no")

    def on_mount(self) -> None:
        """Put the cursor in the field (or on the safe button)."""
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Answer by button."""
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        """Answer by key."""
        self.dismiss(yes)


REMATCH, LOBBY, STAY, REVIEW = "rematch", "lobby", "stay", "review"


class GameOverScreen(ModalScreen[str]):
    """The result and why; closes with "rematch", "lobby", "review" (the game's review) or "stay" (look at the final
    board)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "choose('rematch')", "Rematch"),
        Binding("v", "choose('review')", "Review"),
        Binding("b", "choose('lobby')", "Lobby"),
        Binding("escape", "choose('stay')", "See the board"),
    ]

    def __init__(self, headline: str, detail: str, can_rematch: bool, can_review: bool = False) -> None:
        super().__init__()
        self.headline = headline
        self.detail = detail
        self.can_rematch = can_rematch
        self.can_review = can_review  # the game is one the server reviews (issue 36)

    def compose(self) -> ComposeResult:
        """The dialog's text, field and buttons."""
        with Vertical(classes="dialog", id="game-over"):
            yield Label(self.headline, classes="dialog-title", id="headline")
            yield Static(plain(self.detail), id="detail")
            with Horizontal(classes="dialog-buttons"):
                if self.can_rematch:
                    yield Button("Rematch (r)", variant="primary", id=REMATCH)
                yield Button("See the board (Esc)", id=STAY)
                if self.can_review:
                    yield Button("Review (v)", id=REVIEW)
                yield Button("Lobby (b)", id=LOBBY)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Close with the button's choice."""
        self.dismiss(event.button.id or STAY)

    def action_choose(self, choice: str) -> None:
        """Close with the key's choice (rematch and review only when they are offered)."""
        if (choice != REMATCH or self.can_rematch) and (choice != REVIEW or self.can_review):
            self.dismiss(choice)


HELP = """\
# gamenight

**Lobby** — `n` new game against the AI · `c` create a room · `Enter`/`j` join the selected room ·
`s` watch it · `o` join by code · `h` history · `l` ratings · `i` a player's card · `t` tournaments · `r` refresh ·
`q` quit

**Tournaments** — `Enter` opens one · `c` hosts one (players: names, `me`, `AI level 3`, `bot classic`) ·
in a tournament `w` watches the selected game, `v` replays it once over, `j` enters, `x` leaves; your games start
by themselves

**Ratings** — `g` next game · `→`/`←` next and previous page · `Enter` the selected player's card · `Esc` back

**Online** — `Tab` to the online list (bots marked `[bot]`) · `p` (or `Enter`) challenges the selected player ·
`w` withdraws your waiting challenge. A challenge to you asks: `y` accepts, `n` declines

**Admin** (the server's admins only) — `a` on the selected player (online list) kicks, mutes or bans them or voids
their recent rated games, on the selected room closes it; say why (the server's audit log keeps it)

**History** — `g` filter by game · `m` only my games · `Enter` replays the selected game · `v` reviews it ·
`Esc` back. **Replay** — `←`/`→` (or `h`/`l`) step back and forth · `PgUp`/`PgDn` ten moves ·
`Home`/`End` jump to the start or the end · `Esc` back to the history. **Review** — as a replay, and `n`/`p` jump
to the next and previous labelled move (`?!` inaccuracy, `?` mistake, `??` blunder); in a Tron review the empty
squares are shaded by the rider that reaches them first, and `n`/`p` jump to the ticks where the lead changed. `v` in
the game-over dialog reviews the game just played

**In a room** — `t` chat · `+`/`-` seat or remove an AI (host, before the start) · `i` invite someone
online into an open seat (host, before the start) · `y` copy the code of a room waiting for a player · `p` the
players' cards (each press the next) · `r` rematch ·
`x` resign · `b` back to the lobby · `F1` or `?` this help · `Ctrl+C` quit

**Othello** — arrows or `hjkl` move the cursor, `Enter` plays; or click a square. Dots mark your legal moves;
the last move and the discs it turned are highlighted.

**Pentago** — pick a square (arrows + `Enter`, or click), then the quadrant to turn with `1`-`4`
(1 top-left, 2 top-right, 3 bottom-left, 4 bottom-right) and the direction with `←` (↺) or `→` (↻) —
or click a ↺ / ↻ marker. The board previews the turn; `Enter` plays it, `Esc` steps back.
A placement that already makes five is played without a turn.

**Connect Four** — `1`-`7` drop into that column; or `←`/`→` (or `h`/`l`) and `Enter`; or click a column.

**Tron** — arrows or `WASD` steer. Turning straight back is ignored. Your rider is the one marked
"(you)" in the player list; avoid walls and every trail. The last one riding wins.
"""


class HelpScreen(ModalScreen[None]):
    """Every key of the client (F1, ?, Esc or q closes)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,f1,question_mark,q", "close", "Close")]

    def compose(self) -> ComposeResult:
        """The dialog's text, field and buttons."""
        with VerticalScroll(classes="dialog", id="help"):
            yield Markdown(HELP)

    def action_close(self) -> None:
        """Close the help."""
        self.dismiss(None)
