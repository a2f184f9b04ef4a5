"""`gamenight-server calibrate`: AI-vs-AI rated games seed the AI levels' ratings in the server's database."""

from __future__ import annotations

from gamenight.server.__main__ import main
from gamenight.server.calibrate import parse_entrants, schedule
from gamenight.server.outbox import AiSpec
from gamenight.server.store import Store


def test_schedule_cycles_pairs_and_swaps_colours() -> None:
    """Every pair of entrants plays in turn, with seats swapped on the next pass."""
    one, two, three = AiSpec(level=1), AiSpec(level=2), AiSpec(bot="classic")
    assert parse_entrants("1, 2,classic") == [one, two, three]
    order = schedule([one, two, three], 6)
    assert order[:3] == [(one, two), (one, three), (two, three)]
    assert order[3:] == [(two, one), (three, one), (three, two)]


def test_calibrate_command_stores_rated_games_and_ratings(tmp_path, capsys) -> None:
    """The command plays the games, prints each level's rating, and leaves ratings and replayable games on disk."""
    db = str(tmp_path / "games.db")
    assert main(["--db", db, "calibrate", "--game", "connect4", "--games", "4", "--levels", "1,3", "--ms", "50"]) == 0
    printed = capsys.readouterr().out
    assert "AI level 1" in printed and "AI level 3" in printed
    store = Store(db)
    try:
        total, rows = store.leaderboard("connect4", 0, 10)
        assert total == 2 and {r["name"] for r in rows} == {"AI level 1", "AI level 3"}
        assert all(r["games"] == 4 and r["kind"] == "ai" for r in rows)
        assert sum(r["wins"] for r in rows) + sum(r["draws"] for r in rows) // 2 == 4
        games = store.list_games(game="connect4", limit=10)
        assert len(games) == 4 and all(len(g["result"]["ratings"]) == 2 for g in games)
        record = store.get_game(games[0]["game_id"])
        assert record is not None and record["moves"]
    finally:
        store.close()
    assert main(["--db", db, "calibrate", "--game", "chess", "--games", "1"]) == 2
