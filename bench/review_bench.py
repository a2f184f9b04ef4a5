"""How long a game review takes, and what it costs the live games: a 60-move Othello game at the review budget.

    python bench/review_bench.py [--budget-ms 800] [--seed 36]
    python bench/review_bench.py --load [--games 100] [--repeat 3] [--quiet-s 15] [--ai-ms 200] [--json] [--quick]

Plays a 60-move 8x8 Othello game (level 3 against level 3 with 50 ms a move, from the seed; a shorter game is
replayed with the next seed), then assesses its 61 positions one after the other with `assess` at the budget,
as one AI worker does for the server (server/review_runner.py), and prints the total time, the slowest position,
how many positions were exact, and the labels the report gives. The target is at most 60 s on the 2-core machine.

With `--load`, the review runs where it does for players: in a real server (`gamenight-server`, two AI workers, a
fresh SQLite file holding that game) while `--games` paced human-speed games run over real websockets
(bench/load.py's players at one message a second, from niced worker processes). One run measures, in the same
server and load: `--quiet-s` seconds with no review, then, from the moment a client asks for the game's analysis
(`analyse`) until it arrives, the same games with the review running in the AI pool, then the rest of the run's
window with no review again (the window is long enough for the review on one worker plus a margin). It prints the
move round trip (move sent -> its `moved`) p50 and p99 in each window and the p99's ratio, reviewing over no review
(the windows before and after, together; `p99_ratio_quiet`: over the one before), and a live game's AI turn
latency (a client playing a level-5 AI at `--ai-ms` a move: its move sent -> the AI's `moved`) with and without
the review; `--repeat` runs give the medians. `--quick` is a smoke run (10 games, a 20 ms budget, short windows,
one run).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import load  # noqa: E402
from websockets.asyncio.client import connect  # noqa: E402

from gamenight.protocol import PROTOCOL_VERSION  # noqa: E402
from gamenight.protocol.messages import (  # noqa: E402
    AddAi,
    Analyse,
    Analysis,
    CreateRoom,
    Hello,
    Join,
    MakeMove,
    Message,
    Moved,
    State,
)
from gamenight.server.ai.analysis import assess_plain  # noqa: E402
from gamenight.server.ai.play import choose_move  # noqa: E402
from gamenight.server.games import REGISTRY  # noqa: E402
from gamenight.server.metrics import percentiles  # noqa: E402
from gamenight.server.records import GameFinished  # noqa: E402
from gamenight.server.review_report import DEFAULT_BUDGET_MS, analyse  # noqa: E402
from gamenight.server.store import Store  # noqa: E402

MOVES = 60
AI_LEVEL = 5
AI_WORKERS = 2  # the server's AI processes: one per core on the 2-core machine
REVIEW_SLACK_S = 20.0  # how much longer than one worker's 61 budgets the review window may last


def sixty_move_game(seed: int) -> list[str]:
    """A 60-move Othello game between two level-3 AIs (50 ms a move), the first seed from `seed` that gives one."""
    rules = REGISTRY["othello"].rules
    while True:
        rng = random.Random(seed)
        state, moves = rules.initial_state(rules.validate_options({})), []
        while rules.outcome(state) is None:
            (seat,) = rules.to_move(state)
            text, _ = choose_move("othello", state, seat, level=3, budget_ms=50, seed=rng.randrange(2**32))
            moves.append(text)
            state = rules.apply(state, {seat: rules.parse_move(state, text)})
        if len(moves) == MOVES:
            return moves
        seed += 1


def time_review(moves: list[str], budget_ms: int) -> None:
    """Review one game position by position in this process, as one AI worker does, and print the figures."""
    times, values = [], []
    for ply in range(len(moves) + 1):
        start = time.perf_counter()
        values.append(assess_plain("othello", {}, moves, ply, budget_ms))
        times.append(time.perf_counter() - start)
    analysis = analyse("othello", {}, moves, values, budget_ms)
    labels = [move["label"] for move in analysis["moves"] if move["label"]]
    exact = sum(value["exact"] for value in values)
    print(f"othello, {len(moves)} moves, {len(values)} positions at {budget_ms} ms")
    print(f"total {sum(times):.1f} s, slowest position {max(times) * 1000:.0f} ms, exact {exact} of {len(values)}")
    print(f"labels: {', '.join(f'{labels.count(name)} {name}' for name in ('blunder', 'mistake', 'inaccuracy'))}")
    print("summary:", analysis["summary"])


# -- under load --------------------------------------------------------------------------------------------------


class AiOpponent(load.Player):
    """Plays Othello against a level-5 AI as fast as the AI answers, timing each AI turn (its move sent -> the AI's
    `moved`); a new room once a game ends."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.turns: list[tuple[float, float]] = []  # (when the AI's move came, its latency in ms)
        self.over = asyncio.Event()

    async def on_message(self, msg: Message) -> None:
        """Time the AI's answer, then move if it is our turn; note the end of a game."""
        now = time.monotonic()
        if isinstance(msg, Moved) and msg.seat != 0 and self.sent_at is not None:
            self.turns.append((now, (now - self.sent_at) * 1000))
            self.sent_at = None
        if isinstance(msg, (Moved, State)):
            if msg.status == "finished" if isinstance(msg, State) else any(e.kind == "game_over" for e in msg.events):
                self.over.set()
            elif 0 in msg.to_move and msg.legal and not self.window.stopping(now):
                move = self.rng.choice(msg.legal)
                await self.send(MakeMove(room=self.room or "", move=move, seq=msg.seq), timed=True)
        await super().on_message(msg)

    async def play_games(self, ai_ms: int, stop_at: float) -> None:
        """Room after room against the AI until `stop_at`."""
        while time.monotonic() < stop_at:
            self.over.clear()
            options = {"ai_ms": ai_ms, "ai_pace_ms": 0}
            self.room = (await self.request(CreateRoom, game="othello", options=options)).room  # type: ignore[attr-defined]
            await self.request(Join, room=self.room, seat=0)
            await self.request(AddAi, room=self.room, seat=1, level=AI_LEVEL)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.over.wait(), max(0.0, stop_at - time.monotonic()))


