"""Tournament scheduling and scoring, pure: round-robin rounds, Tron groups, arena pairing, standings.

No I/O, no clock: players are names (any hashable strings), a finished game is a `Played` with each player's place,
and every function returns new values. The server part (rooms, pushes, persistence) builds on these.

- **Round robin** (`round_robin`): every pair plays twice with colours swapped, scheduled by the circle method
  so that each round gives everybody at most one game (an odd count adds a bye); the second half repeats the
  first with seats swapped. For Tron with 3-4 riders (`groups`), every group of the given size plays once,
  grouped greedily into rounds where nobody plays twice.
- **Arena** (`arena_pairs`): whoever is free is paired at once with the closest player in standing, then rating,
  never with their previous opponent and preferring players they have not met; a greedy pairing (lichess pairs by
  a weighted matching; with the small groups of a game night the greedy one is enough). Scoring as lichess's
  arena (`arena_points`): a win 2, a draw 1, a loss 0; after two wins in a row every following game scores
  double until one is not won (the "streak").
- **Standings** (`standings`): by points, then the tie-break. Round robin: Sonneborn-Berger — for each game, the
  result against an opponent (1, ½, 0) times that opponent's final points, summed (for a group game every pair of
  riders counts as one result by their places). Arena: performance — the opponents' average rating plus
  400 x (wins - losses) / games (the linear approximation of a performance rating; lichess breaks arena ties by
  performance rating too). Then by rating, then by name, so the order is total.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

BYE = ""  # the round-robin filler for an odd count: pairings with it are left out


@dataclass(frozen=True, slots=True)
class Played:
    """One finished tournament game: its players in seat order and each one's place (1 best, equal: shared)."""

    players: tuple[str, ...]
    places: tuple[int, ...]

    def result(self, player: str) -> float:
        """The player's score in the game as a pairwise result: 1 for a sole win, ½ shared, 0 otherwise
        (two seats); in a group, the share of the other riders finished ahead of (ties ½)."""
        mine = self.places[self.players.index(player)]
        others = [p for name, p in zip(self.players, self.places, strict=True) if name != player]
        return sum(1.0 if mine < p else 0.5 if mine == p else 0.0 for p in others) / len(others)

    def outcome(self, player: str) -> str:
        """ "win" for the sole first place, "draw" for a shared one, else "loss"."""
        mine = self.places[self.players.index(player)]
        if mine != min(self.places):
            return "loss"
        return "draw" if self.places.count(mine) > 1 else "win"

    def against(self, player: str, opponent: str) -> float:
        """The player's result against one opponent in this game (1, ½ or 0), by their places."""
        mine = self.places[self.players.index(player)]
        theirs = self.places[self.players.index(opponent)]
        return 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0


