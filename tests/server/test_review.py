"""Game review over the wire (issue 36): an analysis is made once in the AI workers, stored with the game, reused by
everyone who may see the game and kept across a restart; private games are reviewed for their players only; the
queue is bounded per address and per person, and an analysis nobody waits for stops."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import replace

import pytest

from gamenight.protocol.messages import AddAi, Analyse, CreateRoom, Join, ListGames, MakeMove
from gamenight.server.app import GameServer, ServerConfig
from gamenight.server.records import AnalysisSaved, GameFinished
from gamenight.server.review import Asker, ReviewLimits, ReviewService
from gamenight.server.store import Store
from tests.peer import Peer, seat_pair

BLUNDER_GAME = ["a", "g", "b", "g", "c", "g", "e", "g"]  # red's e (ply 7) misses d and lets yellow's g column win
REVIEW = ReviewLimits(review_ms=20)


def config(db: str) -> ServerConfig:
    """A server on the database file `db`, two AI workers, reviews at a tiny budget."""
    return ServerConfig(port=0, ai_workers=2, db=db, review_limits=REVIEW)


async def play(first: Peer, second: Peer, moves: list[str], private: bool = False) -> int:
    """Play `moves` of Connect Four between two peers to the end; the finished game's id."""
    if private:
        room = (await first.request(CreateRoom, game="connect4", options={}, private=True)).room
        await first.request(Join, room=room, seat=0)
        await second.request(Join, room=room, seat=1)
        state = await first.expect("state")
    else:
        room, state = await seat_pair(first, second, "connect4")
    seq = state.seq
    for ply, move in enumerate(moves):
        mover = (first, second)[ply % 2]
        await mover.send(MakeMove(room=room, move=move, seq=seq))
        seq = (await first.state_after(room, seq)).seq
    await first.expect("event", kind="game_over")
    return int((await first.request(ListGames, player=second.welcome.name)).games[0]["game_id"])


@pytest.fixture
async def server(tmp_path):
    """A server on a real SQLite file, reviewing at a tiny budget."""
    server = GameServer(config(str(tmp_path / "games.db")))
    await server.start()
    yield server
    await server.stop()


async def test_a_game_is_analysed_once_then_everyone_gets_the_stored_analysis(server):
    """The first request is queued, shows progress and gets the analysis (the blunder labelled, the winning column as
    best); another person's request is answered at once from the store, without a single further search."""
    url = f"ws://127.0.0.1:{server.port}"
    ann, bob = await Peer.connect(url, "ann"), await Peer.connect(url, "bob")
    game_id = await play(ann, bob, BLUNDER_GAME)
    queued = await ann.request(Analyse, game_id=game_id)
    assert (queued.type, queued.game_id, queued.ahead) == ("queued", game_id, 0)
    progress = await ann.expect("analysis_progress", game_id=game_id)
    assert 0 < progress.done < progress.total == len(BLUNDER_GAME) + 1
    analysis = await ann.expect("analysis", game_id=game_id)
    blunder = analysis.moves[6]
    assert (blunder["ply"], blunder["played"], blunder["label"], blunder["best"]) == (7, "e", "blunder", "d")
    assert analysis.summary[0]["blunders"] >= 1 and analysis.budget_ms == REVIEW.review_ms
    searches = server.lobby.reviews.searches
    assert searches == len(BLUNDER_GAME) + 1, "one search per position"
    carol = await Peer.connect(url, "carol")
    again = await carol.request(Analyse, game_id=game_id)
    assert again.type == "analysis" and (again.moves, again.summary) == (analysis.moves, analysis.summary)
    assert server.lobby.reviews.searches == searches and not server.lobby.reviews.jobs


async def test_the_analysis_survives_a_restart(tmp_path):
    """An analysis made before a restart is answered from the database file after it, with no search."""
    db = str(tmp_path / "games.db")
    first = GameServer(config(db))
    await first.start()
    url = f"ws://127.0.0.1:{first.port}"
    ann, bob = await Peer.connect(url, "ann"), await Peer.connect(url, "bob")
    game_id = await play(ann, bob, BLUNDER_GAME)
    await ann.request(Analyse, game_id=game_id)
    made = await ann.expect("analysis", game_id=game_id)
    await first.stop()
    second = GameServer(config(db))
    await second.start()
    try:
        dee = await Peer.connect(f"ws://127.0.0.1:{second.port}", "dee")
        stored = await dee.request(Analyse, game_id=game_id)
        assert stored.type == "analysis" and stored.moves == made.moves
        assert second.lobby.reviews.searches == 0
    finally:
        await second.stop()


