"""Tests of the search core: exact minimax values, limits, anytime behaviour, proven wins, noise, the table."""

from __future__ import annotations

import random
import zlib

import pytest

from gamenight.protocol.vocab import PROVEN_SCORE
from gamenight.server.ai import search as core
from gamenight.server.ai.othello_ai import engine_for
from gamenight.server.ai.search import PROVEN, WIN, Limits, SearchInfo, search
from gamenight.server.games.othello import Othello

OTHELLO = Othello()


class TreeEngine:
    """A synthetic game: `branching` moves per node, pseudo-random leaf scores, over after `height` plies."""

    def __init__(self, branching: int, height: int, seed: int) -> None:
        """The tree is fixed by its shape and `seed`."""
        self.branching = branching
        self.height = height
        self.seed = seed

    def _value(self, pos: tuple) -> int:
        """A score in -500..500 that depends only on the path."""
        return zlib.crc32(repr((self.seed, pos)).encode()) % 1001 - 500

    def key(self, pos: tuple) -> int:
        """The path itself identifies the node."""
        return hash(pos)

    def moves(self, pos: tuple) -> list:
        """Moves 0..branching-1 until the tree's height."""
        return [] if len(pos) >= self.height else list(range(self.branching))

    def play(self, pos: tuple, move: int) -> tuple:
        """The path extended by `move`."""
        return (*pos, move)

    def terminal(self, pos: tuple) -> int | None:
        """Leaves at full height are game over with their value."""
        return self._value(pos) if len(pos) >= self.height else None

    def evaluate(self, pos: tuple) -> int:
        """Inner nodes get a pseudo-random static score too."""
        return self._value(pos)


class ReversedOrderEngine(TreeEngine):
    """The same tree with an `order` hook that tries moves backwards (the hook must not change values)."""

    def order(self, pos: tuple, moves: list, hash_move: object, killers: list, history: dict) -> list:
        """Moves in reverse."""
        return list(reversed(moves))


def plain_negamax(engine: TreeEngine, pos: tuple, depth: int) -> int:
    """Negamax without pruning, tables or ordering: the values the search must reproduce."""
    over = engine.terminal(pos)
    if over is not None:
        return over
    if depth == 0:
        return engine.evaluate(pos)
    return max(-plain_negamax(engine, engine.play(pos, move), depth - 1) for move in engine.moves(pos))


class TableEngine:
    """A game given as explicit tables: children of each node, game-over scores, static scores."""

    def __init__(self, children: dict, over: dict, static: dict | None = None) -> None:
        """`children[node][move] = child`; `over[node]` = exact score; `static[node]` = evaluation."""
        self.children = children
        self.over = over
        self.static = static or {}

    def key(self, pos: str) -> int:
        """Node names are unique."""
        return hash(pos)

    def moves(self, pos: str) -> list:
        """The node's moves in table order."""
        return list(self.children.get(pos, {}))

    def play(self, pos: str, move: str) -> str:
        """The child the table names."""
        return self.children[pos][move]

    def terminal(self, pos: str) -> int | None:
        """The table's game-over score, if any."""
        return self.over.get(pos)

    def evaluate(self, pos: str) -> int:
        """The table's static score (0 if none)."""
        return self.static.get(pos, 0)


def othello_positions() -> list:
    """A few Othello positions (opening to late midgame) as engine positions."""
    rng = random.Random(7)
    state = OTHELLO.initial_state({})
    found = []
    for ply in range(48):
        if ply in (0, 12, 24, 36, 47):
            found.append(state)
        state = OTHELLO.apply(state, {state.turn: rng.choice(OTHELLO.legal_moves(state, state.turn))})
    return found


@pytest.mark.parametrize(("branching", "height", "depth", "seed"), [(3, 6, 6, 1), (4, 5, 4, 2), (5, 4, 4, 3)])
def test_search_value_equals_plain_minimax(branching: int, height: int, depth: int, seed: int) -> None:
    """Alpha-beta, PVS, the table and move ordering never change the minimax value or pick a worse move."""
    engine = TreeEngine(branching, height, seed)
    move, info = search(engine, (), Limits(depth=depth))
    expected = plain_negamax(engine, (), depth)
    assert info.score == expected
    assert -plain_negamax(engine, (move,), depth - 1) == expected
    assert info.depth == depth


def test_order_hook_keeps_values() -> None:
    """An engine's own ordering hook changes only the order, never the result."""
    engine = ReversedOrderEngine(4, 5, 9)
    _, info = search(engine, (), Limits(depth=5))
    assert info.score == plain_negamax(engine, (), 5)


