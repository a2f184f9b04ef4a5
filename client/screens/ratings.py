"""Ratings in the TUI: the leaderboard of each game (from the lobby) and a player's card (from the leaderboard,
the lobby, or the seats of a game).

The screens post `AskRatings` (the app sends the `leaderboard` or `profile` request and notes its id in the client
state); the reply lands in `ClientState.ratings` and the screens redraw on `ModelChanged` with `changes.ratings`.
`ShowLeaderboard` and `ShowPlayerCard` ask the app to open them.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Footer, Header, Input, Label, Static

from gamenight.client.messages import ModelChanged
from gamenight.client.plain import plain
from gamenight.client.screens.base import GameNightScreen
from gamenight.client.state import ClientState, rating_text
from gamenight.protocol.messages import Leaderboard, Profile

PAGE = 20  # players a leaderboard page shows
FFA_SUFFIX = "-ffa"  # the pool of a game played by more than two (Tron with 3-4 riders)
COLUMNS = (("rank", "#"), ("name", "Player"), ("rating", "Rating"), ("rd", "RD"), ("games", "Games"), ("wdl", "W-D-L"))
CARD_COLUMNS = (("game", "Game"), ("rating", "Rating"), ("rd", "RD"), ("games", "Games"), ("wdl", "W-D-L"))
RECENT_SHOWN = 10


class ShowLeaderboard(Message):
    """Open the leaderboard screen."""


class ShowPlayerCard(Message):
    """Open the card of the player `name`."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name


class AskRatings(Message):
    """Send a leaderboard or profile request; its reply fills the client state's ratings."""

    def __init__(self, request: Leaderboard | Profile) -> None:
        super().__init__()
        self.request = request


def pools_of(model: ClientState) -> list[str]:
    """The leaderboards there are: each game, and "<game>-ffa" for games that seat more than two."""
    found = []
    for name, description in model.lobby.games.items():
        found.append(name)
        if any(o.name == "players" and (o.maximum or 0) > 2 for o in description.options):
            found.append(name + FFA_SUFFIX)
    return found


def pool_title(model: ClientState, pool: str) -> str:
    """A pool as people read it: "Othello", "Tron (3-4 riders)"."""
    if pool.endswith(FFA_SUFFIX):
        return model.lobby.title(pool.removesuffix(FFA_SUFFIX)) + " (3-4 riders)"
    return model.lobby.title(pool)


class LeaderboardScreen(GameNightScreen):
    """One game's players by rating, a page at a time; Enter shows the selected player's card."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "card", "Player card", show=False),
        Binding("g", "next_pool", "Next game"),
        Binding("right,pagedown", "page(1)", "Next page", key_display="→"),
        Binding("left,pageup", "page(-1)", "Previous page", key_display="←"),
        Binding("r", "reload", "Refresh"),
        Binding("escape,b", "back", "Lobby"),
    ]

    def __init__(self, model: ClientState, pool: str | None = None) -> None:
        super().__init__(model)
        self.pools = pools_of(model) or ["othello"]
        self.pool = pool if pool in self.pools else self.pools[0]
        self.page_start = 0
        self.loaded = False  # set once the page asked for last is shown

    def compose(self) -> ComposeResult:
        """Header, the pool's title, the table, a note when it is empty, and the footer."""
        yield Header()
        yield Static("", id="board-title")
        table: DataTable[Text | str] = DataTable(id="leaders", cursor_type="row", zebra_stripes=True)
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        yield table
        yield Static("", id="board-note")
        yield Footer()

    def on_mount(self) -> None:
        """Title, focus on the table, and the first page."""
        self.title = "Leaderboard"
        self.query_one("#leaders", DataTable).focus()
        self.reload()

    def reload(self) -> None:
        """Ask for the page shown."""
        self.loaded = False
        self.query_one("#board-title", Static).update(plain(f"{pool_title(self.model, self.pool)} — loading…"))
        self.post_message(AskRatings(Leaderboard(game=self.pool, offset=self.page_start, limit=PAGE)))

    def on_model_changed(self, event: ModelChanged) -> None:
        """The page asked for arrived (or was refused): show it."""
        if event.changes.ratings:
            self.show_page()

    def show_page(self) -> None:
        """Fill the table from the client state's leaderboard page."""
        ratings = self.model.ratings
        board = ratings.board
        if ratings.board_request is not None or (board is None and ratings.board_error is None):
            return
        table = self.query_one("#leaders", DataTable)
        table.clear()
        note = self.query_one("#board-note", Static)
        title = self.query_one("#board-title", Static)
        if board is None:
            title.update(plain(pool_title(self.model, self.pool)))
            note.update(plain(ratings.board_error or ""))
            note.display = True
            self.loaded = True
            return
        for entry in board.entries:
            name = plain(entry.name + (" (AI)" if entry.kind == "ai" else " (bot)" if entry.kind == "bot" else ""))
            if entry.name == self.model.name:
                name.stylize("bold")
            table.add_row(
                str(entry.rank),
                name,
                rating_text(entry.rating, entry.provisional),
                f"{entry.rd:.0f}",
                str(entry.games),
                f"{entry.wins}-{entry.draws}-{entry.losses}",
                key=entry.name,
            )
        last = board.offset + len(board.entries)
        shown = f"{board.offset + 1}-{last} of {board.total}" if board.entries else f"none of {board.total}"
        title.update(plain(f"{pool_title(self.model, self.pool)} — players {shown}"))
        note.update("No rated games here yet: play a rated game (option 'rated') and it shows up.")
        note.display = board.total == 0
        self.loaded = True

    def selected_name(self) -> str | None:
        """The name of the player under the cursor."""
        table = self.query_one("#leaders", DataTable)
        if not table.row_count or not table.is_valid_row_index(table.cursor_row):
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        return str(key.value) if key.value is not None else None

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a row opens that player's card."""
        event.stop()
        self.action_card()

    def action_card(self) -> None:
        """Open the selected player's card."""
        name = self.selected_name()
        if name is None:
            self.notify("No player selected", severity="warning")
            return
        self.post_message(ShowPlayerCard(name))

    def action_next_pool(self) -> None:
        """The next game's leaderboard, from its top."""
        self.pool = self.pools[(self.pools.index(self.pool) + 1) % len(self.pools)]
        self.page_start = 0
        self.reload()

    def action_page(self, step: int) -> None:
        """The next (1) or previous (-1) page, if there is one."""
        board = self.model.ratings.board
        start = self.page_start + step * PAGE
        if start < 0 or (board is not None and step > 0 and start >= board.total):
            return
        self.page_start = start
        self.reload()

    def action_reload(self) -> None:
        """Ask again (games may have finished)."""
        self.reload()

    def action_back(self) -> None:
        """Back to where it was opened from."""
        self.dismiss(None)


