"""The ``focuscrawl`` command: a thin layer that parses, builds settings and calls
library functions. Errors a user can act on print as one line and exit 2."""

from __future__ import annotations

import importlib
import inspect
import sys
from typing import Annotated, Any

import psycopg2
import sqlalchemy as sa
import typer
import typer.core
import typer.main

from focuscrawl.cli.common import Group, State
from focuscrawl.db.database import refused, unreachable
from focuscrawl.errors import FocuscrawlError

__all__ = ["app", "main"]

#: Each subcommand, in the order ``--help`` lists them: its module and either the
#: module's Typer app (a group of commands) or the command's function. A module is
#: imported when its command runs (or when help lists it), so that a crawler does not
#: load the classifier, the evaluation and the console (0.9 s of start-up against 0.55).
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("focuscrawl.cli.demo", "demo_command"),
    "eval": ("focuscrawl.cli.evaluate", "eval_command"),
    "report": ("focuscrawl.cli.report", "report_command"),
    "export": ("focuscrawl.cli.export", "export_command"),
    "label": ("focuscrawl.cli.label", "label_command"),
    "console": ("focuscrawl.cli.console", "console_command"),
    "db": ("focuscrawl.cli.db", "app"),
    "cluster": ("focuscrawl.cli.cluster", "app"),
    "seed": ("focuscrawl.cli.seed", "app"),
    "crawl": ("focuscrawl.cli.crawl", "app"),
    "webbox": ("focuscrawl.cli.webbox", "app"),
    "taxonomy": ("focuscrawl.cli.taxonomy", "app"),
    "topic": ("focuscrawl.cli.topic", "app"),
    "classify": ("focuscrawl.cli.classify", "app"),
    "distill": ("focuscrawl.cli.distill", "app"),
    "monitor": ("focuscrawl.cli.monitor", "app"),
}


def _load(name: str) -> Any:
    """The click command of subcommand ``name``, as ``add_typer``/``command`` build it."""
    module, attribute = SUBCOMMANDS[name]
    target = getattr(importlib.import_module(module), attribute)
    if isinstance(target, typer.Typer):
        command: Any = typer.main.get_group(target)
    else:
        single = typer.Typer(add_completion=False)
        single.command(name)(target)
        command = typer.main.get_command(single)
    command.name = name
    _one_paragraph(command)
    return command


def _one_paragraph(command: Any) -> None:
    """Give ``command`` and the commands under it a short help of one line: the first
    paragraph of their help, its lines joined. The lists of commands in ``--help`` show
    it; rich markup keeps a docstring's line breaks there ("harvest, recall," then
    "robustness" on a line of its own)."""
    if command.help and not command.short_help:
        first = inspect.cleandoc(command.help).split("\n\n")[0]
        command.short_help = " ".join(first.split())
    for child in getattr(command, "commands", {}).values():
        _one_paragraph(child)


class _Subcommands(Group):
    """The root group: subcommands loaded on first use."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(SUBCOMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in SUBCOMMANDS and cmd_name not in self.commands:
            self.commands[cmd_name] = _load(cmd_name)
        return super().get_command(ctx, cmd_name)


app = typer.Typer(
    name="focuscrawl",
    cls=_Subcommands,
    help="A focused web crawler whose brain is PostgreSQL.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
)


@app.callback()
def _root(
    ctx: typer.Context,
    database_url: Annotated[
        str | None,
        typer.Option(
            "--database-url",
            help="PostgreSQL URL; overrides FOCUSCRAWL_DATABASE_URL. Unset: the embedded server.",
            show_default=False,
        ),
    ] = None,
    database: Annotated[
        str | None,
        typer.Option(
            "--database",
            help="Database name on that server; overrides FOCUSCRAWL_DATABASE "
            "(the demo's soft crawl: focuscrawl_demo_soft).",
            show_default=False,
        ),
    ] = None,
    home: Annotated[
        str | None, typer.Option("--home", help="Overrides FOCUSCRAWL_HOME.", show_default=False)
    ] = None,
) -> None:
    ctx.obj = State({"database_url": database_url, "database": database, "home": home})


#: the errors of a server that went away or never answered
_AWAY = (sa.exc.OperationalError, sa.exc.InterfaceError, psycopg2.OperationalError)


def _fail(message: str) -> None:
    print(f"focuscrawl: error: {message}", file=sys.stderr)
    sys.exit(2)


def main() -> None:
    """Entry point of the ``focuscrawl`` script."""
    try:
        app()
    except FocuscrawlError as exc:
        _fail(str(exc))
    except (sa.exc.DBAPIError, psycopg2.Error) as exc:
        # a statement refused for a reason the administrator fixes (a cancelled one is
        # an OperationalError too), else a server away; any other error keeps its trace
        refusal = refused(exc)
        if refusal is None and not isinstance(exc, _AWAY):
            raise
        _fail(str(refusal or unreachable(exc)))
    except KeyboardInterrupt:
        print("focuscrawl: interrupted", file=sys.stderr)
        sys.exit(130)
