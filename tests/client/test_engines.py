"""The engine adapter: real engine processes speaking GTP, NBoard, the 2010 Tron protocol and JSON lines play
whole games refereed by the real rules, and every way an engine can fail is reported as what it is."""

from __future__ import annotations

import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gamenight.client.bot.engines import (
    Engine,
    EngineFailure,
    EngineSpec,
    Failure,
    GtpEngine,
    JsonLinesEngine,
    NboardEngine,
    Tron2010Engine,
    Turn,
    contest_map,
    ggf_board,
)
from gamenight.server.ai.play import fallback_move
from gamenight.server.games import GAMES

ENGINES = Path(__file__).resolve().parents[1] / "engines"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "bots.md"
GTP_RHINO = shutil.which("gtp-rhino") or shutil.which("/usr/games/gtp-rhino")


def script(name: str, *flags: str) -> list[str]:
    """The command line of a test engine under tests/engines."""
    return [sys.executable, str(ENGINES / name), *flags]


def doc_bot(tmp_path: Path) -> list[str]:
    """The JSON-lines example bot of docs/bots.md, written out as it stands in the doc."""
    (code,) = re.findall(r"```python\n(.*?)```", DOCS.read_text(encoding="utf-8"), flags=re.S)
    path = tmp_path / "doc_bot.py"
    path.write_text(code, encoding="utf-8")
    return [sys.executable, str(path)]


ANSWER_S = 60.0
"""The deadline of a question whose answer the test waits for: a guard against a hang, never a speed target."""


def turn(game: str, state: Any, seat: int, seconds: float = ANSWER_S) -> Turn:
    """The question for `seat` in `state`, as the bot runner asks it."""
    rules = GAMES[game]
    legal = [rules.format_move(state, m) for m in rules.legal_moves(state, seat)]
    return Turn(game, seat, rules.view(state), legal, time.monotonic() + seconds)


async def referee(game: str, engines: dict[int, Engine], options: dict[str, Any] | None = None) -> tuple[Any, int]:
    """Play a whole game: engines in their seats, the server's quick move in the others; every move (and
    Othello pass) is reported to every engine. Returns the final state and the number of engine moves."""
    rules = GAMES[game]
    state = rules.initial_state(rules.validate_options(options or {}))
    for seat, engine in engines.items():
        await engine.new_game(game, seat, rules.view(state))
    asked = 0
    while rules.outcome(state) is None:
        moves: dict[int, Any] = {}
        for seat in sorted(rules.to_move(state)):
            if seat in engines:
                wire = await engines[seat].choose(turn(game, state, seat))
                asked += 1
            else:
                wire = fallback_move(game, state, seat)
            moves[seat] = rules.parse_move(state, wire)
        before = state
        state = rules.apply(state, moves)
        for seat, move in moves.items():
            for engine in engines.values():
                engine.observe(seat, rules.format_move(before, move))
        passed = rules.view(state).get("passed") if game == "othello" else None
        if passed is not None:
            for engine in engines.values():
                engine.observe(passed, None)
    return state, asked


async def started(engine: Engine) -> Engine:
    """`engine`, started."""
    await engine.start()
    return engine


@pytest.mark.parametrize("seat", [0, 1])
async def test_a_gtp_engine_plays_a_whole_othello_game(seat):
    """A GTP Othello engine plays a full game from either colour, its moves legal, passes and all."""
    engine = await started(GtpEngine(script("gtp_othello.py")))
    try:
        final, asked = await referee("othello", {seat: engine})
    finally:
        await engine.close()
    assert GAMES["othello"].outcome(final) is not None and asked > 0


