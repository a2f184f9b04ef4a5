"""AI matches (bench/match.py): the Tron maps they cycle through, 2010 contest bots, GTP Othello engines and the
pure-Python Othello levels as players."""

from __future__ import annotations

import pathlib
import random
import shlex
import shutil
import subprocess
import sys

import pytest

from bench import match, tron_baseline
from bench.a1k0n import patched_source
from bench.match import ContestBot, parse_player, play_game, play_timed_game
from gamenight.server.ai import othello_ai, tron_ai
from gamenight.server.ai.tron import kernel as tron_kernel
from gamenight.server.games.tron import (
    DIRECTION_NAMES,
    MATCH_DRAWN_MAPS,
    match_maps,
    match_opening,
    new_state,
    official_maps,
)

TWO_PLAYER = sorted(name for name, tron_map in official_maps().items() if tron_map.players == 2)


def test_default_tron_maps_leave_out_the_test_boards() -> None:
    """A default Tron match cycles through every official two-player map except test-board and test-board2."""
    maps = match_maps()
    assert set(maps) == set(TWO_PLAYER) - {"test-board", "test-board2"}
    assert not MATCH_DRAWN_MAPS & set(maps)
    assert match_opening(0, random.Random(0)).options["map"] == maps[0]


def test_all_brings_the_test_boards_back_and_names_pick_maps() -> None:
    """`--tron-maps all` plays every two-player map; a list of names plays just those, in that order."""
    assert match_maps("all") == tuple(TWO_PLAYER)
    assert match_maps("keyhole, joust") == ("keyhole", "joust")
    assert match_opening(3, random.Random(0), ("keyhole", "joust")).options["map"] == "joust"


def test_unknown_map_names_are_refused() -> None:
    """A misspelt map name is an error naming it, not a silently shorter match."""
    with pytest.raises(ValueError, match="nowhere"):
        match_maps("joust,nowhere")


def test_prev_names_the_frozen_tron_engine() -> None:
    """`--b prev5` plays level 5 of the frozen pre-issue-18 Tron engine; plain numbers stay current levels."""
    assert parse_player("prev5") == {"prev": 5}
    assert parse_player("5") == {"level": 5}
    assert parse_player("floodfill") == {"bot": "floodfill"}


def test_prev5_plays_a_legal_move_of_the_tron_ai_kept_as_data() -> None:
    """`--b prev5` plays level 5 of commit 8c7afd3's Tron AI, run from its file kept as data (no copy of its code is
    kept up): through bench.match's player it answers a legal move, and the module it runs is that revision's."""
    state = new_state(official_maps()["joust"])
    legal = {DIRECTION_NAMES[d] for d in tron_ai.grid_of(state).open_moves(0)}
    assert match._move("tron", state, 0, 20, 1, {"prev": 5}, []) in legal
    baseline = tron_baseline.load()
    assert baseline.__spec__.origin == "8c7afd3:server/ai/tron_ai.py"
    assert not hasattr(baseline, "Level5Engine"), "the AI of before issue 18, not today's"


def _revision_file() -> str | None:
    """The baseline's file as git history holds it, or None without git or without that history."""
    if shutil.which("git") is None:
        return None
    where = str(pathlib.Path(tron_baseline.__file__).parent)
    shown = subprocess.run(
        ["git", "-C", where, "show", f"{tron_baseline.REVISION}:{tron_baseline.SOURCE}"],
        capture_output=True,
        text=True,
        check=False,
    )
    return shown.stdout if shown.returncode == 0 else None


@pytest.mark.skipif(_revision_file() is None, reason="this checkout holds no git history of commit 8c7afd3")
def test_the_baseline_kept_as_data_is_that_revisions_file_byte_for_byte() -> None:
    """The data file prev5 runs is commit 8c7afd3's server/ai/tron_ai.py unchanged (what docs/ai.md measured as
    the previous level 5), not an edited copy."""
    assert tron_baseline.DATA.read_text() == _revision_file()


CONTEST_BOT = f"{shlex.quote(sys.executable)} tests/engines/tron2010_bot.py"


