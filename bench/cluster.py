"""Cluster benchmark: throughput of 1, 2, 3 nodes against a lone server, and the failover time.

    python bench/cluster.py [--pairs 40] [--seconds 8] [--nodes 1,2,3] [--repeat 3]   # throughput
    python bench/cluster.py --failover [--kills 20]                                 # kill -9 -> next move
    ... [--store postgresql]   # the nodes (and the lone server) on a temporary PostgreSQL instead of a SQLite file
    ... [--against ../other-checkout]   # also "base cluster N": the same runs with another checkout's nodes
    python bench/cluster.py --store postgresql --profile /tmp/prof [--nodes 2]   # one run, nodes under cProfile

Throughput: `--pairs` rooms of Othello, each played by two clients making random legal moves as fast as the server
answers, for a warm-up then `--seconds`. "lone" is `gamenight-server` without --cluster; "cluster N" is N node
processes with one redis-server and one SQLite file (`--store postgresql`: one database on a PostgreSQL server the
benchmark starts as the tests do, tests/pg.py, fsync on), the two players of a room on different nodes (from 2 nodes on,
every room has a forwarded player: the cluster path). The configurations run interleaved, `--repeat` times, and
the medians are printed: moves per second and the mover's move -> `moved` round trip (p50/p99). With `--against
DIR` (a checkout of another commit with its own `.venv`, e.g. `git worktree add ../base main` then
`python -m venv .venv && .venv/bin/pip install -e '.[cluster]'` there), each "cluster N" round is followed by
"base cluster N" (DIR's nodes, same clients, same Redis/PostgreSQL setup) and the ratio of the medians is printed.

Failover: three nodes; a room is created, its owner read from the directory, and the two players connect to the two
other nodes. After two moves the owner is killed (SIGKILL); the player to move sends its move at once (again every
200 ms until it is applied: a request in flight to the dead node is lost with it). The time from the kill to the
first `moved` is one sample; the killed node is started again, and the next room begins. p50/p99 over `--kills`.

Everything it starts (redis-server, the nodes) is stopped at the end, whatever happens.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from websockets.asyncio.client import ClientConnection, connect  # noqa: E402

from gamenight.protocol import PROTOCOL_VERSION, decode, encode  # noqa: E402
from gamenight.protocol.codec import MAX_SERVER_FRAME  # noqa: E402
from gamenight.protocol.messages import CreateRoom, Hello, Join, MakeMove, Message, Moved, State, fold  # noqa: E402

NO_CAPS = tuple(
    arg
    for name in (
        "max_connections_per_ip",
        "messages_per_ip_per_s",
        "rooms_per_ip",
        "rooms_per_player",
        "public_rooms",
        "rate",
    )
    for arg in ("--limit", f"{name}=0")
)
START_TIMEOUT_S = 30.0


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Redis:
    """A redis-server child process on a free port (no persistence)."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        command = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(folder)]
        command += ["--save", "", "--appendonly", "no", "--loglevel", "warning"]
        self.proc = subprocess.Popen(
            command,
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


SECRET = secrets.token_hex(32)
"""The cluster secret of the nodes this run starts."""


class Node:
    """A gamenight-server process (a cluster node with `redis`, else a lone server)."""

    def __init__(
        self, db: Path | str, redis: str | None = None, node_id: str | None = None, tree: Path | None = None
    ) -> None:
        self.db, self.redis, self.node_id = db, redis, node_id
        self.tree = tree  # another checkout to run the node from (its .venv's python), else this one
        self.profile: Path | None = None  # a file to write the node's cProfile statistics to (at its exit)
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""

    def start(self) -> Node:
        python = str(self.tree / ".venv" / "bin" / "python") if self.tree is not None else sys.executable
        profiling = ["-m", "cProfile", "-o", str(self.profile)] if self.profile is not None else []
        command = [python, *profiling, "-m", "gamenight.server", "--port", "0", "--db", str(self.db)]
        command += ["--log-level", "error", "--ai-workers", "1", *NO_CAPS]
        if self.redis is not None:
            command += ["--cluster", self.redis, "--node-id", str(self.node_id)]
        env = os.environ | {"GAMENIGHT_CLUSTER_SECRET": SECRET}  # a cluster node needs one (older checkouts ignore it)
        self.proc = subprocess.Popen(command, cwd=self.tree or ROOT, stdout=subprocess.PIPE, text=True, env=env)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            self.proc.kill()
            raise RuntimeError(f"node did not start: {line!r}")
        self.url = line.split("listening on", 1)[1].strip()
        return self

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self, grace: float = 10.0) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                self.kill()


