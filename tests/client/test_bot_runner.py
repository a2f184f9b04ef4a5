"""`gamenight-bot` end to end: a real server process on loopback, bot runners with the test engines of tests/engines
(and the real gtp-rhino), and a human-like peer that challenges them and plays whole games over real websockets."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import signal
import socket
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

import tests.peer
from gamenight.client.bot.runner import BotRunner, Refused, bot_key, with_passes
from gamenight.protocol.messages import (
    AddAi,
    ChallengeRequest,
    CreateRoom,
    CreateTournament,
    Invite,
    Join,
    MakeMove,
    State,
    Sync,
)
from gamenight.protocol.vocab import Role
from tests.client.botrun import (
    ENGINES,
    challenge,
    config,
    doc_bot,
    engine,
    games_done,
    log_text,
    play_out,
    running,
    until_online,
    within,
)
from tests.peer import Peer
from tests.server.serverproc import NO_ROOM_CAPS, ServerProcess
from tests.server.test_ratings_tournaments import until

GTP_RHINO = shutil.which("gtp-rhino") or shutil.which("/usr/games/gtp-rhino")
TRON_SMALL = {"map": "random", "width": 10, "height": 10, "tick_ms": 150, "countdown_ms": 300}


@pytest.fixture(autouse=True)
def patient_peers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Peers wait up to a minute for each message (a loaded machine), a hang guard only."""
    monkeypatch.setattr(tests.peer, "TIMEOUT", 60.0)


async def challenge_and_play(
    human: Peer, bot: str, game: str, options: dict[str, Any] | None = None, seat: int = 0
) -> State:
    """The human challenges the bot, sits in `seat` and plays the whole game; the final state."""
    gone = await challenge(human, bot, game, options, seat)
    assert gone.why == "accepted", gone
    return await play_out(human, gone.room, seat if game != "tron" else None)


def bot_moves(final: State, bot_seat: int) -> int:
    """How many moves of a turn-based game's final move list the bot's seat made (alternating from seat 0)."""
    return sum(1 for i, _ in enumerate(final.moves) if i % 2 == bot_seat)


@pytest.mark.parametrize("game", ["othello", "connect4", "pentago"])
async def test_jsonl_bot_plays_a_whole_turn_based_game(
    game: str, server: ServerProcess, human: Peer, tmp_path: Path
) -> None:
    """A JSON-lines bot (the doc's example) accepts a human's challenge and plays every move to the end."""
    cfg = config(server.url, tmp_path, "jsonbot", game, doc_bot(tmp_path), "jsonl")
    async with running(cfg, human) as runner:
        final = await challenge_and_play(human, "jsonbot", game)
        assert final.result is not None
        assert final.result.reason != "resign"
        await games_done(runner, 1)
    assert len(final.moves) >= 5 and final.moves[1] in final.moves  # the bot's replies are in the game


async def test_jsonl_bot_rides_a_whole_tron_game(server: ServerProcess, human: Peer, tmp_path: Path) -> None:
    """A JSON-lines bot plays live Tron: it answers ticks until the last rider crashes, then leaves."""
    cfg = config(server.url, tmp_path, "jsontron", "tron", doc_bot(tmp_path), "jsonl")
    async with running(cfg, human) as runner:
        final = await challenge_and_play(human, "jsontron", "tron", TRON_SMALL)
        assert final.result is not None and final.result.reason == "crash"
        assert final.view["tick"] >= 1
        await games_done(runner, 1)
    assert runner.answers >= 1


@pytest.mark.parametrize(
    ("protocol", "script"), [("gtp", "gtp_othello.py"), ("nboard", "nboard_othello.py")], ids=["gtp", "nboard"]
)
async def test_othello_engine_plays_a_whole_game(
    protocol: str, script: str, server: ServerProcess, human: Peer, tmp_path: Path
) -> None:
    """A GTP or NBoard Othello engine, fed every move and every pass, plays a human to the last disc (it takes
    white, so it is told moves it did not make from the first ply)."""
    cfg = config(server.url, tmp_path, f"{protocol}bot", "othello", engine(script), protocol)
    async with running(cfg, human):
        final = await challenge_and_play(human, f"{protocol}bot", "othello", seat=0)
    assert final.result is not None and final.result.reason == "discs"
    assert sum(final.result.scores or []) >= 10
    # First-legal play on 8x8 forces passes; the NBoard test engine stops on a record that lacks one.
    assert any(note.kind == "pass" for m in human.seen if m.type == "moved" for note in m.events)
    assert "broken record" not in log_text(cfg)


