"""Othello's pattern evaluation (issue 38, session 2): fitted tables of disc configurations, Logistello / Edax style.

The data file `othello_patterns.dat` (written by bench/othello_fit.py, which also says how it was fitted) holds
pattern *instances*, each an ordered tuple of squares, grouped by shape (every orientation of one shape shares a
table), and one block of weights per game phase (`phase_of`). An instance reads its squares in order as a base-3
number, the first square the most significant digit (0 empty, 1 the side to move's, 2 the other side's); its table
entry in the position's phase block is a weight. A block holds the shapes' tables one after another, then the
weights of the `EXTRAS`: the mobility difference (the side to move's legal squares minus the other side's), the
frontier difference (the other side's discs next to an empty square minus the side to move's), the parity (+1 with
an odd number of empty squares, -1 with an even one), a constant, and level 5's hand-weighted evaluation
(`othello_ai.evaluate_sides`, in hundreds of points: the fit decides how much of it to keep, per phase).

The value in table units (1/`SCALE` disc) is the sum of those weights times their features; the evaluation is that,
floored, in engine points at `POINTS_PER_DISC` per disc (so well below the search's game-over scores). All in
integers: the sum is kept in hundredths of a unit, so the hand evaluation's weight needs no division first. The
compiled kernel computes the same integers (`_othellokernel.pattern_evaluate`); `evaluate` here is the reference
it is tested against. This module reads only bits and bytes: no asyncio, no I/O beyond the data file.
"""

from __future__ import annotations

import json
import zlib
from array import array
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from gamenight.server.games.othello import legal_mask

TABLE_FILE = Path(__file__).with_name("othello_patterns.dat")
"""The fitted tables shipped with the package (the kernel's level 5 uses them when this file is there)."""
FORMAT = 1
"""The data file's format number (its header says which it is)."""
PHASES = 6
"""Weight blocks by the number of empty squares: 60-51, 50-41, ..., 20-11, 10-0."""
SCALE = 64
"""Table units per disc."""
POINTS_PER_DISC = 16
"""Engine points per disc of predicted final difference."""
EXTRAS = ("mobility", "frontier", "parity", "constant", "hand")
"""The features after the shapes' tables in each block, one weight each (see the module docstring)."""
NOT_FIRST_COL = 0xFEFEFEFEFEFEFEFE
NOT_LAST_COL = 0x7F7F7F7F7F7F7F7F
FULL = (1 << 64) - 1
WEIGHT_LIMIT = 32767
"""The largest weight (weights are stored as signed 16-bit integers)."""


