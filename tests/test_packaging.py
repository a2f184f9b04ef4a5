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
from tests import installed

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


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel pip builds from a copy of the checkout (so the build leaves nothing in the work tree)."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    source = tmp_path / "source"
    ignore = shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__", "*.so", ".*_cache")
    shutil.copytree(ROOT, source, ignore=ignore)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(tmp_path), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (built,) = tmp_path.glob("gamenight-*.whl")
    return built


def test_wheel_installs_exactly_one_top_level_package(wheel):
    """A built wheel puts everything under `gamenight/` (server, client, protocol, the maps and the stylesheets)."""
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/", 1)[0] for name in names if not name.split("/", 1)[0].endswith(".dist-info")}
    assert top == {"gamenight"}


def test_wheel_carries_every_file_of_the_three_folders(wheel):
    """Every module and data file of server/, client/ and protocol/ is installed (a new folder fails here if the
    build does not find it)."""
    names = set(zipfile.ZipFile(wheel).namelist())
    files = installed.source_files()
    assert len(files) > 100  # the walk found the tree
    missing = [str(path) for path in files if f"gamenight/{path}" not in names]
    assert missing == []
    for marker in ("server", "client", "protocol"):
        assert f"gamenight/{marker}/py.typed" in names
    assert "gamenight/server/ai/othello_patterns.dat" in names  # level 5's fitted tables (issue 38)


def test_a_fresh_install_imports_every_module_and_type_checks(wheel, tmp_path):
    """pip install of the wheel in a new venv: without the cluster and web extras --cluster and --web say what to
    install; with them every module imports, the commands answer, and mypy --strict accepts code using the package
    (py.typed)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    for spec in (str(wheel), f"{wheel}[cluster,web]"):
        install = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", spec], capture_output=True, text=True, timeout=600
        )
        assert install.returncode == 0, install.stderr
        if spec == str(wheel):  # the plain install: a cluster node says what to install, with no traceback
            node = [str(venv / "bin" / "gamenight-server"), "--db", str(tmp_path / "g.db"), "--cluster", "redis://x"]
            refused = subprocess.run(node, capture_output=True, text=True, timeout=60)
            assert refused.returncode == 2 and "pip install 'gamenight[cluster]'" in refused.stderr
            assert "Traceback" not in refused.stderr
            web = [str(venv / "bin" / "gamenight-server"), "--db", str(tmp_path / "g.db"), "--web", "0"]
            refused = subprocess.run(web, capture_output=True, text=True, timeout=60)
            assert refused.returncode == 2 and "pip install 'gamenight[web]'" in refused.stderr
            assert "Traceback" not in refused.stderr
    every = (
        "import importlib, pkgutil, gamenight.server, gamenight.client, gamenight.protocol\n"
        "names = [m.name for p in (gamenight.server, gamenight.client, gamenight.protocol)"
        " for m in pkgutil.walk_packages(p.__path__, p.__name__ + '.')]\n"
        "for name in names: importlib.import_module(name)\n"
        "print(gamenight.server.__file__, *names)\n"
    )
    imported = subprocess.run([str(python), "-c", every], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert imported.returncode == 0, imported.stderr
    where, *names = imported.stdout.split()
    assert where.startswith(str(venv))
    sources = [path for path in installed.source_files() if path.suffix == ".py"]
    modules = {".".join(("gamenight", *path.with_suffix("").parts)).removesuffix(".__init__") for path in sources}
    expected = {name for name in modules if name.count(".") > 1}  # walk_packages lists what is under the three
    assert expected <= set(names), expected - set(names)
    for script in ("gamenight-server", "gamenight", "gamenight-bot"):
        done = subprocess.run([str(venv / "bin" / script), "--help"], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
    user = tmp_path / "bot.py"
    user.write_text(
        "from gamenight.protocol.codec import decode, encode\n"
        "from gamenight.protocol.messages import Message\n\n\n"
        "def round_trip(message: Message) -> Message:\n"
        "    return decode(encode(message))\n"
    )
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-executable", str(python), str(user)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


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
