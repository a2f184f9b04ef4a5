"""The lobby: a live table of the server's rooms, and the ways into a game (new vs AI, create, join, watch).

Whenever the lobby is shown it asks the server for the lobby's pushes (and a fresh first page); entering a room
stops them (a dialog or the history over the lobby does not). The table holds the pages loaded so far: `m`, or the
cursor reaching the last row, loads the next page.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import Button, DataTable, Footer, Header, Static

from gamenight.client.messages import (
    CreateRoom,
    JoinRoom,
    ModelChanged,
    MoreRooms,
    OpenHistory,
    QuickGame,
    RefreshRooms,
    WatchLobby,
)
from gamenight.client.model import RoomPlan, options_summary, seats_summary
from gamenight.client.screens.base import GameNightScreen
from gamenight.client.screens.create import CreateRoomScreen
from gamenight.client.screens.dialogs import HelpScreen, RoomCodeScreen
from gamenight.protocol.vocab import Role, RoomStatus

COLUMNS = (
    ("room", "Room"),
    ("game", "Game"),
    ("status", "Status"),
    ("seats", "Players"),
    ("watching", "Watching"),
    ("options", "Options"),
)
EMPTY_TEXT = "No rooms yet. Press [b]n[/b] for a game against the AI, or [b]c[/b] to open a room for friends."


class LobbyScreen(GameNightScreen):
    """The rooms of the server, updated as they open, fill, start and close."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "new_game", "New vs AI"),
        Binding("c", "create", "Create"),
        Binding("j", "join", "Join", key_display="enter/j"),
        Binding("s", "spectate", "Watch"),
        Binding("o", "code", "Code"),
        Binding("h", "history", "History"),
        Binding("r", "refresh", "Refresh", show=False),
        Binding("m", "more_rooms", "More rooms", show=False),
        Binding("f1", "help", "Help"),
        Binding("q", "app.quit", "Quit"),
    ]

    def compose(self) -> ComposeResult:
        """Header, greeting, the rooms table, the buttons and the footer."""
        yield Header()
        yield Static(id="lobby-intro")
        table: DataTable[Text | str] = DataTable(id="rooms", cursor_type="row", zebra_stripes=True)
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        yield table
        yield Static(EMPTY_TEXT, id="no-rooms")
        with Horizontal(id="lobby-buttons"):
            yield Button("New vs AI (n)", variant="primary", id="new_game", compact=True)
            yield Button("Create (c)", id="create", compact=True)
            yield Button("Join (j)", id="join", compact=True)
            yield Button("Watch (s)", id="spectate", compact=True)
            yield Button("Code (o)", id="code", compact=True)
            yield Button("History (h)", id="history", compact=True)
        yield Footer()

    watching = False  # the lobby asked for the server's lobby pushes (it is shown)

    def on_mount(self) -> None:
        """Fill the table and put the cursor in it."""
        self.refresh_rooms()
        self.query_one("#rooms", DataTable).focus()

    def on_screen_resume(self) -> None:
        """Shown (again): ask for the lobby's pushes and a fresh first page."""
        self._watch(True)

    def _watch(self, on: bool, again: bool = False) -> None:
        """Tell the app to turn the lobby's pushes on or off (`again`: ask even if it already did)."""
        if on != self.watching or again:
            self.watching = on
            self.post_message(WatchLobby(on))

    def on_model_changed(self, event: ModelChanged) -> None:
        """Redraw when the games or rooms changed; a new connection asks for the pushes again; entering a room
        stops them."""
        if event.changes.entered is not None:
            self._watch(False)
        elif event.changes.welcomed and self.watching:
            self._watch(True, again=True)
        if event.changes.lobby:
            self.refresh_rooms()

    def refresh_rooms(self) -> None:
        """Redraw the table from the client state's lobby, keeping the cursor on the same room."""
        lobby = self.model.lobby
        name = self.model.name or "?"
        shown = f"{len(lobby.rooms)} room(s) open"
        if lobby.has_more:
            shown = f"{lobby.total} room(s) open, {len(lobby.rooms)} shown ([b]m[/b] for more)"
        online = f", {lobby.counts.online} online" if lobby.counts is not None else ""
        self.query_one("#lobby-intro", Static).update(
            f"Hello [b]{name}[/b] — {shown}{online}. Press [b]n[/b] to play Othello against the AI right now."
        )
        table = self.query_one("#rooms", DataTable)
        selected = self.selected_room()
        table.clear()
        for summary in sorted(lobby.rooms.values(), key=lambda s: (s.status != RoomStatus.WAITING, s.room)):
            status = Text(summary.status, style="bold" if summary.status == RoomStatus.WAITING else "")
            table.add_row(
                Text(summary.room, style="bold"),
                lobby.title(summary.game),
                status,
                seats_summary(summary),
                str(summary.spectators),
                options_summary(summary, lobby.games.get(summary.game)),
                key=summary.room,
            )
        if selected in lobby.rooms:
            table.move_cursor(row=table.get_row_index(selected))
        self.query_one("#no-rooms", Static).display = not lobby.rooms

    def selected_room(self) -> str | None:
        """The code of the room under the table's cursor."""
        table = self.query_one("#rooms", DataTable)
        if not table.row_count or not table.is_valid_row_index(table.cursor_row):
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        return str(key.value) if key.value is not None else None

    # -- actions ------------------------------------------------------------------------------------------
    def action_new_game(self) -> None:
        """The fast path: Othello against the AI, now."""
        self.post_message(QuickGame())

    def action_create(self) -> None:
        """Open the create-room form."""
        games = list(self.model.lobby.games.values())
        if not games:
            self.notify("Not connected to a server yet", severity="warning")
            return
        self.app.push_screen(CreateRoomScreen(games), self._created)

    def _created(self, plan: RoomPlan | None) -> None:
        """The form closed: create the room it describes (nothing if cancelled)."""
        if plan is not None:
            self.post_message(CreateRoom(plan))

    def action_join(self) -> None:
        """Sit down in the selected room (any free seat; watching if it is full)."""
        code = self._require_selection()
        if code:
            self.post_message(JoinRoom(code, Role.PLAYER))

    def action_spectate(self) -> None:
        """Watch the selected room."""
        code = self._require_selection()
        if code:
            self.post_message(JoinRoom(code, Role.SPECTATOR))

    def action_code(self) -> None:
        """Ask for a room code and join it."""
        self.app.push_screen(RoomCodeScreen(), self._code_given)

    def _code_given(self, code: str | None) -> None:
        """Join the room whose code was typed."""
        if code:
            self.post_message(JoinRoom(code, Role.PLAYER))

    def action_history(self) -> None:
        """Open the history of finished games (and their replays)."""
        self.post_message(OpenHistory())

    def action_refresh(self) -> None:
        """Ask the server for the room list again."""
        self.post_message(RefreshRooms())

    def action_more_rooms(self) -> None:
        """Load the next page of rooms (the server lists more than the table holds)."""
        if self.model.lobby.has_more:
            self.post_message(MoreRooms())
        else:
            self.notify("Every room is shown", timeout=3)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Scrolling to the last row loads the next page, if there is one."""
        table = event.data_table
        if table.id == "rooms" and event.cursor_row == table.row_count - 1 and self.model.lobby.has_more:
            self.post_message(MoreRooms())

    def action_help(self) -> None:
        """Show every key."""
        self.app.push_screen(HelpScreen())

    def _require_selection(self) -> str | None:
        """The selected room's code, or a hint that there is none."""
        code = self.selected_room()
        if code is None:
            self.notify("No room selected — press n to start a game against the AI", severity="warning")
        return code

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a row joins it."""
        event.stop()
        self.action_join()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """The buttons run the same actions as the keys."""
        event.stop()
        action = getattr(self, f"action_{event.button.id}", None)
        if action is not None:
            action()
