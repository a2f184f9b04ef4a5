"""`gamenight-server` / `python -m gamenight.server`: run the game server, or export a finished game.

gamenight-server [--host H] [--port P] [--db PATH|URL] [--certfile C --keyfile K] [--ai-workers N]
gamenight-server ... --web PORT [--web-host H]  (also serve the client to browsers: needs the `web` extra)
gamenight-server --cluster redis://HOST:PORT --cluster-secret-file F [--node-id ID] [--public-url URL] --db PATH|URL
    (a cluster node; Redis's password, the cluster secret and PostgreSQL's password from files or the environment)
gamenight-server export GAME_ID [--db PATH|URL]
gamenight-server [--db PATH|URL] calibrate --game G --games N [--levels 1,2,3,4,5] [--ms 100]
gamenight-server [--db PATH|URL] admin add|remove NAME / admin list  (the admins who may moderate, docs/security.md)
gamenight-server [--db PATH|URL] audit [--limit N]  (the admins' actions, oldest first)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.util
import json
import logging
import os
import signal
import sys
import time
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from platformdirs import user_data_dir

from gamenight.protocol.identity import address_of
from gamenight.server.admission import LobbyLimits
from gamenight.server.app import STOP_SIGNALS, GameServer, ServerConfig, start_forkserver
from gamenight.server.guard import FrameLimits
from gamenight.server.records import StoreError
from gamenight.server.review import ReviewLimits
from gamenight.server.store import is_postgres, open_store, shown
from gamenight.server.text import clean_name, name_key

if TYPE_CHECKING:
    from gamenight.server.web import FrontDoor

log = logging.getLogger("gamenight.server")


def default_db() -> str:
    """The database file in the user's data directory (created on first use)."""
    folder = Path(user_data_dir("gamenight", appauthor=False))
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder / "gamenight.db")


