"""The client's layering rules, checked on its source: no server code, a model without Textual, and screens
that talk to the app only through messages."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CLIENT = Path(__file__).resolve().parents[2] / "client"
APP_CALLS_ALLOWED = {"push_screen"}  # Textual's own screen stack, for a screen's own dialogs


def _modules(folder: Path) -> list[Path]:
    """The Python files under `folder`."""
    return sorted(folder.rglob("*.py"))


def _imports(path: Path) -> set[str]:
    """Every module a file imports (absolute names; relative imports as written)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add("." * node.level + (node.module or ""))
    return names


def _is_self_app(node: ast.AST) -> bool:
    """True for an attribute of `self.app` (`self.app.<name>`)."""
    if not isinstance(node, ast.Attribute) or not isinstance(node.value, ast.Attribute):
        return False
    owner = node.value
    return owner.attr == "app" and isinstance(owner.value, ast.Name) and owner.value.id == "self"


def test_client_never_imports_the_server():
    """The client runs against any server: no client module imports `gamenight.server` (it starts one as a
    separate process only)."""
    offenders = {
        str(path.relative_to(CLIENT)): sorted(n for n in _imports(path) if n.startswith("gamenight.server"))
        for path in _modules(CLIENT)
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_state_model_and_replay_load_without_textual():
    """The client state, its model, presence and the replay model are plain Python: importing them loads no Textual."""
    code = (
        "import sys, gamenight.client.state, gamenight.client.model, gamenight.client.replay, "
        "gamenight.client.presence; "
        "print(sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0] in ('textual', 'rich')}))"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert shown.stdout.strip() == "[]"


def test_screens_and_widgets_post_messages_instead_of_calling_the_app():
    """Screens and widgets never reach into the concrete app: no import of it, and `self.app` is used only
    for Textual's own screen stack (their dialogs); everything else is a message posted up."""
    found: dict[str, set[str]] = {}
    for path in _modules(CLIENT / "screens") + _modules(CLIENT / "widgets"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        used = {node.attr for node in ast.walk(tree) if _is_self_app(node)}
        used -= APP_CALLS_ALLOWED
        if "gamenight.client.app" in _imports(path):
            used.add("<imports the app>")
        if any(isinstance(n, ast.Attribute) and n.attr == "gamenight" for n in ast.walk(tree)):
            used.add("<self.gamenight>")
        if used:
            found[str(path.relative_to(CLIENT))] = used
    assert found == {}
