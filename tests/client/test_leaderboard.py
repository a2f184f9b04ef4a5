"""Pilot tests of the ratings screens against a real server with rated games: the leaderboard and player cards."""

from __future__ import annotations

import secrets

from textual.widgets import DataTable, Input, Label, Static

from gamenight.client.screens.game import GameScreen
from gamenight.client.screens.lobby import LobbyScreen
from gamenight.client.screens.ratings import LeaderboardScreen, PlayerCardScreen, PlayerNameScreen
from gamenight.client.state import ClientState, rating_changes_text
from gamenight.protocol.messages import AddAi, CreateRoom, Join, MakeMove, Resign
from gamenight.protocol.vocab import RatingChange, Result
from tests.client.conftest import wait_for
from tests.peer import Peer

SIZE = (110, 36)


async def rated_games(url: str) -> None:
    """bob beats alice in a rated Connect Four game (she resigns); then alice resigns a rated Othello game to AI 3.
    Each after two moves a side: a rated game that ends sooner is aborted, and rates nobody."""
    alice = await Peer.connect(url, "alice", key="a" * 8 + secrets.token_urlsafe(12))
    bob = await Peer.connect(url, "bob", key="b" * 8 + secrets.token_urlsafe(12))
    room = await alice.request(CreateRoom, game="connect4", options={"rated": True})
    await alice.request(Join, room=room.room, seat=0)
    await bob.request(Join, room=room.room, seat=1)
    for ply in range(4):
        mover, seat = (alice, 0) if ply % 2 == 0 else (bob, 1)
        state = await mover.wait(
            lambda m, ply=ply, seat=seat: m.type == "state" and len(m.moves) == ply and m.to_move == [seat]
        )
        await mover.send(MakeMove(room=room.room, move="d", seq=state.seq))
    await alice.wait(lambda m: m.type == "state" and len(m.moves) == 4)
    await alice.send(Resign(room=room.room))
    await bob.wait(lambda m: m.type == "state" and m.status == "finished")
    versus_ai = await alice.request(CreateRoom, game="othello", options={"rated": True, "ai_pace_ms": 0})
    await alice.request(AddAi, room=versus_ai.room, seat=1, level=3)
    await alice.request(Join, room=versus_ai.room, seat=0)
    mine = await alice.wait(lambda m: m.type == "state" and m.room == versus_ai.room and m.status == "playing")
    for ply in (2, 4):
        await alice.send(MakeMove(room=versus_ai.room, move=mine.legal[0], seq=mine.seq))
        mine = await alice.wait(
            lambda m, ply=ply: m.type == "state" and m.room == versus_ai.room and len(m.moves) == ply
        )
    await alice.send(Resign(room=versus_ai.room))
    await alice.wait(lambda m: m.type == "state" and m.room == versus_ai.room and m.status == "finished")
    await alice.close()
    await bob.close()


def rows(table: DataTable) -> list[list[str]]:
    """A table's cells as text."""
    return [[str(cell) for cell in table.get_row_at(n)] for n in range(table.row_count)]


async def test_leaderboard_lists_players_pages_pools_and_opens_cards(make_app, url):
    """`l` in the lobby shows Connect Four's players by rating (winner first, "?" while provisional); `g` moves to
    the next game; Enter on a player opens their card with rating, record and latest game; Esc goes back."""
    await rated_games(url)
    app = make_app("carol")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        await pilot.press("l")
        await wait_for(pilot, lambda: isinstance(app.screen, LeaderboardScreen) and app.screen.loaded, "the board")
        board = app.screen
        while board.pool != "connect4":
            await pilot.press("g")
            await wait_for(pilot, lambda: board.loaded, "the next board")
        table = board.query_one("#leaders", DataTable)
        shown = rows(table)
        assert [r[1] for r in shown] == ["bob", "alice"] and shown[0][0] == "1" and shown[0][2].endswith("?")
        assert shown[0][5] == "1-0-0" and shown[1][5] == "0-0-1"
        assert "players 1-2 of 2" in str(board.query_one("#board-title", Static).render())

        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PlayerCardScreen) and app.screen.loaded, "bob's card")
        card = app.screen
        assert str(card.query_one("#card-title", Label).render()) == "bob"
        assert rows(card.query_one("#card-ratings", DataTable))[0][0] == "Connect Four"
        recent = str(card.query_one("#card-recent", Static).render())
        assert "win vs alice" in recent
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is board, "back to the board")

        await pilot.press("g")  # the next pool has no rated games yet, or Othello's (alice and AI level 3)
        await wait_for(pilot, lambda: board.loaded and board.pool != "connect4", "another board")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, LobbyScreen), "the lobby")


async def test_player_card_from_the_lobby_and_from_the_seats(make_app, url):
    """`i` in the lobby asks a name and shows that card (or says they have no rated game); `p` in a game shows the
    opponent's card: here "AI level 3", rated in Othello."""
    await rated_games(url)
    app = make_app("carol")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, PlayerNameScreen), "the name dialog")
        app.screen.query_one("#player-name", Input).value = "nobody"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PlayerCardScreen) and app.screen.loaded, "a card")
        assert "no rated game" in str(app.screen.query_one("#card-recent", Static).render())
        await pilot.press("escape")

        await pilot.press("n", "enter")  # a quick game: Othello against AI level 3
        await wait_for(pilot, lambda: isinstance(app.screen, GameScreen), "the game screen")
        await wait_for(
            pilot, lambda: app.screen.session.summary and len(app.screen.session.summary.seats) == 2, "seats"
        )
        await pilot.press("p")
        await wait_for(pilot, lambda: isinstance(app.screen, PlayerCardScreen) and app.screen.loaded, "the AI's card")
        card = app.screen
        assert str(card.query_one("#card-title", Label).render()) == "AI level 3 (server AI)"
        othello = rows(card.query_one("#card-ratings", DataTable))[0]
        assert othello[0] == "Othello" and othello[4] == "1-0-0"


def test_game_over_notice_lists_rating_changes() -> None:
    """A rated game's end tells each player's rating change in one line."""
    rated = Result(
        (1,),
        "resign",
        1,
        None,
        0,
        (
            RatingChange(0, "alice", "connect4", 1500, 1337.8, 290.3, True),
            RatingChange(1, "bob", "connect4", 1500, 1662.2, 290.3, True),
        ),
    )
    text = rating_changes_text(rated)
    assert text == "alice 1500 → 1338? (-162) · bob 1500 → 1662? (+162)"
    assert ClientState().ratings.board is None
