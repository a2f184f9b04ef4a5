"""How gamenight installs: one import package, `gamenight`, that nothing in the user's current directory shadows."""

from __future__ import annotations

import shutil
import subprocess
import sys
import urllib.request
import zipfile
from pathlib import Path

import pytest

from gamenight.client.local_server import LocalServer, server_command

ROOT = Path(__file__).resolve().parents[1]


def _shadowing_folder(path: Path) -> Path:
    """A folder holding a `server.py`, a `server/` package and a `gamenight/server/` package that all fail loudly."""
    poison = "raise SystemExit('shadowed: the wrong server ran')\n"
    path.mkdir(exist_ok=True)
    (path / "server.py").write_text(poison)
    for package in (path / "server", path / "gamenight" / "server"):
        package.mkdir(parents=True)
        (package / "__init__.py").write_text(poison)
        (package / "__main__.py").write_text(poison)
    return path


def test_wheel_installs_exactly_one_top_level_package(tmp_path):
    """A built wheel puts everything under `gamenight/` (server, client, protocol, the maps and the stylesheets)."""
    source = tmp_path / "source"  # a copy, so the build leaves nothing in the work tree
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(tmp_path), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("gamenight-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/", 1)[0] for name in names if not name.split("/", 1)[0].endswith(".dist-info")}
    assert top == {"gamenight"}
    for needed in (
        "gamenight/server/__main__.py",
        "gamenight/client/__main__.py",
        "gamenight/client/bot/__main__.py",
        "gamenight/protocol/codec.py",
        "gamenight/server/games/tron_maps/joust.txt",
        "gamenight/client/gamenight.tcss",
    ):
        assert needed in names


def test_private_server_starts_from_a_folder_that_shadows_it(tmp_path, monkeypatch):
    """`gamenight` run where a server.py and a gamenight/ folder lie still starts gamenight's own server."""
    monkeypatch.chdir(_shadowing_folder(tmp_path / "cwd"))
    server = LocalServer([*server_command(), "--db", str(tmp_path / "rooms.db")], log_path=tmp_path / "server.log")
    url = server.start()
    try:
        with urllib.request.urlopen(url.replace("ws://", "http://") + "/healthz", timeout=5) as reply:
            assert reply.status == 200
    finally:
        server.stop()


@pytest.mark.parametrize("script", ["gamenight-server", "gamenight", "gamenight-bot"])
def test_console_scripts_run_from_a_folder_that_shadows_them(tmp_path, script):
    """The installed commands answer --help from a folder holding a server.py, a server/ and a gamenight/ folder."""
    path = shutil.which(script, path=str(Path(sys.executable).parent))
    assert path is not None, f"{script} is not installed next to {sys.executable}"
    done = subprocess.run([path, "--help"], cwd=_shadowing_folder(tmp_path), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "shadowed" not in done.stdout + done.stderr
