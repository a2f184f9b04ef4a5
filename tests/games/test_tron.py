"""Tests of the Tron rules engine: official maps, the map format, collisions, defaults, options, arenas."""

from __future__ import annotations

import hashlib
import pickle
import random
from collections import deque
from dataclasses import replace
from importlib import resources
from itertools import pairwise
from pathlib import Path

import pytest

from gamenight.server.games.base import BadOptions, IllegalMove, Notice
from gamenight.server.games.tron import (
    EAST,
    NORTH,
    RETIRE,
    SOUTH,
    WEST,
    MapError,
    Tron,
    TronMap,
    TronState,
    generate_arena,
    load_map,
    new_state,
    official_maps,
    perft,
)

DATA = Path(__file__).resolve().parent.parent / "data" / "tron"
GAME = Tron()


def _read_facts() -> dict[str, dict]:
    """The official maps' facts from tests/data/tron/official_maps.txt, by map name."""
    facts = {}
    for line in (DATA / "official_maps.txt").read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        name, width, height, x1, y1, x2, y2, free, digest = line.split()
        facts[name] = {
            "size": (int(width), int(height)),
            "starts": ((int(x1), int(y1)), (int(x2), int(y2))),
            "free": int(free),
            "sha256": digest,
        }
    return facts


FACTS = _read_facts()


def grid(*rows: str) -> TronState:
    """A fresh state on a small map drawn as rows (same characters as a map file)."""
    text = f"{len(rows[0])} {len(rows)}\n" + "\n".join(rows) + "\n"
    return new_state(load_map(text, "test"))


def play(state: TronState, *ticks: dict[int, int]) -> TronState:
    """The state after applying each tick's moves in turn."""
    for moves in ticks:
        state = GAME.apply(state, moves)
    return state


def _random_moves(state: TronState, rng: random.Random) -> dict[int, int]:
    """A random direction for most living seats; the others send nothing and get their default."""
    return {seat: rng.choice(GAME.legal_moves(state, seat)) for seat in GAME.to_move(state) if rng.random() < 0.8}


def map_file(name: str) -> bytes:
    """The packaged official map file's bytes."""
    return (resources.files("gamenight.server.games") / "tron_maps" / f"{name}.txt").read_bytes()


# -- official maps ------------------------------------------------------------------------------------


def test_all_official_maps_are_there():
    """Every official map of the 2010 contest can be chosen, and nothing else is passed off as one."""
    assert set(official_maps()) == set(FACTS)
    assert len(FACTS) == 25


@pytest.mark.parametrize("name", sorted(FACTS))
def test_official_map_facts(name):
    """Each official map loads with its published size, start squares and number of free squares."""
    tron_map = official_maps()[name]
    fact = FACTS[name]
    assert (tron_map.width, tron_map.height) == fact["size"]
    assert tron_map.starts == fact["starts"]
    squares = tron_map.width * tron_map.height
    assert squares - len(tron_map.walls) - len(tron_map.starts) == fact["free"]


@pytest.mark.parametrize("name", sorted(FACTS))
def test_official_map_files_are_the_originals(name):
    """The packaged map files are byte-for-byte the contest's files, and a map writes back to the same text."""
    data = map_file(name)
    assert hashlib.sha256(data).hexdigest() == FACTS[name]["sha256"]
    assert official_maps()[name].to_text() == data.decode("ascii")


def test_joust_facts():
    """joust is 25x25 with player 1 at (1,1) and player 2 at (1,23), split by a wall with a 3-square gap."""
    joust = official_maps()["joust"]
    assert (joust.width, joust.height, joust.starts) == (25, 25, ((1, 1), (1, 23)))
    assert [x for x in range(25) if (x, 12) not in joust.walls] == [11, 12, 13]


def test_official_maps_returns_a_fresh_dict():
    """A caller that edits the returned dict does not change the maps others see."""
    maps = official_maps()
    maps.pop("joust")
    assert "joust" in official_maps()


