"""Pilot tests of the review screen (issue 36) against a real server that reviews at a tiny budget: opened from the
history and from the game-over dialog, it steps through the game, jumps between labelled moves, shows the graph,
the seats' accuracy and each move's sign and best move."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from textual.widgets import Button, Sparkline, Static

from gamenight.client.local_server import LocalServer, server_command
from gamenight.client.model import AI, ME
from gamenight.client.screens.dialogs import ConfirmScreen, GameOverScreen
from gamenight.client.screens.history import HistoryScreen
from gamenight.client.screens.review import ReviewScreen
from gamenight.client.widgets.connect4 import Connect4Board
from gamenight.protocol.messages import MakeMove
from tests.client.conftest import create_room_via_form, mounted, wait_for
from tests.peer import Peer, seat_pair

SIZE = (120, 40)
BLUNDER_GAME = ["a", "g", "b", "g", "c", "g", "e", "g"]  # red's e (move 7) misses d and lets yellow's g column win


@pytest.fixture
def url(tmp_path) -> Iterator[str]:
    """A real server process (as the client runs one) that thinks 20 ms per reviewed position."""
    command = [*server_command(), "--db", str(tmp_path / "rooms.db"), "--limit", "review_ms=20"]
    with LocalServer(command, log_path=tmp_path / "server.log") as server:
        assert server.url is not None
        yield server.url


async def play_blunder_game(url: str) -> None:
    """Two scripted players finish the Connect Four game whose move 7 is a blunder."""
    alice, bob = await Peer.connect(url, "alice"), await Peer.connect(url, "bob")
    room, state = await seat_pair(alice, bob, "connect4")
    seq = state.seq
    for ply, move in enumerate(BLUNDER_GAME):
        await (alice, bob)[ply % 2].send(MakeMove(room=room, move=move, seq=seq))
        seq = (await alice.state_after(room, seq)).seq
    await alice.expect("event", kind="game_over")
    await alice.close()
    await bob.close()


def _shown(screen: ReviewScreen, selector: str) -> str:
    """The text a Static shows ("" while the screen is still being composed and has no such widget yet)."""
    found = screen.query(selector)
    return str(found.first(Static).render()) if found else ""


async def test_review_from_the_history_steps_and_jumps_to_the_blunder(make_app, url):
    """`v` in the history opens the review: once the analysis is in, the graph has a point per position, each seat
    its accuracy, `n` / `p` jump between labelled moves (the blunder shows "e??" and the best move d), ←/→ step
    through the moves, and Esc goes back to the history."""
    await play_blunder_game(url)
    app = make_app("carol")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen) and app.screen.loaded, "the history")
        history = app.screen
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen), "the review screen")
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        await wait_for(pilot, lambda: screen.review.analysed, "the analysis")
        assert len(screen.query_one("#review-graph", Sparkline).data or []) == len(BLUNDER_GAME) + 1
        summary = _shown(screen, "#review-summary")
        assert summary.count("%") == 2 and "??" in summary, "each seat's accuracy and labels"
        assert "7. e??" in _shown(screen, "#moves")

        labelled = [step for step in range(1, 9) if screen.review.sign(step)]
        for step in labelled[: labelled.index(7) + 1]:
            await pilot.press("n")
            assert screen.replay.step == step
        comment = _shown(screen, "#review-comment")
        assert "e?? — a blunder" in comment and "best: d (red wins in 1)" in comment
        assert "after: yellow wins in 1" in comment
        await pilot.press("p")
        assert screen.replay.step == labelled[labelled.index(7) - 1]
        await pilot.press("right")
        assert screen.replay.step == labelled[labelled.index(7) - 1] + 1
        await pilot.press("end", "n")
        assert screen.replay.step == len(BLUNDER_GAME), "no labelled move after the last: it stays"

        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is history, "the history again")


async def test_review_from_the_game_over_dialog(make_app):
    """After resigning a Connect Four game against the AI, the game-over dialog offers Review; `v` opens the review
    of that game, which gets its analysis."""
    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        await create_room_via_form(app, pilot, "connect4", [ME, f"{AI}:1"], {"ai_pace_ms": 0, "ai_ms": 50})
        await wait_for(pilot, lambda: app.model.room.my_turn, "ann's first move")
        await mounted(app, pilot, Connect4Board)
        await pilot.press("4")
        await wait_for(pilot, lambda: len(app.model.room.state.moves) == 2, "the AI's answer")
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question whether to resign")
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, GameOverScreen), "the game over")
        assert app.screen.query("#review").results(Button)
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen), "the review screen")
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        await wait_for(pilot, lambda: screen.review.analysed, "the analysis")
        assert screen.replay.moves == app.model.room.state.moves and screen.replay.game == "connect4"
        assert len(screen.review.graph()) == len(screen.replay.moves) + 1


async def test_leaving_the_review_before_its_analysis_came_cancels_it():
    """Esc on a review still waiting (queued, then part done) sends `analyse {cancel: true}` for that game; the
    status line said how far the analysis was."""
    from gamenight.client import messages as ui
    from gamenight.protocol.messages import Analyse, AnalysisProgress, GameRecord, GetGame, Queued
    from gamenight.server.games.connect4 import ConnectFour
    from gamenight.server.history_service import replay_frames
    from tests.client.recorded import FakeConnection, answer, fake_app, welcome

    record = {
        "game_id": 4,
        "game": "connect4",
        "options": ConnectFour().validate_options({}),
        "moves": BLUNDER_GAME,
        "players": [{"seat": 0, "label": "red", "name": "ann"}, {"seat": 1, "label": "yellow", "name": "bob"}],
        "result": {"winner": 1, "winners": [1], "reason": "four"},
        "finished_at": 0,
    }

    def respond(request):
        if isinstance(request, GetGame):
            return [answer(GameRecord(record=record, frames=replay_frames(record)))]
        if isinstance(request, Analyse) and not request.cancel:
            return [answer(Queued(game_id=4, ahead=1)), AnalysisProgress(game_id=4, done=3, total=9)]
        return []

    server = FakeConnection(respond, on_connect=[welcome()])
    app = fake_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        app.post_message(ui.OpenReview(4))
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen), "the review screen")
        screen = app.screen
        await wait_for(pilot, lambda: "3 of 9" in _shown(screen, "#review-status"), "the progress")
        assert [m.cancel for m in server.sent_of(Analyse)] == [False]
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.lobby_screen, "the lobby")
        assert [(m.game_id, m.cancel) for m in server.sent_of(Analyse)] == [(4, False), (4, True)]


async def test_a_review_still_waiting_asks_again_after_a_reconnect():
    """A dropped connection stops the server waiting for us: once a new connection is welcomed, a review screen
    still without its analysis sends `analyse` again, and shows the analysis that then comes (with each move's
    clock time)."""
    from gamenight.client import messages as ui
    from gamenight.protocol.messages import Analyse, Analysis, GameRecord, GetGame, Queued
    from gamenight.server.ai.analysis import assess_plain
    from gamenight.server.games.connect4 import ConnectFour
    from gamenight.server.history_service import replay_frames
    from gamenight.server.review_report import analyse
    from tests.client.recorded import FakeConnection, answer, fake_app, welcome

    record = {
        "game_id": 4,
        "game": "connect4",
        "options": ConnectFour().validate_options({}),
        "moves": BLUNDER_GAME,
        "players": [{"seat": 0, "label": "red", "name": "ann"}, {"seat": 1, "label": "yellow", "name": "bob"}],
        "result": {"winner": 1, "winners": [1], "reason": "four"},
        "finished_at": 0,
    }
    spent = [1500 + 100 * ply for ply in range(len(BLUNDER_GAME))]
    seats = [ply % 2 for ply in range(len(BLUNDER_GAME))]
    record["clock"] = {"initial_ms": 300_000, "increment_ms": 0, "days_per_move": 0, "move_ms": spent, "seats": seats}
    values = [assess_plain("connect4", {}, BLUNDER_GAME, ply, 20) for ply in range(len(BLUNDER_GAME) + 1)]
    made = analyse("connect4", {}, BLUNDER_GAME, values, 20)
    asked: list[Analyse] = []

    def respond(request):
        if isinstance(request, GetGame):
            return [answer(GameRecord(record=record, frames=replay_frames(record)))]
        if isinstance(request, Analyse):
            asked.append(request)
            if len(asked) == 1:
                return [answer(Queued(game_id=4, ahead=0))]
            return [answer(Analysis(game_id=4, moves=made["moves"], summary=made["summary"], budget_ms=20))]
        return []

    server = FakeConnection(respond, on_connect=[welcome()])
    app = fake_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        app.post_message(ui.OpenReview(4))
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen) and asked, "the review screen")
        screen = app.screen
        assert not screen.review.analysed
        server.push(welcome(session="s2"))  # a new connection's welcome
        await wait_for(pilot, lambda: screen.review.analysed, "the analysis, asked for again")
        assert [request.cancel for request in asked] == [False, False]
        assert "7. e??" in _shown(screen, "#moves")
        await pilot.press("right", "right")
        assert "took 1.6 s" in _shown(screen, "#review-comment"), "the clock time of move 2"


TRON_TICKS = ["N W", "E S", "N W", "E W", "S E"]  # on the 10x8 arena of seed 11: player 2 rides into its trail
# Tick 4's territory, worked out by hand layer by layer from both heads (a: player 1, b: player 2, T: reached by
# both in the same layer, ".": a wall, a trail, a head or out of reach): 12 squares to a, 11 to b, 4 tied.
TRON_TICK_4 = [
    "..........",
    "....bbb...",
    ".aaTb.....",
    "..aaTbbb..",
    "....aTbb..",
    "...aaaTbb.",
    "..aaaa....",
    "..........",
]


def _tron_record() -> dict:
    """The finished Tron game of `TRON_TICKS` as the history sends it."""
    from gamenight.server.games.tron import Tron

    return {
        "game_id": 4,
        "game": "tron",
        "options": Tron().validate_options({"width": 10, "height": 8, "seed": 11}),
        "moves": TRON_TICKS,
        "players": [
            {"seat": 0, "label": "player 1", "name": "[b]ann"},
            {"seat": 1, "label": "player 2", "name": "bob"},
        ],
        "result": {"winner": 0, "winners": [0], "reason": "crash"},
        "finished_at": 0,
    }


def _zones_picture(arena) -> list[str]:
    """The arena's territory shading as rows of a, b, T and "."."""
    from gamenight.client.widgets.tron import TIED

    width = arena.grid.width
    marks = {0: ".", 1: "a", 2: "b", TIED: "T"}
    return [
        "".join(marks[owner] for owner in arena.zones[row * width : (row + 1) * width])
        for row in range(arena.grid.height)
    ]


