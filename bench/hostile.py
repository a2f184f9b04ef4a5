"""Hostile load beside an honest game: each attack runs for a few seconds while two honest players play.

    python bench/hostile.py [--attacks squat,ping_flood,...] [--seconds 4] [--before 3] [--games 20000] [--json]
                            [--limit NAME=VALUE ...]

Starts `python -m gamenight.server` on a fresh SQLite file (pre-filled with `--games` finished games, so history
requests have something to search), seats two honest players in an Othello room who play a move every 50 ms, and
measures the mover's move -> state round trip; beside them a third person plays a level-1 AI (thinking 200 ms), and
the time from their move to the AI's answer is measured too; and two claimed people (erin, dave) keep challenging
each other and hosting a tournament (`honest_social`): each try worked or failed, per window. For each attack it
prints the honest round trip's p50/p99 (and the AI answer's) in the `--before` seconds before the attack and during
it, and the server's RSS at the start and after the attack ended. The attack itself runs in a child process (so its
own CPU does not slow the honest clients' process) from another loopback address (127.0.0.2, as from another host),
is bounded in connections and time, and is stopped before the next one starts. Its window starts when the child
says it is ready (its interpreter has started and imported) and ends when it sends its counters: the attacker
process's start-up is not the attack. The attacker's counters are printed with each row (`chat_fanout` also counts
the frames and bytes its spectators read: with spectator batching, one frame per window instead of one per
message).

Targets (issue 12): p99 during each attack <= 2x the p99 before it; RSS back within 20% of its start.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import multiprocessing
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.frames import Frame, Opcode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.load import launch  # noqa: E402
from gamenight.protocol import PROTOCOL_VERSION, decode, encode  # noqa: E402
from gamenight.protocol.messages import (  # noqa: E402
    AddAi,
    CancelTournament,
    ChallengeRequest,
    Chat,
    CreateRoom,
    CreateTournament,
    Decline,
    Error,
    GetGame,
    Hello,
    Join,
    ListGames,
    ListRooms,
    ListTournaments,
    MakeMove,
    Message,
    Moved,
    Rematch,
    State,
    fold,
)
from gamenight.server.metrics import percentiles  # noqa: E402
from gamenight.server.records import GameFinished  # noqa: E402
from gamenight.server.store import Store  # noqa: E402
from tests.peer import Peer  # noqa: E402

MOVE_EVERY_S = 0.05  # the honest players' pace (each player moves at most 10 times a second)
COOL_DOWN_S = 2.0  # between an attack's end and the next window


# -- the server ----------------------------------------------------------------------------------------------
def fill_history(path: str, games: int) -> None:
    """Write `games` finished games (200 distinct player names) straight into the database."""
    store = Store(path)
    batch = []
    for n in range(games):
        players = [{"seat": 0, "name": f"p{n % 200}"}, {"seat": 1, "name": f"q{n % 37}"}]
        batch.append(GameFinished(f"H{n:05}", 1, "othello", {"size": 8}, players, {"winners": [0]}, ["d3"], "d3"))
        if len(batch) == 1000:
            store.write(batch)
            batch = []
    store.write(batch)
    store.close()


def start_server(db: str, limits: tuple[str, ...] = ()) -> tuple[subprocess.Popen[str], str]:
    """The real server on a free port (with `--limit NAME=VALUE` for each of `limits`); its process and URL."""
    flags = [arg for limit in limits for arg in ("--limit", limit)]
    return launch([sys.executable, "-m", "gamenight.server", "--port", "0", "--db", db, "--log-level", "error", *flags])


def rss_mib(pid: int) -> float:
    """The process's resident memory in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_s(pid: int) -> float:
    """The process's CPU time so far (user + system), in seconds (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def helpers_cpu_s(pid: int) -> float:
    """The CPU time so far of every living process below `pid` (the server's AI workers, forkserver and history
    worker): work the server hands off is still the server's cost, on the same cores."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError):
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    total = 0.0
    for child in found:
        with contextlib.suppress(OSError, IndexError):
            total += cpu_s(child)
    return total