def test_map_text_with_crlf_and_without_final_newline():
    """Map files saved with Windows line ends or without a final newline load the same."""
    text = map_file("u").decode("ascii")
    expected = load_map(text, "u")
    assert load_map(text.replace("\n", "\r\n"), "u") == expected
    assert load_map(text.rstrip("\n"), "u") == expected


def test_map_with_four_starts_loads():
    """A map may seat up to four players; their starts come in seat order."""
    tron_map = load_map("5 3\n#####\n#1 4#\n#3 2#\n", "four")
    assert tron_map.starts == ((1, 1), (3, 2), (1, 2), (3, 1))


@pytest.mark.parametrize(
    ("text", "line", "column", "words"),
    [
        ("", 1, 1, "bad header"),
        ("25\n#1#\n", 1, 1, "bad header"),
        ("a b\n#1#\n", 1, 1, "bad header"),
        ("3 0\n", 1, 1, "bad header"),
        ("4 2\n#12#\n#  \n", 3, 4, "wrong row length"),
        ("4 2\n#12#\n#    #\n", 3, 5, "wrong row length"),
        ("4 2\n#12#\n#x #\n", 3, 2, "bad character 'x'"),
        ("4 2\n#12#\n#\t #\n", 3, 2, "bad character"),
        ("4 2\n#1 #\n#  #\n", 3, 4, "missing start square '2'"),
        ("4 2\n#1 #\n# 3#\n", 3, 4, "missing start square '2'"),
        ("4 2\n#12#\n#1 #\n", 3, 2, "duplicate start square '1'"),
        ("4 3\n#12#\n#  #\n", 4, 1, "too few rows"),
        ("4 2\n#12#\n#  #\n####\n", 4, 1, "too many rows"),
    ],
)
def test_malformed_maps_say_where(text, line, column, words):
    """A broken map file is refused with the line, column and nature of the problem."""
    with pytest.raises(MapError) as caught:
        load_map(text, "bad")
    error = caught.value
    assert (error.line, error.column) == (line, column)
    assert f"line {line}, column {column}" in str(error)
    assert words in str(error)
    assert str(error).startswith("bad:")


def test_map_error_survives_pickling():
    """A MapError raised in a worker process reaches the parent intact."""
    error = MapError("m", 3, 4, "bad character 'x'")
    copy = pickle.loads(pickle.dumps(error))
    assert (str(copy), copy.line, copy.column) == (str(error), 3, 4)


# -- collisions ---------------------------------------------------------------------------------------


def test_crash_into_wall_loses():
    """Riding into a wall crashes that cycle and the other wins at once."""
    state = grid("#####", "#1 2#", "#   #", "#####")
    after = GAME.apply(state, {0: NORTH, 1: SOUTH})
    assert after.alive == (False, True)
    assert GAME.outcome(after).winners == (1,)
    assert GAME.outcome(after).reason == "crash"
    assert GAME.to_move(after) == frozenset()
    assert after.heads == ((1, 1), (3, 2))


def test_crash_into_trail():
    """A cycle that turns into a trail crashes; the trail of the other cycle counts too."""
    start = grid("######", "#1   #", "#    #", "#   2#", "######")
    # Seat 0 rides (1,1) -> (1,2) -> (2,2), then west into its own trail; seat 1 goes on south.
    state = play(start, {0: SOUTH, 1: NORTH}, {0: EAST, 1: WEST})
    own = GAME.apply(state, {0: WEST, 1: SOUTH})
    assert own.alive == (False, True)
    # Seat 0 rides (2,1) -> (2,2) -> (2,3) -> (3,3); seat 1 (4,2) -> (4,1) -> (3,1), then west into (2,1).
    state = play(start, {0: EAST, 1: NORTH}, {0: SOUTH, 1: NORTH}, {0: SOUTH, 1: WEST})
    other = GAME.apply(state, {0: EAST, 1: WEST})
    assert other.alive == (True, False)
    assert GAME.outcome(other).winners == (0,)