@pytest.mark.skipif(GTP_RHINO is None, reason="gtp-rhino is not installed (Debian package grhino; .ci/run installs it)")
async def test_gtp_rhino_plays_a_whole_game_through_the_adapter(tmp_path):
    """The real GRhino (`gtp-rhino --level 1`) plays a full Othello game as white, every move legal."""
    assert GTP_RHINO is not None
    engine = await started(GtpEngine([GTP_RHINO, "--level", "1"], log=tmp_path / "rhino.log"))
    try:
        final, asked = await referee("othello", {1: engine})
    finally:
        await engine.close()
    assert GAMES["othello"].outcome(final) is not None and asked > 0


async def test_gtp_engines_play_each_other():
    """Two GTP engines, one a seat each, play a game to its end through the adapter (a bot-vs-bot game)."""
    black = await started(GtpEngine(script("gtp_othello.py")))
    white = await started(GtpEngine(script("gtp_othello.py")))
    try:
        final, asked = await referee("othello", {0: black, 1: white})
    finally:
        await black.close()
        await white.close()
    assert GAMES["othello"].outcome(final) is not None and asked > 0


async def test_an_nboard_engine_plays_a_whole_othello_game():
    """An NBoard engine reads the game as a GGF record each turn and plays it to the end."""
    engine = await started(NboardEngine(script("nboard_othello.py"), depth=4))
    try:
        final, asked = await referee("othello", {0: engine})
    finally:
        await engine.close()
    assert GAMES["othello"].outcome(final) is not None and asked > 0


async def test_a_2010_contest_bot_rides_a_whole_tron_game():
    """A bot speaking the 2010 contest's protocol, unmodified, rides a Tron game on an official map to its end."""
    engine = await started(Tron2010Engine(script("tron2010_bot.py")))
    try:
        final, asked = await referee("tron", {0: engine}, {"map": "joust"})
    finally:
        await engine.close()
    assert GAMES["tron"].outcome(final) is not None and asked > 0


@pytest.mark.parametrize("game", ["connect4", "pentago", "othello"])
async def test_the_documented_json_lines_bot_plays_any_game(game, tmp_path):
    """The example bot of docs/bots.md, as written there, plays a whole game of each turn-based game."""
    engine = await started(JsonLinesEngine(doc_bot(tmp_path)))
    try:
        final, asked = await referee(game, {1: engine})
    finally:
        await engine.close()
    assert GAMES[game].outcome(final) is not None and asked > 0


def test_the_contest_map_is_drawn_from_the_bots_side():
    """The contest map marks trails as walls, the asking seat's head `1` and the other's `2`."""
    view = {"width": 5, "height": 3, "board": ["#####", "#1 2#", "#####"], "heads": [[1, 1], [3, 1]]}
    assert contest_map(view, 0) == "5 3\n#####\n#1 2#\n#####"
    assert contest_map(view, 1) == "5 3\n#####\n#2 1#\n#####"
    view = {"width": 4, "height": 1, "board": ["11 2"], "heads": [[1, 0], [3, 0]]}
    assert contest_map(view, 0) == "4 1\n#1 2"


def test_the_ggf_board_is_the_start_position():
    """GGF's BO field lists the start squares row by row and black to move."""
    board = ggf_board(GAMES["othello"].view(GAMES["othello"].initial_state({})))
    assert board == "8 " + "-" * 27 + "O*" + "-" * 6 + "*O" + "-" * 27 + " *"


async def test_a_late_gtp_answer_is_dropped_and_the_next_question_gets_a_fresh_one():
    """An engine that answers after the deadline is reported late; its stale answer is never taken as the
    next move, and the engine's board is rebuilt so it goes on playing legal moves."""
    engine = await started(GtpEngine(script("gtp_othello.py", "--slow-ms", "600")))
    rules = GAMES["othello"]
    state = rules.initial_state({})
    try:
        await engine.new_game("othello", 0, rules.view(state))
        with pytest.raises(EngineFailure) as late:
            await engine.choose(turn("othello", state, 0, seconds=0.2))
        assert late.value.failure is Failure.LATE
        fallback = fallback_move("othello", state, 0)  # what the runner plays instead
        after = rules.apply(state, {0: rules.parse_move(state, fallback)})
        engine.observe(0, fallback)
        reply = rules.legal_moves(after, 1)[0]
        state = rules.apply(after, {1: reply})
        engine.observe(1, rules.format_move(after, reply))
        move = await engine.choose(turn("othello", state, 0))
        assert move in [rules.format_move(state, m) for m in rules.legal_moves(state, 0)]
    finally:
        await engine.close()


