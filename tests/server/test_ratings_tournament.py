"""Tournament scheduling and scoring (server/tournament.py): round robins, groups, arena pairing, standings."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from gamenight.server.tournament import (
    ArenaRecord,
    Played,
    arena_pairs,
    arena_points,
    groups,
    round_robin,
    sonneborn_berger,
    standings,
)


@pytest.mark.parametrize("count", [2, 3, 4, 5, 6, 8])
def test_round_robin_every_pair_twice_with_colours_swapped(count: int) -> None:
    """Each pair meets exactly twice, once in each seat; nobody plays twice in a round; seats are balanced."""
    players = [f"p{n}" for n in range(count)]
    rounds = round_robin(players)
    games = [pair for pairs in rounds for pair in pairs]
    assert len(games) == count * (count - 1)
    assert Counter(games) == Counter(itertools.permutations(players, 2))
    for pairs in rounds:
        seated = [p for pair in pairs for p in pair]
        assert len(seated) == len(set(seated))
    first = Counter(a for a, _ in games)
    assert all(first[p] == count - 1 for p in players)
    assert len(rounds) == 2 * (count - 1 + count % 2)


def test_round_robin_refuses_duplicates() -> None:
    """Two entries of one name cannot be scheduled."""
    with pytest.raises(ValueError):
        round_robin(["a", "a", "b"])


@pytest.mark.parametrize(("count", "size"), [(4, 3), (5, 3), (5, 4), (6, 4), (4, 4)])
def test_groups_every_group_once_nobody_twice_a_round(count: int, size: int) -> None:
    """Tron with 3-4 riders: every group of that size plays once, and a round never seats a player twice."""
    players = [f"p{n}" for n in range(count)]
    rounds = groups(players, size)
    played = [frozenset(g) for r in rounds for g in r]
    assert sorted(map(sorted, played)) == sorted(map(sorted, itertools.combinations(players, size)))
    for r in rounds:
        seated = [p for g in r for p in g]
        assert len(seated) == len(set(seated))


def test_arena_points_and_streaks() -> None:
    """Win 2, draw 1, loss 0; after two wins in a row the next games score double until one is not won."""
    record = ArenaRecord()
    assert [arena_points(record, r) for r in (1, 1, 1, 0.5, 1, 0, 1, 1, 1)] == [2, 2, 4, 2, 2, 0, 2, 2, 4]
    assert record.points == 20 and record.on_fire


def test_arena_pairs_closest_and_never_the_last_opponent() -> None:
    """Free players pair by points then rating, never with their last opponent; the odd one out waits."""
    records = {"a": ArenaRecord(points=6, opponents=["b"]), "b": ArenaRecord(points=5, opponents=["a"])}
    records["c"] = ArenaRecord(points=0, opponents=["d"])
    records["d"] = ArenaRecord(points=0, opponents=["c"])
    ratings = {"a": 1800, "b": 1700, "c": 1500, "d": 1400, "e": 1450}
    pairs = arena_pairs(["a", "b", "c", "d"], records, ratings)
    assert {frozenset(p) for p in pairs} == {frozenset("ac"), frozenset("bd")}
    assert arena_pairs(["a", "b"], records, ratings) == []  # only each other: they wait
    pairs = arena_pairs(["a", "b", "c", "d", "e"], records, ratings)
    assert len(pairs) == 2 and all(p[0] != p[1] for p in pairs)


def test_arena_simulation_never_repeats_back_to_back() -> None:
    """Over many random rounds of six players, nobody is paired with the opponent of their previous game."""
    rng = random.Random(3)
    players = list("abcdef")
    records = {p: ArenaRecord() for p in players}
    ratings = {p: 1500 + 50 * n for n, p in enumerate(players)}
    for _ in range(200):
        free = [p for p in players if rng.random() < 0.7]
        for one, two in arena_pairs(free, records, ratings):
            assert records[one].opponents[-1:] != [two] and records[two].opponents[-1:] != [one]
            result = rng.choice((1.0, 0.5, 0.0))
            arena_points(records[one], result)
            arena_points(records[two], 1.0 - result)
            records[one].opponents.append(two)
            records[two].opponents.append(one)
    assert sum(len(r.opponents) for r in records.values()) > 200


def test_sonneborn_berger_breaks_a_tie() -> None:
    """Two players on equal points are ordered by the points of those they beat (Sonneborn-Berger)."""
    win = (1, 2)
    games = [
        Played(("a", "c"), win),  # a beats c (strong)
        Played(("b", "d"), win),  # b beats d (weak)
        Played(("c", "d"), win),
        Played(("c", "b"), win),
        Played(("d", "a"), win),
        Played(("a", "b"), (1, 1)),
    ]
    table = standings("abcd", games)
    points = {s.player: s.points for s in table}
    assert points == {"a": 1.5, "b": 1.5, "c": 2.0, "d": 1.0}
    sb = sonneborn_berger(games, points)
    assert sb["a"] == pytest.approx(2.0 + 0.75) and sb["b"] == pytest.approx(1.0 + 0.75)
    assert [s.player for s in table] == ["c", "a", "b", "d"]
    assert [s.rank for s in table] == [1, 2, 3, 4]
    assert (table[1].wins, table[1].draws, table[1].losses) == (1, 1, 1)


def test_standings_shared_rank_and_group_games() -> None:
    """Equal points and tie-break share a rank; a 3-rider game gives pairwise shares (1, ½, 0 by places)."""
    game = Played(("x", "y", "z"), (1, 2, 2))
    assert game.result("x") == 1.0 and game.result("y") == 0.25 and game.outcome("y") == "loss"
    table = standings("xyz", [game])
    assert [(s.rank, s.player) for s in table] == [(1, "x"), (2, "y"), (2, "z")]


def test_arena_standings_by_points_then_performance() -> None:
    """The arena table orders by arena points, then by performance against the opponents' ratings."""
    records = {"a": ArenaRecord(points=4), "b": ArenaRecord(points=4), "c": ArenaRecord(points=0)}
    games = [Played(("a", "c"), (1, 2)), Played(("b", "c"), (1, 2)), Played(("a", "b"), (1, 1))]
    ratings = {"a": 1500.0, "b": 1500.0, "c": 1900.0}
    table = standings("abc", games, arena=records, ratings=ratings)
    assert [s.player for s in table][:2] in (["a", "b"], ["b", "a"]) and table[2].player == "c"
    assert table[0].rank == table[1].rank == 1