def test_a_contest_bot_plays_a_whole_tron_game_as_player_b() -> None:
    """`--b tron2010:COMMAND` plays a 2010 contest bot, one child process per game, to the game's end."""
    assert parse_player("tron2010:./bot --fast") == {"tron2010": "./bot --fast"}
    index, score, plies, label, transcript = play_game(
        "tron", "1", f"tron2010:{CONTEST_BOT}", 0, 20, 1, maps=("keyhole",)
    )
    assert (index, label) == (0, "map keyhole")
    assert score in (0.0, 0.5, 1.0)
    assert plies > 10
    assert len(transcript.split()) >= plies


GTP_ENGINE = f"{shlex.quote(sys.executable)} tests/engines/gtp_othello.py"


@pytest.mark.parametrize("index", [0, 1])
def test_a_gtp_engine_plays_a_whole_othello_game(index: int) -> None:
    """`--b gtp:COMMAND` plays an Othello engine speaking GTP (as gtp-rhino does), one child process per game, on
    either colour, told the random opening's moves too, to the game's end."""
    assert parse_player("gtp:gtp-rhino --level 3") == {"gtp": "gtp-rhino --level 3"}
    _index, score, plies, label, transcript = play_game("othello", "1", f"gtp:{GTP_ENGINE}", index, 20, 3)
    assert score in (0.0, 0.5, 1.0)
    assert label.endswith("random plies")
    assert plies > 30
    assert len(transcript) == 2 * plies


def test_a_gtp_engine_past_the_move_limit_forfeits_and_the_match_goes_on() -> None:
    """An outside engine that has not answered within `--move-limit` loses that game, and the game's line says it
    forfeited and why, instead of the match waiting on it."""
    slow = f"gtp:{GTP_ENGINE} --slow-ms 5000"
    _index, score, _plies, label, _moves = play_game("othello", "1", slow, 0, 20, 3, move_limit_s=0.5)
    assert score == 1.0
    assert label.endswith("B forfeits: late: no answer in time")
    _index, score, _plies, label, _moves = play_game("othello", slow, "1", 1, 20, 3, move_limit_s=0.5)
    assert score == 0.0 and label.endswith("A forfeits: late: no answer in time")


