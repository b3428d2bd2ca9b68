"""The docs' reference pages, generated from the code so they cannot drift: every
command and its options (from the typer app), every setting (``SETTINGS``), the schema
(``focuscrawl.db.schema``), every named SQL statement (``sql/``), every metric
(``focuscrawl.monitor.metrics.DOCUMENTED``) and the console's endpoints.

``scripts/mkdocs_hooks.py`` puts each in place of a marker line ``<!-- reference: NAME -->`` as
``mkdocs build`` reads the page; :data:`SECTIONS` maps NAME to its function.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any

import typer

__all__ = ["SECTIONS", "command_paths", "render"]


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _root() -> Any:
    import typer.main

    from focuscrawl.cli import app

    return typer.main.get_command(app)


def command_paths() -> Iterator[tuple[str, Any]]:
    """("focuscrawl crawl run", command) for every command and group, depth first, in
    the order ``--help`` lists them."""

    def walk(prefix: str, command: Any) -> Iterator[tuple[str, Any]]:
        yield prefix, command
        if not hasattr(command, "list_commands"):
            return
        ctx = typer.Context(command)  # a group's subcommands load when asked for
        for name in sorted(command.list_commands(ctx)):
            sub = command.get_command(ctx, name)
            if not sub.hidden:
                yield from walk(f"{prefix} {name}", sub)

    yield from walk("focuscrawl", _root())


def commands() -> str:
    out = []
    for path, command in command_paths():
        depth = min(path.count(" ") + 1, 4)
        out.append(f"{'#' * (depth + 1)} `{path}`\n")
        text = inspect.cleandoc(command.help or "")
        if text:
            out.append(text + "\n")
        ctx = typer.Context(command, info_name=path.rsplit(" ", 1)[-1])
        rows = []
        for param in command.params:
            record = param.get_help_record(ctx)
            if record is None or param.name == "help":
                continue
            names, text = record
            kind = "argument" if param.param_type_name == "argument" else "option"
            rows.append(f"| `{_cell(names)}` | {kind} | {_cell(text)} |")
        if rows:
            out.append("| name | kind | meaning |\n| --- | --- | --- |\n" + "\n".join(rows) + "\n")
    return "\n".join(out)


def settings() -> str:
    from focuscrawl.settings import SETTINGS

    rows = [
        f"| `{s.name}` | `{s.env_var}` | {'unset' if s.default is None else f'`{s.default}`'} "
        f"| {_cell(s.accepts)} | {_cell(s.help)} |"
        for s in SETTINGS
    ]
    head = (
        "| setting | environment | default | accepted | meaning |\n"
        "| --- | --- | --- | --- | --- |\n"
    )
    return head + "\n".join(rows) + "\n"


def schema() -> str:
    from sqlalchemy.dialects import postgresql

    from focuscrawl.db.schema import metadata

    dialect = postgresql.dialect()  # type: ignore[no-untyped-call]
    out = []
    for table in metadata.tables.values():
        out.append(f"### `{table.name}`\n")
        rows = []
        for column in table.columns:
            flags = []
            if column.primary_key:
                flags.append("primary key")
            if not column.nullable and not column.primary_key:
                flags.append("not null")
            if column.server_default is not None:
                flags.append("default")
            kind = column.type.compile(dialect=dialect)
            rows.append(f"| `{column.name}` | `{kind}` | {', '.join(flags)} |")
        out.append("| column | type | |\n| --- | --- | --- |\n" + "\n".join(rows) + "\n")
        indexes = sorted(table.indexes, key=lambda i: str(i.name))
        if indexes:
            listed = []
            for index in indexes:
                keys = ", ".join(str(e) for e in index.expressions)
                where = index.dialect_options["postgresql"].get("where")
                suffix = f" where `{where}`" if where is not None else ""
                listed.append(f"- `{index.name}` on ({_cell(keys)}){suffix}")
            out.append("Indexes:\n\n" + "\n".join(listed) + "\n")
    return "\n".join(out)


def sql() -> str:
    from focuscrawl.db.queries import statements_by_file

    out = []
    for file, statements in statements_by_file().items():
        out.append(f"### `sql/{file}`\n")
        for name, text in statements.items():
            lines = text.strip().splitlines()
            comment = [line.removeprefix("--").strip() for line in lines if line.startswith("--")]
            out.append(f"#### `{name}`\n")
            if comment:
                out.append(" ".join(comment) + "\n")
            out.append("```sql\n" + text.strip() + "\n```\n")
    return "\n".join(out)


def metrics() -> str:
    from focuscrawl.monitor.metrics import DOCUMENTED

    where = {
        "crawler": "Each `crawl run --metrics-port PORT` process",
        "classifier": "Each `classify run --metrics-port PORT` process",
        "crawl": "The console's `/metrics`, read from the database at each scrape",
    }
    out = []
    for group, names in DOCUMENTED.items():
        out.append(f"### {where[group]}\n")
        out.append("| metric | meaning |\n| --- | --- |")
        out.extend(f"| `{name}` | {_cell(text)} |" for name, text in names.items())
        out.append("")
    return "\n".join(out)


def console() -> str:
    from focuscrawl.console.app import ENDPOINTS, Console

    rows = []
    for method, path, handler in ENDPOINTS:
        doc = inspect.getdoc(getattr(Console, handler)) or ""
        token = "yes" if method == "POST" else ""
        rows.append(f"| `{method}` | `{path}` | {token} | {_cell(doc)} |")
    return "| method | path | token | what |\n| --- | --- | --- | --- |\n" + "\n".join(rows) + "\n"


SECTIONS: dict[str, Callable[[], str]] = {
    "commands": commands,
    "settings": settings,
    "schema": schema,
    "sql": sql,
    "metrics": metrics,
    "console": console,
}


def render(markdown: str) -> str:
    """``markdown`` with each marker line ``<!-- reference: NAME -->`` replaced."""
    out = []
    for line in markdown.splitlines():
        stripped = line.strip()
        if stripped.startswith("<!-- reference:") and stripped.endswith("-->"):
            name = stripped.removeprefix("<!-- reference:").removesuffix("-->").strip()
            if name not in SECTIONS:
                raise KeyError(f"no reference section {name!r}; there are: {', '.join(SECTIONS)}")
            out.append(SECTIONS[name]())
        else:
            out.append(line)
    return "\n".join(out) + "\n"
