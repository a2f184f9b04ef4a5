"""A cluster trusts only what it should: its Redis needs the password, and what grants identity in Redis (token
records, claims) counts only when signed by a node under the cluster's secret, for the key it is stored under."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from psycopg.conninfo import conninfo_to_dict
from redis.asyncio import Redis
from redis.exceptions import AuthenticationError

from gamenight.protocol.identity import Identity
from gamenight.protocol.messages import CreateRoom, Message
from gamenight.server.__main__ import database
from gamenight.server.cluster.access import PASSWORD_ENV, URL_ENV, AccessError, resolve, shown, without_password
from gamenight.server.cluster.coord import Keys
from gamenight.server.cluster.trust import SECRET_ENV, Records, SecretError, load_secret
from gamenight.server.cluster.wire import pack
from gamenight.server.sessions import hash_token
from gamenight.server.text import name_key
from tests.cluster.conftest import node_access, without_db_password
from tests.cluster.helpers import eventually, listed
from tests.cluster.redisproc import RedisProcess, make_tls
from tests.peer import Peer, identity_of
from tests.server.serverproc import ServerProcess

KEYS = Keys()


def start_node(redis_url: str, db: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """Run a node that is expected not to start; its exit code and output."""
    command = [sys.executable, "-m", "gamenight.server", "--port", "0", "--db", str(db), "--ai-workers", "1"]
    command += ["--log-level", "error", "--cluster", redis_url, *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


async def hello_with(url: str, name: str, token: str | None = None, identity: Identity | None = None) -> Message:
    """Say hello (resuming `token`, claiming with `identity`); the server's answer (welcome or error)."""
    peer = await Peer.open(url)
    try:
        await peer.send(peer.hello(name, identity, **({"resume": token} if token is not None else {})))
        return await peer.wait(lambda m: m.type in ("welcome", "error"))
    finally:
        await peer.close()


def test_a_node_without_the_redis_password_does_not_start(
    redis_server: RedisProcess, cluster_secret: Path, tmp_path: Path
) -> None:
    """An operator who forgot (or mistyped) the Redis password gets a one-line reason and exit code 1, at once."""
    for extra in ((), ("--redis-password-file", str(tmp_path / "wrong"))):
        (tmp_path / "wrong").write_text("not-the-password\n")
        done = start_node(redis_server.address, tmp_path / "g.db", "--cluster-secret-file", str(cluster_secret), *extra)
        assert done.returncode == 1, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "refused this node" in lines[0] and "Traceback" not in done.stderr, done.stderr


def test_a_node_without_the_cluster_secret_does_not_start(redis_server: RedisProcess, tmp_path: Path) -> None:
    """A node given no cluster secret (or a short one) refuses to start and says how to give one."""
    password = str(redis_server.password_file())
    done = start_node(redis_server.address, tmp_path / "g.db", "--redis-password-file", password)
    assert done.returncode == 2 and "GAMENIGHT_CLUSTER_SECRET" in done.stderr, done.stderr
    (tmp_path / "short").write_text("abc\n")
    done = start_node(
        redis_server.address, tmp_path / "g.db", "--redis-password-file", password, "--cluster-secret-file", "short"
    )
    assert done.returncode == 2 and "cluster secret" in done.stderr, done.stderr


async def test_a_forged_token_record_logs_nobody_in(
    cluster: Callable[..., ServerProcess], redis_server: RedisProcess
) -> None:
    """Write access to Redis does not make anyone a claimed player: a token record written straight into Redis
    (the outside probe's attack) is not a session on any node, while a node's own record still resumes."""
    nodes = [cluster("n1"), cluster("n2")]
    alice = await Peer.connect(nodes[0].url, "alice", key="alice")
    assert alice.welcome is not None and alice.welcome.claimed and alice.welcome.token is not None
    token = secrets.token_urlsafe(24)
    forged = json.dumps({"name": "alice", "claimed": True, "bot": False})
    async with Redis.from_url(redis_server.url) as redis:
        await redis.set(KEYS.token(hash_token(token)), forged)
    answer = await hello_with(nodes[1].url, "mallory", token)
    assert answer.type == "error" and answer.code == "bad_token", answer
    assert (await hello_with(nodes[1].url, "alice", alice.welcome.token)).type == "welcome"  # a true one works
    await alice.close()