# -- the honest game ------------------------------------------------------------------------------------------
class Player:
    """One honest client: reads everything, keeps the latest state (protocol 2: each `moved` folded into the last
    full `state`, and queued as the `state` it leads to)."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.inbox: asyncio.Queue[Message] = asyncio.Queue()
        self.state: State | None = None
        self.changed = asyncio.Event()
        self.reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for frame in self.ws:
                msg = decode(frame, 1 << 22)
                if isinstance(msg, State):
                    self.state = msg
                elif isinstance(msg, Moved) and self.state is not None and msg.seq == self.state.seq + 1:
                    msg = self.state = fold(self.state, msg)
                self.changed.set()
                self.inbox.put_nowait(msg)

    async def at(self, seq: int) -> State:
        """This player's own state once it reached `seq` (its `legal` is this player's)."""
        async with asyncio.timeout(30):
            while self.state is None or self.state.seq < seq:
                self.changed.clear()
                await self.changed.wait()
        return self.state

    def clear(self) -> None:
        """Forget what was received so far (only alice's messages are followed move by move)."""
        while not self.inbox.empty():
            self.inbox.get_nowait()

    async def until(self, match: Callable[[Message], bool]) -> Message:
        """The next message matching `match` (others are dropped)."""
        while True:
            msg = await asyncio.wait_for(self.inbox.get(), 30)
            if match(msg):
                return msg


async def honest_game(url: str, samples: list[tuple[float, float]], stop: asyncio.Event) -> dict[str, Any]:
    """Two players play Othello (rematch after rematch) at MOVE_EVERY_S; appends (time, round trip ms)."""
    players = []
    for name in ("alice", "bob"):
        ws = await connect(url, max_size=1 << 22)
        await ws.send(encode(Hello(protocol=PROTOCOL_VERSION, name=name)))
        players.append(Player(ws))
        await players[-1].until(lambda m: m.type == "welcome")
    alice, bob = players
    await alice.ws.send(encode(CreateRoom(game="othello", options={}, id=1)))
    code = (await alice.until(lambda m: m.type == "room" and m.id == 1)).room
    await alice.ws.send(encode(Join(room=code, seat=0)))
    await bob.ws.send(encode(Join(room=code, seat=1)))
    state = await alice.until(lambda m: m.type == "state")
    seat_of = {0: alice, 1: bob}
    info = {"room": code, "games": 1}
    ready = asyncio.Event()
    ready.set()
    rng = random.Random(1)

    async def play() -> None:
        nonlocal state
        while not stop.is_set():
            if state.status == "finished":
                bob.clear()
                for p in players:
                    await p.ws.send(encode(Rematch(room=code)))
                joined = [await p.until(lambda m: m.type == "joined") for p in players]  # before the state
                state = await alice.until(lambda m: m.type == "state" and m.status == "playing")
                for p, j in zip(players, joined, strict=True):
                    seat_of[j.seat] = p
                info["games"] += 1
                continue
            mover = seat_of[state.to_move[0]]
            legal = (await mover.at(state.seq)).legal  # protocol 2 sends `legal` to the mover only
            sent = time.perf_counter()
            await mover.ws.send(encode(MakeMove(room=code, move=rng.choice(legal), seq=state.seq)))
            state = await alice.until(lambda m, s=state.seq: m.type == "state" and m.seq > s)
            samples.append((time.monotonic(), (time.perf_counter() - sent) * 1000))
            await asyncio.sleep(MOVE_EVERY_S)

    task = asyncio.get_running_loop().create_task(play())
    info["task"] = task
    return info


async def honest_ai_game(url: str, samples: list[tuple[float, float]]) -> asyncio.Task[None]:
    """A person plays a level-1 AI (ai_ms 200): appends (time, ms from the person's move to the AI's answer)."""
    ws = await connect(url, max_size=1 << 22)
    await ws.send(encode(Hello(protocol=PROTOCOL_VERSION, name="carol")))
    carol = Player(ws)
    await carol.until(lambda m: m.type == "welcome")
    await ws.send(encode(CreateRoom(game="othello", options={"ai_ms": 200, "ai_pace_ms": 0}, id=1)))
    code = (await carol.until(lambda m: m.type == "room" and m.id == 1)).room  # not a lobby push of alice's room
    await ws.send(encode(Join(room=code, seat=0)))
    await ws.send(encode(AddAi(room=code, level=1)))
    rng = random.Random(2)

    async def play() -> None:
        seat = 0
        state = await carol.until(lambda m: m.type == "state")
        while True:
            if state.status == "finished":
                carol.clear()
                await ws.send(encode(Rematch(room=code)))
                seat = (await carol.until(lambda m: m.type == "joined")).seat  # seats rotate between games
                state = await carol.until(lambda m: m.type == "state" and m.status == "playing")
                continue
            if seat not in state.to_move:
                state = await carol.until(lambda m, s=state.seq: m.type == "state" and m.seq > s)
                continue
            sent = time.perf_counter()
            await ws.send(encode(MakeMove(room=code, move=rng.choice(state.legal), seq=state.seq)))
            state = await carol.until(
                lambda m, s=state.seq, mine=seat: (
                    m.type == "state" and m.seq > s and (mine in m.to_move or m.status != "playing")
                )
            )
            samples.append((time.monotonic(), (time.perf_counter() - sent) * 1000))
            await asyncio.sleep(MOVE_EVERY_S)

    return asyncio.get_running_loop().create_task(play())


SOCIAL_EVERY_S = 3.5  # the honest challenger's pace (a challenge, then a tournament, then this pause): under the
# server's 20 challenges a minute per address, so her own allowance never refuses her (run these attacks longer)


async def honest_social(url: str, tries: list[tuple[float, str, float, bool]]) -> asyncio.Task[None]:
    """Two claimed people from the honest address, again and again: erin challenges dave, who is told and declines,
    and erin is told (the challenge's round trip); then erin hosts a round robin (dave and an AI invited, starting
    in 10 minutes), finds it in `list_tournaments` and calls it off. Appends (time, "challenge" or "tournament", ms,
    whether it worked): a flood must leave both working for people at other addresses."""
    erin = await Peer.connect(url, "erin", key="hostile-bench-erin")
    dave = await Peer.connect(url, "dave", key="hostile-bench-dave", accepts=["othello"])

    async def challenge() -> bool:
        sent = await erin.request(ChallengeRequest, to="dave", game="othello")
        if sent.type != "challenge_sent":
            return False
        offer = await dave.wait(lambda m: m.type == "challenged" and m.sender.name == "erin")
        await dave.send(Decline(challenge=offer.challenge))
        gone = await erin.expect("challenge_gone", challenge=offer.challenge)
        return bool(gone.why == "declined")

    async def tournament() -> bool:
        made = await erin.request(
            CreateTournament, game="othello", kind="round_robin", players=["erin", "AI level 1"], start_in_s=600
        )
        if made.type != "tournament":
            return False
        listed = await erin.request(ListTournaments)
        found = any(t.get("tournament") == made.tournament for t in getattr(listed, "tournaments", []))
        called_off = await erin.request(CancelTournament, tournament=made.tournament)
        return found and called_off.type != "error"

    async def loop() -> None:
        while True:
            for kind, attempt in (("challenge", challenge), ("tournament", tournament)):
                started = time.perf_counter()
                try:
                    worked = await asyncio.wait_for(attempt(), 10)
                except (TimeoutError, ConnectionClosed):
                    worked = False
                tries.append((time.monotonic(), kind, (time.perf_counter() - started) * 1000, worked))
            await asyncio.sleep(SOCIAL_EVERY_S)

    return asyncio.get_running_loop().create_task(loop())


def social_window(tries: list[tuple[float, str, float, bool]], start: float, end: float) -> dict[str, Any]:
    """The honest challenges' and tournaments' tries between `start` and `end`: how many worked, failed, and the
    challenge round trip's percentiles."""
    inside = [t for t in tries if start <= t[0] < end]
    row: dict[str, Any] = {}
    for kind in ("challenge", "tournament"):
        mine = [t for t in inside if t[1] == kind]
        row[kind] = {"ok": sum(t[3] for t in mine), "failed": sum(not t[3] for t in mine)}
    row["challenge"] |= {k: v for k, v in percentiles([t[2] for t in inside if t[1] == "challenge"]).items()}
    return row


# -- attacks (each runs in a child process) ----------------------------------------------------------------------
ATTACKER_ADDRESS = "127.0.0.2"
"""The attacks come from another loopback address than the honest players (as they would from another host):
the per-address limits are meant to hit the attacker, not everyone."""


async def _hello(url: str, name: str) -> ClientConnection:
    """A websocket that said hello and read its welcome."""
    ws = await connect(url, max_size=1 << 22, local_addr=(ATTACKER_ADDRESS, 0))
    await ws.recv()  # the hello_nonce (the server's first frame)
    await ws.send(encode(Hello(protocol=PROTOCOL_VERSION, name=name)))
    await ws.recv()
    return ws


async def _drain(ws: ClientConnection, counts: dict[str, int] | None = None) -> None:
    """Read and drop everything (an attacker that reads, so only its requests cost the server); `counts` adds up
    the frames and bytes read."""
    with contextlib.suppress(ConnectionClosed):
        async for frame in ws:
            if counts is not None:
                counts["frames_read"] += 1
                counts["bytes_read"] += len(frame)


async def _raw(url: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A websocket opened by hand (to send frames websockets' client would not)."""
    host, port = url.removeprefix("ws://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port), local_addr=(ATTACKER_ADDRESS, 0))
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        f"GET / HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    await reader.readuntil(b"\r\n\r\n")
    return reader, writer


async def _forever(worker: Callable[[int], Awaitable[None]], count: int, until: float) -> dict[str, int]:
    """Run `count` copies of an attacking connection, each reconnecting when dropped, until `until`."""
    stats = {"dropped": 0, "refused": 0}

    async def loop(n: int) -> None:
        while time.monotonic() < until:
            try:
                await asyncio.wait_for(worker(n), max(0.1, until - time.monotonic()))
            except TimeoutError:  # the attack's time is up (caught first: TimeoutError is an OSError)
                return
            except (ConnectionClosed, ConnectionError, OSError, asyncio.IncompleteReadError):
                stats["dropped"] += 1
                await asyncio.sleep(0.05)
            except InvalidStatus:
                stats["refused"] += 1
                await asyncio.sleep(0.2)

    await asyncio.gather(*(loop(n) for n in range(count)))
    return stats


async def attack(name: str, url: str, room: str, seconds: float) -> dict[str, int]:
    """Run one attack against `url` (the honest game is in `room`) for `seconds`."""
    until = time.monotonic() + seconds
    received = {"frames_read": 0, "bytes_read": 0}
    replies: dict[str, int] = {}  # the Peer-driven floods': requests sent, answers by type and refusal code

    async def squat(n: int) -> None:  # throwaway sessions opening public rooms as fast as allowed
        ws = await _hello(url, f"squat{n}")
        for k in range(25):
            await ws.send(encode(CreateRoom(game="othello", options={}, id=k)))
            await asyncio.sleep(0.05)
        await ws.close()

    async def ping_flood(n: int) -> None:  # pings as fast as the socket takes them, nothing read
        _, writer = await _raw(url)
        ping = Frame(Opcode.PING, b"x" * 125).serialize(mask=True)
        while True:
            writer.write(ping * 64)
            await writer.drain()

    async def fragments(n: int) -> None:  # each message cut into 2,000 one-byte fragments
        _, writer = await _raw(url)
        data = encode(ListRooms(id=n)) * 1
        data = data + b"\x00" * (2000 - len(data))
        while True:
            parts = [
                Frame(Opcode.BINARY if i == 0 else Opcode.CONT, data[i : i + 1], fin=i == 1999) for i in range(2000)
            ]
            writer.write(b"".join(p.serialize(mask=True) for p in parts))
            await writer.drain()

    async def big_chat(n: int) -> None:  # 60,000-character lines to the honest room, which it is not in
        ws = await _hello(url, f"chatter{n}")
        drain = asyncio.get_running_loop().create_task(_drain(ws))
        line = encode(Chat(room=room, text="x" * 60_000))
        while not drain.done():
            await ws.send(line)
            await asyncio.sleep(0.05)

    async def history(n: int) -> None:  # list_games by player and get_game, at the message rate limit
        ws = await _hello(url, f"reader{n}")
        drain = asyncio.get_running_loop().create_task(_drain(ws))
        rng = random.Random(n)
        while not drain.done():
            await ws.send(encode(ListGames(player=f"p{rng.randrange(200)}", limit=200)))
            await ws.send(encode(GetGame(game_id=rng.randrange(1, 20_000))))
            await asyncio.sleep(0.1)

    async def huge_ids(n: int) -> None:  # get_game with ids beyond 64 bits
        ws = await _hello(url, f"prober{n}")
        drain = asyncio.get_running_loop().create_task(_drain(ws))
        while not drain.done():
            await ws.send(encode(GetGame(game_id=2**64 - 1 - n)))
            await asyncio.sleep(0.05)

    async def guess_codes(n: int) -> None:  # joins by random private codes
        ws = await _hello(url, f"guesser{n}")
        drain = asyncio.get_running_loop().create_task(_drain(ws))
        rng = random.Random(n)
        letters = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
        while not drain.done():
            code = "".join(rng.choice(letters) for _ in range(5))
            await ws.send(encode(Join(room=code, role="spectator")))
            await asyncio.sleep(0.05)

    async def chat_fanout(n: int) -> None:  # spectators of the honest room chatting at the message limit
        ws = await _hello(url, f"watcher{n}")
        drain = asyncio.get_running_loop().create_task(_drain(ws, received))
        await ws.send(encode(Join(room=room, role="spectator")))
        while not drain.done():
            await ws.send(encode(Chat(room=room, text=f"look at me {n} " * 20)))
            await asyncio.sleep(0.05)

    async def answers(peer: Peer) -> None:  # what the server answers a flooder: counted by type, refusals by code
        with contextlib.suppress(ConnectionClosed):
            while True:
                msg = await peer.wait(lambda _m: True)
                kind = f"refused {msg.code}" if isinstance(msg, Error) else msg.type
                replies[kind] = replies.get(kind, 0) + 1

    async def flood(peer: Peer, request: Callable[[int], Message]) -> None:
        reader = asyncio.get_running_loop().create_task(answers(peer))
        try:
            for k in range(1_000_000):
                await peer.send(request(k))
                replies["sent"] = replies.get("sent", 0) + 1
                await asyncio.sleep(0.01)
        finally:
            reader.cancel()
            peer.ws.transport.abort()  # not a polite close: the server reads this flooder slowly (its allowance)

    async def challenges(n: int) -> None:  # guests challenging the honest dave as fast as the socket takes it
        peer = await Peer.connect(url, f"pest{n}", address=ATTACKER_ADDRESS)
        await flood(peer, lambda k: ChallengeRequest(to="dave", game="othello", id=k))

    async def tournaments(n: int) -> None:  # claimed names hosting tournaments (inviting dave) as fast as they can
        peer = await Peer.connect(url, f"host{n}", address=ATTACKER_ADDRESS, key=f"hostile-bench-host{n}")
        players = [f"host{n}", "dave", "AI level 1"]
        await flood(peer, lambda k: CreateTournament(game="othello", kind="round_robin", players=players, id=k))

    async def exhibitions(n: int) -> None:  # watched all-AI rooms, strongest level, longest thinking time
        ws = await _hello(url, f"showman{n}")
        await ws.send(encode(CreateRoom(game="othello", options={"ai_ms": 10_000, "ai_pace_ms": 0}, id=1)))
        while (reply := decode(await ws.recv(), 1 << 22)).id != 1:
            pass
        if reply.type == "room":
            await ws.send(encode(Join(room=reply.room, role="spectator")))
            for _ in range(2):
                await ws.send(encode(AddAi(room=reply.room, level=5)))
        await _drain(ws)

    attacks: dict[str, tuple[Callable[[int], Awaitable[None]], int]] = {
        "squat": (squat, 20),
        "ping_flood": (ping_flood, 4),
        "fragments": (fragments, 4),
        "big_chat": (big_chat, 8),
        "history": (history, 8),
        "huge_ids": (huge_ids, 20),
        "guess_codes": (guess_codes, 20),
        "chat_fanout": (chat_fanout, 60),
        "exhibitions": (exhibitions, 8),
        "challenges": (challenges, 20),
        "tournaments": (tournaments, 8),
    }
    worker, count = attacks[name]
    stats = await _forever(worker, count, until)
    return {**stats, **(received if received["frames_read"] else {}), **replies}


ATTACKS = (
    "squat",
    "ping_flood",
    "fragments",
    "big_chat",
    "history",
    "huge_ids",
    "guess_codes",
    "chat_fanout",
    "exhibitions",
    "challenges",
    "tournaments",
)


def attack_main(name: str, url: str, room: str, seconds: float, out: Any) -> None:
    """Child process entry point: say it is ready (its interpreter started and imported), run the attack, send back
    its counters and the CPU time the attack used (the start-up's left out)."""
    started = sum(os.times()[:2])
    out.send("ready")
    counters: dict[str, Any] = asyncio.run(attack(name, url, room, seconds))
    counters["cpu_s"] = round(sum(os.times()[:2]) - started, 2)
    out.send(counters)


async def _receive(receiver: Any, timeout: float) -> Any:
    """The child's next message, waited for without blocking the honest clients' event loop (None: none came)."""
    deadline = time.monotonic() + timeout
    while not receiver.poll():
        if time.monotonic() > deadline:
            return None
        await asyncio.sleep(0.01)
    return receiver.recv()


# -- the run -------------------------------------------------------------------------------------------------------
def window(samples: list[tuple[float, float]], start: float, end: float) -> dict[str, float | int]:
    """Percentiles of the round trips measured between `start` and `end`."""
    return percentiles([ms for at, ms in samples if start <= at < end])


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Start the server, the honest game, then each attack in turn; returns one row per attack."""
    folder = tempfile.mkdtemp(prefix="gamenight-hostile-")
    db = str(Path(folder) / "games.db")
    fill_history(db, args.games)
    proc, url = start_server(db, tuple(args.limit))
    rows: list[dict[str, Any]] = []
    samples: list[tuple[float, float]] = []
    ai_samples: list[tuple[float, float]] = []  # a person's move -> their AI opponent's answer
    social: list[tuple[float, str, float, bool]] = []  # an honest challenge's and tournament's tries
    stop = asyncio.Event()
    try:
        game = await honest_game(url, samples, stop)
        ai_task = await honest_ai_game(url, ai_samples)
        social_task = await honest_social(url, social)
        await asyncio.sleep(2.0)  # warm-up
        rss_start = rss_mib(proc.pid)
        context = multiprocessing.get_context("spawn")
        for name in args.attacks:
            before_start = time.monotonic()
            cpu_before, helpers_before = cpu_s(proc.pid), helpers_cpu_s(proc.pid)
            await asyncio.sleep(args.before)
            before_end = time.monotonic()
            cpu_at, helpers_at = cpu_s(proc.pid), helpers_cpu_s(proc.pid)
            receiver, sender = context.Pipe(duplex=False)
            child = context.Process(target=attack_main, args=(name, url, game["room"], args.seconds, sender))
            # The attacker's interpreter starting (~0.3 s of CPU on the same cores) is neither window: the attack
            # starts when the child says it is ready, and ends when it sends its counters.
            child.start()
            if await _receive(receiver, 60) != "ready":
                raise RuntimeError(f"the {name} attacker did not start")
            during_start = time.monotonic()
            cpu_ready, helpers_ready = cpu_s(proc.pid), helpers_cpu_s(proc.pid)
            peak = rss_mib(proc.pid)
            counters: dict[str, Any] = {}
            while time.monotonic() < during_start + args.seconds + 10:
                if receiver.poll():
                    counters = receiver.recv()
                    break
                await asyncio.sleep(0.05)
                peak = max(peak, rss_mib(proc.pid))
            during_end = time.monotonic()
            cpu_after, helpers_after = cpu_s(proc.pid), helpers_cpu_s(proc.pid)
            child.join(5)
            if child.is_alive():
                child.kill()
            await asyncio.sleep(COOL_DOWN_S)
            if game["task"].done():
                raise RuntimeError(f"the honest game stopped during {name}") from game["task"].exception()
            before = window(samples, before_start, before_end)
            during = window(samples, during_start, during_end)
            ai_before = window(ai_samples, before_start, before_end)
            ai_during = window(ai_samples, during_start, during_end)
            if social_task.done():
                raise RuntimeError(f"the honest challenger stopped during {name}") from social_task.exception()
            row = {
                "attack": name,
                "before": before,
                "ai_before": ai_before,
                "ai_during": ai_during,
                "during": during,
                "p99_ratio": round(during.get("p99", 0) / max(before.get("p99", 1), 0.001), 2),
                # the server's share of a core in each window: what the attack costs the server itself
                "server_cpu_before": round((cpu_at - cpu_before) / max(before_end - before_start, 0.001), 3),
                "server_cpu_during": round((cpu_after - cpu_ready) / max(during_end - during_start, 0.001), 3),
                # ... and its helper processes' (AI workers, history worker), which a process of their own moves
                # off the event loop but not off the machine
                "helpers_cpu_before": round((helpers_at - helpers_before) / max(before_end - before_start, 0.001), 3),
                "helpers_cpu_during": round((helpers_after - helpers_ready) / max(during_end - during_start, 0.001), 3),
                "rss_start_mib": round(rss_start, 1),
                "rss_peak_mib": round(peak, 1),
                "rss_after_mib": round(rss_mib(proc.pid), 1),
                "attacker": counters,
                "social_before": social_window(social, before_start, before_end),
                "social_during": social_window(social, during_start, during_end),
                "server_alive": proc.poll() is None,
            }
            rows.append(row)
            if not args.json:
                print(
                    f"{name:12} p50/p99 before {before.get('p50')}/{before.get('p99')} ms (n={before['n']})"
                    f"  during {during.get('p50')}/{during.get('p99')} ms (n={during['n']})"
                    f"  ratio {row['p99_ratio']}  server CPU {row['server_cpu_before']} -> {row['server_cpu_during']}"
                    f" (helpers {row['helpers_cpu_before']} -> {row['helpers_cpu_during']})"
                    f"  RSS {row['rss_start_mib']} -> peak {row['rss_peak_mib']}"
                    f" -> after {row['rss_after_mib']} MiB  attacker {counters}"
                    f"  | AI answer p50/p99 before {ai_before.get('p50')}/{ai_before.get('p99')}"
                    f" during {ai_during.get('p50')}/{ai_during.get('p99')} ms"
                    f"  | honest challenge / tournament: {_social_line(row['social_during'])}",
                    flush=True,
                )
        stop.set()
        ai_task.cancel()
        social_task.cancel()
        task = game["task"]
        if task.done() and task.exception() is not None:
            raise RuntimeError("the honest game stopped") from task.exception()
        task.cancel()
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
    return rows


def _social_line(row: dict[str, Any]) -> str:
    """The honest challenges' and tournaments' tries of a window, in one line."""
    challenge, tournament = row["challenge"], row["tournament"]
    return (
        f"challenges {challenge['ok']} ok {challenge['failed']} failed (p50/p99 {challenge.get('p50')}/"
        f"{challenge.get('p99')} ms), tournaments {tournament['ok']} ok {tournament['failed']} failed"
    )


def main() -> int:
    """Parse the command line, run, print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--attacks", default=",".join(ATTACKS), help="comma-separated, from: " + ", ".join(ATTACKS))
    parser.add_argument("--seconds", type=float, default=4.0, help="how long each attack runs")
    parser.add_argument("--before", type=float, default=3.0, help="the honest window measured before each attack")
    parser.add_argument("--games", type=int, default=20_000, help="finished games written into the history first")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of lines")
    parser.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a server limit for this run (repeatable), e.g. --limit spectator_batch_ms=0 to measure without batching",
    )
    args = parser.parse_args()
    args.attacks = [a for a in args.attacks.split(",") if a]
    unknown = [a for a in args.attacks if a not in ATTACKS]
    if unknown:
        parser.error(f"unknown attacks: {', '.join(unknown)}")
    rows = asyncio.run(run(args))
    if args.json:
        print(json.dumps(rows, indent=2))
    return 0 if all(row["server_alive"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
