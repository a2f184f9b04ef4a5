"""A tournament's storage costs the change, not the whole state (issue 37): each game is a row of its own, and a
restart joins them back into the same tournament, however many games it played."""

from __future__ import annotations

import json

from bench.tournament_cost import Arena
from gamenight.server.lobby import Lobby
from gamenight.server.records import TournamentSaved
from gamenight.server.store import Store
from gamenight.server.tournament_host import Tournament


def arena_state(t: Tournament) -> dict:
    """Everything a restart must bring back of an arena: its header, its games, each entrant's record."""
    records = {p: (r.points, r.streak, r.opponents, r.results) for p, r in t.arena.items()}
    return {"header": t.header(), "games": [g.plain() for g in t.games], "records": records}


def reloaded(path: str, arena: Arena) -> Lobby:
    """A new lobby that loaded the store file's tournaments (as a restarted server does)."""
    store = Store(path)
    stored = store.tournaments()
    store.close()
    lobby = Lobby()
    lobby.tournaments.clock = arena.clock.now
    assert lobby.tournaments.load(stored) == []
    return lobby


def test_an_arena_of_many_games_comes_back_the_same_from_its_game_rows(tmp_path):
    """An arena of AIs 600 games in, stored record by record as the server writes them, loads back in a new lobby
    with the same games, standings and arena records (streaks, opponents met), while what each game end wrote
    stayed the size of one game's: the header and the games it changed, not every game so far."""
    arena = Arena(2000)
    store = Store(str(tmp_path / "games.db"))
    written: list[int] = []
    for _ in range(600):
        before = len(arena.records)
        assert arena.end_one(measure_old=False) is not None
        store.write(arena.records[before:])
        written.append(sum(len(json.dumps(r.data)) + len(json.dumps(r.games)) for r in arena.records[before:]))
    store.close()
    lobby = reloaded(str(tmp_path / "games.db"), arena)
    t = lobby.tournaments.tournaments[arena.t.id]
    assert len(t.games) >= 600 and arena_state(t) == arena_state(arena.t)
    assert lobby.tournaments.info(t) == arena.lobby.tournaments.info(arena.t)
    assert max(written[-50:]) < 1.2 * max(written[:50]) and len(json.dumps(arena.t.plain())) > 40 * max(written)


def test_a_tournament_stored_whole_before_game_rows_loads_and_its_next_change_writes_them(tmp_path):
    """A tournament an older server stored whole (its games inside its state) loads as it was; its next change
    writes every game as a row, and from then on it loads from the rows, the same again."""
    arena = Arena(2000)
    for _ in range(40):
        arena.end_one(measure_old=False)
    path = str(tmp_path / "games.db")
    store = Store(path)
    store.write([TournamentSaved(arena.t.id, arena.t.plain())])  # as the server before game rows stored it
    store.close()
    lobby = reloaded(path, arena)
    t = lobby.tournaments.tournaments[arena.t.id]
    assert arena_state(t) == arena_state(arena.t) and t.unsaved == set(range(len(t.games)))
    out = lobby.tournaments.sweep(arena.clock.now())  # its games in progress had their rooms here: new ones open
    (record,) = [r for r in out.records if isinstance(r, TournamentSaved)]
    assert record.count == len(t.games) and [i for i, _ in record.games] == list(range(len(t.games)))
    store = Store(path)
    store.write([record])
    store.close()
    assert arena_state(reloaded(path, arena).tournaments.tournaments[t.id]) == arena_state(t)
