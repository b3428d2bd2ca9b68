"""What every command shares: the settings built from flags, and the database."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.core
from prometheus_client import CollectorRegistry
from sqlalchemy.engine import Engine

from focuscrawl.db.migrate import open_database
from focuscrawl.db.seeds import read_seed_file
from focuscrawl.errors import ConfigError
from focuscrawl.settings import Settings, load_settings

__all__ = [
    "Group",
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


class Group(typer.core.TyperGroup):
    """A command group that names the closest commands when one is mistyped, in one
    line as every error a user can act on."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name = args[0] if args else ""
        if args and self.get_command(ctx, name) is None and not name.startswith("-"):
            close = difflib.get_close_matches(name, self.list_commands(ctx), n=3, cutoff=0.6)
            hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            typer.echo(
                f"focuscrawl: error: No such command {name!r}{hint} "
                f"({ctx.command_path} --help lists them)",
                err=True,
            )
            raise typer.Exit(2)
        return super().resolve_command(ctx, args)


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
