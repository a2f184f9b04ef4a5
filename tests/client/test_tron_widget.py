"""Pilot tests of the Tron arena on its own: the countdown before the first tick and the pause notice are laid
over the arena's middle line, and the first tick takes the countdown away."""

from __future__ import annotations

from typing import ClassVar

from textual.app import App, ComposeResult

from gamenight.client.messages import MoveChosen
from gamenight.client.widgets.board import Position
from gamenight.client.widgets.tron import LETTERS, OPPOSITE, TronArena
from gamenight.protocol.vocab import RoomStatus
from gamenight.server.games.tron import Tron, first_heading
from tests.client.conftest import BOARDS_CSS

SIZE = (60, 20)
GAME = Tron()
OPTIONS = {"width": 16, "height": 12, "seed": 11}


class ArenaApp(App[None]):
    """The arena alone in a tiny app, given the start of a game."""

    CSS_PATH: ClassVar[list[str]] = [BOARDS_CSS]

    def __init__(self, position: Position) -> None:
        super().__init__()
        self.start = position
        self.chosen: list[str] = []  # the moves the arena sent, in order

    def compose(self) -> ComposeResult:
        yield TronArena()

    def on_mount(self) -> None:
        self.query_one(TronArena).position = self.start

    def on_move_chosen(self, message: MoveChosen) -> None:
        self.chosen.append(message.text)


def start(countdown_ms: int | None, status: RoomStatus = RoomStatus.PLAYING) -> Position:
    """The arena's input for a new game, as the game screen builds it from the server's first state."""
    state = GAME.initial_state(OPTIONS)
    return Position(
        view=GAME.view(state),
        legal=("N", "E", "S", "W"),
        can_move=True,
        seat=0,
        status=status,
        countdown_ms=countdown_ms,
    )


def middle_line(arena: TronArena) -> str:
    """The text the arena draws on its middle line, where the overlay goes."""
    return arena.render_line(arena.size.height // 2).text


async def test_the_countdown_is_drawn_until_the_first_tick():
    """A starting game shows "Get ready" with the seconds left and the way your cycle will ride over the arena;
    the first tick removes it."""
    app = ArenaApp(start(countdown_ms=1700))
    async with app.run_test(size=SIZE) as pilot:
        arena = app.query_one(TronArena)
        await pilot.pause()
        heading = {1: "north", 2: "east", 3: "south", 4: "west"}[first_heading(GAME.initial_state(OPTIONS), 0)]
        assert arena.overlay_text() in (f"Get ready: {n} · you ride {heading} unless you steer" for n in (2, 1))
        assert "Get ready" in middle_line(arena)
        state = GAME.initial_state(OPTIONS)
        after = GAME.apply(state, {0: GAME.parse_move(state, "N"), 1: GAME.parse_move(state, "S")})
        arena.apply_delta(GAME.delta(state, after))
        await pilot.pause()
        assert arena.overlay_text() == ""
        assert "Get ready" not in middle_line(arena)
        assert arena.grid.tick == 1


async def test_no_countdown_is_drawn_for_a_game_already_moving():
    """A state taken mid-game (no countdown) draws the arena with nothing laid over it."""
    app = ArenaApp(start(countdown_ms=None))
    async with app.run_test(size=SIZE) as pilot:
        arena = app.query_one(TronArena)
        await pilot.pause()
        assert arena.overlay_text() == ""
        assert "Get ready" not in middle_line(arena)


async def test_a_paused_game_says_it_waits_for_the_players():
    """A paused game lays the pause notice over the arena."""
    app = ArenaApp(start(countdown_ms=None, status=RoomStatus.PAUSED))
    async with app.run_test(size=SIZE) as pilot:
        arena = app.query_one(TronArena)
        await pilot.pause()
        assert arena.overlay_text().startswith("Paused")
        assert "Paused" in middle_line(arena)


async def test_before_the_first_tick_the_rider_can_steer_against_its_heading():
    """During the countdown any direction can be chosen, also the opposite of the heading shown (no trail lies
    behind a cycle that has not moved); after a tick, turning straight back is ignored."""
    app = ArenaApp(start(countdown_ms=1700))
    async with app.run_test(size=SIZE) as pilot:
        arena = app.query_one(TronArena)
        await pilot.pause()
        heading = arena.grid.dirs[0]
        assert heading == first_heading(GAME.initial_state(OPTIONS), 0)
        arena.action_steer(OPPOSITE[heading])
        await pilot.pause()
        assert app.chosen == [LETTERS[OPPOSITE[heading]]]
        state = GAME.initial_state(OPTIONS)
        after = GAME.apply(state, {0: OPPOSITE[heading], 1: GAME.default_move(state, 1)})
        arena.apply_delta(GAME.delta(state, after))
        arena.action_steer(heading)  # now straight back into its own trail: ignored
        await pilot.pause()
        assert app.chosen == [LETTERS[OPPOSITE[heading]]]