def reached_as(url: str) -> str:
    """A `--reached-as` URL, checked (argparse's type): a ws:// or wss:// URL with a host."""
    if not address_of(url):
        raise argparse.ArgumentTypeError(f"{url!r} is not a ws:// or wss:// URL")
    return url


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line: serve (the default) or export."""
    parser = argparse.ArgumentParser(prog="gamenight-server", description="Host gamenight rooms for your friends.")
    parser.add_argument(
        "--db",
        default=None,
        help="SQLite file keeping rooms, moves and finished games (default: in your data folder;"
        " ':memory:' keeps nothing across restarts), or a PostgreSQL database as postgresql://user@host/dbname"
        " (needs the cluster extra: pip install 'gamenight[cluster]'); its password from --db-password-file, PGPASSWORD"
        " or ~/.pgpass, never needed on the command line",
    )
    parser.add_argument(
        "--db-password-file",
        metavar="FILE",
        help="the PostgreSQL password, read from this file (first line) instead of the --db URL (which `ps` shows)",
    )
    commands = parser.add_subparsers(dest="command")
    export = commands.add_parser("export", help="print a finished game in the replay format (docs/replay.md)")
    export.add_argument("game_id", type=int)
    admin = commands.add_parser("admin", help="name the admins who may moderate (claimed names; docs/security.md)")
    admin.add_argument("change", choices=["add", "remove", "list"])
    admin.add_argument("name", nargs="?", help="a claimed name (for add and remove)")
    audit = commands.add_parser("audit", help="list the admins' actions (who, what, on whom, why), oldest first")
    audit.add_argument("--limit", type=int, default=100, help="the latest this many actions (default 100)")
    calibrate = commands.add_parser(
        "calibrate", help="play rated AI-vs-AI games in this process to seed the AI levels' ratings (server stopped)"
    )
    calibrate.add_argument("--game", required=True, help="the game to calibrate (othello, pentago, tron, connect4)")
    calibrate.add_argument("--games", type=int, required=True, help="how many games to play")
    calibrate.add_argument(
        "--levels", default="1,2,3,4,5", help="comma-separated AI levels and named bots (default 1,2,3,4,5)"
    )
    calibrate.add_argument("--ms", type=int, default=100, help="thinking time per move of the strongest level (ms)")
    calibrate.add_argument("--seed", type=int, default=1, help="seed of the games (default 1)")
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (0.0.0.0 lets friends on your network join; default 127.0.0.1)",
    )
    parser.add_argument("--port", type=int, default=8765, help="TCP port (default 8765; 0 picks a free one)")
    parser.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="how much to log (default info)",
    )
    parser.add_argument(
        "--ai-workers", type=int, default=None, help="processes that run AI searches (default: one per core)"
    )
    parser.add_argument("--certfile", help="TLS certificate (PEM); with --keyfile the server speaks wss://")
    parser.add_argument("--keyfile", help="TLS private key (PEM)")
    parser.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        type=parse_limit,
        help="change one of the server's limits (repeatable; 0 turns a cap off), e.g. --limit rooms_per_ip=40;"
        " the names and defaults are in docs/security.md: " + ", ".join(LIMIT_NAMES),
    )
    parser.add_argument(
        "--metrics",
        action="store_true",
        help="serve GET /metrics (JSON: tick lateness, event-loop lag, RSS, CPU) for benchmarks",
    )
    parser.add_argument(
        "--cluster",
        metavar="REDIS_URL",
        nargs="?",
        const="",
        help="run as one node of a cluster sharing this Redis (e.g. redis://user@host:6379/0, rediss:// for TLS) and"
        " the --db of every node (docs/cluster.md); without a URL, GAMENIGHT_REDIS_URL's; needs the `cluster` extra"
        " (pip install 'gamenight[cluster]')",
    )
    parser.add_argument(
        "--redis-password-file",
        metavar="FILE",
        help="the cluster's Redis password, read from this file (default: GAMENIGHT_REDIS_PASSWORD, else the URL's)",
    )
    parser.add_argument("--redis-ca", metavar="FILE", help="the CA (PEM) of a rediss:// Redis's certificate")
    parser.add_argument(
        "--cluster-secret-file",
        metavar="FILE",
        help="the secret every node of the cluster shares, to sign what it writes to Redis (default:"
        " GAMENIGHT_CLUSTER_SECRET); a cluster node needs one",
    )
    parser.add_argument("--node-id", help="this node's name in the cluster (default: host, process id, random)")
    parser.add_argument(
        "--public-url", help="how clients reach this node, as other nodes show it (default ws://host:port)"
    )
    parser.add_argument(
        "--reserve-name",
        action="append",
        default=[],
        metavar="NAME",
        help="a name nobody may claim or play under, nor any look-alike of it (repeatable; e.g. your own name);"
        " admin, root, moderator, gamenight and the AI's and bots' labels always are",
    )
    parser.add_argument(
        "--reached-as",
        action="append",
        default=[],
        metavar="URL",
        type=reached_as,
        help="an address clients dial to reach this server, e.g. wss://games.example.org (repeatable): a hello that"
        " claims a name must be signed for one of them, so a hostile server cannot relay it live (docs/security.md);"
        " default: any address",
    )
    parser.add_argument(
        "--web",
        type=int,
        metavar="PORT",
        help="also serve the gamenight client to browsers on this port (http://, https:// with --certfile), already"
        " pointed at this server, so friends without Python can play; needs the `web` extra"
        " (pip install 'gamenight[web]')",
    )
    parser.add_argument("--web-host", help="address the web page binds (default: --host's)")
    parser.add_argument(
        "--web-sessions", type=int, default=16, help="browser tabs (each a client process here) at once (default 16)"
    )
    parser.add_argument(
        "--web-per-address", type=int, default=3, help="browser tabs at once from one address (default 3)"
    )
    parser.add_argument(
        "--web-idle",
        type=float,
        default=900.0,
        metavar="SECONDS",
        help="end a browser tab's session after this long without a key or click (default 900)",
    )
    args = parser.parse_args(argv)
    if args.web is None and any(
        getattr(args, name) != parser.get_default(name)
        for name in ("web_host", "web_sessions", "web_per_address", "web_idle")
    ):
        parser.error("--web-host, --web-sessions, --web-per-address and --web-idle go with --web")
    if args.web is not None and importlib.util.find_spec("textual_serve") is None:
        parser.error(
            "--web needs the web extra: pip install 'gamenight[web]' (from the project's folder: pip install '.[web]')"
        )
    if args.web is not None and (min(args.web_sessions, args.web_per_address) < 1 or args.web_idle <= 0):
        parser.error("--web-sessions and --web-per-address must be at least 1, --web-idle more than 0")
    cluster_only = (args.node_id, args.public_url, args.redis_password_file, args.redis_ca, args.cluster_secret_file)
    if any(cluster_only) and args.cluster is None:
        parser.error(
            "--node-id, --public-url, --redis-password-file, --redis-ca and --cluster-secret-file go with --cluster"
        )
    if args.cluster is not None and importlib.util.find_spec("redis") is None:
        parser.error(
            "--cluster needs the cluster extra: pip install 'gamenight[cluster]' (from the project's folder: "
            "pip install '.[cluster]')"
        )
    if bool(args.certfile) != bool(args.keyfile):
        parser.error("--certfile and --keyfile go together")
    return args


LIMIT_NAMES = tuple(
    f.name
    for cls in (ServerConfig, LobbyLimits, FrameLimits, ReviewLimits)
    for f in fields(cls)
    if f.type in ("int", "float") and f.name not in ("port", "ping_interval")
)
"""Every number `--limit` may set: the fields of ServerConfig (connections, rates), LobbyLimits, FrameLimits and
ReviewLimits (game review, docs/review.md)."""


def parse_limit(text: str) -> tuple[str, float]:
    """`NAME=VALUE` of one limit (argparse type)."""
    name, _, value = text.partition("=")
    name = name.strip().replace("-", "_")
    if name not in LIMIT_NAMES:
        raise argparse.ArgumentTypeError(f"no limit {name!r}; the limits are {', '.join(LIMIT_NAMES)}")
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{name} needs a number, not {value!r}") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"{name} cannot be negative")
    return name, number


def apply_limits(config: ServerConfig, limits: list[tuple[str, float]]) -> ServerConfig:
    """The config with each `--limit` applied to whichever part (server, lobby, frames, review) has that name."""
    chosen = dict(limits)

    def pick(obj: Any) -> dict[str, Any]:
        return {
            f.name: type(getattr(obj, f.name))(chosen[f.name]) if getattr(obj, f.name) is not None else chosen[f.name]
            for f in fields(obj)
            if f.name in chosen
        }

    return replace(
        config,
        **pick(config),
        lobby_limits=replace(config.lobby_limits, **pick(config.lobby_limits)),
        frame_limits=replace(config.frame_limits, **pick(config.frame_limits)),
        review_limits=replace(config.review_limits, **pick(config.review_limits)),
    )


GC_THRESHOLDS = (20_000, 50, 50)
"""The cyclic collector's thresholds in a running server (CPython's default: 700, 10, 10).

