"""The web front door's command line, its visitors' folders and what it loads, without a browser."""

from __future__ import annotations

import stat
import subprocess
import sys

import pytest

from gamenight.server.__main__ import parse_args

web = pytest.importorskip("gamenight.server.web", reason="the web extra (textual-serve) is not installed")


def test_web_flags_parse_and_go_with_web() -> None:
    """`--web PORT` and its bounds reach the arguments; a bound without --web, or a cap below 1, is refused."""
    args = parse_args(["--web", "8080", "--web-host", "0.0.0.0", "--web-sessions", "4", "--web-per-address", "2"])
    assert (args.web, args.web_host, args.web_sessions, args.web_per_address, args.web_idle) == (
        8080,
        "0.0.0.0",
        4,
        2,
        900.0,
    )
    for wrong in (["--web-sessions", "4"], ["--web", "8080", "--web-sessions", "0"], ["--web", "1", "--web-idle", "0"]):
        with pytest.raises(SystemExit):
            parse_args(wrong)


def test_a_visitors_folder_is_private_and_named_by_the_cookies_hash(tmp_path) -> None:
    """Each visitor's config folder (its name key and tokens) is readable by the host's user alone, and its name
    does not give the cookie away; the same cookie finds the same folder."""
    cookie = "x" * 43
    folder = web.visitor_folder(tmp_path / "visitors", cookie)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(folder.parent.stat().st_mode) == 0o700
    assert cookie not in folder.name
    assert web.visitor_folder(tmp_path / "visitors", cookie) == folder
    assert web.visitor_folder(tmp_path / "visitors", "y" * 43) != folder


def test_the_clients_command_is_fixed_and_reaches_the_server_on_loopback() -> None:
    """The one command a tab runs is this Python's client with the server's loopback URL (no shell, nothing from
    a request); a server on another address or behind TLS is reached on its plain loopback listener."""
    assert web.client_command("ws://127.0.0.1:8765") == [
        sys.executable,
        "-m",
        "gamenight.client",
        "ws://127.0.0.1:8765",
    ]
    assert web.client_url("0.0.0.0", 8765, False, None) == "ws://127.0.0.1:8765"
    assert web.client_url("192.0.2.7", 8765, True, 40001) == "ws://127.0.0.1:40001"


def test_the_front_door_loads_no_textual() -> None:
    """The server runs the client as a child process: importing the front door (textual-serve, aiohttp) loads no
    `textual` module into the server."""
    code = "import sys, gamenight.server.web\nprint(sorted(m for m in sys.modules if m.split('.')[0] == 'textual'))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "[]"
