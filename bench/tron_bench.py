"""Tron level 5's own figures: how much of the budget it uses, how deep it looks, whether it is ever late,
and how well its endgame filler fills small rooms against an exhaustive search.

Usage (from the repository root):
    python -m bench.tron_bench games --b prev5 --ms 100 [--games 46] [--tick-ms 150] [--exact-ticks 2] [--chains 1]
        [--draw-ahead 5000] [--fill-chains 0]
    python -m bench.tron_bench fill --positions 200 --ms 100
    python -m bench.tron_bench speed [--depth 6] [--repeat 5] [--against ../main/server/ai/tron_ai.py] [--pure]
    python -m bench.tron_bench apart [--games 46] [--ms 30] [--search-ms 1000]
    python -m bench.tron_bench prove [--per-map 6] [--ms 100] [--min-room 20]
    python -m bench.tron_bench ride [--per-map 1] [--ms 90] [--against ../main/server/ai/tron_ai.py] [--pure]
    python -m bench.tron_bench losses --log match.log [--search-ms 1000]
    python -m bench.tron_bench search [--depth 8] [--repeat 3] [--ms 100]
    python -m bench.tron_bench scaling [--depths 6,8,10,12,14] [--budgets 100,1000] [--reduction N]

`games` plays level 5 (seat 0 and 1 in turn) against B on the official two-player maps, like bench.match,
and prints per phase (riders in contact / apart) the median and mean time per move as a share of the
budget, the median depth and nodes, and how many moves overran the budget and the live room's tick
(`--tick-ms`; a live room gives the AI `tick_ms - 40` ms, and a move later than the tick would make the
server play its fallback move). `fill` puts a lone rider in random small walled rooms (8-40 open squares)
and compares the endgame search's ride, at `--ms`, with the longest ride an exhaustive search finds.
`speed` searches fixed contact positions (12 official maps, every fifth tick of a level-1 self-play game
from tick 2) to a fixed depth with the voronoi bot's engine (chamber leaves, as level 5's) and prints the
nodes per second of CPU time, which the load of other processes barely changes. `apart` plays level 5
against B (`--ms` each) to the first tick the riders are apart and compares, for each rider, the apart
estimate `chamber_fill` and the greedy ride `ride_length` with the longest ride `fill_search` finds in
`--search-ms` (proven or not), and how often each estimate gets the sign of the split wrong.
`prove` searches the rooms of the first tick apart of level-1 self-play (the same rooms on every machine) with
the endgame search's chamber bound and with its per-chain parity bound (`tron_params.FILL_CHAINS`), room by room in
turn, and prints how many longest rides each proves within `--ms`, the squares ridden, nodes and CPU time.
`ride` rides those rooms to their ends with level 5's endgame move (`--ms` a tick), and another `tron_ai.py` after
it with `--against`: squares ridden and CPU time per move.
`losses` reads the output of `bench.match --game tron --show-losses` and replays every game A did not win: how
it was decided (in contact; at the separation, by the longest rides each rider had left, found by `fill_search`
in `--search-ms`; or in the fill, when A had at least as long a ride and did not ride it), A's Voronoi lead at
tick 10 and the squares A rode after the separation.
`search` (session 10) searches the `speed` positions with level 5's engine to `--depth` plies with the kernel's
whole contact search (`_tronkernel.contact_search`) and with the Python core over the kernel's leaves, round by
round, checks that both find the same score at every position, and prints the CPU time of each and the nodes per
CPU second; then the depth each completes from every position within `--ms` (level 5's deadline, 90% of it).
`scaling` (session 13) counts the nodes the kernel's contact search needs to complete each of `--depths` on the `speed`
positions, with their growth per tick (the effective branching factor), then for each of `--budgets` the depth it
completes within level 5's deadline and what share of the deadline that depth took; `--reduction N` reduces late
moves by N plies instead of level 5's `LEVEL5_REDUCTION` (session 16; 0: none).
`--draw-ahead N` (session 7's experiment, off by default) makes a draw cost level 5 N when it does not trail at
the root (`tron_ai.LEVEL5_DRAW_AHEAD`); `--fill-chains 0` turns the per-chain bound of the endgame search off.
`--exact-ticks N` (session 5's experiment, off by default) ends level 5's lines at separations within N ticks
of the root whose longest rides a short search proves (`tron_ai.LEVEL5_EXACT_TICKS`, `--exact-ms` its time
per room).
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench.match import _move, parse_player, summary
from gamenight.server.ai import tron_ai
from gamenight.server.ai.tron import kernel as tron_kernel
from gamenight.server.ai.tron import params as tron_params
from gamenight.server.ai.tron import territory as tron_territory
from gamenight.server.games.tron import Tron, TronState, load_map, match_maps, new_state, official_maps

GAME = Tron()
AI_TICK_MARGIN_MS = 40
"""As in server/room.py: a live room asks its AI for a move this long before the tick."""


def play(b: str, index: int, ms: int, maps: tuple[str, ...]) -> tuple[float, list[dict[str, Any]]]:
    """One game of level 5 against `b` (level 5 in seat index % 2); its score and level 5's per-move records."""
    name = maps[(index // 2) % len(maps)]
    state = new_state(official_maps()[name])
    seat = index % 2
    player = parse_player(b)
    records = []
    while state.result is None:
        started, cpu = time.perf_counter(), time.process_time()
        move, info = tron_ai.choose_level(state, seat, 5, ms, random.Random(index * 7919 + state.tick))
        spent = (time.perf_counter() - started) * 1000
        cpu_ms = (time.process_time() - cpu) * 1000
        records.append(
            {"phase": info["phase"], "ms": spent, "cpu": cpu_ms, "depth": info["depth"], "nodes": info["nodes"]}
        )
        other = GAME.parse_move(state, _move("tron", state, 1 - seat, ms, index * 31 + state.tick, player))
        state = GAME.apply(state, {seat: move, 1 - seat: other})
    result = state.result
    score = 0.5 if result.is_draw else 1.0 if seat in result.winners else 0.0
    return score, records


def games(b: str, count: int, ms: int, tick_ms: int) -> None:
    """Play the games and print the score and the per-phase figures."""
    maps = match_maps()
    scores, records = [], []
    for index in range(count):
        score, moves = play(b, index, ms, maps)
        scores.append(score)
        records.extend(moves)
        print(f"game {index:3d} ({maps[(index // 2) % len(maps)]}, seat {index % 2}): 5 scores {score}", flush=True)
    stats = summary(scores)
    print(
        f"level 5 vs {b}, {count} games at {ms} ms: +{stats['wins']} ={stats['draws']} -{stats['losses']}"
        f" score {100 * stats['score']:.1f}%"
    )
    live = tick_ms - AI_TICK_MARGIN_MS
    for phase in ("contact", "apart"):
        chosen = [r for r in records if r["phase"] == phase]
        if not chosen:
            continue
        times = [r["ms"] for r in chosen]
        print(
            f"  {phase}: {len(chosen)} moves; time per move median {statistics.median(times):.1f} ms"
            f" ({100 * statistics.median(times) / ms:.0f}% of {ms}), mean {statistics.fmean(times):.1f} ms"
            f" ({100 * statistics.fmean(times) / ms:.0f}%), max {max(times):.1f} ms;"
            f" depth median {statistics.median(r['depth'] for r in chosen)},"
            f" nodes median {statistics.median(r['nodes'] for r in chosen)}"
        )
    over = sum(r["ms"] > ms for r in records)
    late = sum(r["ms"] > tick_ms for r in records)
    print(f"  moves over the budget ({ms} ms): {over} of {len(records)}; later than a {tick_ms} ms tick: {late}")
    # Wall time includes waiting for a core: on a loaded machine a late move with little CPU time was not the AI's.
    for r in sorted(records, key=lambda r: -r["ms"])[:late]:
        print(f"    late move ({r['phase']}): {r['ms']:.1f} ms of wall time, {r['cpu']:.1f} ms of CPU time")
    print(f"  CPU time per move: max {max(r['cpu'] for r in records):.1f} ms")
    if ms != live:
        print(f"  (a live room at tick_ms {tick_ms} gives the AI {live} ms: run with --ms {live} for that figure)")


def small_room(rng: random.Random) -> TronState:
    """A lone rider (seat 0) in a small walled box with random inner walls; seat 1 shut away in a corner."""
    width, height = rng.randint(4, 8), rng.randint(4, 7)
    wall_share = rng.uniform(0.1, 0.35)
    rows = [["#"] * (width + 2)]
    rows += [["#", *("#" if rng.random() < wall_share else " " for _ in range(width)), "#"] for _ in range(height)]
    rows.append(["#"] * (width + 2))
    cells = [(x, y) for y in range(1, height + 1) for x in range(1, width + 1) if rows[y][x] == " "]
    x, y = rng.choice(cells)
    rows[y][x] = "1"
    rows[0][0] = "2"
    return new_state(load_map("\n".join([f"{width + 2} {height + 2}", *("".join(row) for row in rows)]) + "\n"))


def longest_ride(free: int, stride: int, head: int, memo: dict[tuple[int, int], int]) -> int:
    """The most squares a lone rider can ride from `head` through `free`, by trying every path (memoised)."""
    key = (free, head)
    if key not in memo:
        steps = (-stride, 1, stride, -1)
        memo[key] = max(
            (1 + longest_ride(free ^ 1 << (head + s), stride, head + s, memo) for s in steps if free >> (head + s) & 1),
            default=0,
        )
    return memo[key]


def fill(positions: int, ms: int, seed: int) -> None:
    """Compare the endgame search at `ms` with the exhaustive longest ride on random small rooms."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))
    rng = random.Random(seed)
    done = optimal = 0
    found_ms: list[float] = []
    short: list[tuple[int, int, int]] = []
    over = {"chamber_fill": 0, "chain_fill": 0}
    while done < positions:
        state = small_room(rng)
        grid = tron_ai.grid_of(state)
        region = tron_ai.flood(grid.open, grid.stride, grid.heads[0])
        if not 8 <= region.bit_count() <= 40:
            continue
        done += 1
        best = longest_ride(region, grid.stride, grid.heads[0], {})
        over["chamber_fill"] += tron_ai.chamber_fill(region, grid.stride, grid.heads[0]) > best
        over["chain_fill"] += tron_ai.chain_fill(region, grid.stride, grid.heads[0]) > best
        started = time.perf_counter()
        search = tron_ai.fill_search(region, grid.stride, grid.heads[0], started + ms / 1000)
        spent = (time.perf_counter() - started) * 1000
        if len(search.best) == best:
            optimal += 1
            found_ms.append(spent)
        else:
            short.append((region.bit_count(), best, len(search.best)))
    print(
        f"{positions} rooms of 8-40 squares, {ms} ms each: the longest ride found in {optimal}"
        f" ({100 * optimal / positions:.1f}%); search time median {statistics.median(found_ms):.1f} ms,"
        f" max {max(found_ms):.1f} ms (it stops early once a ride meets the bound)"
    )
    for squares, best, got in short:
        print(f"  short: {squares} squares, longest {best}, found {got}")
    print(f"  upper bounds above the longest ride (rooms of {positions}): {over}")


def first_apart(b: str, index: int, ms: int, maps: tuple[str, ...]) -> TronState | None:
    """Game `index` of level 5 against `b` (as in `play`) up to its first tick apart; None if it ends first."""
    state = new_state(official_maps()[maps[(index // 2) % len(maps)]])
    seat = index % 2
    player = parse_player(b)
    while state.result is None:
        grid = tron_ai.grid_of(state)
        if not tron_ai.voronoi(grid.open, grid.stride, *grid.heads).touching:
            return state
        move, _ = tron_ai.choose_level(state, seat, 5, ms, random.Random(index * 7919 + state.tick))
        other = GAME.parse_move(state, _move("tron", state, 1 - seat, ms, index * 31 + state.tick, player))
        state = GAME.apply(state, {seat: move, 1 - seat: other})
    return None


def apart(b: str, count: int, ms: int, search_ms: int) -> None:
    """Print how far the apart estimates are from the longest rides at the first tick apart of `count` games."""
    maps = match_maps()
    over: dict[int, int] = {}
    under: dict[int, int] = {}
    wrong = {"chamber_fill": 0, "chain_fill": 0, "ride_length": 0}
    chain_over: dict[int, int] = {}
    splits = riders = unproven = 0
    for index in range(count):
        state = first_apart(b, index, ms, maps)
        if state is None:
            continue
        grid = tron_ai.grid_of(state)
        found = []
        for head in grid.heads:
            bound = tron_ai.chamber_fill(grid.open, grid.stride, head)
            chain = tron_ai.chain_fill(grid.open, grid.stride, head)
            ride = tron_ai.ride_length(grid.open, grid.stride, head)
            search = tron_ai.fill_search(grid.open, grid.stride, head, time.perf_counter() + search_ms / 1000)
            longest = max(len(search.best), ride)
            unproven += not search.proven
            over[bound - longest] = over.get(bound - longest, 0) + 1
            chain_over[chain - longest] = chain_over.get(chain - longest, 0) + 1
            if ride >= 0:
                under[longest - ride] = under.get(longest - ride, 0) + 1
            found.append((bound, ride, longest, chain))
            riders += 1
        splits += 1
        truth = _sign(found[0][2] - found[1][2])
        wrong["chamber_fill"] += _sign(found[0][0] - found[1][0]) != truth
        wrong["ride_length"] += _sign(found[0][1] - found[1][1]) != truth
        wrong["chain_fill"] += _sign(found[0][3] - found[1][3]) != truth
        print(f"  {maps[(index // 2) % len(maps)]} tick {state.tick}: (estimate, ride, longest, chain) {found}")
    print(f"{splits} separations, {riders} riders ({unproven} longest rides not proven in {search_ms} ms)")
    print("  chamber_fill - longest: " + ", ".join(f"{k:+d}: {v}" for k, v in sorted(over.items())))
    print("  chain_fill - longest: " + ", ".join(f"{k:+d}: {v}" for k, v in sorted(chain_over.items())))
    print("  longest - ride_length: " + ", ".join(f"{k:+d}: {v}" for k, v in sorted(under.items())))
    print(f"  the split's sign wrong: {wrong}")


def separations(per_map: int, min_room: int) -> list[tuple[str, int, int, int]]:
    """Lone riders' rooms for `prove`: the first tick apart of level-1 self-play (depth 1, seeded noise, so the
    same on every machine), `per_map` games on each official two-player map; each rider's (map, open squares,
    stride, head) whose room has at least `min_room` squares."""
    found = []
    for name in match_maps():
        for game in range(per_map):
            state = new_state(official_maps()[name])
            while state.result is None:
                grid = tron_ai.grid_of(state)
                if not tron_ai.voronoi(grid.open, grid.stride, *grid.heads).touching:
                    for head in grid.heads:
                        region = tron_ai.flood(grid.open, grid.stride, head)
                        if region.bit_count() >= min_room:
                            found.append((name, region, grid.stride, head))
                    break
                rng = random.Random(game * 100_003 + state.tick)
                moves = {seat: tron_ai.choose_level(state, seat, 1, 1000, rng)[0] for seat in (0, 1)}
                state = GAME.apply(state, moves)
    return found


def prove(per_map: int, ms: int, min_room: int) -> None:
    """The endgame search on the same rooms with the chamber bound (`FILL_CHAINS` off) and the per-chain parity
    bound (on), in turn room by room: how many longest rides each proves within `ms`, its nodes and CPU time."""
    rooms = separations(per_map, min_room)
    totals = {False: [0, 0, 0, 0.0], True: [0, 0, 0, 0.0]}  # proven, squares ridden, nodes, CPU seconds
    times: dict[bool, list[float]] = {False: [], True: []}
    both = only = 0
    saved = tron_params.FILL_CHAINS
    try:
        for name, region, stride, head in rooms:
            proven, ridden = {}, {}
            for chains in (False, True):
                tron_params.FILL_CHAINS = chains
                tron_ai._TREES.clear()
                cpu = time.process_time()
                search = tron_ai.fill_search(region, stride, head, time.perf_counter() + ms / 1000)
                spent = time.process_time() - cpu
                total = totals[chains]
                total[0] += search.proven
                total[1] += len(search.best)
                total[2] += search.nodes
                total[3] += spent
                proven[chains] = search.proven
                ridden[chains] = len(search.best)
                if search.proven:
                    times[chains].append(spent * 1000)
            both += proven[False] and proven[True]
            only += proven[True] and not proven[False]
            print(
                f"  {name}: {region.bit_count()} squares, proven (chamber, chains) {proven[False]}, {proven[True]};"
                f" ridden {ridden[False]}, {ridden[True]}"
            )
    finally:
        tron_params.FILL_CHAINS = saved
    print(f"{len(rooms)} rooms of {min_room}+ squares at the first tick apart, {ms} ms each")
    for chains, label in ((False, "chamber bound"), (True, "chain parity bound")):
        proven, squares, nodes, cpu = totals[chains]
        spent = times[chains]
        print(
            f"  {label}: proven {proven} of {len(rooms)}, squares ridden {squares}, nodes {nodes},"
            f" CPU {cpu:.2f} s; CPU time to a proof median {statistics.median(spent) if spent else 0:.1f} ms"
        )
    print(f"  proven by both: {both}; only with the chain parity bound: {only}")


def ride(per_map: int, ms: int, min_room: int, against: str | None, pure: bool = False) -> None:
    """Ride every `separations` room to its end with level 5's `endgame_move` at `ms` a tick and print the squares
    ridden and the CPU time per move; with `against` (another tron_ai.py, e.g. main's) that module rides each room
    right after ours, so both figures come from the same minutes of a shared machine. With `pure`, first the
    greedy ride from each room's start (what the endgame search completes every branch with) is timed with the
    kernel and with the pure code, round by round, and checked to be the same ride."""
    rooms = separations(per_map, min_room)
    if pure:
        _time_greedy_rides(rooms)
    modules: list[tuple[str, Any]] = [("this", tron_ai)]
    if against is not None:
        modules.append(("against", _load_module(against)))
    cpu_ms: dict[str, list[float]] = {name: [] for name, _ in modules}
    ridden = dict.fromkeys(cpu_ms, 0)
    for _, region, stride, start in rooms:
        for name, module in modules:
            module._PLANS.clear()
            free, head = region, start
            steps = module.steps_of(stride)
            while True:
                cpu = time.process_time()
                move, _ = module.endgame_move(free, stride, head, time.perf_counter() + ms / 1000)
                cpu_ms[name].append((time.process_time() - cpu) * 1000)
                head += steps[move]
                if not free >> head & 1:
                    break
                free ^= 1 << head
                ridden[name] += 1
    for name, spent in cpu_ms.items():
        print(
            f"{name}: {len(rooms)} rooms, {ridden[name]} squares ridden in {len(spent)} moves; CPU per move"
            f" median {statistics.median(spent):.2f} ms, mean {statistics.fmean(spent):.2f} ms,"
            f" total {sum(spent) / 1000:.1f} s"
        )


def _time_greedy_rides(rooms: list[tuple[str, int, int, int]], repeat: int = 5) -> None:
    """Print the median CPU time of a greedy ride from each room's start, kernel and pure (see `ride`)."""
    kernel = tron_kernel.KERNEL
    if kernel is None:
        raise SystemExit("--pure needs the compiled kernel (built by pip install; GAMENIGHT_PURE_AI unset)")
    rounds: dict[str, list[float]] = {"kernel": [], "pure": []}
    squares = 0
    for _ in range(repeat):
        for name in rounds:
            tron_kernel.KERNEL = kernel if name == "kernel" else None
            started = time.process_time()
            rides = [tron_ai.greedy_ride(region, stride, head) for _, region, stride, head in rooms]
            rounds[name].append((time.process_time() - started) * 1000 / len(rooms))
            squares = sum(map(len, rides))
            if name == "kernel":
                expected = rides
            elif rides != expected:
                raise SystemExit("the kernel's greedy rides differ from the pure code's")
    tron_kernel.KERNEL = kernel
    fast, slow = statistics.median(rounds["kernel"]), statistics.median(rounds["pure"])
    print(
        f"greedy ride from each room's start ({len(rooms)} rooms, {squares} squares, the same rides both ways),"
        f" median of {repeat}: kernel {fast:.3f} ms, pure {slow:.3f} ms a ride ({slow / fast:.1f}x)"
    )


GAME_LINE = re.compile(r"game +(\d+) \(map (\S+), (\S+) seat (\d)\): \S+ scores ([\d.]+) in (\d+) plies")
MOVES_LINE = re.compile(r"game (\d+) moves after the opening: (.*)")


def replay(map_name: str, transcript: str) -> list[TronState]:
    """Every state of a Tron game from its start, given the match log's moves (seat 0 / seat 1, tick by tick)."""
    moves = [move.strip() for move in transcript.split("/")]
    states = [new_state(official_maps()[map_name])]
    for tick in range(0, len(moves) - 1, 2):
        state = states[-1]
        joint = {0: GAME.parse_move(state, moves[tick]), 1: GAME.parse_move(state, moves[tick + 1])}
        states.append(GAME.apply(state, joint))
    return states


def longest_left(state: TronState, seat: int, search_ms: int) -> int:
    """The longest ride `seat` has left from `state` (riders apart): the endgame search's, or the greedy ride."""
    grid = tron_ai.grid_of(state)
    head = grid.heads[seat]
    search = tron_ai.fill_search(grid.open, grid.stride, head, time.perf_counter() + search_ms / 1000)
    return max(len(search.best), tron_ai.ride_length(grid.open, grid.stride, head))


def losses(log: str, search_ms: int) -> None:
    """Print how each game A did not win in a match log was decided (see the module's text), and the counts."""
    text = Path(log).read_text()
    transcripts = {int(found[1]): found[2] for found in MOVES_LINE.finditer(text)}
    kinds: dict[str, int] = {}
    for found in GAME_LINE.finditer(text):
        index, map_name, seat, score = int(found[1]), found[2], int(found[4]), float(found[5])
        if score == 1.0:
            continue
        states = replay(map_name, transcripts[index])
        apart = next((s for s in states if s.result is None and not tron_ai.voronoi(*_open_heads(s)).touching), None)
        early = states[min(10, len(states) - 1)]
        split = tron_ai.voronoi(*_open_heads(early))
        lead = split.first.bit_count() - split.second.bit_count()
        lead = lead if seat == 0 else -lead
        result = "draw" if score == 0.5 else "loss"
        if apart is None:
            kind = f"{result} in contact"
            detail = f"ended at tick {states[-1].tick}"
        else:
            ours, theirs = longest_left(apart, seat, search_ms), longest_left(apart, 1 - seat, search_ms)
            rode = states[-1].tick - apart.tick - 1  # the last tick is the crash
            decided = "at the separation" if (ours < theirs if score == 0.0 else ours <= theirs) else "in the fill"
            kind = f"{result} {decided}"
            detail = f"apart at tick {apart.tick}: longest rides left {ours} vs {theirs}, A rode {rode}"
        kinds[kind] = kinds.get(kind, 0) + 1
        print(f"  game {index} ({map_name}, A seat {seat}): {kind}; {detail}; A's Voronoi lead at tick 10 {lead:+d}")
    print("  " + ", ".join(f"{kind}: {count}" for kind, count in sorted(kinds.items())))


def _open_heads(state: TronState) -> tuple[int, int, int, int]:
    """A state's open squares, stride and two heads, as `tron_ai.voronoi` takes them."""
    grid = tron_ai.grid_of(state)
    return grid.open, grid.stride, grid.heads[0], grid.heads[1]


def _sign(value: int) -> int:
    """-1, 0 or 1."""
    return (value > 0) - (value < 0)


SPEED_MAPS = (
    "joust", "huge-room", "apocalyptic", "box", "trix", "toronto2", "playground", "ring", "keyhole", "empty-room",
    "15x16", "u",
)  # fmt: skip


def speed_positions() -> list[TronState]:
    """Contact positions for `speed`: every fifth tick from tick 2 of level-1 self-play on `SPEED_MAPS`."""
    found = []
    for name in SPEED_MAPS:
        state = new_state(official_maps()[name])
        for tick in range(30):
            if state.result is not None:
                break
            grid = tron_ai.grid_of(state)
            if tick % 5 == 2 and tron_ai.voronoi(grid.open, grid.stride, *grid.heads).touching:
                found.append(state)
            moves = {seat: tron_ai.choose_level(state, seat, 1, 50, random.Random(tick))[0] for seat in (0, 1)}
            state = GAME.apply(state, moves)
    return found


def speed(depth: int, repeat: int = 1, against: str | None = None, pure: bool = False) -> None:
    """Search every `speed_positions` position to `depth` plies and print the nodes per CPU second.

    With `repeat` the whole set is searched that many times and the median is printed; with `against` (the
    path of another tron_ai.py, e.g. a checkout of main) that module searches the same positions in turn
    with ours, round by round, so both medians come from the same minutes of a shared machine, and the two
    must agree on every search's nodes, score and main line. With `pure` this module searches them twice a
    round, with the compiled kernel (`tron_kernel.KERNEL`) and with its pure-Python code, and the leaves of one
    round are replayed alone both ways (the time of one leaf evaluation).
    """
    positions = speed_positions()
    kernel = tron_kernel.KERNEL
    if pure and kernel is None:
        raise SystemExit("--pure needs the compiled kernel, which is not in use (not built, or GAMENIGHT_PURE_AI=1)")
    modules: list[tuple[str, Any, Any]] = [("kernel" if pure else "this", tron_ai, kernel)]
    if pure:
        modules.append(("pure", tron_ai, None))
    if against is not None:
        modules.append(("against", _load_module(against), None))
    rates: dict[str, list[float]] = {name: [] for name, _, _ in modules}
    results: dict[str, list[tuple[int, int, tuple[int, ...]]]] = {}
    nodes = 0
    for _ in range(repeat):
        for name, module, compiled in modules:
            if module is tron_ai:
                tron_kernel.KERNEL = compiled
            nodes, spent, found = _speed_round(module, positions, depth)
            rates[name].append(nodes / spent)
            if results.setdefault(name, found) != found:
                raise SystemExit(f"{name}: a search gave a different result on a repeat")
    tron_kernel.KERNEL = kernel
    print(f"{len(positions)} contact positions to depth {depth}: {nodes} nodes per round, {repeat} round(s)")
    for name, _, _ in modules:
        print(
            f"  {name}: median {statistics.median(rates[name]):.0f} nodes per CPU second"
            f" (rounds: {', '.join(f'{rate:.0f}' for rate in rates[name])})"
        )
    first = modules[0][0]
    for other in [name for name, _, _ in modules[1:]]:
        same = results[first] == results[other]
        ratio = statistics.median(rates[first]) / statistics.median(rates[other])
        print(f"  {first} / {other}: {ratio:.2f}x; the same nodes, scores and main lines: {same}")
        if not same:
            raise SystemExit(f"{first} and {other} searched differently")
    if pure:
        _leaf_speed(positions, depth, repeat, kernel)


def search_speed(depth: int, repeat: int, ms: int) -> None:
    """Level 5's contact search to `depth` plies from every `speed_positions` position, in the kernel, in the Python
    core with the kernel's leaves and in the pure-Python code, round by round: the same scores, CPU time and nodes
    per CPU second of each; then the depth each completes from every position within level 5's deadline at `ms`."""
    kernel = tron_kernel.KERNEL
    if kernel is None:
        raise SystemExit("search needs the compiled kernel, which is not in use (not built, or GAMENIGHT_PURE_AI=1)")
    positions = [tron_ai.grid_of(state) for state in speed_positions()]
    names = ("kernel", "core", "pure")
    cpu: dict[str, list[float]] = {name: [] for name in names}
    rates: dict[str, list[float]] = {name: [] for name in names}
    try:
        for _ in range(repeat):
            for name in ("core", "pure"):
                tron_kernel.KERNEL = kernel if name == "core" else None
                tron_ai._TREES.clear()
                started = time.process_time()
                nodes, found = _core_searches(positions, depth)
                cpu[name].append(time.process_time() - started)
                rates[name].append(nodes / cpu[name][-1])
                if name == "core":
                    core_found = found
                elif found != core_found:
                    raise SystemExit("the pure code's search scored a position differently from the kernel's leaves")
            tron_kernel.KERNEL = kernel
            started = time.process_time()
            nodes = 0
            for grid, (score, done) in zip(positions, core_found, strict=True):
                engine = tron_ai.Level5Engine(grid.stride)
                a, b = grid.heads
                draw, edge = engine.draw_penalty, engine.edge
                result = kernel.contact_search(grid.open, grid.stride, a, b, draw, edge, False, 1e12, done)
                if result is NotImplemented or result[1] != score:
                    raise SystemExit(f"the kernel's search scored a position differently from the core: {result}")
                nodes += result[3]
            cpu["kernel"].append(time.process_time() - started)
            rates["kernel"].append(nodes / cpu["kernel"][-1])
    finally:
        tron_kernel.KERNEL = kernel
    print(f"{len(positions)} contact positions to depth {depth}, {repeat} round(s), the same score at every position")
    for name in names:
        ratio = statistics.median(cpu[name]) / statistics.median(cpu["kernel"])
        print(
            f"  {name}: median {statistics.median(cpu[name]) * 1000:.0f} ms of CPU a round ({ratio:.1f}x the kernel's),"
            f" {statistics.median(rates[name]):.0f} nodes per CPU second"
        )
    depths: dict[str, list[int]] = {"kernel": [], "core": []}
    compiled = tron_ai.Level5Engine.compiled
    try:
        for name in depths:
            use_kernel = name == "kernel"
            tron_ai.Level5Engine.compiled = lambda self, use=use_kernel: use  # type: ignore[method-assign]
            tron_ai._CARRY.clear()
            for grid in positions:
                start = time.perf_counter()
                deadline = start + tron_ai.DEADLINE_SHARE * ms / 1000
                a, b = grid.heads
                _, info = tron_ai._pessimistic_move(grid, 0, a, b, random.Random(0), start, deadline)
                depths[name].append(info["depth"])
    finally:
        tron_ai.Level5Engine.compiled = compiled  # type: ignore[method-assign]
    for name, found_depths in depths.items():
        print(
            f"  {name} within {ms} ms: depth median {statistics.median(found_depths):.0f} plies"
            f" (min {min(found_depths)}, max {max(found_depths)})"
        )


def scaling(depths: list[int], budgets: list[int], reduction: int) -> None:
    """How level 5's compiled contact search scales with depth and time, on the `speed` positions.

    First the nodes it needs to complete each of `depths` over all positions, and their growth per tick (two plies)
    from the depth before: the effective branching factor of a tick, 3 at most with perfect ordering on a tree of
    three moves a side. Then for each budget in `budgets` (ms): the depth it completes within level 5's deadline, the
    nodes it searches, and the share of the deadline that depth took, measured by searching each position again to
    that depth alone; the rest of the deadline went to a depth it cut off.

    The kernel keeps its table from call to call and orders moves by the best moves of earlier calls, so a search
    of a position it has searched before runs faster. Each pass over the positions therefore runs in a fresh
    process (`_fresh`), where every search starts as the first search of a position in play does.

    `reduction`: the plies by which late moves are reduced (level 5's `LEVEL5_REDUCTION` unless given; 0: none).
    A reduced search's depth is not a full-width one.
    """
    if tron_kernel.KERNEL is None:
        raise SystemExit("scaling needs the compiled kernel, which is not in use (not built, or GAMENIGHT_PURE_AI=1)")
    jobs = [_search_args(tron_ai.grid_of(state)) for state in speed_positions()]
    print(
        f"{len(jobs)} contact positions (the speed positions), level 5's compiled contact search,"
        f" late moves reduced by {reduction} plies"
    )
    last = None
    for depth in depths:
        nodes = sum(found[1] for found in _fresh(_searches, [(job, 1e12, depth, reduction) for job in jobs]))
        growth = "" if last is None else f", {(nodes / last[1]) ** (2 / (depth - last[0])):.2f}x per tick"
        print(f"  to depth {depth}: {nodes} nodes{growth}")
        last = (depth, nodes)
    for ms in budgets:
        span = tron_ai.DEADLINE_SHARE * ms / 1000
        found = _fresh(_searches, [(job, span, tron_ai.MAX_TICK_DEPTH, reduction) for job in jobs])
        done_depths = [done for done, _, _ in found]
        # solved (or every line ended) before the deadline: no depth was cut off
        cut = [
            (job, 1e12, done, reduction)
            for job, (done, _, seconds) in zip(jobs, found, strict=True)
            if seconds >= 0.95 * span
        ]
        shares = [seconds / span for _, _, seconds in _fresh(_searches, cut)]
        print(
            f"  within {ms} ms: depth median {statistics.median(done_depths):.0f} plies (min {min(done_depths)},"
            f" max {max(done_depths)}), median {statistics.median(n for _, n, _ in found):.0f} nodes;"
            f" {len(jobs) - len(cut)} solved before the deadline; on the other {len(cut)} the completed depth took a"
            f" median {statistics.median(shares):.0%} of the deadline (mean {statistics.mean(shares):.0%}), the rest"
            " went to the depth it cut off"
        )


def _search_args(grid: tron_ai.Grid) -> tuple[Any, ...]:
    """The first seven arguments of level 5's `contact_search` from `grid`, seat 0 to move (its draw cost set)."""
    engine = tron_ai.Level5Engine(grid.stride)
    a, b = grid.heads
    engine.contempt(grid.open, a, b)
    return (grid.open, grid.stride, a, b, engine.draw_penalty, engine.edge, engine.chains)


def _fresh(work: Any, tasks: list[Any]) -> Any:
    """`work(tasks)` run in a new process (its own kernel table), and its result."""
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(work, (tasks,))


def _searches(tasks: list[tuple[tuple[Any, ...], float, int, int]]) -> list[tuple[int, int, float]]:
    """The kernel's contact search of each (arguments, time allowed in seconds, depth, late move reduction): the
    depth completed, the nodes and the wall time."""
    assert tron_kernel.KERNEL is not None
    found = []
    for job, seconds, depth, reduction in tasks:
        start = time.perf_counter()
        _, _, done, nodes, _ = tron_kernel.KERNEL.contact_search(*job, start + seconds, depth, reduction)
        found.append((done, nodes, time.perf_counter() - start))
    return found


def _core_searches(positions: list[tron_ai.Grid], depth: int) -> tuple[int, list[tuple[int, int]]]:
    """Level 5's engine through the Python core to `depth` plies from each position: nodes, (score, depth done)."""
    from gamenight.server.ai.search import Limits, search

    nodes = 0
    found = []
    for grid in positions:
        engine = tron_ai.Level5Engine(grid.stride)
        _, info = search(engine, (grid.open, *grid.heads, 0, 0), Limits(depth=depth), tt={})
        found.append((info.score, info.depth))
        nodes += info.nodes
    return nodes, found


def _leaf_speed(positions: list[TronState], depth: int, repeat: int, kernel: Any) -> None:
    """Record the leaf evaluations (`territory_score` calls) of one round and time them alone, with the kernel
    and in pure Python in turn (chamber-tree cache cleared before each pass, as a search starts empty)."""
    calls: list[tuple[Any, ...]] = []
    recorded = tron_territory.territory_score

    def record(*args: Any) -> int:
        calls.append(args)
        return recorded(*args)

    tron_territory.territory_score = record  # type: ignore[assignment]
    try:
        _speed_round(tron_ai, positions, depth)
    finally:
        tron_territory.territory_score = recorded
    times: dict[str, list[float]] = {"kernel": [], "pure": []}
    for _ in range(repeat):
        for name, compiled in (("kernel", kernel), ("pure", None)):
            tron_kernel.KERNEL = compiled
            tron_ai._TREES.clear()
            started = time.process_time()
            for args in calls:
                recorded(*args)
            times[name].append((time.process_time() - started) / len(calls) * 1e6)
    tron_kernel.KERNEL = kernel
    kernel_us, pure_us = statistics.median(times["kernel"]), statistics.median(times["pure"])
    print(
        f"  one leaf evaluation ({len(calls)} leaves replayed, median of {repeat}): kernel {kernel_us:.1f} us,"
        f" pure {pure_us:.1f} us ({pure_us / kernel_us:.1f}x)"
    )


def _speed_round(module: Any, positions: list[TronState], depth: int) -> tuple[int, float, list[Any]]:
    """One search of every position with `module`'s voronoi engine: nodes, CPU seconds, (nodes, score, pv)."""
    from gamenight.server.ai.search import Limits, search

    nodes = 0
    found = []
    started = time.process_time()
    for state in positions:
        grid = module.grid_of(state)
        module._TREES.clear()
        engine = module.VoronoiEngine(grid.stride)
        root = (grid.open, grid.heads[0], grid.heads[1], 0, 0)
        _, info = search(engine, root, Limits(depth=depth), rng=random.Random(0), tt={})
        nodes += info.nodes
        found.append((info.nodes, info.score, info.pv))
    return nodes, time.process_time() - started, found


def _load_module(path: str) -> Any:
    """Another tron_ai.py loaded under its own name (it imports the rest of gamenight from this checkout)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("tron_ai_against", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run the figure it names."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "what", choices=("games", "fill", "speed", "apart", "prove", "ride", "losses", "search", "scaling")
    )
    parser.add_argument("--log", help="losses: the output of bench.match --game tron --show-losses")
    parser.add_argument("--b", default="prev5", help="level 5's opponent (as in bench.match)")
    parser.add_argument("--games", type=int, default=46)
    parser.add_argument("--ms", type=int, default=100)
    parser.add_argument("--tick-ms", type=int, default=150)
    parser.add_argument("--positions", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--search-ms", type=int, default=1000, help="apart: the longest ride's search time")
    parser.add_argument(
        "--close", type=int, help="experiment: level 5's LEVEL5_CLOSE (default -1: off; session 4 tried 2)"
    )
    parser.add_argument(
        "--exact-ticks",
        type=int,
        help="level 5's LEVEL5_EXACT_TICKS: separations within this many ticks of the root end the line (0: off)",
    )
    parser.add_argument(
        "--exact-ms", type=int, help="experiment: EXACT_MS, the proof time per room (0: chamber estimates)"
    )
    parser.add_argument(
        "--chains",
        type=int,
        choices=(0, 1),
        help="experiment: level 5's LEVEL5_CHAINS, apart leaves by the parity bound per chain of chambers (1)",
    )
    parser.add_argument(
        "--draw-ahead", type=int, help="level 5's LEVEL5_DRAW_AHEAD: the draw cost when not behind (0: off)"
    )
    parser.add_argument("--per-map", type=int, default=3, help="prove: self-play games per map")
    parser.add_argument("--min-room", type=int, default=20, help="prove: the smallest room searched")
    parser.add_argument(
        "--fill-chains",
        type=int,
        choices=(0, 1),
        help="level 5's endgame search bounded by the parity bound per chain (FILL_CHAINS, default 1) or not (0)",
    )
    parser.add_argument("--depth", type=int, default=6, help="speed: the depth of every search, in plies")
    parser.add_argument("--depths", default="6,8,10,12,14", help="scaling: the depths to count nodes to (plies)")
    parser.add_argument("--budgets", default="100,1000", help="scaling: level 5's budgets per move (ms)")
    parser.add_argument(
        "--reduction", type=int, default=None, help="scaling: late move reduction in plies (default level 5's; 0: none)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="speed: rounds over the positions (median printed)")
    parser.add_argument("--against", help="speed, ride: another tron_ai.py (e.g. main's) timed with ours")
    parser.add_argument(
        "--pure", action="store_true", help="speed, ride: the compiled kernel against the pure code, round by round"
    )
    parser.add_argument(
        "--no-chambers",
        action="store_true",
        help="experiment: level 5 (and the voronoi bot) count plain Voronoi territory",
    )
    parser.add_argument(
        "--parity",
        action="store_true",
        help="experiment: level 5 counts its chains of chambers by the checkerboard bound (Level5Engine.parity)",
    )
    args = parser.parse_args(argv)
    if args.no_chambers:
        tron_ai.VoronoiEngine.chambers = False
    if args.parity:
        tron_ai.Level5Engine.parity = True
    if args.close is not None:
        tron_ai.Level5Engine.close = args.close
    if args.chains is not None:
        tron_ai.Level5Engine.chains = bool(args.chains)
    if args.exact_ticks is not None:
        tron_ai.Level5Engine.exact_ticks = args.exact_ticks
    if args.draw_ahead is not None:
        tron_ai.Level5Engine.draw_ahead = args.draw_ahead
    if args.fill_chains is not None:
        tron_params.FILL_CHAINS = bool(args.fill_chains)
    if args.exact_ms is not None:
        tron_params.EXACT_MS = args.exact_ms
    if args.what == "games":
        games(args.b, args.games, args.ms, args.tick_ms)
    elif args.what == "fill":
        fill(args.positions, args.ms, args.seed)
    elif args.what == "apart":
        apart(args.b, args.games, args.ms, args.search_ms)
    elif args.what == "prove":
        prove(args.per_map, args.ms, args.min_room)
    elif args.what == "losses":
        if not args.log:
            parser.error("losses needs --log")
        losses(args.log, args.search_ms)
    elif args.what == "ride":
        ride(args.per_map, args.ms, args.min_room, args.against, args.pure)
    elif args.what == "search":
        search_speed(args.depth, args.repeat, args.ms)
    elif args.what == "scaling":
        reduction = tron_ai.LEVEL5_REDUCTION if args.reduction is None else args.reduction
        scaling([int(d) for d in args.depths.split(",")], [int(ms) for ms in args.budgets.split(",")], reduction)
    else:
        speed(args.depth, args.repeat, args.against, args.pure)
    return 0


if __name__ == "__main__":
    sys.exit(main())