async def _client(url: str, kind: type[load.Player], name: str, window: load.Window) -> load.Player:
    """One greeted connection of `kind`, its reader running."""
    ws = await connect(url, max_size=2**20, compression=None, ping_interval=None)
    player = kind(ws, window, load.Tally(), 15.0, random.Random(name))
    asyncio.get_running_loop().create_task(player.read())
    await player.request(Hello, protocol=PROTOCOL_VERSION, name=name)
    return player


async def side_clients(url: str, game_id: int, ai_ms: int, review_at: float, stop_at: float) -> dict[str, Any]:
    """In this process: the AI game through both windows, and at `review_at` the request for the game's analysis;
    when the analysis came (None if not before `stop_at`) and the AI turns' times."""
    window = load.Window()
    window.measure_at, window.started = time.monotonic(), True
    window.stop_at = stop_at
    ai = await _client(url, AiOpponent, "review-bench-ai", window)
    asker = await _client(url, load.Player, "review-bench", window)
    assert isinstance(ai, AiOpponent)
    playing = asyncio.get_running_loop().create_task(ai.play_games(ai_ms, stop_at))
    await asyncio.sleep(max(0.0, review_at - time.monotonic()))
    reply = await asker.request(Analyse, game_id=game_id)
    done_at: float | None = None
    if not isinstance(reply, Analysis):
        arrived = asyncio.get_running_loop().create_future()
        original = asker.on_message

        async def watch(msg: Message) -> None:
            if isinstance(msg, Analysis) and msg.game_id == game_id and not arrived.done():
                arrived.set_result(time.monotonic())
            await original(msg)

        asker.on_message = watch  # type: ignore[method-assign]
        try:
            done_at = await asyncio.wait_for(arrived, max(0.0, stop_at - time.monotonic()))
        except TimeoutError:
            done_at = None
    await playing
    await asyncio.gather(ai.ws.close(), asker.ws.close(), return_exceptions=True)
    return {"review_done_at": done_at, "ai_turns": ai.turns, "stored": isinstance(reply, Analysis)}


def _window(samples: list[tuple[float, float]], start: float, end: float) -> list[float]:
    """The values of the (time, value) samples inside [start, end)."""
    return [value for at, value in samples if start <= at < end]


def stored_game(db: str, moves: list[str]) -> int:
    """Put the finished game into a fresh database file, as the server stores one; its game id."""
    store = Store(db)
    players = [{"seat": 0, "label": "black", "name": "ann"}, {"seat": 1, "label": "white", "name": "bob"}]
    store.write([GameFinished("BENCH", 0, "othello", {}, players, {"winner": None, "reason": "discs"}, moves, "")])
    store.close()
    return 1