def test_riding_off_the_open_border_of_u_crashes():
    """Squares outside the map are walls: leaving u through its open right side is a crash."""
    u = official_maps()["u"]
    assert (14, 7) not in u.walls
    state = new_state(u)
    cells = bytearray(state.cells)
    cells[7 * u.width + 14] = 1
    state = replace(state, cells=bytes(cells), heads=((14, 7), state.heads[1]))
    after = GAME.apply(state, {0: EAST, 1: WEST})
    assert after.alive == (False, True)
    assert GAME.notices(state, after) == [Notice("crash", {"seat": 0, "at": [14, 7]})]


def test_riding_off_a_map_edge_from_a_start_square():
    """A start square on the map's edge: riding outward leaves the map and crashes."""
    state = grid("1  2", "####")
    after = GAME.apply(state, {0: WEST, 1: NORTH})
    assert after.alive == (False, False)
    assert GAME.outcome(after).winners == (0, 1)


def test_same_square_is_a_draw():
    """Two cycles entering the same square both crash and share the result; the square stays empty."""
    state = grid("#####", "#1 2#", "#####")
    after = GAME.apply(state, {0: EAST, 1: WEST})
    assert after.alive == (False, False)
    outcome = GAME.outcome(after)
    assert outcome.winners == (0, 1)
    assert outcome.is_draw
    assert after.heads == state.heads
    assert GAME.view(after)["board"][1] == "#1 2#"


def test_head_on_swap_is_a_draw():
    """Two cycles swapping squares head-on both crash (a draw), after the first tick as well as on it."""
    first = GAME.apply(grid("####", "#12#", "####"), {0: EAST, 1: WEST})
    assert GAME.outcome(first).winners == (0, 1)
    state = GAME.apply(grid("######", "#1  2#", "######"), {0: EAST, 1: WEST})
    assert state.heads == ((2, 1), (3, 1))
    after = GAME.apply(state, {0: EAST, 1: WEST})
    assert after.alive == (False, False)
    assert GAME.outcome(after).is_draw


def test_following_into_a_square_being_left_crashes():
    """A cycle that rides into the square another cycle is leaving crashes: heads block before anyone moves."""
    state = grid("#####", "#12 #", "#   #", "#####")
    after = GAME.apply(state, {0: EAST, 1: SOUTH})
    assert after.alive == (False, True)
    assert after.heads == ((1, 1), (2, 2))


def test_start_squares_stay_walls():
    """A start square stays solid after its cycle leaves: its own rider and the others crash into it."""
    state = grid("#####", "#1 2#", "#   #", "#####")
    back = play(state, {0: EAST, 1: SOUTH}, {0: WEST, 1: WEST})
    assert back.alive == (False, True)
    assert GAME.view(back)["board"][1] == "#112#"
    # Seat 0 rides (1,1) -> (1,2) -> (2,2), seat 1 (3,2) -> (3,1) -> (2,1); then each rides onto the
    # other's start square, (3,2) and (1,1).
    state = play(grid("######", "#1   #", "#  2 #", "######"), {0: SOUTH, 1: NORTH}, {0: EAST, 1: WEST})
    assert state.alive == (True, True)
    crossed = GAME.apply(state, {0: EAST, 1: WEST})
    assert crossed.alive == (False, False)


def test_three_players_continue_after_one_crash():
    """With three players one crash does not end the game; the dead seat no longer moves or is asked to."""
    state = grid("#######", "#1   2#", "#     #", "#  3  #", "#######")
    after = GAME.apply(state, {0: NORTH, 1: SOUTH, 2: NORTH})
    assert after.alive == (False, True, True)
    assert GAME.outcome(after) is None
    assert GAME.to_move(after) == frozenset({1, 2})
    assert GAME.legal_moves(after, 0) == []
    with pytest.raises(IllegalMove):
        GAME.apply(after, {0: EAST, 1: SOUTH, 2: NORTH})
    last = GAME.apply(after, {1: EAST, 2: SOUTH})
    assert GAME.outcome(last).winners == (1, 2)