async def test_a_private_game_is_reviewed_for_its_players_only(server):
    """Someone who did not play a private room's game gets `unknown_game` for it, as for an id in no use; a player
    of it gets it queued."""
    url = f"ws://127.0.0.1:{server.port}"
    ann, bob = await Peer.connect(url, "ann"), await Peer.connect(url, "bob")
    game_id = await play(ann, bob, BLUNDER_GAME, private=True)
    eve = await Peer.connect(url, "eve")
    refused = await eve.request(Analyse, game_id=game_id)
    missing = await eve.request(Analyse, game_id=game_id + 1000)
    assert refused.type == "error" and refused.code == missing.code == "unknown_game"
    assert server.lobby.reviews.searches == 0 and not server.lobby.reviews.jobs
    assert (await bob.request(Analyse, game_id=game_id)).type == "queued"


def _store_with_games(path: str, count: int) -> Store:
    """A real SQLite store holding `count` finished public Connect Four games (ids 1..count)."""
    store = Store(path)
    players = [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "bob"}]
    result = {"winner": 1, "reason": "four"}
    finished = GameFinished("R", 0, "connect4", {}, players, result, BLUNDER_GAME, "")
    store.write([replace(finished, game_no=n) for n in range(count)])
    return store


def test_requests_are_bounded_per_address_and_per_person_per_hour(tmp_path):
    """One address waits for at most `reviews_waited_per_ip` analyses at once (`too_many`); one person starts at most
    `reviews_per_person_hour` an hour (`rate_limited`, saying when to ask again); asking for one already running is
    free."""
    from gamenight.server.outbox import Refusal

    limits = ReviewLimits(review_ms=20, reviews_waited_per_ip=2, reviews_per_person_hour=3)
    reviews = ReviewService(_store_with_games(str(tmp_path / "g.db"), 6), limits)
    ann = Asker("s1", "hash-ann", "ann", "10.0.0.1")
    for game_id in (1, 2):
        reviews.request(ann, Analyse(game_id=game_id), now=0.0)
    with pytest.raises(Refusal) as too_many:
        reviews.request(ann, Analyse(game_id=3), now=0.0)
    assert too_many.value.code == "too_many"
    ann_elsewhere = replace(ann, session="s2", ip="10.0.0.2")
    reviews.request(ann_elsewhere, Analyse(game_id=1), now=0.0)  # joins a running one: not counted
    reviews.request(ann_elsewhere, Analyse(game_id=3), now=0.0)  # the third new one this hour
    reviews.gone("s1")
    reviews.gone("s2")
    with pytest.raises(Refusal) as hourly:
        reviews.request(replace(ann, ip="10.0.0.3"), Analyse(game_id=4), now=10.0)
    assert hourly.value.code == "rate_limited" and hourly.value.retry_after_ms == 3590 * 1000 + 1
    reviews.request(replace(ann, ip="10.0.0.3"), Analyse(game_id=4), now=3601.0)  # an hour later


def test_an_analysis_nobody_waits_for_stops(tmp_path):
    """When the only person waiting cancels, the analysis leaves the queue: no further position is handed out, and
    a position already running is dropped when it comes back."""
    reviews = ReviewService(_store_with_games(str(tmp_path / "g.db"), 1), REVIEW)
    ann = Asker("s1", "hash-ann", "ann", "10.0.0.1")
    reviews.request(ann, Analyse(game_id=1), now=0.0)
    work = reviews.next_work()
    assert work is not None and work.ply == 0
    out = reviews.request(ann, Analyse(game_id=1, cancel=True), now=1.0)
    assert [send.message.type for send in out.sends] == ["analysis_progress"]
    assert reviews.next_work() is None and not reviews.jobs
    late = reviews.done(work, {"chance": 0.0, "exact": False, "best": "d", "margin": None})
    assert late.sends == [] and late.records == []


