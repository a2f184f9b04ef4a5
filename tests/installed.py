"""Which gamenight the tests run against: the package pip installed, compared file by file with the checkout.

The README's test command installs the project non-editable, as users get it, so the suite imports `gamenight`
from site-packages. Editing the checkout without installing again would then test the old code: the session
refuses to start in that case (tests/conftest.py) and says how to install.
"""

from __future__ import annotations

import filecmp
from pathlib import Path

import gamenight.client
import gamenight.protocol
import gamenight.server

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("server", "client", "protocol")
BUILT = (".so", ".pyc", ".pyd")  # build products: made by the install, not part of the source


def installed_folder(folder: str) -> Path:
    """Where the imported `gamenight.<folder>` lives."""
    module = {"server": gamenight.server, "client": gamenight.client, "protocol": gamenight.protocol}[folder]
    assert module.__file__ is not None
    return Path(module.__file__).resolve().parent


def from_checkout() -> bool:
    """True when the imported package is the checkout itself (an editable install)."""
    return all(installed_folder(folder) == ROOT / folder for folder in FOLDERS)


def source_files() -> list[Path]:
    """Every source and data file of the three folders, relative to the repository's root."""
    files = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix not in BUILT:
                files.append(path.relative_to(ROOT))
    return files


def stale_files() -> list[Path]:
    """The checkout's files that the installed package lacks or holds in another version."""
    stale = []
    for path in source_files():
        folder, *rest = path.parts
        installed = installed_folder(folder).joinpath(*rest)
        if not installed.is_file() or not filecmp.cmp(ROOT / path, installed, shallow=False):
            stale.append(path)
    return stale


def describe() -> str:
    """One line for pytest's header: where gamenight is imported from."""
    where = installed_folder("server").parent
    return f"gamenight under test: {where} ({'the checkout, editable' if from_checkout() else 'installed'})"
