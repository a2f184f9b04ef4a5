"""Tron AI: every tuning constant and weight, each with what it is and why it has its value, in short.

What each was measured at, and what was tried instead, is in docs/ai.md, "Tron constants and their history" (and
the Tron sessions it points to). The other modules read these as `params.NAME`, so a bench or a test changes one
here, for everything that reads it.
"""

from __future__ import annotations

# -- evaluation weights: a1k0n's Voronoi fit is 55 per square and 194 per edge; a degree sum counts edges twice
CELL = 55
EDGE = 97
LEVEL5_EDGE = 97
"""Level 5's weight of an open-neighbour link: a1k0n's 194 per edge, halved as a degree sum counts each edge twice
(194 measured weaker; docs/ai.md)."""
LEVEL5_DRAW = 2000
"""What a mutual crash (or equal room apart) costs level 5: about five squares of territory (`UNIT` is one), so it
takes a draw only when the other line is clearly worse (0 and 8000 measured weaker; docs/ai.md)."""
LEVEL5_DRAW_AHEAD = 0
"""Level 5's draw cost instead of `LEVEL5_DRAW` on a move whose root it does not trail (contempt); 0: off, as
contempt was not shown better (session 7; docs/ai.md)."""
LEVEL5_TIE_SHARE = 0.5
"""Share of the deadline after which level 5's contact search, pinned at the draw value, stops deepening and ranks
the tied moves by a search with draws worth `-LEVEL5_TIE_DRAW` (session 15; the kernel's search and its Python port,
`contact`); 0: off (docs/ai.md)."""
LEVEL5_TIE_DRAW = 0
"""The draw's cost in that tie-breaking search: 0, as good as an even position (-2000 measured weaker; docs/ai.md)."""
LEVEL5_REDUCTION = 2
"""Plies (one tick) of late move reductions in level 5's contact search: a tick deeper in 1 s and a1k0n's bot beaten
at 1 s (session 16; the kernel's search and its Python port, `contact`); 0: off."""
LEVEL5_CLOSE = -1
"""Apart leaves whose chamber estimates differ by at most this many squares are scored by greedy rides
(`ride_length`) instead; -1: never, as 2 was not shown better (session 4; docs/ai.md)."""
LEVEL5_CHAINS = False
"""Level 5's apart leaves take the checkerboard bound per chain of chambers (`chain_fill`) instead of
`chamber_fill`; off, not shown better (session 6; docs/ai.md)."""
LEVEL5_EXACT_TICKS = 0
"""Within this many ticks of the root, a line whose riders came apart ends for level 5 when both longest rides are
proven (`exact_ride`, `Level5Engine.terminal`); 0: never, as 2 was not shown better (session 5; docs/ai.md)."""
EXACT_MS = 3
"""The time `exact_ride` gives `fill_search` to prove one room's longest ride (a fill node costs 0.1-0.3 ms)."""
EXACT_ROOM = 150
"""Rooms above this many squares keep the chamber estimate at separations near the root."""
EXACT_SHARE = 0.3
"""The share of a move's time after which no new room is searched by `exact_ride` (known ones still count)."""
DRAW_PENALTY = 150_000
"""A mutual crash this tick or the next (`NEAR_DRAW_TICKS`), seen by the AI's own side: worse than anything but a
sure loss, so a chaser cannot force a head-on draw (smaller penalties measured weaker; docs/ai.md)."""
NEAR_DRAW_TICKS = 2
"""Mutual crashes within this many ticks of the root cost `DRAW_PENALTY`; later ones `FAR_DRAW_PENALTY`."""
FAR_DRAW_PENALTY = 0
"""What a mutual crash further ahead costs level 5: what an even position is worth, so it still races for a
contested gap (the full penalty measured weaker; docs/ai.md). Levels 1-4 keep `DRAW_PENALTY` for every draw."""
APART = 50_000
"""Apart, more space to fill is a near-certain win: this much plus `APART_CELL` per square of lead."""
APART_CELL = 500
DOOMED = 400_000
"""A leaf whose committed move crashes while the opponent can still ride."""
UNIT = CELL + 4 * EDGE
"""A small clear advantage (about one open square of territory), the unit levels scale their noise by."""

# -- time --------------------------------------------------------------------------------------------------
MIN_SEARCH_MS = 6
"""Below this budget only the quick fallback runs."""
DEADLINE_SHARE = 0.9
"""The share of a level's time the search may run; the rest covers the last evaluation and the way home."""
NEXT_DEPTH_SHARE = 0.4
"""Do not start a deeper iteration after this share of the time: it would almost surely not finish."""
MAX_TICK_DEPTH = 60
"""The deepest search without a level cap (the clock stops it long before)."""
LEVEL_PLAN: dict[int, tuple[int | None, int]] = {1: (1, 150), 2: (3, 80), 3: (5, 30), 4: (5, 0), 5: (None, 0)}
"""Each level's depth cap in tick-engine plies (odd: every horizon ends on the opponent answering our move) and its
root-move noise (hundredths of `UNIT`), set so each level beats the one below (docs/ai.md)."""
LEVEL_FAR_DRAW: dict[int, int] = {5: FAR_DRAW_PENALTY}
"""Levels whose far draws cost `FAR_DRAW_PENALTY`; the others pay `DRAW_PENALTY` for every draw. Only for
levels searching with the tick engine: level 5 does so only when `LEVEL_PESSIMISTIC` leaves it out."""
LEVEL_PESSIMISTIC = frozenset({5})
"""Levels whose contact search is the pessimistic two-plies-per-tick one (`_pessimistic_move`)."""
CHECK_EVERY = 8
"""Nodes between the core's looks at the clock: a Tron node floods the board, so a tick's budget is few nodes."""
FLOODFILL_MS = 900
"""The floodfill bot thinks this long at most (or the budget, if smaller)."""
FLOOD_SPACE = 1000
"""The floodfill bot's weight of one square of space, above any tie-break (walls 0-4, distance < 100)."""
WON, LOST, DRAWN = 1, 2, 3
"""Game-over codes of a position, for the AI's own side."""
KEY_SHIFT = 32
"""Bits a square index takes in a search key: the keys are exact, never a hash (two boards once shared table entries
that way; docs/ai.md)."""

# -- the endgame: a lone rider ---------------------------------------------------------------------------------
CHAMBER_BOUND_ROOM = 64
"""Nodes with at most this much room left are bounded by the chamber tree too, not only by the parity bound."""
CHAMBER_ROOT_ROOM = 700
"""The endgame search's proof target is the chamber tree capped by the parity bound up to this much room, the
parity bound alone beyond (the chamber tree of a huge region takes too long to build for a tick)."""
FILL_CHAINS = True
"""The endgame search bounds its rides by the checkerboard bound per chain of chambers (`chain_fill`) rather than
`chamber_fill`: never looser, so it proves rides sooner (session 7)."""
RIDE_ROOM = 400
"""Leaves whose lone rider has a bigger region than this are not ridden greedily (`ride_length`: too slow)."""
