"""Play AI against AI: N games of one game between two players, and the score with an Elo estimate.

Usage (from the repository root):
    python -m bench.match --game othello --a 5 --b classic --games 20 --ms 300 --jobs 2
    python -m bench.match --game connect4 --a 5 --b 1 --games 20 --ms 300 --random-plies 0 --a-seat 0

A player is a level number (1-5), a bot name, or (Tron) `prev5`: the pre-issue-18 level 5 (commit 8c7afd3, read from git
by bench/tron_baseline.py), or `tron2010:COMMAND`: a 2010 Google AI Challenge bot run as a child process for each game
and spoken to in the contest's protocol through the engine adapter's map (bench/a1k0n.py builds the contest winner for
this); or (Othello and Tron) `pure5` (`pureN`): level N with the compiled kernel switched off (the pure-Python code: for
Othello as before issue 38, for Tron what `GAMENIGHT_PURE_AI=1` plays), (Othello) `hand5` (`handN`): level N with the
kernel but the hand-weighted evaluation (as in issue 38's first session) instead of the fitted pattern tables, or
`gtp:COMMAND`: an Othello engine speaking GTP, e.g. `gtp:/usr/games/gtp-rhino --level 3` (GRhino), driven as the bot
runner drives it. The report gives each player's mean thinking time per move.
Games come in pairs from the same opening with the colours (seats) swapped: random first plies drawn from
--seed for Othello, Pentago and Connect Four (--random-plies fixes their number, 0 for the start position;
--a-seat keeps A on one seat); for Tron each official
two-player map in turn, except the tiny `test-board` and `test-board2` where every game is a draw (give
--tron-maps to choose maps, `all` for every one). Games run in parallel worker processes and are driven only
through `server.games` and `server.ai.play.choose_move`, so every game with an AI module works.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import select
import shlex
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from gamenight.client.bot.engines import TRON_DIRECTIONS, EngineFailure, GtpEngine, Turn, contest_map
from gamenight.server.ai.play import choose_move
from gamenight.server.games import REGISTRY, find_game
from gamenight.server.games.base import Game, Opening
from gamenight.server.games.tron import match_maps, match_opening

Z95 = 1.96
"""The normal quantile of a two-sided 95% interval."""
MAX_PLIES = 10_000
"""A game still going after this many moves is scored a draw (a guard against endless games)."""
GTP_TIMEOUT_S = 180.0
"""How long a GTP engine may think about one move by default (`--move-limit`): GRhino's level 5 plays without a
clock and took over 33 s on some endgame moves on the shared machine (issue 38). An engine past the limit forfeits
the game (it is scored a loss and the game's line says so); the match goes on."""


class Forfeit(Exception):
    """An outside engine gave no usable move for `seat` (late, crashed, illegal or resigned): it loses the game."""

    def __init__(self, seat: int, reason: str) -> None:
        super().__init__(reason)
        self.seat = seat


def opening_for(game: str, pair: int, rng: random.Random, maps: tuple[str, ...] = ()) -> Opening:
    """How pair `pair` of a match opens: the game's registered opening (Tron: over `maps` when given)."""
    if maps and game == "tron":
        return match_opening(pair, rng, maps)
    return REGISTRY[game].opening(pair, rng)


def parse_player(text: str) -> dict[str, Any]:
    """A player spec as keyword arguments of `choose_move`: "3" or "level3" is a level, anything else a bot.

    Tron only: "prev5" (or "prevN") is level N of the pre-issue-18 engine (commit 8c7afd3's, read from git by
    bench/tron_baseline.py); "tron2010:COMMAND" a contest bot (see `ContestBot`). Othello and Tron: "pureN" is level N
    without the compiled kernel. Othello only: "handN" level N with the kernel but its hand-weighted evaluation instead
    of the fitted patterns, "gtp:COMMAND" a GTP engine (see `GtpPlayer`).
    """
    if text.startswith("tron2010:"):
        return {"tron2010": text.removeprefix("tron2010:")}
    if text.startswith("gtp:"):
        return {"gtp": text.removeprefix("gtp:")}
    if text.startswith("pure") and text[4:].isdigit():
        return {"pure": int(text[4:])}
    if text.startswith("hand") and text[4:].isdigit():
        return {"hand": int(text[4:])}
    if text.startswith("prev") and text[4:].isdigit():
        return {"prev": int(text[4:])}
    digits = text.removeprefix("level").removeprefix("L")
    if digits.isdigit():
        return {"level": int(digits)}
    return {"bot": text}


class ContestBot:
    """A 2010 Google AI Challenge Tron bot, a child process for one game: each tick the map from its side (the
    engine adapter's `contest_map`), one line back, 1-4. Its stderr is dropped."""

    def __init__(self, command: str) -> None:
        self.process = subprocess.Popen(
            shlex.split(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )

    def move(self, view: dict[str, Any], seat: int, timeout_s: float) -> str:
        """The bot's answer to this tick's map as a gamenight move (N, E, S or W)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(contest_map(view, seat) + "\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], timeout_s)
        if not ready:
            raise TimeoutError(f"the contest bot did not answer within {timeout_s:.1f} s")
        answer = self.process.stdout.readline().strip()
        if answer not in TRON_DIRECTIONS:
            raise ValueError(f"the contest bot answered {answer!r}, not 1, 2, 3 or 4")
        return TRON_DIRECTIONS[answer]

    def close(self) -> None:
        """End the game: close its input (contest bots exit at the end of input), kill it if it lingers."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class GtpPlayer:
    """An Othello engine speaking GTP (GRhino's `gtp-rhino --level 3`), a child process for one game, driven through
    the bot runner's `GtpEngine` (client/bot/engines.py) on an event loop of its own: told every move of the game,
    the random opening's included, and asked for its own."""

    def __init__(self, command: str, seat: int, start_view: dict[str, Any]) -> None:
        self.loop = asyncio.new_event_loop()
        self.engine = GtpEngine(command)
        self.told = 0
        self.loop.run_until_complete(self._start(seat, start_view))

    async def _start(self, seat: int, start_view: dict[str, Any]) -> None:
        """Start the engine and its game."""
        await self.engine.start()
        await self.engine.new_game("othello", seat, start_view)

    def move(self, rules: Game, state: Any, seat: int, history: list[tuple[int, str]], timeout_s: float) -> str:
        """The engine's move for `seat` in `state`, after telling it the moves of `history` it has not heard."""
        for mover, move in history[self.told :]:
            self.engine.observe(mover, move)
        self.told = len(history)
        legal = [rules.format_move(state, move) for move in rules.legal_moves(state, seat)]
        turn = Turn("othello", seat, rules.view(state), legal, time.monotonic() + timeout_s)
        try:
            return self.loop.run_until_complete(self.engine.choose(turn))
        except EngineFailure as failure:  # not picklable: the match's worker processes report it as text
            raise Forfeit(seat, str(failure)) from None

    def close(self) -> None:
        """End the engine and the loop."""
        self.loop.run_until_complete(self.engine.close())
        self.loop.close()


def _move(
    game: str,
    state: Any,
    seat: int,
    ms: int,
    seed: int,
    player: dict[str, Any],
    history: list[tuple[int, str]],
    move_limit_s: float = GTP_TIMEOUT_S,
) -> str:
    """The wire move of one player spec (see `parse_player`; a contest bot's has its running `ContestBot`, a GTP
    engine's its `GtpPlayer`, which is told the game's moves so far, `history`, and forfeits past `move_limit_s`)."""
    if "gtp_process" in player:
        rules = find_game(game)
        assert rules is not None
        return player["gtp_process"].move(rules, state, seat, history, move_limit_s)  # type: ignore[no-any-return]
    if "pure" in player:
        return _pure_move(game, state, seat, ms, seed, player["pure"])
    if "hand" in player:
        if game != "othello":
            raise ValueError("handN players exist for othello only")
        from gamenight.server.ai import othello_ai

        if othello_ai.KERNEL is None:
            raise ValueError("handN needs the compiled Othello kernel")
        was = othello_ai.KERNEL.use_patterns(False)
        try:
            wire, _ = choose_move(game, state, seat, budget_ms=ms, seed=seed, level=player["hand"])
        finally:
            othello_ai.KERNEL.use_patterns(was)
        return wire
    if "bot_process" in player:
        view = find_game(game).view(state)  # type: ignore[union-attr]
        return player["bot_process"].move(view, seat, timeout_s=1 + 3 * ms / 1000)  # type: ignore[no-any-return]
    if "prev" in player:
        if game != "tron":
            raise ValueError("prevN players exist for tron only")
        from bench import tron_baseline
        from gamenight.server.games.tron import DIRECTION_NAMES

        move, _ = tron_baseline.choose(
            state, seat, level=player["prev"], bot=None, budget_ms=ms, rng=random.Random(seed)
        )
        return DIRECTION_NAMES[move]
    wire, _ = choose_move(game, state, seat, budget_ms=ms, seed=seed, **player)
    return wire


def _pure_move(game: str, state: Any, seat: int, ms: int, seed: int, level: int) -> str:
    """Level `level`'s wire move with the game's compiled kernel switched off (Othello and Tron), put back after."""
    if game == "othello":
        from gamenight.server.ai import othello_ai as module
    elif game == "tron":
        from gamenight.server.ai.tron import kernel as module  # type: ignore[no-redef]
    else:
        raise ValueError("pureN players exist for othello and tron only")
    kernel, module.KERNEL = module.KERNEL, None
    try:
        wire, _ = choose_move(game, state, seat, budget_ms=ms, seed=seed, level=level)
    finally:
        module.KERNEL = kernel
    return wire


def _random_opening(
    rules: Game, state: Any, plies: int, rng: random.Random, history: list[tuple[int, str]] | None = None
) -> Any:
    """`state` after `plies` random moves (fewer if the game ends first); `history` gets (seat, wire move) of each."""
    for _ in range(plies):
        seats = sorted(rules.to_move(state))
        if not seats:
            break
        moves = {seat: rng.choice(rules.legal_moves(state, seat)) for seat in seats}
        if history is not None:
            history.extend((seat, rules.format_move(state, move)) for seat, move in moves.items())
        state = rules.apply(state, moves)
    return state


def play_game(
    game: str,
    a: str,
    b: str,
    index: int,
    ms: int,
    seed: int,
    maps: tuple[str, ...] = (),
    random_plies: int | None = None,
    a_seat: int | None = None,
    move_limit_s: float = GTP_TIMEOUT_S,
) -> tuple[int, float, int, str, str]:
    """Play game `index` of a match (A takes seat 0 in even games, seat 1 in odd ones); `maps`: Tron's maps.

    `random_plies` replaces the opening's number of random plies; `a_seat` puts A on that seat in every game;
    an outside engine (GTP) with no usable move within `move_limit_s` forfeits: the label ends "B forfeits: why".

    Returns (index, A's score 1 / 0.5 / 0, plies played, the opening's label, the game's transcript).
    """
    return play_timed_game(game, a, b, index, ms, seed, maps, random_plies, a_seat, move_limit_s)[:5]


def play_timed_game(
    game: str,
    a: str,
    b: str,
    index: int,
    ms: int,
    seed: int,
    maps: tuple[str, ...] = (),
    random_plies: int | None = None,
    a_seat: int | None = None,
    move_limit_s: float = GTP_TIMEOUT_S,
) -> tuple[int, float, int, str, str, tuple[float, int, float, int]]:
    """`play_game`, and the thinking time: (A's seconds, A's moves, B's seconds, B's moves), wall clock per move
    (a GTP engine's includes the pipe's round trip; the random opening's moves are not counted)."""
    rules = find_game(game)
    if rules is None:
        raise ValueError(f"unknown game {game!r}")
    pair = index // 2
    rng = random.Random(seed * 1_000_003 + pair)
    opening = opening_for(game, pair, rng, maps)
    if random_plies is not None:
        opening = Opening(opening.options, random_plies, f"{random_plies} random plies")
    history: list[tuple[int, str]] = []
    state = _random_opening(rules, rules.initial_state(opening.options), opening.random_plies, rng, history)
    a_seat = index % 2 if a_seat is None else a_seat
    players = {a_seat: parse_player(a), 1 - a_seat: parse_player(b)}
    for seat, player in players.items():
        if "tron2010" in player:
            player["bot_process"] = ContestBot(player["tron2010"])
        if "gtp" in player:
            if game != "othello":
                raise ValueError("gtp:COMMAND players play othello only")
            player["gtp_process"] = GtpPlayer(player["gtp"], seat, rules.view(rules.initial_state(opening.options)))
    plies = 0
    written: list[str] = []
    spent = {0: 0.0, 1: 0.0}
    counted = {0: 0, 1: 0}
    forfeit: Forfeit | None = None
    try:
        while rules.outcome(state) is None and plies < MAX_PLIES:
            moves = {}
            for seat in sorted(rules.to_move(state)):
                move_seed = seed * 7_919 + index * 100_003 + plies * 2 + seat
                started = time.perf_counter()
                wire = _move(game, state, seat, ms, move_seed, players[seat], history, move_limit_s)
                spent[seat] += time.perf_counter() - started
                counted[seat] += 1
                moves[seat] = rules.parse_move(state, wire)
                written.append(wire)
            history.extend((seat, rules.format_move(state, move)) for seat, move in moves.items())
            state = rules.apply(state, moves)
            plies += 1
    except Forfeit as lost:
        forfeit = lost
    finally:
        for player in players.values():
            for process in ("bot_process", "gtp_process"):
                if process in player:
                    player[process].close()
    times = (spent[a_seat], counted[a_seat], spent[1 - a_seat], counted[1 - a_seat])
    if forfeit is not None:
        who = "A" if forfeit.seat == a_seat else "B"
        label = f"{opening.label}; {who} forfeits: {forfeit}"
        return index, 0.0 if who == "A" else 1.0, plies, label, rules.transcript(written), times
    return index, _score(rules.outcome(state), a_seat), plies, opening.label, rules.transcript(written), times


def _score(outcome: Any, seat: int) -> float:
    """1 if `seat` alone won, 0.5 for a draw (or an unfinished game), else 0."""
    if outcome is None or outcome.is_draw:
        return 0.5
    return 1.0 if seat in outcome.winners else 0.0


def elo(score: float) -> float:
    """The Elo difference that predicts `score` (a share in [0, 1]); infinite at 0 and 1."""
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400 * math.log10(1 / score - 1)


def wilson(share: float, n: int) -> tuple[float, float]:
    """The Wilson 95% interval of a score share over `n` games (finite Elo bounds even at 0% or 100%).

    Draws count as half a win; treating the share as a binomial one makes the interval wide when there are
    many draws (Tron matches are often half draws), which errs on the safe side; `paired` gives the tighter one.
    """
    z2 = Z95 * Z95
    centre = (share + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(share * (1 - share) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


MIN_PAIRS = 10
"""Fewer pairs than this give no paired interval (too few to estimate their spread)."""


def paired(scores: list[float]) -> tuple[float, float] | None:
    """The 95% interval of the score share with games 2k and 2k + 1 (one opening, seats swapped) as one trial.

    The normal interval from the pairs' sample variance: a draw counts as what it is rather than as a coin that
    came down half-way, and a pair's two games, which share their map or opening, are not counted as two
    independent trials (the pentanomial model of engine testing, e.g. fishtest's). None for an odd number of
    games, fewer than MIN_PAIRS pairs, or pairs that all scored the same (no spread to estimate from).
    """
    n = len(scores) // 2
    if len(scores) % 2 or n < MIN_PAIRS:
        return None
    pairs = [(scores[2 * k] + scores[2 * k + 1]) / 2 for k in range(n)]
    mean = sum(pairs) / n
    variance = sum((pair - mean) ** 2 for pair in pairs) / (n - 1)
    if variance == 0:
        return None
    half = Z95 * math.sqrt(variance / n)
    return max(0.0, mean - half), min(1.0, mean + half)


def summary(scores: list[float]) -> dict[str, Any]:
    """Wins, draws, losses, the score share, the Elo difference and its 95% intervals from per-game scores (in
    game order: the paired interval reads games 2k and 2k + 1 as a pair)."""
    n = len(scores)
    mean = sum(scores) / n
    low, high = wilson(mean, n)
    by_pairs = paired(scores)
    return {
        "games": n,
        "wins": scores.count(1.0),
        "draws": scores.count(0.5),
        "losses": scores.count(0.0),
        "score": mean,
        "elo": elo(mean),
        "elo_low": elo(low),
        "elo_high": elo(high),
        "pair_elo_low": None if by_pairs is None else elo(by_pairs[0]),
        "pair_elo_high": None if by_pairs is None else elo(by_pairs[1]),
    }


def _format_elo(value: float) -> str:
    """An Elo figure with its sign, or +inf / -inf."""
    return f"{round(value):+d}" if math.isfinite(value) else ("+inf" if value > 0 else "-inf")


def report(game: str, a: str, b: str, ms: int, stats: dict[str, Any], seconds: float) -> str:
    """The match's result as a few printable lines."""
    text = (
        f"{game}: {a} vs {b}, {stats['games']} games at {ms} ms per move ({seconds:.0f} s)\n"
        f"  {a}: +{stats['wins']} ={stats['draws']} -{stats['losses']}  score {100 * stats['score']:.1f}%\n"
        f"  mean time per move: {a} {stats.get('a_ms_per_move', 0):.0f} ms,"
        f" {b} {stats.get('b_ms_per_move', 0):.0f} ms\n"
        f"  Elo difference {_format_elo(stats['elo'])}"
        f"  (95% interval {_format_elo(stats['elo_low'])} .. {_format_elo(stats['elo_high'])})"
    )
    if stats["pair_elo_low"] is not None:
        text += (
            f"\n  95% interval by pairs of games (draws as draws): {_format_elo(stats['pair_elo_low'])}"
            f" .. {_format_elo(stats['pair_elo_high'])}"
        )
    if stats.get("forfeits"):
        text += f"\n  forfeits (no usable move in time, counted as losses): {stats['forfeits']}"
    return text


def run(
    game: str,
    a: str,
    b: str,
    games: int,
    ms: int,
    seed: int,
    jobs: int,
    quiet: bool = False,
    losses: bool = False,
    maps: tuple[str, ...] = (),
    random_plies: int | None = None,
    a_seat: int | None = None,
    move_limit_s: float = GTP_TIMEOUT_S,
) -> dict[str, Any]:
    """Play the match in `jobs` processes and return its summary.

    Prints a line per game unless `quiet`, and the moves (after the random opening) of games A did not win
    if `losses`. `maps` are the Tron maps to cycle through (default `match_maps()`); `random_plies` and
    `a_seat` and `move_limit_s` as in `play_game`.
    """
    started = time.perf_counter()
    scores = [0.0] * games
    thinking = [0.0, 0, 0.0, 0]
    forfeits = {"A": 0, "B": 0}
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [
            pool.submit(play_timed_game, game, a, b, index, ms, seed, maps, random_plies, a_seat, move_limit_s)
            for index in range(games)
        ]
        for future in as_completed(futures):
            index, score, plies, label, transcript, times = future.result()
            scores[index] = score
            for side in forfeits:
                forfeits[side] += f"; {side} forfeits: " in label
            thinking = [total + part for total, part in zip(thinking, times, strict=True)]
            if not quiet:
                seat = index % 2 if a_seat is None else a_seat
                a_ms, b_ms = (1000 * times[0] / max(1, times[1]), 1000 * times[2] / max(1, times[3]))
                print(
                    f"game {index:3d} ({label}, {a} seat {seat}): {a} scores {score} in {plies} plies"
                    f"; per move {a} {a_ms:.0f} ms, {b} {b_ms:.0f} ms",
                    flush=True,
                )
            if losses and score < 1:
                print(f"  game {index} moves after the opening: {transcript}", flush=True)
    stats = summary(scores)
    stats["seconds"] = time.perf_counter() - started
    stats["a_ms_per_move"] = 1000 * thinking[0] / max(1, int(thinking[1]))
    stats["b_ms_per_move"] = 1000 * thinking[2] / max(1, int(thinking[3]))
    stats["forfeits"] = ", ".join(f"{side} {count}" for side, count in forfeits.items() if count)
    print(report(game, a, b, ms, stats, stats["seconds"]))
    return stats


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and play the match."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="othello", help="othello, pentago, tron or connect4")
    parser.add_argument("--a", default="5", help="player A: a level 1-5 or a bot name")
    parser.add_argument("--b", default="classic", help="player B: a level 1-5 or a bot name")
    parser.add_argument("--games", type=int, default=20, help="games to play (pairs with colours swapped)")
    parser.add_argument("--ms", type=int, default=300, help="thinking budget per move, in milliseconds")
    parser.add_argument("--seed", type=int, default=1, help="seed of the openings and of the players")
    parser.add_argument("--jobs", type=int, default=2, help="games played at once, one process each")
    parser.add_argument("--quiet", action="store_true", help="print only the summary")
    parser.add_argument(
        "--tron-maps", default="", help="Tron: comma-separated map names, or all (default: all but the test boards)"
    )
    parser.add_argument("--show-losses", action="store_true", help="print the moves of games A did not win")
    parser.add_argument(
        "--random-plies", type=int, help="random plies opening every game (default: the game's own choice)"
    )
    parser.add_argument("--a-seat", type=int, choices=(0, 1), help="A plays this seat in every game (default: both)")
    parser.add_argument(
        "--move-limit",
        type=float,
        default=GTP_TIMEOUT_S,
        help="seconds a GTP engine may think about one move; past it, it forfeits the game (default %(default)s)",
    )
    args = parser.parse_args(argv)
    if find_game(args.game) is None:
        parser.error(f"unknown game {args.game!r}")
    try:
        maps = match_maps(args.tron_maps) if args.game == "tron" else ()
    except ValueError as error:
        parser.error(str(error))
    run(
        args.game,
        args.a,
        args.b,
        args.games,
        args.ms,
        args.seed,
        args.jobs,
        args.quiet,
        args.show_losses,
        maps,
        args.random_plies,
        args.a_seat,
        args.move_limit,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
