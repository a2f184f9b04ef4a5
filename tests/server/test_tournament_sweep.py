"""A tournament's sweep looks at its games not over only (issue 37): the index of those games (`unfinished`) follows
every change of the games, a withdrawal's forfeits, a restart and an arena's dropping of games whose rooms are gone,
so the right games start and the tournament ends."""

from __future__ import annotations

from bench.tournament_cost import Arena
from gamenight.protocol.messages import CreateTournament, LeaveTournament
from gamenight.server import tournament_host
from gamenight.server.lobby import Lobby
from gamenight.server.store import Store
from gamenight.server.tournament_host import Tournament
from tests.peer import Peer
from tests.server.test_ratings_tournaments import key, until
from tests.server.test_tournament_store import reloaded

AIS = ["AI level 1", "AI level 2"]
PACED = {"ai_ms": 50, "ai_pace_ms": 100}  # the AIs' first game lasts far longer than a request's round trip


def not_over(t: Tournament) -> list[int]:
    """The games (indexes) without places, in schedule order: what `Tournament.unfinished` must hold."""
    return [index for index, game in enumerate(t.games) if game.places is None]


def in_play(lobby: Lobby, t: Tournament) -> dict[str, int]:
    """The lobby's map of this tournament's rooms to their games (`TournamentHost.by_room`)."""
    return {code: index for code, (tid, index) in lobby.tournaments.by_room.items() if tid == t.id}


async def test_a_round_robin_left_by_a_player_forfeits_their_games_and_ends(db_server):
    """A player who leaves a round robin loses their games not started by forfeit, none of them is started later,
    and the games of the others are played to the end."""
    alice = await Peer.connect(f"ws://127.0.0.1:{db_server.port}", "alice", key=key())
    made = await alice.request(
        CreateTournament, game="connect4", kind="round_robin", players=["alice", *AIS], options=PACED
    )
    assert made.type == "tournament" and made.status == "running", made
    t = db_server.lobby.tournaments.tournaments[made.tournament]
    assert [g["room"] is not None for g in made.games] == [True] + [False] * 5  # the AIs' first game; alice waits
    left = await alice.request(LeaveTournament, tournament=made.tournament)
    assert left.type == "tournament" and list(t.unfinished) == not_over(t)
    mine = [i for i, g in enumerate(left.games) if "alice" in g["players"]]
    assert len(mine) == 4 and all(left.games[i]["forfeit"] and left.games[i]["places"] for i in mine)
    final = await until(alice, made.tournament, lambda m: m.status == "finished")
    assert all(g["places"] is not None for g in final.games)
    assert [g["room"] is None for g in final.games] == ["alice" in g["players"] for g in final.games]
    assert [g["forfeit"] for g in final.games] == ["alice" in g["players"] for g in final.games]
    assert list(t.unfinished) == not_over(t) == []
    await alice.close()


def test_an_arena_restarted_without_its_rooms_drops_their_games_and_plays_on_to_its_end(tmp_path, monkeypatch):
    """An arena whose server restarted without the rooms of its games in progress forgets those games, pairs the
    free players again at once and plays on to its game cap: every game it keeps is finished, none is lost."""
    monkeypatch.setattr(tournament_host, "AI_ARENA_GAMES", tournament_host.AI_ARENA_GAMES)  # Arena lifts the cap
    arena = Arena(60)
    for _ in range(30):
        assert arena.end_one(measure_old=False) is not None
        assert list(arena.t.unfinished) == not_over(arena.t)
    path = str(tmp_path / "games.db")
    store = Store(path)
    store.write(arena.records)
    store.close()
    lobby = reloaded(path, arena)  # a restart: from the store, its games' rooms not restored
    t = lobby.tournaments.tournaments[arena.t.id]
    assert list(t.unfinished) == not_over(t) == [30, 31] and in_play(lobby, t) == {t.games[i].room: i for i in (30, 31)}
    lobby.tournaments.sweep(arena.clock.now())  # the rooms are gone: their games dropped, two new ones started
    assert len(t.games) == 32 and list(t.unfinished) == not_over(t) == [30, 31]
    assert in_play(lobby, t) == {t.games[i].room: i for i in (30, 31)}
    assert all(code in lobby.directory.rooms for code in in_play(lobby, t))  # opened in the new lobby
    arena.lobby, arena.host, arena.t = lobby, lobby.tournaments, t  # the bench ends the new lobby's games now
    while arena.end_one(measure_old=False) is not None:
        assert list(t.unfinished) == not_over(t)
    assert t.status == "finished" and len(t.games) == 60 and not_over(t) == [] and not t.unfinished
