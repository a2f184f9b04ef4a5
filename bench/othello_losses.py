"""Where player A's lost Othello games were lost: at how many empty squares, by whose move, and by how much.

    python -m bench.othello_losses LOG [--seed 38] [--exact 20] [--depth 8]

LOG is the output of `python -m bench.match --game othello ... --show-losses` (the same `--seed`): each game A did
not win is printed with its moves after the random opening, and the opening itself is replayed here from the seed
and the game's index, as `bench.match` made it. Each such game is replayed, and at every position with at most
`--exact` empty squares the compiled kernel's exact solver gives the final disc difference with best play, from
A's side. With perfect information the value can only fall by A's own move, so the first position where it turns
negative follows the move that lost the game: printed with how many empties were left, what A played, what the
solver would have played and how many discs the move cost. A game already lost at the first exact position is
reported so, with the kernel's `--depth`-ply search score (A's side, the evaluation's units: `UNIT` a small clear
advantage) at 36, 30 and 24 empties, which shows how long before the solver's horizon it was lost.
"""

from __future__ import annotations

import argparse
import itertools
import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.match import _random_opening, opening_for  # noqa: E402
from gamenight.server.ai import _othellokernel as kernel  # noqa: E402
from gamenight.server.ai.othello_ai import KernelSolver  # noqa: E402
from gamenight.server.games import find_game  # noqa: E402
from gamenight.server.games.othello import FULL_MASK, OthelloState, square_name  # noqa: E402

GAME_LINE = re.compile(r"^game\s+(\d+) \((.*), (\S+) seat (\d)\): \S+ scores ([\d.]+) in (\d+) plies")
MOVES_LINE = re.compile(r"^\s+game (\d+) moves after the opening: ([a-h1-8]*)\s*$")
SCORED_AT = (36, 30, 24)  # empties at which a game lost before the solver's horizon gets a search score


@dataclass
class Lost:
    """One game A did not win, as the log gives it."""

    index: int
    label: str
    a_seat: int
    score: float
    moves: str


def read_log(text: str) -> list[Lost]:
    """The games A did not win, with their moves (games printed without moves, such as forfeits, are left out)."""
    games: dict[int, Lost] = {}
    for line in text.splitlines():
        if found := GAME_LINE.match(line):
            index, label, _a, seat, score, _plies = found.groups()
            games[int(index)] = Lost(int(index), label, int(seat), float(score), "")
        elif (found := MOVES_LINE.match(line)) and int(found.group(1)) in games:
            games[int(found.group(1))].moves = found.group(2)
    return sorted((g for g in games.values() if g.score < 1 and g.moves and "forfeits" not in g.label), key=_index)


def _index(game: Lost) -> int:
    """A game's index (a sort key)."""
    return game.index


def replay(game: Lost, seed: int) -> list[OthelloState]:
    """Every position of the game, from the first after the random opening to the last."""
    rules = find_game("othello")
    assert rules is not None
    pair = game.index // 2
    rng = random.Random(seed * 1_000_003 + pair)
    opening = opening_for("othello", pair, rng)
    state = _random_opening(rules, rules.initial_state(opening.options), opening.random_plies, rng)
    states = [state]
    for at in range(0, len(game.moves), 2):
        seat = min(rules.to_move(state))
        state = rules.apply(state, {seat: rules.parse_move(state, game.moves[at : at + 2])})
        states.append(state)
    return states


def empties(state: OthelloState) -> int:
    """The empty squares of an 8x8 position."""
    own, opp = state.sides()
    return (FULL_MASK[8] ^ (own | opp)).bit_count()


def exact_for(state: OthelloState, seat: int, solver: KernelSolver) -> tuple[int, int | None]:
    """The final disc difference for `seat` with best play from `state`, and the side to move's best square
    (`solver`: one per game, its table's bounds kept from position to position)."""
    own, opp = state.sides()
    move, value = solver.best_move(own, opp)
    return (value if state.turn == seat else -value), move


def final_margin(state: OthelloState, seat: int) -> int:
    """Discs of `seat` minus the other side's at the end."""
    own, opp = state.sides()
    margin = own.bit_count() - opp.bit_count()
    return margin if state.turn == seat else -margin


def where_lost(game: Lost, seed: int, exact: int, depth: int) -> str:
    """One line: how the game was lost (see the module's text)."""
    states = replay(game, seed)
    colour = "black" if game.a_seat == 0 else "white"
    head = f"game {game.index:3d} (A {colour}, {game.score:g}): final {final_margin(states[-1], game.a_seat):+d} discs"
    values: list[tuple[int, OthelloState, int, int | None]] = []  # (ply, position, A's exact value, best square)
    solver = KernelSolver()
    for ply, state in enumerate(states):
        if not state.over and empties(state) <= exact:
            value, best = exact_for(state, game.a_seat, solver)
            values.append((ply, state, value, best))
    if not values:
        return f"{head}; it ended before {exact} empties"
    _, first, first_value, _ = values[0]
    if first_value < 0:
        scores = []
        for state in states:
            if not state.over and empties(state) in SCORED_AT:
                own, opp = state.sides()
                score = kernel.search(own, opp, depth, -1.0)[1]
                scores.append(f"{empties(state)}: {score if state.turn == game.a_seat else -score:+d}")
        return f"{head}; already lost at {empties(first)} empties ({first_value:+d} with best play); search {scores}"
    for (ply, state, value, best), (_, _, after, _) in itertools.pairwise(values):
        if (value >= 0 > after) if game.score == 0 else (value > 0 >= after):
            played = game.moves[2 * ply : 2 * ply + 2]
            shown = square_name(best, 8) if best is not None else "pass"
            kind = "a draw" if after == 0 else "a loss"
            return (
                f"{head}; {empties(state)} empties: A played {played} (best {shown}), {value:+d} -> {after:+d}: "
                f"{kind} from there"
            )
    return f"{head}; the exact value never fell after {empties(first)} empties (from {first_value:+d})"


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and print a line per lost game."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log", type=Path, help="a `bench.match --show-losses` output")
    parser.add_argument("--seed", type=int, default=38, help="the match's --seed")
    parser.add_argument("--exact", type=int, default=20, help="empties from which positions are solved exactly")
    parser.add_argument("--depth", type=int, default=8, help="search depth for the scores before that")
    args = parser.parse_args(argv)
    lost = read_log(args.log.read_text())
    print(f"{len(lost)} games A did not win (with their moves) in {args.log}; exact from {args.exact} empties")
    for game in lost:
        print(where_lost(game, args.seed, args.exact, args.depth), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