async def test_a_late_json_lines_answer_is_not_taken_for_the_next_turn(tmp_path):
    """A JSON-lines engine late for one turn: its late answer is dropped and the next turn gets its own."""
    slow = tmp_path / "slow.py"
    slow.write_text(
        "import json, sys, time\n"
        "for n, line in enumerate(sys.stdin):\n"
        "    turn = json.loads(line)\n"
        "    if n == 0:\n"
        "        time.sleep(0.5)\n"
        "    print(turn['legal'][-1] if n == 0 else turn['legal'][0], flush=True)\n",
        encoding="utf-8",
    )
    engine = await started(JsonLinesEngine([sys.executable, str(slow)]))
    try:
        first = Turn("connect4", 0, {}, ["d", "g"], time.monotonic() + 0.2)
        with pytest.raises(EngineFailure) as late:
            await engine.choose(first)
        assert late.value.failure is Failure.LATE
        assert await engine.choose(Turn("connect4", 0, {}, ["c", "a"], time.monotonic() + ANSWER_S)) == "c"
    finally:
        await engine.close()


async def test_a_crashing_engine_is_reported_crashed():
    """An engine process that exits in the middle of a game is a crash, not a hang."""
    engine = await started(GtpEngine(script("gtp_othello.py", "--crash-after", "1")))
    try:
        with pytest.raises(EngineFailure) as crashed:
            await referee("othello", {0: engine})
        assert crashed.value.failure is Failure.CRASHED
    finally:
        await engine.close()


async def test_an_illegal_move_is_reported_illegal():
    """A well-formed move that the position does not allow is reported as illegal, not played."""
    engine = await started(GtpEngine(script("gtp_othello.py", "--illegal")))
    try:
        with pytest.raises(EngineFailure) as illegal:
            await referee("othello", {0: engine})
        assert illegal.value.failure is Failure.ILLEGAL
    finally:
        await engine.close()


async def test_a_malformed_answer_is_reported_malformed():
    """A contest bot answering something other than 1-4 is malformed."""
    engine = await started(Tron2010Engine(script("tron2010_bot.py", "--garbage")))
    try:
        with pytest.raises(EngineFailure) as malformed:
            await referee("tron", {0: engine}, {"map": "joust"})
        assert malformed.value.failure is Failure.MALFORMED
    finally:
        await engine.close()


async def test_an_engine_that_cannot_start_is_reported_crashed(tmp_path):
    """A command that does not exist fails to start with the command named, not a traceback."""
    engine = EngineSpec(str(tmp_path / "no-such-engine"), "jsonl").build()
    with pytest.raises(EngineFailure, match="cannot start") as failed:
        await engine.start()
    assert failed.value.failure is Failure.CRASHED


async def test_engine_stderr_goes_to_the_log_file(tmp_path, capfd):
    """What an engine writes to stderr lands in its log file, not on the bot's own output."""
    log = tmp_path / "engine.log"
    engine = await started(GtpEngine(script("gtp_othello.py", "--noise"), log=log))
    try:
        await engine.new_game("othello", 0, GAMES["othello"].view(GAMES["othello"].initial_state({})))
    finally:
        await engine.close()
    assert "thinking about boardsize 8" in log.read_text()
    assert "thinking" not in capfd.readouterr().err


def test_unknown_protocols_are_refused():
    """`--protocol` with a name no adapter speaks is an error listing the known ones."""
    with pytest.raises(ValueError, match="gtp, nboard, tron2010, jsonl"):
        EngineSpec("x", "uci").build()
