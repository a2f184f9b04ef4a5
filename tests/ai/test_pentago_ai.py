"""Tests of the Pentago AI: its engine agrees with the rules, it wins and defends in one and two moves, and
every level and bot returns a legal move."""

from __future__ import annotations

import random

import pytest

from gamenight.server.ai import pentago_ai
from gamenight.server.ai.pentago_ai import (
    PentagoEngine,
    child,
    children,
    choose_bot,
    choose_level,
    code_of,
    distinct_up_to_symmetry,
    move_of,
    outcome_score,
    position_of,
    quick_move,
    wins_next,
)
from gamenight.server.ai.search import WIN
from gamenight.server.games.pentago import SIZE, Pentago, PentagoMove, PentagoState, state_from_boards

GAME = Pentago()
LEVELS = (1, 2, 3, 4, 5)
SANE_LEVELS = (2, 3, 4, 5)
"""Every level but the lowest must take a win in one and stop the opponent's."""


def board(picture: str) -> PentagoState:
    """A state from six rows of '.', 'B', 'W' (rank 1 first, file a on the left); the side to move follows
    from the counts, as in a real game."""
    rows = picture.split()
    assert len(rows) == SIZE and all(len(row) == SIZE for row in rows)
    black = sum(1 << r * SIZE + c for r, row in enumerate(rows) for c, ch in enumerate(row) if ch == "B")
    white = sum(1 << r * SIZE + c for r, row in enumerate(rows) for c, ch in enumerate(row) if ch == "W")
    return state_from_boards(black, white, black.bit_count() - white.bit_count())


def random_state(rng: random.Random, plies: int) -> PentagoState | None:
    """The state after `plies` random legal moves, or None if the game ended on the way."""
    state = GAME.initial_state({})
    for _ in range(plies):
        state = GAME.apply(state, {state.turn: rng.choice(GAME.legal_moves(state, state.turn))})
        if state.result is not None:
            return None
    return state


def passed(state: PentagoState) -> PentagoState:
    """The same board with the other side to move, as if the side to move had done nothing."""
    return PentagoState(state.black, state.white, 1 - state.turn, None, state.ply)


def winning_reply(state: PentagoState) -> PentagoMove | None:
    """A legal move after which the side to move has won, found by trying every move under the rules."""
    for move in GAME.legal_moves(state, state.turn):
        after = GAME.apply(state, {state.turn: move})
        if after.result is not None and after.result.winners == (state.turn,):
            return move
    return None


def opponent_can_win(state: PentagoState, move: PentagoMove) -> bool:
    """True if, after `move`, the opponent has a move that wins at once (rules only)."""
    after = GAME.apply(state, {state.turn: move})
    if after.result is not None:
        return after.result.winners == (after.turn,)
    return winning_reply(after) is not None


def forces_win(state: PentagoState, move: PentagoMove) -> bool:
    """True if `move` wins at once, or every reply to it leaves the mover a winning move (rules only)."""
    mover = state.turn
    after = GAME.apply(state, {mover: move})
    if after.result is not None:
        return after.result.winners == (mover,)
    for reply in GAME.legal_moves(after, after.turn):
        later = GAME.apply(after, {after.turn: reply})
        if later.result is not None:
            if later.result.winners != (mover,):
                return False
        elif winning_reply(later) is None:
            return False
    return True


def pick(state: PentagoState, level: int, budget_ms: int = 300, seed: int = 0) -> PentagoMove:
    """The move a level chooses for the side to move."""
    move, _ = choose_level(state, state.turn, level=level, budget_ms=budget_ms, rng=random.Random(seed))
    return move


# -- the engine against the rules -------------------------------------------------------------------------


def test_engine_children_match_the_rules() -> None:
    """The search plays exactly the game: every legal move's child and result agree with Pentago.apply."""
    rng = random.Random(11)
    checked = 0
    while checked < 60:
        state = random_state(rng, rng.randint(0, 28))
        if state is None:
            continue
        pos = position_of(state, state.turn)
        reached = set()
        for move in GAME.legal_moves(state, state.turn):
            after = GAME.apply(state, {state.turn: move})
            expected = position_of(after, after.turn)
            assert child(pos, code_of(move)) == expected
            reached.add(expected)
            score = outcome_score(expected)
            if after.result is None:
                assert score is None
            elif after.result.is_draw:
                assert score == 0
            else:
                assert score == (-WIN if after.result.winners == (state.turn,) else WIN)
        assert {after for _, after in children(pos)} == reached
        checked += 1