async def test_a_forged_claim_takes_no_name(cluster: Callable[..., ServerProcess], redis_server: RedisProcess) -> None:
    """A claim written into the cluster's claims in Redis (with the forger's key) takes no name: the name's real
    first claimer gets it, and the forger's key does not."""
    nodes = [cluster("n1"), cluster("n2")]
    forger = identity_of("mallory")
    forged = {"name": "alice", "key_hash": "", "public_key": forger.public_key, "bot": False}
    async with Redis.from_url(redis_server.url) as redis:
        await redis.hset(KEYS.claims, name_key("alice"), json.dumps(forged))
    alice = await Peer.connect(nodes[1].url, "alice", key="alice")
    assert alice.welcome is not None and (alice.welcome.name, alice.welcome.claimed) == ("alice", True)
    async with Redis.from_url(redis_server.url) as redis:  # the forged claim was replaced by alice's
        raw = await redis.hget(KEYS.claims, name_key("alice"))
    assert raw is not None and json.loads(raw)["public_key"] == identity_of("alice").public_key
    await alice.close()
    answer = await hello_with(nodes[0].url, "alice", identity=forger)
    assert answer.type == "error" or (answer.name, answer.claimed) != ("alice", True), answer


async def test_a_signed_record_moved_to_another_key_is_refused(
    cluster: Callable[..., ServerProcess], redis_server: RedisProcess
) -> None:
    """A node's own signed records are good only where it stored them: alice's token record copied under a token
    the attacker chose does not resume as alice, and the attacker's own signed claim copied over the name `bob`
    does not take bob's name."""
    nodes = [cluster("n1"), cluster("n2")]
    alice = await Peer.connect(nodes[0].url, "alice", key="alice")
    mallory = await Peer.connect(nodes[0].url, "mallory", key="mallory")
    assert alice.welcome is not None and alice.welcome.token is not None and mallory.welcome is not None
    token = secrets.token_urlsafe(24)
    alices, mallorys = KEYS.token(hash_token(alice.welcome.token)), name_key("mallory")
    async with Redis.from_url(redis_server.url) as redis:

        async def stored() -> bool:
            return bool(await redis.exists(alices)) and bool(await redis.hexists(KEYS.claims, mallorys))

        await eventually(stored, "alice's token record and mallory's claim in redis")
        await redis.set(KEYS.token(hash_token(token)), await redis.get(alices) or b"")
        await redis.hset(KEYS.claims, name_key("bob"), await redis.hget(KEYS.claims, mallorys) or b"")
    answer = await hello_with(nodes[1].url, "mallory", token)
    assert answer.type == "error" and answer.code == "bad_token", answer
    bob = await Peer.connect(nodes[1].url, "bob", key="bob")
    assert bob.welcome is not None and (bob.welcome.name, bob.welcome.claimed) == ("bob", True)
    for peer in (alice, mallory, bob):
        await peer.close()


async def test_two_nodes_share_rooms_over_a_password_protected_redis(
    cluster: Callable[..., ServerProcess], redis_server: RedisProcess
) -> None:
    """With Redis requiring the nodes' ACL user and password, a node logged in works as before: a room opened
    on one node is listed on the other."""
    nodes = [cluster("n1"), cluster("n2")]
    host = await Peer.connect(nodes[0].url, "host")
    code = (await host.request(CreateRoom, game="othello", options={})).room
    other = await Peer.connect(nodes[1].url, "guest")
    await eventually(lambda: listed(other, code), "the room listed on the other node")
    async with Redis.from_url(redis_server.address) as anonymous:  # without the password: refused
        with pytest.raises(AuthenticationError):
            await anonymous.get(KEYS.boot)
    for peer in (host, other):
        await peer.close()