@pytest.mark.parametrize("state", othello_positions(), ids=lambda s: f"ply{s.ply}")
@pytest.mark.parametrize("limits", [Limits(time_ms=1), Limits(depth=1), Limits(nodes=1)], ids=str)
def test_any_limit_gives_a_legal_move(state, limits: Limits) -> None:
    """However tight the limit, the search answers with a legal move after completing depth 1."""
    engine = engine_for(state.size)
    move, info = search(engine, engine.position(*state.sides()), limits)
    assert move in OTHELLO.legal_moves(state, state.turn)
    assert info.depth >= 1


def test_more_nodes_search_deeper_and_stay_legal() -> None:
    """Anytime: a larger node budget completes deeper iterations, each answer a legal move."""
    state = othello_positions()[2]
    engine = engine_for(8)
    pos = engine.position(*state.sides())
    depths = []
    for nodes in (1, 300, 3_000, 15_000):
        move, info = search(engine, pos, Limits(nodes=nodes))
        assert move in OTHELLO.legal_moves(state, state.turn)
        depths.append(info.depth)
    assert depths == sorted(depths)
    assert depths[-1] > depths[0]


def test_time_limit_lets_the_search_deepen() -> None:
    """A time budget is used to go past depth 1 (a few milliseconds of work here, given a quarter second)."""
    state = othello_positions()[2]
    engine = engine_for(8)
    move, info = search(engine, engine.position(*state.sides()), Limits(time_ms=250))
    assert move in OTHELLO.legal_moves(state, state.turn)
    assert info.depth >= 2


def test_node_limit_is_respected() -> None:
    """A node limit stops the search within one clock-check interval of it."""
    state = othello_positions()[1]
    engine = engine_for(8)
    _, info = search(engine, engine.position(*state.sides()), Limits(nodes=2_000))
    assert info.nodes <= 2_000 + core.CHECK_EVERY


def test_shortest_win_is_preferred() -> None:
    """Of two winning lines the search takes the shorter, and scores it as a win one ply away."""
    children = {
        "root": {"slow": "s1", "fast": "f1"},
        "s1": {"reply": "s2"},
        "s2": {"win": "s3"},
    }
    over = {"f1": -WIN, "s3": -WIN}
    move, info = search(TableEngine(children, over), "root", Limits(depth=6))
    assert move == "fast"
    assert info.score == WIN - 1
    assert info.score >= PROVEN


def test_longest_loss_is_preferred() -> None:
    """When every line loses, the search resists longest (a loss further away scores higher)."""
    children = {
        "root": {"quick": "q1", "long": "l1"},
        "q1": {"win": "q2"},
        "l1": {"a": "l2"},
        "l2": {"b": "l3"},
        "l3": {"win": "l4"},
    }
    over = {"q2": -WIN, "l4": -WIN}
    move, info = search(TableEngine(children, over), "root", Limits(depth=8))
    assert move == "long"
    assert info.score == -(WIN - 4)


def _noisy_table() -> TableEngine:
    """A root whose four moves score 10, 9, 8 and -50 at depth 1."""
    children = {"root": {"a": "A", "b": "B", "c": "C", "d": "D"}}
    static = {"A": -10, "B": -9, "C": -8, "D": 50}
    return TableEngine(children, {}, static)


def test_noise_picks_only_near_best_moves() -> None:
    """With noise, the choice varies with the seed but stays among moves within the noise of the best."""
    engine = _noisy_table()
    chosen = {search(engine, "root", Limits(depth=1), rng=random.Random(seed), noise=5)[0] for seed in range(40)}
    assert chosen <= {"a", "b", "c"}
    assert len(chosen) >= 2


def test_no_noise_is_deterministic_best() -> None:
    """Without noise the best move is always chosen, whatever the generator."""
    engine = _noisy_table()
    for seed in range(10):
        assert search(engine, "root", Limits(depth=1), rng=random.Random(seed))[0] == "a"


def test_noise_never_gives_up_a_proven_win() -> None:
    """A proven win is taken even at a noise level that dwarfs every score."""
    children = {"root": {"win": "W", "draw": "D"}}
    engine = TableEngine(children, {"W": -WIN}, {"D": 0})
    for seed in range(10):
        assert search(engine, "root", Limits(depth=1), rng=random.Random(seed), noise=10**7)[0] == "win"