async def test_contest_bot_rides_a_whole_tron_game(server: ServerProcess, human: Peer, tmp_path: Path) -> None:
    """An unmodified 2010 contest bot (stdin maps, answers 1-4) plays a full two-rider Tron game."""
    cfg = config(server.url, tmp_path, "contest", "tron", engine("tron2010_bot.py"), "tron2010")
    async with running(cfg, human) as runner:
        final = await challenge_and_play(human, "contest", "tron", TRON_SMALL, seat=1)
        await games_done(runner, 1)
    assert final.result is not None and final.result.reason == "crash"
    assert runner.answers >= 1  # the contest bot steered (its answers in time, sent when they turn the rider)


async def test_bot_plays_bot_through_invites(server: ServerProcess, human: Peer, tmp_path: Path) -> None:
    """Two bots play each other: a host opens a room and invites one bot to each seat; both accept and play."""
    first = config(server.url, tmp_path, "gtpone", "othello", engine("gtp_othello.py"), "gtp")
    second = config(server.url, tmp_path, "nbtwo", "othello", engine("nboard_othello.py"), "nboard")
    async with running(first, human), running(second, human):
        room = (await human.request(CreateRoom, game="othello", options={})).room
        await human.request(Join, room=room, role=Role.SPECTATOR)
        for seat, bot in enumerate(("gtpone", "nbtwo")):
            sent = await human.request(Invite, room=room, seat=seat, to=bot)
            assert sent.type == "challenge_sent", sent
            gone = await within(human.expect("challenge_gone", challenge=sent.challenge))
            assert gone.why == "accepted"
        await human.request(Join, room=room, role=Role.SPECTATOR)
        final = await play_out(human, room, None)
    assert final.result is not None and final.result.reason == "discs"
    assert len(final.moves) >= 20


async def test_bot_plays_the_servers_ai(server: ServerProcess, human: Peer, tmp_path: Path) -> None:
    """A bot invited into a room whose other seat holds the server's AI plays it to the end."""
    cfg = config(server.url, tmp_path, "vsai", "connect4", doc_bot(tmp_path), "jsonl")
    async with running(cfg, human):
        room = (await human.request(CreateRoom, game="connect4", options={"ai_pace_ms": 0})).room
        await human.request(Join, room=room, role=Role.SPECTATOR)
        added = await human.request(AddAi, room=room, seat=1, level=1)
        assert added.type == "room", added
        sent = await human.request(Invite, room=room, seat=0, to="vsai")
        gone = await within(human.expect("challenge_gone", challenge=sent.challenge))
        assert gone.why == "accepted"
        final = await play_out(human, room, None)
    assert final.result is not None
    assert final.result.reason in ("four", "draw")


async def test_a_game_the_bot_does_not_play_is_refused_by_the_server(
    server: ServerProcess, human: Peer, tmp_path: Path
) -> None:
    """The bot announces its one game (hello `accepts`): a challenge for another game never reaches it."""
    cfg = config(server.url, tmp_path, "onlyoth", "othello", engine("gtp_othello.py"), "gtp")
    async with running(cfg, human):
        refused = await human.request(ChallengeRequest, to="onlyoth", game="connect4", options={})
    assert refused.type == "error" and refused.code == "not_allowed"


async def test_bot_accepting_bots_only_declines_a_human(server: ServerProcess, human: Peer, tmp_path: Path) -> None:
    """`--accept bots` turns a human's challenge down, with the reason the challenger reads."""
    cfg = config(server.url, tmp_path, "botsonly", "othello", engine("gtp_othello.py"), "gtp", accept="bots")
    async with running(cfg, human) as runner:
        gone = await challenge(human, "botsonly", "othello")
    assert gone.why == "declined" and "bots only" in (gone.reason or "")
    assert runner.games_played == 0