# -- round robin ------------------------------------------------------------------------------------------------
def round_robin(players: Sequence[str]) -> list[list[tuple[str, str]]]:
    """Every pair twice with colours swapped, as rounds of (seat 0, seat 1) pairings; nobody plays twice a round.

    The circle method: the first player stays, the others rotate; in each round the first player's colour
    alternates, so colours are as balanced as the method allows, and the second half swaps every pairing.
    """
    if len(set(players)) != len(players) or BYE in players:
        raise ValueError("players must be distinct, non-empty names")
    if len(players) < 2:
        return []
    ring = list(players) + ([BYE] if len(players) % 2 else [])
    n = len(ring)
    first_half: list[list[tuple[str, str]]] = []
    for r in range(n - 1):
        pairs = []
        for i in range(n // 2):
            a, b = ring[i], ring[n - 1 - i]
            if (i == 0 and r % 2 == 1) or (i > 0 and i % 2 == 1):
                a, b = b, a
            if BYE not in (a, b):
                pairs.append((a, b))
        first_half.append(pairs)
        ring = [ring[0], ring[-1], *ring[1:-1]]
    second_half = [[(b, a) for a, b in pairs] for pairs in first_half]
    return first_half + second_half


def groups(players: Sequence[str], size: int) -> list[list[tuple[str, ...]]]:
    """Every group of `size` players once (Tron with 3-4 riders), as rounds where nobody plays twice.

    Rounds are filled greedily in the groups' lexicographic order; seats rotate with the group's index so that
    each player starts from different corners.
    """
    if len(set(players)) != len(players):
        raise ValueError("players must be distinct")
    if not 2 <= size <= len(players):
        return []
    left = []
    for n, combo in enumerate(itertools.combinations(players, size)):
        turn = n % size
        left.append(combo[turn:] + combo[:turn])
    rounds: list[list[tuple[str, ...]]] = []
    while left:
        busy: set[str] = set()
        this: list[tuple[str, ...]] = []
        rest = []
        for group in left:
            if busy.isdisjoint(group):
                this.append(group)
                busy.update(group)
            else:
                rest.append(group)
        rounds.append(this)
        left = rest
    return rounds


# -- arena ------------------------------------------------------------------------------------------------------
@dataclass(slots=True)
class ArenaRecord:
    """A player's arena so far: points, streak, and whom they met (in order)."""

    points: int = 0
    streak: int = 0  # wins in a row (2 or more: the next games score double)
    opponents: list[str] = field(default_factory=list)
    results: list[float] = field(default_factory=list)  # 1, ½, 0 per game

    @property
    def on_fire(self) -> bool:
        """True while the player's next game scores double."""
        return self.streak >= 2


def arena_points(record: ArenaRecord, result: float) -> int:
    """The points one game adds to `record` (and updates its streak): win 2, draw 1, loss 0, doubled on a streak."""
    double = 2 if record.on_fire else 1
    points = (2 if result == 1.0 else 1 if result == 0.5 else 0) * double
    record.streak = record.streak + 1 if result == 1.0 else 0
    record.points += points
    record.results.append(result)
    return points


def arena_pairs(
    free: Iterable[str], records: Mapping[str, ArenaRecord], ratings: Mapping[str, float]
) -> list[tuple[str, str]]:
    """Pair the free players: each, from the top of the standing, with the closest free player in points, then
    rating, who is not their last opponent, preferring players they have not met yet (greedy).

    A player nobody can take (only their last opponent is free, or an odd one out) waits for the next call.
    """
    empty = ArenaRecord()

    def standing(name: str) -> tuple[int, float, str]:
        return (-records.get(name, empty).points, -ratings.get(name, 1500.0), name)

    waiting = sorted(set(free), key=standing)
    pairs: list[tuple[str, str]] = []
    while waiting:
        player = waiting.pop(0)
        mine = records.get(player, empty)
        last = mine.opponents[-1] if mine.opponents else None
        candidates = []
        for other in waiting:
            theirs = records.get(other, empty)
            if other == last or (theirs.opponents and theirs.opponents[-1] == player):
                continue
            met = mine.opponents.count(other)
            gap = (abs(mine.points - theirs.points), abs(ratings.get(player, 1500.0) - ratings.get(other, 1500.0)))
            candidates.append((met, gap, standing(other), other))
        if not candidates:
            continue
        other = min(candidates)[3]
        waiting.remove(other)
        # Seat the player with fewer games as seat 0 ... else the lower in the standing: a simple colour balance.
        pairs.append((player, other) if len(mine.opponents) % 2 == 0 else (other, player))
    return pairs


# -- standings --------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Standing:
    """One line of the standings table."""

    rank: int
    player: str
    points: float
    tie_break: float
    games: int
    wins: int
    draws: int
    losses: int


def round_robin_points(games: Iterable[Played]) -> dict[str, float]:
    """Each player's points in a round robin: 1 a win, ½ a draw (a group game: its pairwise share, see `result`)."""
    points: dict[str, float] = {}
    for game in games:
        for player in game.players:
            points[player] = points.get(player, 0.0) + game.result(player)
    return points


def sonneborn_berger(games: Sequence[Played], points: Mapping[str, float]) -> dict[str, float]:
    """Each player's Sonneborn-Berger score: per game and opponent, the result against them times their points."""
    score: dict[str, float] = {}
    for game in games:
        pairs = len(game.players) - 1
        for player in game.players:
            for opponent in game.players:
                if opponent != player:
                    share = game.against(player, opponent) * points.get(opponent, 0.0) / pairs
                    score[player] = score.get(player, 0.0) + share
    return score


def performance(games: Sequence[Played], ratings: Mapping[str, float]) -> dict[str, float]:
    """Each player's linear performance: opponents' mean rating + 400 x (wins - losses) / games (pairwise)."""
    seen: dict[str, list[float]] = {}
    net: dict[str, float] = {}
    for game in games:
        for player in game.players:
            for opponent in game.players:
                if opponent != player:
                    seen.setdefault(player, []).append(ratings.get(opponent, 1500.0))
                    net[player] = net.get(player, 0.0) + (game.against(player, opponent) - 0.5) * 2
    return {p: sum(rs) / len(rs) + 400.0 * net[p] / len(rs) for p, rs in seen.items()}


@dataclass(slots=True)
class Tally:
    """The standings' inputs summed game by game, so a table costs the same at a tournament's 10,000th game as at
    its first (entrants², not games): per player their games, wins, draws and losses, round-robin points, and per
    opponent how often they met, the results against them (each over the game's other seats, as Sonneborn-Berger
    weighs them) and the pairwise net (+1 a win, -1 a loss, for the performance)."""

    counts: dict[str, list[int]] = field(default_factory=dict)  # games, wins, draws, losses
    points: dict[str, float] = field(default_factory=dict)
    met: dict[str, dict[str, int]] = field(default_factory=dict)
    scored: dict[str, dict[str, float]] = field(default_factory=dict)
    net: dict[str, float] = field(default_factory=dict)

    @classmethod
    def of(cls, games: Iterable[Played]) -> Tally:
        """The tally of these games."""
        tally = cls()
        for game in games:
            tally.add(game)
        return tally

    def add(self, game: Played) -> None:
        """Count one finished game."""
        pairs = len(game.players) - 1
        for player in game.players:
            row = self.counts.setdefault(player, [0, 0, 0, 0])
            row[0] += 1
            row[("win", "draw", "loss").index(game.outcome(player)) + 1] += 1
            self.points[player] = self.points.get(player, 0.0) + game.result(player)
            met, scored = self.met.setdefault(player, {}), self.scored.setdefault(player, {})
            for opponent in game.players:
                if opponent != player:
                    result = game.against(player, opponent)
                    met[opponent] = met.get(opponent, 0) + 1
                    scored[opponent] = scored.get(opponent, 0.0) + result / pairs
                    self.net[player] = self.net.get(player, 0.0) + (result - 0.5) * 2

    def sonneborn_berger(self) -> dict[str, float]:
        """`sonneborn_berger` of the games counted."""
        return {p: sum(r * self.points.get(o, 0.0) for o, r in by.items()) for p, by in self.scored.items()}

    def performance(self, ratings: Mapping[str, float]) -> dict[str, float]:
        """`performance` of the games counted."""
        found = {}
        for player, met in self.met.items():
            seen = sum(met.values())
            if seen:
                mean = sum(n * ratings.get(o, 1500.0) for o, n in met.items()) / seen
                found[player] = mean + 400.0 * self.net.get(player, 0.0) / seen
        return found


def standings(
    players: Iterable[str],
    games: Sequence[Played] | Tally,
    *,
    arena: Mapping[str, ArenaRecord] | None = None,
    ratings: Mapping[str, float] | None = None,
) -> list[Standing]:
    """The table: by points (arena points with `arena`, else round-robin points), then the tie-break
    (performance for an arena, Sonneborn-Berger otherwise), then rating, then name; equal keys share a rank.
    `games` are the finished games, or their `Tally`."""
    ratings = ratings or {}
    tally = games if isinstance(games, Tally) else Tally.of(games)
    everyone = list(dict.fromkeys([*players, *tally.counts]))
    if arena is not None:
        points = {p: float(arena[p].points) if p in arena else 0.0 for p in everyone}
        ties = tally.performance(ratings)
    else:
        points = tally.points
        ties = tally.sonneborn_berger()
    keyed = sorted(
        everyone, key=lambda p: (-points.get(p, 0.0), -round(ties.get(p, 0.0), 9), -ratings.get(p, 1500.0), p)
    )
    table: list[Standing] = []
    for n, player in enumerate(keyed):
        key = (points.get(player, 0.0), round(ties.get(player, 0.0), 9))
        rank = n + 1
        if table and (table[-1].points, round(table[-1].tie_break, 9)) == key:
            rank = table[-1].rank
        g, w, d, lost = tally.counts.get(player, [0, 0, 0, 0])
        table.append(Standing(rank, player, points.get(player, 0.0), ties.get(player, 0.0), g, w, d, lost))
    return table
