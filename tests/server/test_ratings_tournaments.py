"""Tournaments on a real server: a round robin of AIs to the end, an arena's pairing, a restart mid-tournament."""

from __future__ import annotations

import asyncio
import itertools
import secrets
from collections import Counter

import pytest

from gamenight.protocol.messages import (
    Abort,
    CreateTournament,
    GetTournament,
    JoinTournament,
    ListGames,
    ListTournaments,
    MakeMove,
    Message,
    Resign,
)
from tests.peer import Peer

ROUND_ROBIN = ["AI level 1", "AI level 2", "bot classic", "bot quantum"]
FAST_OTHELLO = {"size": 6, "ai_ms": 50, "ai_pace_ms": 0}
HANG_GUARD_S = 180  # generous: only a hang fails here


def key() -> str:
    """A fresh claim key."""
    return "key-" + secrets.token_urlsafe(16)


async def until(peer: Peer, tournament: str, done, seen: list | None = None):
    """The first `tournament` message about `tournament` for which `done(msg)` holds (every one kept in `seen`)."""
    async with asyncio.timeout(HANG_GUARD_S):
        while True:
            msg = await peer.wait(lambda m: m.type == "tournament" and m.tournament == tournament)
            if seen is not None:
                seen.append(msg)
            if done(msg):
                return msg


async def autoplay(peer: Peer, tid: str, hang_s: float = HANG_GUARD_S) -> Message:
    """Play the first legal move in every game the server seats `peer` in, until the tournament's `finished` push;
    returns it. A move refused for the message rate is sent again, and so is one the room's new owner never got
    (in a cluster, sent as the old one died: the seat given back after the takeover, `joined`, shows it still to be
    played)."""
    sent: set[tuple[str, int]] = set()
    last: MakeMove | None = None
    async with asyncio.timeout(hang_s):
        while True:
            try:
                msg = await peer.wait(lambda m: True)
            except TimeoutError:
                continue  # nothing for a while (a takeover, the AIs' games): keep waiting
            if msg.type == "tournament" and msg.tournament == tid and msg.status == "finished":
                return msg
            if msg.type == "joined":
                sent = {(room, seq) for room, seq in sent if room != msg.room}
            if msg.type == "error" and msg.code == "rate_limited" and last is not None:
                await asyncio.sleep((msg.retry_after_ms or 50) / 1000)
                await peer.send(last)
            if msg.type == "state" and msg.status == "playing" and msg.legal and (msg.room, msg.seq) not in sent:
                sent.add((msg.room, msg.seq))
                last = MakeMove(room=msg.room, move=msg.legal[0], seq=msg.seq)
                await peer.send(last)


def points_from_games(games: list[dict]) -> dict[str, float]:
    """Round-robin points recomputed from the games: 1 for a win, ½ each for a draw."""
    points: Counter[str] = Counter()
    for g in games:
        a, b = g["players"]
        pa, pb = g["places"]
        points[a] += 1.0 if pa < pb else 0.5 if pa == pb else 0.0
        points[b] += 1.0 if pb < pa else 0.5 if pa == pb else 0.0
    return dict(points)


def check_round_robin(final, entrants: list[str]) -> None:
    """All 12 games played, every pair twice with colours swapped, the standings' points and order right."""
    assert final.status == "finished"
    games = final.games
    assert len(games) == 12 and all(g["places"] is not None and g["room"] for g in games)
    assert Counter(tuple(g["players"]) for g in games) == Counter(itertools.permutations(entrants, 2))
    points = points_from_games(games)
    table = {row["player"]: row for row in final.standings}
    assert {p: table[p]["points"] for p in entrants} == pytest.approx(points)
    assert sum(row["games"] for row in final.standings) == 24
    order = [row["points"] for row in final.standings]
    assert order == sorted(order, reverse=True)


async def test_round_robin_of_four_ais_runs_to_the_end(db_server):
    """Two AI levels and two named bots: the server plays all 12 games and the standings follow their results."""
    url = f"ws://127.0.0.1:{db_server.port}"
    host = await Peer.connect(url, "host", key=key())
    reply = await host.request(
        CreateTournament, game="othello", kind="round_robin", options=FAST_OTHELLO, players=ROUND_ROBIN, rated=True
    )
    assert reply.type == "tournament" and reply.status == "running" and reply.entries == ROUND_ROBIN
    final = await until(host, reply.tournament, lambda m: m.status == "finished")
    check_round_robin(final, ROUND_ROBIN)
    listed = await host.request(ListTournaments)
    assert listed.tournaments[0]["tournament"] == reply.tournament and listed.tournaments[0]["status"] == "finished"
    again = await host.request(GetTournament, tournament=reply.tournament)
    assert again.standings == final.standings
    first = final.games[0]
    found = await host.request(ListGames, room=first["room"])
    assert [[p["name"] for p in g["players"]] for g in found.games] == [first["players"]]
    await host.close()