async def test_bot_enters_a_tournament_it_is_invited_to_and_plays_its_games(
    server: ServerProcess, human: Peer, tmp_path: Path
) -> None:
    """Invited into a round robin, the bot accepts by its challenge rules, then plays every game the server seats it
    in (an engine of its own per game) to the tournament's end, and forgets the tournament once it is over."""
    cfg = config(server.url, tmp_path, "tourbot", "connect4", doc_bot(tmp_path), "jsonl")
    async with running(cfg, human) as runner:
        reply = await human.request(
            CreateTournament,
            game="connect4",
            kind="round_robin",
            options={"ai_pace_ms": 0},
            players=["tourbot", "AI level 1"],
        )
        assert reply.type == "tournament" and reply.invited == ["tourbot"], reply
        gone = await within(human.expect("challenge_gone"))
        assert gone.why == "accepted" and gone.tournament == reply.tournament
        final = await until(human, reply.tournament, lambda m: m.status == "finished")
        await games_done(runner, 2)
        assert not runner.entered
    assert [sorted(g["players"]) for g in final.games] == [["AI level 1", "tourbot"]] * 2
    assert all(g["places"] is not None and not g["forfeit"] for g in final.games)
    assert runner.moves_sent >= 4 and runner.answers >= 4  # its engines answered in both games


async def test_bot_accepting_bots_only_declines_a_humans_tournament(
    server: ServerProcess, human: Peer, tmp_path: Path
) -> None:
    """`--accept bots` turns a human host's tournament invitation down with its reason; the tournament, left with
    its host alone, is cancelled and the bot plays nothing."""
    cfg = config(server.url, tmp_path, "botsonly", "othello", engine("gtp_othello.py"), "gtp", accept="bots")
    async with running(cfg, human) as runner:
        reply = await human.request(CreateTournament, game="othello", kind="round_robin", players=["alice", "botsonly"])
        assert reply.type == "tournament" and reply.invited == ["botsonly"], reply
        gone = await within(human.expect("challenge_gone"))
        assert gone.why == "declined" and "bots only" in (gone.reason or "")
        final = await until(human, reply.tournament, lambda m: m.status == "cancelled")
    assert final.dropped == ["botsonly"] and final.games == []
    assert runner.games_played == 0 and not runner.entered


async def test_bot_declines_clocks_shorter_than_its_min_clock(
    server: ServerProcess, human: Peer, tmp_path: Path
) -> None:
    """`--min-clock 60` turns a 1 s blitz down with its reason (an engine would only play fallback moves there), and
    takes 30 s + 1 s increments (30 + 40 increments = 70 s), as lichess reckons a clock's length."""
    cfg = config(server.url, tmp_path, "patient", "connect4", engine("jsonl_echo.py"), "jsonl", min_clock_s=60.0)
    async with running(cfg, human) as runner:
        gone = await challenge(human, "patient", "connect4", {"clock_s": 1})
        assert gone.why == "declined" and "at least 60 s" in (gone.reason or "")
        assert runner.games_played == 0
        taken = await challenge(human, "patient", "connect4", {"clock_s": 30, "increment_s": 1})
        assert taken.why == "accepted"


@pytest.mark.parametrize(("rule", "rated", "taken"), [("no", True, False), ("yes", False, False), ("yes", True, True)])
async def test_bot_takes_rated_or_casual_challenges_as_told(
    rule: str, rated: bool, taken: bool, server: ServerProcess, human: Peer, tmp_path: Path
) -> None:
    """`--rated no` declines rated challenges (nobody farms its rating), `--rated yes` casual ones, saying why."""
    cfg = config(server.url, tmp_path, f"rated{rule}", "connect4", engine("jsonl_echo.py"), "jsonl", rated=rule)
    async with running(cfg, human):
        gone = await challenge(human, f"rated{rule}", "connect4", {"rated": rated})
    assert gone.why == ("accepted" if taken else "declined")
    if not taken:
        assert ("casual" if rule == "no" else "rated") in (gone.reason or "")


async def test_contest_bot_declines_a_four_rider_tron(server: ServerProcess, human: Peer, tmp_path: Path) -> None:
    """A 2010 contest bot takes two-rider games only: a challenge to a 4-rider arena is declined, saying so."""
    cfg = config(server.url, tmp_path, "contest4", "tron", engine("tron2010_bot.py"), "tron2010")
    async with running(cfg, human):
        gone = await challenge(human, "contest4", "tron", {"players": 4, "width": 12, "height": 12})
    assert gone.why == "declined" and "two-rider" in (gone.reason or "")