def test_engine_moves_reach_every_distinct_child_once() -> None:
    """The search neither misses a move nor wastes time on copies: its moves are legal and distinct, and
    reach every different position a legal move reaches (or are the one winning move, when there is one)."""
    rng = random.Random(12)
    engine = PentagoEngine()
    checked = 0
    while checked < 50:
        state = random_state(rng, rng.randint(0, 24))
        if state is None:
            continue
        legal = GAME.legal_moves(state, state.turn)
        codes = engine.moves(position_of(state, state.turn))
        assert len(codes) == len(set(codes))
        assert {move_of(code) for code in codes} <= set(legal)
        reached = [GAME.apply(state, {state.turn: move_of(code)}) for code in codes]
        if any(after.result is not None and after.result.winners == (state.turn,) for after in reached):
            assert len(codes) == 1
        else:
            everything = {position_of(a, a.turn) for a in (GAME.apply(state, {state.turn: m}) for m in legal)}
            assert {position_of(a, a.turn) for a in reached} == everything
        checked += 1


def test_win_in_one_test_matches_trying_every_move() -> None:
    """The rotation-aware "can win next move" test the evaluation relies on never misses a win, and when it
    says yes a winning (or at worst drawing) move exists."""
    rng = random.Random(13)
    seen_yes = 0
    for _ in range(300):
        state = random_state(rng, rng.randint(6, 26))
        if state is None:
            continue
        own, opp = position_of(state, state.turn)
        truth = winning_reply(state) is not None
        if wins_next(own, opp):
            seen_yes += 1
            ends = [GAME.apply(state, {state.turn: m}).result for m in GAME.legal_moves(state, state.turn)]
            assert any(r is not None and state.turn in r.winners for r in ends)
        else:
            assert not truth
    assert seen_yes > 0


def test_symmetry_reduction_drops_only_mirror_images() -> None:
    """On a symmetric board the AI considers one move per family of mirror-image moves, and loses none."""
    pos = (0, 0)
    everything = list(children(pos))
    kept = distinct_up_to_symmetry(pos, everything)
    assert len(kept) < len(everything)
    images = set()
    for _, (a, b) in kept:
        for perm in _board_symmetries():
            images.add((_permute(a, perm), _permute(b, perm)))
    assert all(after in images for _, after in everything)


def _board_symmetries() -> list[list[int]]:
    """The eight turns and mirrors of the 6x6 board as cell permutations (written out here, not imported)."""
    last = SIZE - 1
    maps = []
    for turns in range(4):
        for mirror in (False, True):
            perm = []
            for cell in range(SIZE * SIZE):
                r, c = divmod(cell, SIZE)
                if mirror:
                    c = last - c
                for _ in range(turns):
                    r, c = c, last - r
                perm.append(r * SIZE + c)
            maps.append(perm)
    return maps


def _permute(bits: int, perm: list[int]) -> int:
    """A bitboard with every cell moved by `perm`."""
    return sum(1 << perm[cell] for cell in range(SIZE * SIZE) if bits >> cell & 1)


# -- tactics ---------------------------------------------------------------------------------------------------

PLACEMENT_WIN = """
    ......
    ..W...
    BBBB..
    ....W.
    .W....
    ...W..
"""
ROTATION_WIN = """
    ...BB.
    B.....
    B.....
    ...W..
    .....W
    W.W...
"""
OPEN_FOUR = """
    B.....
    ..B...
    .....B
    ......
    WWWW.B
    ......
"""
ROTATION_THREAT = """
    B.B...
    ....B.
    .....B
    W.....
    W.....
    ...WW.
"""
DOUBLE_THREAT = """
    ..W..B
    ......
    ...BWW
    ...B..
    ...BW.
    ......
"""


