"""Tron light cycles: the 2010 Google AI Challenge rules in their symmetric form, its maps and fair arenas.

Every tick each living cycle moves one square, all at once. Targets are judged against the board before
anyone moves: a cycle crashes if its target is a wall, a trail, a start square, a head or off the map, or
if another cycle picks the same square. Crashed cycles stay where they were and their trails stay walls.
The last one riding wins; if the last ones crash on the same tick they share the result.

Squares are (x, y) with x the column and y the row, row 0 at the top. Directions are the contest's
numbers: 1 = north (y - 1), 2 = east, 3 = south, 4 = west; on the wire "N", "E", "S", "W".
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import product
from typing import Any, ClassVar

from gamenight.protocol.vocab import EndReason, EventKind, OptionKind, OptionSpec, ReasonText
from gamenight.server.games.base import (
    BadOptions,
    GameError,
    IllegalMove,
    LiveGame,
    Notice,
    Opening,
    Outcome,
    ViewChanges,
    validate_options,
)

Square = tuple[int, int]
Direction = int

NORTH, EAST, SOUTH, WEST = 1, 2, 3, 4
DIRECTIONS: tuple[Direction, ...] = (NORTH, EAST, SOUTH, WEST)
STEPS: dict[Direction, Square] = {NORTH: (0, -1), EAST: (1, 0), SOUTH: (0, 1), WEST: (-1, 0)}
DIRECTION_NAMES: dict[Direction, str] = {NORTH: "N", EAST: "E", SOUTH: "S", WEST: "W"}
# Letters, words and the contest's digits, all lower case; parse_move folds its input to match.
_DIRECTION_WORDS: dict[str, Direction] = {
    word: direction
    for direction, words in {
        NORTH: ("n", "north", "1"),
        EAST: ("e", "east", "2"),
        SOUTH: ("s", "south", "3"),
        WEST: ("w", "west", "4"),
    }.items()
    for word in words
}

# Cell values of TronState.cells; seat k's trail (its start square included) is k + 1.
EMPTY = 0
WALL = 255
MIN_PLAYERS, MAX_PLAYERS, DEFAULT_PLAYERS = 2, 4, 2
NO_MOVE = "-"  # a seat's entry in a joint move when it sent nothing (dead, or left to its default)
RETIRE = 5  # the move of a rider who resigned: it stops where it is, as if it had crashed
RETIRE_MARK = "x"  # RETIRE's entry in a joint move (never a move a client can send)

MAP_WALL, MAP_EMPTY = "#", " "
_START_CHARS = "".join(str(seat + 1) for seat in range(MAX_PLAYERS))
_HEADER = re.compile(r"\s*(\d+)\s+(\d+)\s*", re.ASCII)
# cells -> board row text in one bytes.translate call: empty " ", wall "#", trail of seat k "k+1".
_VIEW_TABLE = bytes(
    ord(MAP_EMPTY) if value == EMPTY else ord(_START_CHARS[value - 1]) if value <= MAX_PLAYERS else ord(MAP_WALL)
    for value in range(256)
)

ARENA_MIN, ARENA_MAX = 8, 50
_ARENA_ATTEMPTS = 20
_ARENA_WALL_SHARE = (0.06, 0.2)  # share of the inner squares that random walls cover
_ARENA_MIN_OPEN_SHARE = 0.5  # a try that leaves less than this much of the inside open is thrown away

TICK_MS_MIN, TICK_MS_MAX, TICK_MS_DEFAULT = 50, 2000, 150
SEED_MAX = 2**63 - 1
_MAPS_FOLDER = "tron_maps"
RANDOM_MAP = "random"


class MapError(GameError):
    """A map text that breaks the map format; `line` and `column` (1-based) say where, `problem` what."""

    def __init__(self, name: str, line: int, column: int, problem: str) -> None:
        super().__init__(f"{name}: line {line}, column {column}: {problem}")
        self.name = name
        self.line = line
        self.column = column
        self.problem = problem

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.name, self.line, self.column, self.problem))


# -- maps --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TronMap:
    """A playing field: its walls and the start square of each seat, in seat order.

    Start squares are not in `walls`; they become their seat's trail when a game starts.
    """

    name: str
    width: int
    height: int
    walls: frozenset[Square]
    starts: tuple[Square, ...]

    @property
    def players(self) -> int:
        """How many seats the map has start squares for."""
        return len(self.starts)

    def to_text(self) -> str:
        """The map in the contest's file format, ending in a newline."""
        chars = {square: str(seat + 1) for seat, square in enumerate(self.starts)}
        chars.update(dict.fromkeys(self.walls, MAP_WALL))
        rows = ("".join(chars.get((x, y), MAP_EMPTY) for x in range(self.width)) for y in range(self.height))
        return "\n".join([f"{self.width} {self.height}", *rows]) + "\n"


