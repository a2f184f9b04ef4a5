"""Presence and challenges end to end: the real TUI (Pilot) and a real server on loopback, with a raw protocol
client (tests/peer.py) saying hello as a bot on the other side."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from textual.widgets import DataTable, Select

from gamenight.client.app import GameNightApp
from gamenight.client.local_server import LocalServer, server_command
from gamenight.client.screens.challenge import ChallengeScreen, InviteScreen, OfferScreen
from gamenight.client.screens.game import GameScreen
from gamenight.client.widgets.othello import OthelloBoard
from gamenight.protocol.messages import Accept, ChallengeRequest, Decline, Joined
from gamenight.protocol.vocab import RoomStatus
from tests.client.conftest import create_room_via_form, mounted, noticed, select_player, wait_for
from tests.peer import Peer

SIZE = (120, 36)
BOT_KEY = "rhino-key-" + "k" * 20


@pytest.fixture
def short_url(tmp_path) -> Iterator[str]:
    """A real server whose challenges expire after one second (`--limit challenge_s=1`)."""
    command = [*server_command(), "--db", str(tmp_path / "short.db"), "--limit", "challenge_s=1"]
    with LocalServer(command, log_path=tmp_path / "short.log") as server:
        assert server.url is not None
        yield server.url


async def bot(url: str, name: str = "rhino") -> Peer:
    """A bot online that takes Othello challenges, as gamenight-bot would say hello."""
    return await Peer.connect(url, name, key=BOT_KEY, bot=True, accepts=["othello"])


async def challenge_from_lobby(app: GameNightApp, pilot, name: str, seat: int = 0) -> ChallengeScreen:
    """Select `name` in the online list, press p, set my seat and send the challenge (Ctrl+S)."""
    await select_player(app, pilot, name)
    await pilot.press("p")
    await wait_for(pilot, lambda: isinstance(app.screen, ChallengeScreen), "the challenge form")
    form = app.screen
    assert isinstance(form, ChallengeScreen)
    await wait_for(pilot, lambda: form.query("#opt-size"), "the game's option fields")
    form.query_one("#seat", Select).value = seat
    await pilot.pause()
    await pilot.press("ctrl+s")
    await wait_for(pilot, lambda: app.model.presence.pending, "the challenge confirmed")
    return form


async def test_a_bot_is_seen_challenged_and_played(url):
    """A TUI player sees an online bot marked as a bot, challenges it from the lobby, the bot accepts, and the
    TUI lands on the game screen and plays a move the bot sees."""
    rhino = await bot(url)
    app = GameNightApp(url, "ann", save_name=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "rhino" in app.model.presence.players, "rhino in the online list")
        table = app.screen.query_one("#players", DataTable)
        await wait_for(pilot, lambda: table.row_count == 1, "the online list drawn")
        assert "[bot]" in str(table.get_cell("rhino", "player")) and str(table.get_cell("rhino", "takes")) == "Othello"
        await challenge_from_lobby(app, pilot, "rhino", seat=0)
        offer = await rhino.expect("challenged")
        assert offer.sender.name == "ann" and not offer.sender.bot
        assert offer.game == "othello" and offer.seat == 1 and offer.room is None
        assert "rhino" in str(app.screen.query_one("#pending").render())
        joined = await rhino.request(Accept, challenge=offer.challenge)
        assert isinstance(joined, Joined) and joined.seat == 1
        await wait_for(
            pilot, lambda: isinstance(app.screen, GameScreen) and app.model.room.my_turn, "my first move as black"
        )
        assert app.model.room.seat == 0 and app.model.room.code == joined.room
        await wait_for(pilot, lambda: noticed(app, "rhino", "accepted"), "the accepted notice")
        board = await mounted(app, pilot, OthelloBoard)
        await wait_for(pilot, lambda: board.position.can_move, "the board offering moves")
        board.focus()
        await pilot.press("enter")
        moved = await rhino.expect("moved")
        assert moved.seat == 0
        await wait_for(pilot, lambda: app.model.room.state.seq >= 2, "my move on the board")
    await rhino.close()


async def test_an_offer_is_accepted_from_the_dialog(url):
    """A challenge from a bot opens a dialog naming it and the game; y accepts and the game screen opens with the
    TUI in the seat the challenge offered."""
    rhino = await bot(url)
    app = GameNightApp(url, "ann", save_name=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        sent = await rhino.request(ChallengeRequest, to="ann", game="othello", options={"size": 10}, seat=0)
        assert sent.type == "challenge_sent"
        await wait_for(
            pilot, lambda: isinstance(app.screen, OfferScreen) and app.screen.query("#decline"), "the offer dialog"
        )
        text = str(app.screen.query_one("#offer-text").render())
        assert "rhino [bot] challenges you to Othello" in text and "10" in text
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, GameScreen), "the game screen")
        assert app.model.room is not None and app.model.room.seat == 1
        gone = await rhino.expect("challenge_gone")
        assert gone.why == "accepted" and gone.room == app.model.room.code
        await wait_for(pilot, lambda: app.model.room.status == RoomStatus.PLAYING, "the game started")
    await rhino.close()


async def test_an_offer_is_declined_from_the_dialog(url):
    """n in the offer dialog declines: the challenger gets `challenge_gone` declined and the dialog closes."""
    rhino = await bot(url)
    app = GameNightApp(url, "ann", save_name=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        await rhino.request(ChallengeRequest, to="ann", game="othello", options={}, seat=1)
        await wait_for(
            pilot, lambda: isinstance(app.screen, OfferScreen) and app.screen.query("#decline"), "the offer dialog"
        )
        await pilot.press("n")
        gone = await rhino.expect("challenge_gone")
        assert gone.why == "declined"
        await wait_for(pilot, lambda: not isinstance(app.screen, OfferScreen), "the dialog closed")
        assert not app.model.presence.offers and app.model.room is None
    await rhino.close()


async def test_a_declined_challenge_says_why_and_withdraw_reaches_the_bot(url):
    """The bot declining my challenge shows its reason; w withdraws my next one (the bot is told)."""
    rhino = await bot(url)
    app = GameNightApp(url, "ann", save_name=False)
    async with app.run_test(size=SIZE) as pilot:
        await challenge_from_lobby(app, pilot, "rhino")
        offer = await rhino.expect("challenged")
        await rhino.request(Decline, challenge=offer.challenge, reason="only on weekends")
        await wait_for(pilot, lambda: noticed(app, "declined", "only on weekends"), "the decline notice")
        assert not app.model.presence.pending
        await challenge_from_lobby(app, pilot, "rhino")
        second = await rhino.expect("challenged")
        await pilot.press("w")
        gone = await rhino.expect("challenge_gone")
        assert gone.challenge == second.challenge and gone.why == "withdrawn"
        await wait_for(pilot, lambda: not app.model.presence.pending, "the pending line cleared")
    await rhino.close()


async def test_expired_challenges_are_told_and_close_the_offer(short_url):
    """With challenges lasting one second: my unanswered challenge ends with an "expired" notice, and an offer
    to me that nobody answers closes its dialog by itself."""
    rhino = await bot(short_url)
    app = GameNightApp(short_url, "ann", save_name=False)
    async with app.run_test(size=SIZE) as pilot:
        await challenge_from_lobby(app, pilot, "rhino")
        await wait_for(pilot, lambda: noticed(app, "rhino", "expired"), "the expired notice")
        assert not app.model.presence.pending
        await rhino.request(ChallengeRequest, to="ann", game="othello", options={}, seat=0)
        await wait_for(
            pilot, lambda: isinstance(app.screen, OfferScreen) and app.screen.query("#decline"), "the offer dialog"
        )
        await wait_for(pilot, lambda: not isinstance(app.screen, OfferScreen), "the dialog closed by the expiry")
        await wait_for(pilot, lambda: noticed(app, "rhino's challenge", "expired"), "the offer's expired notice")
        assert not app.model.presence.offers
    await rhino.close()


async def test_invite_offers_my_open_seat_to_a_bot(url):
    """In a room I host with an open seat, i offers that seat to an online bot (`invite {room, seat, to}`); the
    bot accepts and the game starts."""
    rhino = await bot(url)
    app = GameNightApp(url, "ann", save_name=False)
    async with app.run_test(size=SIZE) as pilot:
        code = await create_room_via_form(app, pilot, "othello", ["me", "open"])
        screen = app.screen
        assert isinstance(screen, GameScreen)
        await wait_for(pilot, lambda: screen.check_action("invite", ()), "the invite key offered")
        await pilot.press("i")
        await wait_for(pilot, lambda: isinstance(app.screen, InviteScreen), "the invite dialog")
        assert app.screen.query_one("#invite-to", Select).value == "rhino"
        assert app.screen.query_one("#invite-seat", Select).value == 1
        await pilot.press("ctrl+s")
        offer = await rhino.expect("challenged")
        assert offer.room == code and offer.seat == 1 and offer.sender.name == "ann"
        await rhino.request(Accept, challenge=offer.challenge)
        await wait_for(pilot, lambda: app.model.room.status == RoomStatus.PLAYING, "the game started")
        await wait_for(pilot, lambda: noticed(app, "invite", "rhino", "accepted"), "the accepted notice")
    await rhino.close()


async def test_the_online_list_follows_arrivals_and_departures(url):
    """The lobby's online list updates live as a bot connects and disconnects; back from a room (where presence
    is not pushed) it catches up on who came meanwhile."""
    app = GameNightApp(url, "ann", save_name=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        table = app.screen.query_one("#players", DataTable)
        assert table.row_count == 0 and app.screen.query_one("#no-players").display
        rhino = await bot(url)
        await wait_for(pilot, lambda: table.row_count == 1, "rhino listed")
        assert "[bot]" in str(table.get_cell("rhino", "player"))
        await rhino.close()
        await wait_for(pilot, lambda: table.row_count == 0, "rhino gone from the list")
        await create_room_via_form(app, pilot, "othello", ["me", "open"])
        cat = await bot(url, "cat")
        await pilot.press("b")
        await wait_for(pilot, lambda: app.screen is app.lobby_screen, "back in the lobby")
        await wait_for(pilot, lambda: table.row_count == 1, "cat listed after the room")
        assert "cat" in str(table.get_cell("cat", "player"))
    await cat.close()
