"""`gamenight [URL] [--name NAME]`: play on a friend's server, or (with no URL) on a private one started here.

`gamenight identity export|import|show` moves the player's identity between machines (client/identity_cli.py)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from urllib.parse import urlsplit

from gamenight.client.config import LOCAL_SERVER, clean_name, log_dir, saved_name
from gamenight.client.local_server import LocalServer, LocalServerError

DEFAULT_PORT = 8765  # the server's default port, assumed when a bare host name is given
SCHEMES = ("ws", "wss")

RunApp = Callable[..., int]


def server_url(text: str) -> str:
    """A ws:// or wss:// URL from what was typed; a bare "host" or "host:port" means ws:// (port 8765)."""
    text = text.strip()
    bare = "://" not in text
    parts = urlsplit(f"ws://{text}" if bare else text)
    try:
        port = parts.port
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} has a bad port number") from None
    if parts.scheme not in SCHEMES or not parts.hostname:
        raise argparse.ArgumentTypeError(f"{text!r} is not a ws:// or wss:// server address")
    if bare and port is None:
        parts = parts._replace(netloc=f"{parts.netloc}:{DEFAULT_PORT}")
    return parts.geturl()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="gamenight",
        description="Play board and arcade games with friends in your terminal. With no URL, a private "
        "server is started on this machine and you can play against the AI at once.",
    )
    parser.add_argument("url", nargs="?", type=server_url, help="a friend's server, e.g. ws://friend.example:8765")
    parser.add_argument("--name", help="the name other players see (default: the one you gave last time)")
    parser.add_argument(
        "--quiet",
        action="store_true",
        help='no terminal bell (your move, a challenge, low time); "sound": false in the config file does the same',
    )
    return parser.parse_args(argv)


def launch(
    url: str | None, name: str | None, run_app: RunApp, server: LocalServer | None = None, quiet: bool = False
) -> int:
    """Run the app against `url`, or against a private server started for the session and stopped after.

    The resume token is kept per server: under the URL for a friend's server, under "local" for the
    private one (whose port changes each run but whose database, and so your seats, stay).
    """
    if url is not None:
        return run_app(url, name, session_key=url, quiet=quiet)
    server = server or LocalServer(log_path=log_dir() / "server.log")
    try:
        print("gamenight: starting a private server…", file=sys.stderr, flush=True)
        local_url = server.start()
        return run_app(local_url, name, session_key=LOCAL_SERVER, quiet=quiet)
    finally:
        server.stop()


def main(argv: list[str] | None = None, run_app: RunApp | None = None) -> int:
    """Entry point of the `gamenight` command."""
    words = sys.argv[1:] if argv is None else argv
    if words[:1] == ["identity"]:
        from gamenight.client.identity_cli import main as identity_main

        return identity_main(words[1:])
    args = parse_args(argv)
    name = clean_name(args.name) if args.name else saved_name()
    if run_app is None:
        from gamenight.client.app import run_app as run_textual

        run_app = run_textual
    try:
        return launch(args.url, name or None, run_app, quiet=args.quiet)
    except LocalServerError as exc:
        print(f"gamenight: could not start a private server: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