def test_last_two_of_three_crashing_together_share():
    """When the last riders crash on the same tick they share the result; an earlier crash does not."""
    state = grid("#######", "#1    #", "#2   3#", "#######")
    # Seat 0 crashes at once; seat 1 rides (1,2) -> (2,2) -> (3,2), seat 2 (5,2) -> (5,1) -> (4,1),
    # then both ride into (4,2).
    state = play(state, {0: NORTH, 1: EAST, 2: NORTH}, {1: EAST, 2: WEST})
    assert state.alive == (False, True, True)
    assert GAME.outcome(state) is None
    after = GAME.apply(state, {1: EAST, 2: SOUTH})
    assert GAME.outcome(after).winners == (1, 2)


def test_crash_notices_name_seat_and_square():
    """Every crash of a tick is announced once, with the seat and the square where its cycle stopped."""
    state = grid("#####", "#1 2#", "#####")
    after = GAME.apply(state, {0: EAST, 1: WEST})
    assert GAME.notices(state, after) == [
        Notice("crash", {"seat": 0, "at": [1, 1]}),
        Notice("crash", {"seat": 1, "at": [3, 1]}),
    ]
    quiet = GAME.apply(grid("######", "#1  2#", "######"), {0: EAST, 1: WEST})
    assert GAME.notices(grid("######", "#1  2#", "######"), quiet) == []


# -- moves: legality, defaults, wire forms --------------------------------------------------------


def test_every_direction_is_legal_for_the_living():
    """Each living rider may send any of the four directions, even into a wall."""
    state = new_state(official_maps()["joust"])
    assert GAME.to_move(state) == frozenset({0, 1})
    assert sorted(GAME.legal_moves(state, 0)) == [NORTH, EAST, SOUTH, WEST]
    assert GAME.simultaneous


@pytest.mark.parametrize("move", [0, 5, "N", None, True, 2.0])
def test_non_directions_are_illegal(move):
    """apply refuses anything that is not a direction 1-4."""
    with pytest.raises(IllegalMove):
        GAME.apply(new_state(official_maps()["joust"]), {0: move, 1: EAST})


@pytest.mark.parametrize("seat", [2, -1, "0", True])
def test_moves_for_missing_seats_are_illegal(seat):
    """apply refuses a move for a seat that is not in the game."""
    with pytest.raises(IllegalMove):
        GAME.apply(new_state(official_maps()["joust"]), {seat: EAST})


def test_no_moves_after_the_end():
    """A finished game takes no more ticks."""
    over = GAME.apply(grid("#####", "#1 2#", "#####"), {0: EAST, 1: WEST})
    with pytest.raises(IllegalMove):
        GAME.apply(over, {})


def test_default_move_keeps_going_straight():
    """A rider who sends nothing keeps its last direction."""
    state = GAME.apply(new_state(official_maps()["empty-room"]), {0: SOUTH, 1: WEST})
    assert GAME.default_move(state, 0) == SOUTH
    after = GAME.apply(state, {})
    assert after.heads == ((1, 3), (11, 13))
    assert after.dirs == (SOUTH, WEST)


def test_first_tick_default_faces_open_space():
    """On the first tick a silent rider heads toward the most open space, then the longest straight run, then
    N, E, S, W."""
    corridor = grid("##########", "#    1 #2#", "##########")
    assert GAME.default_move(corridor, 0) == WEST  # 4 squares west, 1 east
    split = grid("#########", "#  1  #2#", "#########")
    assert GAME.default_move(split, 0) == EAST  # 2 squares each way: east comes before west
    room = new_state(official_maps()["empty-room"])
    assert GAME.default_move(room, 0) == EAST  # north is wall; east and south: 12 squares each, onto one room
    assert GAME.default_move(room, 1) == NORTH


def test_a_silent_rider_spawned_below_a_wall_does_not_ride_into_it():
    """In an open arena a rider 4 squares below the top wall heads for the long side, and survives the first
    ticks without steering (it used to face north on every arena and crash 0.6 s after the countdown)."""
    rows = ["#" * 22, *["#" + " " * 20 + "#"] * 20, "#" * 22]
    rows[5] = "#" + " " * 5 + "1" + " " * 8 + "2" + " " * 5 + "#"
    state = grid(*rows)
    assert GAME.view(state)["dirs"] == [SOUTH, SOUTH]  # 4 squares north, 16 south: the same room both ways
    for _ in range(8):
        state = GAME.apply(state, {})
    assert state.result is None and state.alive == (True, True)


