"""The terminal bell: your move after the opponent's, a challenge to you, your clock under 10 s (once a game) and
a tournament's game starting ring it; `--quiet` or `"sound": false` in the config keep it silent."""

from __future__ import annotations

from gamenight.client.__main__ import main
from gamenight.client.app import GameNightApp
from gamenight.client.config import save_config
from gamenight.client.messages import MoveChosen
from gamenight.client.model import ME, OPEN
from gamenight.client.state import ClientState
from gamenight.protocol.messages import ChallengeRequest, Join, Joined, MakeMove
from gamenight.protocol.vocab import Role
from tests.client.conftest import create_room_via_form, wait_for
from tests.peer import Peer

SIZE = (110, 36)


def count_bells(app: GameNightApp) -> list[int]:
    """Count the app's bells from now on (the list holds one entry per ring)."""
    rung: list[int] = []
    app.bell = lambda: rung.append(1)  # type: ignore[method-assign]
    return rung


async def play_until_bobs_answer(app: GameNightApp, pilot, url: str, options: dict[str, object] | None = None) -> Peer:
    """Ann opens an Othello room, bob sits down; ann moves, bob answers; returns bob once ann has his answer."""
    code = await create_room_via_form(app, pilot, "othello", [ME, OPEN], options)
    bob = await Peer.connect(url, "bob")
    await bob.request(Join, room=code, seat=1)
    await wait_for(pilot, lambda: app.model.room.my_turn, "ann's first move")
    await play_and_get_answer(app, pilot, bob)
    return bob


async def play_and_get_answer(app: GameNightApp, pilot, bob: Peer) -> None:
    """Ann plays her first legal move as the board would post it; bob answers; returns once ann may move again."""
    move = app.model.room.state.legal[0]
    app.post_message(MoveChosen(move))
    played = await bob.expect("state", last_move=move)
    await bob.send(MakeMove(room=app.model.room.code, move=played.legal[0], seq=played.seq))
    await wait_for(pilot, lambda: app.model.room.seq > played.seq and app.model.room.my_turn, "ann's turn again")


async def test_bell_on_your_move_after_the_opponents(url):
    """The bell rings when the opponent's move makes it your turn, not at the game's start nor on your own move."""
    app = GameNightApp(url, "ann", save_name=False)
    rung = count_bells(app)
    async with app.run_test(size=SIZE) as pilot:
        bob = await play_until_bobs_answer(app, pilot, url)
        assert rung == [1]
        await bob.close()


async def test_quiet_keeps_the_bell_silent(url):
    """Started quiet, the client never rings, even when the opponent's move makes it your turn."""
    app = GameNightApp(url, "ann", save_name=False, quiet=True)
    rung = count_bells(app)
    async with app.run_test(size=SIZE) as pilot:
        bob = await play_until_bobs_answer(app, pilot, url)
        assert rung == []
        await bob.close()


async def test_config_sound_false_keeps_the_bell_silent(url):
    """`"sound": false` in the config file turns the bell off as --quiet does."""
    save_config({"sound": False})
    app = GameNightApp(url, "ann", save_name=False)
    rung = count_bells(app)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        rhino = await Peer.connect(url, "rhino", bot=True, accepts=["othello"])
        await rhino.request(ChallengeRequest, to="ann", game="othello", options={}, seat=1)
        await wait_for(pilot, lambda: app.model.presence.offers, "the challenge")
        assert rung == [] and not app.sound
        await rhino.close()


async def test_bell_on_a_challenge(url):
    """A challenge to you rings the bell as its dialog opens."""
    app = GameNightApp(url, "ann", save_name=False)
    rung = count_bells(app)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        rhino = await Peer.connect(url, "rhino", bot=True, accepts=["othello"])
        await rhino.request(ChallengeRequest, to="ann", game="othello", options={}, seat=1)
        await wait_for(pilot, lambda: rung, "the bell")
        assert rung == [1]
        await rhino.close()


async def test_bell_once_when_your_clock_goes_low(url):
    """Your clock under 10 s rings once in a game, however many moves follow on a low clock."""
    app = GameNightApp(url, "ann", save_name=False)
    rung = count_bells(app)
    async with app.run_test(size=SIZE) as pilot:
        bob = await play_until_bobs_answer(app, pilot, url, {"clock_s": 9})  # 9 s: low from the start
        await play_and_get_answer(app, pilot, bob)
        await pilot.pause(0.3)  # three redraws of the running clock
        assert len(rung) == 3  # bob's two answers, and the low clock once
        await bob.close()


def test_a_tournament_game_starting_asks_for_the_bell():
    """The `joined` that seats you in a tournament's game asks for the bell; an ordinary join does not."""
    state = ClientState("ann")
    assert not state.apply(Joined(room="r1", role=Role.PLAYER, seat=0, game="othello")).bell
    assert state.apply(Joined(room="r2", role=Role.PLAYER, seat=0, tournament="t1", game="othello")).bell


def test_quiet_flag_reaches_the_app():
    """`gamenight --quiet URL` starts the app quiet; without it the app may ring."""
    seen: list[object] = []

    def fake_app(url: str, name: str | None, **options: object) -> int:
        seen.append(options.get("quiet"))
        return 0

    assert main(["friend.example", "--name", "ann", "--quiet"], run_app=fake_app) == 0
    assert main(["friend.example", "--name", "ann"], run_app=fake_app) == 0
    assert seen == [True, False]
