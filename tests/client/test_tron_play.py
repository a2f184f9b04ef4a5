"""Pilot test: a Tron game against a bot that rides to survive, steered with the arrow keys until it ends."""

from __future__ import annotations

from gamenight.client.model import BOT, ME, RoomSession
from gamenight.client.screens.dialogs import GameOverScreen
from gamenight.client.widgets.tron import EMPTY, OPPOSITE, STEPS, TronArena
from tests.client.conftest import create_room_via_form, mounted, wait_for

KEYS = {1: "up", 2: "right", 3: "down", 4: "left"}
# Ticks long enough for the bot's worker to answer in time (else it rides straight into a wall).
OPTIONS = {"width": 16, "height": 12, "seed": 11, "tick_ms": 200, "countdown_ms": 1500}
STEERED_TICKS = 4


def _open_direction(arena: TronArena, seat: int) -> int:
    """A direction whose next square is empty and that is not straight back (north first)."""
    x, y = arena.grid.heads[seat]
    current = arena.grid.dirs[seat]
    for direction, (dx, dy) in STEPS.items():
        if current and direction == OPPOSITE[current]:
            continue
        if arena.grid.cell(x + dx, y + dy) == EMPTY:
            return direction
    return current or 1


async def test_steer_by_keys_until_the_game_ends(make_app, monkeypatch):
    """Arrow keys turn your rider (the trail follows the key), a key straight back is ignored, and the
    game runs tick by tick to its end, where the result dialog appears."""
    # Every full state the client takes, with the countdown it derives (the arena is drawn from these).
    countdowns: list[tuple[object, int | None]] = []
    apply_state = RoomSession.apply_state

    def recording(session: RoomSession, state) -> bool:
        started = apply_state(session, state)
        countdowns.append((state.view.get("tick"), session.countdown_ms))
        return started

    monkeypatch.setattr(RoomSession, "apply_state", recording)
    app = make_app("ann")
    async with app.run_test(size=(100, 36)) as pilot:
        await create_room_via_form(app, pilot, "tron", [ME, f"{BOT}:floodfill"], OPTIONS)
        await wait_for(
            pilot, lambda: app.model.room.state is not None and app.model.room.status == "playing", "the start"
        )
        arena = await mounted(app, pilot, TronArena, "the arena")
        # The start counts down to the first tick: the countdown, then one tick to steer. (Read from the state
        # the client took, not from the arena: on a loaded machine the first tick can land before the arena
        # mounts, and then, rightly, no countdown is drawn; test_tron_widget checks the drawing.)
        assert countdowns[0] == (0, OPTIONS["countdown_ms"] + OPTIONS["tick_ms"])
        await wait_for(pilot, lambda: arena.grid.tick >= 1, "the first tick")
        assert arena.overlay_text() == ""

        # Turn towards open space and check the rider went that way.
        tick = arena.grid.tick
        wanted = _open_direction(arena, 0)
        await pilot.press(KEYS[wanted])
        await wait_for(pilot, lambda: arena.grid.tick >= tick + 2 or app.model.room.status != "playing", "two ticks")
        if app.model.room.status == "playing":
            assert arena.grid.dirs[0] == wanted

        # Straight back is ignored: no move is posted, so the rider cannot turn into its own trail.
        if app.model.room.status == "playing":
            back = OPPOSITE[arena.grid.dirs[0]]
            arena.sent = None
            await pilot.press(KEYS[back])
            assert arena.sent is None

        # Ride on into open space for a few ticks, then let go: riding straight ends in a crash.
        for _ in range(STEERED_TICKS):
            if app.model.room.status != "playing":
                break
            tick = arena.grid.tick
            await pilot.press(KEYS[_open_direction(arena, 0)])
            await wait_for(
                pilot, lambda t=tick: arena.grid.tick > t or app.model.room.status != "playing", "the next tick"
            )
        await wait_for(pilot, lambda: isinstance(app.screen, GameOverScreen), "the result dialog", timeout=30)
        assert app.model.room.state.result.reason == "crash"
        assert app.screen.headline in ("You won!", "You lost", "Draw", "Shared win")
