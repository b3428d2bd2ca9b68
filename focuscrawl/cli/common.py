"""What every command shares: the settings built from flags, and the database."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from prometheus_client import CollectorRegistry
from sqlalchemy.engine import Engine

from focuscrawl.db.migrate import open_database
from focuscrawl.db.seeds import read_seed_file
from focuscrawl.errors import ConfigError
from focuscrawl.settings import Settings, load_settings

__all__ = [
    "MetricsHost",
    "MetricsPort",
    "State",
    "engine_from",
    "read_url_file",
    "serve_metrics",
    "settings_from",
]

MetricsPort = Annotated[
    int | None,
    typer.Option(
        help="Serve this process's Prometheus metrics at http://HOST:PORT/metrics.",
        show_default=False,
    ),
]
MetricsHost = Annotated[
    str, typer.Option(help="Address the metrics are served on (loopback unless asked).")
]


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


def read_url_file(file: Path, what: str) -> list[str]:
    """The URLs of a ``-f FILE`` (``-``: standard input): one a line, blank lines and
    ``#`` lines skipped; a file that cannot be read is a ConfigError naming it."""
    try:
        text = (
            typer.get_text_stream("stdin").read()
            if str(file) == "-"
            else file.read_text(encoding="utf-8")
        )
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {what} {file}: {exc}") from exc
    return read_seed_file(text)


def serve_metrics(registry: CollectorRegistry, port: int | None, host: str) -> None:
    """Serve a process's metrics when ``--metrics-port`` was given, saying where."""
    if port is None:
        return
    from focuscrawl.monitor.metrics import serve

    server = serve(registry, port, host)
    typer.echo(f"metrics: http://{host}:{server.port}/metrics", err=True)