def test_pure_names_an_othello_level_without_the_compiled_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--b pure5` plays level 5 with its pure-Python search (level 5 as it was before issue 38); `5` uses the
    compiled kernel when it is built, and the kernel is back in place after a pure move."""
    assert parse_player("pure5") == {"pure": 5}
    kernel = othello_ai.KERNEL
    searched: list[int] = []
    real = othello_ai.kernel_search

    def recorded(own: int, opp: int, limits: object) -> object:
        searched.append(own)
        return real(own, opp, limits)  # type: ignore[arg-type]

    monkeypatch.setattr(othello_ai, "kernel_search", recorded)
    play_game("othello", "pure5", "1", 0, 20, 1)
    assert searched == []
    assert othello_ai.KERNEL is kernel
    if kernel is not None:
        play_game("othello", "5", "1", 0, 20, 1)
        assert searched


class _CountingKernel:
    """The compiled Tron kernel, counting every look-up of one of its functions."""

    def __init__(self, real: object) -> None:
        self.real = real
        self.calls = 0

    def __getattr__(self, name: str) -> object:
        self.calls += 1
        return getattr(self.real, name)


def test_pure_names_a_tron_level_without_the_compiled_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--b pure5` in Tron plays level 5 with its pure-Python code (what `GAMENIGHT_PURE_AI=1` or an install without
    a compiler plays, measured against the kernel's level 5 in docs/ai.md); `5` uses the kernel when it is built,
    and the kernel is back in place after a pure move."""
    counting = None if tron_kernel.KERNEL is None else _CountingKernel(tron_kernel.KERNEL)
    monkeypatch.setattr(tron_kernel, "KERNEL", counting)
    _index, score, plies, _label, _moves = play_game("tron", "pure5", "1", 0, 20, 1, maps=("keyhole",))
    assert score in (0.0, 0.5, 1.0) and plies > 2
    assert tron_kernel.KERNEL is counting
    if counting is not None:
        assert counting.calls == 0
        play_game("tron", "5", "1", 0, 20, 1, maps=("keyhole",))
        assert counting.calls > 0


@pytest.mark.skipif(othello_ai.KERNEL is None, reason="the compiled Othello kernel is not built")
def test_hand_names_the_kernel_level_with_its_hand_weights(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--b hand5` plays the kernel's level 5 with the hand-weighted evaluation (to measure the fitted patterns
    against it); `5` searches with the patterns when they are loaded, and they are back on after a hand move."""
    assert parse_player("hand5") == {"hand": 5}
    kernel = othello_ai.KERNEL
    assert kernel is not None
    patterns_on: list[bool] = []
    real = othello_ai.kernel_search

    def recorded(own: int, opp: int, limits: object) -> object:
        was = kernel.use_patterns(False)
        kernel.use_patterns(was)
        patterns_on.append(was)
        return real(own, opp, limits)  # type: ignore[arg-type]

    monkeypatch.setattr(othello_ai, "kernel_search", recorded)
    play_game("othello", "hand5", "1", 0, 20, 1)
    assert patterns_on and not any(patterns_on)
    patterns_on.clear()
    play_game("othello", "5", "1", 0, 20, 1)
    assert patterns_on and all(patterns_on) == (othello_ai.PATTERNS is not None)


def test_a_match_times_each_players_moves() -> None:
    """A match reports each player's thinking time per move (the issue's "a fifth of GRhino's time" is read off
    it): every move after the random opening is timed, for the player who made it."""
    _index, _score, plies, _label, _moves, times = play_timed_game("othello", "1", "5", 0, 50, 2)
    a_seconds, a_moves, b_seconds, b_moves = times
    assert a_moves + b_moves == plies and a_moves > 0 and b_moves > 0
    assert 0 < a_seconds < b_seconds  # level 1 at 50 ms thinks less than level 5 with 50 ms


def test_a_contest_bot_answering_nonsense_stops_the_game_with_its_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """A contest bot that answers 7 is an error quoting the answer, and its process does not outlive the game."""
    started: list[ContestBot] = []

    class Recorded(ContestBot):
        def __init__(self, command: str) -> None:
            super().__init__(command)
            started.append(self)

    monkeypatch.setattr(match, "ContestBot", Recorded)
    with pytest.raises(ValueError, match="'7'"):
        play_game("tron", "1", f"tron2010:{CONTEST_BOT} --garbage", 0, 20, 1, maps=("keyhole",))
    assert len(started) == 1
    assert started[0].process.poll() is not None


def test_the_contest_winner_is_built_with_equal_time_and_quiet() -> None:
    """bench/a1k0n.py sets a1k0n's time per move and first move to 99% of --ms, and his debugging output off."""
    source = "#define TIMEOUT_USEC 990000\n#define FIRSTMOVE_USEC 2950000\n#define VERBOSE 2\nint main() {}\n"
    patched = patched_source(source, 100)
    assert "#define TIMEOUT_USEC 99000\n" in patched
    assert "#define FIRSTMOVE_USEC 99000\n" in patched
    assert "#define VERBOSE 0\n" in patched
    with pytest.raises(ValueError, match="TIMEOUT_USEC"):
        patched_source("int main() {}\n", 100)


def test_paired_interval_counts_draws_as_draws_and_a_pair_as_one_trial() -> None:
    """A match of many draws gets the interval of its pairs' spread, inside the binomial one and around the score."""
    scores = [1.0, 0.5] * 10 + [0.5, 0.5] * 10  # pairs score 0.75 ten times and 0.5 ten times: 62.5%
    interval = match.paired(scores)
    assert interval is not None
    half = 1.96 * (20 * 0.125**2 / 19 / 20) ** 0.5
    assert interval == pytest.approx((0.625 - half, 0.625 + half))
    low, high = match.wilson(0.625, 40)
    assert low < interval[0] < 0.625 < interval[1] < high
    stats = match.summary(scores)
    assert stats["pair_elo_low"] == pytest.approx(match.elo(interval[0]))
    assert "by pairs of games" in match.report("tron", "5", "b", 100, stats, 1.0)


def test_no_paired_interval_without_enough_pairs_or_spread() -> None:
    """Too few pairs, an unpaired last game or pairs that all scored alike give the binomial interval alone."""
    assert match.paired([1.0, 0.5] * 9) is None
    assert match.paired([1.0, 0.5] * 10 + [1.0]) is None
    assert match.paired([1.0, 0.0] * 12) is None
    stats = match.summary([1.0, 0.0] * 12)
    assert stats["pair_elo_low"] is None and "by pairs" not in match.report("tron", "5", "b", 100, stats, 1.0)