def test_missing_living_seat_uses_the_default():
    """A living seat left out of apply's moves makes its default move."""
    room = new_state(official_maps()["empty-room"])
    assert GAME.apply(room, {0: SOUTH}) == GAME.apply(room, {0: SOUTH, 1: NORTH})


@pytest.mark.parametrize(
    ("text", "move"),
    [("N", NORTH), ("e", EAST), (" S ", SOUTH), ("West", WEST), ("north", NORTH), ("2", EAST), (3, SOUTH)],
)
def test_parse_move_accepts_letters_words_and_numbers(text, move):
    """Clients may send a direction as a letter in any case, a word or the contest's number."""
    assert GAME.parse_move(None, text) == move


@pytest.mark.parametrize("text", ["", "X", "up", "5", 0, True, None, ["N"]])
def test_parse_move_refuses_other_input(text):
    """Anything else is an illegal move, not a crash of the server."""
    with pytest.raises(IllegalMove):
        GAME.parse_move(None, text)


def test_format_move_round_trips():
    """Each direction is written as its letter and reads back to itself."""
    assert [GAME.format_move(None, d) for d in (NORTH, EAST, SOUTH, WEST)] == ["N", "E", "S", "W"]
    for direction in (NORTH, EAST, SOUTH, WEST):
        assert GAME.parse_move(None, GAME.format_move(None, direction)) == direction


def test_joint_moves_round_trip_with_dead_seats():
    """A tick's moves are written in seat order with "-" for a seat that sent none, and read back."""
    state = grid("#######", "#1   2#", "#     #", "#  3  #", "#######")
    state = GAME.apply(state, {0: NORTH, 1: SOUTH, 2: NORTH})
    assert GAME.format_joint({1: WEST, 2: EAST}, seats=3) == "- W E"
    assert GAME.format_joint({0: EAST, 1: WEST}) == "E W"
    assert GAME.parse_joint(state, "- W E") == {1: WEST, 2: EAST}
    assert GAME.parse_joint(state, "- - e") == {2: EAST}
    with pytest.raises(IllegalMove):
        GAME.parse_joint(state, "N W E")
    with pytest.raises(IllegalMove):
        GAME.parse_joint(state, "- W E N")


def test_game_log_replays_exactly():
    """A game recorded as joint-move strings replays to the very same final state."""
    rng = random.Random(5)
    options = GAME.validate_options({"map": "random", "seed": 77, "players": 3, "width": 15, "height": 15})
    state = GAME.initial_state(options)
    log = []
    while GAME.outcome(state) is None:
        moves = _random_moves(state, rng)
        log.append(GAME.format_joint(moves, seats=3))
        state = GAME.apply(state, moves)
    replay = GAME.initial_state(GAME.validate_options(options))
    for text in log:
        replay = GAME.apply(replay, GAME.parse_joint(replay, text))
    assert replay == state
    assert GAME.transcript(log[:2]) == f"{log[0]} / {log[1]}"


# -- views ------------------------------------------------------------------------------------------


def test_view_of_a_fresh_map_is_the_map():
    """The first view shows the map as drawn in its file, the cycles on their start squares facing the way they
    will ride if not steered (seat 0 has a run of 1 square north and 3 east, both onto the same space)."""
    rows = map_file("apocalyptic").decode("ascii").splitlines()[1:]
    view = GAME.view(new_state(official_maps()["apocalyptic"]))
    assert view["board"] == rows
    assert (view["width"], view["height"], view["tick"], view["scores"]) == (25, 25, 0, None)
    assert view["heads"] == [[20, 2], [4, 22]]
    assert view["alive"] == [True, True]
    assert view["dirs"] == [EAST, WEST]


