"""Pilot tests of the history screen and the replay viewer, against a real server that has finished games."""

from __future__ import annotations

from textual.widgets import DataTable, Static

from gamenight.client import messages as ui
from gamenight.client.screens.history import HistoryScreen, ReplayScreen
from gamenight.client.screens.lobby import LobbyScreen
from gamenight.client.widgets.othello import OthelloBoard
from gamenight.protocol.messages import CreateRoom, Join, MakeMove
from tests.client.conftest import wait_for
from tests.peer import Peer

SIZE = (100, 36)


async def play_out_othello(url: str, size: int = 6) -> list[str]:
    """Two scripted players finish a small Othello game, each always playing its first legal move; the moves."""
    alice = await Peer.connect(url, "alice")
    bob = await Peer.connect(url, "bob")
    info = await alice.request(CreateRoom, game="othello", options={"size": size})
    await alice.request(Join, room=info.room, seat=0)
    await bob.request(Join, room=info.room, seat=1)
    players = (alice, bob)
    state = await alice.expect("state")
    while state.status == "playing":
        mover = players[state.to_move[0]]
        legal = (await mover.at(info.room, state.seq)).legal
        await mover.send(MakeMove(room=info.room, move=legal[0], seq=state.seq))
        state = await alice.wait(lambda m, seq=state.seq: m.type == "state" and m.seq > seq)
    await alice.close()
    await bob.close()
    return list(state.moves)


def _shown(screen, selector: str) -> str:
    """The text a Static shows."""
    return str(screen.query_one(selector, Static).render())


async def test_history_lists_finished_games_and_replays_one_step_by_step(make_app, url):
    """The lobby's `h` lists a finished game (players, result); Enter replays it: ←/→ step, Home/End jump,
    the board shows each position and the move list marks the current move; Esc goes back."""
    moves = await play_out_othello(url)
    app = make_app("carol")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen) and app.screen.loaded, "the history")
        history = app.screen
        table = history.query_one("#games", DataTable)
        assert table.row_count == 1
        row = [str(cell) for cell in table.get_row_at(0)]
        assert row[1] == "Othello" and row[3] == "alice · bob"
        assert row[4].startswith(("black (alice) wins", "white (bob) wins", "Draw"))

        # "My games" asks for carol's games: she played none.
        await pilot.press("m")
        await wait_for(pilot, lambda: history.loaded and table.row_count == 0, "carol's (no) games")
        assert history.query_one("#no-games").display
        await pilot.press("m")
        await wait_for(pilot, lambda: history.loaded and table.row_count == 1, "everyone's games again")

        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen), "the replay viewer")
        viewer = app.screen
        board = viewer.query_one(OthelloBoard)
        assert viewer.replay.step == 0 and board.position.last_move is None and not board.has_focus
        start = list(board.position.view["board"])
        assert _shown(viewer, "#replay-step").startswith(f"Start ({len(moves)} moves)")

        await pilot.press("right", "l")
        assert viewer.replay.step == 2 and board.position.last_move == moves[1]
        assert _shown(viewer, "#replay-step") == f"Move 2 of {len(moves)}: {moves[1]}"
        assert board.position.view["board"] != start and not board.position.can_move
        await pilot.press("left")
        assert board.position.last_move == moves[0]

        await pilot.press("end")
        assert viewer.replay.at_end and board.position.last_move == moves[-1]
        assert _shown(viewer, "#replay-step").startswith(f"End after {len(moves)} moves")
        assert f"{len(moves)}. {moves[-1]}" in _shown(viewer, "#moves")
        await pilot.press("home")
        assert viewer.replay.step == 0 and list(board.position.view["board"]) == start

        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is history, "the history again")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby again")


async def test_history_game_filter_and_my_resigned_game(make_app):
    """A game I resign shows under "my games" with the resignation; the game filter hides other games."""
    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        await pilot.press("n", "enter")  # the quick menu opens on Play: Enter starts the game
        await wait_for(pilot, lambda: app.model.room is not None and app.model.room.my_turn, "the game against the AI")
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: len(app.model.room.state.moves) >= 2 and app.model.room.my_turn, "the AI's answer"
        )
        app.post_message(ui.Resign())
        await wait_for(pilot, lambda: app.model.room.status == "finished", "the end of the game")
        app.post_message(ui.LeaveRoom())
        await wait_for(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")

        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen) and app.screen.loaded, "the history")
        history = app.screen
        await pilot.press("m")
        await wait_for(pilot, lambda: history.loaded, "ann's games")
        table = history.query_one("#games", DataTable)
        assert table.row_count == 1
        row = [str(cell) for cell in table.get_row_at(0)]
        assert row[3] == "ann · AI level 3" and row[4] == "black (ann) resigned; white (AI level 3) wins"

        # The game filter cycles: all games -> the first game the server lists -> ...; Pentago has no games.
        while history.query_one("#history-game").value != "pentago":
            await pilot.press("g")
        await wait_for(pilot, lambda: history.loaded and table.row_count == 0, "ann's (no) Pentago games")


async def test_tron_replay_draws_each_tick_in_the_arena():
    """A Tron replay (asked for by id, its record scripted) shows the arena after each tick (deltas folded),
    End shows the crash, Home the start."""
    from gamenight.client.widgets.tron import TronArena, TronGrid
    from gamenight.protocol.messages import GameRecord, GetGame
    from gamenight.server.games.tron import Tron
    from gamenight.server.history_service import replay_frames
    from tests.client.recorded import FakeConnection, answer, fake_app, welcome

    game = Tron()
    options = game.validate_options({"width": 10, "height": 8, "seed": 11})
    ticks = ["E W", "E W", "N S", "N S"]
    record = {
        "game_id": 4,
        "game": "tron",
        "options": options,
        "moves": ticks,
        "players": [
            {"seat": 0, "label": "player 1", "name": "dan", "ai": False},
            {"seat": 1, "label": "player 2", "name": "chaser", "ai": True},
        ],
        "result": {"winner": None, "winners": [], "reason": "crash"},
        "finished_at": 0,
    }
    frames = replay_frames(record)
    state = game.initial_state(options)
    start_view = game.view(state)
    for joint in ticks:
        state = game.apply(state, {seat: "NESW".index(d) + 1 for seat, d in enumerate(joint.split())})
    server = FakeConnection(
        lambda request: (
            [answer(GameRecord(record=record, frames=frames))]
            if isinstance(request, GetGame) and request.game_id == 4
            else []
        ),
        on_connect=[welcome()],
    )
    app = fake_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        app.post_message(ui.OpenReplay(4))
        await wait_for(pilot, lambda: isinstance(app.screen, ReplayScreen), "the replay viewer")
        await pilot.pause()
        arena = app.screen.query_one(TronArena)
        assert arena.grid.cells == TronGrid.from_view(start_view).cells
        await pilot.press("end")
        assert arena.grid.cells == TronGrid.from_view(game.view(state)).cells
        assert arena.grid.alive == list(game.view(state)["alive"])
        await pilot.press("home", "right")
        assert arena.grid.tick == 1 and app.screen.replay.last_move == "E W"