def test_noise_in_a_lost_position_resists_longest() -> None:
    """When every move loses by force, a noisy level still answers, with the longest resistance."""
    children = {
        "root": {"quick": "q1", "long": "l1"},
        "q1": {"win": "q2"},
        "l1": {"a": "l2"},
        "l2": {"b": "l3"},
        "l3": {"win": "l4"},
    }
    engine = TableEngine(children, {"q2": -WIN, "l4": -WIN})
    for seed in range(5):
        assert search(engine, "root", Limits(depth=8), rng=random.Random(seed), noise=100)[0] == "long"


def test_single_move_is_returned_at_once() -> None:
    """With one legal move the search answers it without searching deeper."""
    engine = TableEngine({"root": {"only": "O"}, "O": {"x": "X"}}, {})
    move, info = search(engine, "root", Limits(depth=10))
    assert move == "only"
    assert info.depth == 1


def test_no_moves_falls_back_to_quick() -> None:
    """A root the adapter offers no moves for answers the adapter's `quick` move."""

    class QuickEngine(TableEngine):
        def quick(self, pos: str) -> str:
            return "q"

    move, info = search(QuickEngine({}, {}), "root", Limits(depth=3))
    assert move == "q"
    assert info.depth == 0


def test_table_passed_in_is_filled_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A caller's transposition table keeps entries between calls, never beyond the size limit."""
    monkeypatch.setattr(core, "TT_LIMIT", 50)
    table: dict = {}
    engine = TreeEngine(4, 6, 5)
    search(engine, (), Limits(depth=6), tt=table)
    assert 0 < len(table) <= 50


def test_pv_starts_with_the_move_and_is_playable() -> None:
    """The principal variation begins with the chosen move and every move in it is legal in turn."""
    state = othello_positions()[2]
    engine = engine_for(8)
    pos = engine.position(*state.sides())
    move, info = search(engine, pos, Limits(depth=4))
    assert info.pv[0] == move
    for step in info.pv:
        assert step in engine.moves(pos)
        pos = engine.play(pos, step)


def test_info_to_wire() -> None:
    """The info map has the wire keys and the main line formatted by the caller's function."""
    info = SearchInfo(depth=3, nodes=120, score=-7, pv=(1, 2), time_ms=15)
    assert info.to_wire(lambda move: f"m{move}") == {
        "depth": 3,
        "nodes": 120,
        "score": -7,
        "pv": ["m1", "m2"],
        "ms": 15,
    }


class SteppedEngine(TreeEngine):
    """The synthetic tree with the optional attributes: deepen two plies at a time, look at the clock every node."""

    depth_step = 2
    check_every = 1

    def __init__(self, branching: int, height: int, seed: int) -> None:
        """Also records the path length of every position evaluated at the horizon."""
        super().__init__(branching, height, seed)
        self.horizons: set[int] = set()

    def evaluate(self, pos: tuple) -> int:
        """The synthetic score, noting how deep the leaf lies."""
        self.horizons.add(len(pos))
        return super().evaluate(pos)


def test_depth_step_searches_only_horizons_of_one_parity() -> None:
    """An engine with `depth_step` 2 (Tron) gets iterations 1, 3, 5 only, and the exact depth-5 value."""
    engine = SteppedEngine(3, 8, seed=11)
    move, info = search(engine, (), Limits(depth=5))
    assert engine.horizons == {1, 3, 5}
    assert info.depth == 5
    values = {m: -plain_negamax(engine, (m,), 4) for m in range(3)}
    assert values[move] == max(values.values())


def test_depth_step_still_searches_the_depth_limit() -> None:
    """A depth limit off the step's grid (4 with step 2) is still searched last."""
    engine = SteppedEngine(3, 8, seed=12)
    _, info = search(engine, (), Limits(depth=4))
    assert engine.horizons == {1, 3, 4}
    assert info.depth == 4


def test_engine_check_interval_tightens_the_node_limit() -> None:
    """An engine's `check_every` of 1 stops the search at its node limit, not up to `CHECK_EVERY` nodes later."""
    engine = SteppedEngine(4, 12, seed=13)
    _, info = search(engine, (), Limits(nodes=60))
    assert info.nodes <= 60
    assert info.depth >= 1


def test_proven_scores_start_where_the_protocol_says() -> None:
    """Clients read an AI score at or above `protocol.vocab.PROVEN_SCORE` as a proven win ("sees a forced win")."""
    assert PROVEN == PROVEN_SCORE and WIN > PROVEN
