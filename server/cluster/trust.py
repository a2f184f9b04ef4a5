"""What a node believes of what it reads from Redis: only what another node of the cluster signed.

Redis is shared by the nodes, and whoever can write to it could otherwise make a node believe anything: a token
record (`{prefix}token:<hash>`) that logs a stranger in as a claimed player, a first claim in `{prefix}claims`
that takes a name before its owner used it, a forwarded request or a hello broadcast speaking for any session.
So every such record and every bus message carries an HMAC-SHA256 under the **cluster secret** every node is
given (`--cluster-secret-file` or GAMENIGHT_CLUSTER_SECRET; docs/cluster.md), bound to the key or channel it is
stored under: a record signed for one token or name and copied under another fails, as does one made up. A record
or message that fails is ignored and logged (a warning at most every WARN_EVERY_S, with how many were ignored).

Signed here: token records, claims, the online sessions' entries and the rooms' and tournaments' directory
entries (`seal` / `open`), and every message on the bus, the directory's deltas too (`sign` / `verify`, over
channel and bytes). Not signed: node keys, leases, address counts, the boot marker and where-is-session hints:
none of them says who a person is or what they may do (docs/security.md, "A cluster's trust boundary", says what
a forger of those can do). A signed message can be replayed by whoever can both read and write Redis: it repeats
what a node said (a move again is refused as stale by its `seq`), never says something new.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

log = logging.getLogger("gamenight.server.cluster")

SECRET_ENV = "GAMENIGHT_CLUSTER_SECRET"
MIN_SECRET_BYTES = 16  # a shorter secret is refused: it could be guessed offline from one signed record
MAC_BYTES = 32  # HMAC-SHA256
MAC_FIELD = "mac"
WARN_EVERY_S = 10.0


class SecretError(ValueError):
    """The cluster secret is missing, unreadable or too short (the message says which and what to do)."""


def load_secret(path: str | None, environ: dict[str, str] | os._Environ[str] = os.environ) -> bytes:
    """The cluster secret: the file's contents (`--cluster-secret-file`, surrounding whitespace stripped), else
    GAMENIGHT_CLUSTER_SECRET's value; the file wins when both are given."""
    if path is not None:
        try:
            secret = Path(path).read_bytes().strip()
        except OSError as exc:
            raise SecretError(f"cannot read the cluster secret file {path}: {exc.strerror or exc}") from None
        where = f"the cluster secret file {path}"
    else:
        secret = environ.get(SECRET_ENV, "").strip().encode()
        where = SECRET_ENV
        if not secret:
            raise SecretError(
                f"a cluster node needs the cluster's secret: --cluster-secret-file FILE or {SECRET_ENV}"
                " (the same on every node; e.g. `openssl rand -hex 32 > FILE`; docs/cluster.md)"
            )
    if len(secret) < MIN_SECRET_BYTES:
        raise SecretError(f"{where} holds {len(secret)} bytes; a cluster secret needs at least {MIN_SECRET_BYTES}")
    return secret


def _canonical(obj: dict[str, Any]) -> bytes:
    """A record's bytes as signed: sorted keys, no spaces (what json.loads then json.dumps gives back unchanged)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


class Records:
    """Signs what this node writes to Redis and checks what it reads, under the cluster secret."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret
        self.refused = 0  # records and messages refused since the start (their MAC did not hold)
        self._unreported = 0  # ... of which not yet in a warning
        self._warned_at = float("-inf")

    def _mac(self, where: str, data: bytes) -> bytes:
        return hmac.new(self._secret, where.encode() + b"\n" + data, hashlib.sha256).digest()

    # -- records: JSON objects stored under a key (or a hash's field: `where` names both) ------------------------
    def seal(self, where: str, record: dict[str, Any]) -> str:
        """The record as stored under `where` (a key, or "hash/field"): its JSON with a `mac` field."""
        return json.dumps(record | {MAC_FIELD: self._mac(where, _canonical(record)).hex()}, separators=(",", ":"))

    def open(self, where: str, raw: bytes | str | None) -> dict[str, Any] | None:
        """The record stored under `where` if another node signed it for that very place; else None (missing, or
        refused and logged)."""
        if raw is None:
            return None
        try:
            record = json.loads(raw)
            mac = bytes.fromhex(record.pop(MAC_FIELD)) if isinstance(record, dict) else b""
        except (ValueError, KeyError, TypeError, AttributeError):
            mac = b""
        if not mac or not hmac.compare_digest(mac, self._mac(where, _canonical(record))):
            self._refuse(f"record {where}")
            return None
        return dict(record)

    # -- bus messages: bytes published on a channel ----------------------------------------------------------------
    def sign(self, channel: str, data: bytes) -> bytes:
        """A message as published on `channel`: its bytes, then their MAC."""
        return data + self._mac(channel, data)

    def verify(self, channel: str, signed: bytes) -> bytes | None:
        """The message received on `channel` if a node signed it for that channel; else None (refused, logged)."""
        data, mac = signed[:-MAC_BYTES], signed[-MAC_BYTES:]
        if len(signed) < MAC_BYTES or not hmac.compare_digest(mac, self._mac(channel, data)):
            self._refuse(f"message on {channel}")
            return None
        return data

    def _refuse(self, what: str) -> None:
        """Count a refused record or message; warn now unless a warning went out less than WARN_EVERY_S ago."""
        self.refused += 1
        self._unreported += 1
        now = time.monotonic()
        if now - self._warned_at >= WARN_EVERY_S:
            log.warning(
                "ignored %d unsigned or forged cluster record(s) in redis (latest: %s): is someone else writing"
                " to this Redis, or does a node have another cluster secret?",
                self._unreported,
                what,
            )
            self._warned_at, self._unreported = now, 0
