"""Snapshot tests: the lobby, a whole game screen and each board, drawn from positions the real rules produce.

The apps here are offline (or on a scripted connection): the screens are fed real protocol messages (built
from the server's own game rules and option descriptions, decoded by the codec), so what is drawn is exactly
what a connected client would draw.
Each snapshot SVG in __snapshots__/ was looked at (rendered to PNG) before it was accepted.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, ClassVar

import pytest
from textual.app import App, ComposeResult
from textual.widget import Widget
from textual.widgets import DataTable

from gamenight.client.app import GameNightApp
from gamenight.client.presence import Ask
from gamenight.client.replay import Replay
from gamenight.client.widgets.board import Position, show_position
from gamenight.client.widgets.othello import OthelloBoard
from gamenight.client.widgets.pentago import PentagoBoard
from gamenight.client.widgets.tron import TronArena, TronGrid
from gamenight.protocol.messages import Games, ListGames
from gamenight.server.games.othello import Othello, parse_square
from gamenight.server.games.pentago import Pentago, parse_notation
from gamenight.server.games.tron import EAST, NORTH, SOUTH, WEST, Tron
from tests.client.conftest import BOARDS_CSS
from tests.client.recorded import FakeConnection, answer, fake_app, games, welcome, wire

HANG_S = 60.0  # hang guard for what the app is waiting on (never a speed assertion)

OTHELLO_OPENING = ("f5", "d6", "c3", "d3", "c4", "f4", "f6")
PENTAGO_OPENING = ("b3 tr cw", "e2 bl ccw", "c3 tl cw", "d4 br cw", "b2 tl ccw", "e5 br cw")


async def until(pilot: Any, condition: Callable[[], bool], what: str) -> None:
    """Let the app run until `condition` holds (a hang guard of HANG_S fails the test instead of hanging it)."""
    deadline = time.monotonic() + HANG_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"still waiting for {what} after {HANG_S:.0f} s")
        await pilot.pause(0.02)


def othello_state(moves: tuple[str, ...], size: int = 8) -> tuple[Othello, Any]:
    """The real Othello state after `moves`."""
    game = Othello()
    state = game.initial_state({"size": size})
    for move in moves:
        state = game.apply(state, {state.turn: parse_square(move, state.size)})
    return game, state


def pentago_state(moves: tuple[str, ...]) -> tuple[Pentago, Any]:
    """The real Pentago state after `moves`."""
    game = Pentago()
    state = game.initial_state({})
    for move in moves:
        state = game.apply(state, {state.turn: parse_notation(move)})
    return game, state


def legal_of(game: Any, state: Any, seat: int) -> tuple[str, ...]:
    """The legal moves in wire form."""
    return tuple(game.format_move(state, m) for m in game.legal_moves(state, seat))


class BoardApp(App[None]):
    """One board widget filling a small app, given a fixed position."""

    CSS_PATH: ClassVar[list[str]] = [BOARDS_CSS]

    def __init__(self, board: Widget, position: Position) -> None:
        super().__init__()
        self.board = board
        self.start = position

    def compose(self) -> ComposeResult:
        yield self.board

    def on_mount(self) -> None:
        show_position(self.board, self.start)
        self.board.focus()


def test_othello_board(snap_compare):
    """An 8x8 Othello position: discs, legal-move dots, the last move, the flipped disc and the cursor."""
    game, state = othello_state(OTHELLO_OPENING)
    position = Position(
        view=game.view(state),
        legal=legal_of(game, state, state.turn),
        can_move=True,
        last_move=OTHELLO_OPENING[-1],
        seat=state.turn,
    )
    assert snap_compare(BoardApp(OthelloBoard(), position), terminal_size=(60, 30))


def test_othello_board_10x10_small_terminal(snap_compare):
    """A 10x10 board still fits (smaller squares) in the board area an 80x24 terminal leaves."""
    game, start = othello_state((), size=10)
    first = legal_of(game, start, start.turn)[0]
    game, state = othello_state((first,), size=10)
    position = Position(view=game.view(state), legal=(), can_move=False, last_move=first)
    assert snap_compare(BoardApp(OthelloBoard(), position), terminal_size=(46, 22))


def test_pentago_board_turn_preview(snap_compare):
    """Pentago: a square chosen (c4, by keys), quadrant 3 picked and turned anticlockwise, previewed."""
    game, state = pentago_state(PENTAGO_OPENING)
    position = Position(
        view=game.view(state),
        legal=legal_of(game, state, state.turn),
        can_move=True,
        last_move=PENTAGO_OPENING[-1],
        seat=state.turn,
    )
    app = BoardApp(PentagoBoard(), position)
    assert snap_compare(app, press=["down", "enter", "3", "left"], terminal_size=(50, 22))


# Seed 7's 16x12 arena starts rider 1 at (12, 4) and rider 2 at (3, 7); these paths are clear.
FIRST_TICKS = ((WEST, EAST), (WEST, EAST), (SOUTH, NORTH))
LATER_TICKS = ((SOUTH, NORTH), (WEST, EAST), (WEST, EAST))


def tron_states() -> tuple[Tron, Any, Any]:
    """A real 2-player random-arena Tron game, a few ticks in, and the state three ticks later."""
    game = Tron()
    options = game.validate_options({"width": 16, "height": 12, "seed": 7})
    state = game.initial_state(options)
    for joint in FIRST_TICKS:
        state = game.apply(state, dict(enumerate(joint)))
    later = state
    for joint in LATER_TICKS:
        later = game.apply(later, dict(enumerate(joint)))
    return game, state, later


def test_tron_arena_after_deltas(snap_compare):
    """Tron: walls, two trails and heads, drawn from a full state and then three tick deltas."""
    game, state, later = tron_states()
    position = Position(view=game.view(state), can_move=True, seat=0, status="playing")
    arena = TronArena()
    app = BoardApp(arena, position)

    async def ticks(pilot) -> None:
        before = state
        for joint in LATER_TICKS:
            after = game.apply(before, dict(enumerate(joint)))
            arena.apply_delta(game.delta(before, after))
            before = after
        assert arena.grid.cells == TronGrid.from_view(game.view(later)).cells

    assert snap_compare(app, terminal_size=(40, 14), run_before=ticks)


# -- whole screens, offline ---------------------------------------------------------------------------


def room_summary(
    code: str,
    game: str,
    status: str,
    seats: list[tuple[str, str, str | None]],
    options: dict[str, Any] | None = None,
    spectators: int = 0,
) -> dict[str, Any]:
    """A room as the server summarises it; seats are (label, kind, name)."""
    return {
        "room": code,
        "game": game,
        "options": options or {},
        "status": status,
        "spectators": spectators,
        "private": False,
        "host": "ann",
        "seats": [
            {
                "seat": i,
                "label": label,
                "kind": kind,
                "name": name,
                "level": 3 if kind == "ai" else None,
                "bot": None,
                "connected": kind != "open",
            }
            for i, (label, kind, name) in enumerate(seats)
        ],
    }


LOBBY_ROOMS = [
    room_summary(
        "K7QXM",
        "othello",
        "waiting",
        [("black", "human", "bob"), ("white", "open", None)],
        {"size": 10, "first": "black"},
    ),
    room_summary(
        "P2WZD", "pentago", "playing", [("black", "human", "eve"), ("white", "ai", "AI level 3")], spectators=2
    ),
    room_summary(
        "T9RNC",
        "tron",
        "waiting",
        [("player 1", "human", "dan"), ("player 2", "open", None), ("player 3", "open", None)],
        {"players": 3, "tick_ms": 100, "seed": 5},
    ),
]


LOBBY_PLAYERS = [
    {"name": "rhino", "bot": True, "claimed": True, "games": ["othello"], "playing": 1, "online": True},
    {"name": "ann", "bot": False, "claimed": True, "games": ["othello"], "playing": 0, "online": True},
    {"name": "bea", "bot": False, "claimed": True, "games": ["othello", "tron"], "playing": 0, "online": True},
    {"name": "eve", "bot": False, "claimed": False, "games": [], "playing": 1, "online": True},
]


def test_lobby(snap_compare):
    """The lobby lists rooms with game, changed options, who sits where, status and watchers; beside them who
    is online (bots marked, the games each takes challenges for, busy or free) and my challenge waiting."""
    app = GameNightApp(None, "ann")

    async def fill(pilot) -> None:
        await app.receive(welcome(LOBBY_ROOMS))
        await app.receive(wire("players", players=LOBBY_PLAYERS))
        app.model.presence.asking(4, Ask("bea", "tron"))  # as the app records the challenge it sends
        await app.receive(wire("challenge_sent", challenge="c1", to="bea", expires_ms=60000, id=4))

    assert snap_compare(app, terminal_size=(120, 20), run_before=fill)


def test_game_screen_80x24(snap_compare):
    """The whole game screen fits 80x24: board, players with scores and turn, moves, log and controls."""
    app = GameNightApp(None, "ann")
    game, state = othello_state(OTHELLO_OPENING)
    summary = room_summary("K7QXM", "othello", "playing", [("black", "human", "ann"), ("white", "ai", "AI level 3")])

    async def play(pilot) -> None:
        await app.receive(welcome([summary]))
        await app.receive(wire("joined", room="K7QXM", **{"as": "player"}, seat=0))
        await app.receive(wire("room", **summary))
        moves = list(OTHELLO_OPENING)
        await app.receive(
            wire(
                "state",
                room="K7QXM",
                seq=len(moves) + 1,
                game="othello",
                status="playing",
                view=game.view(state),
                to_move=[state.turn],
                legal=list(legal_of(game, state, 0)),
                last_move=moves[-1],
                moves=moves,
                movers=[ply % 2 for ply in range(len(moves))],  # no pass in this opening: black, white in turn
            )
        )
        await app.receive(
            wire(
                "event",
                room="K7QXM",
                kind="move",
                seq=len(moves) + 1,
                data={"seat": 1, "move": moves[-1], "ai": {"depth": 6, "nodes": 12345, "score": -3}},
            )
        )
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=play)


def test_create_form_with_option_labels(snap_compare):
    """The create-room form heads each option with its label ("AI thinking time", not "ai_ms") on one line,
    with its field and help beside it, and one seat selector per seat."""
    from gamenight.client.screens.create import CreateRoomScreen

    app = fake_app(FakeConnection(on_connect=[welcome(game_list=games(reasons=True, labels=True))]))

    async def open_form(pilot) -> None:
        await until(pilot, lambda: bool(app.model.lobby.games), "the welcome's games")
        await pilot.press("c")
        await until(
            pilot, lambda: isinstance(app.screen, CreateRoomScreen) and bool(app.screen.query(".seat")), "the form"
        )
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 36), run_before=open_form)


# -- history and replays, offline ------------------------------------------------------------------------


def finished_game(
    game_id: int, game: str, players: list[tuple[str, str, bool]], result: dict[str, Any], finished_at: float
) -> dict[str, Any]:
    """A `games` entry as the server lists it; players are (label, name, ai)."""
    return {
        "game_id": game_id,
        "game": game,
        "result": result,
        "finished_at": finished_at,
        "players": [{"seat": i, "label": label, "name": name, "ai": ai} for i, (label, name, ai) in enumerate(players)],
    }


HISTORY = [
    finished_game(
        3,
        "tron",
        [("player 1", "dan", False), ("player 2", "floodfill", True)],
        {"winner": 0, "winners": [0], "reason": "crash"},
        1795305600.0,
    ),
    finished_game(
        2,
        "pentago",
        [("black", "eve", False), ("white", "AI level 3", True)],
        {"winner": None, "winners": [], "reason": "full"},
        1795302000.0,
    ),
    finished_game(
        1,
        "othello",
        [("black", "ann", False), ("white", "bob", False)],
        {"winner": 0, "winners": [0], "reason": "discs", "scores": [40, 24]},
        1795298400.0,
    ),
]


def test_history_screen(snap_compare, monkeypatch):
    """The history lists finished games: id (its own column), game, players, who won and why (in each game's
    words), and when (local time)."""
    from gamenight.client.screens.history import HistoryScreen

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    server = FakeConnection(
        lambda request: [answer(Games(games=HISTORY))] if isinstance(request, ListGames) else [],
        on_connect=[welcome(game_list=games(reasons=True))],
    )
    app = fake_app(server)

    async def fill(pilot) -> None:
        await until(pilot, lambda: bool(app.model.lobby.games), "the welcome")  # (the lobby takes keys from then)
        await pilot.press("h")
        await until(pilot, lambda: isinstance(app.screen, HistoryScreen) and app.screen.loaded, "the history")
        table = app.screen.query_one("#games", DataTable)
        # The columns are sized to their cells a refresh after loading: wait until every row is drawn in full.
        await until(
            pilot,
            lambda: all(title in table.render_line(y).text for y, title in ((2, "Pentago"), (3, "Othello"))),
            "every row drawn",
        )

    try:
        assert snap_compare(app, terminal_size=(100, 16), run_before=fill)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def othello_record(moves: tuple[str, ...]) -> dict[str, Any]:
    """A replay record of a (resigned) Othello game with these moves, as `get_game` returns it."""
    return {
        "format": "gamenight-replay",
        "version": 1,
        "game_id": 17,
        "game": "othello",
        "options": Othello().validate_options({}),
        "moves": list(moves),
        "transcript": "".join(moves),
        "players": [
            {"seat": 0, "label": "black", "name": "ann", "ai": False},
            {"seat": 1, "label": "white", "name": "AI level 3", "ai": True},
        ],
        "result": {"winner": 1, "winners": [1], "reason": "resign"},
        "finished_at": 1795305600.0,
    }


def test_replay_viewer(snap_compare):
    """The replay viewer after two steps back from the end: the board at move 5 (last move and flips shown),
    the scores then, the result, "Move 5 of 7" and move 5 highlighted in the list."""
    from gamenight.client.screens.history import ReplayScreen
    from gamenight.server.history_service import replay_frames

    record = othello_record(OTHELLO_OPENING)
    app = GameNightApp(None, "ann")

    async def open_replay(pilot) -> None:
        await app.receive(welcome())
        await app.push_screen(ReplayScreen(app.model, Replay(record, replay_frames(record))))
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), press=["end", "left", "h"], run_before=open_replay)
