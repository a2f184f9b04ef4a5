"""Tron AI: the padded grid (a board as one int, a bit per square), flood fills and the quick fallback move."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from gamenight.server.games.tron import DIRECTIONS, EMPTY, NORTH, TronState

Direction = int
Index = int
Mask = int
Position = tuple[Mask, Index, Index, Index, int]
"""(open squares, our head, their head, our pending target or 0, game-over code): see `TronEngine`."""
TickPosition = tuple[Mask, Index, Index, Index, bool, int]
"""(open squares, mover's head, other's head, other's committed target or 0, mover is us, game-over code)."""
Leaf = Callable[[Mask, int, Index], int]
"""Squares still to ride for a lone rider: (open squares, stride, head) -> count."""


class _Timeout(Exception):
    """Raised from inside a search when the deadline has passed; the last completed depth stands."""


# -- the padded grid ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Grid:
    """A state's board for search: the open squares, the stride, every seat's head index and who rides."""

    open: Mask
    stride: int
    heads: tuple[Index, ...]
    alive: tuple[bool, ...]

    @property
    def steps(self) -> tuple[int, ...]:
        """Index steps by direction (position 0 unused): N, E, S, W."""
        return steps_of(self.stride)

    def open_moves(self, seat: int) -> list[Direction]:
        """The directions whose next square is open for `seat`, in N, E, S, W order."""
        return open_moves(self.open, self.heads[seat], self.steps)


def steps_of(stride: int) -> tuple[int, ...]:
    """Index steps by direction 1-4 (N, E, S, W) in a grid of this stride; position 0 is unused."""
    return (0, -stride, 1, stride, -1)


def open_moves(free: Mask, head: Index, steps: tuple[int, ...]) -> list[Direction]:
    """The directions from `head` onto open squares, in N, E, S, W order."""
    return [d for d in DIRECTIONS if free >> (head + steps[d]) & 1]


def grid_of(state: TronState) -> Grid:
    """The padded search grid of a state: trails and walls blocked, a blocked frame around the map."""
    width, height = state.width, state.height
    stride = width + 3 - width % 2  # odd, so index parity = square colour
    text = bytearray(b"0") * (stride * (height + 2))
    for y in range(height):
        start = (y + 1) * stride + 1
        text[start : start + width] = state.cells[y * width : (y + 1) * width].translate(_OPEN_DIGITS)
    heads = tuple((y + 1) * stride + x + 1 for x, y in state.heads)
    # The text holds bit i at position i; int() reads the most significant digit first.
    return Grid(int(text[::-1], 2), stride, heads, state.alive)


_OPEN_DIGITS = bytes(ord("1") if value == EMPTY else ord("0") for value in range(256))


def spread(front: Mask, stride: int) -> Mask:
    """Every square next to a square of `front` (not masked: callers keep only the open ones)."""
    return front << 1 | front >> 1 | front << stride | front >> stride


def flood(free: Mask, stride: int, start: Index) -> Mask:
    """The open squares connected to square `start` (itself open or a head), `start` excluded."""
    region = 0
    front = 1 << start
    while front:
        front = spread(front, stride) & free & ~region
        region |= front
    return region


@cache
def colour_mask(size: int) -> Mask:
    """The squares of even index (one checkerboard colour) among the first `size` bits."""
    return int("01" * (size // 2 + 1), 2) & ((1 << size) - 1)


def parity_fill(region: Mask, head: Index) -> int:
    """The longest ride through `region` from `head`: steps alternate colours, starting with the other one."""
    same_mask = colour_mask(region.bit_length() + 2)
    if head & 1:
        same_mask <<= 1
    same = (region & same_mask).bit_count()
    other = region.bit_count() - same
    return 2 * min(other, same) + (other > same)


def degree_sum(region: Mask, free: Mask, stride: int) -> int:
    """Open-neighbour links of the squares of `region`: about twice its inner edges (a1k0n's edge term)."""
    return (
        (region & free >> 1).bit_count()
        + (region & free << 1).bit_count()
        + (region & free >> stride).bit_count()
        + (region & free << stride).bit_count()
    )


def walls_around(free: Mask, stride: int, square: Index) -> int:
    """How many of the four neighbours of `square` are blocked."""
    return 4 - (spread(1 << square, stride) & free).bit_count()


def manhattan(stride: int, a: Index, b: Index) -> int:
    """The Manhattan distance between two indices of a grid of this stride."""
    ay, ax = divmod(a, stride)
    by, bx = divmod(b, stride)
    return abs(ax - bx) + abs(ay - by)


# -- the quick fallback ------------------------------------------------------------------------------------------------


def _quick(grid: Grid, seat: int) -> Direction:
    """The safest direction without search: not onto a square a rival can also take, then the most space."""
    rival_reach = 0
    for s, riding in enumerate(grid.alive):
        if riding and s != seat:
            rival_reach |= spread(1 << grid.heads[s], grid.stride)
    best, best_key = NORTH, None
    for d in grid.open_moves(seat):
        target = grid.heads[seat] + grid.steps[d]
        room = flood(grid.open & ~(1 << target), grid.stride, target).bit_count()
        key = (not rival_reach >> target & 1, room, -d)
        if best_key is None or key > best_key:
            best, best_key = d, key
    return best


def quick_move(state: TronState, seat: int) -> Direction:
    """The instant fallback for a living seat (no search): a safe direction toward the most space."""
    return _quick(grid_of(state), seat)


def _rival(grid: Grid, seat: int) -> int | None:
    """The one other rider when exactly two ride, else None."""
    others = [s for s, riding in enumerate(grid.alive) if riding and s != seat]
    return others[0] if len(others) == 1 else None