async def test_bot_at_its_game_limit_declines_until_a_game_ends(
    server: ServerProcess, human: Peer, tmp_path: Path
) -> None:
    """With `--max-games 1` a second challenger is declined as busy while a game runs, and taken once it ended."""
    cfg = config(server.url, tmp_path, "single", "connect4", doc_bot(tmp_path), "jsonl", max_games=1)
    bob = await Peer.connect(server.url, "bob", key="bob-key-0123456789ab")
    try:
        async with running(cfg, human):
            first = await challenge(human, "single", "connect4", seat=0)  # alice moves first: the game waits
            assert first.why == "accepted"
            busy = await challenge(bob, "single", "connect4")
            assert busy.why == "declined" and "busy" in (busy.reason or "")
            await play_out(human, first.room, 0)
            async with asyncio.timeout(60):  # the bot leaves its finished room, then it is free again
                while (again := await challenge(bob, "single", "connect4")).why != "accepted":
                    assert "busy" in (again.reason or "")
                    await asyncio.sleep(0.1)
            final = await play_out(bob, again.room, 0)
            assert final.result is not None
    finally:
        await bob.close()


async def test_challenge_that_expires_while_the_engine_starts_is_dropped(
    start_server: Callable[..., ServerProcess], tmp_path: Path
) -> None:
    """A challenge that expires before the bot's engine is up ends as `expired` for the challenger; the bot ends
    that engine and takes nothing from it (no game, no place held)."""
    server = start_server("--limit", "challenge_s=1")
    human = await Peer.connect(server.url, "alice", key="alice-key-0123456789")
    slow = engine("slow_start.py", "4", sys.executable, str(ENGINES / "nboard_othello.py"))
    cfg = config(server.url, tmp_path, "sleepy", "othello", slow, "nboard")
    try:
        async with running(cfg, human) as runner:
            gone = await challenge(human, "sleepy", "othello")
            assert gone.why == "expired"
            async with asyncio.timeout(60):
                while runner.pending or runner._closing:
                    await asyncio.sleep(0.05)
            assert runner.seats == {} and runner.games_played == 0
    finally:
        await human.close()


async def test_a_claimed_bot_name_is_refused_without_its_key(
    server: ServerProcess, human: Peer, tmp_path: Path
) -> None:
    """The first run claims the bot's name with a key kept in a 0600 file; another key file cannot use that
    name, and the same key file can again."""
    cfg = config(server.url, tmp_path, "rhino", "othello", engine("gtp_othello.py"), "gtp")
    async with running(cfg, human):
        pass
    assert cfg.key_file is not None and stat.S_IMODE(cfg.key_file.stat().st_mode) == 0o600
    other = config(server.url, tmp_path / "elsewhere", "RHINO", "othello", engine("gtp_othello.py"), "gtp")
    assert other.key_file is not None
    with pytest.raises(Refused, match="claimed"):
        await within(BotRunner(other, bot_key(other.key_file)).run())
    async with running(cfg, human):  # the owner comes back with the same key file
        pass


async def test_a_bot_for_a_game_the_server_lacks_is_refused(server: ServerProcess, tmp_path: Path) -> None:
    """A bot for a game the server does not have stops at once, refused with the reason (it does not sit there
    unable to take a challenge)."""
    cfg = config(server.url, tmp_path, "chessbot", "chess", engine("gtp_othello.py"), "gtp")
    assert cfg.key_file is not None
    with pytest.raises(Refused, match="chess"):
        await within(BotRunner(cfg, bot_key(cfg.key_file)).run())


