"""The create, challenge and tournament forms in a player's words: time-control presets in each, and the server's
internals (AI milliseconds and pace, a turn-based game's countdown, an arena's seed) folded under "Advanced"."""

from __future__ import annotations

from textual.widgets import Collapsible, Input, Select

from gamenight.client.screens.challenge import ChallengeScreen
from gamenight.client.screens.create import CreateRoomScreen
from gamenight.client.screens.tournaments import CreateTournamentScreen
from gamenight.protocol.vocab import PlayerInfo
from tests.client.conftest import wait_for

SIZE = (120, 40)


def folded(screen, name: str) -> bool:
    """True when option `name`'s field sits in the form's collapsed "Advanced" section."""
    field = screen.query_one(f"#opt-{name}")
    return any(isinstance(a, Collapsible) and a.collapsed for a in field.ancestors)


async def test_create_form_folds_the_internals_under_advanced(make_app):
    """Othello's form shows the time control and its options; AI ms, AI pace and the countdown are under a closed
    "Advanced"; Tron keeps its countdown in view and folds its arena seed."""
    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        await pilot.press("c")
        await wait_for(
            pilot, lambda: isinstance(app.screen, CreateRoomScreen) and app.screen.query("#opt-ai_ms"), "form"
        )
        form = app.screen
        assert form.query("#preset") and not folded(form, "size") and not folded(form, "clock_s")
        assert folded(form, "ai_ms") and folded(form, "ai_pace_ms") and folded(form, "countdown_ms")
        assert not form.query_one("#opt-ai_ms").region.area  # not drawn while folded
        form.query_one("#game", Select).value = "tron"
        await wait_for(pilot, lambda: form.game.name == "tron" and form.query("#opt-seed"), "Tron's fields")
        assert folded(form, "seed") and not folded(form, "countdown_ms") and not form.query("#preset")


async def test_challenge_and_tournament_forms_offer_time_presets(make_app):
    """The challenge form's 5+3 preset fills its clock fields; the tournament form's sends a 5+3 clock."""
    app = make_app("ann")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model.lobby.games, "the welcome")
        rhino = PlayerInfo(name="rhino", bot=True, games=("othello", "connect4"))
        games = [app.model.lobby.games[name] for name in rhino.games]
        app.push_screen(ChallengeScreen(rhino, games))
        await wait_for(pilot, lambda: isinstance(app.screen, ChallengeScreen) and app.screen.query("#preset"), "form")
        form = app.screen
        assert folded(form, "ai_ms")
        form.query_one("#preset", Select).value = 3  # 5+3 blitz
        await wait_for(pilot, lambda: form.query_one("#opt-clock_s", Input).value == "300", "the preset's clock")
        assert form.query_one("#opt-increment_s", Input).value == "3"
        assert form.plan().options == {"clock_s": 300, "increment_s": 3}
        await pilot.press("escape")

        app.push_screen(CreateTournamentScreen(app.model))
        await wait_for(
            pilot, lambda: isinstance(app.screen, CreateTournamentScreen) and app.screen.query("#t-time"), "the form"
        )
        form = app.screen
        form.query_one("#t-game", Select).value = "connect4"
        form.query_one("#t-time", Select).value = 3
        await pilot.pause()
        assert form.request().options == {"clock_s": 300, "increment_s": 3}
