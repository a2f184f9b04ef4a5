"""A bot for the 2010 Google AI Challenge's Tron protocol, written as the contest's starter bots read it: a line
`W H`, then H rows (`#` wall, space empty, `1` me, `2` the opponent), one answer line 1-4 (N, E, S, W) per map.
It rides toward the neighbour with the most free neighbours. `--garbage` answers 7 instead."""

from __future__ import annotations

import sys

STEPS = {1: (0, -1), 2: (1, 0), 3: (0, 1), 4: (-1, 0)}


def free(rows: list[str], x: int, y: int) -> bool:
    """True for an empty square on the map."""
    return 0 <= y < len(rows) and 0 <= x < len(rows[y]) and rows[y][x] == " "


def room(rows: list[str], x: int, y: int, d: int) -> int:
    """The free neighbours of the square `d` leads to from (x, y); -1 if that square is not free."""
    nx, ny = x + STEPS[d][0], y + STEPS[d][1]
    if not free(rows, nx, ny):
        return -1
    return sum(free(rows, nx + dx, ny + dy) for dx, dy in STEPS.values())


def main() -> None:
    """Read maps until stdin closes; answer each with a direction."""
    garbage = "--garbage" in sys.argv
    while header := sys.stdin.readline():
        width, height = map(int, header.split())
        rows = [sys.stdin.readline().rstrip("\n").ljust(width) for _ in range(height)]
        x, y = next((row.index("1"), r) for r, row in enumerate(rows) if "1" in row)
        print(7 if garbage else max(STEPS, key=lambda d: room(rows, x, y, d)), flush=True)


if __name__ == "__main__":
    main()
