"""Tournaments in the TUI: the list (from the lobby), the form that hosts one, and a tournament's screen.

The tournament screen shows the standings table (the final table once it is over), the games with their rooms
(`w` watches the selected one) and the countdown to the start or the end; your own games start by themselves:
the server seats you and the client opens the game as for any `joined`. The screens post `SendTournament`
(the app sends the request; replies and pushes land in `ClientState.tournaments`) and `OpenTournament`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Footer, Header, Input, Label, Select, Static, Switch

from gamenight.client.bindings import refresh_keys
from gamenight.client.messages import JoinRoom, ModelChanged
from gamenight.client.plain import plain
from gamenight.client.screens.base import GameNightScreen
from gamenight.client.screens.create import TIME_PRESETS, clocked, preset_row
from gamenight.client.screens.dialogs import ConfirmScreen
from gamenight.client.state import ClientState
from gamenight.protocol.messages import (
    CancelTournament,
    CreateTournament,
    GetTournament,
    JoinTournament,
    LeaveTournament,
    ListTournaments,
    TournamentInfo,
)
from gamenight.protocol.vocab import Role

KINDS = (("Round robin", "round_robin"), ("Arena", "arena"))
STATUS = {"waiting": "starts soon", "running": "running", "finished": "finished", "cancelled": "cancelled"}
STANDING_COLUMNS = (("rank", "#"), ("player", "Player"), ("points", "Points"), ("tb", "Tie-break"), ("wdl", "W-D-L"))
GAME_COLUMNS = (("n", "#"), ("players", "Players"), ("room", "Room"), ("result", "Result"))


class ReplayTournamentGame(Message):
    """Find a finished tournament game in the history (by its room and players) and replay it."""

    def __init__(self, room: str, players: tuple[str, ...]) -> None:
        super().__init__()
        self.room = room
        self.players = players


class ShowTournaments(Message):
    """Open the tournaments list."""


class OpenTournament(Message):
    """Open one tournament's screen."""

    def __init__(self, tournament: str) -> None:
        super().__init__()
        self.tournament = tournament


class SendTournament(Message):
    """Send a tournament request (list, get, create, join, leave, cancel); the replies fill the client state."""

    def __init__(
        self,
        request: ListTournaments
        | GetTournament
        | CreateTournament
        | JoinTournament
        | LeaveTournament
        | CancelTournament,
    ):
        super().__init__()
        self.request = request


def points_text(points: float) -> str:
    """Points as people write them: 3, 2½."""
    whole = int(points)
    return f"{whole}½" if points - whole == 0.5 else f"{points:g}"


def game_result(game: dict[str, Any]) -> str:
    """A tournament game's state in words: waiting, playing, or who won."""
    if game.get("places") is None:
        return "playing" if game.get("room") else "waiting"
    places = list(game["places"])
    players = list(game["players"])
    best = min(places)
    first = [p for p, place in zip(players, places, strict=True) if place == best]
    text = f"{first[0]} wins" if len(first) == 1 else "draw" if len(first) == len(players) else " and ".join(first)
    return text + (" (forfeit)" if game.get("forfeit") else "")


