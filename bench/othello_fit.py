"""Othello's pattern evaluation (issue 38, session 2): the self-play positions it is fitted on, and the fit.

Usage (from the repository root; both steps are long, run them with `nice`):
    python -m bench.othello_fit games --out /tmp/othello_games.bin --minutes 30 [--seed 1] [--depth 6]
    python -m bench.othello_fit fit --data /tmp/othello_games.bin [MORE.bin ...] [--epochs 9]
        [--out server/ai/othello_patterns.dat]

The data recipe (`games`), all with the compiled kernel and nothing downloaded: each game opens with 4-20 random
plies (uniform), then both sides play the kernel's level-5 search to a fixed --depth (hand-weighted evaluation)
until SOLVE_EMPTIES empty squares are left; from there the exact solver plays both sides and labels every position
with its exact final disc difference (empty squares to nobody, as the game counts them). A position before that
gets the game's final difference: the outcome of shallow-search play from there, then perfect play. Every position
with a move to play is written as 17 bytes, `<QQb`: the mover's discs, the other side's, the label from the mover's
view. Several generators (other seeds, other files) may run side by side; `fit` takes their files in order.

The fit (`fit`): the evaluation is a sum of table entries, one per pattern instance (every orientation of the
shapes in `SHAPES` under the board's 8 symmetries; an instance reads its squares in order, base 3: 0 empty, 1 the
mover's, 2 the other side's) plus per-phase weights of the mobility and frontier differences, the parity, a
constant and the hand-weighted evaluation (level 5's before the tables), one set of tables per phase
(`othello_patterns.phase_of`: by empty squares). The weights are fitted by stochastic gradient descent on the
squared error in discs (bench/othello_fit.c, compiled here with the system's C compiler: numpy is no dependency of
the project), the last 5% of the data held out to report the error. Orientations reading the same squares in
another order are then folded into one (`merge_orderings`: the same values, half the lookups), and the result is
written with `othello_patterns.write_table` as the kernel's data file, in units of 1/`SCALE` disc.
"""

from __future__ import annotations

import argparse
import random
import struct
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path

from gamenight.server.ai import _othellokernel as kernel
from gamenight.server.ai import othello_patterns
from gamenight.server.ai.othello_ai import LIMIT

ROOT = Path(__file__).resolve().parent.parent
RECORD = struct.Struct("<QQb")
"""One position of the data file: the mover's discs, the other side's, the label (final difference, mover's view)."""
SOLVE_EMPTIES = 16
"""Empty squares from which the exact solver plays and labels the rest of a game."""
RANDOM_PLIES = (4, 20)
"""The range of random plies opening a game (uniform, both ends included)."""

SHAPES: dict[str, list[str]] = {
    "edge+2x": ["a1", "b1", "c1", "d1", "e1", "f1", "g1", "h1", "b2", "g2"],
    "corner2x5": ["a1", "b1", "c1", "d1", "e1", "a2", "b2", "c2", "d2", "e2"],
    "corner3x3": ["a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"],
    "line2": ["a2", "b2", "c2", "d2", "e2", "f2", "g2", "h2"],
    "line3": ["a3", "b3", "c3", "d3", "e3", "f3", "g3", "h3"],
    "line4": ["a4", "b4", "c4", "d4", "e4", "f4", "g4", "h4"],
    "diag8": ["a1", "b2", "c3", "d4", "e5", "f6", "g7", "h8"],
    "diag7": ["a2", "b3", "c4", "d5", "e6", "f7", "g8"],
    "diag6": ["a3", "b4", "c5", "d6", "e7", "f8"],
    "diag5": ["a4", "b5", "c6", "d7", "e8"],
    "diag4": ["a5", "b6", "c7", "d8"],
}
"""The pattern shapes (Logistello / Edax style) in one orientation; squares are named as on the board (a1 = bit 0)."""


def _square(name: str) -> int:
    """The bit of a square name such as "b2"."""
    return (int(name[1:]) - 1) * 8 + ord(name[0]) - ord("a")


def _symmetries(sq: int) -> list[int]:
    """The images of `sq` under the 8 symmetries of the board, in a fixed order."""
    row, col = divmod(sq, 8)
    images = []
    for r, c in ((row, col), (col, row)):
        for rr, cc in ((r, c), (r, 7 - c), (7 - r, c), (7 - r, 7 - c)):
            images.append(rr * 8 + cc)
    return images