class PlayerCardScreen(ModalScreen[None]):
    """A player's card: their rating in each game (RD, games, W-D-L) and their latest rated games."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,b,enter", "close", "Close")]

    def __init__(self, model: ClientState, name: str) -> None:
        super().__init__()
        self.model = model
        self.player = name
        self.loaded = False

    def compose(self) -> ComposeResult:
        """The card: title, ratings table, recent games, a close button."""
        with Vertical(classes="dialog", id="card"):
            yield Label(plain(self.player), classes="dialog-title", id="card-title")
            table: DataTable[Text | str] = DataTable(id="card-ratings", cursor_type="none", show_cursor=False)
            for key, label in (
                ("game", "Game"),
                ("rating", "Rating"),
                ("rd", "RD"),
                ("games", "Games"),
                ("wdl", "W-D-L"),
            ):
                table.add_column(label, key=key)
            yield table
            yield Static("loading…", id="card-recent")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Close", variant="primary", id="close")

    def on_mount(self) -> None:
        """Ask for the card."""
        self.post_message(AskRatings(Profile(name=self.player)))

    def on_model_changed(self, event: ModelChanged) -> None:
        """The card asked for arrived (or was refused): show it."""
        if event.changes.ratings:
            self.show_card()

    def show_card(self) -> None:
        """Fill the card from the client state."""
        ratings = self.model.ratings
        if ratings.card_request is not None:
            return
        recent = self.query_one("#card-recent", Static)
        if ratings.card is None:
            recent.update(plain(ratings.card_error or "no card"))
            self.loaded = True
            return
        card = ratings.card
        kind = {"ai": " (server AI)", "bot": " (bot)"}.get(card.kind, "")
        self.query_one("#card-title", Label).update(plain(f"{card.name}{kind}"))
        table = self.query_one("#card-ratings", DataTable)
        table.clear()
        for r in card.ratings:
            table.add_row(
                plain(pool_title(self.model, r.pool)),
                rating_text(r.rating, r.provisional),
                f"{r.rd:.0f}",
                str(r.games),
                f"{r.wins}-{r.draws}-{r.losses}",
            )
        lines = ["Latest rated games:"] if card.recent else ["No rated games to show."]
        for game in card.recent[:RECENT_SHOWN]:
            others = [p.get("name") or "?" for p in game.get("players", []) if p.get("seat") != game.get("seat")]
            change = float(game.get("after", 0)) - float(game.get("before", 0))
            lines.append(
                f"#{game.get('game_id')} {pool_title(self.model, str(game.get('pool', '')))}: {game.get('outcome')}"
                f" vs {', '.join(str(o) for o in others)} ({change:+.0f})"
            )
        recent.update(plain("\n".join(lines)))
        self.loaded = True

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Close."""
        event.stop()
        self.dismiss(None)

    def action_close(self) -> None:
        """Close the card."""
        self.dismiss(None)


class PlayerNameScreen(ModalScreen[str | None]):
    """Asks whose card to show (from the lobby)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def compose(self) -> ComposeResult:
        """The dialog's text, field and buttons."""
        with Vertical(classes="dialog"):
            yield Label("Whose card? (a name, or e.g. AI level 3)", classes="dialog-title")
            yield Input(placeholder="name", max_length=64, id="player-name")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Show", variant="primary", id="show")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        """Put the cursor in the field."""
        self.query_one("#player-name", Input).focus()

    def on_input_submitted(self) -> None:
        """Enter shows the card."""
        self._confirm()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Show or cancel."""
        event.stop()
        if event.button.id == "show":
            self._confirm()
        else:
            self.dismiss(None)

    def _confirm(self) -> None:
        """Close with the name typed, if any."""
        self.dismiss(self.query_one("#player-name", Input).value.strip() or None)

    def action_cancel(self) -> None:
        """Close without a name."""
        self.dismiss(None)