class TournamentsScreen(GameNightScreen):
    """The server's tournaments, newest first: Enter opens one, `c` hosts a new one."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open", show=False),
        Binding("c", "create", "Host one"),
        Binding("r", "reload", "Refresh"),
        Binding("escape,b", "back", "Lobby"),
    ]

    def __init__(self, model: ClientState) -> None:
        super().__init__(model)
        self.loaded = False

    def compose(self) -> ComposeResult:
        """Header, the table, a note when there is none, the footer."""
        yield Header()
        table: DataTable[Text | str] = DataTable(id="tournaments", cursor_type="row", zebra_stripes=True)
        for key, label in (("id", "Id"), ("game", "Game"), ("kind", "Kind"), ("status", "Status"), ("who", "Players")):
            table.add_column(label, key=key)
        yield table
        yield Static("No tournaments yet: press c to host one.", id="no-tournaments")
        yield Footer()

    def on_mount(self) -> None:
        """Title and focus (the list is asked for each time the screen is shown)."""
        self.title = "Tournaments"
        self.query_one("#tournaments", DataTable).focus()

    def on_screen_resume(self) -> None:
        """Shown, or shown again (back from a tournament just hosted, say): ask for a fresh list."""
        self.reload()

    def reload(self) -> None:
        """Ask for the list."""
        self.loaded = False
        self.post_message(SendTournament(ListTournaments()))

    def on_model_changed(self, event: ModelChanged) -> None:
        """The list arrived: show it."""
        if event.changes.tournaments and self.model.tournaments.listed is not None:
            self.show_list()

    def show_list(self) -> None:
        """Fill the table."""
        listed = self.model.tournaments.listed
        entries = listed.tournaments if listed is not None else []
        table = self.query_one("#tournaments", DataTable)
        table.clear()
        for t in entries:
            table.add_row(
                plain(t.get("tournament"), style="bold"),
                plain(self.model.lobby.title(str(t.get("game")))),
                "arena" if t.get("kind") == "arena" else "round robin",
                plain(STATUS.get(str(t.get("status")), str(t.get("status")))),
                plain(", ".join(str(e) for e in t.get("entries", []))),
                key=str(t.get("tournament")),
            )
        self.query_one("#no-tournaments", Static).display = not entries
        self.loaded = True

    def action_open(self) -> None:
        """Open the selected tournament."""
        table = self.query_one("#tournaments", DataTable)
        if not table.row_count or not table.is_valid_row_index(table.cursor_row):
            self.notify("No tournament selected", severity="warning")
            return
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        if key.value is not None:
            self.post_message(OpenTournament(str(key.value)))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter opens the tournament."""
        event.stop()
        self.action_open()

    def action_create(self) -> None:
        """The form that hosts a tournament."""
        self.app.push_screen(CreateTournamentScreen(self.model), self._created)

    def _created(self, request: CreateTournament | None) -> None:
        """Send the form's request; the reply opens the new tournament (the app watches for it)."""
        if request is not None:
            self.post_message(SendTournament(request))

    def action_reload(self) -> None:
        """Ask again."""
        self.reload()

    def action_back(self) -> None:
        """Back to the lobby."""
        self.dismiss(None)


class CreateTournamentScreen(ModalScreen[CreateTournament | None]):
    """Game, kind, players (names, "AI level N", "bot NAME"), rated, arena length and start delay."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel"), Binding("ctrl+s", "submit", "Host")]

    def __init__(self, model: ClientState) -> None:
        super().__init__()
        self.model = model

    def compose(self) -> ComposeResult:
        """The fields and the buttons."""
        titles = [(d.title, name) for name, d in self.model.lobby.games.items()] or [("Othello", "othello")]
        games = [(plain(title), name) for title, name in titles]
        with Vertical(classes="dialog", id="tournament-form"):
            yield Label("Host a tournament", classes="dialog-title")
            with Horizontal(classes="form-row"):
                yield Label("Game", classes="form-label")
                yield Select(games, value=games[0][1], allow_blank=False, id="t-game", compact=True)
            with Horizontal(classes="form-row"):
                yield Label("Kind", classes="form-label")
                yield Select(KINDS, value="round_robin", allow_blank=False, id="t-kind", compact=True)
            with Horizontal(classes="form-row"):
                yield Label("Players", classes="form-label")
                yield Input(placeholder="me, AI level 3, bot classic, a friend's name", id="t-players")
            with Horizontal(classes="form-row"):
                yield Label("Arena minutes", classes="form-label")
                yield Input("60", id="t-minutes", type="integer")
            with Horizontal(classes="form-row"):
                yield Label("Starts in (s)", classes="form-label")
                yield Input("0", id="t-start", type="integer")
            yield preset_row("t-time", "each game's clock (games without one ignore it)")
            with Horizontal(classes="form-row"):
                yield Label("Rated", classes="form-label")
                yield Switch(value=False, id="t-rated")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Host", variant="primary", id="submit")
                yield Button("Cancel", id="cancel")

    def request(self) -> CreateTournament:
        """The `create_tournament` the fields describe ("me" is your own name)."""
        me = self.model.name or ""
        names = [n.strip() for n in self.query_one("#t-players", Input).value.split(",") if n.strip()]
        players = [me if n.lower() == "me" else n for n in names]
        kind = str(self.query_one("#t-kind", Select).value)
        minutes = int(self.query_one("#t-minutes", Input).value or 0)
        game = str(self.query_one("#t-game", Select).value)
        preset = self.query_one("#t-time", Select).value
        description = self.model.lobby.games.get(game)
        options: dict[str, Any] = {}
        if description is not None and clocked(description) and isinstance(preset, int):
            options = {name: value for name, value in TIME_PRESETS[preset][1].items() if value}
        return CreateTournament(
            game=game,
            kind=kind,
            options=options,
            rated=self.query_one("#t-rated", Switch).value,
            players=players,
            duration_s=minutes * 60 if kind == "arena" else 0,
            start_in_s=int(self.query_one("#t-start", Input).value or 0),
        )

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Host or cancel."""
        event.stop()
        if event.button.id == "submit":
            self.action_submit()
        else:
            self.dismiss(None)

    def action_submit(self) -> None:
        """Close with the request."""
        self.dismiss(self.request())

    def action_cancel(self) -> None:
        """Close without hosting."""
        self.dismiss(None)


