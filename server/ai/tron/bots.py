"""Tron AI: the named bots (chaser, floodfill, voronoi) and the greedy move among three or four riders."""

from __future__ import annotations

import random
from typing import Any

from gamenight.server.ai.tron import params
from gamenight.server.ai.tron.engines import FloodfillEngine, VoronoiEngine, joint_search, search_depths
from gamenight.server.ai.tron.fill import fill_move, flood_leaf
from gamenight.server.ai.tron.grid import (
    Direction,
    Grid,
    Index,
    Mask,
    _quick,
    _rival,
    degree_sum,
    flood,
    spread,
    walls_around,
)
from gamenight.server.ai.tron.territory import voronoi
from gamenight.server.games.tron import NORTH

BOTS: dict[str, str] = {
    "chaser": "steps toward the opponent's head (squared distance, ties N, E, S, W)",
    "floodfill": "alpha-beta over both players' moves, leaves scored by the difference of their flood fills",
    "voronoi": "a1k0n's 2010 winner re-derived: pessimistic joint-move alpha-beta over Voronoi squares and edges"
    " along the best chain of chambers; greedy-tree space filling apart",
}


# -- three or four riders -------------------------------------------------------------------------------------


def crowd_move(grid: Grid, seat: int) -> tuple[Direction, dict[str, Any]]:
    """Three or more riders: the move with the biggest Voronoi share; a square a rival can also take counts a third."""
    steps = grid.steps
    rivals = [grid.heads[s] for s, riding in enumerate(grid.alive) if riding and s != seat]
    rival_reach = 0
    for head in rivals:
        rival_reach |= spread(1 << head, grid.stride)
    best, best_key = NORTH, None
    for d in grid.open_moves(seat):
        target = grid.heads[seat] + steps[d]
        share = _crowd_share(grid, target, rivals)
        key = (share // 3 if rival_reach >> target & 1 else share, -d)
        if best_key is None or key > best_key:
            best, best_key = d, key
    return best, {"depth": 1, "nodes": 4, "score": best_key[0] if best_key else 0}


def _crowd_share(grid: Grid, target: Index, rivals: list[Index]) -> int:
    """Our Voronoi score standing on `target` while the rivals move this tick too (so one layer ahead)."""
    free = grid.open & ~(1 << target)
    fronts = [0] + [1 << head for head in rivals]
    fronts, free = _layer(fronts, free, grid.stride)
    fronts[0] = 1 << target
    ours = 0
    while any(fronts):
        fronts, free = _layer(fronts, free, grid.stride)
        ours |= fronts[0]
    return params.CELL * ours.bit_count() + params.EDGE * degree_sum(ours, grid.open, grid.stride)


def _layer(fronts: list[Mask], free: Mask, stride: int) -> tuple[list[Mask], Mask]:
    """One breadth-first layer for several riders at once; a square two riders reach together is nobody's."""
    news = [spread(front, stride) & free for front in fronts]
    once = twice = 0
    for new in news:
        twice |= once & new
        once |= new
    return [new & ~twice for new in news], free & ~once


# -- the chaser --------------------------------------------------------------------------------------------------------


def chaser_move(grid: Grid, seat: int) -> Direction:
    """The chaser: of N, E, S, W, the first open square closest (squared distance) to the nearest rival's head."""
    stride, head = grid.stride, grid.heads[seat]
    rivals = [grid.heads[s] for s, riding in enumerate(grid.alive) if riding and s != seat]
    if not rivals:
        return _quick(grid, seat)
    prey = min(rivals, key=lambda h: _squared(stride, head, h))
    best, best_distance = NORTH, None
    for d in grid.open_moves(seat):
        distance = _squared(stride, head + grid.steps[d], prey)
        if best_distance is None or distance < best_distance:
            best, best_distance = d, distance
    return best


def _squared(stride: int, a: Index, b: Index) -> int:
    """The squared Euclidean distance between two indices."""
    ay, ax = divmod(a, stride)
    by, bx = divmod(b, stride)
    return (ax - bx) ** 2 + (ay - by) ** 2


# -- the floodfill and voronoi bots ------------------------------------------------------------------------------------


def _bot_move(grid: Grid, seat: int, bot: str, budget_ms: int, start: float) -> tuple[Direction, dict[str, Any]]:
    """A named bot's move."""
    if bot == "chaser":
        return chaser_move(grid, seat), {"depth": 1, "nodes": 4}
    if bot == "voronoi":
        return _voronoi_bot_move(grid, seat, budget_ms, start)
    time_ms = min(params.FLOODFILL_MS, budget_ms)
    if time_ms < params.MIN_SEARCH_MS:
        return _quick(grid, seat), {}
    rival = _rival(grid, seat)
    if rival is None:
        return _flood_greedy(grid, seat), {"depth": 1, "nodes": 4}
    deadline = start + params.DEADLINE_SHARE * time_ms / 1000
    ours, theirs = grid.heads[seat], grid.heads[rival]
    if not spread(1 << theirs, grid.stride) & flood(grid.open, grid.stride, ours):
        return fill_move(grid.open, grid.stride, ours, deadline, None, flood_leaf)
    engine = FloodfillEngine(grid.stride, deadline)
    root = (grid.open, ours, theirs, 0, 0)
    depths = search_depths(None, odd=False)
    return joint_search(engine, root, grid, seat, depths, 0, random.Random(0), start, deadline)


def _voronoi_bot_move(grid: Grid, seat: int, budget_ms: int, start: float) -> tuple[Direction, dict[str, Any]]:
    """The voronoi bot: a1k0n's 2010 design as published, none of level 5's own changes (see `VoronoiEngine`)."""
    if budget_ms < params.MIN_SEARCH_MS:
        return _quick(grid, seat), {}
    rival = _rival(grid, seat)
    if rival is None:
        return crowd_move(grid, seat)
    deadline = start + params.DEADLINE_SHARE * budget_ms / 1000
    ours, theirs = grid.heads[seat], grid.heads[rival]
    if not voronoi(grid.open, grid.stride, ours, theirs).touching:
        return fill_move(grid.open, grid.stride, ours, deadline, None)
    engine = VoronoiEngine(grid.stride, deadline)
    root = (grid.open, ours, theirs, 0, 0)
    depths = search_depths(None, odd=False)
    return joint_search(engine, root, grid, seat, depths, 0, random.Random(0), start, deadline)


def _flood_greedy(grid: Grid, seat: int) -> Direction:
    """The floodfill bot among three or more riders: the open move with the most space, then more walls."""
    best, best_key = NORTH, None
    for d in grid.open_moves(seat):
        target = grid.heads[seat] + grid.steps[d]
        rest = grid.open & ~(1 << target)
        key = (flood(rest, grid.stride, target).bit_count(), walls_around(rest, grid.stride, target), -d)
        if best_key is None or key > best_key:
            best, best_key = d, key
    return best
