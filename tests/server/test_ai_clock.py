"""AI seats under a real clock: level 5 takes its budget from its time and plays whole games without flagging."""

from __future__ import annotations

import pytest

from gamenight.protocol.messages import AddAi, CreateRoom, Join
from gamenight.server.clock import AI_MIN_BUDGET_MS, GameClock
from tests.peer import Peer

GAMES = ["othello", "pentago", "connect4"]


async def _ai_game(peers, game: str, options: dict[str, object]):
    """Two level-5 AIs play one game while a spectator watches; returns the final state and the AI's `moved`s."""
    host: Peer = await peers("host")
    room = await host.request(CreateRoom, game=game, options={"ai_pace_ms": 0, **options})
    await host.request(Join, room=room.room, **{"role": "spectator"})
    await host.request(AddAi, room=room.room, level=5)
    await host.request(AddAi, room=room.room, level=5)
    final = await host.wait(lambda m: m.type == "state" and m.status == "finished")
    moves = [m for m in host.seen if m.type == "moved"]
    return final, moves


@pytest.mark.parametrize("game", GAMES)
async def test_level_5_manages_a_short_clock_without_flagging(peers, game):
    """At clock_s 8 the budget comes from the clock (not from ai_ms 10 s) and the whole game ends on the board."""
    final, moves = await _ai_game(peers, game, {"clock_s": 8, "ai_ms": 10000})
    assert final.result is not None and final.result.reason not in ("time", "forfeit", "resign")
    assert len(moves) == len(final.moves) and all(not m.ai.get("fallback") for m in moves)
    assert min(final.clock.remaining_ms) > 0


@pytest.mark.parametrize("game", GAMES)
async def test_level_5_completes_whole_games_at_one_minute(peers, game):
    """At clock_s 60 + 0 (ai_ms 150 to keep the test short) level 5 finishes every game on the board, never on time."""
    final, _ = await _ai_game(peers, game, {"clock_s": 60, "ai_ms": 150})
    assert final.result is not None and final.result.reason not in ("time", "forfeit", "resign")
    assert min(final.clock.remaining_ms) > 0


def test_the_budget_shrinks_with_the_time_left():
    """With a minute for 30 moves the AI may use ai_ms; with 3 s left it gets a fraction; it never gets below 10 ms."""
    clock = GameClock.from_options({"clock_s": 60}, 2)
    assert clock is not None
    clock.start(0, 0.0)
    assert clock.ai_budget_ms(0, 0.0, moves_left=30, ai_ms=1000, pace_ms=0) == 1000
    # 3 s left, 30 moves to go: 3000 / 33 - 80 ms of overhead
    assert clock.ai_budget_ms(0, 57.0, moves_left=30, ai_ms=1000, pace_ms=0) == int(3000 / 33 - 80)
    assert clock.ai_budget_ms(0, 59.99, moves_left=30, ai_ms=1000, pace_ms=0) == AI_MIN_BUDGET_MS
    with_increment = GameClock.from_options({"clock_s": 60, "increment_s": 2}, 2)
    assert with_increment is not None
    with_increment.start(0, 0.0)
    # 3 s left and a 2 s increment: 3000 / 33 + 0.75 * 2000 - 80
    assert with_increment.ai_budget_ms(0, 57.0, 30, 10000, 0) == int(3000 / 33 + 1500 - 80)


@pytest.mark.slow  # about 40 s: two level-5 AIs think up to the default 1 s per move over a whole game
async def test_level_5_at_one_minute_with_the_default_budget(peers):
    """At 1 minute + 0 with the room's default ai_ms (1000), level 5 finishes a whole Othello game on the board."""
    final, moves = await _ai_game(peers, "othello", {"clock_s": 60})
    assert final.result is not None and final.result.reason not in ("time", "forfeit", "resign")
    assert min(final.clock.remaining_ms) > 0 and all(not m.ai.get("fallback") for m in moves)
