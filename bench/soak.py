"""Honest soak: pairs play Othello at a human pace, a new room after each game; what the server keeps per game.

    python bench/soak.py [--pairs 100] [--minutes 10] [--early 2] [--move-ms 500] [--after 60] [--json]
    python bench/soak.py --short      # 60 pairs, 2.5 minutes, early mark at 0.5, 30 s after everyone left
    python bench/soak.py --breakdown  # also where the memory is: SQLite, the C heap (used / free), Python blocks

Starts `python -m gamenight.server` on a fresh SQLite file and opens `--pairs` pairs of players (each pair from a
loopback address of its own, 127.0.1.N, as people from many hosts: no per-address cap is what is measured). In
each pair one opens a public Othello room, both sit down and play random legal moves, each move `--move-ms`
(jittered ±50%) after the state that allowed it; when the game ends both leave and the next game is a new room.
After `--minutes` everyone disconnects. A finished room stays open a minute while its host is connected, so the
server is started with `--limit public_rooms=1000` (fast pairs open more than the default 300 a minute); the
bench stops with the refusal if a room is refused all the same.

Reported: the server's RSS at the early mark (`--early` minutes in) and at the end, the games finished between
them and the RSS growth per finished game (KiB); the RSS `--after` seconds after everyone left, against the early
figure. Targets (issue 37): under 0.5 KiB per finished game, and back within 20% of the early figure.

With `--breakdown` the server runs under bench/memprobe.py, which samples in the server's process what SQLite holds,
glibc's heap in use and free, and Python's allocated blocks; the report gives each at the early mark, at the end
and after everyone left, and its growth per finished game.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.hostile import Player, rss_mib, start_server  # noqa: E402
from bench.load import launch  # noqa: E402
from gamenight.protocol import PROTOCOL_VERSION, encode  # noqa: E402
from gamenight.protocol.messages import CreateRoom, Hello, Join, Leave, MakeMove, RoomInfo, State  # noqa: E402

SAMPLE_EVERY_S = 2.0  # how often the server's RSS is read


async def _player(url: str, name: str, address: str) -> Player:
    """A connected player that said hello (from loopback `address`) and read its welcome."""
    ws: ClientConnection = await connect(url, max_size=1 << 22, local_addr=(address, 0))
    player = Player(ws)
    await player.until(lambda m: m.type == "hello_nonce")
    await ws.send(encode(Hello(protocol=PROTOCOL_VERSION, name=name)))
    await player.until(lambda m: m.type == "welcome")
    return player


async def _game(pair: tuple[Player, Player], rng: random.Random, move_s: float, ids: list[int]) -> None:
    """One game in a new room: the first of the pair opens it, both sit and play it out, both leave."""
    host, guest = pair
    ids[0] += 1
    await host.ws.send(encode(CreateRoom(game="othello", options={}, id=ids[0])))
    opened = await host.until(lambda m, i=ids[0]: m.id == i)
    if not isinstance(opened, RoomInfo):
        raise RuntimeError(f"the room was refused: {opened}")
    code = opened.room
    host.state = guest.state = None
    await host.ws.send(encode(Join(room=code, seat=0)))
    await guest.ws.send(encode(Join(room=code, seat=1)))
    seats = (host, guest)
    seq = 0
    while True:
        state = await host.at(seq)
        if state.room != code:  # the previous room's last state: wait for this room's first
            seq = 0
            await host.until(lambda m: isinstance(m, State) and m.room == code)
            continue
        if state.status == "finished":
            break
        mover = seats[state.to_move[0]]
        mine = await mover.at(state.seq)  # `legal` goes to the mover only
        await asyncio.sleep(move_s * rng.uniform(0.5, 1.5))
        await mover.ws.send(encode(MakeMove(room=code, move=rng.choice(mine.legal), seq=state.seq)))
        seq = state.seq + 1
    for player in seats:
        await player.ws.send(encode(Leave(room=code)))
        player.clear()


async def _pair(
    url: str, n: int, move_s: float, stop: asyncio.Event, finished: list[float], errors: list[str]
) -> tuple[Player, ...]:
    """Pair `n` plays game after game until `stop`; appends the time each game finished to `finished`, and why it
    stopped early, if it did, to `errors`."""
    address = f"127.0.1.{n + 1}"
    pair = (await _player(url, f"host{n}", address), await _player(url, f"guest{n}", address))
    rng, ids = random.Random(n), [0]

    async def play() -> None:
        try:
            while not stop.is_set():
                await _game(pair, rng, move_s, ids)
                finished.append(time.monotonic())
        except ConnectionClosed:
            if not stop.is_set():
                errors.append(f"pair {n}: the connection closed")
        except (RuntimeError, TimeoutError) as exc:
            errors.append(f"pair {n}: {exc!r}")

    asyncio.get_running_loop().create_task(play())
    return pair


async def run(args: argparse.Namespace) -> dict[str, Any]:
    """Start the server, play for `--minutes`, let everyone go, wait `--after`; the figures."""
    folder = tempfile.mkdtemp(prefix="gamenight-soak-")
    db, limits = str(Path(folder) / "games.db"), ("public_rooms=1000",)
    probe = Path(folder) / "memory.jsonl" if args.breakdown else None
    if probe is None:
        proc, url = start_server(db, limits)
    else:
        flags = ["--port", "0", "--db", db, "--log-level", "error", *(a for v in limits for a in ("--limit", v))]
        proc, url = launch([sys.executable, str(ROOT / "bench" / "memprobe.py"), str(probe), *flags])
    stop = asyncio.Event()
    finished: list[float] = []
    errors: list[str] = []  # pairs that stopped before the end, and why
    samples: list[tuple[float, float]] = []  # (seconds since the start, RSS MiB)
    try:
        start = time.monotonic()
        pairs = [await _pair(url, n, args.move_ms / 1000, stop, finished, errors) for n in range(args.pairs)]
        end = start + args.minutes * 60
        early_at = start + args.early * 60
        rss_early = games_early = None
        while time.monotonic() < end:
            await asyncio.sleep(SAMPLE_EVERY_S)
            samples.append((round(time.monotonic() - start, 1), rss_mib(proc.pid)))
            if rss_early is None and time.monotonic() >= early_at:
                rss_early, games_early = samples[-1][1], len(finished)
        rss_end, games_end = rss_mib(proc.pid), len(finished)
        end_at = time.monotonic() - start
        stop.set()
        for pair in pairs:
            for player in pair:
                await player.ws.close()
        await asyncio.sleep(args.after)
        rss_left = rss_mib(proc.pid)
        left_at = time.monotonic() - start
        alive = proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(15)
    assert rss_early is not None and games_early is not None
    games = games_end - games_early
    marks = (args.early * 60, end_at, left_at)
    breakdown = memory_breakdown(probe, marks, games) if probe is not None else {}
    return {
        "pairs": args.pairs,
        "minutes": args.minutes,
        "move_ms": args.move_ms,
        "games_total": games_end,
        "games_measured": games,
        "rss_start_mib": round(samples[0][1], 2),
        "rss_early_mib": round(rss_early, 2),
        "rss_end_mib": round(rss_end, 2),
        "rss_after_leaving_mib": round(rss_left, 2),
        "kib_per_game": round((rss_end - rss_early) * 1024 / max(games, 1), 3),
        "after_vs_early": round(rss_left / rss_early, 3),
        "server_alive": alive,
        "pairs_stopped": errors,
        "samples": samples,
        "breakdown": breakdown,
    }


def memory_breakdown(probe: Path, marks: tuple[float, float, float], games: int) -> dict[str, dict[str, float]]:
    """Each figure bench/memprobe.py sampled, at the samples nearest the early mark, the end and after everyone left
    (seconds since the start), and its growth from the early mark to the end per finished game (KiB)."""
    rows = [json.loads(line) for line in probe.read_text().splitlines() if line.strip()]
    if not rows:
        return {}
    # The probe's clock starts with the server, a moment before the bench's: close enough for 2 s samples.
    nearest = [min(rows, key=lambda row, at=at: abs(row["t"] - at)) for at in marks]
    figures = {}
    for field in ("rss_kib", "sqlite_kib", "malloc_used_kib", "malloc_free_kib", "blocks"):
        if all(field in row for row in nearest):
            early, end, left = (row[field] for row in nearest)
            figures[field] = {
                "early": early,
                "end": end,
                "left": left,
                "per_game": round((end - early) / max(games, 1), 3),
            }
    return figures


def main() -> int:
    """Parse the command line, run, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=100, help="pairs playing at once (at most 250)")
    parser.add_argument("--minutes", type=float, default=10.0, help="how long they play")
    parser.add_argument("--early", type=float, default=2.0, help="the early mark, in minutes (growth counted after)")
    parser.add_argument("--move-ms", type=float, default=500.0, help="a player's thinking time per move (±50%)")
    parser.add_argument("--after", type=float, default=60.0, help="seconds waited after everyone left")
    parser.add_argument("--short", action="store_true", help="60 pairs, 2.5 minutes, early 0.5, after 30 s")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--breakdown", action="store_true", help="sample where the server's memory is (memprobe)")
    args = parser.parse_args()
    if args.short:
        args.pairs, args.minutes, args.early, args.after = 60, 2.5, 0.5, 30.0
    if not 1 <= args.pairs <= 250 or not 0 < args.early < args.minutes:
        parser.error("--pairs must be 1-250 and --early between 0 and --minutes")
    report = asyncio.run(run(args))
    errors = report["pairs_stopped"]
    if args.json:
        print(json.dumps(report))
    else:
        print(
            f"{report['pairs']} pairs, {report['minutes']} min, {report['games_total']} games "
            f"({report['games_measured']} after the early mark): RSS {report['rss_start_mib']} at start, "
            f"{report['rss_early_mib']} early, {report['rss_end_mib']} at the end -> "
            f"{report['kib_per_game']} KiB per finished game; {report['rss_after_leaving_mib']} MiB "
            f"{args.after:.0f} s after everyone left ({report['after_vs_early']}x the early figure); "
            f"server alive: {report['server_alive']}; pairs stopped early: {len(errors)} {errors[:1]}"
        )
        for field, figure in report["breakdown"].items():
            print(
                f"  {field:>16}: {figure['early']} early, {figure['end']} at the end, {figure['left']} after leaving; "
                f"{figure['per_game']} per finished game"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