def test_position_facts_hold_under_the_rules() -> None:
    """The hand-made positions are what their names say (so the tactics tests test the AI, not the data)."""
    placement, rotation = board(PLACEMENT_WIN), board(ROTATION_WIN)
    assert placement.turn == rotation.turn == 0
    assert GAME.apply(placement, {0: PentagoMove(16)}).result.winners == (0,)
    rotation_wins = [m for m in GAME.legal_moves(rotation, 0) if GAME.apply(rotation, {0: m}).result is not None]
    assert rotation_wins and all(m.quadrant is not None for m in rotation_wins)
    for picture in (OPEN_FOUR, ROTATION_THREAT):
        state = board(picture)
        assert winning_reply(state) is None
        assert winning_reply(passed(state)) is not None
        assert any(not opponent_can_win(state, m) for m in GAME.legal_moves(state, 0))
    threatened = passed(board(ROTATION_THREAT))
    white_wins = [m for m in GAME.legal_moves(threatened, 1) if GAME.apply(threatened, {1: m}).result is not None]
    assert white_wins and all(m.quadrant is not None for m in white_wins)
    double = board(DOUBLE_THREAT)
    assert winning_reply(double) is None


@pytest.mark.parametrize("level", LEVELS)
def test_takes_a_win_by_placing(level: int) -> None:
    """Every level completes a five that needs no turn."""
    state = board(PLACEMENT_WIN)
    move = pick(state, level)
    assert GAME.apply(state, {0: move}).result.winners == (0,)


@pytest.mark.parametrize("level", LEVELS)
def test_takes_a_win_made_by_a_turn(level: int) -> None:
    """Every level sees a five that only a quadrant turn completes."""
    state = board(ROTATION_WIN)
    move = pick(state, level)
    assert GAME.apply(state, {0: move}).result.winners == (0,)


@pytest.mark.parametrize("level", SANE_LEVELS)
@pytest.mark.parametrize("picture", [OPEN_FOUR, ROTATION_THREAT], ids=["open-four", "turned-four"])
def test_stops_a_win_in_one(level: int, picture: str) -> None:
    """Levels 2-5 stop the opponent's five next move, including one a quadrant turn would make."""
    state = board(picture)
    move = pick(state, level)
    assert not opponent_can_win(state, move)


@pytest.mark.parametrize("level", (4, 5))
def test_finds_a_win_in_two(level: int) -> None:
    """The strong levels find the move that makes a threat the opponent cannot answer."""
    state = board(DOUBLE_THREAT)
    move = pick(state, level, budget_ms=3000)
    assert forces_win(state, move)


@pytest.mark.parametrize("level", (1, 2, 3, 4))
def test_levels_stop_at_their_depth_cap(level: int) -> None:
    """Levels 1-4 look no further than their cap even with time to spare (level 1 one move, the others two),
    so a higher level never looks less far than a lower one."""
    state = GAME.initial_state({})
    _, info = choose_level(state, state.turn, level=level, budget_ms=3000, rng=random.Random(0))
    cap = pentago_ai.LEVEL_PLAN[level][0]
    assert info["depth"] == cap
    assert cap == (1 if level == 1 else 2)


@pytest.mark.slow  # depends on how much CPU one second buys on the machine running it
def test_max_level_goes_past_the_capped_levels() -> None:
    """Level 5 has no cap: with a second on the empty board it searches deeper than level 4 may."""
    state = GAME.initial_state({})
    _, info = choose_level(state, state.turn, level=5, budget_ms=1000, rng=random.Random(0))
    assert info["depth"] > pentago_ai.LEVEL_PLAN[4][0]


def test_lower_levels_are_noisier() -> None:
    """Each level's root-move noise is at least that of the level above it, and level 5 plays its best move."""
    noises = [pentago_ai.LEVEL_PLAN[level][1] for level in (1, 2, 3, 4, 5)]
    assert noises == sorted(noises, reverse=True)
    assert noises[-1] == 0


# -- the playout bot, the fallback and the entry point --------------------------------------------------------


