"""The history of finished games (filter by game, or only mine) and the replay viewer that steps through one.

The history posts `LoadHistory` (the app sends `list_games`; the list arrives in the client state) and
`OpenReplay` (the app sends `get_game` and opens the viewer on its reply). A game's frames are the
positions after each move, so the viewer draws them with the live boards (read-only) and needs no
rules of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from rich.cells import cell_len
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, Horizontal, Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import DataTable, Footer, Header, Label, Select, Static, Switch
from textual.widgets.data_table import ColumnKey

from gamenight.client.messages import LoadHistory, ModelChanged, OpenReplay, OpenReview
from gamenight.client.plain import plain
from gamenight.client.replay import Replay
from gamenight.client.screens.base import GameNightScreen
from gamenight.client.state import ClientState
from gamenight.client.widgets import board_spec
from gamenight.client.widgets.board import Position, show_position
from gamenight.client.widgets.clock import ClockView
from gamenight.client.widgets.panel import moves_columns, moves_line_of, seat_chip, seat_text, seats_table
from gamenight.protocol.messages import ListGames
from gamenight.protocol.vocab import EndReason, RoomStatus

ALL_GAMES = "*"
HISTORY_LIMIT = 100
# The result is the widest column, so it goes last: a narrow terminal cuts it, not the date.
COLUMNS = (("id", "#"), ("game", "Game"), ("date", "Finished"), ("players", "Players"), ("result", "Result"))
ID_WIDTH = 4  # game ids get a fixed column (up to 9999), so "2" never runs into "Othello"
NO_GAMES = "No finished games here yet. Finish a game (or change the filters) and it shows up."
MOVES_WIDTH = 30  # the move list's width before the first layout
FAST_STEP = 10  # moves skipped by PageUp / PageDown


class HistoryScreen(GameNightScreen):
    """Finished games, newest first; Enter replays the selected one."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "replay", "Replay", show=False),
        Binding("v", "review", "Review"),
        Binding("g", "next_game", "Game filter"),
        Binding("m", "toggle_mine", "My games"),
        Binding("r", "reload", "Refresh"),
        Binding("escape,b", "back", "Lobby"),
    ]

    def __init__(self, model: ClientState) -> None:
        super().__init__(model)
        self.loaded = False  # set once the list asked for last is shown
        self.asked: ListGames | None = None  # the filters of the list shown (or being fetched)

    def compose(self) -> ComposeResult:
        """Header, the filters, the table of games and the footer."""
        yield Header()
        games = [(plain(info.title), name) for name, info in self.model.lobby.games.items()]
        with Horizontal(id="history-filters"):
            yield Label("Game", classes="filter-label")
            yield Select(
                [("all games", ALL_GAMES), *games], value=ALL_GAMES, allow_blank=False, id="history-game", compact=True
            )
            yield Label("only my games", classes="filter-label")
            yield Switch(value=False, id="history-mine")
        table: DataTable[Text | str] = DataTable(id="games", cursor_type="row", zebra_stripes=True)
        for key, label in COLUMNS:
            table.add_column(label, key=key, width=ID_WIDTH if key == "id" else None)
        yield table
        yield Static(NO_GAMES, id="no-games")
        yield Footer()

    def on_mount(self) -> None:
        """Title, focus on the table, and the first list."""
        self.title = "History"
        self.query_one("#no-games", Static).display = False
        self.query_one("#games", DataTable).focus()
        self.reload()

    # -- the list ---------------------------------------------------------------------------------------
    def query_message(self) -> ListGames:
        """The `list_games` request the filters describe."""
        game = self.query_one("#history-game", Select).value
        mine = self.query_one("#history-mine", Switch).value
        return ListGames(
            player=self.model.name if mine else None, game=None if game == ALL_GAMES else str(game), limit=HISTORY_LIMIT
        )

    def reload(self) -> None:
        """Ask for the games the filters select."""
        self.loaded = False
        self.asked = self.query_message()
        self.post_message(LoadHistory(self.asked))

    def on_model_changed(self, event: ModelChanged) -> None:
        """The list asked for arrived: show it."""
        if event.changes.history and self.model.history.asked == self.asked:
            self.show_games()

    def show_games(self) -> None:
        """Fill the table from the client state's history."""
        lobby = self.model.lobby
        entries = self.model.history.entries
        table = self.query_one("#games", DataTable)
        table.clear()
        rows = [
            (
                plain(entry.game_id, style="bold"),
                plain(lobby.title(entry.game)),
                plain(entry.date_text()),
                plain(entry.players_text()),
                plain(entry.result_text(lobby.games.get(entry.game))),
            )
            for entry in entries
        ]
        for entry, row in zip(entries, rows, strict=True):
            table.add_row(*row, key=str(entry.game_id))
        # Each column as wide as its widest cell, set here: DataTable's own sizing waits for an idle moment of
        # the table, which may come a while later, leaving the columns at their headings' width meanwhile.
        for index, (key, label) in enumerate(COLUMNS):
            if key != "id":
                column = table.columns[ColumnKey(key)]
                column.auto_width = False
                column.width = max([cell_len(label), *(cell_len(str(row[index])) for row in rows)])
        table.refresh(layout=True)
        self.query_one("#no-games", Static).display = not entries
        self.loaded = True

    def selected_game(self) -> int | None:
        """The id of the game under the table's cursor."""
        table = self.query_one("#games", DataTable)
        if not table.row_count or not table.is_valid_row_index(table.cursor_row):
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        return int(key.value) if key.value is not None else None

    # -- actions ------------------------------------------------------------------------------------------
    @on(Select.Changed, "#history-game")
    @on(Switch.Changed, "#history-mine")
    def _filters_changed(self, event: Select.Changed | Switch.Changed) -> None:
        """Another filter: list again (not for the change events of the filters' first values)."""
        event.stop()
        if self.query_message() != self.asked:
            self.reload()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a row replays it."""
        event.stop()
        self.action_replay()

    def action_replay(self) -> None:
        """Open the replay viewer on the selected game."""
        game_id = self.selected_game()
        if game_id is None:
            self.notify("No game selected", severity="warning")
            return
        self.post_message(OpenReplay(game_id))

    def action_review(self) -> None:
        """Open the review screen on the selected game (issue 36)."""
        game_id = self.selected_game()
        if game_id is None:
            self.notify("No game selected", severity="warning")
            return
        self.post_message(OpenReview(game_id))

    def action_next_game(self) -> None:
        """Cycle the game filter: all games, then each game."""
        select = self.query_one("#history-game", Select)
        values = [ALL_GAMES, *self.model.lobby.games]
        current = values.index(select.value) if select.value in values else 0
        select.value = values[(current + 1) % len(values)]

    def action_toggle_mine(self) -> None:
        """Only my games, or everyone's."""
        switch = self.query_one("#history-mine", Switch)
        switch.value = not switch.value

    def action_reload(self) -> None:
        """List again (new games may have finished)."""
        self.reload()

    def action_back(self) -> None:
        """Back to the lobby."""
        self.dismiss(None)


