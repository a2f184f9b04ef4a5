"""Pilot tests of client flows on a scripted connection: the screens are fed recorded server messages and
what the app sends is checked, with no server process (the end-to-end tests prove the real path)."""

from __future__ import annotations

from textual.widgets import Input, Label, RichLog, Static

from gamenight.client.screens.create import CreateRoomScreen
from gamenight.client.screens.dialogs import ConfirmScreen, GameOverScreen, HelpScreen
from gamenight.client.screens.game import GameScreen
from gamenight.client.screens.lobby import LobbyScreen
from gamenight.client.widgets.board import FALLBACK_NOTE, TextBoard
from gamenight.client.widgets.othello import OthelloBoard
from gamenight.client.widgets.tron import TronArena
from gamenight.protocol.messages import (
    AddAi,
    CreateRoom,
    Join,
    Leave,
    ListPlayers,
    ListRooms,
    LobbyWatch,
    MakeMove,
    Message,
    Resign,
    Sync,
)
from gamenight.protocol.vocab import Role
from tests.client.conftest import mounted, wait_for
from tests.client.recorded import (
    FakeConnection,
    answer,
    fake_app,
    games,
    othello_state,
    room,
    room_info,
    seat,
    welcome,
    wire,
)

SIZE = (100, 36)
CODE = "K7QXM"
SEATED = [seat(0, "black", "human", "ann"), seat(1, "white", "ai", "AI level 3", level=3)]


def othello_server(request: Message) -> list[Message]:
    """A scripted server for one Othello room against the AI: it creates, seats, starts and takes moves."""
    if isinstance(request, CreateRoom):
        return [answer(room_info(CODE))]
    if isinstance(request, Join):
        return [answer(wire("joined", room=CODE, **{"as": "player"}, seat=0)), room_info(CODE, seats=SEATED[:1])]
    if isinstance(request, AddAi):
        return [room_info(CODE, status="playing", seats=SEATED), othello_state(CODE, 1, [])]
    if isinstance(request, MakeMove):
        return [othello_state(CODE, 2, [request.move], to_move=1)]
    if isinstance(request, Leave):
        return [answer(wire("left", room=CODE))]
    return []


def log_text(app) -> str:
    """Everything the room's log shows."""
    return "\n".join(line.text for line in app.screen.query_one("#log", RichLog).lines)


async def test_quick_game_sends_create_join_and_ai_then_plays_with_seq():
    """`n` creates an Othello room, sits me as black, seats AI level 3; Enter then plays a legal move that
    carries the seq of the position it was made on."""
    server = FakeConnection(othello_server, on_connect=[welcome()])
    app = fake_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        await pilot.press("n", "enter")  # the quick menu opens on Play: Enter starts the game
        await wait_for(pilot, lambda: app.model.room is not None and app.model.room.my_turn, "my first move")
        flow = [m for m in server.sent if not isinstance(m, LobbyWatch | ListRooms | ListPlayers)]  # the lobby's own
        assert [type(m).__name__ for m in flow] == ["CreateRoom", "Join", "AddAi"]
        assert flow[1].seat == 0 and flow[1].role == Role.PLAYER
        assert flow[2].seat == 1 and flow[2].level == 3
        assert isinstance(app.screen, GameScreen) and app.model.room.host
        board = await mounted(app, pilot, OthelloBoard)
        await wait_for(pilot, lambda: board.position.can_move, "the board offering moves")
        await pilot.press("enter")
        await wait_for(pilot, lambda: server.sent_of(MakeMove), "the move")
        (move,) = server.sent_of(MakeMove)
        assert move.room == CODE and move.seq == 1 and move.move in othello_state(CODE, 1, []).legal
        await wait_for(pilot, lambda: app.model.room.seq == 2, "the position after it")
        assert "1. " + move.move in str(app.screen.query_one("#moves", Static).render())