def test_playout_bot_is_legal_and_repeatable() -> None:
    """The playout bot plays legal moves, and the same seed gives the same move."""
    rng = random.Random(14)
    for _ in range(3):
        state = random_state(rng, 18)
        if state is None:
            continue
        legal = GAME.legal_moves(state, state.turn)
        first, info = choose_bot(state, state.turn, bot="playout", budget_ms=150, rng=random.Random(5))
        again, _ = choose_bot(state, state.turn, bot="playout", budget_ms=150, rng=random.Random(5))
        assert first in legal
        assert first == again
        assert info["bot"] == "playout"


def test_playout_bot_takes_a_win_and_stops_one() -> None:
    """Even the playout bot completes its own five and blocks a plain four (its leaves are exact when over)."""
    state = board(PLACEMENT_WIN)
    move, _ = choose_bot(state, 0, bot="playout", budget_ms=200, rng=random.Random(1))
    assert GAME.apply(state, {0: move}).result.winners == (0,)
    state = board(OPEN_FOUR)
    # Enough budget for depth 2 to finish its first root move (it tries the safe ones first).
    move, _ = choose_bot(state, 0, bot="playout", budget_ms=1500, rng=random.Random(1))
    assert not opponent_can_win(state, move)


def test_every_level_and_bot_returns_a_legal_move() -> None:
    """Whatever the level or bot, and even with a 1 ms budget, the AI answers with a legal move and full info."""
    rng = random.Random(15)
    states = [s for s in (random_state(rng, n) for n in (0, 3, 9, 17, 25)) if s is not None]
    for state in states:
        legal = GAME.legal_moves(state, state.turn)
        for level, bot in [*((lv, None) for lv in LEVELS), (None, "playout")]:
            for budget in (1, 60):
                if bot is None:
                    assert level is not None
                    move, info = choose_level(state, state.turn, level=level, budget_ms=budget, rng=random.Random(2))
                else:
                    move, info = choose_bot(state, state.turn, bot=bot, budget_ms=budget, rng=random.Random(2))
                assert move in legal
                assert {"depth", "nodes", "score", "pv", "ms"} <= set(info)
                assert all(isinstance(step, str) for step in info["pv"])


def test_quick_move_is_legal_and_sane() -> None:
    """The instant fallback plays legal moves, takes a win in one and does not hand the opponent one."""
    assert GAME.apply(board(PLACEMENT_WIN), {0: quick_move(board(PLACEMENT_WIN), 0)}).result.winners == (0,)
    state = board(OPEN_FOUR)
    assert not opponent_can_win(state, quick_move(state, 0))
    empty = GAME.initial_state({})
    assert quick_move(empty, 0) in GAME.legal_moves(empty, 0)


def test_unknown_bot_is_refused() -> None:
    """Asking for a bot Pentago does not have is an error naming the bots it has."""
    with pytest.raises(ValueError, match="playout"):
        choose_bot(GAME.initial_state({}), 0, bot="nope", budget_ms=10, rng=random.Random(0))
    assert set(pentago_ai.BOTS) == {"playout"}


def test_choosing_refuses_a_seat_not_to_move() -> None:
    """choose_level and choose_bot raise ValueError for a seat that is not to move, or once the game is over."""
    state = GAME.initial_state({})
    with pytest.raises(ValueError, match="not to move"):
        choose_level(state, 1 - state.turn, level=2, budget_ms=10, rng=random.Random(0))
    with pytest.raises(ValueError, match="not to move"):
        choose_bot(state, 1 - state.turn, bot="playout", budget_ms=10, rng=random.Random(0))
    won = board(PLACEMENT_WIN)
    over = GAME.apply(won, {won.turn: quick_move(won, won.turn)})
    assert over.result is not None
    with pytest.raises(ValueError, match="not to move"):
        choose_level(over, over.turn, level=2, budget_ms=10, rng=random.Random(0))


def test_module_offers_the_game_ai_interface() -> None:
    """The server's GameAI names are all there (BOTS, choose_level, choose_bot, quick_move), the old choose is gone."""
    for name in ("BOTS", "choose_level", "choose_bot", "quick_move"):
        assert hasattr(pentago_ai, name)
    assert not hasattr(pentago_ai, "choose")