async def test_a_tron_review_replays_the_ticks_with_each_riders_territory_shaded(tmp_path):
    """Reviewing a Tron game from the history shows the arena tick by tick with every empty square shaded by the
    rider that reaches it first (tick 4 as worked out by hand: 12 and 11 squares, 4 tied), each rider's count, the
    server's per-tick lead as the graph, and `n` / `p` jump to the ticks where the lead changed hands."""
    from gamenight.client import messages as ui
    from gamenight.client.screens.review import TronReviewScreen
    from gamenight.client.widgets.tron import TronArena
    from gamenight.protocol.messages import Analyse, Analysis, GameRecord, GetGame
    from gamenight.server.ai.analysis import assess_plain
    from gamenight.server.history_service import replay_frames
    from gamenight.server.review_report import analyse
    from tests.client.recorded import FakeConnection, answer, fake_app, welcome

    record = _tron_record()
    made = analyse(
        "tron", record["options"], TRON_TICKS, [assess_plain("tron", record["options"], TRON_TICKS, 0, 0)], 0
    )

    def respond(request):
        if isinstance(request, GetGame):
            return [answer(GameRecord(record=record, frames=replay_frames(record)))]
        if isinstance(request, Analyse):
            return [answer(Analysis(game_id=4, moves=made["moves"], summary=made["summary"]))]
        return []

    app = fake_app(FakeConnection(respond, on_connect=[welcome()]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        app.post_message(ui.OpenReview(4))
        await wait_for(pilot, lambda: isinstance(app.screen, TronReviewScreen), "the Tron review screen")
        screen = app.screen
        await wait_for(pilot, lambda: screen.review.analysed, "the analysis")
        arena = screen.query_one(TronArena)
        assert arena.zone_counts == [16, 16] and "16 squares" in _shown(screen, "#review-territory")
        assert screen.query_one("#review-graph", Sparkline).data == [0, 0, 0, -1, 1, 26]
        assert "lead changed 2 times" in _shown(screen, "#review-status")

        await pilot.press("right", "right", "right", "right")
        assert screen.replay.step == 4 and arena.grid.tick == 4
        assert _zones_picture(arena) == TRON_TICK_4 and arena.zone_counts == [12, 11]
        territory = _shown(screen, "#review-territory")
        assert "player 1: 12 squares" in territory and "player 2: 11 squares" in territory
        assert "4 squares reached at once" in territory
        assert "player 1 leads by 1 square" in _shown(screen, "#review-comment")
        app.save_screenshot("tron-review.svg", str(tmp_path))

        await pilot.press("home", "n")
        assert screen.replay.step == 3, "player 2 takes the lead"
        await pilot.press("n")
        assert screen.replay.step == 4, "player 1 takes it back"
        await pilot.press("n")
        assert screen.replay.step == 4, "no further lead change: it stays"
        await pilot.press("p")
        assert screen.replay.step == 3
        await pilot.press("end")
        assert arena.zone_counts == [26, 0], "alone, player 1's territory is all it can reach"


async def test_a_tron_game_is_reviewed_from_the_game_over_dialog(make_app):
    """After a Tron game against a bot ends, the game-over dialog offers Review; the server's territory of every
    tick, stepped through with →, is what the arena shades."""
    from gamenight.client.model import BOT
    from gamenight.client.screens.review import TronReviewScreen
    from gamenight.client.widgets.tron import TronArena

    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        options = {"width": 12, "height": 10, "seed": 5, "tick_ms": 100, "countdown_ms": 500}
        await create_room_via_form(app, pilot, "tron", [ME, f"{BOT}:chaser"], options)
        await wait_for(pilot, lambda: isinstance(app.screen, GameOverScreen), "the game over", timeout=30)
        assert app.screen.query("#review").results(Button)
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, TronReviewScreen), "the review screen")
        screen = app.screen
        await wait_for(pilot, lambda: screen.review.analysed, "the analysis")
        assert screen.replay.game == "tron" and screen.replay.last == len(screen.replay.moves) >= 1
        assert len(screen.review.graph()) == screen.replay.last + 1
        arena = screen.query_one(TronArena)
        for step in range(screen.replay.last + 1):
            assert arena.zone_counts == screen.review.territory(step), f"tick {step}"
            await pilot.press("right")