def test_view_shows_trails_and_delta_shows_new_heads():
    """After a tick the trails carry their seat's digit and the delta gives the heads' new squares."""
    state = grid("######", "#1   #", "#   2#", "######")
    after = GAME.apply(state, {0: EAST, 1: NORTH})
    assert GAME.view(after)["board"] == ["######", "#11 2#", "#   2#", "######"]
    assert GAME.delta(state, after) == {"tick": 1, "heads": [[2, 1], [4, 1]], "alive": [True, True]}


# -- options ------------------------------------------------------------------------------------------


def test_default_options_are_complete_and_replayable():
    """A room made without options gets a random arena with a stored seed, so the game can be rebuilt."""
    options = GAME.validate_options({})
    assert options["map"] == "random"
    assert (options["width"], options["height"], options["players"], options["tick_ms"]) == (20, 20, 2, 150)
    assert isinstance(options["seed"], int)
    assert options["seed"] >= 0
    again = GAME.validate_options(options)
    assert again == options
    assert GAME.initial_state(again) == GAME.initial_state(options)


def test_given_seed_is_kept():
    """A seed the host chose is kept, so the same seed gives the same arena."""
    options = GAME.validate_options({"seed": 12345})
    assert options["seed"] == 12345
    assert GAME.map_for(options) == generate_arena(20, 20, 12345)


@pytest.mark.parametrize(("given", "stored"), [(10, 50), (50, 50), (400, 400), (2000, 2000), (99999, 2000)])
def test_tick_ms_is_clamped(given, stored):
    """A tick length out of range is brought into 50-2000 ms rather than refused."""
    assert GAME.validate_options({"tick_ms": given})["tick_ms"] == stored


@pytest.mark.parametrize(
    "raw",
    [
        {"tick_ms": "fast"},
        {"map": "nowhere"},
        {"map": "joust", "players": 3},
        {"players": 4, "width": 20, "height": 16},
        {"players": 5},
        {"width": 7},
        {"height": 51},
        {"seed": -1},
        {"colour": "red"},
    ],
)
def test_bad_options_are_refused(raw):
    """Options the game cannot honour are refused when the room is made, not when the game starts."""
    with pytest.raises(BadOptions):
        GAME.validate_options(raw)


def test_map_choices_list_every_official_map():
    """The room form offers every official map and the random arena, random by default."""
    spec = next(spec for spec in GAME.option_specs if spec.name == "map")
    assert set(spec.choices) == {*FACTS, "random"}
    assert spec.default == "random"
    assert GAME.describe().name == "tron"


def test_four_player_room():
    """A four-player room has four seats named player 1-4 on a square arena with four start squares."""
    options = GAME.validate_options({"players": 4, "width": 16, "height": 16, "seed": 3})
    assert GAME.seat_count(options) == 4
    assert GAME.seat_names(options) == ["player 1", "player 2", "player 3", "player 4"]
    state = GAME.initial_state(options)
    assert GAME.to_move(state) == frozenset(range(4))


def test_partial_options_still_start_a_game():
    """A caller that skips validate_options still gets a game: the options are completed on the way."""
    assert GAME.seat_count({}) == 2
    state = GAME.initial_state({"map": "box"})
    assert state.heads == ((1, 1), (13, 13))


def test_official_map_room():
    """A room on an official map starts with the cycles on that map's start squares."""
    state = GAME.initial_state(GAME.validate_options({"map": "joust"}))
    assert state.heads == ((1, 1), (1, 23))


# -- the arena generator ------------------------------------------------------------------------------


def _text_rows(tron_map: TronMap) -> list[str]:
    """The map drawn as rows, through its file form."""
    return tron_map.to_text().splitlines()[1:]


def _open_squares(rows: list[str]) -> set[tuple[int, int]]:
    """Every square that is not a wall (start squares included)."""
    return {(x, y) for y, row in enumerate(rows) for x, char in enumerate(row) if char != "#"}


def _connected(squares: set[tuple[int, int]]) -> bool:
    """True if the squares form one region by orthogonal steps."""
    start = next(iter(squares))
    seen = {start}
    queue = deque([start])
    while queue:
        x, y = queue.popleft()
        for square in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if square in squares and square not in seen:
                seen.add(square)
                queue.append(square)
    return seen == squares


