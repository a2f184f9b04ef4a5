"""The project's layering rules, checked on the source and on what importing a module really loads: pure rules
and AI, msgpack only in the protocol's codec, the sans-I/O referee without the network."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gamenight.server.games import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
IO_LIBRARIES = ("asyncio", "websockets", "msgpack", "textual")


def _imports(path: Path) -> set[str]:
    """The top-level names of every absolute module a file imports, TYPE_CHECKING blocks included."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def _loaded_by(module: str, libraries: tuple[str, ...] = IO_LIBRARIES) -> list[str]:
    """The I/O libraries (of `libraries`) that importing `module` in a fresh interpreter loads."""
    script = (
        f"import sys, json; import {module}; print(json.dumps(sorted(m for m in {libraries!r} if m in sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT)
    return list(json.loads(done.stdout))


def _pure_modules() -> list[str]:
    """Every registered game's rules module and AI module, with the AI dispatch and the search core."""
    modules = {"gamenight.server.ai.play", "gamenight.server.ai.search", "gamenight.server.games"}
    for entry in REGISTRY.values():
        modules.add(type(entry.rules).__module__)
        if entry.ai:
            modules.add(entry.ai)
    return sorted(modules)


@pytest.mark.parametrize("module", _pure_modules())
def test_rules_and_ai_load_no_io_library(module: str) -> None:
    """A game's rules and AI run anywhere (a worker process, a bench, a bot): importing them loads none of
    asyncio, websockets, msgpack or textual."""
    assert _loaded_by(module) == []


def test_the_referee_loads_no_network() -> None:
    """The room and the lobby are sans-I/O: importing them loads no event loop, socket library, codec or UI."""
    assert _loaded_by("gamenight.server.lobby") == []


def test_the_referee_loads_no_database() -> None:
    """The room, its drivers and the lobby only describe what is stored (server/records.py): importing them loads
    neither sqlite3 nor psycopg, so the referee runs and is tested without a database."""
    assert _loaded_by("gamenight.server.lobby", ("sqlite3", "psycopg")) == []


def test_only_the_codec_imports_msgpack() -> None:
    """Only protocol/codec.py knows the wire encoding: no other source file of the three packages imports
    msgpack."""
    importers = sorted(
        str(path.relative_to(ROOT))
        for folder in ("server", "client", "protocol")
        for path in (ROOT / folder).rglob("*.py")
        if "msgpack" in _imports(path)
    )
    assert importers == ["protocol/codec.py"]


def test_the_servers_own_process_loads_no_ai() -> None:
    """A running server searches only in its worker processes: after greeting a player with every game's bots,
    its own process has loaded no AI module and not the search core."""
    script = """
import asyncio, sys
from websockets.asyncio.client import connect
from gamenight.protocol import decode, encode
from gamenight.protocol.messages import PROTOCOL_VERSION, Hello
from gamenight.server.app import GameServer, ServerConfig

async def main():
    server = GameServer(ServerConfig(port=0, ai_workers=1))
    await server.start()
    try:
        async with connect(f"ws://127.0.0.1:{server.port}") as ws:
            await ws.recv()  # the hello_nonce
            await ws.send(encode(Hello(protocol=PROTOCOL_VERSION, name="ann")))
            welcome = decode(await ws.recv())
    finally:
        await server.stop()
    print(" ".join(sorted(bot for game in welcome.games for bot in game.bots)))
    print(" ".join(sorted(m for m in sys.modules if m.startswith("gamenight.server.ai"))))

asyncio.run(main())
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT)
    listed, loaded = done.stdout.split("\n")[:2]
    assert {"classic", "greedy", "playout", "voronoi"} <= set(listed.split())
    assert loaded == ""


@pytest.mark.parametrize("module", ["gamenight.client.connection", "gamenight.client.bot.runner"])
def test_the_connection_and_the_bot_load_no_textual(module: str) -> None:
    """gamenight-bot runs headless on the TUI's own connection: importing the connection or the bot runner loads
    no Textual."""
    assert "textual" not in _loaded_by(module)
