"""Pilot tests of the Connect Four board on its own: keys and clicks post the right column, full columns are
refused, and the discs, the last disc and the winning four are drawn."""

from __future__ import annotations

from typing import ClassVar

from textual.app import App, ComposeResult

from gamenight.client.messages import MoveChosen
from gamenight.client.widgets.board import Position
from gamenight.client.widgets.connect4 import Connect4Board
from gamenight.server.games.connect4 import ConnectFour, ConnectFourState
from tests.client.conftest import BOARDS_CSS

SIZE = (40, 16)
GAME = ConnectFour()


def state_after(moves: str) -> ConnectFourState:
    """The real state after dropping into the lettered columns."""
    state = GAME.initial_state({})
    for letter in moves:
        state = GAME.apply(state, {state.turn: GAME.parse_move(state, letter)})
    return state


def position_of(moves: str, can_move: bool = True) -> Position:
    """The board's input for the state after `moves`, as the game screen would build it."""
    state = state_after(moves)
    legal = tuple(GAME.legal_notation(state, state.turn))
    return Position(
        view=GAME.view(state), legal=legal, can_move=can_move, last_move=moves[-1:] or None, seat=state.turn
    )


class BoardApp(App[None]):
    """The board alone in a tiny app, given a position; it records every move the board posts."""

    CSS_PATH: ClassVar[list[str]] = [BOARDS_CSS]

    def __init__(self, position: Position) -> None:
        super().__init__()
        self.start = position
        self.chosen: list[str] = []

    def compose(self) -> ComposeResult:
        yield Connect4Board()

    def on_mount(self) -> None:
        board = self.query_one(Connect4Board)
        board.position = self.start
        board.focus()

    def on_move_chosen(self, message: MoveChosen) -> None:
        self.chosen.append(message.text)


def board_text(app: BoardApp) -> str:
    """Everything the board draws, as plain text lines."""
    board = app.query_one(Connect4Board)
    return "\n".join(board.render_line(y).text for y in range(board.size.height))


async def test_keys_drop_into_the_right_columns():
    """Enter drops at the cursor (the centre first), arrows move it, and 1-7 drop straight in; the column letters
    are no keys (they belong to the game screen: `b` is the lobby)."""
    app = BoardApp(position_of(""))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter", "left", "left", "space", "right", "enter", "7", "a", "b", "1")
        await pilot.pause()
    assert app.chosen == ["d", "b", "c", "g", "a"]


async def test_clicks_drop_into_the_clicked_column():
    """A click on any cell of a column drops into that column."""
    app = BoardApp(position_of("dd"))
    async with app.run_test(size=SIZE) as pilot:
        board = app.query_one(Connect4Board)
        for letter in "fbd":
            await pilot.click(Connect4Board, offset=tuple(board.column_center(letter)))
        low = board.grid.cell_center(5, 0)
        await pilot.click(Connect4Board, offset=(low.x, low.y))
        await pilot.pause()
    assert app.chosen == ["f", "b", "d", "a"]


async def test_a_full_column_is_not_offered():
    """A full column posts nothing by key or click, and the cursor skips over it."""
    app = BoardApp(position_of("ddaddadd"))
    assert "d" not in app.start.legal
    async with app.run_test(size=SIZE) as pilot:
        board = app.query_one(Connect4Board)
        assert board.cursor != 3, "the cursor must leave the full centre column"
        await pilot.press("4")
        await pilot.click(Connect4Board, offset=tuple(board.column_center("d")))
        await pilot.press("3", "right", "enter")
        await pilot.pause()
    assert app.chosen == ["c", "e"]


async def test_nothing_is_posted_when_it_is_not_your_move():
    """While the opponent is to move, keys and clicks send no move."""
    app = BoardApp(position_of("d", can_move=False))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter", "3")
        await pilot.click(Connect4Board, offset=tuple(app.query_one(Connect4Board).column_center("a")))
        await pilot.pause()
    assert app.chosen == []


async def test_discs_letters_and_highlights_are_drawn():
    """The column letters, one disc per disc played, and the winning four and yellow discs in their colours."""
    app = BoardApp(position_of("ddeeffg", can_move=False))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        board = app.query_one(Connect4Board)
        text = board_text(app)
        assert "a    b    c    d    e    f    g" in text
        assert text.count("▄▄▄") == 7, text  # 5x2 cells at this size: a disc's top half
        grid = board.grid
        bottom = board.render_line(grid.top + 5 * grid.cell_h)
        discs = [segment.style for segment in bottom if "▄▄▄" in segment.text]
        win = board.get_component_rich_style("connect4-board--win", partial=True).bgcolor
        red = board.get_component_rich_style("connect4-board--red", partial=True).color
        assert len(discs) == 4 and all(style.bgcolor == win and style.color == red for style in discs)
        above = board.render_line(grid.top + 4 * grid.cell_h)
        yellow = board.get_component_rich_style("connect4-board--yellow", partial=True).color
        assert [segment.style.color for segment in above if "▄▄▄" in segment.text] == [yellow] * 3


async def test_last_disc_is_marked():
    """The disc the last move dropped gets the last-move background; the one below it does not."""
    app = BoardApp(position_of("dd"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        board = app.query_one(Connect4Board)
        grid = board.grid
        last = board.get_component_rich_style("connect4-board--last", partial=True).bgcolor

        def background(row: int) -> object:
            line = board.render_line(grid.top + row * grid.cell_h)
            return [segment.style.bgcolor for segment in line if "▄" in segment.text][3]

        assert background(4) == last and background(5) != last