def load_map(text: str, name: str = "map") -> TronMap:
    """Read a map in the contest's file format (see the module notes), or raise MapError saying where."""
    lines = _split_lines(text)
    width, height = _parse_header(lines, name)
    rows = _grid_rows(lines, width, height, name)
    walls, starts = _scan_rows(rows, width, name)
    return TronMap(name, width, height, walls, starts)


def _split_lines(text: str) -> list[str]:
    """The text's lines without their line ends, \r\n accepted; blank lines at the end are dropped."""
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _parse_header(lines: list[str], name: str) -> tuple[int, int]:
    """Width and height from line 1."""
    match = _HEADER.fullmatch(lines[0]) if lines else None
    if match is None:
        raise MapError(name, 1, 1, "bad header: line 1 must be 'width height', two whole numbers")
    width, height = int(match[1]), int(match[2])
    if width < 1 or height < 1:
        raise MapError(name, 1, 1, "bad header: width and height must be at least 1")
    return width, height


def _grid_rows(lines: list[str], width: int, height: int, name: str) -> list[str]:
    """The `height` rows after the header, each checked to be `width` characters long."""
    rows = lines[1:]
    if len(rows) < height:
        raise MapError(name, len(lines) + 1, 1, f"too few rows: expected {height}, found {len(rows)}")
    if len(rows) > height:
        raise MapError(name, height + 2, 1, f"too many rows: expected {height}")
    for y, row in enumerate(rows):
        if len(row) != width:
            column = min(len(row), width) + 1
            problem = f"wrong row length: {len(row)} characters, expected {width}"
            raise MapError(name, y + 2, column, problem)
    return rows


def _scan_rows(rows: list[str], width: int, name: str) -> tuple[frozenset[Square], tuple[Square, ...]]:
    """Walls and start squares of checked rows; every start 1..n present once, n >= 2."""
    walls: set[Square] = set()
    starts: dict[str, Square] = {}
    for y, row in enumerate(rows):
        for x, char in enumerate(row):
            if char == MAP_WALL:
                walls.add((x, y))
            elif char in _START_CHARS:
                _add_start(starts, char, (x, y), name)
            elif char != MAP_EMPTY:
                problem = f"bad character {char!r}: use '#' (wall), ' ' (empty) or '1'-'4' (start)"
                raise MapError(name, y + 2, x + 1, problem)
    last = max([MIN_PLAYERS, *(int(char) for char in starts)])
    for char in _START_CHARS[:last]:
        if char not in starts:
            raise MapError(name, len(rows) + 1, width, f"missing start square {char!r} (the map ends here)")
    return frozenset(walls), tuple(starts[char] for char in _START_CHARS[:last])


def _add_start(starts: dict[str, Square], char: str, square: Square, name: str) -> None:
    """Record a start square, refusing a second one for the same seat."""
    if char in starts:
        first_x, first_y = starts[char]
        problem = f"duplicate start square {char!r} (the first is at line {first_y + 2}, column {first_x + 1})"
        raise MapError(name, square[1] + 2, square[0] + 1, problem)
    starts[char] = square


@cache
def _official_maps() -> dict[str, TronMap]:
    """Every map file in the package's tron_maps folder, read once, by file name without .txt."""
    folder = resources.files("gamenight.server.games") / _MAPS_FOLDER
    files = sorted((entry for entry in folder.iterdir() if entry.name.endswith(".txt")), key=lambda e: e.name)
    maps = {}
    for entry in files:
        name = entry.name.removesuffix(".txt")
        maps[name] = load_map(entry.read_text(encoding="ascii"), name)
    return maps


def official_maps() -> dict[str, TronMap]:
    """The 2010 contest's maps by name ("joust", "u", ...); a fresh dict over maps read once."""
    return dict(_official_maps())


# -- the random arena -----------------------------------------------------------------------------


