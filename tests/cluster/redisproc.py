"""A real `redis-server` for the cluster tests: a free loopback port, a temporary folder, stopped after.

It is protected as docs/cluster.md says a cluster's Redis must be: the default user is off, and the nodes log in
as the ACL user `gamenight` with a password (rights: the cluster's keys and channels, no dangerous commands); the
tests' own commands an operator would give (CLIENT PAUSE) use the user `admin`.
With `tls` (a `TlsFiles` of certificates) it speaks only TLS.
"""

from __future__ import annotations

import datetime
import ipaddress
import secrets
import shutil
import socket
import ssl
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
START_TIMEOUT_S = 30.0  # hang guard only
USER = "gamenight"
RIGHTS = "~gn:* &gn:* +@all -@dangerous"
"""The ACL rights of the nodes' user, as docs/cluster.md gives them (keys and channels under the default prefix)."""


@dataclass(frozen=True, slots=True)
class TlsFiles:
    """PEM files of a TLS Redis: the CA, and the server's certificate (for 127.0.0.1) and key."""

    ca: Path
    cert: Path
    key: Path


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def make_tls(folder: Path) -> TlsFiles:
    """A new CA, and a certificate it signed for 127.0.0.1 (what a TLS Redis on loopback shows), as PEM files."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)

    def certificate(subject: str, key: ec.EllipticCurvePrivateKey, issuer: x509.Name | None) -> x509.CertificateBuilder:
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
        return (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(issuer or name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
        )

    ca_key, server_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = certificate("gamenight test CA", ca_key, None).add_extension(
        x509.BasicConstraints(ca=True, path_length=None), critical=True
    )
    ca_cert = ca.sign(ca_key, hashes.SHA256())
    server = certificate("127.0.0.1", server_key, ca_cert.subject).add_extension(
        x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False
    )
    files = TlsFiles(folder / "ca.pem", folder / "redis.pem", folder / "redis.key")
    files.ca.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    files.cert.write_bytes(server.sign(ca_key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM))
    files.key.write_bytes(
        server_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    files.key.chmod(0o600)
    return files


class RedisProcess:
    """One redis-server child process (no persistence: a restart loses everything, the worst case for nodes)."""

    def __init__(self, folder: Path, port: int | None = None, tls: TlsFiles | None = None) -> None:
        self.folder = folder
        self.port = port or free_port()
        self.tls = tls
        self.password = secrets.token_hex(16)
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        """The URL of this Redis with the user but no password (what a node is given on its command line)."""
        return f"{'rediss' if self.tls else 'redis'}://{USER}@127.0.0.1:{self.port}/0"

    @property
    def url(self) -> str:
        """The URL with the user and password (for the tests' own clients)."""
        return self.address.replace(f"{USER}@", f"{USER}:{self.password}@")

    @property
    def admin_url(self) -> str:
        """The URL of the operator's user (every command: the tests' CLIENT PAUSE and the like)."""
        return self.address.replace(f"{USER}@", f"admin:{self.password}@")

    def password_file(self) -> Path:
        """A file holding the password (mode 0600), as an operator gives it to a node."""
        path = self.folder / "redis-password"
        path.write_text(self.password + "\n")
        path.chmod(0o600)
        return path

    def start(self) -> RedisProcess:
        """Start it and wait until it accepts connections."""
        self.folder.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [
                REDIS_SERVER,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.folder),
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
                "--loglevel",
                "warning",
                "--user",
                "default",
                "off",
                "--user",
                USER,
                "on",
                f">{self.password}",
                *RIGHTS.split(),
                "--user",
                "admin",
                "on",
                f">{self.password}",
                *["~*", "&*", "+@all"],
                *self._tls_flags(),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                if self._answers():
                    return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server did not start on port {self.port}")

    def _tls_flags(self) -> list[str]:
        """TLS only (the plain port off) when the test asked for it."""
        if self.tls is None:
            return []
        tls = self.tls
        ports = ["--port", "0", "--tls-port", str(self.port)]
        files = ["--tls-cert-file", str(tls.cert), "--tls-key-file", str(tls.key), "--tls-ca-cert-file", str(tls.ca)]
        return [*ports, *files, "--tls-auth-clients", "no"]

    def _answers(self) -> bool:
        """True once it answers the nodes' user's AUTH and a PING."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as raw:
            sock: socket.socket = raw
            if self.tls is not None:
                sock = ssl.create_default_context(cafile=str(self.tls.ca)).wrap_socket(raw, server_hostname="127.0.0.1")
            sock.sendall(f"AUTH {USER} {self.password}\r\nPING\r\n".encode())
            answer = b""
            while b"\r\n" not in answer.partition(b"\r\n")[2]:
                chunk = sock.recv(64)
                if not chunk:
                    return False
                answer += chunk
            return answer == b"+OK\r\n+PONG\r\n"

    def stop(self) -> None:
        """Kill it (SIGKILL: nothing saved, every client connection cut)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None

    def restart(self) -> None:
        """Kill it and start an empty one on the same port."""
        self.stop()
        self.start()
