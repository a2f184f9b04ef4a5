"""Tron's view kept current between full states: a tick's delta folded into a `state.view`, with no Textual.

The server sends a full Tron `view` in a `state` (the first of a game, after a sync, a join or a resume) and then
one `tick` per tick whose `delta` holds only `{tick, heads, alive}`. `apply_tick` is the client's rule for folding
one delta into a view (protocol.md, "Tron"): each head that moved marks its new square with its seat's trail
("1"-"4"), its direction becomes the step it took (a crashed cycle's head does not move, so it keeps its last
direction), and `alive` and `tick` are replaced. A pure function of plain maps, for the bot runner (which hands
engines the current view every tick) and anything else that needs the position without drawing it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

STEPS: dict[tuple[int, int], int] = {(0, -1): 1, (1, 0): 2, (0, 1): 3, (-1, 0): 4}
"""A one-square step (dx, dy) as a Tron direction: 1 N, 2 E, 3 S, 4 W."""


def apply_tick(view: Mapping[str, Any], delta: Mapping[str, Any]) -> dict[str, Any]:
    """The view after one tick's `delta`; `view` itself is left unchanged.

    Heads outside the board (a cycle that rode off the map and crashed there) change no square. A delta without
    `heads` or `alive` keeps the view's; a delta without `tick` counts one tick on.
    """
    width, height = int(view["width"]), int(view["height"])
    board = [str(row) for row in view["board"]]
    old_heads = [_square(head) for head in view.get("heads", [])]
    new_heads = [_square(head) for head in delta.get("heads", old_heads)]
    dirs = [int(d or 0) for d in view.get("dirs", [0] * len(old_heads))]
    for seat, (old, new) in enumerate(zip(old_heads, new_heads, strict=False)):
        if new == old:
            continue
        x, y = new
        if 0 <= x < width and 0 <= y < height:
            row = board[y]
            board[y] = row[:x] + str(seat + 1) + row[x + 1 :]
        step = STEPS.get((new[0] - old[0], new[1] - old[1]))
        if step is not None and seat < len(dirs):
            dirs[seat] = step
    folded = dict(view)
    folded.update(
        board=board,
        heads=[list(head) for head in new_heads],
        alive=[bool(a) for a in delta.get("alive", view.get("alive", []))],
        dirs=dirs,
        tick=int(delta.get("tick", int(view.get("tick", 0)) + 1)),
    )
    return folded


def fold_ticks(view: Mapping[str, Any], deltas: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The view after each delta in turn."""
    folded = dict(view)
    for delta in deltas:
        folded = apply_tick(folded, delta)
    return folded


def _square(raw: Any) -> tuple[int, int]:
    """An [x, y] pair of the wire as a tuple of ints."""
    return int(raw[0]), int(raw[1])