class Client:
    """One player: its connection, its rooms' positions, and futures for the replies it waits for."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.positions: dict[str, State] = {}
        self.replies: dict[int, asyncio.Future[Message]] = {}
        self.changed = asyncio.Event()
        self.ids = iter(range(1, 1 << 30))
        self.reader = asyncio.get_running_loop().create_task(self.read())

    @classmethod
    async def open(cls, url: str, name: str) -> Client:
        client = cls(await connect(url, max_size=2**20, compression=None, ping_interval=None))
        await client.request(Hello, protocol=PROTOCOL_VERSION, name=name)
        return client

    async def read(self) -> None:
        try:
            async for frame in self.ws:
                msg = decode(frame, MAX_SERVER_FRAME)  # type: ignore[arg-type]
                if msg.id is not None and msg.id in self.replies:
                    self.replies.pop(msg.id).set_result(msg)
                if isinstance(msg, State):
                    self.positions[msg.room] = msg
                elif isinstance(msg, Moved):
                    known = self.positions.get(msg.room)
                    if known is not None and msg.seq == known.seq + 1:
                        self.positions[msg.room] = fold(known, msg)
                self.changed.set()
        except Exception:
            pass

    async def request(self, cls: type[Message], **fields: Any) -> Message:
        rid = next(self.ids)
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self.replies[rid] = future
        await self.ws.send(encode(cls(id=rid, **fields)))
        return await asyncio.wait_for(future, 30)

    async def until(self, room: str, seq: int, timeout: float = 30.0) -> State:
        """The room's position once it reached `seq`."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            position = self.positions.get(room)
            if position is not None and position.seq >= seq:
                return position
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), max(0.01, deadline - loop.time()))

    async def close(self) -> None:
        await self.ws.close()
        self.reader.cancel()


async def seat(first: Client, second: Client) -> str:
    """A room of Othello with `first` in seat 0 and `second` in seat 1; returns its code."""
    code = str((await first.request(CreateRoom, game="othello", options={})).room)  # type: ignore[attr-defined]
    await first.request(Join, room=code, seat=0)
    for _ in range(1500):  # the room reaches the second player's node's directory (30 s: a loaded machine)
        reply = await second.request(Join, room=code, seat=1)
        if reply.type == "joined":
            return code
        await asyncio.sleep(0.02)
    raise RuntimeError(f"could not join {code}")


async def play(pair: tuple[Client, Client], code: str, stop_at: float, measure_at: float, rtts: list[float]) -> int:
    """Random legal moves as fast as the server answers; a finished game starts a new room. Moves in the window."""
    rng = random.Random(code)
    moves = 0
    while time.monotonic() < stop_at:
        state = await pair[0].until(code, 1)
        while state.status == "playing" and time.monotonic() < stop_at:
            mover = pair[state.to_move[0]]
            legal = (await mover.until(code, state.seq)).legal
            sent = time.monotonic()
            await mover.ws.send(encode(MakeMove(room=code, move=rng.choice(legal), seq=state.seq)))
            state = await mover.until(code, state.seq + 1)
            if sent >= measure_at and time.monotonic() <= stop_at:
                rtts.append((time.monotonic() - sent) * 1000)
                moves += 1
            state = await pair[0].until(code, state.seq)
        if state.status != "playing" and time.monotonic() < stop_at:
            code = await seat(*pair)
    return moves