def _check_arena(tron_map: TronMap, width: int, height: int, players: int) -> list[str]:
    """Common checks: size, a closed border, start squares present and open, every open square connected."""
    rows = _text_rows(tron_map)
    assert (tron_map.width, tron_map.height, len(rows)) == (width, height, height)
    assert rows[0] == rows[-1] == "#" * width
    assert all(row[0] == row[-1] == "#" for row in rows)
    assert len(tron_map.starts) == players
    assert len(set(tron_map.starts)) == players
    for seat, (x, y) in enumerate(tron_map.starts):
        assert rows[y][x] == str(seat + 1)
    assert _connected(_open_squares(rows))
    return rows


SEEDS = range(40)


@pytest.mark.parametrize("size", [(8, 8), (8, 50), (50, 8), (20, 13), (31, 31), (50, 50)])
def test_two_player_arenas_are_point_symmetric_and_connected(size):
    """A two-player arena looks the same after a half turn, seat 2 starting where seat 1 turns to."""
    width, height = size
    for seed in SEEDS:
        tron_map = generate_arena(width, height, seed)
        rows = _check_arena(tron_map, width, height, 2)
        walls = [[char == "#" for char in row] for row in rows]
        assert walls == [row[::-1] for row in walls[::-1]]
        (x, y), start2 = tron_map.starts
        assert start2 == (width - 1 - x, height - 1 - y)


@pytest.mark.parametrize(("size", "players"), [(8, 4), (15, 4), (24, 4), (50, 4), (9, 3), (20, 3)])
def test_many_player_arenas_have_quarter_turn_symmetry(size, players):
    """A 3-4 player arena is square and looks the same after a quarter turn; the starts follow the turn."""
    for seed in SEEDS:
        tron_map = generate_arena(size, size, seed, players)
        rows = _check_arena(tron_map, size, size, players)
        walls = {(x, y) for y, row in enumerate(rows) for x, char in enumerate(row) if char == "#"}
        assert {(size - 1 - y, x) for x, y in walls} == walls
        for (x, y), following in zip(tron_map.starts, tron_map.starts[1:], strict=False):
            assert following == (size - 1 - y, x)


@pytest.mark.slow
def test_every_allowed_arena_size_can_be_made():
    """Every width and height the options allow gives a valid arena, for 2 players and (square) for 3-4."""
    for width in range(8, 51):
        for height in range(8, 51):
            _check_arena(generate_arena(width, height, width * 100 + height), width, height, 2)
        for players in (3, 4):
            _check_arena(generate_arena(width, width, width, players), width, width, players)


def test_arenas_are_deterministic_per_seed():
    """The same seed always gives the same arena, and different seeds give different arenas."""
    arenas = [generate_arena(20, 20, seed) for seed in range(10)]
    assert arenas == [generate_arena(20, 20, seed) for seed in range(10)]
    assert len({arena.walls for arena in arenas}) == 10


def test_arenas_have_inner_walls():
    """Random arenas are not just empty rooms: most have walls inside the border."""
    with_walls = 0
    for seed in range(20):
        tron_map = generate_arena(20, 20, seed)
        border = 2 * 20 + 2 * 18
        with_walls += len(tron_map.walls) > border
    assert with_walls >= 15


def test_arena_text_loads_back():
    """A generated arena saved in the map format loads back unchanged (so it can be kept as a map file)."""
    tron_map = generate_arena(17, 17, 9, players=4)
    assert load_map(tron_map.to_text(), tron_map.name) == tron_map


@pytest.mark.parametrize(("width", "height", "players"), [(7, 20, 2), (20, 51, 2), (20, 16, 3), (20, 20, 5)])
def test_arena_refuses_bad_sizes(width, height, players):
    """The generator refuses sizes outside 8-50, non-square maps for 3-4 players and more than 4 players."""
    with pytest.raises(BadOptions):
        generate_arena(width, height, 1, players)


# -- whole games ----------------------------------------------------------------------------------------