class ReplayScreen(GameNightScreen):
    """One finished game, drawn move by move with the live board (read-only)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left,h", "step(-1)", "Back", key_display="←/h"),
        Binding("right,l", "step(1)", "Forward", key_display="→/l"),
        Binding("pageup", f"step(-{FAST_STEP})", show=False),
        Binding("pagedown", f"step({FAST_STEP})", show=False),
        Binding("home", "jump(0)", "Start"),
        Binding("end", "jump(-1)", "End"),
        Binding("escape,b", "back", "History"),
    ]

    def __init__(self, model: ClientState, replay: Replay) -> None:
        super().__init__(model)
        self.replay = replay
        self.board: Widget | None = None

    def compose(self) -> ComposeResult:
        """Header, the board, a side panel (result, players, where we are, the moves) and the footer."""
        yield Header()
        board = board_spec(self.replay.game).widget(id="board")
        # Read-only: the board never takes focus (its keys would move a cursor) nor posts moves.
        board.can_focus = False
        board.disabled = True
        self.board = board
        with Horizontal(id="game-body"):
            with Container(id="board-area"):
                yield board
            with Vertical(id="side"):
                yield Static(id="replay-result")
                yield Static(id="players")
                yield from self.above_clocks()
                yield ClockView(id="clocks")
                yield Static(id="replay-step")
                yield from self.below_step()
                yield Label("Moves", classes="side-heading")
                with VerticalScroll(id="moves-box", can_focus=False):
                    yield Static(id="moves")
        yield Footer()

    def above_clocks(self) -> ComposeResult:
        """Side-panel widgets between the players and the clocks (none here; the review screen adds its own)."""
        yield from ()

    def below_step(self) -> ComposeResult:
        """Side-panel widgets between the step and the moves (none here)."""
        yield from ()

    def on_mount(self) -> None:
        """Title and the start position."""
        replay = self.replay
        self.title = self.heading()
        self.query_one("#replay-result", Static).update(plain(replay.result_text(), style="bold"))
        self.show_step()

    def heading(self) -> str:
        """The screen's title: "Replay of game 12 · Othello"."""
        return f"Replay of game {self.replay.game_id} · {self.model.lobby.title(self.replay.game)}"

    def on_resize(self) -> None:
        """The move list's columns follow the panel's width."""
        self._show_moves()

    def show_step(self) -> None:
        """Draw the position of the current step, the players' scores there, and the highlighted move."""
        replay = self.replay
        view = replay.view()
        if self.board is not None:
            status = RoomStatus.FINISHED if replay.at_end else RoomStatus.PLAYING
            show_position(self.board, Position(view=view, last_move=replay.last_move, status=status))
        self.query_one("#players", Static).update(self._players(view))
        self._show_clocks()
        self.query_one("#replay-step", Static).update(plain(replay.status_text(), style="italic"))
        self._show_moves()

    def _show_clocks(self) -> None:
        """Every seat's time after this step (games played with a clock); the loser's flag at the end."""
        replay = self.replay
        clock = replay.clock()
        labels = [replay.session.label(seat) for seat in range(len(clock.remaining_ms))] if clock else []
        result = replay.result
        flagged = result.loser if result is not None and result.reason == EndReason.TIME and replay.at_end else None
        self.query_one("#clocks", ClockView).show(clock, labels, flagged, None)

    def _players(self, view: Mapping[str, Any]) -> Table:
        """The seats with their scores at this step."""
        replay = self.replay
        summary = replay.session.summary
        scores = view.get("scores")
        rows = []
        for seat in summary.seats if summary else ():
            score = str(scores[seat.seat]) if isinstance(scores, list) and seat.seat < len(scores) else ""
            rows.append((seat_chip(replay.game, seat.seat), seat_text(seat, mine=False), score, ""))
        return seats_table(rows)

    def _show_moves(self) -> None:
        """The move list with the current move highlighted and scrolled into view."""
        replay = self.replay
        moves = self.query_one("#moves", Static)
        width = moves.content_size.width or MOVES_WIDTH
        moves.update(moves_columns(replay.moves, width, current=replay.step))
        box = self.query_one("#moves-box", VerticalScroll)
        line = moves_line_of(replay.moves, width, replay.step)
        box.scroll_to(y=max(0, line - box.size.height // 2), animate=False)

    def action_step(self, by: int) -> None:
        """Step forward or back."""
        if self.replay.go(self.replay.step + by):
            self.show_step()

    def action_jump(self, where: int) -> None:
        """Jump to the start (0) or the end (-1)."""
        if self.replay.go(self.replay.last if where < 0 else where):
            self.show_step()

    def action_back(self) -> None:
        """Back to the history."""
        self.dismiss(None)