def test_a_tron_game_is_reviewed_by_territory_in_spans_of_ticks(tmp_path, monkeypatch):
    """A Tron game's analysis is made in pieces of `TICK_SPAN` positions (progress between them), then stored and
    sent with each tick's territory per rider."""
    from gamenight.server import review_report
    from gamenight.server.ai import analysis
    from gamenight.server.games.tron import Tron
    from gamenight.server.review_runner import assess_work

    for module in (review_report, analysis):
        monkeypatch.setattr(module, "TICK_SPAN", 2)
    store = Store(str(tmp_path / "g.db"))
    players = [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "bob"}]
    options = Tron().validate_options({"width": 10, "height": 8, "seed": 11})
    ticks = ["N W", "E S", "N W", "E W", "S E"]
    store.write([GameFinished("R", 0, "tron", options, players, {"winner": 0, "reason": "crash"}, ticks, "")])
    reviews = ReviewService(store, REVIEW)
    asker = Asker("s", "h", "h", "ip")
    assert reviews.request(asker, Analyse(game_id=1), now=0.0).sends[0].message.type == "queued"
    sent = []
    while (work := reviews.next_work()) is not None:
        out = reviews.done(work, assess_work(work))
        sent += [send.message for send in out.sends]
    assert [(m.type, getattr(m, "done", None), getattr(m, "total", None)) for m in sent[:2]] == [
        ("analysis_progress", 1, 3),
        ("analysis_progress", 2, 3),
    ]
    made = sent[-1]
    assert made.type == "analysis" and reviews.searches == 3
    assert [move["territory_after"] for move in made.moves] == [[15, 15], [14, 14], [12, 13], [12, 11], [26, 0]]
    assert [record.analysis["moves"] for record in out.records] == [made.moves]


async def test_a_live_games_ai_never_waits_for_a_review(tmp_path, monkeypatch):
    """While a long review runs on a two-worker server, an AI opponent's every turn gets a worker at once: reviews
    hold at most one worker less than there are, and none while a turn waits."""
    server = GameServer(replace(config(str(tmp_path / "games.db")), review_limits=ReviewLimits(review_ms=400)))
    await server.start()
    try:
        url = f"ws://127.0.0.1:{server.port}"
        ann, bob = await Peer.connect(url, "ann"), await Peer.connect(url, "bob")
        game_id = await play(ann, bob, BLUNDER_GAME)
        loop, waits, slot = asyncio.get_running_loop(), [], server._ai_slot

        async def timed_slot(code: str, exhibition: bool) -> None:
            started = loop.time()
            await slot(code, exhibition)
            waits.append(loop.time() - started)

        monkeypatch.setattr(server, "_ai_slot", timed_slot)
        assert (await ann.request(Analyse, game_id=game_id)).type == "queued"
        room = await bob.request(CreateRoom, game="connect4", options={"ai_ms": 100, "ai_pace_ms": 0})
        await bob.request(Join, room=room.room, seat=0)
        await bob.request(AddAi, room=room.room, seat=1, level=5)
        state = await bob.expect("state")
        for column in "abc":
            await bob.send(MakeMove(room=room.room, move=column, seq=state.seq))
            await bob.wait(lambda m: m.type == "moved" and m.seat == 1)
            state = await bob.at(room.room, state.seq + 2)
        assert server.lobby.reviews.jobs, "the review was still running during the AI's turns"
        assert len(waits) == 3 and max(waits) < 0.2, waits
        assert (await ann.expect("analysis", game_id=game_id)).moves[6]["label"] == "blunder"
    finally:
        await server.stop()


def test_export_includes_the_analysis_when_there_is_one(tmp_path):
    """`gamenight-server export` prints a reviewed game's analysis under `analysis`, and no such key before."""
    db = str(tmp_path / "g.db")
    store = _store_with_games(db, 1)
    export = [sys.executable, "-m", "gamenight.server", "--db", db, "export", "1"]
    before = json.loads(subprocess.run(export, capture_output=True, text=True, check=True).stdout)
    assert "analysis" not in before
    analysis = {"moves": [{"ply": 7, "label": "blunder", "best": "d"}], "summary": [], "budget_ms": 20}
    store.write([AnalysisSaved(1, analysis)])
    store.close()
    after = json.loads(subprocess.run(export, capture_output=True, text=True, check=True).stdout)
    assert after == {**before, "analysis": analysis}
