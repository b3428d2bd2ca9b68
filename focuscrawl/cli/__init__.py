"""The ``focuscrawl`` command: a thin layer that parses, builds settings and calls
library functions. Errors a user can act on print as one line and exit 2."""

from __future__ import annotations

import sys
from typing import Annotated

import psycopg2
import sqlalchemy as sa
import typer

from focuscrawl.cli import classify, crawl, db, distill, monitor, seed, taxonomy, topic, webbox
from focuscrawl.cli.common import State
from focuscrawl.cli.console import console_command
from focuscrawl.cli.demo import demo_command
from focuscrawl.cli.evaluate import eval_command
from focuscrawl.cli.export import export_command
from focuscrawl.cli.label import label_command
from focuscrawl.cli.report import report_command
from focuscrawl.database import unreachable
from focuscrawl.errors import FocuscrawlError

__all__ = ["app", "main"]

app = typer.Typer(
    name="focuscrawl",
    help="A focused web crawler whose brain is PostgreSQL.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
)
app.add_typer(db.app, name="db")
app.add_typer(seed.app, name="seed")
app.add_typer(crawl.app, name="crawl")
app.add_typer(webbox.app, name="webbox")
app.add_typer(taxonomy.app, name="taxonomy")
app.add_typer(topic.app, name="topic")
app.add_typer(classify.app, name="classify")
app.add_typer(distill.app, name="distill")
app.add_typer(monitor.app, name="monitor")
app.command("demo")(demo_command)
app.command("eval")(eval_command)
app.command("report")(report_command)
app.command("export")(export_command)
app.command("label")(label_command)
app.command("console")(console_command)


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
    home: Annotated[
        str | None, typer.Option("--home", help="Overrides FOCUSCRAWL_HOME.", show_default=False)
    ] = None,
) -> None:
    ctx.obj = State({"database_url": database_url, "home": home})


def _fail(message: str) -> None:
    print(f"focuscrawl: error: {message}", file=sys.stderr)
    sys.exit(2)


def main() -> None:
    """Entry point of the ``focuscrawl`` script."""
    try:
        app()
    except FocuscrawlError as exc:
        _fail(str(exc))
    except (sa.exc.OperationalError, sa.exc.InterfaceError, psycopg2.OperationalError) as exc:
        _fail(str(unreachable(exc)))
    except KeyboardInterrupt:
        print("focuscrawl: interrupted", file=sys.stderr)
        sys.exit(130)