def instances() -> list[list[tuple[int, ...]]]:
    """For each shape of `SHAPES`, its distinct orientations (ordered square tuples) under the 8 symmetries.

    Two orientations reading the same squares in another order are both kept, so the sum over a shape's instances
    is the same for a position and its mirror images, whatever the table holds.
    """
    found = []
    for names in SHAPES.values():
        squares = [_square(name) for name in names]
        images = [_symmetries(sq) for sq in squares]
        shape: list[tuple[int, ...]] = []
        for s in range(8):
            oriented = tuple(image[s] for image in images)
            if oriented not in shape:
                shape.append(oriented)
        found.append(shape)
    return found


def _digit_permutation(first: tuple[int, ...], second: tuple[int, ...]) -> tuple[int, ...]:
    """Where each square of `second` stands in `first` (both order the same squares)."""
    return tuple(first.index(sq) for sq in second)


def merge_orderings(
    shapes: list[list[tuple[int, ...]]], values: list[float]
) -> tuple[list[list[tuple[int, ...]]], list[float]]:
    """The same evaluation with half the lookups: where every square set of a shape is read in exactly two orders
    related by one permutation (a line forwards and backwards, a corner by rows and by columns), one order is kept
    and its table entry becomes the sum of the two entries the position used to read (`values` in `fit`'s layout).
    """
    phases = othello_patterns.PHASES
    sizes = [3 ** len(shape[0]) for shape in shapes]
    block = sum(sizes) + len(othello_patterns.EXTRAS)
    kept_shapes: list[list[tuple[int, ...]]] = []
    merged = list(values)
    offset = 0
    for shape, size in zip(shapes, sizes, strict=True):
        groups: dict[frozenset[int], list[tuple[int, ...]]] = {}
        for squares in shape:
            groups.setdefault(frozenset(squares), []).append(squares)
        perms = {_digit_permutation(*group) for group in groups.values() if len(group) == 2}
        if len(perms) != 1 or any(len(group) != 2 for group in groups.values()):
            kept_shapes.append(shape)
            offset += size
            continue
        (perm,) = perms
        kept_shapes.append([group[0] for group in groups.values()])
        length = len(shape[0])
        for index in range(size):
            digits = [index // 3 ** (length - 1 - k) % 3 for k in range(length)]
            # the second order reads, at its k-th place, the first order's square perm[k]
            other = sum(digits[perm[k]] * 3 ** (length - 1 - k) for k in range(length))
            for phase in range(phases):
                base = phase * block + offset
                merged[base + index] = values[base + index] + values[base + other]
        offset += size
    return kept_shapes, merged


# -- the self-play games ----------------------------------------------------------------------------------------


def _random_move(own: int, opp: int, rng: random.Random) -> int | None:
    """A random legal square for `own`, None if it must pass."""
    moves = kernel.legal_moves(own, opp)
    if not moves:
        return None
    squares = [sq for sq in range(64) if moves >> sq & 1]
    return rng.choice(squares)


def _play(own: int, opp: int, move: int | None) -> tuple[int, int]:
    """The position after `move` (None: a pass), the other side to move."""
    if move is None:
        return opp, own
    flips = kernel.flips(own, opp, move)
    return opp ^ flips, own | flips | 1 << move


def play_labelled_game(rng: random.Random, depth: int) -> list[tuple[int, int, int]]:
    """One self-play game as (mover's discs, other side's, label from the mover's view), per the module's recipe."""
    own, opp = 0x0000000810000000, 0x0000001008000000  # black to move: d5 e4 black, d4 e5 white
    positions: list[tuple[int, int, int]] = []
    movers: list[int] = []  # 0 / 1: which player moved in each recorded position
    exact: list[int | None] = []
    player = 0
    random_plies = rng.randint(*RANDOM_PLIES)
    ply = 0
    while kernel.legal_moves(own, opp) or kernel.legal_moves(opp, own):
        moves = kernel.legal_moves(own, opp)
        if not moves:
            own, opp, player = opp, own, 1 - player
            continue
        empties = 64 - (own | opp).bit_count()
        label: int | None = None
        if ply < random_plies:
            move: int | None = _random_move(own, opp, rng)
        elif empties <= SOLVE_EMPTIES:
            solved = kernel.solve(own, opp, -LIMIT, LIMIT, -1.0, True, False)
            assert solved is not None  # no deadline
            move, label, _ = solved
        else:
            move = kernel.search(own, opp, depth, -1.0)[0]
        positions.append((own, opp, 0))
        movers.append(player)
        exact.append(label)
        own, opp = _play(own, opp, move)
        player = 1 - player
        ply += 1
    final = own.bit_count() - opp.bit_count()  # for `player`
    labelled = []
    for (mover_discs, other, _), mover, value in zip(positions, movers, exact, strict=True):
        labelled.append((mover_discs, other, value if value is not None else (final if mover == player else -final)))
    return labelled


def generate(out: Path, minutes: float, seed: int, depth: int) -> None:
    """Append self-play games' positions to `out` for `minutes` of wall time; print the counts."""
    rng = random.Random(seed)
    stop = time.monotonic() + minutes * 60
    games = positions = 0
    with out.open("ab") as sink:
        while time.monotonic() < stop:
            for own, opp, label in play_labelled_game(rng, depth):
                sink.write(RECORD.pack(own, opp, label))
                positions += 1
            games += 1
            if games % 200 == 0:
                print(f"{games} games, {positions} positions", flush=True)
    print(f"done: {games} games, {positions} positions in {out}")


# -- the fit ----------------------------------------------------------------------------------------------------


def write_hand_scores(data: Path, out: Path) -> None:
    """The hand-weighted evaluation (the kernel's `evaluate`, level 5's) of every position of `data`, as int32."""
    scores = array("i")
    raw = data.read_bytes()
    for own, opp, _ in RECORD.iter_unpack(raw[: len(raw) - len(raw) % RECORD.size]):
        scores.append(kernel.evaluate(own, opp))
    out.write_bytes(scores.tobytes())


def fit(files: list[Path], out: Path, epochs: int, rate: float, decay: float) -> None:
    """Fit the tables on the positions of `files` (in order: the last 5% are held out) with bench/othello_fit.c and
    write them to `out`."""
    shapes = instances()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        binary = tmp / "othello_fit"
        subprocess.run(
            ["cc", "-O2", "-o", str(binary), str(ROOT / "bench" / "othello_fit.c"), "-lm"], check=True, timeout=120
        )
        data = tmp / "positions.bin"
        with data.open("wb") as sink:
            for path in files:
                raw = path.read_bytes()
                sink.write(raw[: len(raw) - len(raw) % RECORD.size])  # a generator stopped mid-write
        spec = tmp / "spec.txt"
        lines = [f"{othello_patterns.PHASES} {len(shapes)}"]
        for shape in shapes:
            lines.append(f"{len(shape)} {len(shape[0])}")
            lines.extend(" ".join(map(str, squares)) for squares in shape)
        spec.write_text("\n".join(lines) + "\n")
        hands = tmp / "hands.bin"
        write_hand_scores(data, hands)
        weights_file = tmp / "weights.txt"
        command = [str(binary), str(spec), str(data), str(weights_file), str(epochs), str(rate), str(decay)]
        command.append(str(hands))
        subprocess.run(command, check=True)
        values = [float(x) for x in weights_file.read_text().split()]
    merged, values = merge_orderings(shapes, values)
    table = othello_patterns.PatternTable.from_fit([[list(s) for s in shape] for shape in merged], values)
    othello_patterns.write_table(table, out)
    print(f"wrote {out} ({out.stat().st_size} bytes)")


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run one step."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    steps = parser.add_subparsers(dest="step", required=True)
    games = steps.add_parser("games", help="self-play positions with their labels")
    games.add_argument("--out", type=Path, required=True, help="data file (appended to)")
    games.add_argument("--minutes", type=float, default=35, help="wall time to spend")
    games.add_argument("--seed", type=int, default=1)
    games.add_argument("--depth", type=int, default=6, help="the kernel search's depth before the solver takes over")
    fitting = steps.add_parser("fit", help="fit the tables and write the data file")
    fitting.add_argument("--data", type=Path, nargs="+", required=True, help="data files, fitted in this order")
    fitting.add_argument("--out", type=Path, default=othello_patterns.TABLE_FILE)
    fitting.add_argument("--epochs", type=int, default=9)
    fitting.add_argument("--rate", type=float, default=0.1, help="NLMS step: the share of an error one position fixes")
    fitting.add_argument("--decay", type=float, default=1e-4, help="L2 shrink of the weights a step touches")
    args = parser.parse_args(argv)
    if args.step == "games":
        generate(args.out, args.minutes, args.seed, args.depth)
    else:
        fit(args.data, args.out, args.epochs, args.rate, args.decay)
    return 0


if __name__ == "__main__":
    sys.exit(main())
