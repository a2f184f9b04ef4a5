"""Tron AI, a module per job; `gamenight.server.ai.tron_ai` is its public face (see its docstring)."""