def _random_playout(state: TronState, rng: random.Random) -> tuple[list[TronState], list[bytes]]:
    """Every state of a game played with random moves until it ends, and a pickled copy of each taken early."""
    states = [state]
    copies = [pickle.dumps(state)]
    while GAME.outcome(state) is None:
        state = GAME.apply(state, _random_moves(state, rng))
        states.append(state)
        copies.append(pickle.dumps(state))
    return states, copies


@pytest.mark.parametrize("name", ["joust", "u", "apocalyptic", "center", "test-board2", "random-4", "random-3"])
def test_random_playouts_end_and_never_mutate(name):
    """Random games always end with a result, each tick adds one trail square per survivor, states never change."""
    rng = random.Random(name)
    for game_number in range(15):
        if name.startswith("random"):
            state = new_state(generate_arena(12, 12, game_number, int(name[-1])))
        else:
            state = new_state(official_maps()[name])
        states, copies = _random_playout(state, rng)
        final = states[-1]
        assert final.tick == len(states) - 1 <= final.width * final.height
        assert GAME.to_move(final) == frozenset()
        assert GAME.outcome(final).winners
        assert set(GAME.outcome(final).winners) <= set(range(len(final.alive)))
        assert [pickle.loads(copy) for copy in copies] == states
        for before, after in pairwise(states):
            filled = sum(cell != 0 for cell in after.cells) - sum(cell != 0 for cell in before.cells)
            assert filled == sum(after.alive)
            assert after.tick == before.tick + 1


@pytest.mark.parametrize(("depth", "leaves"), [(0, 1), (1, 16), (2, 31), (3, 46), (4, 46), (6, 46)])
def test_perft_on_test_board(depth, leaves):
    """Counting every joint move on test-board (perft, for the bench and for search) matches a hand count."""
    # Player 1 can only ride S then E, player 2 only W then S; the other 15 joint moves of each tick end
    # the game (a leaf each), and on tick 3 the two heads face each other with nowhere left to go.
    assert perft(new_state(official_maps()["test-board"]), depth) == leaves


def _three_riders() -> TronState:
    """A fresh random three-rider arena."""
    return GAME.initial_state(GAME.validate_options({"players": 3, "seed": 4}))


def test_a_resigning_rider_stops_and_the_others_ride_on():
    """In a three-rider game a resignation takes that rider out on the tick; the game goes on for the other two."""
    state = _three_riders()
    retire = GAME.retire_move(state, 1)
    assert retire == RETIRE
    after = GAME.apply(state, {1: retire})
    assert after.alive == (True, False, True) and after.result is None
    assert after.heads[1] == state.heads[1] and after.heads[0] != state.heads[0]
    assert GAME.to_move(after) == {0, 2} and GAME.retire_move(after, 1) is None


def test_a_resignation_is_logged_and_replays():
    """A tick with a resignation is written with "x" and parses back to the same tick (restored games replay it)."""
    state = _three_riders()
    moves = {0: EAST, 1: RETIRE, 2: WEST}
    notation = GAME.format_joint(moves, 3)
    assert notation.split()[1] == "x"
    assert GAME.parse_joint(state, notation) == moves
    assert GAME.apply(state, GAME.parse_joint(state, notation)) == GAME.apply(state, moves)


def test_the_last_rider_left_by_a_resignation_wins_by_resignation():
    """When a resignation leaves one rider, that rider wins and the reason says why."""
    state = GAME.apply(_three_riders(), {0: RETIRE})
    final = GAME.apply(state, {2: RETIRE})
    assert final.result is not None and final.result.winners == (1,) and final.result.reason == "resign"


def test_two_rider_games_have_no_retire_move():
    """With two riders a resignation ends the game (the room finishes it), so the rules offer no retire move."""
    state = new_state(official_maps()["joust"])
    assert GAME.retire_move(state, 0) is None
    with pytest.raises(IllegalMove):
        GAME.apply(state, {0: RETIRE, 1: EAST})
    with pytest.raises(IllegalMove):
        GAME.parse_move(state, "x")
