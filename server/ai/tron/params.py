"""Tron AI: every tuning constant and weight (their history: docs/ai.md, "Tron constants and their history")."""

from __future__ import annotations

# -- evaluation weights: a1k0n's Voronoi fit is 55 per square and 194 per edge; a degree sum counts edges twice
CELL = 55
EDGE = 97
LEVEL5_EDGE = 97
"""Level 5's weight of an open-neighbour link. a1k0n's 194 is per unit of a degree sum too (his edge count adds
each square's open neighbours), but at 194 level 5 scored 68.5% against prev5 against 72.8% at 97 (46 games
each at 100 ms): kept at 97."""
LEVEL5_DRAW = 2000
"""What a mutual crash (or equal room apart) costs level 5: about five squares of territory (`UNIT` is one),
so of two lines it takes the draw only if the other is clearly worse; worth 0, as in a1k0n's bot, it rode into
head-on and equal-room draws where it stood better (against prev5 at 100 ms: 15 draws in 46 and 72.8% at 0;
at 2000 81.5% on the first run of 46 games, 75.3% over four runs of 46; at 8000 68.5% on one run)."""
LEVEL5_DRAW_AHEAD = 0
"""What a draw costs level 5 instead of `LEVEL5_DRAW` on a move whose root it does not trail (its chamber-counted
territory at least the opponent's): contempt, to steer away from equal splits and head-on crashes while even or
ahead, and still to take a draw rather than a loss when behind; 0: `LEVEL5_DRAW` always (session 7)."""
LEVEL5_TIE_SHARE = 0.5
"""Share of the deadline after which level 5's contact search stops deepening while its score is the draw value (the
opponent, who sees our move, can answer every move with a head-on crash or a mirror image); the moves that tie at
that value are then searched again, alone, with draws worth `-LEVEL5_TIE_DRAW`, until the deadline, and the best of
them is played (session 15; the kernel's search only, level 5's reference: the pure-Python search plays the first
drawn move; 0: off). Against the code without it, same seeds: prev5 84.8% at 1 s (80.4%) and 82.2% at 100 ms
(79.3%), floodfill 82.6% at 100 ms (81.9%), a1k0n's bot 50.0% at 1 s (50.0%) and 58.7% at 100 ms (60.1%)."""
LEVEL5_TIE_DRAW = 0
"""The draw's cost in that second search: 0, as good as an even position. With -2000 (a draw worth as much to us
as it costs the opponent) level 5 scored 77.5% against prev5 at 100 ms (82.2% with 0, 79.3% without the
tie-break)."""
LEVEL5_REDUCTION = 2
"""Plies (one tick) by which level 5's contact search first searches every move after a node's first (late move
reductions: the kernel's search only, level 5's reference; the pure-Python search does not reduce; 0: off). Only a
move that beats the best there is searched again at the full depth. On the `speed` positions the nodes to 18 plies
fall from 1.21 million to 0.22 million and the depth reached in 1 s rises from 22 to 28 plies (median); a1k0n's bot
at 1 s: 60.3% over 92 games (+23 =65 -4; 62.0% on seed 3 against 50.0% without), prev5 87.7% at 100 ms (82.2%
without) (session 16)."""
LEVEL5_CLOSE = -1
"""Apart leaves whose chamber estimates (`chamber_fill`, an upper bound) differ by at most this many squares
are scored by greedy rides (`ride_length`, a lower bound) instead; -1: never. Off: at 2 (session 4) level 5
scored 76.1% against prev5 over 92 games (75.3% over 184 without), 82.6% against floodfill (79.9%) and 80.4%
against level 4 (89.1%), 46 games each at 100 ms: not shown better (`bench.tron_bench games --close 2`)."""
LEVEL5_CHAINS = False
"""Level 5's apart leaves take the checkerboard bound per chain of chambers (`chain_fill`, a tighter upper bound
of the longest ride) rather than over the whole region (`chamber_fill`). Off: on (session 6, 100 ms against
prev5, run side by side with main's level 5 and this one without it on one loaded machine) it scored 68.8% over
138 games against 70.3% without and 73.2% for main's in the same runs: not shown better
(`bench.tron_bench games --chains 1`)."""
LEVEL5_EXACT_TICKS = 0
"""Within this many ticks of the root, a line on which the riders have come apart ends there for level 5 when
both longest rides are proven by a short search (`exact_ride`), scored by them instead of being searched on
to the horizon and scored by the chamber estimate; 0: never (see `Level5Engine.terminal`). Off: at 2
(session 5, 100 ms against prev5, runs side by side on one loaded machine) it scored 71.7% over 138 games
against 71.2% over 184 without: not shown better (`bench.tron_bench games --exact-ticks 2`); ending every
such line, unproven rides counted by the chamber estimate, scored 66.7% over 138."""
EXACT_MS = 3
"""The time `exact_ride` gives `fill_search` to prove one room's longest ride (a fill node costs 0.1-0.3 ms)."""
EXACT_ROOM = 150
"""Rooms above this many squares keep the chamber estimate at separations near the root."""
EXACT_SHARE = 0.3
"""The share of a move's time after which no new room is searched by `exact_ride` (known ones still count)."""
DRAW_PENALTY = 150_000
"""A mutual crash this tick or the next (`NEAR_DRAW_TICKS`), seen by the AI's own side: worse than anything
but a sure loss. The search underrates us in close fights (the opponent sees our first move), so with a
small penalty here the AI takes a head-on draw a chaser offers where it would in fact have won (measured
at 100 ms on the official maps: 90-95% against the chaser with penalties of 0-40_000, 97-100% with this)."""
NEAR_DRAW_TICKS = 2
"""Mutual crashes within this many ticks of the root cost `DRAW_PENALTY`; later ones `FAR_DRAW_PENALTY`."""
FAR_DRAW_PENALTY = 0
"""What a mutual crash further ahead costs level 5: a draw is worth what an even position is, so it does not
give up a contested gap to a rider that goes for it (a penalty this large everywhere lost those races
against the floodfill bot on keyhole, gate, 15x16, ...: 73-76% instead of 77-82%). Levels 1-4 keep
`DRAW_PENALTY` for every draw."""
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
"""Each level's depth cap in tick-engine plies and its root-move noise (hundredths of `UNIT`). Caps are odd:
every horizon ends on the opponent answering our move. The shared caps 1-4 gave levels 2 and 4 even
horizons (a tempo the wrong way) and left levels 1-4 unordered; caps 1, 3, 5, 7 left level 5 only 53%
against level 4 (46 games at 100 ms), so level 4 stops at 5 plies; with level 3 at noise 60 and level 4 at
noise 30 the steps 3-2 and 4-3 were 53-57%, so level 3 has noise 30 and level 4 none."""
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
"""Bits a square index takes in a search key. The keys are exact (a dict then tells positions apart by value);
until session 10 they were `hash()` of the position tuple, and Python hashes an int modulo 2**61 - 1, so two
boards differing by a trail square moved 61 bits along (61 squares on) hashed alike and shared table entries."""

CHAMBER_BOUND_ROOM = 64
"""Nodes with at most this much room left are bounded by the chamber tree too, not only by the parity bound."""
CHAMBER_ROOT_ROOM = 700
"""The endgame search's proof target is the chamber tree capped by the parity bound up to this much room,
the parity bound alone beyond (the chamber tree of a huge region takes too long to build for a tick)."""
FILL_CHAINS = True
"""The endgame search bounds its rides by the checkerboard bound per chain of chambers (`chain_fill`) where it
uses the chamber tree (at the root, and at nodes with at most `CHAMBER_BOUND_ROOM` squares left), rather than
by the chamber tree capped by the parity bound of the whole region (`chamber_fill`): never looser, so it proves
rides sooner and cuts more branches (session 7)."""
RIDE_ROOM = 400
"""Leaves whose lone rider has a bigger region than this are not ridden greedily (`ride_length`: too slow)."""