async def test_late_engine_plays_the_fallback_and_logs_it(
    server: ServerProcess, human: Peer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An engine slower than the room's move time (ai_ms) costs no game: the first legal move is played in its
    place, the log says so, and the game goes on to its end."""
    caplog.set_level(logging.INFO, logger="gamenight.bot")
    cfg = config(server.url, tmp_path, "slowpoke", "othello", engine("gtp_othello.py", "--slow-ms", "3000"), "gtp")
    async with running(cfg, human):
        final = await challenge_and_play(human, "slowpoke", "othello", {"ai_ms": 300}, seat=0)
    assert final.result is not None and final.result.reason == "discs"
    assert "engine late" in caplog.text and "fallback move" in caplog.text


async def test_illegal_engine_resigns(
    server: ServerProcess, human: Peer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An engine answering a move that is not legal resigns the game at once (its seat loses by resignation)."""
    caplog.set_level(logging.INFO, logger="gamenight.bot")
    cfg = config(server.url, tmp_path, "cheater", "othello", engine("gtp_othello.py", "--illegal"), "gtp")
    async with running(cfg, human):
        final = await challenge_and_play(human, "cheater", "othello", seat=0)
    assert final.result is not None and final.result.reason == "resign" and final.result.loser == 1
    assert "illegal" in caplog.text


async def test_crashing_engine_is_restarted_once_then_resigns(
    server: ServerProcess, human: Peer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An engine that crashes is restarted once and fed the game so far (it plays on); a second crash resigns."""
    caplog.set_level(logging.INFO, logger="gamenight.bot")
    cfg = config(server.url, tmp_path, "fragile", "othello", engine("gtp_othello.py", "--crash-after", "1"), "gtp")
    async with running(cfg, human):
        final = await challenge_and_play(human, "fragile", "othello", seat=0)
    assert final.result is not None and final.result.reason == "resign" and final.result.loser == 1
    assert caplog.text.count("restarting it once") == 1
    # genmove 1 of the first process, then genmove 1 of the restarted one: two moves of white are on the board
    assert len(final.moves) >= 4


@pytest.mark.skipif(GTP_RHINO is None, reason="gtp-rhino is not installed (Debian package grhino; .ci/run installs it)")
async def test_gtp_rhino_plays_a_whole_othello_game(server: ServerProcess, human: Peer, tmp_path: Path) -> None:
    """The real GRhino engine, `gtp-rhino --level 1`, seated by gamenight-bot, plays a full Othello game."""
    assert GTP_RHINO is not None
    cfg = config(server.url, tmp_path, "grhino", "othello", f"{GTP_RHINO} --level 1", "gtp")
    async with running(cfg, human):
        final = await challenge_and_play(human, "grhino", "othello", seat=0)
    assert final.result is not None and final.result.reason == "discs"
    assert len(final.moves) >= 20


def engine_processes(marker: str) -> list[int]:
    """The pids of running processes whose command line contains `marker` (zombies, already dead, excluded)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            status = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in command and status != "Z":
            found.append(int(proc.name))
    return found


async def test_the_command_plays_and_stops_cleanly_on_sigterm(
    server: ServerProcess, human: Peer, tmp_path: Path
) -> None:
    """`python -m gamenight.client.bot ...` (the gamenight-bot command) makes its key file, plays a challenge,
    and on SIGTERM resigns the game in progress, ends its engine (no process left behind) and exits 0."""
    bot = doc_bot(tmp_path)
    key_file, logs = tmp_path / "keys" / "cli.key", tmp_path / "cli-logs"
    command = [sys.executable, "-m", "gamenight.client.bot", server.url, "--name", "clibot", "--game", "connect4"]
    command += ["--engine", bot, "--protocol", "jsonl", "--key-file", str(key_file), "--log-dir", str(logs)]
    proc = await asyncio.create_subprocess_exec(*command, stderr=asyncio.subprocess.DEVNULL)
    try:
        await until_online(human, "clibot")
        gone = await challenge(human, "clibot", "connect4", seat=1)  # the bot moves first
        assert gone.why == "accepted"
        state = await within(human.wait(lambda m: m.type == "state" and m.room == gone.room and 1 in m.to_move))
        assert len(state.moves) == 1  # the bot's engine made the first move
        assert engine_processes(bot.split()[-1])  # its engine runs
        proc.send_signal(signal.SIGTERM)
        assert await within(proc.wait()) == 0
        final = await play_out(human, gone.room, 1)
        assert final.result is not None and final.result.reason == "resign" and final.result.loser == 0
        assert engine_processes(bot.split()[-1]) == []
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        assert "accepting connect4 from alice" in (logs / "clibot.log").read_text()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def free_port() -> int:
    """A loopback port nothing listens on now (for a server restarted on the same address)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_bot_resumes_its_game_after_the_server_restarts(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The server dies mid-game and comes back: the bot reconnects with its resume token, gets its seat back,
    catches its engine up on the moves it missed (a GTP engine keeps its own board) and plays the game out."""
    caplog.set_level(logging.INFO, logger="gamenight.bot")
    port, db = free_port(), tmp_path / "games.db"
    server = ServerProcess(db, *NO_ROOM_CAPS, "--port", str(port)).start()
    human = await Peer.connect(server.url, "alice", key="alice-key-0123456789")
    cfg = config(server.url, tmp_path, "phoenix", "othello", engine("gtp_othello.py"), "gtp")
    try:
        async with running(cfg, human) as runner:
            gone = await challenge(human, "phoenix", "othello", seat=0)
            room = gone.room
            for _ in range(3):  # three moves each
                state = await within(human.wait(lambda m: m.type == "state" and m.room == room and 0 in m.to_move))
                await human.send(MakeMove(room=room, move=state.legal[0], seq=state.seq))
            await within(human.wait(lambda m: m.type == "state" and m.room == room and len(m.moves) == 6))
            assert human.welcome is not None
            token = human.welcome.token
            server.kill()
            await human.close()
            server = ServerProcess(db, *NO_ROOM_CAPS, "--port", str(port)).start()
            human = await Peer.connect(server.url, "alice", key="alice-key-0123456789", resume=token)
            final = await play_out(human, room, 0)
            await games_done(runner, 1)
        assert final.result is not None and final.result.reason == "discs"
        assert len(final.moves) > 10
        assert "reconnecting" in caplog.text and "seat resumed" in caplog.text
        assert "resign" not in caplog.text and "restarting" not in caplog.text
    finally:
        await human.close()
        if server.proc is not None and server.proc.poll() is None:
            server.kill()


async def test_processes_an_engine_starts_end_with_it(server: ServerProcess, human: Peer, tmp_path: Path) -> None:
    """An engine run through a shell that starts a helper process of its own leaves nothing running once its
    game is over: the engine's whole process group is ended."""
    marker = "sleep 313.25"
    command = f'sh -c "{marker} & exec {engine("gtp_othello.py")}"'
    cfg = config(server.url, tmp_path, "shelled", "othello", command, "gtp")
    async with running(cfg, human):
        gone = await challenge(human, "shelled", "othello", seat=0)
        async with asyncio.timeout(60):  # the engine's shell starts its helper
            while not engine_processes(marker):
                await asyncio.sleep(0.05)
        final = await play_out(human, gone.room, 0)
        assert final.result is not None
        async with asyncio.timeout(60):
            while engine_processes(marker):
                await asyncio.sleep(0.05)


def turns_seen(cfg: Any) -> list[dict[str, Any]]:
    """What the echo engine reported of each turn (from its stderr log)."""
    return [json.loads(line) for line in log_text(cfg).splitlines() if line.startswith("{")]


@pytest.mark.parametrize("clocked", [False, True], ids=["ai_ms", "clock"])
async def test_engine_gets_the_rooms_time_less_the_overhead(
    clocked: bool, server: ServerProcess, human: Peer, tmp_path: Path
) -> None:
    """Without a clock each answer may take the room's ai_ms less --move-overhead-ms; with one, the engine is told
    its time left on the clock and may use that less the overhead."""
    cfg = config(server.url, tmp_path, "timed", "connect4", engine("jsonl_echo.py"), "jsonl", move_overhead_ms=100)
    options = {"clock_s": 60} if clocked else {"ai_ms": 700}
    async with running(cfg, human):
        final = await challenge_and_play(human, "timed", "connect4", options, seat=0)
    assert final.result is not None
    turns = turns_seen(cfg)
    assert len(turns) >= 3 and [t["moves"] for t in turns] == list(range(1, 2 * len(turns), 2))
    for turn in turns:
        if clocked:
            assert 0 < turn["clock_ms"] <= 60_000 and turn["time_ms"] <= turn["clock_ms"] - 100
        else:
            assert turn["clock_ms"] is None and 0 < turn["time_ms"] <= 600


async def test_a_bot_waiting_for_challenges_is_not_closed_as_idle(
    start_server: Callable[..., ServerProcess], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A bot in no room stays connected past the server's idle limit (it asks who is online now and then), so it
    keeps its session and stays listed without dropping off and coming back."""
    caplog.set_level(logging.INFO, logger="gamenight.bot")
    server = start_server("--limit", "idle_timeout_s=2")
    watcher = await Peer.connect(server.url, "watcher")
    cfg = config(server.url, tmp_path, "patient", "othello", engine("gtp_othello.py"), "gtp", keepalive_s=0.2)
    try:
        async with running(cfg, watcher):
            # The watcher itself is idle-closed by the server after 2 s; the bot, through 3 such periods, is not.
            with pytest.raises(ConnectionClosed):
                await within(watcher.wait(lambda m: False))
            await asyncio.sleep(4)
            watcher = await Peer.connect(server.url, "watcher")
        assert "connection" not in caplog.text.replace("connected to", "")  # never lost, never reconnected
    finally:
        await watcher.close()


async def test_tron_engine_too_slow_for_the_ticks_keeps_its_direction(
    server: ServerProcess, human: Peer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A Tron engine that cannot answer within a tick costs no rule: each tick it misses, its rider keeps its
    direction (nothing is sent), the log says so, and the game runs to its end."""
    caplog.set_level(logging.INFO, logger="gamenight.bot")
    slow = engine("jsonl_echo.py", "--sleep-ms", "600")  # longer than any tick's budget below (at most 250 ms)
    cfg = config(server.url, tmp_path, "sloth", "tron", slow, "jsonl")
    async with running(cfg, human) as runner:
        final = await challenge_and_play(human, "sloth", "tron", TRON_SMALL, seat=1)
        await games_done(runner, 1)
    assert final.result is not None and final.result.reason == "crash"
    assert "fallback: keep direction" in caplog.text
    assert runner.moves_sent == 0 and runner.answers == 0


async def test_bot_plays_several_games_at_once_and_the_pending_cap_holds(
    server: ServerProcess, human: Peer, tmp_path: Path
) -> None:
    """A bot with --max-games 3 takes three challenges made while its engines start (a fourth from the same
    challenger is refused by the server, too_many) and plays the three games at once on its one connection."""
    slow = engine("slow_start.py", "2", sys.executable, str(ENGINES / "nboard_othello.py"))  # up after its ping
    cfg = config(server.url, tmp_path, "juggler", "othello", slow, "nboard", max_games=3)
    async with running(cfg, human) as runner:
        sent = [await human.request(ChallengeRequest, to="juggler", game="othello", options={}) for _ in range(3)]
        assert [s.type for s in sent] == ["challenge_sent"] * 3
        refused = await human.request(ChallengeRequest, to="juggler", game="othello", options={})
        assert refused.type == "error" and refused.code == "too_many"
        rooms = []
        for offer in sent:
            gone = await within(human.expect("challenge_gone", challenge=offer.challenge))
            assert gone.why == "accepted"
            rooms.append(gone.room)
        assert len(set(rooms)) == 3  # three rooms open at once, each waiting for the human
        for room in rooms:  # the human moves first in each; the bot answers in all three
            final = await play_out(human, room, 0)
            assert final.result is not None and len(final.moves) >= 20
        await games_done(runner, 3)


async def test_a_snapshot_tells_a_bot_who_made_each_move_passes_included(server: ServerProcess) -> None:
    """A full state lists who made each move (`movers`), from which a bot that missed moves rebuilds the game's
    history with its passes, exactly as it would have seen them move by move (first-legal Othello passes)."""
    black, white = await Peer.connect(server.url, "black"), await Peer.connect(server.url, "white")
    code = (await black.request(CreateRoom, game="othello", options={})).room
    await black.request(Join, room=code, seat=0)
    await white.request(Join, room=code, seat=1)
    seen: list[tuple[int, str | None]] = []
    state = await black.at(code, 1)
    while state.status == "playing" and not any(move is None for _, move in seen):
        mover = (black, white)[state.to_move[0]]
        legal = (await mover.at(code, state.seq)).legal
        await mover.send(MakeMove(room=code, move=legal[0], seq=state.seq))
        after = state.seq + 1
        moved = await black.wait(lambda m, after=after: m.type == "moved" and m.room == code and m.seq == after)
        seen.append((moved.seat, moved.move))
        seen.extend((note.data["seat"], None) for note in moved.events if note.kind == "pass")
        state = await black.at(code, after)
    assert any(move is None for _, move in seen), "first-legal Othello reaches a pass"
    snapshot = await white.request(Sync, room=code, seq=0)
    assert snapshot.type == "state" and len(snapshot.movers) == len(snapshot.moves)
    pairs = list(zip(snapshot.movers, snapshot.moves, strict=True))
    assert with_passes(pairs, 2, snapshot.to_move) == seen
    for peer in (black, white):
        await peer.close()
