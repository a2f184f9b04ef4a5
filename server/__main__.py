"""`gamenight-server` / `python -m server`: run the game server until SIGINT or SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from server.app import GameServer, ServerConfig

log = logging.getLogger("gamenight.server")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line: where to listen, how loud to log, how many AI workers."""
    parser = argparse.ArgumentParser(prog="gamenight-server", description="Host gamenight rooms for your friends.")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (0.0.0.0 to let friends on your network join; default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765, help="TCP port (default 8765; 0 picks a free one)")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"],
                        help="how much to log (default info)")
    parser.add_argument("--ai-workers", type=int, default=None,
                        help="processes that run AI searches (default: one per core)")
    return parser.parse_args(argv)


async def serve_until_signalled(config: ServerConfig) -> None:
    """Serve until SIGINT/SIGTERM, then close every connection cleanly."""
    server = GameServer(config)
    await server.start()
    # The bound port is printed on its own line so a parent process (the client) can read it.
    print(f"gamenight-server listening on ws://{config.host}:{server.port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    log.info("shutting down")
    await server.stop()


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script."""
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    config = ServerConfig(host=args.host, port=args.port, ai_workers=args.ai_workers)
    try:
        asyncio.run(serve_until_signalled(config))
    except OSError as exc:
        print(f"gamenight-server: cannot listen on {args.host}:{args.port}: {exc.strerror}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