def generate_arena(width: int, height: int, seed: int, players: int = 2) -> TronMap:
    """A walled arena with random inner walls, fair by symmetry and the same for the same arguments.

    Two players get a map that looks the same after a half turn (180° rotation); three or four get a
    square map that looks the same after a quarter turn, the seats' start squares following the turn
    clockwise. Every empty square is reachable from every start square.
    """
    _check_arena(width, height, players)
    rng = random.Random(seed)
    turn = _half_turn(width, height) if players == 2 else _quarter_turn(width)
    name = f"random-{width}x{height}-{players}p-{seed}"
    starts = _arena_starts(rng, width, height, players, turn)
    border = _border(width, height)
    for _ in range(_ARENA_ATTEMPTS):
        walls = _connected_walls(border | _scatter_walls(rng, width, height, starts, turn), width, height, starts)
        if walls is not None:
            return TronMap(name, width, height, walls, starts)
    return TronMap(name, width, height, frozenset(border), starts)


def _check_arena(width: int, height: int, players: int) -> None:
    """Refuse sizes and player counts the generator does not make."""
    for label, size in (("width", width), ("height", height)):
        if not ARENA_MIN <= size <= ARENA_MAX:
            raise BadOptions(f"option {label!r} must be between {ARENA_MIN} and {ARENA_MAX}")
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise BadOptions(f"option 'players' must be between {MIN_PLAYERS} and {MAX_PLAYERS}")
    if players > 2 and width != height:
        raise BadOptions("options 'width' and 'height' must be equal for 3 or 4 players")


def _half_turn(width: int, height: int) -> Callable[[Square], Square]:
    """The 180° rotation of a width x height map."""
    return lambda square: (width - 1 - square[0], height - 1 - square[1])


def _quarter_turn(size: int) -> Callable[[Square], Square]:
    """The clockwise 90° rotation of a size x size map (row 0 at the top)."""
    return lambda square: (size - 1 - square[1], square[0])


def _orbit(square: Square, turn: Callable[[Square], Square]) -> list[Square]:
    """The square and its images under repeated turns, without repeats."""
    images = [square]
    image = turn(square)
    while image != square:
        images.append(image)
        image = turn(image)
    return images


