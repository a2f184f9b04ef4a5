"""`gamenight-bot URL --name N --game G --engine "CMD ARGS" --protocol P`: seat an engine on a gamenight server as a
bot player that accepts challenges (docs/bots.md, "Running a bot: gamenight-bot")."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from pathlib import Path

from gamenight.client.__main__ import server_url
from gamenight.client.bot.engines import PROTOCOLS
from gamenight.client.bot.runner import (
    ACCEPT_RULES,
    DEFAULT_MIN_CLOCK_S,
    DEFAULT_OVERHEAD_MS,
    RATED_RULES,
    BotConfig,
    BotRunner,
    Refused,
    bot_key,
    default_key_file,
)
from gamenight.client.config import log_dir

EXIT_REFUSED = 2


def parse_args(argv: list[str] | None = None) -> BotConfig:
    """The command line as a BotConfig."""
    parser = argparse.ArgumentParser(
        prog="gamenight-bot",
        description="Seat a game engine on a gamenight server as a bot player: it accepts challenges for one game "
        "and plays them, one engine process per game.",
    )
    parser.add_argument("url", type=server_url, help="the server, e.g. ws://host:8765")
    parser.add_argument("--name", required=True, help="the bot's player name (claimed with its key on first use)")
    parser.add_argument(
        "--key-file",
        type=Path,
        help="where the key that claims the name is kept (made on first run, mode 0600); "
        "default: bots/NAME.key in the gamenight config folder",
    )
    parser.add_argument("--game", required=True, help="the game it plays: othello, connect4, pentago or tron")
    parser.add_argument("--engine", required=True, help='the engine\'s command line, e.g. "gtp-rhino --level 3"')
    parser.add_argument("--protocol", required=True, choices=sorted(PROTOCOLS), help="what the engine speaks")
    parser.add_argument(
        "--accept", choices=ACCEPT_RULES, default="all", help="whose challenges it takes (default: all)"
    )
    parser.add_argument(
        "--rated", choices=RATED_RULES, default="any", help="rated challenges only (yes), casual only (no), or any"
    )
    parser.add_argument(
        "--min-clock",
        type=float,
        default=DEFAULT_MIN_CLOCK_S,
        metavar="SECONDS",
        help="decline clocks shorter than this, counted as time + 40 increments "
        f"(default {DEFAULT_MIN_CLOCK_S:g}; untimed and correspondence games always pass)",
    )
    parser.add_argument("--max-games", type=int, default=1, help="games it plays at once (default 1)")
    parser.add_argument(
        "--move-overhead-ms",
        type=int,
        default=DEFAULT_OVERHEAD_MS,
        help=f"kept back from each move's time for the network (default {DEFAULT_OVERHEAD_MS})",
    )
    parser.add_argument(
        "--log-dir", type=Path, help="where its log and the engines' stderr go (default: the gamenight log folder)"
    )
    args = parser.parse_args(argv)
    kinds = PROTOCOLS[args.protocol].games
    if args.game not in kinds:
        parser.error(f"a {args.protocol} engine plays {', '.join(sorted(kinds))}, not {args.game}")
    if args.min_clock < 0:
        parser.error("--min-clock cannot be negative")
    if args.max_games < 1:
        parser.error("--max-games must be at least 1")
    if args.move_overhead_ms < 0:
        parser.error("--move-overhead-ms cannot be negative")
    return BotConfig(
        url=args.url,
        name=args.name,
        game=args.game,
        engine=args.engine,
        protocol=args.protocol,
        key_file=args.key_file or default_key_file(args.name),
        accept=args.accept,
        rated=args.rated,
        min_clock_s=args.min_clock,
        max_games=args.max_games,
        move_overhead_ms=args.move_overhead_ms,
        log_dir=args.log_dir or log_dir() / "bots",
    )


def setup_logging(config: BotConfig) -> None:
    """The runner's log: to stderr and to NAME.log in the log folder."""
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if config.log_dir is not None:
        config.log_dir.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(config.log_dir / f"{default_key_file(config.name).stem}.log"))
    formatter = logging.Formatter("%(asctime)s %(levelname)s %(message)s")
    for handler in handlers:
        handler.setFormatter(formatter)
    logger = logging.getLogger("gamenight.bot")
    logger.setLevel(logging.INFO)
    for handler in handlers:
        logger.addHandler(handler)


async def run(config: BotConfig) -> int:
    """Run the bot until SIGINT/SIGTERM (or a refusal); the exit code."""
    assert config.key_file is not None
    try:
        key = bot_key(config.key_file)
    except (OSError, ValueError) as exc:
        logging.getLogger("gamenight.bot").error("cannot use the key file: %s", exc)
        return EXIT_REFUSED
    runner = BotRunner(config, key)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):  # (Windows: Ctrl-C then ends the process as usual)
            loop.add_signal_handler(signum, runner.stop)
    try:
        await runner.run()
    except Refused as refusal:
        logging.getLogger("gamenight.bot").error("refused: %s", refusal)
        return EXIT_REFUSED
    return 0


def main(argv: list[str] | None = None) -> int:
    """The `gamenight-bot` console script."""
    config = parse_args(argv)
    setup_logging(config)
    return asyncio.run(run(config))


if __name__ == "__main__":
    sys.exit(main())