A busy server keeps many long-lived objects (connections, rooms, their kept events), and with the default
thresholds CPython ran a full collection every few seconds under load, each 60-110 ms with the event loop
stopped: the worst round trips players saw. With a larger young generation fewer objects get promoted, and
full collections become rare (see docs/performance.md for the before/after figures)."""


def tune_gc() -> None:
    """Set the server's collector policy: what start-up built is frozen (never scanned again), then GC_THRESHOLDS."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def serve(config: ServerConfig, web: WebOptions | None = None) -> None:
    """Serve until SIGINT/SIGTERM, then stop the server and its workers; no process of it prints a traceback.

    STOP_SIGNALS are blocked from here until the event loop handles them: one that comes while the server starts
    (opening the database, restoring rooms) waits and then stops it, never raising `KeyboardInterrupt` in the middle.
    The forkserver is started meanwhile, ignoring them (`start_forkserver`; its processes keep them blocked too).
    """
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    start_forkserver()
    asyncio.run(serve_until_signalled(config, web))


def stop_signals() -> asyncio.Event:
    """An event set once the process gets SIGINT or SIGTERM (the way a server here is told to stop cleanly); one
    blocked until now (`serve`) is let through, and sets it if it came meanwhile."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, stop.set)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    return stop


async def until_signalled() -> None:
    """Return once the process gets SIGINT or SIGTERM."""
    await stop_signals().wait()


async def serve_until_signalled(config: ServerConfig, web: WebOptions | None = None) -> None:
    """Serve (and with `web`, the web front door) until SIGINT/SIGTERM, then close every connection cleanly."""
    stop = stop_signals()  # before starting: a signal during start-up stops the server once it has started
    if web is not None:
        from gamenight.server.web import reaches_loopback

        # The web clients run on this host: a listener they reach in plain ws:// on 127.0.0.1 unless the server's is.
        config = replace(config, loopback=bool(config.certfile) or not reaches_loopback(config.host))
    server = GameServer(config)
    await server.start()
    try:
        door = await open_front_door(web, config, server) if web is not None else None
    except BaseException:  # its port taken, say: the game server stops too, as one that could not start
        await server.stop()
        raise
    tune_gc()
    scheme = "wss" if config.certfile else "ws"
    # The bound port is printed on its own line so a parent process (the client) can read it.
    print(f"gamenight-server listening on {scheme}://{config.host}:{server.port}", flush=True)
    if door is not None:
        print(f"gamenight-server: friends can open {door.url}", flush=True)
    await stop.wait()
    log.info("shutting down")
    if door is not None:
        await door.stop()
    await server.stop()
    await asyncio.to_thread(server.join_workers)


@dataclass(frozen=True, slots=True)
class WebOptions:
    """`--web PORT` and its options, as the command line gave them (server/web.py's WebConfig is made from them once
    the game server listens)."""

    port: int
    host: str
    max_sessions: int
    max_per_address: int
    idle_timeout_s: float


async def open_front_door(web: WebOptions, config: ServerConfig, server: GameServer) -> FrontDoor:
    """Start the web front door (aiohttp on this event loop) for the running game server."""
    from gamenight.server.web import FrontDoor, WebConfig, client_url

    door = FrontDoor(
        WebConfig(
            port=web.port,
            host=web.host,
            visitors=Path(user_data_dir("gamenight", appauthor=False)) / "web-visitors",
            max_sessions=web.max_sessions,
            max_per_address=web.max_per_address,
            idle_timeout_s=web.idle_timeout_s,
            certfile=config.certfile,
            keyfile=config.keyfile,
        ),
        client_url(config.host, server.port, bool(config.certfile), server.loopback_port if config.loopback else None),
    )
    await door.start()
    return door


def export_game(db: str, game_id: int) -> int:
    """Print one finished game as JSON, with its review (`analysis`) if it has one; exit status 1 if there is no such
    game."""
    store = open_store(db)
    try:
        record = store.get_game(game_id)
        analysis = store.analysis(game_id) if record is not None else None
    finally:
        store.close()
    if record is None:
        print(f"gamenight-server: no finished game {game_id} in {shown(db)}", file=sys.stderr)
        return 1
    if analysis is not None:
        record["analysis"] = analysis
    print(json.dumps(record, indent=2))
    return 0


def change_admins(db: str, change: str, name: str | None) -> int:
    """`admin add|remove NAME` or `admin list`: edit or print the store's admins (a running server reads them again
    within seconds). Only a claimed name can be added: its key is what proves an admin is who they say."""
    store = open_store(db)
    try:
        if change == "list":
            for _key, shown_name in store.admins():
                print(shown_name)
            return 0
        if not name or not name.strip():
            print(f"gamenight-server: admin {change} needs a NAME", file=sys.stderr)
            return 2
        key = name_key(clean_name(name))
        claim = next((c for c in store.claimed_names() if c.name_key == key), None)
        if change == "add" and claim is None:
            print(
                f"gamenight-server: nobody has claimed {name!r} here; connect with it (and a key) first",
                file=sys.stderr,
            )
            return 1
        changed = store.set_admin(key, claim.name if claim is not None else clean_name(name), change == "add")
    finally:
        store.close()
    print(f"{name}: {'admin' if change == 'add' else 'not an admin'}{'' if changed else ' (already)'}")
    return 0


def print_audit(db: str, limit: int) -> int:
    """`audit`: the latest admin actions, oldest first, one a line (UTC time, admin, action, target, reason)."""
    store = open_store(db)
    try:
        entries = store.audit(max(1, limit))
    finally:
        store.close()
    for entry in entries:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(entry["at"]))
        details = f" {json.dumps(entry['details'], sort_keys=True)}" if entry["details"] else ""
        print(f"{when} {entry['admin']} {entry['action']} {entry['target']}: {entry['reason']}{details}")
    return 0


def database(db: str, password_file: str | None) -> str:
    """`--db` with the PostgreSQL password of `--db-password-file` in it (held in memory only); a password on the
    command line gets a warning. Without either, libpq's PGPASSWORD, PGPASSFILE and ~/.pgpass apply."""
    if not is_postgres(db):
        if password_file is not None:
            raise StoreError("--db-password-file goes with a postgresql:// --db")
        return db
    try:
        parts = urlsplit(db)
        in_url = parts.password is not None
    except ValueError:
        return db  # the store says what is wrong with it
    if in_url:
        print(
            "gamenight-server: warning: the database password is on the command line, where every user of this"
            " machine can read it (ps); use --db-password-file, PGPASSWORD or ~/.pgpass (docs/cluster.md)",
            file=sys.stderr,
        )
    if password_file is None:
        return db
    try:
        password = Path(password_file).read_text().splitlines()[0] if Path(password_file).stat().st_size else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"cannot read the database password file {password_file}: {exc}") from None
    host = parts.netloc.rsplit("@", 1)[-1]
    user = quote(unquote(parts.username or ""), safe="")
    return urlunsplit(parts._replace(netloc=f"{user}:{quote(password, safe='')}@{host}"))