async def test_arena_pairs_only_free_players_never_twice_in_a_row(db_server):
    """Six AIs in a 20 s arena: nobody is in two games at once, nobody meets the same opponent twice running."""
    url = f"ws://127.0.0.1:{db_server.port}"
    host = await Peer.connect(url, "host", key=key())
    players = ["AI level 1", "AI level 2", "AI level 3", "bot classic", "bot quantum", "AI level 4"]
    reply = await host.request(
        CreateTournament, game="othello", kind="arena", options=FAST_OTHELLO, players=players, duration_s=20
    )
    assert reply.type == "tournament" and reply.kind == "arena"
    seen: list = []
    final = await until(host, reply.tournament, lambda m: m.status == "finished", seen)
    for msg in seen:
        running = [g["players"] for g in msg.games if g["room"] and g["places"] is None]
        busy = [p for group in running for p in group]
        assert len(busy) == len(set(busy)), "a player in two games at once"
    for player in players:
        opponents = [next(p for p in g["players"] if p != player) for g in final.games if player in g["players"]]
        assert all(a != b for a, b in itertools.pairwise(opponents)), (player, opponents)
    assert len(final.games) >= 3 and all(g["places"] is not None for g in final.games)
    table = {row["player"]: row for row in final.standings}
    assert sum(row["games"] for row in final.standings) == 2 * len(final.games)
    assert all(table[p]["points"] >= 2 * table[p]["wins"] for p in players)  # win 2 (4 on a streak), draw 1
    await host.close()


async def test_tournament_requests_are_checked(db_server):
    """Guests cannot host; bad kinds, unknown entrants and arenas without a duration are refused with clear codes."""
    url = f"ws://127.0.0.1:{db_server.port}"
    guest = await Peer.connect(url, "guest")
    reply = await guest.request(CreateTournament, game="othello", kind="arena", duration_s=60)
    assert reply.type == "error" and reply.code == "not_allowed"
    host = await Peer.connect(url, "host", key=key())
    for bad, code in (
        ({"kind": "swiss"}, "bad_options"),
        ({"kind": "round_robin", "players": ["nobody-claimed"]}, "unknown_player"),
        ({"kind": "round_robin", "players": ["AI level 9"]}, "bad_options"),
        ({"kind": "arena", "duration_s": 0}, "bad_options"),
    ):
        reply = await host.request(CreateTournament, game="othello", **bad)
        assert reply.type == "error" and reply.code == code, bad
    waiting = await host.request(CreateTournament, game="othello", kind="round_robin", start_in_s=600)
    assert waiting.status == "waiting" and waiting.starts_in_ms > 0
    joined = await host.request(JoinTournament, tournament=waiting.tournament)
    assert joined.entries == ["host"]
    reply = await guest.request(JoinTournament, tournament=waiting.tournament)
    assert reply.type == "error" and reply.code == "not_allowed"
    await guest.close()
    await host.close()


async def test_a_person_in_a_round_robin_is_seated_by_the_server(db_server):
    """A claimed player entered against an AI gets `joined` and the game's state without asking."""
    url = f"ws://127.0.0.1:{db_server.port}"
    alice = await Peer.connect(url, "alice", key=key())
    reply = await alice.request(
        CreateTournament,
        game="connect4",
        kind="round_robin",
        options={"ai_pace_ms": 0},
        players=["alice", "AI level 1"],
    )
    joined = await alice.wait(lambda m: m.type == "joined" and m.id is None)
    state = await alice.wait(lambda m: m.type == "state" and m.room == joined.room)
    assert state.status == "playing" and joined.seat == 0
    running = await alice.request(GetTournament, tournament=reply.tournament)
    assert running.games[0]["room"] == joined.room and running.games[0]["players"] == ["alice", "AI level 1"]
    await alice.close()


