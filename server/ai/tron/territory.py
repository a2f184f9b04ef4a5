"""Tron AI: the Voronoi split between two heads and the leaf score built on it (`territory_score`)."""

from __future__ import annotations

from dataclasses import dataclass

from gamenight.server.ai.tron import kernel, params
from gamenight.server.ai.tron.chambers import chamber_value
from gamenight.server.ai.tron.fill import chain_fill, chamber_fill, ride_length
from gamenight.server.ai.tron.grid import Index, Mask, degree_sum, parity_fill

# -- territory -----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Territory:
    """The Voronoi split between two heads: the squares each reaches strictly first, and whether the two
    regions touch (squares reached at once, which count for nobody, or neighbouring squares)."""

    first: Mask
    second: Mask
    touching: bool


def voronoi(free: Mask, stride: int, first: Index, second: Index, first_ahead: bool = False) -> Territory:
    """Split the open squares between two heads by breadth-first search, a whole layer at a time.

    With `first_ahead` the first head expands one layer alone before the two expand together: the second
    has already made this tick's move (its head is its target square, not open in `free`).
    """
    return Territory(*_split(free, stride, first, second, first_ahead))


def _split(free: Mask, stride: int, first: Index, second: Index, first_ahead: bool) -> tuple[Mask, Mask, bool]:
    """`voronoi` as a plain tuple (first's squares, second's, touching): the evaluation's hot path.

    Only the second side's squares and the squares both reach at once are gathered layer by layer; the
    first side's are what was taken and is neither, at the end. Once the second front dies out, the first
    floods on alone.
    """
    if kernel.KERNEL is not None:
        found = kernel.KERNEL.split(free, stride, first, second, first_ahead)
        if found is not NotImplemented:
            return found
    front_a, front_b = 1 << first, 1 << second
    start = free
    theirs = both_ways = 0
    if first_ahead:
        front_a = (front_a << 1 | front_a >> 1 | front_a << stride | front_a >> stride) & free
        free ^= front_a
    while front_b:
        # spread() written out: this loop is most of the AI's time.
        new_a = (front_a << 1 | front_a >> 1 | front_a << stride | front_a >> stride) & free
        new_b = (front_b << 1 | front_b >> 1 | front_b << stride | front_b >> stride) & free
        free ^= new_a | new_b
        both = new_a & new_b
        if both:
            both_ways |= both
            new_a ^= both
            new_b ^= both
        theirs |= new_b
        front_a, front_b = new_a, new_b
    while front_a:
        front_a = (front_a << 1 | front_a >> 1 | front_a << stride | front_a >> stride) & free
        free ^= front_a
    mine = start ^ free ^ theirs ^ both_ways
    if both_ways:
        return mine, theirs, True
    return mine, theirs, bool((mine << 1 | mine >> 1 | mine << stride | mine >> stride) & theirs)


def territory_score(
    stride: int,
    free: Mask,
    first: Index,
    second: Index,
    first_ahead: bool,
    draw: int,
    chambers: bool = False,
    edge: int = params.EDGE,
    parity: bool = False,
    close: int = -1,
    chains: bool = False,
) -> int:
    """The first head's score against the second: Voronoi territory in contact, space to fill apart.

    `draw` is what equal space to fill (both crash on the same tick) is worth to the first head. With
    `chambers` each side's territory counts only along its best chain of chambers (`chamber_value`), an
    open-neighbour link being worth `edge`. Apart, when the chamber estimates are at most `close` squares
    from each other, each side counts the squares of a greedy ride instead (`ride_length`, a lower bound).
    With `chains` the apart estimate takes the parity bound per chain of chambers (`chain_fill`).
    """
    if kernel.KERNEL is not None and chambers and not parity and close < 0:
        score = kernel.KERNEL.territory_score(stride, free, first, second, first_ahead, draw, edge, chains)
        if score is not NotImplemented:
            return score
    mine, theirs, touching = _split(free, stride, first, second, first_ahead)
    if touching:
        if chambers:
            return chamber_value(mine, free, stride, first, edge, parity) - chamber_value(
                theirs, free, stride, second, edge, parity
            )
        cells = mine.bit_count() - theirs.bit_count()
        edges = degree_sum(mine, free, stride) - degree_sum(theirs, free, stride)
        return params.CELL * cells + params.EDGE * edges
    # Apart: the second rider has already made this tick's move when the first is ahead. With `chambers` the
    # room each can fill is its chamber tree capped by the parity bound (dead ends only one at a time).
    if chambers:
        fill = chain_fill if chains else chamber_fill
        lead = fill(free, stride, first) - fill(free, stride, second) - first_ahead
        if -close <= lead <= close:
            ours, theirs = ride_length(free, stride, first), ride_length(free, stride, second)
            if ours >= 0 and theirs >= 0:
                lead = ours - theirs - first_ahead
    else:
        lead = parity_fill(mine, first) - parity_fill(theirs, second) - first_ahead
    if lead == 0:
        return draw
    return (params.APART if lead > 0 else -params.APART) + params.APART_CELL * lead