def descendants(pid: int) -> list[int]:
    """The process and every process under it (its AI workers, the forkserver, ...), from /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # it ended meanwhile
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        found.append(todo.pop())
        todo.extend(children.get(found[-1], []))
    return found


def argv_of(pids: list[int]) -> str:
    """The command lines of these processes as `ps` shows them to every user."""
    lines = []
    for pid in pids:
        try:
            lines.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue
    return "\n".join(lines)


def test_the_database_password_comes_from_a_file_or_the_environment(pg_url: str, tmp_path: Path) -> None:
    """An operator keeps PostgreSQL's password off the command line (--db-password-file, or libpq's PGPASSWORD):
    the server opens its database with it, and no process of the server shows the password in `ps`; without any
    password the server does not start."""
    bare, env = without_db_password(pg_url)
    assert env is not None and bare != pg_url
    password = env["PGPASSWORD"]
    (tmp_path / "pg-password").write_text(password + "\n")
    for server in (
        ServerProcess(bare, "--db-password-file", str(tmp_path / "pg-password")),
        ServerProcess(bare, env=env),
    ):
        server.start()
        try:
            assert server.proc is not None
            shown = argv_of(descendants(server.proc.pid))
            assert bare in shown and password not in shown
        finally:
            assert server.stop() == 0
    command = [sys.executable, "-m", "gamenight.server", "--port", "0", "--db", bare, "--ai-workers", "1"]
    refused = subprocess.run(command, capture_output=True, text=True, timeout=120, env=os.environ | {"PGPASSWORD": ""})
    assert refused.returncode == 2 and "cannot use the database" in refused.stderr, refused.stderr


def test_a_database_password_on_the_command_line_is_warned_about(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A password written into --db works but is warned about (ps shows it); --db-password-file's replaces it,
    whatever characters it holds."""
    url = "postgresql://gn:in%20argv@db.example:5432/games"
    assert database(url, None) == url
    assert "password is on the command line" in capsys.readouterr().err
    assert database("postgresql://gn@db.example/games", None) == "postgresql://gn@db.example/games"
    assert capsys.readouterr().err == ""
    (tmp_path / "pw").write_text("s3 cret/:@%x\n")
    with_file = conninfo_to_dict(database("postgresql://gn@db.example/games", str(tmp_path / "pw")))
    assert (with_file["user"], with_file["password"], with_file["dbname"]) == ("gn", "s3 cret/:@%x", "games")


@pytest.mark.slow  # two nodes and a third that is refused: 17 s on a loaded 2-core machine
def test_nodes_reach_a_tls_redis_and_verify_its_certificate(
    redis_server: RedisProcess, cluster_secret: Path, tmp_path: Path
) -> None:
    """A Redis on another machine is reached over TLS (rediss://, --redis-ca): two nodes share rooms through it;
    a node that cannot verify the server's certificate (the system's CAs do not know the test's) does not start."""
    redis_server.stop()  # (the fixture's plain one: skipped with a reason where redis-server is missing)
    tls = RedisProcess(tmp_path / "tls-redis", tls=make_tls(tmp_path / "tls")).start()
    try:
        assert tls.tls is not None
        access = node_access(tls, cluster_secret)
        db = tmp_path / "games.db"
        nodes = [ServerProcess(db, *access, "--redis-ca", str(tls.tls.ca), "--node-id", n).start() for n in "ab"]
        try:
            asyncio.run(room_seen_across(nodes))
        finally:
            for node in nodes:
                node.kill()
        refused = start_node(tls.address, db, *access[2:])
        assert refused.returncode == 1 and "does not verify" in refused.stderr, refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    finally:
        tls.stop()


async def room_seen_across(nodes: list[ServerProcess]) -> None:
    """A room opened on the first node is listed on the second."""
    host = await Peer.connect(nodes[0].url, "host")
    code = (await host.request(CreateRoom, game="othello", options={})).room
    other = await Peer.connect(nodes[1].url, "guest")
    await eventually(lambda: listed(other, code), "the room listed on the other node")
    for peer in (host, other):
        await peer.close()


