"""Boards that read at any size: Pentago marks the quadrant the last move turned, the boards grow their cells on a
big terminal, and the lobby keeps its Status and Players columns and its buttons at 80x24."""

from __future__ import annotations

from typing import ClassVar

from textual.app import App, ComposeResult
from textual.widgets import Button, DataTable

from gamenight.client.app import GameNightApp
from gamenight.client.widgets.board import Position, fit_grid
from gamenight.client.widgets.pentago import PentagoBoard, fit_layout
from gamenight.server.games.pentago import Pentago, parse_notation
from tests.client.conftest import BOARDS_CSS
from tests.client.recorded import welcome, wire
from tests.client.test_snapshots import LOBBY_PLAYERS, LOBBY_ROOMS


class PentagoApp(App[None]):
    """A Pentago board alone, given a position."""

    CSS_PATH: ClassVar[list[str]] = [BOARDS_CSS]

    def __init__(self, position: Position) -> None:
        super().__init__()
        self.start = position

    def compose(self) -> ComposeResult:
        yield PentagoBoard()

    def on_mount(self) -> None:
        self.query_one(PentagoBoard).position = self.start


def after(moves: tuple[str, ...]) -> Position:
    """The position after `moves`, the last one shown as the last move."""
    game = Pentago()
    state = game.initial_state({})
    for move in moves:
        state = game.apply(state, {state.turn: parse_notation(move)})
    return Position(view=game.view(state), last_move=moves[-1], seat=0, can_move=False)


async def test_pentago_marks_the_quadrant_the_last_move_turned():
    """After "b3 tr cw" the top-right quadrant is drawn in the "turned" colour and its ↻ marker is lit."""
    app = PentagoApp(after(("b3 tr cw",)))
    async with app.run_test(size=(60, 30)) as pilot:
        await pilot.pause()
        board = app.query_one(PentagoBoard)
        assert board.shown()[2] == 1 and board.last_turn() == (1, "cw")
        layout = board.layout_now
        turned = board.get_component_rich_style("pentago-board--turned").bgcolor
        plain = board.get_component_rich_style("pentago-board--quadrant").bgcolor
        line = board.render_line(layout.cell_y(0))
        assert turned in {s.style.bgcolor for s in line if s.style is not None} and turned != plain
        marker_line = layout.marker_line(1)[0]
        lit = board.get_component_rich_style("pentago-board--marker-on")
        cw_marker = [s for s in board.render_line(marker_line) if s.text == " ↻ "]
        assert any(s.style == lit for s in cw_marker)


def test_boards_grow_their_cells_on_a_big_terminal():
    """An 8x8 Othello board gets 11x5 cells on a big terminal and keeps small ones at 80x24; Pentago too."""
    assert fit_grid(8, 8, 160, 50, 3, 1).size == (11, 5)
    assert fit_grid(8, 8, 46, 20, 3, 1).size == (5, 2)
    assert fit_layout(160, 50).size == (11, 5)


async def test_lobby_at_80x24_keeps_status_players_and_buttons():
    """At 80x24 the online list goes under the rooms: the Status and Players columns and every shown button fit."""
    app = GameNightApp(None, "ann")
    async with app.run_test(size=(80, 24)) as pilot:
        await app.receive(welcome(LOBBY_ROOMS))
        await app.receive(wire("players", players=LOBBY_PLAYERS))
        await pilot.pause()
        screen = app.screen
        rooms = screen.query_one("#rooms", DataTable)
        widths = [column.get_render_width(rooms) for column in rooms.ordered_columns]
        assert sum(widths[:4]) <= rooms.size.width  # Room, Game, Status, Players
        assert screen.query_one("#online").region.y > rooms.region.y
        shown = [b for b in screen.query("#lobby-buttons Button").results(Button) if b.display]
        assert {b.id for b in shown} >= {"new_game", "create", "join", "spectate", "challenge"}
        assert all(b.region.right <= 80 and b.region.width for b in shown)
