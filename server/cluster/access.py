"""How a node reaches its Redis and what it proves there, from the command line, the environment and files.

A secret on the command line is readable by every user of the machine (`ps`), so none is needed there:

- the Redis URL: `--cluster URL`, else GAMENIGHT_REDIS_URL (then `--cluster` alone names no URL). It may carry
  an ACL user and a password (`redis://user:pass@host:6379/0`), and `rediss://` speaks TLS (`--redis-ca FILE`:
  the CA that signed the server's certificate; else the system's);
- the Redis password: `--redis-password-file FILE`, else GAMENIGHT_REDIS_PASSWORD, else the URL's own; the first
  of these given wins (a password in a `--cluster` URL on the command line gets a warning);
- the cluster secret: server/cluster/trust.py `load_secret`.

No `redis` import here: the command line is read before anything of the cluster loads.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from gamenight.server.store import masked

URL_ENV = "GAMENIGHT_REDIS_URL"
PASSWORD_ENV = "GAMENIGHT_REDIS_PASSWORD"
SCHEMES = ("redis", "rediss", "unix")


class AccessError(ValueError):
    """The Redis address or password cannot be used as given (the message says why)."""


@dataclass(frozen=True, slots=True)
class RedisAccess:
    """Where a node's Redis is and how it logs in there."""

    url: str
    password: str | None = None  # replaces the URL's, if any
    ca: str | None = None  # PEM file of the CA of a rediss:// server's certificate


def resolve(
    cluster: str | None, password_file: str | None, ca: str | None, environ: os._Environ[str] | dict[str, str]
) -> tuple[RedisAccess, list[str]]:
    """The node's Redis access from `--cluster` (a URL, or "" for GAMENIGHT_REDIS_URL's), `--redis-password-file`,
    `--redis-ca` and the environment; with the warnings to print (a password seen on the command line)."""
    warnings = []
    url = cluster or environ.get(URL_ENV, "")
    if not url:
        raise AccessError(f"--cluster needs a Redis URL: --cluster redis://host:6379/0, or {URL_ENV}")
    try:
        parts = urlsplit(url)
        in_url = parts.password
    except ValueError as exc:
        raise AccessError(f"bad Redis URL {shown(url)}: {exc}") from None
    if parts.scheme not in SCHEMES:
        raise AccessError(f"bad Redis URL {shown(url)}: it starts with redis://, rediss:// (TLS) or unix://")
    if cluster and in_url:
        warnings.append(
            "the Redis password is on the command line, where every user of this machine can read it (ps);"
            f" give it in --redis-password-file or {PASSWORD_ENV} (docs/cluster.md)"
        )
    if ca is not None and parts.scheme != "rediss":
        raise AccessError("--redis-ca goes with a rediss:// (TLS) Redis URL")
    password: str | None = None
    if password_file is not None:
        try:
            password = Path(password_file).read_text().strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise AccessError(f"cannot read the Redis password file {password_file}: {exc}") from None
    elif environ.get(PASSWORD_ENV):
        password = environ[PASSWORD_ENV]
    return RedisAccess(url, password, ca), warnings


def without_password(url: str) -> str:
    """The URL with no password in it (one given apart replaces it: the client library prefers the URL's)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username}@{host}" if parts.username else host))


def shown(url: str) -> str:
    """A Redis URL as it may be printed or logged: its password replaced by ***."""
    return masked(url)
