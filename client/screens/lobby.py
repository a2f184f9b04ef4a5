"""The lobby: a live table of the server's rooms, the ways into a game (new vs AI, create, join, watch), and
who is online (bots marked) with the way to challenge them.

Whenever the lobby is shown it asks the server for the lobby's pushes (and a fresh first page); entering a room
stops them (a dialog or the history over the lobby does not). The table holds the pages loaded so far: `m`, or the
cursor reaching the last row, loads the next page.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, DataTable, Footer, Header, Label, Static

from gamenight.client.bindings import refresh_keys
from gamenight.client.config import remember_quick
from gamenight.client.messages import (
    Challenge,
    CreateRoom,
    JoinRoom,
    ModelChanged,
    Moderate,
    MoreRooms,
    OpenHistory,
    QuickGame,
    RefreshPlayers,
    RefreshRooms,
    WatchLobby,
    Withdraw,
)
from gamenight.client.model import RoomPlan, options_summary, seats_summary
from gamenight.client.plain import plain
from gamenight.client.presence import games_text, player_label
from gamenight.client.screens.admin import AdminPlan, AdminScreen
from gamenight.client.screens.base import GameNightScreen
from gamenight.client.screens.challenge import ChallengePlan, ChallengeScreen
from gamenight.client.screens.create import CreateRoomScreen
from gamenight.client.screens.dialogs import HelpScreen, RoomCodeScreen
from gamenight.client.screens.quick import QuickChoice, QuickMenuScreen, last_quick
from gamenight.client.screens.ratings import PlayerNameScreen, ShowLeaderboard, ShowPlayerCard
from gamenight.client.screens.tournaments import ShowTournaments
from gamenight.protocol.vocab import Role, RoomStatus

COLUMNS = (
    ("room", "Room"),
    ("game", "Game"),
    ("status", "Status"),
    ("seats", "Players"),
    ("watching", "Watching"),
    ("options", "Options"),
)
PLAYER_COLUMNS = (("player", "Player"), ("takes", "Takes challenges"), ("now", "Now"))
NO_PLAYERS_TEXT = "Nobody else is online."
EMPTY_TEXT = "No rooms yet. Press [b]n[/b] for a game against the AI, or [b]c[/b] to open a room for friends."


class LobbyScreen(GameNightScreen):
    """The rooms of the server, updated as they open, fill, start and close."""

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]  # noqa: RUF012 (Screen declares it per instance)
    """Under 110 columns the online list goes under the rooms (class "-narrow", gamenight.tcss)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "new_game", "Quick game vs AI"),
        Binding("c", "create", "Create"),
        Binding("j", "join", "Join", key_display="enter/j"),
        Binding("s", "spectate", "Watch"),
        Binding("o", "code", "Code"),
        Binding("h", "history", "History"),
        Binding("p", "challenge", "Challenge"),
        Binding("w", "withdraw", "Withdraw"),
        Binding("l", "leaderboard", "Ratings"),
        Binding("t", "tournaments", "Tournaments"),
        Binding("i", "player_card", "Player card", show=False),
        Binding("a", "admin", "Admin"),
        Binding("r", "refresh", "Refresh", show=False),
        Binding("m", "more_rooms", "More rooms", show=False),
        Binding("f1", "help", "Help"),
        Binding("question_mark", "help", show=False),
        Binding("q", "app.quit", "Quit"),
    ]

    def compose(self) -> ComposeResult:
        """Header, greeting, the rooms table beside who is online, the buttons and the footer."""
        yield Header()
        yield Static(id="lobby-intro")
        with Horizontal(id="lobby-body"):
            with Vertical(id="rooms-box"):
                table: DataTable[Text | str] = DataTable(id="rooms", cursor_type="row", zebra_stripes=True)
                for key, label in COLUMNS:
                    table.add_column(label, key=key)
                yield table
                yield Static(EMPTY_TEXT, id="no-rooms")
            with Vertical(id="online"):
                yield Label("Online", classes="side-heading")
                players: DataTable[Text | str] = DataTable(id="players", cursor_type="row")
                for key, label in PLAYER_COLUMNS:
                    players.add_column(label, key=key)
                yield players
                yield Static(NO_PLAYERS_TEXT, id="no-players")
                yield Static(id="pending")
        with Horizontal(id="lobby-buttons"):
            yield Button("Quick (n)", variant="primary", id="new_game", compact=True)
            yield Button("Create (c)", id="create", compact=True)
            yield Button("Join (j)", id="join", compact=True)
            yield Button("Watch (s)", id="spectate", compact=True)
            yield Button("Code (o)", id="code", compact=True, classes="wide-only")
            yield Button("History (h)", id="history", compact=True, classes="wide-only")
            yield Button("Challenge (p)", id="challenge", compact=True)
        yield Footer()

    watching = False  # the lobby asked for the server's lobby pushes (it is shown)

    def on_mount(self) -> None:
        """Fill the tables and put the cursor in the rooms."""
        self.refresh_rooms()
        self.refresh_players()
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
        """Redraw when the games, rooms, online players or challenges changed; a new connection asks for the
        lobby's pushes again; entering a room stops them."""
        if event.changes.entered is not None:
            self._watch(False)
        elif event.changes.welcomed and self.watching:
            self._watch(True, again=True)
        if event.changes.lobby:
            self.refresh_rooms()
        if event.changes.players or event.changes.challenges or event.changes.lobby:
            self.refresh_players()

    def refresh_rooms(self) -> None:
        """Redraw the table from the client state's lobby, keeping the cursor on the same room."""
        lobby = self.model.lobby
        name = self.model.name or "?"
        online = f", {lobby.counts.online} online" if lobby.counts is not None else ""
        intro = Text.assemble("Hello ", (name, "bold"), " — ")  # my name as typed, never read as markup
        if lobby.has_more:
            intro.append(f"{lobby.total} room(s) listed, {len(lobby.rooms)} shown (").append("m", style="bold")
            intro.append(" for more)")
        else:  # a finished room (its players may still ask for a rematch) is listed, but not open
            finished = sum(1 for s in lobby.rooms.values() if s.status == RoomStatus.FINISHED)
            intro.append(f"{len(lobby.rooms) - finished} room(s) open" + (f", {finished} finished" if finished else ""))
        intro.append(f"{online}. Press ").append("n", style="bold").append(" to play against the AI right now.")
        self.query_one("#lobby-intro", Static).update(intro)
        table = self.query_one("#rooms", DataTable)
        selected = self.selected_room()
        table.clear()
        for summary in sorted(lobby.rooms.values(), key=lambda s: (s.status != RoomStatus.WAITING, s.room)):
            status = plain(summary.status, style="bold" if summary.status == RoomStatus.WAITING else "")
            table.add_row(
                plain(summary.room, style="bold"),
                plain(lobby.title(summary.game)),
                status,
                plain(seats_summary(summary)),
                plain(summary.spectators),
                plain(options_summary(summary, lobby.games.get(summary.game))),
                key=summary.room,
            )
        if selected in lobby.rooms:
            table.move_cursor(row=table.get_row_index(selected))
        self.query_one("#no-rooms", Static).display = not lobby.rooms

    def refresh_players(self) -> None:
        """Redraw who is online (bots first, marked) and my challenges waiting for an answer."""
        presence, games = self.model.presence, self.model.lobby.games
        table = self.query_one("#players", DataTable)
        selected = self.selected_player()
        table.clear()
        online = presence.online(self.model.name)
        for info in online:
            table.add_row(
                plain(player_label(info), style="bold" if info.games else "dim"),
                plain(games_text(info, self.model.lobby.games)),
                "busy" if info.playing else "free",
                key=info.name,
            )
        if selected is not None and selected in presence.players and selected != self.model.name:
            table.move_cursor(row=table.get_row_index(selected))
        self.query_one("#no-players", Static).display = not online
        waiting = [
            f"Waiting for {p.to} to answer your {p.what}…"
            if p.tournament is not None
            else f"Waiting for {p.to} to answer your {games[p.game].title if p.game in games else p.game} challenge…"
            for p in presence.pending.values()
            if p.room is None
        ]
        pending = self.query_one("#pending", Static)
        text = plain("\n".join(waiting))
        if waiting:
            text.append("\nw", style="bold").append(" withdraws")
        pending.update(text)
        pending.display = bool(waiting)
        refresh_keys(self)

    def selected_room(self) -> str | None:
        """The code of the room under the table's cursor."""
        return _selected(self.query_one("#rooms", DataTable))

    def selected_player(self) -> str | None:
        """The name of the player under the online list's cursor."""
        return _selected(self.query_one("#players", DataTable))

    # -- actions ------------------------------------------------------------------------------------------
    def action_new_game(self) -> None:
        """The quick menu: a game against the AI in three choices (the last ones offered again)."""
        games = list(self.model.lobby.games.values())
        if not games:
            self.notify("Not connected to a server yet", severity="warning")
            return
        self.app.push_screen(QuickMenuScreen(games, last_quick()), self._quick_chosen)

    def _quick_chosen(self, choice: QuickChoice | None) -> None:
        """Remember the quick menu's choice and start that game."""
        if choice is None:
            return
        remember_quick({"game": choice.game, "level": choice.level, "preset": choice.preset})
        self.post_message(QuickGame(choice.plan(self.model.lobby.games.get(choice.game))))

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

    def action_tournaments(self) -> None:
        """Open the tournaments list (client/screens/tournaments.py)."""
        self.post_message(ShowTournaments())

    def action_leaderboard(self) -> None:
        """Open the leaderboards (client/screens/ratings.py)."""
        self.post_message(ShowLeaderboard())

    def action_player_card(self) -> None:
        """Ask whose card to show, then show it."""
        self.app.push_screen(PlayerNameScreen(), self._card_for)

    def _card_for(self, name: str | None) -> None:
        """Show the card of the player named in the dialog."""
        if name:
            self.post_message(ShowPlayerCard(name))

    def action_refresh(self) -> None:
        """Ask the server for the room list and who is online again."""
        self.post_message(RefreshRooms())
        self.post_message(RefreshPlayers())

    def action_challenge(self) -> None:
        """Challenge the player selected in the online list to one of the games they take challenges for."""
        name = self.selected_player()
        info = self.model.presence.players.get(name) if name is not None else None
        if info is None:
            self.notify("Nobody selected — pick a player in the online list (Tab moves there)", severity="warning")
            return
        lobby = self.model.lobby
        games = [lobby.games[g] for g in info.games if g in lobby.games]
        if not games:
            self.notify(f"{info.name} does not take challenges", severity="warning")
            return
        self.app.push_screen(ChallengeScreen(info, games), self._challenge_chosen)

    def _challenge_chosen(self, plan: ChallengePlan | None) -> None:
        """The challenge form closed: send the challenge (nothing if cancelled)."""
        if plan is not None:
            self.post_message(Challenge(plan.to, plan.game, plan.options, plan.seat))

    def action_withdraw(self) -> None:
        """Take back my challenges waiting for an answer (to the selected player, else all of them)."""
        presence = self.model.presence
        name = self.selected_player()
        mine = [p for p in presence.pending.values() if p.room is None]
        chosen = [p for p in mine if p.to == name] or mine
        for pending in chosen:
            self.post_message(Withdraw(pending.id))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Withdraw shows only while a challenge of mine waits for an answer; Admin only to the server's admins."""
        if action == "withdraw":
            return any(p.room is None for p in self.model.presence.pending.values())
        if action == "admin":
            return self.model.admin
        return True

    def action_admin(self) -> None:
        """Admins: act on the player selected in the online list (when it has the focus), else on the selected room."""
        players = self.query_one("#players", DataTable)
        name, code = self.selected_player(), self.selected_room()
        if players.has_focus and name is not None:
            self.app.push_screen(AdminScreen(name=name), self._admin_chosen)
        elif code is not None:
            self.app.push_screen(AdminScreen(room=code), self._admin_chosen)
        else:
            self.notify("Select a player in the online list (Tab moves there) or a room", severity="warning")

    def _admin_chosen(self, plan: AdminPlan | None) -> None:
        """The admin dialog closed: send the action (nothing if cancelled)."""
        if plan is not None:
            self.post_message(
                Moderate(plan.action, plan.reason, plan.target, plan.room, plan.duration_s, plan.since, plan.until)
            )

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
        """Enter on a room joins it; on a player, challenges them."""
        event.stop()
        if event.data_table.id == "players":
            self.action_challenge()
        else:
            self.action_join()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """The buttons run the same actions as the keys."""
        event.stop()
        action = getattr(self, f"action_{event.button.id}", None)
        if action is not None:
            action()


def _selected(table: DataTable[Text | str]) -> str | None:
    """The key of the row under a table's cursor."""
    if not table.row_count or not table.is_valid_row_index(table.cursor_row):
        return None
    key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
    return str(key.value) if key.value is not None else None