class TournamentScreen(GameNightScreen):
    """One tournament: standings (the final table once over), its games, `w` to watch one, `j`/`x` to enter or leave."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("w", "watch", "Watch game"),
        Binding("v", "replay", "Replay game"),
        Binding("j", "enter", "Enter"),
        Binding("x", "leave", "Leave"),
        Binding("k", "call_off", "Cancel tournament"),
        Binding("r", "reload", "Refresh"),
        Binding("escape,b", "back", "Back"),
    ]

    def __init__(self, model: ClientState, tournament: str) -> None:
        super().__init__(model)
        self.tournament = tournament
        self.shown: TournamentInfo | None = None

    def compose(self) -> ComposeResult:
        """Header, the heading, standings, games, footer."""
        yield Header()
        yield Static("loading…", id="t-heading")
        standings: DataTable[Text | str] = DataTable(id="t-standings", cursor_type="none", zebra_stripes=True)
        for key, label in STANDING_COLUMNS:
            standings.add_column(label, key=key)
        yield standings
        games: DataTable[Text | str] = DataTable(id="t-games", cursor_type="row", zebra_stripes=True)
        for key, label in GAME_COLUMNS:
            games.add_column(label, key=key)
        yield games
        yield Footer()

    def on_mount(self) -> None:
        """Title, focus on the games, and the tournament (its pushes follow)."""
        self.title = f"Tournament {self.tournament}"
        self.query_one("#t-games", DataTable).focus()
        self.show()
        self.action_reload()

    def on_model_changed(self, event: ModelChanged) -> None:
        """A reply or push about this tournament: redraw."""
        if event.changes.tournaments:
            self.show()

    def show(self) -> None:
        """Draw the latest state known."""
        info = self.model.tournaments.known.get(self.tournament)
        if info is None:
            return
        self.shown = info
        refresh_keys(self)  # `k` is the host's while the tournament is on
        self.query_one("#t-heading", Static).update(self._heading(info))  # names as typed, never read as markup
        self._show_standings(info)
        self._show_games(info)

    def _heading(self, info: TournamentInfo) -> Text:
        """What the tournament is, who hosts it, where it stands, and who was invited."""
        kind = "Arena" if info.kind == "arena" else "Round robin"
        when = ""
        if info.status == "waiting" and info.invited:
            when = " · starts once every invitation is answered"
        elif info.status == "waiting":
            when = f" · starts in {info.starts_in_ms // 1000} s"
        elif info.status == "running" and info.ends_in_ms is not None:
            when = f" · ends in {info.ends_in_ms // 1000} s"
        title = "Final standings" if info.status == "finished" else STATUS.get(info.status, info.status)
        rated = " · rated" if info.rated else ""
        heading = plain(f"{kind} of {self.model.lobby.title(info.game)} hosted by {info.host}{rated} — {title}{when}")
        if info.invited:
            heading.append(f"\nInvited, no answer yet: {', '.join(info.invited)}")
        if info.dropped:
            heading.append(f"\nInvited, did not accept: {', '.join(info.dropped)}")
        return heading

    def _show_standings(self, info: TournamentInfo) -> None:
        """The standings table, my row in bold."""
        standings = self.query_one("#t-standings", DataTable)
        standings.clear()
        for row in info.standings:
            name = plain(str(row.get("player")) + (" (left)" if row.get("left") else ""))
            if row.get("streak"):
                name.append(" 🔥")
            if row.get("player") == self.model.name:
                name.stylize("bold")
            standings.add_row(
                plain(row.get("rank")),
                name,
                points_text(float(row.get("points", 0))),
                f"{float(row.get('tie_break', 0)):g}",
                plain(f"{row.get('wins', 0)}-{row.get('draws', 0)}-{row.get('losses', 0)}"),
            )

    def _show_games(self, info: TournamentInfo) -> None:
        """The games table, keeping the selected row."""
        games = self.query_one("#t-games", DataTable)
        cursor = games.cursor_row
        games.clear()
        for n, game in enumerate(info.games):
            games.add_row(
                str(n + 1),
                plain(" vs ".join(str(p) for p in game.get("players", []))),
                plain(game.get("room") or "—"),
                plain(game_result(game)),
                key=str(n),
            )
        if games.row_count and games.is_valid_row_index(cursor):
            games.move_cursor(row=cursor)

    def action_watch(self) -> None:
        """Watch the selected game (a game not started has no room yet)."""
        info = self.shown
        games = self.query_one("#t-games", DataTable)
        if info is None or not games.row_count or not games.is_valid_row_index(games.cursor_row):
            self.notify("No game selected", severity="warning")
            return
        room = info.games[games.cursor_row].get("room")
        if not room:
            self.notify("That game has not started yet", severity="warning")
            return
        self.post_message(JoinRoom(str(room), Role.SPECTATOR))

    def action_replay(self) -> None:
        """Replay the selected game, once it is over."""
        info = self.shown
        games = self.query_one("#t-games", DataTable)
        if info is None or not games.row_count or not games.is_valid_row_index(games.cursor_row):
            self.notify("No game selected", severity="warning")
            return
        game = info.games[games.cursor_row]
        if not game.get("room") or game.get("places") is None or game.get("forfeit"):
            self.notify("That game has not been played to its end yet", severity="warning")
            return
        self.post_message(ReplayTournamentGame(str(game["room"]), tuple(str(p) for p in game["players"])))

    def action_enter(self) -> None:
        """Enter the tournament."""
        self.post_message(SendTournament(JoinTournament(tournament=self.tournament)))

    def action_leave(self) -> None:
        """Leave the tournament."""
        self.post_message(SendTournament(LeaveTournament(tournament=self.tournament)))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`k` (call the tournament off) only for its host, while it is not over."""
        if action == "call_off":
            info = self.shown
            return info is not None and info.host == self.model.name and info.status in ("waiting", "running")
        return True

    def action_call_off(self) -> None:
        """Ask the host to confirm, then cancel the tournament."""
        question = "Cancel this tournament? No further game starts, and a game in play counts for nothing."
        self.app.push_screen(ConfirmScreen(question, yes="Cancel it", no="Keep it"), self._call_off)

    def _call_off(self, yes: bool | None) -> None:
        """The host's answer."""
        if yes:
            self.post_message(SendTournament(CancelTournament(tournament=self.tournament)))

    def action_reload(self) -> None:
        """Ask for the tournament again."""
        self.post_message(SendTournament(GetTournament(tournament=self.tournament)))

    def action_back(self) -> None:
        """Back to the list."""
        self.dismiss(None)
