"""gamenight-bot facing a hostile server (issue 33): what the server sends never becomes an engine command, an id
never names a file outside the bot's log folder, and a bad challenge never wedges the bot.

The hostile server is the real one behind a proxy that rewrites what it says to the bot (as a server the bot does
not trust, or anyone on plain ws://, could)."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path

from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from gamenight.client.bot.engines import EngineFailure, EngineProcess, Failure
from gamenight.protocol import decode, encode
from gamenight.protocol.codec import MAX_SERVER_FRAME
from gamenight.protocol.messages import Batch, Challenged, Error, Message, Moved, Welcome
from gamenight.protocol.vocab import PlayerInfo
from tests.client.botrun import HANG_S, challenge, config, engine, play_out, running
from tests.peer import Peer
from tests.waiting import eventually

Rewrite = Callable[[Message], list[Message]]


@contextlib.asynccontextmanager
async def hostile(upstream: str, rewrite: Rewrite) -> AsyncIterator[str]:
    """A websocket proxy to `upstream` that hands each message the server sends through `rewrite` (which may
    change it, drop it or add others); the URL to point a client at."""

    async def relay(client: ServerConnection) -> None:
        async with connect(upstream, max_size=MAX_SERVER_FRAME) as server_side:

            async def down() -> None:
                async for frame in server_side:
                    message = decode(frame, MAX_SERVER_FRAME)
                    if isinstance(message, Batch):
                        await client.send(frame)
                        continue
                    for out in rewrite(message):
                        await client.send(encode(out))

            async def up() -> None:
                async for frame in client:
                    await server_side.send(frame)

            tasks = [asyncio.create_task(down()), asyncio.create_task(up())]
            with contextlib.suppress(ConnectionClosed):
                await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async with serve(relay, "127.0.0.1", 0) as proxy:
        port = next(iter(proxy.sockets)).getsockname()[1]
        yield f"ws://127.0.0.1:{port}"


async def test_a_move_from_the_server_never_becomes_an_engine_command(server, human: Peer, tmp_path: Path) -> None:
    """Every opponent move the server reports to the bot carries "\\nprintsgf FILE": the GTP engine is never sent
    that line (its own log of what it read shows no printsgf, no file is written): the bot resigns the game."""
    target = tmp_path / f"pwned-{secrets.token_hex(4)}.sgf"

    def inject(message: Message) -> list[Message]:
        if isinstance(message, Moved) and message.move:
            return [replace(message, move=f"{message.move}\nprintsgf {target}")]
        return [message]

    async with hostile(server.url, inject) as url:
        cfg = config(url, tmp_path, "rhino", "othello", engine("gtp_othello.py", "--noise"), "gtp")
        async with running(cfg, human):
            gone = await challenge(human, "rhino", "othello", {"size": 6})
            assert gone.why == "accepted", gone
            final = await play_out(human, gone.room, 0)
    assert final.result is not None and final.result.reason == "resign"  # the bot gave the game up, as for any
    assert cfg.log_dir is not None  # engine failure, rather than pass a forged line on
    read = "".join(path.read_text() for path in cfg.log_dir.glob("*.stderr.log"))
    assert "thinking about clear_board" in read  # the engine's log does show what it was sent
    assert "printsgf" not in read and not target.exists()


async def test_a_challenge_id_naming_another_folder_neither_escapes_nor_wedges_the_bot(
    server, human: Peer, tmp_path: Path
) -> None:
    """A challenge whose id is "../../<folder>/x" makes no file outside the bot's log folder, and the bot goes on
    taking challenges (it used to raise OSError and then answer "busy" to everyone until restarted)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    forged = f"../../{outside.name}/evil"
    refused = asyncio.Event()  # the server's refusal of the bot's accept of the forged challenge passed the proxy

    def forge(message: Message) -> list[Message]:
        if isinstance(message, Welcome):
            sender = PlayerInfo(name="mallory", claimed=True)
            return [message, Challenged(forged, sender, "othello", {"size": 6}, 1, 60_000)]
        if isinstance(message, Error) and forged in message.message:
            refused.set()
        return [message]

    async with hostile(server.url, forge) as url:
        cfg = config(url, tmp_path / "bot", "rhino", "othello", engine("gtp_othello.py"), "gtp")
        async with running(cfg, human) as runner:
            # The real challenge must come after the forged one is settled (else "busy" is the right answer).
            await asyncio.wait_for(refused.wait(), HANG_S)
            await eventually(lambda: _true(not runner.pending), "the bot to drop the refused accept")
            gone = await challenge(human, "rhino", "othello", {"size": 6})
            assert gone.why == "accepted", gone
            final = await play_out(human, gone.room, 0)
    assert final.result is not None
    assert list(outside.iterdir()) == []
    assert cfg.log_dir is not None and all("/" not in p.name for p in cfg.log_dir.iterdir())


async def test_an_engine_line_with_a_control_character_is_refused(tmp_path: Path) -> None:
    """The engine process is never written a line holding a newline or another control character (a move
    `d3\\nquit` would be two commands): it is refused as malformed and the engine reads nothing of it."""
    seen = tmp_path / "stdin.txt"
    process = EngineProcess(["python3", "-c", f"import sys; open({str(seen)!r}, 'w').write(sys.stdin.read())"])
    await process.start()
    for line in ("play b d3\nquit", "play b d3\rquit", "play b \x00d3"):
        try:
            await process.send(line)
        except EngineFailure as failure:
            assert failure.failure == Failure.MALFORMED
        else:
            raise AssertionError(f"{line!r} was written")
    await process.send("play b d3")
    await process.close()
    assert seen.read_text() == "play b d3\n"


async def _true(value: bool) -> bool:
    """`value`, awaitable (what `eventually` checks)."""
    return value
