"""What every command shares: the settings built from flags, and the database."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import typer
from sqlalchemy.engine import Engine

from focuscrawl.database import open_database
from focuscrawl.settings import Settings, load_settings

__all__ = ["State", "engine_from", "settings_from"]


@dataclass
class State:
    """Flags given before the sub-command (``focuscrawl --home DIR db up``)."""

    overrides: dict[str, Any]


def settings_from(ctx: typer.Context, overrides: dict[str, Any] | None = None) -> Settings:
    """Settings with the global flags and a command's own flags (``None``: not given)."""
    state = ctx.find_object(State)
    merged = dict(state.overrides if state else {})
    merged.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return load_settings(merged)


def engine_from(ctx: typer.Context, migrate: bool = True) -> Engine:
    """The configured database, migrated to head (every command but ``db`` wants that)."""
    return open_database(settings_from(ctx), migrate=migrate)
