"""`gamenight identity export [FILE]` / `gamenight identity import FILE|CODE`: the same identity on a second machine.

The identity (the Ed25519 private key that claims your names, client/config.py) travels as a printable code,

    gamenight-identity-1:<64 hex digits: the private key>:<8 hex digits: a check>

the check being the first 8 hex digits of SHA-256 of the key's hex, so a mistyped or cut code is refused rather
than taken as someone else. `export` prints the code, or writes it to FILE (mode 0600); `import` takes a file
holding a code, or the code itself, and saves it as this machine's identity (`--force` to replace another one,
whose claims would then be out of reach). `show` prints the public key, which is safe to share.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from gamenight.client.config import IDENTITY, load_config, player_identity, save_config, write_private
from gamenight.protocol.identity import Identity

PREFIX = "gamenight-identity-1"
CHECK_HEX = 8
SECRET_WARNING = "gamenight: this code is your identity; whoever has it plays as you. Keep it secret."


def identity_code(identity: Identity) -> str:
    """The printable code of an identity (a secret: whoever has it plays as you)."""
    return f"{PREFIX}:{identity.secret}:{_check(identity.secret)}"


def from_code(code: str) -> Identity:
    """The identity in a code (spaces and line breaks ignored); ValueError saying what is wrong if it is not one."""
    parts = "".join(code.split()).split(":")
    if len(parts) != 3 or parts[0] != PREFIX:
        raise ValueError(f"not a gamenight identity code (it starts with {PREFIX}:)")
    secret, check = parts[1].lower(), parts[2].lower()
    if _check(secret) != check:
        raise ValueError("the code's check does not match: it was cut or mistyped")
    return Identity.from_secret(secret)


def _check(secret: str) -> str:
    """The check digits of a key's hex."""
    return hashlib.sha256(secret.encode()).hexdigest()[:CHECK_HEX]


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The `gamenight identity ...` command line."""
    parser = argparse.ArgumentParser(
        prog="gamenight identity",
        description="Use the same gamenight identity (your claimed names) on another machine.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    export = commands.add_parser("export", help="print this machine's identity as a code, or write it to FILE (0600)")
    export.add_argument("file", nargs="?", type=Path, help="write the code here instead of printing it")
    imported = commands.add_parser("import", help="take the identity of a code, or of a file holding one")
    imported.add_argument("source", help="a file written by `gamenight identity export FILE`, or the code itself")
    imported.add_argument("--force", action="store_true", help="replace a different identity this machine has")
    commands.add_parser("show", help="print this machine's public key (safe to share)")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    """Run one `gamenight identity` command; the exit code."""
    args = parse_args(argv)
    if args.command == "show":
        print(player_identity().public_key)
        return 0
    if args.command == "export":
        code = identity_code(player_identity())
        if args.file is None:
            print(
                "gamenight: this code is your identity; whoever has it plays as you. Keep it secret.", file=sys.stderr
            )
            print(code)
        else:
            write_private(args.file, code + "\n")
            print(f"gamenight: identity written to {args.file} (mode 0600); keep it secret", file=sys.stderr)
        return 0
    return _import(args.source, args.force)


def _import(source: str, force: bool) -> int:
    """Save the identity of a code or a code file as this machine's; the exit code."""
    path = Path(source)
    try:
        text = path.read_text(encoding="utf-8") if path.is_file() else source
        identity = from_code(text)
    except (OSError, ValueError) as exc:
        print(f"gamenight: cannot import an identity: {exc}", file=sys.stderr)
        return 2
    data = load_config()
    current = data.get(IDENTITY)
    if isinstance(current, str) and current != identity.secret and not force:
        print(
            "gamenight: this machine has another identity (its claimed names would be out of reach); "
            "export it first if you need it, then import with --force",
            file=sys.stderr,
        )
        return 2
    data[IDENTITY] = identity.secret
    save_config(data)
    print(f"gamenight: identity imported; public key {identity.public_key}", file=sys.stderr)
    return 0
