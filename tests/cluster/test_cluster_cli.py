"""The command line of a node, and a lone server staying free of Redis."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys

import pytest

from gamenight.server.__main__ import parse_args


def test_cluster_flags_parse_and_node_flags_need_cluster() -> None:
    """`--cluster URL --node-id ID --public-url URL` reach the config; --node-id without --cluster is refused."""
    args = parse_args(["--cluster", "redis://r:6379/0", "--node-id", "n1", "--public-url", "ws://h:1"])
    assert (args.cluster, args.node_id, args.public_url) == ("redis://r:6379/0", "n1", "ws://h:1")
    with pytest.raises(SystemExit):
        parse_args(["--node-id", "n1"])


def test_a_lone_server_never_imports_redis() -> None:
    """Without --cluster, starting the server's modules and a GameServer loads no `redis` module."""
    code = (
        "import sys, asyncio\n"
        "from gamenight.server.app import GameServer, ServerConfig\n"
        "async def main():\n"
        "    server = GameServer(ServerConfig(port=0, ai_workers=1, db=':memory:'))\n"
        "    await server.start()\n"
        "    await server.stop()\n"
        "asyncio.run(main())\n"
        "assert not [m for m in sys.modules if m == 'redis' or m.startswith('redis.')], 'redis was imported'\n"
        "assert 'gamenight.server.cluster.node' not in sys.modules\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]


@pytest.mark.slow
def test_a_node_without_redis_says_so(tmp_path) -> None:
    """A node whose Redis cannot be reached exits with a one-line reason instead of serving alone."""
    from tests.cluster.redisproc import free_port

    command = [sys.executable, "-m", "gamenight.server", "--port", "0", "--db", str(tmp_path / "g.db")]
    command += ["--ai-workers", "1", "--cluster", f"redis://127.0.0.1:{free_port()}/0", "--log-level", "error"]
    secret = {"GAMENIGHT_CLUSTER_SECRET": secrets.token_hex(32)}
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, env=os.environ | secret)
    assert result.returncode == 1 and "cannot reach redis" in result.stderr