def phase_of(empties: int) -> int:
    """The weight block of a position with `empties` empty squares."""
    return min(PHASES - 1, max(0, (60 - empties) // 10))


@dataclass(frozen=True)
class PatternTable:
    """The fitted evaluation: `shapes[k]` lists shape k's instances (ordered squares); `weights` has `PHASES` blocks."""

    shapes: tuple[tuple[tuple[int, ...], ...], ...]
    weights: array[int]

    @classmethod
    def from_fit(cls, shapes: list[list[list[int]]], values: list[float]) -> PatternTable:
        """The table of fitted `values` (in discs, `PHASES` blocks), rounded to units of 1/`SCALE` disc."""
        table = cls(tuple(tuple(tuple(squares) for squares in shape) for shape in shapes), array("h"))
        if len(values) != PHASES * table.block:
            raise ValueError(f"expected {PHASES * table.block} weights, got {len(values)}")
        table.weights.extend(max(-WEIGHT_LIMIT, min(WEIGHT_LIMIT, round(v * SCALE))) for v in values)
        return table

    @property
    def offsets(self) -> tuple[int, ...]:
        """Where each shape's table starts in a block."""
        starts, at = [], 0
        for shape in self.shapes:
            starts.append(at)
            at += 3 ** len(shape[0])
        return tuple(starts)

    @property
    def block(self) -> int:
        """Weights per phase: every shape's table and the `EXTRAS`."""
        return sum(int(3 ** len(shape[0])) for shape in self.shapes) + len(EXTRAS)

    @cached_property
    def kernel_instances(self) -> tuple[tuple[int, bytes], ...]:
        """(offset of its table in a block, its squares) for every instance: what `_othellokernel.load_patterns`
        takes."""
        return tuple(
            (offset, bytes(squares))
            for offset, shape in zip(self.offsets, self.shapes, strict=True)
            for squares in shape
        )


def read_table(path: Path | None = None) -> PatternTable:
    """The table in `path` (default `TABLE_FILE`); ValueError if it is not a pattern file of this format (OSError if
    unreadable)."""
    path = TABLE_FILE if path is None else path
    try:
        payload = zlib.decompress(path.read_bytes())
        head, _, body = payload.partition(b"\n")
        header = json.loads(head)
    except (zlib.error, ValueError) as error:
        raise ValueError(f"{path} is not an Othello pattern file: {error}") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT or header.get("phases") != PHASES:
        raise ValueError(f"{path} is not an Othello pattern file of format {FORMAT} with {PHASES} phases")
    if header.get("extras") != list(EXTRAS):
        raise ValueError(f"{path} has other features than {', '.join(EXTRAS)}")
    if header.get("scale") != SCALE or header.get("points_per_disc") != POINTS_PER_DISC:
        raise ValueError(f"{path} has another scale than {SCALE} units and {POINTS_PER_DISC} points per disc")
    shapes = header.get("shapes")
    if not isinstance(shapes, list) or not all(_valid_shape(shape) for shape in shapes):
        raise ValueError(f"{path}: its shapes are not lists of instances of 1-10 distinct squares 0-63")
    table = PatternTable(tuple(tuple(tuple(squares) for squares in shape) for shape in shapes), array("h"))
    table.weights.frombytes(body)
    if len(table.weights) != PHASES * table.block:
        raise ValueError(f"{path} holds {len(table.weights)} weights, not {PHASES * table.block}")
    return table


def _valid_shape(shape: object) -> bool:
    """Whether `shape` is a non-empty list of instances of equally many (1-10) distinct squares of the 8x8 board."""
    if not isinstance(shape, list) or not shape or not all(isinstance(squares, list) for squares in shape):
        return False
    size = len(shape[0])
    return all(
        len(squares) == size
        and 1 <= size <= 10
        and len(set(squares)) == size
        and all(isinstance(sq, int) and 0 <= sq < 64 for sq in squares)
        for squares in shape
    )


def write_table(table: PatternTable, path: Path) -> None:
    """Write `table` as a pattern file (a JSON header line, then the weights as little-endian int16, compressed)."""
    header = {
        "format": FORMAT,
        "phases": PHASES,
        "scale": SCALE,
        "points_per_disc": POINTS_PER_DISC,
        "extras": list(EXTRAS),
        "shapes": [[list(squares) for squares in shape] for shape in table.shapes],
    }
    weights = array("h", table.weights)
    if weights.itemsize != 2:
        raise ValueError("weights must be 16-bit")
    path.write_bytes(zlib.compress(json.dumps(header).encode() + b"\n" + weights.tobytes(), 9))


HAND_UNIT = 100
"""The hand evaluation's feature is its score in points / this."""


def evaluate(table: PatternTable, own: int, opp: int, hand: int) -> int:
    """The pattern evaluation of an 8x8 position with `own` to move, in engine points (the kernel's reference);
    `hand` is the position's hand-weighted score (`othello_ai.evaluate_sides` with level 5's weights)."""
    empties = 64 - (own | opp).bit_count()
    base = phase_of(empties) * table.block
    weights = table.weights
    total = 0
    for offset, squares in table.kernel_instances:
        index = 0
        for sq in squares:
            index = index * 3 + (1 if own >> sq & 1 else 2 if opp >> sq & 1 else 0)
        total += weights[base + offset + index]
    extras = base + table.block - len(EXTRAS)
    mobility = legal_mask(own, opp, 8).bit_count() - legal_mask(opp, own, 8).bit_count()
    rim = _neighbours(FULL ^ (own | opp))
    frontier = (opp & rim).bit_count() - (own & rim).bit_count()
    parity = 1 if empties & 1 else -1
    total += weights[extras] * mobility + weights[extras + 1] * frontier + weights[extras + 2] * parity
    total += weights[extras + 3]
    total = total * HAND_UNIT + weights[extras + 4] * hand
    return total * POINTS_PER_DISC // (SCALE * HAND_UNIT)


def _neighbours(board: int) -> int:
    """The squares next to (in any of 8 directions) some square of `board`, on 8x8."""
    east, west = board & NOT_LAST_COL, board & NOT_FIRST_COL
    spread = east << 1 | west >> 1 | board << 8 | board >> 8 | east << 9 | east >> 7 | west << 7 | west >> 9
    return spread & FULL