def cluster_options(args: argparse.Namespace) -> dict[str, Any]:
    """A cluster node's config: its Redis access and the cluster secret, from the command line, the environment
    and files (server/cluster/access.py says which wins); warnings printed. ValueError if they cannot be used."""
    from gamenight.server.cluster.access import resolve
    from gamenight.server.cluster.trust import load_secret

    access, warnings = resolve(args.cluster, args.redis_password_file, args.redis_ca, os.environ)
    for warning in warnings:
        print(f"gamenight-server: warning: {warning}", file=sys.stderr)
    return {
        "cluster": access.url,
        "redis_password": access.password,
        "redis_ca": access.ca,
        "cluster_secret": load_secret(args.cluster_secret_file),
    }


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script."""
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        db = database(args.db or default_db(), args.db_password_file)
        cluster = cluster_options(args) if args.cluster is not None and args.command is None else {}
    except (StoreError, ValueError) as exc:  # (ValueError: the cluster's options, access.py and trust.py)
        print(f"gamenight-server: {exc}", file=sys.stderr)
        return 2
    try:
        if args.command == "export":
            return export_game(db, args.game_id)
        if args.command == "admin":
            return change_admins(db, args.change, args.name)
        if args.command == "audit":
            return print_audit(db, args.limit)
        if args.command == "calibrate":
            from gamenight.server.calibrate import run  # the AI loads only for this command

            return run(db, args.game, args.games, args.levels, args.ms, args.seed)
        config = ServerConfig(
            host=args.host,
            port=args.port,
            ai_workers=args.ai_workers,
            db=db,
            certfile=args.certfile,
            keyfile=args.keyfile,
            metrics=args.metrics,
            **cluster,
            node_id=args.node_id,
            public_url=args.public_url,
            reached_as=tuple(args.reached_as),
            reserved_names=tuple(args.reserve_name),
        )
        config = apply_limits(config, args.limit)
        web = (
            WebOptions(args.web, args.web_host or args.host, args.web_sessions, args.web_per_address, args.web_idle)
            if args.web is not None
            else None
        )
        serve(config, web)
    except StoreError as exc:
        print(f"gamenight-server: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"gamenight-server: cannot start: {exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
