"""Optional TLS: with a certificate the server speaks wss:// and games work over it."""

from __future__ import annotations

import shutil
import ssl
import subprocess

import pytest
from websockets.asyncio.client import connect

from gamenight.protocol import PROTOCOL_VERSION, decode, encode
from gamenight.protocol.messages import Hello
from gamenight.server.app import GameServer, ServerConfig


@pytest.fixture
def certificate(tmp_path):
    """A self-signed certificate for 127.0.0.1, made with the openssl command."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


async def test_wss_hello(certificate):
    """A client that trusts the certificate connects with wss:// and is welcomed."""
    cert, key = certificate
    server = GameServer(ServerConfig(port=0, certfile=str(cert), keyfile=str(key)))
    await server.start()
    try:
        context = ssl.create_default_context(cafile=str(cert))
        async with connect(f"wss://127.0.0.1:{server.port}", ssl=context) as ws:
            assert decode(await ws.recv()).type == "hello_nonce"
            await ws.send(encode(Hello(protocol=PROTOCOL_VERSION, name="secure")))
            assert decode(await ws.recv()).type == "welcome"
    finally:
        await server.stop()


async def test_the_loopback_listener_speaks_plain_ws_beside_wss(certificate):
    """With `loopback` (the web front door's clients on this host), a server with a certificate also welcomes
    plain ws:// on 127.0.0.1, on a port of its own, while its public port stays wss:// only."""
    cert, key = certificate
    server = GameServer(ServerConfig(port=0, certfile=str(cert), keyfile=str(key), loopback=True))
    await server.start()
    try:
        assert server.loopback_port != server.port
        async with connect(f"ws://127.0.0.1:{server.loopback_port}") as ws:
            assert decode(await ws.recv()).type == "hello_nonce"
            await ws.send(encode(Hello(protocol=PROTOCOL_VERSION, name="browser")))
            assert decode(await ws.recv()).type == "welcome"
        with pytest.raises(Exception):  # noqa: B017 - a plain handshake on the TLS port fails, however it fails
            async with connect(f"ws://127.0.0.1:{server.port}", open_timeout=5):
                pass
    finally:
        await server.stop()
