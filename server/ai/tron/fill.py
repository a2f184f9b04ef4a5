"""Tron AI: a lone rider filling its space: chamber and parity bounds, greedy rides, the exhaustive endgame search."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from gamenight.server.ai.tron import kernel, params
from gamenight.server.ai.tron.chambers import _chamber_tree, local_cuts
from gamenight.server.ai.tron.grid import (
    Direction,
    Index,
    Leaf,
    Mask,
    _Timeout,
    colour_mask,
    flood,
    open_moves,
    parity_fill,
    steps_of,
    walls_around,
)
from gamenight.server.games.tron import NORTH

# -- space filling (apart) ---------------------------------------------------------------------------------


def chamber_fill(free: Mask, stride: int, head: Index) -> int:
    """How many squares a lone rider at `head` can still ride through, estimated over the chamber tree.

    Articulation squares cut the region into chambers; a chamber hanging off a cut square is a dead end
    that can be entered only once, so the estimate is a chamber's size plus the best of the chambers
    hanging off it, down the tree (a1k0n's chambers), capped by the checkerboard parity bound.
    """
    if kernel.KERNEL is not None:
        found = kernel.KERNEL.chamber_fill(free, stride, head)
        if found is not NotImplemented:
            return found
    region = flood(free, stride, head)
    if not region:
        return 0
    graph = region | 1 << head
    masks, above = _chamber_tree(graph, stride, head, local_cuts(graph, stride))
    sizes = [mask.bit_count() for mask in masks]
    best_below = [0] * len(sizes)
    for c in range(len(sizes) - 1, 0, -1):
        best_below[above[c]] = max(best_below[above[c]], sizes[c] + best_below[c])
    return min(sizes[0] + best_below[0], parity_fill(region, head))


def chain_fill(free: Mask, stride: int, head: Index) -> int:
    """`chamber_fill` with the checkerboard bound taken per chain of chambers, not over the whole region: a ride
    goes down one chain from the head and alternates colours within it, so it is at most the best chain's own
    parity bound (at most `chamber_fill`, still never below the longest ride)."""
    if kernel.KERNEL is not None:
        found = kernel.KERNEL.chain_fill(free, stride, head)
        if found is not NotImplemented:
            return found
    region = flood(free, stride, head)
    if not region:
        return 0
    graph = region | 1 << head
    masks, above = _chamber_tree(graph, stride, head, local_cuts(graph, stride))
    same_mask = colour_mask(region.bit_length() + 2)
    if head & 1:
        same_mask <<= 1
    same = [(mask & same_mask).bit_count() for mask in masks]
    other = [mask.bit_count() - s for mask, s in zip(masks, same, strict=True)]
    best = 2 * min(other[0], same[0]) + (other[0] > same[0])
    for c in range(1, len(masks)):  # a chamber's parent comes before it: totals down each chain in one pass
        up = above[c]
        same[c] += same[up]
        other[c] += other[up]
        bound = 2 * min(other[c], same[c]) + (other[c] > same[c])
        if bound > best:
            best = bound
    return best


def ride_length(free: Mask, stride: int, head: Index) -> int:
    """The squares of `greedy_ride` from `head`: a ride that exists, so a lower bound of the longest (exact on
    most rooms just after a separation, where the chamber estimate is a square or two over), cached by region;
    -1 for a region of more than `RIDE_ROOM` squares (too slow to ride at a leaf)."""
    region = flood(free, stride, head)
    if region.bit_count() > params.RIDE_ROOM:
        return -1
    key = (region, head, stride)
    length = _RIDES.get(key)
    if length is None:
        if len(_RIDES) >= RIDE_CACHE:
            _RIDES.clear()
        length = _RIDES[key] = len(greedy_ride(region, stride, head))
    return length


_RIDES: dict[tuple[Mask, Index, int], int] = {}
"""`ride_length` by (region, head, stride): sibling leaves of a search share one side's region."""
RIDE_CACHE = 8192


def exact_ride(free: Mask, stride: int, head: Index, deadline: float, fresh: bool = True) -> int | None:
    """The longest ride a lone rider at `head` can make, when a short search proves it: the chamber estimate
    (`chamber_fill`, an upper bound) if the greedy ride (`ride_length`) reaches it, else the longest ride
    `fill_search` proves within `EXACT_MS`; None when it proves none, for a room over `EXACT_ROOM` squares,
    and for a room not yet searched when not `fresh`. Cached by region. Raises _Timeout past `deadline`."""
    region = flood(free, stride, head)
    key = (region, head, stride)
    length = _EXACT.get(key)
    if length is not None:
        return length if length >= 0 else None
    if region.bit_count() > params.EXACT_ROOM or not fresh:
        return None
    length = chamber_fill(free, stride, head)
    if ride_length(free, stride, head) < length:
        fill = fill_search(region, stride, head, min(deadline, time.perf_counter() + params.EXACT_MS / 1000))
        if time.perf_counter() > deadline:
            raise _Timeout
        length = len(fill.best) if fill.proven else -1
    if len(_EXACT) >= EXACT_CACHE:
        _EXACT.clear()
    _EXACT[key] = length
    return length if length >= 0 else None


_EXACT: dict[tuple[Mask, Index, int], int] = {}
"""`exact_ride` by (region, head, stride), -1 for a room it proved nothing of: a room met near the root is met again
on the next ticks' searches."""
EXACT_CACHE = 8192


def flood_leaf(free: Mask, stride: int, head: Index) -> int:
    """The floodfill bot's lone-rider leaf: the open squares reachable from `head`."""
    return flood(free, stride, head).bit_count()


def fill_move(
    free: Mask, stride: int, head: Index, deadline: float, max_depth: int | None, leaf: Leaf = chamber_fill
) -> tuple[Direction, dict[str, Any]]:
    """The move that leaves the most squares to ride, by iterative deepening over our own moves alone.

    Leaves are scored by `leaf` (squares still to ride from there). Ties go to the move hugging more walls
    (it wastes least space), then N, E, S, W.
    """
    steps = steps_of(stride)
    choices = open_moves(free, head, steps)
    if len(choices) <= 1:
        return (choices or [NORTH])[0], {"depth": 0, "nodes": 0, "score": len(choices)}
    bound = leaf(free, stride, head)
    best, best_value, done, nodes = choices[0], -1, 0, [0]
    start = time.perf_counter()
    depth = 1
    while max_depth is None or depth <= max_depth:
        try:
            values = {d: _fill_value(free, stride, head + steps[d], depth - 1, deadline, leaf, nodes) for d in choices}
        except _Timeout:
            break
        best = max(choices, key=lambda d: (values[d], walls_around(free, stride, head + steps[d]), -d))
        best_value, done = values[best], depth
        if best_value >= bound or depth >= bound or _past(start, deadline, params.NEXT_DEPTH_SHARE):
            break
        depth += 1
    return best, {"depth": done, "nodes": nodes[0], "score": best_value}


def _fill_value(free: Mask, stride: int, at: Index, depth: int, deadline: float, leaf: Leaf, nodes: list[int]) -> int:
    """Moves a lone rider stepping onto the open square `at` makes from here on, searched `depth` deep."""
    nodes[0] += 1
    free ^= 1 << at
    if depth == 0:
        if time.perf_counter() > deadline:
            raise _Timeout
        return 1 + leaf(free, stride, at)
    steps = steps_of(stride)
    onward = (
        _fill_value(free, stride, at + steps[d], depth - 1, deadline, leaf, nodes) for d in open_moves(free, at, steps)
    )
    return 1 + max(onward, default=0)


def _past(start: float, deadline: float, share: float) -> bool:
    """True once `share` of the time from `start` to `deadline` is gone."""
    return time.perf_counter() - start >= share * (deadline - start)


# -- the endgame: exhaustive space filling (level 5, apart) --------------------------------------------------


def _ring_table() -> tuple[int, ...]:
    """For each 8-bit ring of open squares around a square (N, NE, E, SE, S, SW, W, NW = bits 0-7): how many
    separate groups its open N/E/S/W neighbours form within the ring (a corner joins the two sides it
    touches). Two or more groups: taking the square may cut the region in two (a local articulation point)."""
    table = []
    for ring in range(256):
        groups = 0
        for start in (0, 2, 4, 6):
            # Count a group at each open side whose ring-predecessor chain (through open corners) is closed.
            if not ring >> start & 1:
                continue
            corner, side = (start - 1) % 8, (start - 2) % 8
            if ring >> corner & 1 and ring >> side & 1:
                continue  # joined with the previous side through the open corner
            groups += 1
        if groups == 0 and ring & 0b01010101 == 0b01010101:
            groups = 1  # every side and corner open: one ring all round
        table.append(groups)
    return tuple(table)


RING_GROUPS = _ring_table()


def ring_of(free: Mask, stride: int, at: Index) -> int:
    """The 8-bit ring of `at`'s open neighbours, N first, clockwise (see `RING_GROUPS`)."""
    top = free >> (at - stride - 1)
    mid = free >> (at - 1)
    low = free >> (at + stride - 1)
    return (
        (top >> 1 & 1)
        | (top >> 2 & 1) << 1
        | (mid >> 2 & 1) << 2
        | (low >> 2 & 1) << 3
        | (low >> 1 & 1) << 4
        | (low & 1) << 5
        | (mid & 1) << 6
        | (top & 1) << 7
    )


def room_after(free: Mask, stride: int, head: Index) -> tuple[int, Mask]:
    """The most squares a lone rider at `head` could still ride by the parity bound, entering just one of the
    regions its open neighbours lead into (a square joining two of them is a cut: only one can be had),
    and that region."""
    best, best_region, seen = 0, 0, 0
    for step in (-stride, 1, stride, -1):
        at = head + step
        if not free >> at & 1 or seen >> at & 1:
            continue
        region = flood(free, stride, at) | 1 << at
        seen |= region
        room = parity_fill(region, head)
        if room > best:
            best, best_region = room, region
    return best, best_region


def _room(free: Mask, stride: int, head: Index) -> tuple[int, Mask]:
    """`room_after` for the endgame search: with the per-chain bound on (`FILL_CHAINS`) only the room is used, and
    the kernel computes it when there is one (the region is then left out: 0)."""
    if params.FILL_CHAINS and kernel.KERNEL is not None:
        room = kernel.KERNEL.room_after(free, stride, head)
        if room is not NotImplemented:
            return room, 0
    return room_after(free, stride, head)


@dataclass(slots=True)
class FillSearch:
    """One endgame search: the best ride found so far (squares in order), its proof target and its effort."""

    free: Mask
    stride: int
    head: Index
    deadline: float
    bound: int
    best: list[Index]
    nodes: int = 0
    depth: int = 0
    complete: bool = False
    """True once a whole iteration ran without cutting a ride short: `best` is then the longest there is."""
    cut: bool = False
    seen: set[tuple[Mask, Index]] = field(default_factory=set)
    """The (open squares, head) nodes of the current iteration: reaching one again adds nothing."""

    @property
    def proven(self) -> bool:
        """True when `best` is known to be the longest ride."""
        return self.complete or len(self.best) >= self.bound


def greedy_ride(
    free: Mask, stride: int, head: Index, deadline: float | None = None, partial: bool = False
) -> list[Index]:
    """A fast full ride from `head`: hug the walls (fewest onward exits), and where a step could cut the room
    in two (a local articulation point) take the step keeping the most room by the parity bound.

    Past `deadline` (if given) it raises _Timeout, or with `partial` returns the ride so far.
    """
    if kernel.KERNEL is not None:
        found = kernel.KERNEL.greedy_ride(free, stride, head, -1.0 if deadline is None else deadline)
        if found is not NotImplemented:
            ride, late = found
            if late and not partial:
                raise _Timeout
            return ride
    steps = (-stride, 1, stride, -1)
    path: list[Index] = []
    while True:
        if deadline is not None and len(path) & 3 == 0 and time.perf_counter() > deadline:
            if partial:
                return path
            raise _Timeout
        options = [head + s for s in steps if free >> (head + s) & 1]
        if not options:
            return path
        head = options[0] if len(options) == 1 else _greedy_step(free, stride, head, options)
        free ^= 1 << head
        path.append(head)


def _greedy_step(free: Mask, stride: int, head: Index, options: list[Index]) -> Index:
    """`greedy_ride`'s choice among several steps: the most room kept where a step cuts, else the fewest exits."""
    steps = (-stride, 1, stride, -1)
    best_key: tuple[int, int] | None = None
    pick = options[0]
    # The head itself may join separate regions: then each step commits to one of them.
    split = RING_GROUPS[ring_of(free, stride, head)] >= 2
    for at in options:
        after = free ^ 1 << at
        exits = sum(after >> (at + s) & 1 for s in steps)
        cuts = split or RING_GROUPS[ring_of(after, stride, at)] >= 2
        # No cut: the whole room stays open, as good as any other step that cuts nothing.
        room = room_after(after, stride, at)[0] if cuts else 1 << 20
        key = (room, -exits)
        if best_key is None or key > best_key:
            best_key, pick = key, at
    return pick


def fill_search(free: Mask, stride: int, head: Index, deadline: float, seed: list[Index] | None = None) -> FillSearch:
    """The longest ride from `head` that the time allows, by iterative deepening over depth-first searches.

    Each iteration branches over every step up to its horizon and finishes each ride greedily from there;
    a branch is cut when the squares ridden plus the parity bound of the room left (one region only, see
    `room_after`) cannot beat the best ride found. It stops when a ride reaches the root's bound (the chamber
    tree capped by the parity bound: no ride is longer), when an iteration cut no ride short (the search
    was exhaustive), or at the deadline; `seed` is a ride found before, tried first.
    """
    bound, region = room_after(free, stride, head)
    if region.bit_count() <= params.CHAMBER_ROOT_ROOM:
        bound = min(bound, (chain_fill if params.FILL_CHAINS else chamber_fill)(free, stride, head))
    first = greedy_ride(free, stride, head, deadline, partial=True)
    if seed is not None and len(seed) > len(first):
        first = seed
    fill = FillSearch(free, stride, head, deadline, bound, first)
    horizon = 1
    while not fill.proven and horizon <= bound:
        fill.cut = False
        fill.seen.clear()
        try:
            _fill_branch(fill, free, head, [], horizon)
        except _Timeout:
            break
        fill.depth = horizon
        if not fill.cut:
            fill.complete = True
        horizon += 1
    return fill


def _fill_branch(fill: FillSearch, free: Mask, head: Index, path: list[Index], horizon: int) -> None:
    """Search the rides continuing `path` (ending at `head`, `free` left open), branching `horizon` more steps."""
    fill.nodes += 1
    if time.perf_counter() > fill.deadline:  # a node floods the room: reading the clock is cheap beside it
        raise _Timeout
    # The same squares ridden in another order to the same head: the same rides from here, already searched.
    if horizon > 0:
        key = (free, head)
        if key in fill.seen:
            return
        fill.seen.add(key)
    stride = fill.stride
    room, region = _room(free, stride, head)
    if len(path) + room <= len(fill.best):
        return
    if room <= params.CHAMBER_BOUND_ROOM:
        # The chamber tree is the tighter bound (dead ends can be had only one at a time), at a price. With
        # `FILL_CHAINS` it is taken over every region the head leads into (the parity bound above keeps only the
        # best one) and capped by the parity bound of each chain (`chain_fill`).
        if params.FILL_CHAINS:
            room = min(room, chain_fill(free, stride, head))
        else:
            room = min(room, chamber_fill(region, stride, head))
        if len(path) + room <= len(fill.best):
            return
    if horizon == 0:
        rest = greedy_ride(free, stride, head, fill.deadline)
        if len(path) + len(rest) > len(fill.best):
            fill.best = path + rest
        if len(rest) < room:
            fill.cut = True
        if len(fill.best) >= fill.bound:
            raise _Timeout  # proven: stop at once (the caller sees `proven`)
        return
    steps = (-stride, 1, stride, -1)
    options = []
    for step in steps:
        at = head + step
        if free >> at & 1:
            after = free ^ 1 << at
            options.append((sum(after >> (at + s) & 1 for s in steps), at, after))
    options.sort()
    # The seed / best ride's next step first: the previous principal variation.
    depth = len(path)
    if depth < len(fill.best) and fill.best[:depth] == path:
        preferred = fill.best[depth]
        options.sort(key=lambda option: option[1] != preferred)
    for _, at, after in options:
        path.append(at)
        _fill_branch(fill, after, at, path, horizon - 1)
        path.pop()
        if len(fill.best) >= fill.bound:
            return


_PLANS: dict[tuple[Mask, Index, int], tuple[list[Index], bool]] = {}
"""Rides found on earlier ticks, by (our region, head, stride) after their first step: (the rest of the ride, proven).
A lone rider's region only shrinks along the ride, so the next tick finds its plan here and, if it was
proven, plays on at once; otherwise the plan seeds the new search. Bounded by `PLAN_CACHE`."""
PLAN_CACHE = 64


def endgame_move(free: Mask, stride: int, head: Index, deadline: float) -> tuple[Direction, dict[str, Any]]:
    """Level 5's move when apart: the first step of the longest ride `fill_search` finds by the deadline."""
    steps = steps_of(stride)
    choices = open_moves(free, head, steps)
    if not choices:
        return NORTH, {"depth": 0, "nodes": 0, "score": 0}
    region = flood(free, stride, head)
    planned = _PLANS.get((region, head, stride))
    if planned is not None and planned[1] and planned[0]:
        rest, proven = planned
        fill_nodes, fill_depth, ride = 0, 0, rest
    else:
        fill = fill_search(region, stride, head, deadline, planned[0] if planned else None)
        ride, proven, fill_nodes, fill_depth = fill.best, fill.proven, fill.nodes, fill.depth
    if not ride:
        return choices[0], {"depth": 0, "nodes": fill_nodes, "score": 0}
    if len(_PLANS) >= PLAN_CACHE:
        _PLANS.clear()
    _PLANS[(region ^ 1 << ride[0], ride[0], stride)] = (ride[1:], proven)
    move = next(d for d in choices if head + steps[d] == ride[0])
    return move, {"depth": fill_depth, "nodes": fill_nodes, "score": len(ride), "proven": proven}