def test_records_hold_only_where_and_under_the_secret_they_were_signed(caplog: pytest.LogCaptureFixture) -> None:
    """A node believes a record or bus message only if it was signed with the cluster's secret for the very key or
    channel it was read from; what fails is logged, in one warning however many fail at once."""
    nodes, stranger = Records(b"k" * 32), Records(b"x" * 32)
    sealed = nodes.seal("gn:token:aa", {"name": "alice", "claimed": True, "bot": False})
    assert nodes.open("gn:token:aa", sealed) == {"name": "alice", "claimed": True, "bot": False}
    tampered = sealed.replace('"claimed":true', '"claimed":false')
    signed = nodes.sign("gn:all", b'{"t":"h"}\n')
    with caplog.at_level(logging.WARNING, logger="gamenight.server.cluster"):
        assert nodes.open("gn:token:bb", sealed) is None  # moved
        assert nodes.open("gn:token:aa", tampered) is None
        assert nodes.open("gn:token:aa", stranger.seal("gn:token:aa", {"name": "alice"})) is None
        assert nodes.open("gn:token:aa", '{"name": "alice", "claimed": true, "bot": false}') is None
        assert nodes.open("gn:token:aa", "not json") is None
        assert nodes.verify("gn:all", signed) == b'{"t":"h"}\n'
        assert nodes.verify("gn:to:n1", signed) is None and nodes.verify("gn:all", signed[:-1] + b"?") is None
    assert nodes.refused == 7
    assert len([r for r in caplog.records if "forged" in r.getMessage()]) == 1


def test_the_cluster_secret_comes_from_a_file_or_the_environment(tmp_path: Path) -> None:
    """The secret file wins over GAMENIGHT_CLUSTER_SECRET; neither, or a short secret, is refused with a reason."""
    (tmp_path / "secret").write_text("f" * 40 + "\n")
    assert load_secret(str(tmp_path / "secret"), {SECRET_ENV: "e" * 40}) == b"f" * 40
    assert load_secret(None, {SECRET_ENV: "e" * 40}) == b"e" * 40
    for path, environ in ((None, {}), (None, {SECRET_ENV: "short"}), (str(tmp_path / "missing"), {})):
        with pytest.raises(SecretError):
            load_secret(path, environ)


async def test_a_forged_hello_on_the_bus_claims_no_name(
    cluster: Callable[..., ServerProcess], redis_server: RedisProcess
) -> None:
    """A message published straight onto the nodes' shared channel (a forged "this session said hello with that
    claim") is not believed: the name's real owner still claims it on any node."""
    nodes = [cluster("n1"), cluster("n2")]
    forger = identity_of("mallory")
    header = {"t": "h", "e": "n1", "s": "forged", "n": "alice", "h": "x", "b": False, "c": True, "ip": "10.0.0.9"}
    header |= {"a": [], "k": "", "p": forger.public_key}
    async with Redis.from_url(redis_server.url) as redis:
        assert await redis.publish(KEYS.everyone, pack(header)) == 2  # both nodes received it
    alice = await Peer.connect(nodes[1].url, "alice", key="alice")
    assert alice.welcome is not None and (alice.welcome.name, alice.welcome.claimed) == ("alice", True)
    await alice.close()


def test_the_redis_address_and_password_come_from_where_the_docs_say(tmp_path: Path) -> None:
    """docs/cluster.md's order: the password file, then GAMENIGHT_REDIS_PASSWORD, then the URL's (warned about
    when on the command line); `--cluster` alone takes GAMENIGHT_REDIS_URL; --redis-ca needs rediss://."""
    (tmp_path / "pw").write_text("from-file\n")
    environ = {PASSWORD_ENV: "from-env", URL_ENV: "rediss://gn:in-env@r:6380/0"}
    access, warnings = resolve("redis://gn:in-argv@r:6379/0", str(tmp_path / "pw"), None, environ)
    assert (access.url, access.password) == ("redis://gn:in-argv@r:6379/0", "from-file") and len(warnings) == 1
    access, warnings = resolve("", None, "ca.pem", environ)
    assert (access.url, access.password, access.ca) == ("rediss://gn:in-env@r:6380/0", "from-env", "ca.pem")
    assert warnings == []  # (a password in the environment's URL is not on the command line)
    access, _ = resolve("redis://gn@r:6379/0", None, None, {})
    assert access.password is None and shown("redis://gn:secret@r:6379/0") == "redis://gn:***@r:6379/0"
    assert without_password("redis://gn:secret@r:6379/0") == "redis://gn@r:6379/0"
    for cluster, ca, environ in (("", None, {}), ("redis://r", "ca.pem", {}), ("http://r", None, {})):
        with pytest.raises(AccessError):
            resolve(cluster, None, ca, environ)