async def throughput_once(urls: list[str], pairs: int, warmup: float, seconds: float) -> dict[str, float]:
    """One measurement: `pairs` rooms over the nodes at `urls`; moves per second and round trips."""
    clients = []
    for i in range(pairs):
        first = await Client.open(urls[i % len(urls)], f"a{i}")
        second = await Client.open(urls[(i + 1) % len(urls)], f"b{i}")
        clients.append((first, second))
    codes = [await seat(*pair) for pair in clients]
    measure_at = time.monotonic() + warmup
    stop_at = measure_at + seconds
    rtts: list[float] = []
    moves = await asyncio.gather(
        *(play(pair, code, stop_at, measure_at, rtts) for pair, code in zip(clients, codes, strict=True))
    )
    for pair in clients:
        for client in pair:
            await client.close()
    rtts.sort()
    return {
        "moves_per_s": sum(moves) / seconds,
        "rtt_p50_ms": rtts[len(rtts) // 2] if rtts else float("nan"),
        "rtt_p99_ms": rtts[min(len(rtts) - 1, int(len(rtts) * 0.99))] if rtts else float("nan"),
    }


def throughput(args: argparse.Namespace) -> None:
    """Interleave lone / cluster N runs, `repeat` times; print the medians."""
    configs = ["lone"]
    for n in args.nodes:
        configs += [f"cluster {n}"] + ([f"base cluster {n}"] if args.against is not None else [])
    results: dict[str, list[dict[str, float]]] = {c: [] for c in configs}
    for round_ in range(args.repeat):
        for config in configs:
            with tempfile.TemporaryDirectory() as folder:
                redis = Redis(Path(folder)) if config != "lone" else None
                count = 1 if config == "lone" else int(config.split()[-1])
                tree = args.against if config.startswith("base") else None
                db = args.new_db(folder)
                nodes = [Node(db, redis.url if redis else None, f"n{k + 1}", tree).start() for k in range(count)]
                try:
                    figures = asyncio.run(throughput_once([n.url for n in nodes], args.pairs, 2.0, args.seconds))
                finally:
                    for node in nodes:
                        node.stop()
                    if redis is not None:
                        redis.stop()
            results[config].append(figures)
            print(f"round {round_ + 1} {config:15s} " + json.dumps({k: round(v, 1) for k, v in figures.items()}))
    print(f"\nmedians of {args.repeat} (pairs={args.pairs}, {args.seconds} s measured, machine shared and loaded):")
    base = statistics.median(r["moves_per_s"] for r in results["lone"])
    rates = {config: statistics.median(r["moves_per_s"] for r in results[config]) for config in configs}
    for config in configs:
        rows = results[config]
        rate = rates[config]
        p50 = statistics.median(r["rtt_p50_ms"] for r in rows)
        p99 = statistics.median(r["rtt_p99_ms"] for r in rows)
        print(
            f"  {config:15s} {rate:8.0f} moves/s ({rate / base:4.2f}x lone)  rtt p50 {p50:6.1f} ms  p99 {p99:6.1f} ms"
        )
    if args.against is not None:
        for n in args.nodes:
            this, other = rates[f"cluster {n}"], rates[f"base cluster {n}"]
            print(f"  cluster {n}: this checkout / {args.against} = {this / other:4.2f}x")


def profile(args: argparse.Namespace) -> None:
    """One "cluster N" run (the first of --nodes) with every node under cProfile; where each node's time went."""
    import pstats

    folder = Path(args.profile)
    folder.mkdir(parents=True, exist_ok=True)
    count = args.nodes[0]
    with tempfile.TemporaryDirectory() as temp:
        redis = Redis(Path(temp))
        db = args.new_db(temp)
        nodes = [Node(db, redis.url, f"n{k + 1}") for k in range(count)]
        for k, node in enumerate(nodes):
            node.profile = folder / f"n{k + 1}.prof"
            node.start()
        try:
            figures = asyncio.run(throughput_once([n.url for n in nodes], args.pairs, 2.0, args.seconds))
        finally:
            for node in nodes:
                node.stop(grace=60.0)  # SIGTERM: the node exits cleanly and cProfile writes its file
            redis.stop()
    print(f"cluster {count} under cProfile: " + json.dumps({k: round(v, 1) for k, v in figures.items()}))
    wanted = {  # label: (the end of the file's path, the function's name); the time spent in it, callees included
        "idle (epoll)": ("", "<method 'poll' of 'select.epoll' objects>"),
        "Outgoing.flush": ("outgoing.py", "flush"),
        "  of which the store's write": ("outgoing.py", "_store"),
        "bus: send": ("bus.py", "_send"),
        "bus: receive (hand over)": ("bus.py", "_hand_over"),
        "edge: receive a client's frame": ("node.py", "receive"),
    }
    for node in nodes:
        assert node.profile is not None
        stats = pstats.Stats(str(node.profile)).stats  # type: ignore[attr-defined]
        print(f"  {node.node_id} ({node.profile}):")
        for label, (path, function) in wanted.items():
            total = sum(row[3] for (file, _, name), row in stats.items() if name == function and file.endswith(path))
            print(f"    {label:32s} {total:7.2f} s")


async def failover_once(nodes: list[Node], redis_url: str, round_: int) -> tuple[float, Node]:
    """One kill: a room on some node, players on the two others, the owner killed; seconds to the next move."""
    from gamenight.server.cluster.bus import connect as redis_connect
    from gamenight.server.cluster.coord import Keys

    host = await Client.open(nodes[round_ % len(nodes)].url, f"host{round_}")
    code = str((await host.request(CreateRoom, game="othello", options={})).room)  # type: ignore[attr-defined]
    redis = redis_connect(redis_url)
    try:
        while (raw := await redis.hget(Keys().directory, code)) is None:
            await asyncio.sleep(0.02)
    finally:
        await redis.aclose()
    owner_id = json.loads(raw)["owner"]
    owner = next(n for n in nodes if n.node_id == owner_id)
    others = [n for n in nodes if n is not owner]
    alice = await Client.open(others[0].url, f"alice{round_}")
    bob = await Client.open(others[1].url, f"bob{round_}")
    pair = (alice, bob)
    for client, seat_no in ((alice, 0), (bob, 1)):
        for _ in range(300):
            if (await client.request(Join, room=code, seat=seat_no)).type == "joined":
                break
            await asyncio.sleep(0.02)
    state = await alice.until(code, 1)
    for _ in range(2):
        mover = pair[state.to_move[0]]
        legal = (await mover.until(code, state.seq)).legal
        await mover.ws.send(encode(MakeMove(room=code, move=legal[0], seq=state.seq)))
        state = await alice.until(code, state.seq + 1)
        state = await bob.until(code, state.seq)
    mover = pair[state.to_move[0]]
    legal = (await mover.until(code, state.seq)).legal
    killed_at = time.monotonic()
    owner.kill()
    while True:
        await mover.ws.send(encode(MakeMove(room=code, move=legal[0], seq=state.seq)))
        try:
            await mover.until(code, state.seq + 1, timeout=0.2)
            break
        except TimeoutError:
            if time.monotonic() - killed_at > 60:
                raise RuntimeError("no takeover within 60 s") from None
    took = time.monotonic() - killed_at
    for client in (alice, bob, host):
        await client.close()
    return took, owner


def failover(args: argparse.Namespace) -> None:
    """`kills` kill -9 -> first accepted move samples on a three-node cluster; p50/p99."""
    samples: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        redis = Redis(Path(folder))
        db = args.new_db(folder)
        nodes = [Node(db, redis.url, f"n{k + 1}").start() for k in range(3)]
        try:
            for round_ in range(args.kills):
                took, killed = asyncio.run(failover_once(nodes, redis.url, round_))
                samples.append(took)
                print(f"kill {round_ + 1:2d}: node {killed.node_id} killed, next move accepted after {took:5.2f} s")
                killed.start()
                time.sleep(1.5)  # the restarted node registers before the next round picks owners
        finally:
            for node in nodes:
                node.stop()
            redis.stop()
    samples.sort()
    p50 = samples[len(samples) // 2]
    p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))]
    print(f"\nfailover over {len(samples)} kills: p50 {p50:.2f} s, p99 {p99:.2f} s, max {samples[-1]:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--nodes", type=lambda s: [int(x) for x in s.split(",")], default=[1, 2, 3])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--failover", action="store_true")
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--store", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--against", type=Path, default=None, help="another checkout (with .venv) to compare with")
    parser.add_argument("--profile", type=Path, default=None, help="a folder for the nodes' cProfile statistics")
    args = parser.parse_args()
    pg = None
    if args.store == "postgresql":
        from tests.pg import PgServer, find_bin_dir

        bin_dir = find_bin_dir()
        if bin_dir is None:
            sys.exit("bench/cluster.py: no initdb/postgres found; run with --store sqlite")
        pg = PgServer(bin_dir, fsync=True).start()
        args.new_db = lambda folder: pg.new_database()
    else:
        args.new_db = lambda folder: Path(folder) / "games.db"
    try:
        if args.failover:
            failover(args)
        elif args.profile is not None:
            profile(args)
        else:
            throughput(args)
    finally:
        if pg is not None:
            pg.stop()


if __name__ == "__main__":
    main()