async def test_resign_then_game_over_in_the_games_words_then_back_to_the_lobby():
    """x + y sends resign; the game_over event opens the result dialog in the game's own words (from
    `welcome.games`); b there leaves, and the `left` reply brings the lobby back."""
    server = FakeConnection(othello_server, on_connect=[welcome(game_list=games(reasons=True))])
    app = fake_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        await pilot.press("n", "enter")  # the quick menu opens on Play: Enter starts the game
        await wait_for(pilot, lambda: app.model.room is not None and app.model.room.my_turn, "the game")
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the resign question")
        await pilot.press("y")
        await wait_for(pilot, lambda: server.sent_of(Resign), "the resignation")
        server.push(
            wire(
                "event",
                room=CODE,
                kind="game_over",
                seq=2,
                data={"winners": [1], "winner": 1, "reason": "resign", "loser": 0},
            )
        )
        await wait_for(pilot, lambda: isinstance(app.screen, GameOverScreen), "the result dialog")
        assert app.screen.headline == "You lost"
        assert app.screen.detail == "black (you) resigned; white (AI level 3) wins"
        await pilot.press("b")
        await wait_for(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")
        assert server.sent_of(Leave) and app.model.room is None


async def test_a_finished_game_reads_its_reason_from_the_game_else_the_word():
    """A win on discs reads "(most discs)" when the game describes that reason, and the bare word "discs" when
    it does not: the client has no table of its own."""
    for reasons, expected in ((True, "black (you) wins 40-24 (most discs)"), (False, "black (you) wins 40-24 (discs)")):
        server = FakeConnection(othello_server, on_connect=[welcome(game_list=games(reasons=reasons))])
        app = fake_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, lambda app=app: app.model.lobby.games, "the welcome")
            await pilot.press("n", "enter")  # the quick menu opens on Play: Enter starts the game
            await wait_for(pilot, lambda app=app: app.model.room is not None and app.model.room.state, "the game")
            server.push(
                wire(
                    "event",
                    room=CODE,
                    kind="game_over",
                    seq=2,
                    data={"winners": [0], "winner": 0, "reason": "discs", "scores": [40, 24]},
                )
            )
            await wait_for(pilot, lambda app=app: isinstance(app.screen, GameOverScreen), "the result dialog")
            assert app.screen.detail == expected
            await pilot.press("escape")
            assert f"Game over: {expected}" in log_text(app).replace("\n", "")  # the log wraps long lines


async def test_create_form_shows_option_labels_and_sends_wire_names():
    """The create form heads each option with its label ("AI thinking time"), the bare name when it has
    none; the request keys the value by the option's wire name."""
    game_list = games()  # no labels: the server of an older version
    (othello,) = [g for g in game_list if g["name"] == "othello"]
    othello["options"] = [{**o, "label": "AI thinking time"} if o["name"] == "ai_ms" else o for o in othello["options"]]
    server = FakeConnection(othello_server, on_connect=[welcome(game_list=game_list)])
    app = fake_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        await pilot.press("c")
        await wait_for(
            pilot, lambda: isinstance(app.screen, CreateRoomScreen) and app.screen.query("#opt-ai_ms"), "the form"
        )
        labels = [str(label.render()) for label in app.screen.query("#options Label").results(Label)]
        assert "AI thinking time" in labels and "ai_ms" not in labels and "ai_pace_ms" in labels
        app.screen.query_one("#opt-ai_ms", Input).value = "2500"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: server.sent_of(CreateRoom), "the create request")
        assert server.sent_of(CreateRoom)[0].options == {"ai_ms": 2500}


async def test_a_bad_option_value_is_refused_in_words_naming_its_label():
    """A value out of bounds keeps the form open with a notice naming the option as people read it."""
    server = FakeConnection(othello_server, on_connect=[welcome()])
    app = fake_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        await pilot.press("c")
        await wait_for(
            pilot, lambda: isinstance(app.screen, CreateRoomScreen) and app.screen.query("#opt-ai_ms"), "the form"
        )
        app.screen.query_one("#opt-ai_ms", Input).value = "5"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app._notifications, "a notice")
        assert "ai_ms must be at least 50" in list(app._notifications)[-1].message
        assert isinstance(app.screen, CreateRoomScreen) and not server.sent_of(CreateRoom)


async def test_a_game_without_a_board_is_shown_as_text_and_moves_are_typed():
    """A game the client has no board for still opens: a note says so, the position shows as text, and a
    typed move is sent."""
    go = {"name": "go", "title": "Go", "seats": ["black", "white"], "options": []}
    server = FakeConnection(on_connect=[welcome([room("G1", game="go")], game_list=[*games(), go])])
    app = fake_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        server.push(wire("joined", room="G1", **{"as": "player"}, seat=0))
        server.push(
            wire(
                "state",
                room="G1",
                seq=4,
                game="go",
                status="playing",
                view={"board": ["..", ".x"]},
                to_move=[0],
                legal=["a1", "b1"],
            )
        )
        await wait_for(pilot, lambda: isinstance(app.screen, GameScreen) and app.screen.query(TextBoard), "the room")
        rows = app.screen.query_one("#text-board-rows", Static)
        await wait_for(pilot, lambda: str(rows.render()) == "..\n.x", "the position as text")
        assert app.screen.query_one("#text-board-move", Input).display
        assert str(app.screen.query_one("#text-board-note", Static).render()) == FALLBACK_NOTE
        app.screen.query_one("#text-board-move", Input).focus()
        await pilot.press("a", "1", "enter")
        await wait_for(pilot, lambda: server.sent_of(MakeMove), "the typed move")
        assert server.sent_of(MakeMove)[0].move == "a1" and server.sent_of(MakeMove)[0].seq == 4