async def test_a_tournament_game_is_not_aborted_and_an_early_resignation_counts_unrated(db_server):
    """A rated tournament's game must be played, as lichess's tournament games: its room says which tournament it
    belongs to, abort is refused, and a resignation before any move loses it for the standings but rates nobody."""
    url = f"ws://127.0.0.1:{db_server.port}"
    alice = await Peer.connect(url, "alice", key=key())
    reply = await alice.request(
        CreateTournament,
        game="connect4",
        kind="round_robin",
        options={"ai_pace_ms": 0},
        rated=True,
        players=["alice", "AI level 1"],
    )
    joined = await alice.wait(lambda m: m.type == "joined" and m.id is None)
    info = await alice.wait(lambda m: m.type == "room" and m.room == joined.room and m.status == "playing")
    assert info.tournament == reply.tournament and joined.seat == 0
    refused = await alice.request(Abort, room=joined.room)
    assert refused.type == "error" and refused.code == "not_allowed" and "tournament" in refused.message
    await alice.send(Resign(room=joined.room))
    final = await alice.wait(lambda m: m.type == "state" and m.room == joined.room and m.status == "finished")
    assert (final.result.reason, final.result.winner, final.result.ratings) == ("resign", 1, ())
    standing = await until(alice, reply.tournament, lambda m: m.games[0]["places"] is not None)
    assert standing.games[0]["places"] == [2, 1]
    await alice.close()


async def test_restart_mid_tournament_resumes(server_process):
    """SIGKILL during a round robin: after the restart its finished games and standings are there, and it
    runs to the end with all 12 games."""
    first = server_process()
    host_key = key()
    host = await Peer.connect(first.url, "host", key=host_key)
    reply = await host.request(
        CreateTournament, game="othello", kind="round_robin", options=FAST_OTHELLO, players=ROUND_ROBIN
    )
    before = await until(host, reply.tournament, lambda m: sum(g["places"] is not None for g in m.games) >= 3)
    first.kill()
    await host.close()
    second = server_process()
    host = await Peer.connect(second.url, "host", key=host_key)
    again = await host.request(GetTournament, tournament=reply.tournament)
    done_before = [g for g in before.games if g["places"] is not None]
    assert all(g in again.games for g in done_before)
    final = (
        again if again.status == "finished" else await until(host, reply.tournament, lambda m: m.status == "finished")
    )
    check_round_robin(final, ROUND_ROBIN)
    await host.close()


async def test_tron_group_tournament_ranks_riders_by_place(db_server):
    """Tron with three riders: one group game of three AIs; its places give each rider a pairwise share."""
    url = f"ws://127.0.0.1:{db_server.port}"
    host = await Peer.connect(url, "host", key=key())
    riders = ["AI level 1", "AI level 2", "bot chaser"]
    options = {"players": 3, "map": "random", "width": 12, "height": 12, "tick_ms": 50, "countdown_ms": 0}
    reply = await host.request(CreateTournament, game="tron", kind="round_robin", options=options, players=riders)
    assert reply.type == "tournament", reply
    final = await until(host, reply.tournament, lambda m: m.status == "finished")
    (game,) = final.games
    assert sorted(game["players"]) == sorted(riders) and len(game["places"]) == 3
    points = {row["player"]: row["points"] for row in final.standings}
    assert sum(points.values()) == pytest.approx(1.5)  # three pairwise results of one point each, halved per rider
    best = game["players"][game["places"].index(min(game["places"]))]
    assert points[best] == max(points.values())
    await host.close()


async def test_a_person_who_stays_away_forfeits_and_the_round_robin_ends(db_server):
    """A round-robin entrant who disconnects loses the game in progress and the rest by forfeit after the grace
    period, so the tournament finishes instead of waiting for them forever."""
    url = f"ws://127.0.0.1:{db_server.port}"
    alice = await Peer.connect(url, "alice", key=key())
    bob = await Peer.connect(url, "bob", key=key())
    reply = await alice.request(
        CreateTournament,
        game="connect4",
        kind="round_robin",
        options={"ai_pace_ms": 0, "grace_s": 1},
        players=["alice", "AI level 1"],
    )
    await alice.wait(lambda m: m.type == "joined" and m.id is None)
    watched = await bob.request(GetTournament, tournament=reply.tournament)
    assert watched.status == "running" and watched.games[0]["room"]
    await alice.close()  # alice never comes back; it is her move
    final = await until(bob, reply.tournament, lambda m: m.status == "finished")
    assert [g["players"] for g in final.games] == [["alice", "AI level 1"], ["AI level 1", "alice"]]
    assert [g["places"] for g in final.games] == [[2, 1], [1, 2]]
    assert [g["forfeit"] for g in final.games] == [False, True]  # the first was played, lost on the clock of grace_s
    table = {row["player"]: row["points"] for row in final.standings}
    assert table == {"AI level 1": 2.0, "alice": 0.0}
    await bob.close()