def _arena_starts(
    rng: random.Random, width: int, height: int, players: int, turn: Callable[[Square], Square]
) -> tuple[Square, ...]:
    """Seat 1's start drawn at random, the others its turned images, far enough apart to breathe."""
    spacing = max(3, (width + height) // (3 if players == 2 else 4))
    candidates = []
    for y in range(1, height - 1):
        for x in range(1, width - 1):
            orbit = _orbit((x, y), turn)
            full = len(orbit) == (2 if players == 2 else 4)
            if full and min(_distance(a, b) for a in orbit for b in orbit if a != b) >= spacing:
                candidates.append(orbit)
    return tuple(rng.choice(candidates)[:players])


def _distance(a: Square, b: Square) -> int:
    """Manhattan distance: the fewest moves from a to b on an open board."""
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def _border(width: int, height: int) -> set[Square]:
    """The closed outer wall."""
    return {(x, y) for y in range(height) for x in range(width) if x in (0, width - 1) or y in (0, height - 1)}


def _scatter_walls(
    rng: random.Random, width: int, height: int, starts: tuple[Square, ...], turn: Callable[[Square], Square]
) -> set[Square]:
    """Random wall segments and blobs inside, each with all its turned images, clear of the start areas."""
    # The 3x3 block round every start position of the orbit (the unused fourth one too) stays open,
    # so the wall set is symmetric and nobody crashes on the first tick.
    reserved = {(x + dx, y + dy) for x, y in _orbit(starts[0], turn) for dx in (-1, 0, 1) for dy in (-1, 0, 1)}
    target = int((width - 2) * (height - 2) * rng.uniform(*_ARENA_WALL_SHARE))
    walls: set[Square] = set()
    for _ in range(4 * target):
        if len(walls) >= target:
            break
        for square in _random_shape(rng, width, height):
            walls.update(image for image in _orbit(square, turn) if image not in reserved)
    return walls


def _random_shape(rng: random.Random, width: int, height: int) -> list[Square]:
    """A straight wall segment or a small block somewhere inside the border."""
    x, y = rng.randint(1, width - 2), rng.randint(1, height - 2)
    if rng.random() < 0.5:
        length = rng.randint(2, max(2, min(width, height) // 3))
        dx, dy = rng.choice(((1, 0), (0, 1)))
        cells = [(x + dx * step, y + dy * step) for step in range(length)]
    else:
        cells = [(x + dx, y + dy) for dx in range(rng.randint(1, 3)) for dy in range(rng.randint(1, 3))]
    return [(cx, cy) for cx, cy in cells if 0 < cx < width - 1 and 0 < cy < height - 1]


def _connected_walls(
    walls: set[Square], width: int, height: int, starts: tuple[Square, ...]
) -> frozenset[Square] | None:
    """The walls with every pocket out of the starts' reach filled in, or None if the try is no good.

    A try fails when the starts are not all in one region or too little room is left. The filled walls
    stay symmetric: the turn maps the starts' common region onto itself.
    """
    region = _region(walls, width, height, starts[0])
    inside = (width - 2) * (height - 2)
    if not all(start in region for start in starts) or len(region) < _ARENA_MIN_OPEN_SHARE * inside:
        return None
    every = {(x, y) for y in range(height) for x in range(width)}
    return frozenset(every - region)


def _region(walls: set[Square], width: int, height: int, start: Square) -> set[Square]:
    """The squares reachable from `start` without crossing a wall."""
    seen = {start}
    frontier = [start]
    while frontier:
        x, y = frontier.pop()
        for dx, dy in STEPS.values():
            square = (x + dx, y + dy)
            if 0 <= square[0] < width and 0 <= square[1] < height and square not in walls and square not in seen:
                seen.add(square)
                frontier.append(square)
    return seen


# -- states and the fast rules ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TronState:
    """One moment of a game. `cells` is row-major (index y * width + x): EMPTY, WALL or seat + 1 (trail).

    `dirs` holds each seat's last direction (0 before the first tick), `last_crashes` the seats that
    crashed on the tick that led here (not those that stopped there by resigning) and `result` the outcome once
    the game is over.
    """

    width: int
    height: int
    cells: bytes
    heads: tuple[Square, ...]
    alive: tuple[bool, ...]
    dirs: tuple[Direction, ...]
    tick: int = 0
    last_crashes: tuple[int, ...] = ()
    result: Outcome | None = None

    def cell(self, x: int, y: int) -> int:
        """The cell value at (x, y); squares off the map are WALL."""
        if 0 <= x < self.width and 0 <= y < self.height:
            return self.cells[y * self.width + x]
        return WALL


def new_state(tron_map: TronMap) -> TronState:
    """The state before the first tick on `tron_map`: start squares are already their seat's trail."""
    cells = bytearray(tron_map.width * tron_map.height)
    for x, y in tron_map.walls:
        cells[y * tron_map.width + x] = WALL
    for seat, (x, y) in enumerate(tron_map.starts):
        cells[y * tron_map.width + x] = seat + 1
    seats = tron_map.players
    return TronState(tron_map.width, tron_map.height, bytes(cells), tron_map.starts, (True,) * seats, (0,) * seats)


def advance(state: TronState, joint: tuple[Direction, ...]) -> TronState:
    """The state one tick later when each living seat i steers joint[i] (dead seats' entries are ignored).

    Trusts its caller, for search: no checks that the game is still on or that the directions are valid.
    """
    width, height, cells = state.width, state.height, state.cells
    riders = _seats(state.alive)
    targets: dict[int, Square] = {}
    crashed = {seat for seat in riders if joint[seat] == RETIRE}
    for seat in riders:
        if seat in crashed:
            continue
        x, y = state.heads[seat]
        dx, dy = STEPS[joint[seat]]
        tx, ty = x + dx, y + dy
        targets[seat] = (tx, ty)
        if not (0 <= tx < width and 0 <= ty < height) or cells[ty * width + tx] != EMPTY:
            crashed.add(seat)
    for seat, target in targets.items():
        if any(other != seat and there == target for other, there in targets.items()):
            crashed.add(seat)
    return _moved(state, joint, riders, targets, crashed)


def _moved(
    state: TronState,
    joint: tuple[Direction, ...],
    riders: list[int],
    targets: dict[int, Square],
    crashed: set[int],
) -> TronState:
    """Build the next state once the crashes of the tick are known."""
    cells = bytearray(state.cells)
    heads = list(state.heads)
    dirs = list(state.dirs)
    for seat in riders:
        if joint[seat] != RETIRE:
            dirs[seat] = joint[seat]
        if seat not in crashed:
            x, y = heads[seat] = targets[seat]
            cells[y * state.width + x] = seat + 1
    alive = tuple(living and seat not in crashed for seat, living in enumerate(state.alive))
    survivors = [seat for seat in riders if seat not in crashed]
    result = None
    if len(survivors) == 1:
        retired = all(joint[seat] == RETIRE for seat in crashed)
        result = Outcome((survivors[0],), EndReason.RESIGN if retired else "crash")
    elif not survivors:
        result = Outcome(tuple(sorted(crashed)), "crash")
    return TronState(
        state.width,
        state.height,
        bytes(cells),
        tuple(heads),
        alive,
        tuple(dirs),
        state.tick + 1,
        tuple(sorted(seat for seat in crashed if joint[seat] != RETIRE)),  # a rider who resigned did not crash
        result,
    )


def perft(state: TronState, depth: int) -> int:
    """The number of joint-move sequences `depth` ticks long from `state`, every rider trying all four ways.

    A finished game counts as one leaf however much depth is left.
    """
    if state.result is not None or depth == 0:
        return 1
    riders = _seats(state.alive)
    if depth == 1:
        return int(len(DIRECTIONS) ** len(riders))
    total = 0
    for choice in product(DIRECTIONS, repeat=len(riders)):
        joint = [0] * len(state.alive)
        for seat, direction in zip(riders, choice, strict=True):
            joint[seat] = direction
        total += perft(advance(state, tuple(joint)), depth - 1)
    return total


def reachable_area(state: TronState, x: int, y: int) -> int:
    """How many empty squares connect to (x, y), itself included; 0 if (x, y) is not empty."""
    if state.cell(x, y) != EMPTY:
        return 0
    return _flood(state, y * state.width + x, bytearray(state.cells))


def _flood(state: TronState, start: int, marks: bytearray) -> int:
    """Count the empty squares connected to cell index `start`, marking them in `marks` (nonzero = taken)."""
    width, size = state.width, len(marks)
    marks[start] = 1
    stack = [start]
    count = 0
    while stack:
        index = stack.pop()
        count += 1
        column = index % width
        for neighbour, inside in (
            (index - width, index >= width),
            (index + width, index + width < size),
            (index - 1, column > 0),
            (index + 1, column < width - 1),
        ):
            if inside and not marks[neighbour]:
                marks[neighbour] = 1
                stack.append(neighbour)
    return count


def _open_areas(state: TronState, seat: int) -> dict[Direction, int]:
    """For each direction whose next square is empty, the size of the open region that square belongs to."""
    x, y = state.heads[seat]
    openings = {}  # direction -> cell index of its empty next square
    for direction in DIRECTIONS:
        dx, dy = STEPS[direction]
        if state.cell(x + dx, y + dy) == EMPTY:
            openings[direction] = (y + dy) * state.width + x + dx
    # Neighbours often open onto the same region: fill each region once and share its size.
    marks = bytearray(state.cells)
    areas: dict[Direction, int] = {}
    for direction, index in openings.items():
        if direction not in areas:
            area = _flood(state, index, marks)
            areas.update((other, area) for other, spot in openings.items() if other not in areas and marks[spot])
    return areas


def most_open_direction(state: TronState, seat: int) -> Direction:
    """The direction whose next square opens onto the most empty space; ties go N, E, S, W."""
    areas = _open_areas(state, seat)
    return max(DIRECTIONS, key=lambda direction: (areas.get(direction, 0), -direction))


def straight_run(state: TronState, seat: int, direction: Direction) -> int:
    """How many empty squares lie straight ahead of the seat's head in `direction` before an obstacle."""
    (x, y), (dx, dy) = state.heads[seat], STEPS[direction]
    run = 0
    while state.cell(x + dx * (run + 1), y + dy * (run + 1)) == EMPTY:
        run += 1
    return run


def first_heading(state: TronState, seat: int) -> Direction:
    """The direction a rider who sends nothing takes on the first tick: toward the most open space; among
    directions opening onto the same space, the longest straight run (a rider spawned near a wall does not ride
    into it when the whole arena is equally open), then N, E, S, W."""
    areas = _open_areas(state, seat)
    return max(
        DIRECTIONS,
        key=lambda direction: (areas.get(direction, 0), straight_run(state, seat, direction), -direction),
    )


# -- the game ---------------------------------------------------------------------------------------


def _option_specs() -> tuple[OptionSpec, ...]:
    """The room options; the map list is the official maps' names."""
    return (
        OptionSpec(
            "map",
            OptionKind.CHOICE,
            RANDOM_MAP,
            "an official 2010 contest map, or a random fair arena",
            choices=(*sorted(_official_maps()), RANDOM_MAP),
            label="Map",
        ),
        OptionSpec(
            "width",
            OptionKind.INT,
            20,
            "width of a random arena",
            minimum=ARENA_MIN,
            maximum=ARENA_MAX,
            label="Arena width",
        ),
        OptionSpec(
            "height",
            OptionKind.INT,
            20,
            "height of a random arena",
            minimum=ARENA_MIN,
            maximum=ARENA_MAX,
            label="Arena height",
        ),
        OptionSpec(
            "seed",
            OptionKind.INT,
            None,
            "random arena seed; left out, one is drawn and stored",
            minimum=0,
            maximum=SEED_MAX,
            label="Arena seed",
        ),
        OptionSpec(
            "players",
            OptionKind.INT,
            DEFAULT_PLAYERS,
            "cycles; official maps are for 2, random arenas for 3-4 are square",
            minimum=MIN_PLAYERS,
            maximum=MAX_PLAYERS,
            label="Riders",
        ),
        OptionSpec(
            "tick_ms",
            OptionKind.INT,
            TICK_MS_DEFAULT,
            f"milliseconds per tick; values outside {TICK_MS_MIN}-{TICK_MS_MAX} are clamped",
            minimum=TICK_MS_MIN,
            maximum=TICK_MS_MAX,
            label="Tick length",
        ),
    )


class Tron(LiveGame[TronState, Direction]):
    """Tron light cycles for 2-4 players on an official map or a random symmetric arena."""

    name: ClassVar[str] = "tron"
    title: ClassVar[str] = "Tron light cycles"
    option_specs: ClassVar[tuple[OptionSpec, ...]] = _option_specs()
    reasons: ClassVar[tuple[ReasonText, ...]] = (
        ReasonText("crash", "the last one riding", "the last riders crashed together"),
    )

    # -- options and set-up -------------------------------------------------------------------
    def validate_options(self, raw: Mapping[str, Any] | None) -> dict[str, Any]:
        """Complete, valid options: a missing seed is drawn now (so a replay is exact), tick_ms is clamped.

        An official map has its own size and no seed: `width` and `height` are the map's, `seed` is None.
        """
        raw = dict(raw or {})
        official = raw.get("map", RANDOM_MAP) != RANDOM_MAP
        if official:  # its size is the map's: what a client sent (or a stored room kept) for them does not apply
            for key in ("width", "height", "seed"):
                raw.pop(key, None)
        elif raw.get("seed") is None:
            raw["seed"] = random.SystemRandom().randrange(2**32)
        tick_ms = raw.get("tick_ms")
        if isinstance(tick_ms, int) and not isinstance(tick_ms, bool):
            raw["tick_ms"] = min(max(tick_ms, TICK_MS_MIN), TICK_MS_MAX)
        options = validate_options(self.option_specs, raw)
        self._check_map_fits(options)
        if official:
            chosen = _official_maps()[options["map"]]
            options.update(width=chosen.width, height=chosen.height, seed=None)
        return options

    @staticmethod
    def _check_map_fits(options: Mapping[str, Any]) -> None:
        """Refuse a player count the chosen map cannot seat."""
        if options["map"] == RANDOM_MAP:
            _check_arena(options["width"], options["height"], options["players"])
            return
        seats = _official_maps()[options["map"]].players
        if options["players"] != seats:
            raise BadOptions(f"option 'players' must be {seats} on map {options['map']!r}")

    def seat_count(self, options: Mapping[str, Any]) -> int:
        """One seat per player."""
        return int(options.get("players", DEFAULT_PLAYERS))

    def map_for(self, options: Mapping[str, Any]) -> TronMap:
        """The map the options ask for (validated first; validated options come back unchanged)."""
        options = self.validate_options(options)
        if options["map"] == RANDOM_MAP:
            return generate_arena(options["width"], options["height"], options["seed"], options["players"])
        return _official_maps()[options["map"]]

    def initial_state(self, options: Mapping[str, Any]) -> TronState:
        """The chosen map with every cycle on its start square."""
        return new_state(self.map_for(options))

    # -- the questions a state answers ----------------------------------------------------------
    def to_move(self, state: TronState) -> frozenset[int]:
        """Every living seat, while the game is on."""
        if state.result is not None:
            return frozenset()
        return frozenset(_seats(state.alive))

    def legal_moves(self, state: TronState, seat: int) -> list[Direction]:
        """All four directions for a living seat (riding into a wall is allowed, as in the contest)."""
        return list(DIRECTIONS) if seat in self.to_move(state) else []

    def apply(self, state: TronState, moves: Mapping[int, Direction]) -> TronState:
        """One tick: each living seat moves; a living seat left out of `moves` makes its default move."""
        if state.result is not None:
            raise IllegalMove("the game is over")
        for seat, move in moves.items():
            self._check_move(state, seat, move)
        joint = tuple(
            (moves[seat] if seat in moves else self.default_move(state, seat)) if living else 0
            for seat, living in enumerate(state.alive)
        )
        return advance(state, joint)

    @staticmethod
    def _check_move(state: TronState, seat: Any, move: Any) -> None:
        """Refuse a move for a seat that is not riding, or a move that is not a direction (or, with three or more
        seats, RETIRE)."""
        if not (_is_seat(seat, len(state.alive)) and state.alive[seat]):
            raise IllegalMove(f"seat {_short(seat)} is not riding")
        retiring = len(state.alive) > 2 and move == RETIRE and not isinstance(move, bool)
        if not _is_direction(move) and not retiring:
            raise IllegalMove(f"{_short(move)} is not a direction")

    def retire_move(self, state: TronState, seat: int) -> Direction | None:
        """RETIRE for a riding seat when three or more started: the rider stops and the others ride on."""
        if len(state.alive) > 2 and state.result is None and _is_seat(seat, len(state.alive)) and state.alive[seat]:
            return RETIRE
        return None

    def outcome(self, state: TronState) -> Outcome | None:
        """Who won once at most one cycle is left riding."""
        return state.result

    def notices(self, before: TronState, after: TronState) -> list[Notice]:
        """One "crash" notice per seat that crashed on the tick, at the square where its cycle stopped."""
        if after.tick == before.tick:
            return []
        return [Notice(EventKind.CRASH, {"seat": seat, "at": list(after.heads[seat])}) for seat in after.last_crashes]

    def default_move(self, state: TronState, seat: int) -> Direction:
        """Keep going straight; on the first tick take `first_heading` (what the view shows before it)."""
        if seat not in self.to_move(state):
            raise IllegalMove(f"seat {_short(seat)} is not riding")
        return state.dirs[seat] or first_heading(state, seat)

    # -- the wire ------------------------------------------------------------------------------
    def parse_move(self, state: TronState, text: str | int) -> Direction:
        """A direction from "N"/"E"/"S"/"W" (any case), "north" etc., or the contest's 1-4."""
        if isinstance(text, str) and text.strip().lower() in _DIRECTION_WORDS:
            return _DIRECTION_WORDS[text.strip().lower()]
        if isinstance(text, int) and _is_direction(text):
            return text
        raise IllegalMove(f"{_short(text)} is not a direction: send N, E, S or W")

    def format_move(self, state: TronState, move: Direction) -> str:
        """The direction's wire letter: N, E, S or W."""
        if not _is_direction(move):
            raise IllegalMove(f"{_short(move)} is not a direction")
        return DIRECTION_NAMES[move]

    def format_joint(self, moves: Mapping[int, Direction], seats: int | None = None) -> str:
        """A tick's moves as one string in seat order, e.g. "E W" or "N - S", "-" where a seat sent none,
        "x" where a rider resigned.

        `seats` (the seat count) adds the "-" of trailing seats; without it the string stops at the last
        seat that moved, which parse_joint reads the same way.
        """
        count = seats if seats is not None else max(moves, default=-1) + 1
        return " ".join(_joint_entry(moves[seat]) if seat in moves else NO_MOVE for seat in range(count))

    def parse_joint(self, state: TronState, text: str) -> dict[int, Direction]:
        """The moves of a format_joint string ("x" is RETIRE); "-" or a missing entry leaves that seat out.

        A living seat left out makes its default move in `apply`, so a replay is exact either way.
        """
        entries = text.split()
        if len(entries) > len(state.alive):
            raise IllegalMove(f"{len(entries)} moves for {len(state.alive)} seats")
        moves = {}
        for seat, entry in enumerate(entries):
            if entry == NO_MOVE:
                continue
            move = RETIRE if entry == RETIRE_MARK else self.parse_move(state, entry)
            self._check_move(state, seat, move)
            moves[seat] = move
        return moves

    def view(self, state: TronState) -> dict[str, Any]:
        """The whole board as text rows plus the heads, who is riding, their directions (before the first tick:
        the headings they will take unless steered) and the tick."""
        width = state.width
        board = [
            state.cells[row * width : (row + 1) * width].translate(_VIEW_TABLE).decode("ascii")
            for row in range(state.height)
        ]
        return {
            "width": width,
            "height": state.height,
            "board": board,
            "heads": [list(head) for head in state.heads],
            "alive": list(state.alive),
            "dirs": self._shown_dirs(state),
            "tick": state.tick,
            "scores": None,
        }

    def _shown_dirs(self, state: TronState) -> list[int]:
        """Each rider's direction; before the first tick, the heading a rider who sends nothing will take, so
        the countdown shows where each cycle is about to go."""
        riding = self.to_move(state)
        return [
            direction or (first_heading(state, seat) if seat in riding else 0)
            for seat, direction in enumerate(state.dirs)
        ]

    def delta(self, before: TronState, after: TronState) -> dict[str, Any]:
        """The tick's new head squares (to add to the trails) and who is still riding."""
        return {"tick": after.tick, "heads": [list(head) for head in after.heads], "alive": list(after.alive)}

    def changes(self, before: TronState, after: TronState) -> ViewChanges:
        """The riders' new head squares (each becomes its seat's trail), and the heads, riders, directions and tick."""
        width, cells = after.width, []
        for x, y in after.heads:
            index = y * width + x
            if 0 <= x < width and 0 <= y < after.height and before.cells[index] != after.cells[index]:
                cells.append([y, x, chr(_VIEW_TABLE[after.cells[index]])])
        keys = {
            "tick": after.tick,
            "heads": [list(head) for head in after.heads],
            "alive": list(after.alive),
            "dirs": list(after.dirs),
        }
        return ViewChanges(cells, keys)

    def transcript(self, moves: list[str]) -> str:
        """The ticks' joint moves separated by " / ", e.g. "E W / E S / N -"."""
        return " / ".join(moves)


def _joint_entry(move: Direction) -> str:
    """One seat's entry in a joint move: its direction letter, or RETIRE_MARK for a rider who resigned."""
    return RETIRE_MARK if move == RETIRE else DIRECTION_NAMES[move]


def _is_direction(move: Any) -> bool:
    """True for the ints 1-4 (not for True, which equals 1)."""
    return isinstance(move, int) and not isinstance(move, bool) and move in STEPS


def _is_seat(seat: Any, seats: int) -> bool:
    """True for an int seat number 0..seats-1 (not for a bool)."""
    return isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < seats


def _short(value: Any) -> str:
    """A value for an error message, cut short so a hostile client cannot inflate it."""
    text = repr(value)
    return text if len(text) <= 24 else text[:21] + "..."


def _seats(values: Iterable[bool]) -> list[int]:
    """The indices of the true values."""
    return [index for index, value in enumerate(values) if value]


# -- matches between AIs ------------------------------------------------------------------------------

MATCH_DRAWN_MAPS = frozenset({"test-board", "test-board2"})
"""Official two-player maps left out of matches by default: 1-4 squares per rider, every game a draw."""


def match_maps(names: str = "") -> tuple[str, ...]:
    """The maps an AI match cycles through: the comma-separated `names`, `all` two-player maps, or by default
    the official two-player maps in name order without `MATCH_DRAWN_MAPS`."""
    two_player = sorted(name for name, tron_map in official_maps().items() if tron_map.players == 2)
    if names == "all":
        return tuple(two_player)
    if names:
        chosen = tuple(name.strip() for name in names.split(",") if name.strip())
        unknown = [name for name in chosen if name not in two_player]
        if unknown:
            raise ValueError(f"not official two-player maps: {', '.join(unknown)}")
        return chosen
    return tuple(name for name in two_player if name not in MATCH_DRAWN_MAPS)


def match_opening(pair: int, rng: random.Random, maps: tuple[str, ...] = ()) -> Opening:
    """Pair `pair` of an AI match: each map in turn (played from both start squares); `maps` default
    `match_maps()`."""
    maps = maps or match_maps()
    name = maps[pair % len(maps)]
    return Opening({"map": name, "players": 2}, 0, f"map {name}")
