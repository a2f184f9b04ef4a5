"""Tron AI: choosing a move: a level's (quick, crowd, apart or contact) or a named bot's, with what the search found."""

from __future__ import annotations

import random
import time
from typing import Any

from gamenight.server.ai.levels import limits_for
from gamenight.server.ai.tron import params
from gamenight.server.ai.tron.bots import BOTS, _bot_move, crowd_move
from gamenight.server.ai.tron.engines import TickEngine, _pessimistic_move, deepen
from gamenight.server.ai.tron.fill import endgame_move, fill_move
from gamenight.server.ai.tron.grid import Direction, Grid, _quick, _rival, grid_of
from gamenight.server.ai.tron.territory import voronoi
from gamenight.server.games.tron import DIRECTION_NAMES, TronState

# -- choosing a move ---------------------------------------------------------------------------------------------


def choose_level(
    state: TronState, seat: int, level: int, budget_ms: int, rng: random.Random
) -> tuple[Direction, dict[str, Any]]:
    """A direction for `seat` at `level` (1-5) within about `budget_ms`, and what the search found."""
    start = time.perf_counter()
    grid = grid_of(state)
    move, found = _level_move(grid, seat, level, limits_for(level, budget_ms).time_ms or 1, rng, start)
    return move, {**_info(move, found, start), "level": level}


def choose_bot(
    state: TronState, seat: int, bot: str, budget_ms: int, rng: random.Random
) -> tuple[Direction, dict[str, Any]]:
    """A direction for `seat` played by the named `bot` within about `budget_ms`; ValueError for an unknown bot."""
    start = time.perf_counter()
    if bot not in BOTS:
        raise ValueError(f"tron has no bot {bot!r}; it has {', '.join(BOTS)}")
    move, found = _bot_move(grid_of(state), seat, bot, budget_ms, start)
    return move, {**_info(move, found, start), "bot": bot}


def _info(move: Direction, found: dict[str, Any], start: float) -> dict[str, Any]:
    """A complete info map: depth, nodes, score, pv (wire letters) and milliseconds."""
    return {
        "depth": found.get("depth", 0),
        "nodes": found.get("nodes", 0),
        "score": found.get("score", 0),
        "pv": found.get("pv", [DIRECTION_NAMES[move]]),
        "ms": int((time.perf_counter() - start) * 1000),
        "phase": found.get("phase", "quick"),
    }


def _level_move(
    grid: Grid, seat: int, level: int, time_ms: int, rng: random.Random, start: float
) -> tuple[Direction, dict[str, Any]]:
    """A level's move: quick when the budget is tiny, greedy in a crowd, filling when apart, else searching."""
    if time_ms < params.MIN_SEARCH_MS:
        return _quick(grid, seat), {}
    rival = _rival(grid, seat)
    if rival is None:
        move, found = crowd_move(grid, seat)
        return move, {**found, "phase": "crowd"}
    deadline = start + params.DEADLINE_SHARE * time_ms / 1000
    ours, theirs = grid.heads[seat], grid.heads[rival]
    max_depth, noise = params.LEVEL_PLAN[level]
    if not voronoi(grid.open, grid.stride, ours, theirs).touching:
        if level == 5:
            move, found = endgame_move(grid.open, grid.stride, ours, deadline)
        else:
            move, found = fill_move(grid.open, grid.stride, ours, deadline, max_depth)
        return move, {**found, "phase": "apart"}
    if level in params.LEVEL_PESSIMISTIC:
        return _pessimistic_move(grid, seat, ours, theirs, rng, start, deadline)
    engine = TickEngine(grid.stride)
    engine.far_draw_penalty = params.LEVEL_FAR_DRAW.get(level, params.DRAW_PENALTY)
    engine.root_open = grid.open.bit_count()
    root = (grid.open, ours, theirs, 0, True, 0)
    move, found = deepen(
        engine, root, max_depth or params.MAX_TICK_DEPTH, noise * params.UNIT // 100, rng, deadline, (level, seat)
    )
    return move, {**found, "phase": "contact"}