async def test_tick_gap_asks_for_a_sync():
    """A tick whose seq skips ahead means ticks were lost: the client sends `sync` and draws the full state
    that comes back; ticks in order move the arena on."""

    def tron_state(seq: int, tick: int) -> Message:
        heads = [[2 + tick, 2], [9 - tick, 5]]
        board = ["#" * 12, *("#" + " " * 10 + "#" for _ in range(6)), "#" * 12]
        return wire(
            "state",
            room="T1",
            seq=seq,
            game="tron",
            status="playing",
            to_move=[0, 1],
            next_tick_ms=100,
            view={
                "width": 12,
                "height": 8,
                "board": board,
                "heads": heads,
                "alive": [True, True],
                "dirs": [2, 4],
                "tick": tick,
                "scores": None,
            },
        )

    server = FakeConnection(
        lambda r: [tron_state(9, 6)] if isinstance(r, Sync) else [],
        on_connect=[welcome([room("T1", game="tron", status="playing")])],
    )
    app = fake_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        server.push(wire("joined", room="T1", **{"as": "player"}, seat=0))
        server.push(tron_state(5, 2))
        arena = await mounted(app, pilot, TronArena, "the arena")
        assert isinstance(app.screen, GameScreen)
        await wait_for(pilot, lambda: arena.grid.tick == 2, "the state drawn")
        server.push(
            wire(
                "tick",
                room="T1",
                seq=6,
                cells=[[2, 5, "1"], [5, 6, "2"]],
                view={"tick": 3, "heads": [[5, 2], [6, 5]], "alive": [True, True], "dirs": [2, 4]},
            )
        )
        await wait_for(pilot, lambda: arena.grid.tick == 3, "the tick drawn")
        assert arena.grid.cell(5, 2) == 1
        server.push(
            wire(
                "tick",
                room="T1",
                seq=8,
                cells=[[2, 7, "1"], [5, 4, "2"]],
                view={"tick": 5, "heads": [[7, 2], [4, 5]], "alive": [True, True], "dirs": [2, 4]},
            )
        )
        await wait_for(pilot, lambda: server.sent_of(Sync), "the sync")
        assert server.sent_of(Sync)[0].seq == 6
        await wait_for(pilot, lambda: arena.grid.tick == 6 and not app.model.room.syncing, "the state sent back")


async def test_server_error_becomes_a_notification():
    """Joining a room code that does not exist shows the server's reason, and the app carries on."""

    def refuse(request: Message) -> list[Message]:
        if isinstance(request, Join):
            return [answer(wire("error", code="unknown_room", message=f"no room {request.room}"))]
        return []

    app = fake_app(FakeConnection(refuse, on_connect=[welcome()]))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        await pilot.press("o")
        await pilot.press(*"ZZZZZ", "enter")
        await wait_for(pilot, lambda: app._notifications, "a notification")
        notice = list(app._notifications)[-1]
        assert notice.severity == "error" and "ZZZZZ" in notice.message
        assert app.model.room is None and app.screen is app.lobby_screen


async def test_a_full_room_is_watched_instead():
    """Joining a room whose seats were just taken says so and watches it instead."""

    def full(request: Message) -> list[Message]:
        if isinstance(request, Join) and request.role == Role.PLAYER:
            return [answer(wire("error", code="room_full", message="the room is full"))]
        if isinstance(request, Join):
            return [answer(wire("joined", room=CODE, **{"as": "spectator"}))]
        return []

    server = FakeConnection(full, on_connect=[welcome([room(CODE, status="playing", seats=SEATED)])])
    app = fake_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: CODE in app.model.lobby.rooms, "the room in the lobby")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, GameScreen), "the watched room")
        assert [m.role for m in server.sent_of(Join)] == [Role.PLAYER, Role.SPECTATOR]
        assert app.model.room.role == Role.SPECTATOR and "watching" in app.screen.title
        assert any("watching instead" in n.message for n in app._notifications)


async def test_lobby_follows_room_pushes():
    """Rooms pushed while in the lobby appear, change and disappear in its table."""
    server = FakeConnection(on_connect=[welcome()])
    app = fake_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        table = app.lobby_screen.query_one("#rooms")
        assert app.lobby_screen.query_one("#no-rooms").display
        server.push(room_info("AAAAA"))
        await wait_for(pilot, lambda: table.row_count == 1, "the new room")
        server.push(room_info("AAAAA", status="closed"))
        await wait_for(pilot, lambda: table.row_count == 0, "the closed room gone")


async def test_help_and_small_terminal():
    """F1 shows the keys; at 80x24 the 8x8 board still fits beside the side panel."""
    app = fake_app(FakeConnection(othello_server, on_connect=[welcome()]))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        await pilot.press("n", "enter")  # the quick menu opens on Play: Enter starts the game
        await wait_for(pilot, lambda: app.model.room is not None and app.model.room.state is not None, "the game")
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        board = app.screen.query_one(OthelloBoard)
        grid = board.grid
        assert grid.left + 8 * grid.cell_w <= board.size.width and grid.top + 8 * grid.cell_h <= board.size.height
