"""A player's identity: an Ed25519 key pair kept by the client, proved to each server by signing its hello nonce.

On connect the server sends `hello_nonce {nonce, server}`: 32 fresh random bytes (64 hex digits) and the server's
id. A client that claims a name signs the bytes `hello_bytes(server, url, nonce)`, the UTF-8 text

    "gamenight hello v3\n" + server + "\n" + url + "\n" + nonce

where `url` is the address the client itself dialed (also sent as hello `url`), and sends its public key and the
signature in `hello` (each as lowercase hex). The nonce is new for every connection and good for that connection
only, so a signature is no use on another server, nor later on this one; a server that knows the addresses it is
reached by (`--reached-as`) also refuses a hello signed for another address, so a hostile server cannot relay a
hello live either (docs/security.md, "Identity"). The signing and checking are the `cryptography` package's;
nothing here is hand-made crypto.
"""

from __future__ import annotations

import secrets
from urllib.parse import urlsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

HELLO_TAG = "gamenight hello v3"  # the domain tag: a hello signature can never be mistaken for anything else
NONCE_BYTES = 32
KEY_HEX = 64  # a public key (32 bytes) in hex
SIGNATURE_HEX = 128  # a signature (64 bytes) in hex


def new_nonce() -> str:
    """A fresh hello nonce (hex)."""
    return secrets.token_hex(NONCE_BYTES)


def hello_bytes(server: str, url: str, nonce: str) -> bytes:
    """What a client signs to prove its key to the server `server`, dialed at `url`, on the connection that got
    `nonce`."""
    return f"{HELLO_TAG}\n{server}\n{url}\n{nonce}".encode()


def verified(public_key: str, signature: str, server: str, url: str, nonce: str) -> bool:
    """True if `signature` (hex) is the holder of `public_key` (hex) signing this server's and connection's nonce,
    for the address `url`."""
    if len(public_key) != KEY_HEX or len(signature) != SIGNATURE_HEX:
        return False
    try:
        key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key))
        key.verify(bytes.fromhex(signature), hello_bytes(server, url, nonce))
    except (ValueError, InvalidSignature):
        return False
    return True


def address_of(url: str) -> str:
    """An address to compare: scheme, host and port of a ws:// or wss:// URL, lowercased, without the default port
    and the path ("" if `url` is not such a URL)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return ""
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("ws", "wss") or not host:
        return ""
    shown = f"[{host}]" if ":" in host else host
    default = 443 if parts.scheme == "wss" else 80
    return f"{parts.scheme}://{shown}" + (f":{port}" if port not in (None, default) else "")


class Identity:
    """A client's key pair: it signs hello nonces; its private half never leaves the client (except by export)."""

    def __init__(self, private: Ed25519PrivateKey) -> None:
        self._private = private
        raw = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        self.public_key = raw.hex()  # as sent in hello

    @classmethod
    def generate(cls) -> Identity:
        """A new random identity."""
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_secret(cls, secret: str) -> Identity:
        """The identity whose private key is `secret` (64 hex digits, as `secret` gives); ValueError if it is not."""
        if len(secret) != KEY_HEX:
            raise ValueError(f"an identity's secret is {KEY_HEX} hex digits")
        return cls(Ed25519PrivateKey.from_private_bytes(bytes.fromhex(secret)))

    @property
    def secret(self) -> str:
        """The private key as 64 hex digits (what the config and key files keep, mode 0600)."""
        return self._private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption()).hex()

    def sign(self, server: str, url: str, nonce: str) -> str:
        """The hello signature (hex) for the server `server` dialed at `url`, and the nonce of this connection."""
        return self._private.sign(hello_bytes(server, url, nonce)).hex()