def loaded_run(args: argparse.Namespace, moves: list[str]) -> dict[str, Any]:
    """One run: the server, the paced games, the quiet window, then the review window (see the module docstring)."""
    with tempfile.TemporaryDirectory(prefix="gamenight-review-") as folder:
        db = str(Path(folder) / "review.db")
        game_id = stored_game(db, moves)
        extra = ("--limit", f"review_ms={args.budget_ms}")
        target = load.start_target("game", "othello", AI_WORKERS, db, extra)
        review_s = (len(moves) + 1) * args.budget_ms / 1000 + REVIEW_SLACK_S
        seconds = args.quiet_s + review_s
        paced = load.Load(connections=2 * args.games, rate=args.rate, warmup=args.warmup, seconds=seconds)
        run = load.Run(paced, target, check=True)
        try:
            for plan in run.plans:
                run.spawn(plan)
            for _, pipe in run.workers:
                run.expect(pipe, "ready")
            measure_at = time.monotonic() + paced.warmup
            review_at, stop_at = measure_at + args.quiet_s, measure_at + paced.seconds
            for _, pipe in run.workers:
                pipe.send(("go", measure_at, stop_at))
            side = asyncio.run(side_clients(target.url, game_id, args.ai_ms, review_at, stop_at))
            results = [run.expect(pipe, "done") for _, pipe in run.workers]
        finally:
            run.stop_workers()
            target.stop()
    done_at = side["review_done_at"] or stop_at
    tallies = [result["tally"] for result in results]
    rtts = [sample for tally in tallies for sample in zip(tally["rtt_at"], tally["rtt_ms"], strict=True)]
    quiet, reviewing = _window(rtts, measure_at, review_at), _window(rtts, review_at, done_at)
    after = _window(rtts, done_at, stop_at)
    turns = side["ai_turns"]
    figures = {
        "review_s": round(done_at - review_at, 1) if side["review_done_at"] else None,
        "quiet": percentiles(quiet),
        "reviewing": percentiles(reviewing),
        "after": percentiles(after),  # the rest of the window, the review done: a second figure with none running
        "no_review": percentiles(quiet + after),
        "ai_quiet": percentiles(_window(turns, measure_at, review_at) + _window(turns, done_at, stop_at)),
        "ai_reviewing": percentiles(_window(turns, review_at, done_at)),
        "problems": sum(result["problem_count"] for result in results),
        "lost": sum(result["tally"]["lost"] for result in results),
    }
    if quiet and after and reviewing:
        figures["p99_ratio"] = round(figures["reviewing"]["p99"] / max(1e-9, figures["no_review"]["p99"]), 3)
        figures["p99_ratio_quiet"] = round(figures["reviewing"]["p99"] / max(1e-9, figures["quiet"]["p99"]), 3)
    return figures


def medians(runs: list[dict[str, Any]]) -> dict[str, float]:
    """The median over the runs of each headline figure."""
    paths = {
        "review_s": ("review_s",),
        "rtt_p50_quiet": ("quiet", "p50"),
        "rtt_p50_reviewing": ("reviewing", "p50"),
        "rtt_p99_quiet": ("quiet", "p99"),
        "rtt_p99_reviewing": ("reviewing", "p99"),
        "rtt_p99_after": ("after", "p99"),
        "rtt_p99_no_review": ("no_review", "p99"),
        "p99_ratio": ("p99_ratio",),
        "p99_ratio_quiet": ("p99_ratio_quiet",),
        "ai_p50_quiet": ("ai_quiet", "p50"),
        "ai_p50_reviewing": ("ai_reviewing", "p50"),
        "ai_p99_quiet": ("ai_quiet", "p99"),
        "ai_p99_reviewing": ("ai_reviewing", "p99"),
        "ai_max_reviewing": ("ai_reviewing", "max"),
    }
    found = {name: load.median_of(runs, *path) for name, path in paths.items()}
    return {name: value for name, value in found.items() if value is not None}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (`--quick` sets the smoke run's sizes)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget-ms", type=int, default=DEFAULT_BUDGET_MS)
    parser.add_argument("--seed", type=int, default=36)
    parser.add_argument("--load", action="store_true", help="review in a real server under paced games")
    parser.add_argument("--games", type=int, default=100, help="paced human-speed games (default 100)")
    parser.add_argument("--rate", type=float, default=1.0, help="messages a second per player (default 1)")
    parser.add_argument("--quiet-s", type=float, default=15.0, help="seconds measured before the review (default 15)")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds played before measuring (default 5)")
    parser.add_argument("--ai-ms", type=int, default=200, help="the live AI game's thinking time a move")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 10 games, 20 ms budget, short windows")
    parser.add_argument("--json", action="store_true", help="print one machine-readable line")
    args = parser.parse_args(argv)
    if args.quick:
        args.load, args.games, args.budget_ms, args.quiet_s, args.warmup, args.repeat = True, 10, 20, 3.0, 1.0, 1
    if not 1 <= args.games <= 500 or not 1 <= args.repeat <= 10 or not 0 < args.rate < load.SERVER_RATE:
        parser.error("--games must be 1-500, --repeat 1-10 and --rate under the server's limit")
    return args


def main(argv: list[str] | None = None) -> int:
    """Review one game alone, or under load (`--load`), and print the figures."""
    args = parse_args(argv)
    moves = sixty_move_game(args.seed)
    if not args.load:
        time_review(moves, args.budget_ms)
        return 0
    load.raise_file_limit()
    runs = [loaded_run(args, moves) for _ in range(args.repeat)]
    report = {"games": args.games, "budget_ms": args.budget_ms, "ai_ms": args.ai_ms, "runs": runs}
    report["median"] = medians(runs)
    if args.json:
        print(json.dumps(report))
    else:
        for run in runs:
            print(json.dumps(run))
        print("median:", json.dumps(report["median"]))
    return 1 if any(run["problems"] or run["lost"] or run["review_s"] is None for run in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
